"""Sans-IO connections for both roles: bytes in, events out, and back.

One connection object serves one socket connection, which in herdr carries
exactly one request (see :mod:`shedproto.herdr._state`). Both are built on the
connection contract (:class:`shedproto.Contract`) with the tables
:data:`~shedproto.herdr._state.CLIENT_TABLE` and ``SERVER_TABLE``. Deadlines
are inputs: the server connection records when it was accepted and reports
its deadline (:meth:`ServerConnection.next_deadline`); the shell decides what
"now" is. herdr's own ``invalid_request`` line waits in the server's outbox
(:meth:`ServerConnection.data_to_send`). The client returns every answer and
event completed before a bad line and raises the error on its next call (the
contract's good-before-bad rule).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import msgspec

from shedproto._codec import LenientFrame, encode, encode_line
from shedproto._contract import ConnectionClosed as _Closed
from shedproto._contract import Contract
from shedproto._errors import ErrorCode, LocalProtocolError, RemoteProtocolError
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
    request_id_of,
    retired_method_reply,
)
from ._releases import HIDDEN_METHODS, HerdrRelease
from ._state import CLIENT_TABLE, SERVER_TABLE, Input, State
from ._versions import DEFAULT_PROTOCOL, require_supported

__all__ = [
    "HOLDING_METHODS",
    "MAX_REQUEST_BYTES",
    "RAW_STREAM_METHODS",
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
    {
        "events.subscribe",
        "events.wait",
        "agent.wait",
        "agent.prompt",
        "pane.wait_for_output",
        "server.ssh_agent.register",
    }
)
"""Methods whose answer may take long; any byte from the client meanwhile means it left."""

RAW_STREAM_METHODS: frozenset[str] = frozenset({"pane.graphics.stream"})
"""Methods after whose ``ok`` the client's bytes are a raw stream.

The frames are read by :class:`~shedproto.herdr.GraphicsStreamReader`.

The server connection hands the bytes that followed the request line to the
shell (:attr:`ServerConnection.trailing`) and reads nothing more itself.
"""


@dataclass(frozen=True)
class ConnectionClosed(_Closed):
    """The connection is over: ``reason`` ``"eof"`` or ``"timeout"``.

    ``"eof"``: the peer closed where that is allowed; ``"timeout"`` (server):
    no request line by the deadline, which herdr closes silently.
    """

    reason: str = "eof"


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
    converted to ``protocol``'s type; fields that protocol lacks are dropped. A
    method of :data:`~shedproto.herdr.HIDDEN_METHODS` is built with protocol
    22's types at every protocol (herdr serves it; only its schema skips it).

    Raises:
        LocalProtocolError: ``UNKNOWN_TYPE`` for a method ``protocol`` does not
            have, ``INVALID_ARGUMENT`` (with the JSON path) for bad params.
        VersionMismatchError: ``protocol`` is not supported.

    """
    require_supported(protocol)
    requests, params_types, _ = t.PROTOCOL_TABLES[protocol]
    if method in HIDDEN_METHODS and method not in requests:
        # served by every release though the published 20/21 schemas skip it
        requests, params_types, _ = t.PROTOCOL_TABLES[22]
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


_ANSWER_FRAMING = FramingPolicy(
    max_frame_bytes=MAX_ANSWER_BYTES,
    blank_lines=BlankLines.SKIP_WHITESPACE,
    eof_tail=EofTail.FRAME,
    over_cap=OverCap.RAISE,
)
"""How the client frames answers (built once: a connection per request is the norm)."""

ClientEvent = (
    SuccessResponse[Any] | ErrorResponse | LifecycleEvent | SubscriptionEvent | ConnectionClosed
)
"""What :meth:`ClientConnection.receive_data` returns."""

ServerEvent = t.Request | ClientGone | ConnectionClosed
"""What :meth:`ServerConnection.receive_data` returns."""

_ACK = t.SubscriptionStartedReply

# Read per call on both sides of a connection made per request: an enum member read
# through its class costs ~100 ns on Python 3.11, a module global ~5.
_IDLE, _AWAITING, _STREAMING, _ERROR = State.IDLE, State.AWAITING, State.STREAMING, State.ERROR
_REQUEST, _DATA, _EOF, _ACK_INPUT = Input.REQUEST, Input.DATA, Input.EOF, Input.ACK
_CLIENT_DATA = Input.CLIENT_DATA


class ClientConnection(Contract[State]):
    """The client side: :meth:`send` one request, feed answers to :meth:`receive_data`.

    After an ``events.subscribe`` request whose answer is the
    ``subscription_started`` acknowledgement, further lines are decoded as
    :class:`LifecycleEvent` / :class:`SubscriptionEvent`. A violation raises
    :class:`~shedproto.RemoteProtocolError` and leaves the connection in ``State.ERROR``
    (sticky); events decoded before the bad line are returned first and the
    error is raised by the next call.
    """

    def __init__(
        self, *, protocol: int = DEFAULT_PROTOCOL, max_line_bytes: int = MAX_ANSWER_BYTES
    ) -> None:
        require_supported(protocol)
        super().__init__(CLIENT_TABLE, _IDLE)
        self.protocol = protocol
        self.method: str | None = None
        policy = _ANSWER_FRAMING
        if max_line_bytes != MAX_ANSWER_BYTES:
            policy = replace(policy, max_frame_bytes=max_line_bytes)
        self._lines = LineBuffer(policy)

    def send(self, request: t.Request | RawRequest) -> bytes:
        """Return the bytes of ``request`` (one line); only one request per connection.

        Raises:
            LocalProtocolError: a request was already sent on this connection
                (the state is unchanged).

        """
        self._local(_REQUEST)
        if isinstance(request, RawRequest):
            self.method = request.method
            return encode_line(request)
        self.method = str(request.__struct_config__.tag)
        return encode_request(request)

    def receive_data(self, data: bytes) -> list[ClientEvent]:
        """Feed bytes from the server (``b""`` = end of stream); return the decoded events.

        Raises:
            RemoteProtocolError: a malformed or unexpected line, an over-long
                line, or ``CONNECTION_CLOSED`` when the server closed before
                answering; the state is then ``ERROR``.
            LocalProtocolError: bytes fed after that error was raised.

        """
        self._raise_deferred()
        if self.state is _ERROR:
            self._local(_DATA)  # raises, naming the earlier failure
        lines, error = self._split(self._lines, data)
        out: list[ClientEvent] = []
        try:
            for line in lines:
                out.append(self._line(line))  # noqa: PERF401 - kept when a later line fails
            if error is not None:
                raise error
            if not data:
                if self.state is _AWAITING:
                    raise RemoteProtocolError(
                        ErrorCode.CONNECTION_CLOSED,
                        "the server closed the connection without answering",
                    )
                self._remote(_EOF)
                out.append(ConnectionClosed())
        except RemoteProtocolError as exc:
            return self._deliver(out, exc)
        return out

    def _line(self, line: bytes) -> ClientEvent:
        event: ClientEvent
        if self.state is _STREAMING:
            lost = None
            if line.startswith(b'{"id"'):  # herdr writes id first: an error ends the stream
                lost = decode_response(line, self.protocol)
            event = lost if isinstance(lost, ErrorResponse) else decode_stream_line(line)
        else:
            event = decode_response(line, self.protocol)
        key: Any = type(event)
        if key is SuccessResponse and isinstance(event.result, _ACK):  # type: ignore[union-attr]
            key = _ACK_INPUT
        self._remote(key)
        return event


def _request_policy(max_request_bytes: int) -> FramingPolicy:
    """Return herdr's request-line framing with a cap of ``max_request_bytes``.

    Raises:
        ValueError: the cap is not positive.

    """
    return FramingPolicy(
        max_frame_bytes=max_request_bytes,
        strip_cr=False,
        blank_lines=BlankLines.KEEP,
        eof_tail=EofTail.DROP,
        over_cap=OverCap.RAISE,
    )


_REQUEST_POLICY = _request_policy(MAX_REQUEST_BYTES)
"""Built once: a server makes a connection per request (issue 16)."""


class ServerConnection(Contract[State]):
    """The server side: feed the request bytes, :meth:`send` the answer (and events).

    ``receive_data`` returns the decoded request once its line is complete.
    The silent closes of herdr raise :class:`~shedproto.RemoteProtocolError` with no
    ``reply_hint`` (over-long line, invalid UTF-8, blank line); a line that
    is not a valid request raises with ``reply_hint`` set to herdr's
    ``invalid_request`` answer, which also waits in the outbox
    (:meth:`data_to_send`). Either leaves the connection in ``State.ERROR``.
    End of stream before a newline returns :class:`ConnectionClosed` (herdr
    drops such a request quietly); so does :meth:`handle_timeout` once the
    request line missed :attr:`deadline`.
    """

    def __init__(
        self,
        *,
        protocol: int = DEFAULT_PROTOCOL,
        accepted_at: float = 0.0,
        request_timeout: float = REQUEST_TIMEOUT,
        max_request_bytes: int = MAX_REQUEST_BYTES,
        release: HerdrRelease | None = None,
    ) -> None:
        require_supported(protocol)
        if release is not None and release.protocol != protocol:
            raise ValueError(f"herdr {release.version} speaks protocol {release.protocol}")
        self.release = release
        """The herdr release whose request rules apply (``None``: the protocol's table)."""
        self._methods: frozenset[str] | None = None  # None: the whole table (the fast decoder)
        if release is not None and release.methods != t.PROTOCOL_TABLES[protocol][0].keys():
            self._methods = release.methods
        self._echo = release is not None and release.echoes_invalid_id
        self._retired = release.retired if release is not None else frozenset()
        super().__init__(SERVER_TABLE, _IDLE)
        self.protocol = protocol
        self.deadline = accepted_at + request_timeout
        """Time by which the request line must be complete (same clock as ``accepted_at``)."""
        self.request: t.Request | None = None
        self.holds_connection = False
        """True when the request is a wait or a stream (client data then means it left)."""
        self.raw_stream = False
        """True for a :data:`RAW_STREAM_METHODS` request: later bytes are the shell's."""
        self.trailing = b""
        """A raw stream's bytes that arrived with the request line (after its newline)."""
        self._lines = LineBuffer(
            _REQUEST_POLICY
            if max_request_bytes == MAX_REQUEST_BYTES
            else _request_policy(max_request_bytes)
        )

    def expired(self, now: float) -> bool:
        """Return whether the request line failed to arrive by :attr:`deadline`."""
        return self.state is _IDLE and now >= self.deadline

    def next_deadline(self) -> float | None:
        """Return the request line's deadline while it is awaited; ``None`` afterwards."""
        return self.deadline if self.state is _IDLE else None

    def handle_timeout(self, now: float) -> list[ConnectionClosed]:
        """Close the connection when the request line missed its deadline (herdr says nothing).

        Returns ``[ConnectionClosed(reason="timeout")]`` then, else ``[]``.
        """
        if not self.expired(now):
            return []
        self._remote(Input.TIMEOUT)
        return [ConnectionClosed(reason="timeout")]

    def receive_data(self, data: bytes) -> list[ServerEvent]:
        """Feed bytes from the client (``b""`` = end of stream); return the events.

        Raises:
            RemoteProtocolError: the request line is invalid (see the class docstring).

        """
        state = self.state
        if state is _IDLE:
            return self._receive_request(data)
        if self.raw_stream:
            return []  # the shell reads the raw stream itself
        if self.holds_connection and state in _HOLDING_STATES:
            self._remote(_CLIENT_DATA if data else _EOF)
            return [ClientGone()]
        return []

    def _receive_request(self, data: bytes) -> list[ServerEvent]:
        lines, error = self._split(self._lines, data)
        if not lines:
            if error is not None:
                raise self._fail(error)
            if not data:
                self._remote(_EOF)
                return [ConnectionClosed()]
            return []
        # herdr reads only the first line: whatever follows it (more lines, an
        # over-long tail) is the client's data after its request
        line = lines[0]
        try:
            text = line.decode("utf-8").strip()
        except UnicodeDecodeError:
            raise self._fail(
                RemoteProtocolError(ErrorCode.MALFORMED_FRAME, "request line is not valid UTF-8")
            ) from None
        if not text:
            blank = RemoteProtocolError(ErrorCode.MALFORMED_FRAME, "request line is blank")
            raise self._fail(blank)
        payload = line if len(text) == len(line) else text.encode()  # ASCII, nothing stripped
        try:
            request = decode_request(payload, self.protocol, self._methods)
        except RemoteProtocolError as exc:
            if exc.reply_hint is not None:
                echoed = request_id_of(payload) if self._echo else ""
                retired = self._retired and retired_method_reply(payload, self._retired, echoed)
                if retired:
                    exc.reply_hint = retired
                elif echoed:
                    exc.reply_hint = _with_id(exc.reply_hint, echoed)
                self.outbox.put(exc.reply_hint)
            raise self._fail(exc) from None
        self.request = request
        method = request.__struct_config__.tag
        self.holds_connection = method in HOLDING_METHODS
        self._remote(_REQUEST)
        events: list[ServerEvent] = [request]
        if method in RAW_STREAM_METHODS:  # the line ended at this chunk's first newline
            self.raw_stream = True
            self.trailing = data[data.index(b"\n") + 1 :]
            return events
        trailing = len(lines) > 1 or error is not None or self._lines.buffered > 0
        if trailing and self.holds_connection:
            self._remote(_CLIENT_DATA)
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
                an event outside a stream, anything after the client left);
                the state is unchanged.

        """
        key: Any = type(event)
        if key is SuccessResponse and isinstance(event.result, _ACK):  # type: ignore[union-attr]
            key = _ACK_INPUT
        self._local(key)
        return encode_line(event)


def _with_id(reply: bytes, id: str) -> bytes:
    """Return an ``invalid_request`` reply line (id ``""``) with ``id`` instead."""
    return b'{"id":' + encode(id) + reply[len(b'{"id":""') :]


_HOLDING_STATES = frozenset({State.AWAITING, State.LEAVING, State.STREAMING})
