"""The ``shedproto`` command line: a thin layer over the clients and servers.

Conventions (every command): ``--json`` on everything that reports, errors on
stderr, exit codes 0 success, 1 failure, 2 usage error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from shedproto import __version__

from . import _demo, _proxy, _schemas
from ._groups import add_groups
from ._output import EXIT_USAGE

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """Build the full argument parser (every group and command)."""
    parser = argparse.ArgumentParser(
        prog="shedproto",
        description="Speak the local control protocols of the AI-agent tooling stack.",
    )
    parser.add_argument("--version", action="version", version=f"shedproto {__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    _demo.register(subparsers)
    _schemas.register(subparsers)
    _proxy.register(subparsers)
    add_groups(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default: ``sys.argv[1:]``) and return the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    code: int = func(args)
    return code
