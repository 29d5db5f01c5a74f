"""The agents-host API client over anyio.

The source of the blocking client (``tools/unasync.py`` writes ``_blocking.py``).
"""

from __future__ import annotations

import os
from collections import deque
from typing import Any, Literal

from typing_extensions import Self

from shedproto import ErrorCode, LocalProtocolError
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
from shedproto.clients._transport import AsyncClosing, AsyncLineTransport, first_reply

from ._common import DEFAULT_TIMEOUT, request_line, result_of

__all__ = ["AsyncAgentsHostClient"]


class AsyncAgentsHostClient(AsyncClosing):
    """A client of the host's socket API; use ``async with await connect(path)``.

    One request at a time; events that arrive meanwhile (after
    :meth:`subscribe`) are kept for :meth:`next_event`.
    """

    def __init__(self, transport: AsyncLineTransport) -> None:
        self.transport = transport
        self._next_id = 0
        self._events: deque[ApiEvent] = deque()
        self._subscribed = False

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
        """Send one request and return its reply, all within ``timeout`` seconds."""
        self._next_id += 1
        request_id = self._next_id
        transport = self.transport
        transport.set_timeout(timeout)
        sent = False
        while True:
            with first_reply(transport):  # a hang-up or a foreign reply: another server
                if not sent:
                    await transport.send(request_line(request_id, op, fields))
                    sent = True
                reply = decode_reply(await transport.receive_frame())
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
        return result_of(reply, SubmitResult)

    async def receipt(self, command_id: str, *, producer: str | None = None) -> ReceiptResult:
        """Read one published receipt (``receipt`` is ``None`` when there is none)."""
        reply = await self._call(
            "receipt", DEFAULT_TIMEOUT, commandId=command_id, producer=producer
        )
        return result_of(reply, ReceiptResult)

    async def receipts(self, *, limit: int = 50, producer: str | None = None) -> ReceiptsResult:
        """List receipts, most recently published first."""
        reply = await self._call("receipts", DEFAULT_TIMEOUT, limit=limit, producer=producer)
        return result_of(reply, ReceiptsResult)

    async def health(self) -> HealthResult:
        """Read the published health document."""
        return result_of(await self._call("health", DEFAULT_TIMEOUT), HealthResult)

    async def sessions(self, bucket: Literal["recent", "all"] = "recent") -> SessionsResult:
        """Read a session index."""
        reply = await self._call("sessions", DEFAULT_TIMEOUT, bucket=bucket)
        return result_of(reply, SessionsResult)

    async def session(self, key: str) -> SessionResult:
        """Read one session row and its manifest."""
        return result_of(await self._call("session", DEFAULT_TIMEOUT, key=key), SessionResult)

    async def collect(self) -> CollectResult:
        """Request a complete collection (as SIGHUP)."""
        return result_of(await self._call("collect", DEFAULT_TIMEOUT), CollectResult)

    async def subscribe(
        self, topics: tuple[Topic, ...] = ("receipts", "health", "sessions")
    ) -> SubscribeResult:
        """Follow changes; read them with :meth:`next_event`."""
        reply = await self._call("subscribe", DEFAULT_TIMEOUT, topics=list(topics))
        result = result_of(reply, SubscribeResult)
        self._subscribed = True
        return result

    async def next_event(self, *, timeout: float | None = None) -> ApiEvent:
        """Return the next event (after :meth:`subscribe`), waiting at most ``timeout`` seconds.

        Raises:
            TimeoutError: no event in time. RemoteProtocolError: the host closed.
            LocalProtocolError: ``UNEXPECTED_EVENT``: :meth:`subscribe` was not
                called (no event would ever come: the wait would never end).

        """
        if not self._subscribed and not self._events:
            raise LocalProtocolError(
                ErrorCode.UNEXPECTED_EVENT, "no event comes without subscribe(): call it first"
            )
        self.transport.set_timeout(timeout)
        while not self._events:
            reply = decode_reply(await self.transport.receive_frame())
            if reply.event is not None:
                self._events.append(ApiEvent(event=reply.event, data=reply.data))
        return self._events.popleft()

    async def aclose(self) -> None:
        """Close the connection."""
        await self.transport.aclose()
