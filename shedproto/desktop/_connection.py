"""Connection objects (h11 style): bytes in, events out; events in, bytes out.

:class:`ServerConnection` reads request lines in one dialect and yields
:class:`RequestReceived` (envelope, op, gate and params all valid),
:class:`RequestRejected` (with the exact reply line) or
:class:`ConnectionEnded`. Answers are owed strictly in order, one per request
(pipelined requests included): :meth:`ServerConnection.send` refuses an
answer for any request but the oldest unanswered one.

:class:`ClientConnection` numbers requests ``"1"``, ``"2"``, ... (valid in
both dialects), frames responses of any size up to ``max_response_bytes`` and
pairs each with its request in order.

Both are built on the connection contract (:class:`shedproto.Contract`): the
tables are :data:`~shedproto.desktop._state.SERVER_TABLE` and ``CLIENT_TABLE``.
The server queues the error lines it writes by itself (rejections, Tauri's
over-cap line) in its outbox, each behind the answers owed before it: a shell
writes :meth:`ServerConnection.data_to_send` after every event it handles.
The client delivers every reply completed before a bad line and raises the
error on its next call (the contract's good-before-bad rule).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import msgspec

from shedproto import (
    ConnectionClosed,
    Contract,
    ErrorCode,
    FramingPolicy,
    LineBuffer,
    RemoteProtocolError,
)

from ._catalogue import OpShape
from ._codes import DesktopCode
from ._dialect import Dialect
from ._envelope import (
    ANSWER_WITHOUT_ID,
    EnvelopeRejection,
    Response,
    canonical_mac_id,
    parse_request,
    parse_response,
    render_error,
    render_ok,
    request_line,
)
from ._errors import DesktopError
from ._fast import fast_decoder
from ._params import validate_request
from ._release import Release
from ._state import (
    CLIENT_TABLE,
    SERVER_TABLE,
    ClientInput,
    ClientState,
    ConnInput,
    ConnState,
)
from .types import Params

__all__ = [
    "MAX_RESPONSE_BYTES",
    "Answer",
    "ClientConnection",
    "ConnectionEnded",
    "Failure",
    "Reply",
    "RequestReceived",
    "RequestRejected",
    "ServerConnection",
    "ServerEvent",
]

MAX_RESPONSE_BYTES = 256 * 1024 * 1024
"""The client's default response-line cap: screenshots travel as base64 in one line."""

TAURI_TOO_LARGE = "request exceeds 1 MiB"

_OPEN = ConnState.OPEN
"""Bound once: an enum member read through its class costs ~0.1 µs on Python 3.11."""


class RequestReceived(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A valid request: answer it with :class:`Answer` or :class:`Failure`.

    ``raw_params`` is the params value as received (some rules look at
    mistyped values the decoder dropped). It is always set for ops whose
    rules read it (``shape.reads_raw``, the launch doors); a request decoded
    by the one-pass fast path (well-typed params, nothing dropped) carries
    ``None`` there instead, since ``params`` then says everything the request
    said. ``shape`` is its catalogue entry.
    """

    id: Any
    op: str
    params: Params
    raw_params: Any
    shape: OpShape


class RequestRejected(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A request refused before any op ran; send ``reply`` as is (its answer, in order)."""

    code: str
    message: str
    reply: bytes


@dataclass(frozen=True)
class ConnectionEnded(ConnectionClosed):
    """The read side is over: ``reason`` ``"eof"`` or ``"frame_too_large"`` (with ``error``).

    ``reply`` is Tauri's id-less ``frame_too_large`` line (or ``None``); the
    connection's outbox holds it behind every answer still owed. Close after it.
    """

    reason: str
    reply: bytes | None = field(default=None, kw_only=True)


ServerEvent = RequestReceived | RequestRejected | ConnectionEnded


class Answer(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A success answer to the request with ``id``."""

    id: Any
    result: Any


class Failure(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A failure answer to the request with ``id``."""

    id: Any
    code: str
    message: str

    @classmethod
    def from_error(cls, request_id: Any, error: DesktopError) -> Failure:
        """Build the failure answering ``error``."""
        return cls(id=request_id, code=error.code, message=error.message)


class ServerConnection(Contract[ConnState]):
    """The server side of one control-socket connection in ``dialect``.

    ``test_mode`` drives the test-mode gates; ``release`` which ops exist
    (an op the release lacks is ``unknown_op``/``unknown-op``). Not
    thread-safe; one per connection.
    """

    def __init__(
        self, dialect: Dialect, *, test_mode: bool = False, release: Release = Release.LATEST
    ) -> None:
        super().__init__(SERVER_TABLE, ConnState.OPEN)
        self.dialect = dialect
        self.test_mode = test_mode
        self.release = release
        self._lines = LineBuffer(dialect.policy)
        self._fast = fast_decoder(dialect, release)
        self._settle = self.outbox.settle
        self._mac = dialect is Dialect.MAC

    @property
    def owed(self) -> int:
        """How many received requests are still unanswered."""
        return self.outbox.owed

    def receive_data(self, data: bytes) -> list[ServerEvent]:
        """Feed bytes from the peer (``b""`` = EOF) and return the events they complete.

        Never raises for peer misbehaviour: that becomes a
        :class:`RequestRejected` or :class:`ConnectionEnded` event.

        Raises:
            LocalProtocolError: data after the read side ended.

        """
        if self.state is not _OPEN:
            self._local(ConnInput.DATA)  # raises: the read side ended
        lines, error = self._split(self._lines, data)
        events: list[ServerEvent] = []
        for line in lines:
            event = self._request(line)
            if event is not None:
                events.append(event)
        if error is not None:
            self._remote(ConnInput.OVERSIZE)
            reply = None
            if self.dialect is Dialect.TAURI:
                reply = render_error(
                    Dialect.TAURI,
                    ANSWER_WITHOUT_ID,
                    DesktopCode.FRAME_TOO_LARGE.value,
                    TAURI_TOO_LARGE,
                )
                self.outbox.put(reply)
            events.append(ConnectionEnded(reason="frame_too_large", error=error, reply=reply))
        elif not data:
            self._remote(ConnInput.EOF)
            events.append(ConnectionEnded(reason="eof"))
        return events

    def _request(self, line: bytes) -> RequestReceived | RequestRejected | None:
        fast = self._fast.decode(line)
        if fast is not None:
            request_id, op, params, shape = fast
            if self._mac:
                request_id = canonical_mac_id(request_id)
            if request_id is not None or not self._mac:
                self.outbox.owe(request_id)
                return RequestReceived(
                    id=request_id, op=op, params=params, raw_params=None, shape=shape
                )
        parsed = parse_request(self.dialect, line, self.release)
        if parsed is None:
            return None
        if isinstance(parsed, EnvelopeRejection):
            self.outbox.put(parsed.reply)
            return RequestRejected(code=parsed.code, message=parsed.message, reply=parsed.reply)
        try:
            shape, params = validate_request(
                self.dialect,
                parsed.op,
                parsed.params,
                test_mode=self.test_mode,
                release=self.release,
            )
        except DesktopError as exc:
            reply = render_error(self.dialect, parsed.id, exc.code, exc.message)
            self.outbox.put(reply)
            return RequestRejected(code=exc.code, message=exc.message, reply=reply)
        self.outbox.owe(parsed.id)
        return RequestReceived(
            id=parsed.id, op=parsed.op, params=params, raw_params=parsed.params, shape=shape
        )

    def send(self, event: Answer | Failure) -> bytes:
        """Return the line answering the oldest unanswered request.

        Error lines the outbox held behind this answer become due
        (:meth:`data_to_send`).

        Raises:
            LocalProtocolError: nothing is owed, or ``event.id`` is not the
                oldest unanswered request's id (the state is unchanged).
            TypeError: the result cannot be encoded (the state is unchanged).

        """
        if self.state is not _OPEN:  # (OPEN, ANSWER) is in the table: skip the lookup
            self._check_local(ConnInput.ANSWER)
        event_id = event.id
        if isinstance(event, Answer):
            line = render_ok(self.dialect, event_id, event.result)
        else:
            line = render_error(self.dialect, event_id, event.code, event.message)
        self._settle(event_id)  # refuses an answer out of order: nothing changes
        return line


class Reply(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A response paired with its request: ``op``, the id sent, and ok/result/error."""

    request_id: str
    op: str
    response: Response

    @property
    def ok(self) -> bool:
        """Whether the server answered success."""
        return self.response.ok

    def result(self) -> Any:
        """Return the result (``{}`` for a null result, as the harness does).

        Raises:
            DesktopError: the server answered a failure.

        """
        if not self.response.ok:
            error = self.response.error
            assert error is not None
            raise DesktopError(error.code, error.message, request_id=self.response.id)
        result = self.response.result
        return {} if result is None else result


class ClientConnection(Contract[ClientState]):
    """The client side: numbered requests out, paired replies in, strictly in order.

    A bad reply is fatal: the connection enters ``ERROR`` (sticky) and later calls raise.
    """

    def __init__(self, *, max_response_bytes: int = MAX_RESPONSE_BYTES, first_id: int = 1) -> None:
        super().__init__(CLIENT_TABLE, ClientState.OPEN)
        self._lines = LineBuffer(FramingPolicy(max_frame_bytes=max_response_bytes))
        self._next_id = first_id
        self._pending: deque[tuple[str, str]] = deque()

    @property
    def pending(self) -> int:
        """Requests sent and not yet answered."""
        return len(self._pending)

    def send_request(self, op: str, params: Any = None) -> tuple[str, bytes]:
        """Return ``(id, line)`` for a request; ``params`` ``None`` sends ``{}``.

        Raises:
            TypeError: ``params`` cannot be encoded (no id is consumed).
            LocalProtocolError: the connection closed or failed.

        """
        if self.state is not ClientState.OPEN:
            self._local(ClientInput.REQUEST)  # raises
        request_id = str(self._next_id)
        line = request_line(request_id, op, {} if params is None else params)
        self._next_id += 1
        self._pending.append((request_id, op))
        return request_id, line

    def receive_data(self, data: bytes) -> list[Reply]:
        """Feed bytes from the server (``b""`` = EOF) and return the replies they complete.

        A reply without an ``id`` (Tauri's bad-JSON and ``frame_too_large``
        answers) belongs to the oldest pending request. Replies completed
        before a bad line are returned; the error is raised by the next call.

        Raises:
            RemoteProtocolError: an unparseable response, one nobody asked for,
                one whose id is not the oldest pending request's, or EOF while
                requests are pending (``CONNECTION_CLOSED``); the state is then
                ``ERROR``.
            FramingError: a response line over ``max_response_bytes``.
            LocalProtocolError: data after EOF or after the error was raised.

        """
        self._raise_deferred()
        if self.state is not ClientState.OPEN:
            self._local(ClientInput.DATA)  # raises
        lines, error = self._split(self._lines, data)
        replies: list[Reply] = []
        try:
            for line in lines:
                replies.append(self._reply(line))  # noqa: PERF401 - kept when a later line fails
            if error is not None:
                raise error
            if not data:
                if self._pending:
                    raise RemoteProtocolError(
                        ErrorCode.CONNECTION_CLOSED,
                        f"the server closed the connection with {len(self._pending)} "
                        "request(s) unanswered",
                    )
                self._remote(ClientInput.EOF)
        except RemoteProtocolError as exc:
            return self._deliver(replies, exc)
        return replies

    def receive_line(self, line: bytes) -> Reply:
        """Pair one complete response line (without its LF) with the oldest pending request.

        For shells whose transport already frames lines.

        Raises:
            RemoteProtocolError: as :meth:`receive_data`; nothing pending is
                consumed, the state is ``ERROR``.
            LocalProtocolError: the connection closed or failed.

        """
        if self.state is not ClientState.OPEN:
            self._local(ClientInput.DATA)  # raises
        try:
            return self._reply(line)
        except RemoteProtocolError as exc:
            raise self._fail(exc) from None

    def _reply(self, line: bytes) -> Reply:
        response = parse_response(line)
        if not self._pending:
            raise RemoteProtocolError(
                ErrorCode.UNEXPECTED_EVENT, "a response arrived with no request pending"
            )
        request_id, op = self._pending[0]
        if response.has_id and response.id != request_id:
            raise RemoteProtocolError(
                ErrorCode.UNEXPECTED_EVENT,
                f"response id {response.id!r} does not answer request {request_id!r}",
                path="$.id",
            )
        self._pending.popleft()
        return Reply(request_id=request_id, op=op, response=response)

    def abandon(self) -> None:
        """Forget every pending request (after a timeout, before closing the connection)."""
        self._pending.clear()
