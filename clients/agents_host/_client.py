"""The API clients; see the package docstring."""

from __future__ import annotations

import os
from collections import deque
from types import TracebackType
from typing import Any, Literal, TypeVar

import msgspec
from typing_extensions import Self

from shedproto._codec import encode_line
from shedproto.agents_host import (
    API_FRAMING,
    ApiEvent,
    ApiReply,
    CollectResult,
    HealthResult,
    ReceiptResult,
    ReceiptsResult,
    SessionResult,
    SessionsResult,
    SubmitResult,
    SubscribeResult,
    Topic,
    decode_reply,
)
from shedproto.clients._transport import AsyncLineTransport, BlockingLineTransport, first_reply

__all__ = [
    "DEFAULT_TIMEOUT",
    "AgentsHostApiError",
    "AsyncAgentsHostClient",
    "BlockingAgentsHostClient",
]

DEFAULT_TIMEOUT = 30.0
"""Seconds a request waits for its reply (``submit`` with ``wait`` takes its own)."""

T = TypeVar("T")


class AgentsHostApiError(Exception):
    """The host answered a request with an error; ``code`` is the wire code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def _request(request_id: int, op: str, fields: dict[str, Any]) -> bytes:
    return encode_line(
        {"id": request_id, "op": op, **{k: v for k, v in fields.items() if v is not None}}
    )


def _result(reply: ApiReply, type_: type[T]) -> T:
    if not reply.ok:
        error = reply.error
        raise AgentsHostApiError(
            error.code if error else "unknown", error.message if error else "request failed"
        )
    return msgspec.convert(reply.result, type_)


class AsyncAgentsHostClient:
    """Async client over :class:`AsyncLineTransport`; use ``async with await connect(path)``."""

    def __init__(self, transport: AsyncLineTransport) -> None:
        self.transport = transport
        self._next_id = 0
        self._events: deque[ApiEvent] = deque()

    @classmethod
    async def connect(cls, path: str | os.PathLike[str], *, timeout: float = 5.0) -> Self:
        """Connect to the host's socket.

        Raises:
            UnreachableSocketError: the socket is missing or refuses (``reason``
                says what is there); a request whose first reply is not
                this protocol's raises it too (``OTHER_PROTOCOL``).

        """
        return cls(await AsyncLineTransport.connect(path, timeout=timeout, policy=API_FRAMING))

    async def _call(self, op: str, timeout: float | None, **fields: Any) -> ApiReply:
        self._next_id += 1
        request_id = self._next_id
        sent = False
        while True:
            with first_reply(self.transport):  # a hang-up or a foreign reply: another server
                if not sent:
                    await self.transport.send(_request(request_id, op, fields))
                    sent = True
                reply = decode_reply(await self.transport.receive_frame(timeout=timeout))
            if reply.event is not None:
                self._events.append(ApiEvent(event=reply.event, data=reply.data))
                continue
            if reply.id == request_id:
                return reply

    async def submit(
        self,
        command: dict[str, Any] | str,
        *,
        producer: str | None = None,
        wait: bool = False,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> SubmitResult:
        """Queue a command; with ``wait`` return once its terminal receipt is published.

        Raises:
            AgentsHostApiError: ``invalid-command``, ``unknown-producer``, ``not-accepting``...
            TimeoutError: no reply within ``timeout``.

        """
        reply = await self._call(
            "submit", timeout, command=command, producer=producer, wait=wait or None
        )
        return _result(reply, SubmitResult)

    async def receipt(self, command_id: str, *, producer: str | None = None) -> ReceiptResult:
        """Read one published receipt (``receipt`` is ``None`` when there is none)."""
        reply = await self._call(
            "receipt", DEFAULT_TIMEOUT, commandId=command_id, producer=producer
        )
        return _result(reply, ReceiptResult)

    async def receipts(self, *, limit: int = 50, producer: str | None = None) -> ReceiptsResult:
        """List receipts, most recently published first."""
        reply = await self._call("receipts", DEFAULT_TIMEOUT, limit=limit, producer=producer)
        return _result(reply, ReceiptsResult)

    async def health(self) -> HealthResult:
        """Read the published health document."""
        return _result(await self._call("health", DEFAULT_TIMEOUT), HealthResult)

    async def sessions(self, bucket: Literal["recent", "all"] = "recent") -> SessionsResult:
        """Read a session index."""
        return _result(await self._call("sessions", DEFAULT_TIMEOUT, bucket=bucket), SessionsResult)

    async def session(self, key: str) -> SessionResult:
        """Read one session row and its manifest."""
        return _result(await self._call("session", DEFAULT_TIMEOUT, key=key), SessionResult)

    async def collect(self) -> CollectResult:
        """Request a complete collection (as SIGHUP)."""
        return _result(await self._call("collect", DEFAULT_TIMEOUT), CollectResult)

    async def subscribe(
        self, topics: tuple[Topic, ...] = ("receipts", "health", "sessions")
    ) -> SubscribeResult:
        """Follow changes; read them with :meth:`next_event`."""
        reply = await self._call("subscribe", DEFAULT_TIMEOUT, topics=list(topics))
        return _result(reply, SubscribeResult)

    async def next_event(self, *, timeout: float | None = None) -> ApiEvent:
        """Return the next event (after :meth:`subscribe`), waiting at most ``timeout`` seconds.

        Raises:
            TimeoutError: no event in time. RemoteProtocolError: the host closed.

        """
        while not self._events:
            reply = decode_reply(await self.transport.receive_frame(timeout=timeout))
            if reply.event is not None:
                self._events.append(ApiEvent(event=reply.event, data=reply.data))
        return self._events.popleft()

    async def aclose(self) -> None:
        """Close the connection."""
        await self.transport.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class BlockingAgentsHostClient:
    """The blocking twin of :class:`AsyncAgentsHostClient` over a plain socket."""

    def __init__(self, transport: BlockingLineTransport) -> None:
        self.transport = transport
        self._next_id = 0

    @classmethod
    def connect(cls, path: str | os.PathLike[str], *, timeout: float = 5.0) -> Self:
        """Connect to the host's socket.

        Raises:
            UnreachableSocketError: the socket is missing or refuses (``reason``
                says what is there); a request whose first reply is not
                this protocol's raises it too (``OTHER_PROTOCOL``).

        """
        return cls(BlockingLineTransport.connect(path, timeout=timeout, policy=API_FRAMING))

    def _call(self, op: str, timeout: float | None, **fields: Any) -> ApiReply:
        self._next_id += 1
        request_id = self._next_id
        sent = False
        while True:
            with first_reply(self.transport):  # a hang-up or a foreign reply: another server
                if not sent:
                    self.transport.send(_request(request_id, op, fields))
                    sent = True
                reply = decode_reply(self.transport.receive_frame(timeout=timeout))
            if reply.event is None and reply.id == request_id:
                return reply

    def submit(
        self,
        command: dict[str, Any] | str,
        *,
        producer: str | None = None,
        wait: bool = False,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> SubmitResult:
        """Queue a command; see :meth:`AsyncAgentsHostClient.submit`."""
        reply = self._call("submit", timeout, command=command, producer=producer, wait=wait or None)
        return _result(reply, SubmitResult)

    def receipt(self, command_id: str, *, producer: str | None = None) -> ReceiptResult:
        """Read one published receipt."""
        return _result(
            self._call("receipt", DEFAULT_TIMEOUT, commandId=command_id, producer=producer),
            ReceiptResult,
        )

    def receipts(self, *, limit: int = 50, producer: str | None = None) -> ReceiptsResult:
        """List receipts, most recently published first."""
        return _result(
            self._call("receipts", DEFAULT_TIMEOUT, limit=limit, producer=producer), ReceiptsResult
        )

    def health(self) -> HealthResult:
        """Read the published health document."""
        return _result(self._call("health", DEFAULT_TIMEOUT), HealthResult)

    def sessions(self, bucket: Literal["recent", "all"] = "recent") -> SessionsResult:
        """Read a session index."""
        return _result(self._call("sessions", DEFAULT_TIMEOUT, bucket=bucket), SessionsResult)

    def session(self, key: str) -> SessionResult:
        """Read one session row and its manifest."""
        return _result(self._call("session", DEFAULT_TIMEOUT, key=key), SessionResult)

    def collect(self) -> CollectResult:
        """Request a complete collection."""
        return _result(self._call("collect", DEFAULT_TIMEOUT), CollectResult)

    def close(self) -> None:
        """Close the connection."""
        self.transport.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
