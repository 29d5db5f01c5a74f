"""``read_status``: query the running agent's status socket (blocking and async)."""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path

import anyio

from shedproto import ErrorCode, RemoteProtocolError
from shedproto.clients import AsyncLineTransport, BlockingLineTransport, ConnectError
from shedproto.clients._transport import first_reply
from shedproto.host_agent import (
    STATUS_CONNECT_TIMEOUT,
    STATUS_READ_TIMEOUT,
    LiveStatus,
    decode_live_status,
    socket_dir,
    status_socket_path,
)

__all__ = [
    "AgentNotRunningError",
    "MAX_STATUS_BYTES",
    "StatusTimeoutError",
    "default_socket_dir",
    "read_status",
    "read_status_async",
]

MAX_STATUS_BYTES = 16 << 20
"""A status report larger than this is refused (a hostile or broken peer)."""


class AgentNotRunningError(ConnectError):
    """Nothing listens at the status socket; ``filename`` is its path, ``errno`` says why."""


class StatusTimeoutError(TimeoutError):
    """The agent accepted the connection but did not finish its report in time."""


def default_socket_dir() -> Path:
    """Resolve the socket directory from this process's environment, platform and home."""
    return Path(socket_dir(os.environ, sys.platform, os.path.expanduser("~")))


def _status_path(directory: str | os.PathLike[str] | None) -> str:
    base = os.fspath(directory) if directory is not None else os.fspath(default_socket_dir())
    return str(status_socket_path(base))


def _not_running(path: str, exc: ConnectError) -> AgentNotRunningError:
    error = AgentNotRunningError(
        exc.errno, f"shed-host-agent is not running \u2014 nothing is listening at {path}", path
    )
    error.__cause__ = exc
    return error


def _too_large() -> RemoteProtocolError:
    return RemoteProtocolError(
        ErrorCode.FRAME_TOO_LARGE, f"status report exceeds {MAX_STATUS_BYTES} bytes"
    )


def read_status(
    directory: str | os.PathLike[str] | None = None,
    *,
    connect_timeout: float = STATUS_CONNECT_TIMEOUT,
    read_timeout: float = STATUS_READ_TIMEOUT,
) -> LiveStatus:
    """Read one LiveStatus from ``<directory>/host-agent-status.sock`` (default: the real location).

    Raises:
        AgentNotRunningError: the socket is missing or refuses (or the connect timed out).
        StatusTimeoutError: the report did not end within ``read_timeout`` seconds.
        UnreachableSocketError: ``other-protocol`` when the bytes are not a
            LiveStatus (or there are none): another server listens there.
        RemoteProtocolError: the report exceeds 16 MiB.
        StatusSchemaError: the agent speaks another status schema.

    """
    path = _status_path(directory)
    try:
        transport = BlockingLineTransport.connect(path, timeout=connect_timeout)
    except ConnectError as exc:
        raise _not_running(path, exc) from exc
    chunks: list[bytes] = []
    size = 0
    deadline = time.monotonic() + read_timeout
    with transport:
        sock: socket.socket = transport.sock
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise StatusTimeoutError(f"no complete status report within {read_timeout} s")
            sock.settimeout(remaining)
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_STATUS_BYTES:
                raise _too_large()
            chunks.append(chunk)
        with first_reply(transport):
            return decode_live_status(b"".join(chunks))


async def read_status_async(
    directory: str | os.PathLike[str] | None = None,
    *,
    connect_timeout: float = STATUS_CONNECT_TIMEOUT,
    read_timeout: float = STATUS_READ_TIMEOUT,
) -> LiveStatus:
    """Async twin of :func:`read_status`; raises the same errors."""
    path = _status_path(directory)
    try:
        transport = await AsyncLineTransport.connect(path, timeout=connect_timeout)
    except ConnectError as exc:
        raise _not_running(path, exc) from exc
    chunks: list[bytes] = []
    size = 0
    async with transport:
        with anyio.move_on_after(read_timeout) as scope:
            while True:
                try:
                    chunk = await transport.stream.receive(65536)
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    break
                size += len(chunk)
                if size > MAX_STATUS_BYTES:
                    raise _too_large()
                chunks.append(chunk)
        if scope.cancelled_caught:
            raise StatusTimeoutError(f"no complete status report within {read_timeout} s")
        with first_reply(transport):
            return decode_live_status(b"".join(chunks))
