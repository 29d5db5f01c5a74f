"""Params given on the command line: ``k=v`` pairs and ``--params JSON``, as argparse types.

Both ``desktop call`` and ``herdr call`` take them the way shedctl does: each
value is parsed as a JSON fragment, else kept as a string; ``k=v`` pairs
override keys of ``--params``. Unlike shedctl, an argument without ``=`` is a
usage error (shedctl silently drops it). Every mistake here is a usage error
(exit 2, with the command's usage), bad JSON included.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import Any

import msgspec

__all__ = ["add_params_arguments", "json_object", "merge_params", "pair"]


def pair(text: str) -> tuple[str, Any]:
    """Parse ``k=v`` (argparse type): ``v`` as a JSON fragment, else the raw string.

    Raises:
        argparse.ArgumentTypeError: no ``=``, or an empty key.

    """
    key, sep, raw = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected k=v, got {text!r}")
    if not key:
        raise argparse.ArgumentTypeError(f"empty key in {text!r}")
    try:
        return key, msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return key, raw


def json_object(text: str) -> dict[str, Any]:
    """Parse a JSON object (argparse type for ``--params``).

    Raises:
        argparse.ArgumentTypeError: not JSON, or JSON but not an object.

    """
    try:
        value = msgspec.json.decode(text)
    except msgspec.DecodeError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("must be a JSON object")
    return value


def merge_params(base: dict[str, Any] | None, pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """Return ``base`` (from ``--params``) updated with the ``k=v`` pairs, in order."""
    params = dict(base or {})
    params.update(pairs)
    return params


def add_params_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``k=v`` positionals and ``--params JSON`` to a call command."""
    parser.add_argument(
        "pairs",
        nargs="*",
        default=[],  # without a default argparse lists an empty `*` positional as required
        type=pair,
        metavar="k=v",
        help="a param; v is JSON, else a string",
    )
    parser.add_argument(
        "--params", type=json_object, metavar="JSON", help="a JSON object of params (k=v win)"
    )
