"""The herdr client over anyio: one connection per request, as herdr requires.

The source of the blocking client (``tools/unasync.py`` writes ``_blocking.py``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Any

from typing_extensions import Self

from shedproto import ErrorCode, LocalProtocolError, RemoteProtocolError
from shedproto.clients._misuse import entered_twice, used_before_open
from shedproto.clients._transport import (
    AsyncClosing,
    AsyncLineTransport,
    first_reply,
    not_a_reply,
)
from shedproto.herdr import (
    ClientConnection,
    Compatibility,
    ConnectionClosed,
    ErrorResponse,
    GraphicsFrameHeader,
    LifecycleEvent,
    RawRequest,
    SubscriptionEvent,
    SuccessResponse,
    check_exact,
    check_methods,
    decode_response,
    encode_frame,
    encode_request,
    make_request,
)
from shedproto.herdr import types as t
from shedproto.herdr._methods import AsyncMethods
from shedproto.herdr._terminal import DEFAULT_SESSION_COLS, DEFAULT_SESSION_ROWS, SessionMode

from ._common import (
    DEFAULT_TIMEOUT,
    STREAMED,
    ClientBase,
    RuntimeStatus,
    StreamEvent,
    connect_timeout,
    deadline_for,
    foreign_error,
    over_cap,
    result_of,
    streamed,
    subscription_params,
)
from ._stream_async import AsyncTerminalSession

__all__ = [
    "AsyncGraphicsStream",
    "AsyncHerdrClient",
    "AsyncSshAgentRegistration",
    "AsyncSubscription",
]

_ANSWERS = (SuccessResponse, ErrorResponse)


class AsyncHerdrClient(ClientBase, AsyncMethods):
    """A client for herdr's API socket; every call opens its own connection.

    ``await client.request("workspace.list")`` returns the typed result;
    ``await client.workspace_create(cwd="/tmp")`` is the generated typed form.
    Errors: :class:`~shedproto.herdr.HerdrApiError` for an error answer, ``ConnectError`` when
    the socket cannot be reached, ``TimeoutError`` past the deadline,
    :class:`~shedproto.RemoteProtocolError` for a malformed answer or a close
    without one.
    """

    async def request(self, method: str, params: Any = None) -> Any:
        """Send ``method`` with ``params`` (Struct, mapping or None) and return the result.

        A method this library has no type for is sent as given; its result
        must still be a result type the protocol knows.
        """
        request, typed = self._build(method, params)
        answer = await self.send(request, timeout=deadline_for(method, typed, self.timeout))
        return result_of(answer, None)

    async def _call(self, method: str, params: Any, result: Any) -> Any:
        request = make_request(method, params, id=self._next_id(), protocol=self.protocol)
        answer = await self.send(request, timeout=deadline_for(method, params, self.timeout))
        return result_of(answer, result)

    async def send(
        self, request: t.Request | RawRequest, *, timeout: float | None = DEFAULT_TIMEOUT
    ) -> SuccessResponse[Any] | ErrorResponse:
        """Send one request on a new connection and return the raw answer (success or error).

        The connection's one deadline covers the whole exchange.

        Raises:
            TimeoutError: no answer within ``timeout`` seconds (``None``: no limit).

        """
        transport = await AsyncLineTransport.connect(self.path, timeout=connect_timeout(timeout))
        try:  # not ``async with``: two coroutines fewer per call
            transport.set_timeout(timeout)
            conn = ClientConnection(protocol=self.protocol)
            request_line = conn.send(request)
            try:  # first_reply's rule with no context manager on the success path
                await transport.send(request_line)
                while True:
                    data = await transport.receive_some()
                    for event in conn.receive_data(data):
                        if isinstance(event, _ANSWERS):
                            if event.__class__ is ErrorResponse:
                                foreign = foreign_error(str(self.path), event, data)
                                if foreign is not None:
                                    raise foreign
                            return event
                    if not data:
                        raise RemoteProtocolError(
                            ErrorCode.CONNECTION_CLOSED, "the server closed without answering"
                        )
            except Exception as exc:
                not_a_reply(transport, exc, silent_close=over_cap(request_line))
                raise
        finally:
            await transport.aclose()

    async def runtime_status(self) -> RuntimeStatus:
        """Ping the server and return its version, protocol and capabilities."""
        return self._status(await self.ping())

    async def check_version(self, methods: Iterable[str] | None = None) -> Compatibility:
        """Ping and check the server's protocol against this client's.

        Without ``methods`` the rule is herdr's exact equality; with them, only
        those methods must have the same shape in both protocols.

        Raises:
            VersionMismatchError: the check fails; it names both protocols.

        """
        status = await self.runtime_status()
        if methods is None:
            check_exact(self.protocol, status.protocol)
            return Compatibility(ours=self.protocol, theirs=status.protocol, exact=True)
        return check_methods(self.protocol, status.protocol, methods)

    def subscribe(self, *subscriptions: Any) -> AsyncSubscription:
        """Subscribe to events; use ``async with client.subscribe(...) as events``.

        Each subscription is a dotted type (``"workspace.created"``), a mapping
        (``{"type": "pane.output_matched", ...}``) or a Subscription Struct.
        Iterating yields :data:`StreamEvent` values until the server closes.

        Raises:
            HerdrApiError: (on entry) the server refused a subscription.

        """
        params = subscription_params(subscriptions)
        request = make_request(
            "events.subscribe", params, id=self._next_id(), protocol=self.protocol
        )
        return AsyncSubscription(self, request)

    def terminal_session(
        self,
        target: str,
        *,
        mode: SessionMode = "control",
        takeover: bool = False,
        cols: int = DEFAULT_SESSION_COLS,
        rows: int = DEFAULT_SESSION_ROWS,
    ) -> AsyncTerminalSession:
        """Open a pane's live terminal; use ``async with client.terminal_session(...) as term``.

        ``target`` is a pane id, terminal id or agent name (a terminal id for
        ``mode="attach"``); ``mode="observe"`` only watches. The stream uses
        the client socket beside this client's API socket.
        """
        return AsyncTerminalSession(
            self.path,
            target,
            mode=mode,
            takeover=takeover,
            cols=cols,
            rows=rows,
            timeout=self.timeout if self.timeout is not None else DEFAULT_TIMEOUT,
        )
    def graphics_stream(
        self, pane_id: str, *, layer_id: str | None = None, z_index: int = 0
    ) -> AsyncGraphicsStream:
        """Open a ``pane.graphics.stream``; use ``async with client.graphics_stream(pane)``.

        herdr 0.8.2 to 0.9.1 serve it; 0.9.2 removed it (``unknown_method``).
        On entry the server's ``ok`` must come within the client's timeout;
        then frames go out with :meth:`AsyncGraphicsStream.send_frame` and
        :meth:`AsyncGraphicsStream.send_file`. Closing the stream clears its layer.

        Raises:
            HerdrApiError: (on entry) the server refused the stream.

        """
        params = t.PaneGraphicsStreamParams(pane_id=pane_id, layer_id=layer_id, z_index=z_index)
        request = make_request(
            "pane.graphics.stream", params, id=self._next_id(), protocol=self.protocol
        )
        return AsyncGraphicsStream(self, request)

    def ssh_agent_register(self, socket_path: str) -> AsyncSshAgentRegistration:
        """Register a forwarded SSH agent socket for as long as the returned context is open.

        herdr answers ``ok`` and keeps the registration while the connection
        stays open (``server.ssh_agent.register``, herdr 0.9.2 and later).

        Raises:
            HerdrApiError: (on entry) the server refused the registration.

        """
        params = t.ServerSshAgentRegisterParams(socket_path=socket_path)
        request = make_request(
            "server.ssh_agent.register", params, id=self._next_id(), protocol=self.protocol
        )
        return AsyncSshAgentRegistration(self, request)


class _AsyncHeld(AsyncClosing):
    """A connection whose request's answer opens it; it stays open until closed."""

    def __init__(self, client: AsyncHerdrClient, request: t.Request) -> None:
        self.client = client
        self.request = request
        self._transport: AsyncLineTransport | None = None

    async def __aenter__(self) -> Self:
        if self._transport is not None:  # a second connection would hold a second one
            raise entered_twice(type(self).__name__, "its with block is still open")
        timeout = self.client.timeout
        transport = await AsyncLineTransport.connect(
            self.client.path, timeout=connect_timeout(timeout)
        )
        self._transport = transport
        try:
            transport.set_timeout(timeout)
            request_line = encode_request(self.request)
            with first_reply(transport, silent_close=over_cap(request_line)):
                await transport.send(request_line)
                answer = decode_response(await transport.receive_frame(), self.client.protocol)
            result_of(answer, t.OkReply)
            transport.set_timeout(None)
            return self
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        """Close the connection (herdr then ends what it opened); idempotent."""
        if self._transport is not None:
            await self._transport.aclose()
            self._transport = None


class AsyncSshAgentRegistration(_AsyncHeld):
    """A held ``server.ssh_agent.register``: the registration lasts until it is closed."""


class AsyncGraphicsStream(_AsyncHeld):
    """An open ``pane.graphics.stream`` (a context manager).

    Frames are built by :func:`~shedproto.herdr.encode_frame`.

    Inline frames are not acknowledged: a refused one makes herdr write its
    error and close, which the next :meth:`send_frame` or :meth:`send_file`
    raises as :class:`~shedproto.herdr.HerdrApiError` (id ``<request id>:frame:<n>``).
    """

    async def send_frame(self, header: GraphicsFrameHeader, data: bytes) -> None:
        """Send one inline frame (``data_length`` is filled in from ``data``).

        Raises:
            LocalProtocolError: a frame herdr would refuse
                (see :func:`~shedproto.herdr.encode_frame`).
            HerdrApiError: the server refused an earlier frame and closed.

        """
        frame = encode_frame(header, data)
        await self._send(frame)

    async def send_file(
        self, header: GraphicsFrameHeader, *, timeout: float | None = DEFAULT_TIMEOUT
    ) -> t.PaneGraphicsFrameAckReply:
        """Send one file frame (``header.file`` set) and return the server's acknowledgement.

        Raises:
            HerdrApiError: the server refused the frame (the stream is then over).
            TimeoutError: no answer within ``timeout`` seconds.

        """
        transport = await self._send(encode_frame(header))
        transport.set_timeout(timeout)
        try:
            line = await transport.receive_frame()
        finally:
            transport.set_timeout(None)
        ack: t.PaneGraphicsFrameAckReply = result_of(
            decode_response(line, self.client.protocol), t.PaneGraphicsFrameAckReply
        )
        return ack

    async def _send(self, frame: bytes) -> AsyncLineTransport:
        transport = self._transport
        if transport is None:
            raise LocalProtocolError(ErrorCode.CONNECTION_CLOSED, "the graphics stream is closed")
        try:
            await transport.send(frame)
        except (OSError, RemoteProtocolError):
            await self._raise_refusal(transport)
            raise
        return transport

    async def _raise_refusal(self, transport: AsyncLineTransport) -> None:
        """Raise the error line herdr wrote before it closed, when there is one."""
        transport.set_timeout(self.client.timeout)
        try:
            line = await transport.receive_frame()
        except (OSError, RemoteProtocolError, TimeoutError):
            return
        result_of(decode_response(line, self.client.protocol), t.OkReply)


class AsyncSubscription(AsyncClosing):
    """An open ``events.subscribe`` stream (context manager and iterator).

    The acknowledgement must come within the client's timeout; a quiet
    stream never times out. Iterating it before its ``with`` block opened it,
    and entering it twice, raise :class:`~shedproto.LocalProtocolError`
    (``CONNECTION_CLOSED``) saying so; once the block or the server ended
    the stream, iterating it ends at once.
    """

    def __init__(self, client: AsyncHerdrClient, request: t.Request) -> None:
        self.client = client
        self.request = request
        self._transport: AsyncLineTransport | None = None
        self._conn = ClientConnection(protocol=client.protocol)
        self._queue: list[StreamEvent | ErrorResponse] = []
        self._done = False
        self._entered = False

    async def __aenter__(self) -> Self:
        if self._entered:
            raise entered_twice("the subscription", "call client.subscribe(...) for another")
        self._entered = True
        timeout = self.client.timeout
        transport = await AsyncLineTransport.connect(
            self.client.path, timeout=connect_timeout(timeout)
        )
        self._transport = transport
        try:
            transport.set_timeout(timeout)
            request_line = self._conn.send(self.request)
            answers: list[Any] = []
            with first_reply(transport, silent_close=over_cap(request_line)):
                await transport.send(request_line)
                while not answers:
                    events = await self._receive()
                    answers = [e for e in events if isinstance(e, (SuccessResponse, ErrorResponse))]
                    self._queue += [
                        e for e in events if isinstance(e, (LifecycleEvent, SubscriptionEvent))
                    ]
                    if not answers and self._done:
                        raise RemoteProtocolError(
                            ErrorCode.CONNECTION_CLOSED, "the server closed without answering"
                        )
            result_of(answers[0], t.SubscriptionStartedReply)
            transport.set_timeout(None)
            return self
        except BaseException:
            await self.aclose()
            raise

    async def _receive(self) -> list[Any]:
        assert self._transport is not None
        data = await self._transport.receive_some()
        events = self._conn.receive_data(data)
        if not data or any(isinstance(e, ConnectionClosed) for e in events):
            self._done = True
        return events

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        return self

    async def __anext__(self) -> StreamEvent:
        if not self._entered:
            how = "async with client.subscribe(...) as events:"
            raise used_before_open("the subscription", how)
        while not self._queue:
            if self._done or self._transport is None:
                raise StopAsyncIteration
            events = await self._receive()
            self._queue += [e for e in events if isinstance(e, STREAMED)]
        return streamed(self._queue.pop(0))

    async def aclose(self) -> None:
        """Close the stream (herdr ends a subscription when its client closes); idempotent."""
        self._done = True
        if self._transport is not None:
            await self._transport.aclose()
            self._transport = None
