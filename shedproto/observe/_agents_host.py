"""agents-host socket API adapter: pipelined requests, one reply each, subscription events.

Requests and replies are framed with the API's own :data:`API_FRAMING` and
decoded with :func:`decode_request` / :func:`decode_reply`; a success result
is converted into its op's result type, so a wrong field is reported with its
JSON path. The host answers a ``submit`` with ``wait`` when the command ends,
so replies may legitimately overtake each other: only an answer to an id
never sent (or already answered) is a deviation, never the order. Events are
legal only after a successful ``subscribe`` reply. The host closing while
replies are owed is ``truncated``.
"""

from __future__ import annotations

from typing import Any, get_args

import msgspec

from shedproto._errors import FramingError, RemoteProtocolError, remote_error_from_msgspec
from shedproto._framing import LineBuffer
from shedproto.agents_host import (
    API_FRAMING,
    ApiErrorCode,
    ApiReply,
    CollectResult,
    HealthResult,
    ReceiptResult,
    ReceiptsResult,
    SessionResult,
    SessionsResult,
    SubmitResult,
    SubscribeResult,
    decode_reply,
    decode_request,
)

from ._base import Observer
from ._diagnostic import Direction

__all__ = ["AgentsHostObserver"]

_CODES = frozenset(get_args(ApiErrorCode))
_RESULTS: dict[str, type[Any]] = {
    "submit": SubmitResult,
    "receipt": ReceiptResult,
    "receipts": ReceiptsResult,
    "health": HealthResult,
    "sessions": SessionsResult,
    "session": SessionResult,
    "collect": CollectResult,
    "subscribe": SubscribeResult,
}
_NO_ID = object()


class AgentsHostObserver(Observer):
    """Observer of one agents-host API connection."""

    protocol = "agents-host"

    def __init__(self, connection: int) -> None:
        super().__init__(connection)
        self.pending: dict[Any, str | None] = {}
        """Request id -> op (``None``: an unreadable request, answered with its error)."""
        self._unread_requests = 0
        self._subscribed = False
        self._lines: dict[Direction, LineBuffer] = {
            "c2s": LineBuffer(API_FRAMING),
            "s2c": LineBuffer(API_FRAMING),
        }
        self._dead: set[Direction] = set()

    def _split(self, direction: Direction, data: bytes) -> tuple[list[bytes], FramingError | None]:
        if direction in self._dead:
            return [], None
        try:
            return self._lines[direction].feed(data), None
        except FramingError as exc:
            self._dead.add(direction)
            return list(exc.frames_before), exc

    def _client_bytes(self, data: bytes) -> None:
        lines, error = self._split("c2s", data)
        for line in lines:
            self._request(line, self._frame("c2s"))
        if error is not None:
            self.report_error("c2s", error, frame=self._frame("c2s"))
            self._unread_requests += 1  # answered frame-too-large, without an id

    def _request(self, line: bytes, index: int) -> None:
        try:
            request = decode_request(line)
        except RemoteProtocolError as exc:
            self.report_error("c2s", exc, frame=index)
            hint = decode_reply(exc.reply_hint.rstrip(b"\n")) if exc.reply_hint else None
            if hint is not None and hint.id is not None:
                self.pending[hint.id] = None
            else:
                self._unread_requests += 1
            return
        self.pending[request.id] = str(request.__struct_config__.tag)

    def _server_bytes(self, data: bytes) -> None:
        lines, error = self._split("s2c", data)
        for line in lines:
            self._line(line, self._frame("s2c"))
        if error is not None:
            self.report_error("s2c", error, frame=self._frame("s2c"))
        owed = len(self.pending) + self._unread_requests
        if not data and owed and "s2c" not in self._dead:
            self.report("truncated", "s2c", f"the host closed with {owed} reply(s) owed")

    def _line(self, line: bytes, index: int) -> None:
        try:
            reply = decode_reply(line)
        except RemoteProtocolError as exc:
            self.report_error("s2c", exc, frame=index)
            return
        if reply.event is None:
            self._reply(reply, index)
        elif not self._subscribed:
            self.report(
                "illegal_state",
                "s2c",
                f"a {reply.event!r} event before a successful subscribe",
                path="$.event",
                frame=index,
            )

    def _reply(self, reply: ApiReply, index: int) -> None:
        if reply.error is not None and reply.error.code not in _CODES:
            self.report(
                "unknown_error_code",
                "s2c",
                f"error code {reply.error.code!r} is not in the API's registry",
                path="$.error.code",
                frame=index,
            )
        if reply.id is None and self._unread_requests:
            self._unread_requests -= 1
            return
        if reply.id not in self.pending:
            self.report(
                "unsolicited_answer",
                "s2c",
                f"reply for id {reply.id!r}, a request never sent or already answered",
                path="$.id",
                frame=index,
            )
            return
        op = self.pending.pop(reply.id)
        if not reply.ok or op is None:
            return
        try:
            msgspec.convert(reply.result, _RESULTS[op])
        except msgspec.ValidationError as exc:
            error = remote_error_from_msgspec(exc)
            path = error.path.replace("$", "$.result", 1) if error.path else None
            self.report("schema", "s2c", f"{op} result: {error.message}", path=path, frame=index)
            return
        if op == "subscribe":
            self._subscribed = True
