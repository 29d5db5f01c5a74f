"""What the async and blocking host-agent clients share: errors, paths, ids and timestamps."""

from __future__ import annotations

import math
import os
import sys
import time
from functools import lru_cache
from pathlib import Path

from shedproto import ErrorCode, RemoteProtocolError
from shedproto.clients import ConnectError
from shedproto.clients._unreachable import other_protocol
from shedproto.host_agent import (
    ApprovalRequest,
    CredentialResponse,
    Event,
    HelloAck,
    IdSource,
    StatusSchemaError,
    TokenResponse,
    format_timestamp,
    has_live_status_fields,
    socket_dir,
    status_socket_path,
)

__all__ = [
    "MAX_STATUS_BYTES",
    "PROBE_AFTER",
    "STATUS_PROBE",
    "AgentNotRunningError",
    "ConsumerItem",
    "StatusTimeoutError",
    "SupersededError",
    "default_socket_dir",
    "new_id",
    "not_running",
    "not_a_status_report",
    "status_path",
    "timestamp",
    "too_large",
]

MAX_STATUS_BYTES = 16 << 20
"""A status report larger than this is refused (a hostile or broken peer)."""

STATUS_PROBE = b"{}\n"
"""Sent once to a status socket that stays silent for ``PROBE_AFTER`` seconds.

The real agent writes its report on accept and reads nothing (charliek/shed
``crates/shed-host-agent/src/status_server.rs``, ``write_status``), so it never
sees this in practice; a request-driven server of another protocol (herdr,
desktop, agents-host) answers it, and is named without a read timeout."""

PROBE_AFTER = 0.5
"""Seconds of silence on a status connection before ``STATUS_PROBE`` is sent."""

ConsumerItem = ApprovalRequest | Event | TokenResponse | CredentialResponse
"""What iterating an approval consumer yields."""


class AgentNotRunningError(ConnectError):
    """Nothing listens at the status socket; ``filename`` is its path, ``errno`` says why."""


class StatusTimeoutError(TimeoutError):
    """The agent accepted the connection but did not finish its report in time."""


class SupersededError(Exception):
    """Another consumer said hello: the agent sent ``ack`` (``reason`` ``superseded``) and closes.

    Every request this consumer still held has already been denied by the agent.
    """

    def __init__(self, ack: HelloAck) -> None:
        super().__init__("superseded: another consumer connected to the approval channel")
        self.ack = ack


new_id = IdSource(os.urandom)
"""Mint a frame id."""


class _Timestamps:
    """Wall-clock stamps as the agent spells them, kept for the rest of their second.

    Whole seconds: the text only changes once a second, so a stamp is a
    comparison instead of a format. The cache is one tuple swapped whole:
    threads (the blocking consumer) never see a torn pair.
    """

    __slots__ = ("_cached",)

    def __init__(self) -> None:
        self._cached: tuple[float, float, str] = (0.0, 0.0, "")
        """``[start, end)`` of the second last formatted, and its text."""

    def __call__(self) -> str:
        """Return the wall-clock time as the agent spells it in frames."""
        now = time.time()
        start, end, text = self._cached
        if start <= now < end:
            return text
        text = format_timestamp(now)
        start = float(math.floor(now))
        self._cached = (start, start + 1.0, text)
        return text


timestamp = _Timestamps()
"""Return the wall-clock time as the agent spells it in frames (``timestamp()``)."""


def default_socket_dir() -> Path:
    """Resolve the socket directory from this process's environment, platform and home."""
    return Path(socket_dir(os.environ, sys.platform, os.path.expanduser("~")))


def status_path(directory: str | os.PathLike[str] | None) -> str:
    """Return the status socket in ``directory`` (default: :func:`default_socket_dir`).

    The join is cached per directory (a status read per request would
    otherwise spend more on the path than on its socket work).
    """
    base = os.fspath(directory) if directory is not None else os.fspath(default_socket_dir())
    return _status_in(base)


@lru_cache(maxsize=64)
def _status_in(base: str) -> str:
    return str(status_socket_path(base))


def not_running(path: str, exc: ConnectError) -> AgentNotRunningError:
    """Return the error for a status socket nobody listens on."""
    error = AgentNotRunningError(
        exc.errno, f"shed-host-agent is not running \u2014 nothing is listening at {path}", path
    )
    error.__cause__ = exc
    return error


def too_large() -> RemoteProtocolError:
    """Return the error for a status report past :data:`MAX_STATUS_BYTES`."""
    return RemoteProtocolError(
        ErrorCode.FRAME_TOO_LARGE, f"status report exceeds {MAX_STATUS_BYTES} bytes"
    )


def not_a_status_report(path: str, data: bytes, exc: StatusSchemaError) -> Exception:
    """Return what a schema-0 report means: ``exc`` itself, or ``other-protocol``.

    A report without ``schema`` is an older or skewed agent only if it carries
    some LiveStatus field; an object with none of them (a herdr or desktop
    error answer to ``STATUS_PROBE``) comes from a server of another protocol.
    """
    if exc.schema == 0 and not has_live_status_fields(data):
        return other_protocol(path, "its reply is no status report")
    return exc

