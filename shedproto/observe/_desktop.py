"""desktop-control adapter, per dialect (mac strict, Tauri lenient).

The client's bytes go to a desktop :class:`ServerConnection` of the dialect,
which validates envelope, op and params exactly as the reference server
does. Every request line the server must answer (accepted or rejected) adds
its id to the queue of answers owed; the server's lines are decoded with
:func:`parse_response` and must answer the oldest owed id. A rejection with
an op-level code (a gate such as ``not-enabled``) is the server's business
and no deviation of the client.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from shedproto._errors import FramingError, RemoteProtocolError
from shedproto._framing import FramingPolicy, LineBuffer
from shedproto.desktop import (
    MAX_RESPONSE_BYTES,
    ConnectionEnded,
    Dialect,
    RequestRejected,
    ServerConnection,
    code_family,
    normalize_code,
    parse_response,
)

from ._base import Observer
from ._diagnostic import DiagnosticKind

__all__ = ["DesktopObserver"]

_REJECTION_KINDS: dict[str, DiagnosticKind] = {
    "unknown_op": "unknown_op",
    "parse_error": "malformed",
    "bad_request": "schema",
    "invalid_param": "schema",
    "unknown_field": "schema",
    "frame_too_large": "over_cap",
}

_UNSET = object()


class DesktopObserver(Observer):
    """Observer of one control-socket connection in ``dialect``."""

    protocol = "desktop"

    def __init__(self, connection: int, *, dialect: Dialect, test_mode: bool = True) -> None:
        super().__init__(connection)
        self.dialect = dialect
        self.server = ServerConnection(dialect, test_mode=test_mode)
        self.owed: deque[Any] = deque()
        """Ids of the requests still owed an answer, oldest first (``_UNSET``: no id)."""
        self._lines = LineBuffer(FramingPolicy(max_frame_bytes=MAX_RESPONSE_BYTES))
        self._s2c_dead = False

    def _client_bytes(self, data: bytes) -> None:
        if self.server.state.value != "open":
            return
        for event in self.server.receive_data(data):
            if isinstance(event, ConnectionEnded):
                if event.reason == "frame_too_large":
                    self.report(
                        "over_cap",
                        "c2s",
                        f"request line over the {self.dialect.value} cap",
                        frame=self._frame("c2s"),
                    )
                    if event.reply is not None:
                        self.owed.append(_UNSET)
                continue
            index = self._frame("c2s")
            if isinstance(event, RequestRejected):
                kind = _REJECTION_KINDS.get(normalize_code(event.code))
                if kind is not None:
                    self.report(kind, "c2s", f"{event.code}: {event.message}", frame=index)
                reply = parse_response(event.reply.rstrip(b"\n"))
                self.owed.append(reply.id if reply.has_id else _UNSET)
            else:
                self.owed.append(event.id)

    def _server_bytes(self, data: bytes) -> None:
        if self._s2c_dead:
            return
        try:
            lines = self._lines.feed(data)
        except FramingError as exc:
            self._s2c_dead = True
            for line in exc.frames_before:
                self._response(line)
            self.report_error("s2c", exc, frame=self._frame("s2c"))
            return
        for line in lines:
            self._response(line)
        if not data and self.owed:
            self.report(
                "truncated", "s2c", f"the server closed with {len(self.owed)} answer(s) owed"
            )

    def _response(self, line: bytes) -> None:
        index = self._frame("s2c")
        try:
            response = parse_response(line)
        except RemoteProtocolError as exc:
            self.report_error("s2c", exc, frame=index)
            return
        if response.error is not None and code_family(response.error.code) is None:
            self.report(
                "unknown_error_code",
                "s2c",
                f"error code {response.error.code!r} is not in the desktop registry",
                path="$.error.code",
                frame=index,
            )
        if not self.owed:
            self.report(
                "unsolicited_answer",
                "s2c",
                f"answer with id {response.id!r} but no request is owed one",
                path="$.id",
                frame=index,
            )
            return
        expected = self.owed[0]
        if not response.has_id or expected is _UNSET or _same_id(response.id, expected):
            self.owed.popleft()
            return
        for position, owed in enumerate(self.owed):
            if owed is not _UNSET and _same_id(response.id, owed):
                del self.owed[position]
                self.report(
                    "out_of_order",
                    "s2c",
                    f"answer for id {response.id!r} before the answer for id {expected!r}",
                    path="$.id",
                    frame=index,
                )
                return
        self.report(
            "unsolicited_answer",
            "s2c",
            f"answer with id {response.id!r}, a request never sent (next owed: {expected!r})",
            path="$.id",
            frame=index,
        )


def _same_id(received: Any, expected: Any) -> bool:
    """Ids match by value; mac re-renders ids as strings, so ``1`` answers ``"1"`` there."""
    return bool(received == expected) or str(received) == str(expected)
