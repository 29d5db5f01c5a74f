"""Async and blocking herdr clients: one connection per request, as herdr requires.

Both clients resolve the socket as herdr does (:func:`~shedproto.herdr.api_socket_path`),
open a new connection for every request, drive a
:class:`~shedproto.herdr.ClientConnection` with the bytes, and raise
:class:`~shedproto.herdr.HerdrApiError` for an error answer. A request that
can wait (``agent.wait``, ``pane.wait_for_output``, ...) gets no client
deadline unless it carries ``timeout_ms`` (then ``timeout_ms`` + 5 s);
every other request gets ``timeout`` seconds. Subscriptions never time out
on a quiet stream.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import anyio
import msgspec
from typing_extensions import Self

from shedproto import ErrorCode, LocalProtocolError, RemoteProtocolError
from shedproto.clients._transport import AsyncLineTransport, BlockingLineTransport, first_reply
from shedproto.herdr import (
    DEFAULT_PROTOCOL,
    HOLDING_METHODS,
    MAX_REQUEST_BYTES,
    ClientConnection,
    Compatibility,
    ConnectionClosed,
    ErrorResponse,
    HerdrApiError,
    LifecycleEvent,
    RawRequest,
    SubscriptionEvent,
    SuccessResponse,
    api_socket_path,
    check_exact,
    check_methods,
    make_request,
)
from shedproto.herdr import types as t
from shedproto.herdr._methods import AsyncMethods, BlockingMethods

__all__ = [
    "AsyncHerdrClient",
    "AsyncSubscription",
    "BlockingHerdrClient",
    "BlockingSubscription",
    "RuntimeStatus",
    "StreamEvent",
]

DEFAULT_TIMEOUT = 30.0
"""Seconds an ordinary request may take, connect included."""
WAIT_SLACK = 5.0
"""Extra seconds granted beyond a wait's own ``timeout_ms``."""
RECEIVE_CHUNK = 65536

StreamEvent = LifecycleEvent | SubscriptionEvent
"""One pushed line of a subscription."""


@dataclass(frozen=True)
class RuntimeStatus:
    """What ``herdr status`` reports, filled from a ``ping`` answer.

    ``compatible`` is herdr's rule: the server's protocol equals the client's.
    """

    version: str
    protocol: int
    client_protocol: int
    capabilities: t.ServerCapabilities | None

    @property
    def compatible(self) -> bool:
        """True when the protocols are equal (herdr's exact rule)."""
        return self.protocol == self.client_protocol


def _deadline(method: str, params: Any, default: float | None) -> float | None:
    if method not in HOLDING_METHODS:
        return default
    timeout_ms = getattr(params, "timeout_ms", None)
    wait = getattr(params, "wait", None)
    if method == "agent.prompt":
        if wait is None:
            return default
        timeout_ms = wait.timeout_ms
    return None if timeout_ms is None else timeout_ms / 1000 + WAIT_SLACK


def _subscriptions(items: Iterable[Any]) -> t.EventsSubscribeParams:
    subs: list[Any] = [
        msgspec.to_builtins(item) if isinstance(item, msgspec.Struct) else item
        for item in (({"type": i} if isinstance(i, str) else i) for i in items)
    ]
    try:
        return msgspec.convert({"subscriptions": subs}, t.EventsSubscribeParams)
    except msgspec.ValidationError as exc:
        raise LocalProtocolError(ErrorCode.INVALID_ARGUMENT, f"bad subscription: {exc}") from None


def _over_cap(request_line: bytes) -> bool:
    """Whether herdr closes without a word on ``request_line``: its own answer, no stranger's."""
    return len(request_line) > MAX_REQUEST_BYTES


def _same_tag(result: Any, expected: Any) -> bool:
    mine = getattr(type(result), "__struct_config__", None)
    theirs = getattr(expected, "__struct_config__", None)
    return mine is not None and theirs is not None and mine.tag == theirs.tag


def _result(answer: Any, expected: Any) -> Any:
    if isinstance(answer, ErrorResponse):
        raise HerdrApiError(answer.error.code, answer.error.message, id=answer.id)
    result = answer.result
    if expected is not None and not isinstance(result, expected):
        if _same_tag(result, expected):
            # an older protocol's twin (PongReplyP20): the typed method returns the
            # newest type, with the fields that protocol lacks at their defaults
            return msgspec.convert(msgspec.to_builtins(result), expected)
        raise RemoteProtocolError(
            ErrorCode.UNEXPECTED_EVENT,
            f"expected a {expected} result, got {type(result).__name__}",
        )
    return result


class _Base:
    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        protocol: int = DEFAULT_PROTOCOL,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> None:
        self.path = os.fspath(path)
        self.protocol = protocol
        self.timeout = timeout
        self._ids = 0

    @classmethod
    def for_socket(
        cls,
        path: str | os.PathLike[str],
        *,
        protocol: int = DEFAULT_PROTOCOL,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> Self:
        """Return a client for the API socket at ``path`` (nothing is connected yet)."""
        return cls(path, protocol=protocol, timeout=timeout)

    @classmethod
    def local(
        cls,
        *,
        session: str | None = None,
        env: Mapping[str, str] | None = None,
        protocol: int = DEFAULT_PROTOCOL,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> Self:
        """Return a client for the active session's socket, resolved as herdr does.

        ``session`` is the CLI's ``--session``; ``env`` defaults to ``os.environ``.

        Raises:
            LocalProtocolError: ``session`` is not a valid session name.

        """
        path = api_socket_path(os.environ if env is None else env, session=session)
        return cls(path, protocol=protocol, timeout=timeout)

    def _next_id(self) -> str:
        self._ids += 1
        return f"shedproto_{self._ids}"

    def _build(self, method: str, params: Any) -> tuple[t.Request | RawRequest, Any]:
        request_id = self._next_id()
        if method in t.PROTOCOL_TABLES[self.protocol][0]:
            request = make_request(method, params, id=request_id, protocol=self.protocol)
            return request, request.params  # type: ignore[attr-defined]
        raw = RawRequest(id=request_id, method=method, params=dict(params or {}))
        return raw, None

    def _status(self, pong: t.PongReply) -> RuntimeStatus:
        return RuntimeStatus(
            version=pong.version,
            protocol=pong.protocol,
            client_protocol=self.protocol,
            capabilities=pong.capabilities,
        )


class AsyncHerdrClient(_Base, AsyncMethods):
    """An anyio client for herdr's API socket; every call opens its own connection.

    ``await client.request("workspace.list")`` returns the typed result;
    ``await client.workspace_create(cwd="/tmp")`` is the generated typed form.
    Errors: :class:`HerdrApiError` for an error answer, ``ConnectError`` when
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
        answer = await self.send(request, timeout=_deadline(method, typed, self.timeout))
        return _result(answer, None)

    async def _call(self, method: str, params: Any, result: Any) -> Any:
        request = make_request(method, params, id=self._next_id(), protocol=self.protocol)
        answer = await self.send(request, timeout=_deadline(method, params, self.timeout))
        return _result(answer, result)

    async def send(
        self, request: t.Request | RawRequest, *, timeout: float | None = DEFAULT_TIMEOUT
    ) -> SuccessResponse[Any] | ErrorResponse:
        """Send one request on a new connection and return the raw answer (success or error)."""
        with anyio.fail_after(timeout):
            transport = await AsyncLineTransport.connect(self.path)
            async with transport:
                conn = ClientConnection(protocol=self.protocol)
                request_line = conn.send(request)
                with first_reply(transport, silent_close=_over_cap(request_line)):
                    await transport.send(request_line)
                    while True:
                        try:
                            data = await transport.stream.receive(RECEIVE_CHUNK)
                        except (anyio.EndOfStream, anyio.BrokenResourceError):
                            data = b""
                        for event in conn.receive_data(data):
                            if isinstance(event, (SuccessResponse, ErrorResponse)):
                                return event
                        if not data:
                            raise RemoteProtocolError(
                                ErrorCode.CONNECTION_CLOSED, "the server closed without answering"
                            )

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
        params = _subscriptions(subscriptions)
        request = make_request(
            "events.subscribe", params, id=self._next_id(), protocol=self.protocol
        )
        return AsyncSubscription(self, request)


_STREAMED = (LifecycleEvent, SubscriptionEvent, ErrorResponse)


def _streamed(item: Any) -> StreamEvent:
    """Return a streamed event; an error line (protocol 22's ``events_lost``) raises.

    Raises:
        HerdrApiError: the server ended the stream with an error; it is the last line.

    """
    if isinstance(item, ErrorResponse):
        raise HerdrApiError(item.error.code, item.error.message, id=item.id)
    result: StreamEvent = item
    return result


class AsyncSubscription:
    """An open ``events.subscribe`` stream (async context manager and iterator)."""

    def __init__(self, client: AsyncHerdrClient, request: t.Request) -> None:
        self.client = client
        self.request = request
        self._transport: AsyncLineTransport | None = None
        self._conn = ClientConnection(protocol=client.protocol)
        self._queue: list[StreamEvent | ErrorResponse] = []
        self._done = False

    async def __aenter__(self) -> Self:
        with anyio.fail_after(self.client.timeout):
            self._transport = await AsyncLineTransport.connect(self.client.path)
            try:
                request_line = self._conn.send(self.request)
                answers: list[Any] = []
                with first_reply(self._transport, silent_close=_over_cap(request_line)):
                    await self._transport.send(request_line)
                    while not answers:
                        events = await self._receive()
                        answers = [
                            e for e in events if isinstance(e, (SuccessResponse, ErrorResponse))
                        ]
                        self._queue += [
                            e for e in events if isinstance(e, (LifecycleEvent, SubscriptionEvent))
                        ]
                        if not answers and self._done:
                            raise RemoteProtocolError(
                                ErrorCode.CONNECTION_CLOSED, "the server closed without answering"
                            )
                _result(answers[0], t.SubscriptionStartedReply)
                return self
            except BaseException:
                await self.aclose()
                raise

    async def _receive(self) -> list[Any]:
        assert self._transport is not None
        try:
            data = await self._transport.stream.receive(RECEIVE_CHUNK)
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
            data = b""
        events = self._conn.receive_data(data)
        if not data or any(isinstance(e, ConnectionClosed) for e in events):
            self._done = True
        return events

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        return self

    async def __anext__(self) -> StreamEvent:
        while not self._queue:
            if self._done or self._transport is None:
                raise StopAsyncIteration
            events = await self._receive()
            self._queue += [e for e in events if isinstance(e, _STREAMED)]
        return _streamed(self._queue.pop(0))

    async def aclose(self) -> None:
        """Close the stream (herdr ends a subscription when its client closes); idempotent."""
        self._done = True
        if self._transport is not None:
            await self._transport.aclose()
            self._transport = None

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class BlockingHerdrClient(_Base, BlockingMethods):
    """The blocking twin of :class:`AsyncHerdrClient`, over plain sockets."""

    def request(self, method: str, params: Any = None) -> Any:
        """Send ``method`` with ``params`` and return the typed result (see the async form)."""
        request, typed = self._build(method, params)
        answer = self.send(request, timeout=_deadline(method, typed, self.timeout))
        return _result(answer, None)

    def _call(self, method: str, params: Any, result: Any) -> Any:
        request = make_request(method, params, id=self._next_id(), protocol=self.protocol)
        answer = self.send(request, timeout=_deadline(method, params, self.timeout))
        return _result(answer, result)

    def send(
        self, request: t.Request | RawRequest, *, timeout: float | None = DEFAULT_TIMEOUT
    ) -> SuccessResponse[Any] | ErrorResponse:
        """Send one request on a new connection and return the raw answer.

        Raises:
            TimeoutError: no answer within ``timeout`` seconds.

        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with BlockingLineTransport.connect(self.path, timeout=timeout or 5.0) as transport:
            conn = ClientConnection(protocol=self.protocol)
            request_line = conn.send(request)
            sock = transport.sock
            with first_reply(transport, silent_close=_over_cap(request_line)):
                transport.send(request_line)
                while True:
                    if deadline is not None:
                        remaining = deadline - time.monotonic()
                        if remaining <= 0:
                            raise TimeoutError("no answer before the deadline")
                        sock.settimeout(remaining)
                    else:
                        sock.settimeout(None)
                    try:
                        data = sock.recv(RECEIVE_CHUNK)
                    except ConnectionResetError:
                        data = b""
                    for event in conn.receive_data(data):
                        if isinstance(event, (SuccessResponse, ErrorResponse)):
                            return event
                    if not data:
                        raise RemoteProtocolError(
                            ErrorCode.CONNECTION_CLOSED, "the server closed without answering"
                        )

    def runtime_status(self) -> RuntimeStatus:
        """Ping the server and return its version, protocol and capabilities."""
        return self._status(self.ping())

    def check_version(self, methods: Iterable[str] | None = None) -> Compatibility:
        """Blocking form of :meth:`AsyncHerdrClient.check_version`."""
        status = self.runtime_status()
        if methods is None:
            check_exact(self.protocol, status.protocol)
            return Compatibility(ours=self.protocol, theirs=status.protocol, exact=True)
        return check_methods(self.protocol, status.protocol, methods)

    def subscribe(self, *subscriptions: Any) -> BlockingSubscription:
        """Open a subscription; use ``with client.subscribe(...) as events: for e in events``.

        Raises:
            HerdrApiError: the server refused a subscription.

        """
        params = _subscriptions(subscriptions)
        request = make_request(
            "events.subscribe", params, id=self._next_id(), protocol=self.protocol
        )
        return BlockingSubscription(self, request)


class BlockingSubscription:
    """An open ``events.subscribe`` stream over a plain socket (context manager, iterator)."""

    def __init__(self, client: BlockingHerdrClient, request: t.Request) -> None:
        self.client = client
        self.request = request
        self._transport: BlockingLineTransport | None = None
        self._conn = ClientConnection(protocol=client.protocol)
        self._queue: list[StreamEvent | ErrorResponse] = []
        self._done = False

    def __enter__(self) -> Self:
        timeout = self.client.timeout
        self._transport = BlockingLineTransport.connect(self.client.path, timeout=timeout or 5.0)
        try:
            request_line = self._conn.send(self.request)
            deadline = None if timeout is None else time.monotonic() + timeout
            answers: list[Any] = []
            with first_reply(self._transport, silent_close=_over_cap(request_line)):
                self._transport.send(request_line)
                while not answers:
                    events = self._receive(deadline)
                    answers = [e for e in events if isinstance(e, (SuccessResponse, ErrorResponse))]
                    self._queue += [
                        e for e in events if isinstance(e, (LifecycleEvent, SubscriptionEvent))
                    ]
                    if not answers and self._done:
                        raise RemoteProtocolError(
                            ErrorCode.CONNECTION_CLOSED, "the server closed without answering"
                        )
            _result(answers[0], t.SubscriptionStartedReply)
            return self
        except BaseException:
            self.close()
            raise

    def _receive(self, deadline: float | None) -> list[Any]:
        assert self._transport is not None
        sock = self._transport.sock
        if deadline is None:
            sock.settimeout(None)
        else:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no acknowledgement before the deadline")
            sock.settimeout(remaining)
        try:
            data = sock.recv(RECEIVE_CHUNK)
        except (ConnectionResetError, OSError) as exc:
            if isinstance(exc, TimeoutError):
                raise
            data = b""
        events = self._conn.receive_data(data)
        if not data:
            self._done = True
        return events

    def __iter__(self) -> Iterator[StreamEvent]:
        return self

    def __next__(self) -> StreamEvent:
        while not self._queue:
            if self._done or self._transport is None:
                raise StopIteration
            events = self._receive(None)
            self._queue += [e for e in events if isinstance(e, _STREAMED)]
        return _streamed(self._queue.pop(0))

    def close(self) -> None:
        """Close the stream; idempotent."""
        self._done = True
        if self._transport is not None:
            self._transport.close()
            self._transport = None

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
