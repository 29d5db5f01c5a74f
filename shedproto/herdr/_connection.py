"""Sans-IO connections for both roles: bytes in, events out, and back.

One connection object serves one socket connection, which in herdr carries
exactly one request (see :mod:`shedproto.herdr._state`). Deadlines are inputs:
the server connection records when it was accepted and reports its deadline;
the shell decides what "now" is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from shedproto._codec import LenientFrame, encode_line
from shedproto._errors import ErrorCode, FramingError, LocalProtocolError, RemoteProtocolError
from shedproto._framing import BlankLines, EofTail, FramingPolicy, LineBuffer, OverCap

from . import types as t
from ._envelope import (
    ErrorResponse,
    LifecycleEvent,
    SubscriptionEvent,
    SuccessResponse,
    decode_request,
    decode_response,
    decode_stream_line,
    encode_request,
)
from ._state import Input, Role, State, next_state
from ._versions import DEFAULT_PROTOCOL, require_supported

__all__ = [
    "HOLDING_METHODS",
    "MAX_REQUEST_BYTES",
    "REQUEST_TIMEOUT",
    "ClientConnection",
    "ClientGone",
    "ConnectionClosed",
    "RawRequest",
    "ServerConnection",
    "make_request",
]

MAX_REQUEST_BYTES = 1 << 20
"""herdr's cap on the request line (``MAX_INITIAL_REQUEST_BYTES``), without its newline."""
REQUEST_TIMEOUT = 5.0
"""Seconds herdr waits after accept for a complete request line."""
MAX_ANSWER_BYTES = 256 << 20
"""The client's cap on one answer or event line (herdr sets none; snapshots are large)."""

HOLDING_METHODS: frozenset[str] = frozenset(
    {"events.subscribe", "events.wait", "agent.wait", "agent.prompt", "pane.wait_for_output"}
)
"""Methods whose answer may take long; any byte from the client meanwhile means it left."""


@dataclass(frozen=True)
class ConnectionClosed:
    """The peer closed the connection (end of stream) where that is allowed."""


@dataclass(frozen=True)
class ClientGone:
    """Server side: the client sent more bytes or half-closed while a wait or stream held it.

    herdr treats either as "client gone": a stream ends and a wait's answer is dropped.
    """


class RawRequest(LenientFrame, frozen=True, kw_only=True):
    """A request for a method this library has no type for (sent as given)."""

    id: str
    method: str
    params: dict[str, Any] = msgspec.field(default_factory=dict)


def make_request(
    method: str, params: Any = None, *, id: str, protocol: int = DEFAULT_PROTOCOL
) -> t.Request:
    """Build the typed request for ``method``; ``params`` is its params Struct, a dict or None.

    A params Struct of another protocol (the newest, from the typed methods) is
    converted to ``protocol``'s type; fields that protocol lacks are dropped.

    Raises:
        LocalProtocolError: ``UNKNOWN_TYPE`` for a method ``protocol`` does not
            have, ``INVALID_ARGUMENT`` (with the JSON path) for bad params.
        VersionMismatchError: ``protocol`` is not supported.

    """
    require_supported(protocol)
    requests, params_types, _ = t.PROTOCOL_TABLES[protocol]
    request_type = requests.get(method)
    if request_type is None:
        raise LocalProtocolError(
            ErrorCode.UNKNOWN_TYPE, f"protocol {protocol} has no method {method!r}"
        )
    params_type = params_types[method]
    if not isinstance(params, params_type):
        if isinstance(params, msgspec.Struct):
            # another protocol's params Struct (the typed methods build the newest):
            # its fields, as the older protocol's type; fields it lacks are ignored
            params = msgspec.to_builtins(params)
        try:
            params = msgspec.convert({} if params is None else params, params_type)
        except msgspec.ValidationError as exc:
            text = str(exc)
            path = text.rsplit(" - at `", 1)[1].rstrip("`") if " - at `" in text else None
            raise LocalProtocolError(
                ErrorCode.INVALID_ARGUMENT, f"bad params for {method}: {text}", path=path
            ) from None
    return request_type(id=id, params=params)  # type: ignore[call-arg]


ClientEvent = (
    SuccessResponse[Any] | ErrorResponse | LifecycleEvent | SubscriptionEvent | ConnectionClosed
)
"""What :meth:`ClientConnection.receive_data` returns."""

ServerEvent = t.Request | ClientGone | ConnectionClosed
"""What :meth:`ServerConnection.receive_data` returns."""


class _Machine:
    def __init__(self, role: Role) -> None:
        self.role = role
        self.state = State.IDLE

    def _advance(self, event: Input, *, local: bool) -> None:
        new = next_state(self.role, self.state, event)
        if new is None:
            old = self.state
            if not local:
                self.state = State.ERROR
            error_type = LocalProtocolError if local else RemoteProtocolError
            raise error_type(
                ErrorCode.UNEXPECTED_EVENT,
                f"{event.value} is not allowed for a {self.role.value} in state {old.value}",
            )
        self.state = new


class ClientConnection(_Machine):
    """The client side: :meth:`send` one request, feed answers to :meth:`receive_data`.

    After an ``events.subscribe`` request whose answer is the
    ``subscription_started`` acknowledgement, further lines are decoded as
    :class:`LifecycleEvent` / :class:`SubscriptionEvent`. A violation raises
    :class:`RemoteProtocolError` and leaves the connection in ``State.ERROR``;
    events decoded before the bad line are returned first and the error is
    raised by the next call.
    """

    def __init__(
        self, *, protocol: int = DEFAULT_PROTOCOL, max_line_bytes: int = MAX_ANSWER_BYTES
    ) -> None:
        require_supported(protocol)
        super().__init__(Role.CLIENT)
        self.protocol = protocol
        self.method: str | None = None
        self._lines = LineBuffer(
            FramingPolicy(
                max_frame_bytes=max_line_bytes,
                blank_lines=BlankLines.SKIP_WHITESPACE,
                eof_tail=EofTail.FRAME,
                over_cap=OverCap.RAISE,
            )
        )
        self._pending: RemoteProtocolError | None = None

    def send(self, request: t.Request | RawRequest) -> bytes:
        """Return the bytes of ``request`` (one line); only one request per connection.

        Raises:
            LocalProtocolError: a request was already sent on this connection.

        """
        self._advance(Input.REQUEST, local=True)
        if isinstance(request, RawRequest):
            self.method = request.method
            return encode_line(request)
        self.method = str(request.__struct_config__.tag)
        return encode_request(request)

    def receive_data(self, data: bytes) -> list[ClientEvent]:
        """Feed bytes from the server (``b""`` = end of stream); return the decoded events.

        Raises:
            RemoteProtocolError: a malformed or unexpected line, an over-long
                line, or ``CONNECTION_CLOSED`` when the server closed before answering.

        """
        if self._pending is not None:
            error, self._pending = self._pending, None
            raise error
        if self.state is State.ERROR:
            raise LocalProtocolError(ErrorCode.UNEXPECTED_EVENT, "connection is in ERROR state")
        out: list[ClientEvent] = []
        try:
            lines = self._lines.feed(data)
        except FramingError as exc:
            self.state = State.ERROR
            lines = list(exc.frames_before)
            self._pending = exc
        try:
            out.extend(self._line(line) for line in lines)
            if self._pending is not None:
                return out
            if not data:
                if self.state is State.AWAITING:
                    self.state = State.ERROR
                    raise RemoteProtocolError(
                        ErrorCode.CONNECTION_CLOSED,
                        "the server closed the connection without answering",
                    )
                self._advance(Input.EOF, local=False)
                out.append(ConnectionClosed())
        except RemoteProtocolError as exc:
            self.state = State.ERROR
            if out:
                self._pending = exc
                return out
            raise
        return out

    def _line(self, line: bytes) -> ClientEvent:
        if self.state is State.AWAITING:
            answer = decode_response(line, self.protocol)
            ack = isinstance(answer, SuccessResponse) and isinstance(
                answer.result, t.SubscriptionStartedReply
            )
            self._advance(Input.ACK if ack else Input.ANSWER, local=False)
            return answer
        if self.state is State.STREAMING:
            if line.startswith(b'{"id"'):  # herdr writes id first: an error ends the stream
                lost = decode_response(line, self.protocol)
                if isinstance(lost, ErrorResponse):
                    self._advance(Input.STREAM_ERROR, local=False)
                    return lost
            return decode_stream_line(line)
        self.state = State.ERROR
        raise RemoteProtocolError(
            ErrorCode.UNEXPECTED_EVENT, f"unexpected line in state {self.state.value}"
        )


class ServerConnection(_Machine):
    """The server side: feed the request bytes, :meth:`send` the answer (and events).

    ``receive_data`` returns the decoded request once its line is complete.
    The silent closes of herdr raise :class:`RemoteProtocolError` with no
    ``reply_hint`` (over-long line, invalid UTF-8, blank line); a line that
    is not a valid request raises with ``reply_hint`` set to herdr's
    ``invalid_request`` answer. End of stream before a newline returns
    :class:`ConnectionClosed` (herdr drops such a request quietly).
    """

    def __init__(
        self,
        *,
        protocol: int = DEFAULT_PROTOCOL,
        accepted_at: float = 0.0,
        request_timeout: float = REQUEST_TIMEOUT,
        max_request_bytes: int = MAX_REQUEST_BYTES,
    ) -> None:
        require_supported(protocol)
        super().__init__(Role.SERVER)
        self.protocol = protocol
        self.deadline = accepted_at + request_timeout
        """Time by which the request line must be complete (same clock as ``accepted_at``)."""
        self.request: t.Request | None = None
        self._lines = LineBuffer(
            FramingPolicy(
                max_frame_bytes=max_request_bytes,
                strip_cr=False,
                blank_lines=BlankLines.KEEP,
                eof_tail=EofTail.DROP,
                over_cap=OverCap.RAISE,
            )
        )

    @property
    def holds_connection(self) -> bool:
        """True when the request is a wait or a stream (client data then means it left)."""
        if self.request is None:
            return False
        return self.request.__struct_config__.tag in HOLDING_METHODS

    def expired(self, now: float) -> bool:
        """Return whether the request line failed to arrive by :attr:`deadline`."""
        return self.state is State.IDLE and now >= self.deadline

    def receive_data(self, data: bytes) -> list[ServerEvent]:
        """Feed bytes from the client (``b""`` = end of stream); return the events.

        Raises:
            RemoteProtocolError: the request line is invalid (see the class docstring).

        """
        if self.state is State.IDLE:
            return self._receive_request(data)
        if self.state in (State.AWAITING, State.LEAVING, State.STREAMING) and self.holds_connection:
            self._advance(Input.CLIENT_DATA if data else Input.EOF, local=False)
            return [ClientGone()]
        return []

    def _receive_request(self, data: bytes) -> list[ServerEvent]:
        try:
            lines = self._lines.feed(data)
        except RemoteProtocolError:
            self.state = State.ERROR
            raise
        if not lines:
            if not data:
                self._advance(Input.EOF, local=False)
                return [ConnectionClosed()]
            return []
        line, rest = lines[0], lines[1:]
        try:
            text = line.decode("utf-8").strip()
        except UnicodeDecodeError:
            self.state = State.ERROR
            raise RemoteProtocolError(
                ErrorCode.MALFORMED_FRAME, "request line is not valid UTF-8"
            ) from None
        if not text:
            self.state = State.ERROR
            raise RemoteProtocolError(ErrorCode.MALFORMED_FRAME, "request line is blank")
        try:
            request = decode_request(text.encode(), self.protocol)
        except RemoteProtocolError:
            self.state = State.ERROR
            raise
        self.request = request
        self._advance(Input.REQUEST, local=False)
        events: list[ServerEvent] = [request]
        trailing = bool(rest) or self._lines.buffered > 0
        if trailing and self.holds_connection:
            self._advance(Input.CLIENT_DATA, local=False)
            events.append(ClientGone())
        return events

    def send(
        self, event: SuccessResponse[Any] | ErrorResponse | LifecycleEvent | SubscriptionEvent
    ) -> bytes:
        """Return the bytes of ``event`` (one line) and advance the state.

        An answer ends the exchange, except a ``subscription_started``
        success, which starts the stream; events may only follow it.

        Raises:
            LocalProtocolError: ``event`` is not allowed now (a second answer,
                an event outside a stream, anything after the client left).

        """
        if isinstance(event, SuccessResponse):
            ack = isinstance(event.result, t.SubscriptionStartedReply)
            self._advance(Input.ACK if ack else Input.ANSWER, local=True)
        elif isinstance(event, ErrorResponse):
            streaming = self.state is State.STREAMING
            self._advance(Input.STREAM_ERROR if streaming else Input.ANSWER, local=True)
        else:
            self._advance(Input.EVENT, local=True)
        return encode_line(event)
