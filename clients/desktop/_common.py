"""What the async and blocking desktop clients share: paths, typed results, ticket glue."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from shedproto import ErrorCode, FramingPolicy, LocalProtocolError, RemoteProtocolError
from shedproto.clients._misuse import used_after_close
from shedproto.desktop import (
    MAX_RESPONSE_BYTES,
    CodeFamily,
    Dialect,
    code_family,
    resolve_client_socket,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAC_FRAME_CAP",
    "RESPONSE_POLICY",
    "client_closed",
    "closed_while_sending",
    "convert_result",
    "default_socket_path",
    "dialect_of_code",
    "dialect_of_identify",
    "launch_params",
    "made_without_connect",
]

DEFAULT_TIMEOUT = 15.0
"""Seconds a call waits for its answer (the harness's socket timeout)."""

RESPONSE_POLICY = FramingPolicy(max_frame_bytes=MAX_RESPONSE_BYTES)
"""Responses have no cap in the real servers; screenshots are multi-MB lines."""

MAC_FRAME_CAP = Dialect.MAC.frame_cap
"""Past this request size the mac server closes without a word (its own answer)."""

T = TypeVar("T")


def default_socket_path(
    dialect: Dialect | None = None, env: Mapping[str, str] | None = None
) -> str:
    """Return the socket a client uses by default (see ``resolve_client_socket()``)."""
    return resolve_client_socket(
        os.environ if env is None else env,
        uid=os.getuid(),
        home=str(Path.home()),
        platform=sys.platform,
        dialect=dialect,
    )


def convert_result(result: Any, type_: type[T], op: str) -> T:
    """Convert a raw result into ``type_``.

    Raises:
        RemoteProtocolError: ``SCHEMA_VIOLATION`` when the server's answer does
            not have the documented shape.

    """
    try:
        return msgspec.convert(result, type_)
    except msgspec.ValidationError as exc:
        raise RemoteProtocolError(
            ErrorCode.SCHEMA_VIOLATION, f"{op} answered an unexpected shape: {exc}"
        ) from None


def dialect_of_identify(result: Mapping[str, Any]) -> Dialect:
    """Tell the dialect from an ``identify`` result: Tauri says ``platform: "tauri"``."""
    return Dialect.TAURI if result.get("platform") == "tauri" else Dialect.MAC


def closed_while_sending(exc: BaseException) -> RemoteProtocolError:
    """Return the error for a request the server hung up on while it was being written."""
    return RemoteProtocolError(
        ErrorCode.CONNECTION_CLOSED, f"the server closed the connection while we wrote: {exc!r}"
    )


def client_closed() -> LocalProtocolError:
    """Return the error for a call on a client that was closed (``CONNECTION_CLOSED``)."""
    return used_after_close("the desktop client", "make a new one with connect()")


def made_without_connect(name: str, given: object) -> str:
    """Return the one-line message for a desktop client made without ``connect()``."""
    if name.startswith("Async"):
        how = f"async with await {name}.connect(path) as client:"
    else:
        how = f"with {name}.connect(path) as client:"
    if isinstance(given, (str, os.PathLike)):
        return f"{name}({os.fspath(given)!r}) does not connect; make the client with `{how}`"
    return f"{name} takes the transport its connect() made, not {type(given).__name__}: `{how}`"


def dialect_of_code(code: str) -> Dialect | None:
    """Tell the dialect from an error code, when the code belongs to one envelope family."""
    family = code_family(code)
    if family is CodeFamily.MAC_ENVELOPE:
        return Dialect.MAC
    if family is CodeFamily.TAURI_ENVELOPE:
        return Dialect.TAURI
    return None


def launch_params(
    kind: str,
    *,
    target: str | None,
    machine: str | None,
    workdir: str | None,
    display_name: str | None,
) -> dict[str, Any]:
    """Build ``roost.launch`` params, leaving absent fields out.

    Raises:
        ValueError: neither ``target`` nor ``machine`` was given.

    """
    if target is None and machine is None:
        raise ValueError("give a target (roost:<server>/<shed>, machine:<name>) or a machine")
    optional = {
        "target": target,
        "machine": machine,
        "workdir": workdir,
        "display_name": display_name,
    }
    return {"kind": kind, **{k: v for k, v in optional.items() if v is not None}}
