"""An async approval-channel consumer: a stand-in for shed-desktop, or a real client."""

from __future__ import annotations

import os
import socket
import time
from collections import deque
from collections.abc import AsyncIterator
from pathlib import Path
from types import TracebackType

import anyio
from anyio.abc import SocketAttribute
from typing_extensions import Self

from shedproto import ErrorCode, RemoteProtocolError, __version__
from shedproto.clients import AsyncLineTransport
from shedproto.clients._transport import first_reply
from shedproto.host_agent import (
    ApprovalRequest,
    ApprovalResponse,
    ClientInfo,
    ConnectionClosed,
    ConsumerConnection,
    ConsumerFrame,
    CredentialResponse,
    Event,
    Hello,
    HelloAck,
    IdSource,
    LineSkipped,
    Ping,
    TokenResponse,
    approval_socket_path,
    format_timestamp,
)

from ._status import default_socket_dir

__all__ = ["AsyncApprovalConsumer", "ConsumerItem", "SupersededError"]

ConsumerItem = ApprovalRequest | Event | TokenResponse | CredentialResponse
"""What iterating an :class:`AsyncApprovalConsumer` yields."""


class SupersededError(Exception):
    """Another consumer said hello: the agent sent ``ack`` (``reason`` ``superseded``) and closes.

    Every request this consumer still held has already been denied by the agent.
    """

    def __init__(self, ack: HelloAck) -> None:
        super().__init__("superseded: another consumer connected to the approval channel")
        self.ack = ack


_new_id = IdSource(os.urandom)


def _ts() -> str:
    return format_timestamp(time.time())


class AsyncApprovalConsumer:
    """One connection to ``host-agent.sock`` acting as the approval consumer.

    Use :meth:`connect` (it completes the handshake), then iterate to receive
    approval requests, events and credential replies; pings are answered
    automatically while iterating. Answer requests with :meth:`approve` /
    :meth:`deny`. Iteration ends at EOF and raises :class:`SupersededError`
    when another consumer takes over. One task iterates; any task may answer.
    """

    def __init__(self, transport: AsyncLineTransport, conn: ConsumerConnection) -> None:
        self.transport = transport
        self.conn = conn
        self._send_lock = anyio.Lock()
        self._slow_senders = 0
        """Tasks writing (or waiting to write) through the stream; direct writes wait for none."""
        try:
            self._raw: socket.socket | None = transport.stream.extra(SocketAttribute.raw_socket)
        except anyio.TypedAttributeLookupError:  # not a socket (a test double)
            self._raw = None
        self._pending: deque[ConsumerItem] = deque()
        self.ack: HelloAck | None = None
        """The accepted ``hello_ack``."""
        self.superseded: HelloAck | None = None
        """The superseded notice, once received."""

    @classmethod
    async def connect(
        cls,
        directory: str | os.PathLike[str] | None = None,
        *,
        client_name: str = "shedproto",
        client_version: str = __version__,
        pid: int | None = None,
        replay_events: int = 0,
        capabilities: tuple[str, ...] = (),
        timeout: float = 5.0,
    ) -> Self:
        """Connect, send ``hello`` and wait (``timeout`` s) for the accepted ack.

        Raises:
            ConnectError: nothing listens at ``<directory>/host-agent.sock``.
            TimeoutError: no ack in time.
            UnreachableSocketError: ``other-protocol`` when the first line is no
                host-agent frame or the peer closed without a ``hello_ack``.

        """
        base = Path(directory) if directory is not None else default_socket_dir()
        transport = await AsyncLineTransport.connect(
            approval_socket_path(os.fspath(base)), timeout=timeout
        )
        self = cls(transport, ConsumerConnection())
        try:
            hello = Hello(
                id=_new_id(),
                ts=_ts(),
                client=ClientInfo(
                    name=client_name,
                    version=client_version,
                    pid=os.getpid() if pid is None else pid,
                ),
                capabilities=capabilities,
                replay_events=replay_events,
            )
            await self._send(hello)
            with anyio.fail_after(timeout), first_reply(transport):
                while self.ack is None:
                    if not await self._pump():
                        if self.superseded is not None:  # a frame of ours: its own error
                            raise SupersededError(self.superseded)
                        raise RemoteProtocolError(
                            ErrorCode.CONNECTION_CLOSED, "the agent closed without a hello_ack"
                        )
        except BaseException:
            await transport.aclose()
            raise
        return self

    async def _send(self, frame: ConsumerFrame) -> None:
        """Encode and write ``frame``; straight to the socket when it takes it all at once.

        anyio's stream ``send`` yields to the event loop on every call; a
        line that fits the socket buffer needs no wait, so it is written
        directly (no lock either: nothing can interleave with a synchronous
        write). A remainder goes through the stream under the lock, and
        while any task is on that path, later frames queue behind it.
        """
        await self._write(self.conn.send(frame))

    async def _write(self, data: bytes) -> None:
        """Write encoded frames, as :meth:`_send` does."""
        raw = self._raw
        if raw is not None and not self._slow_senders:
            try:
                sent = raw.send(data)
            except BlockingIOError:
                sent = 0
            except OSError as exc:
                raise anyio.BrokenResourceError(f"the agent went away: {exc}") from exc
            if sent == len(data):
                return
            data = data[sent:]
        self._slow_senders += 1
        try:
            async with self._send_lock:
                await self.transport.send(data)
        finally:
            self._slow_senders -= 1

    async def _pump(self) -> bool:
        """Read once and queue what arrived; answer pings. Return False at EOF."""
        try:
            data = await self.transport.stream.receive(65536)
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
            data = b""
        open_ = True
        for event in self.conn.receive_data(data, wall=time.time()):
            if type(event) is Event or type(event) is ApprovalRequest:  # the common case first
                self._pending.append(event)
            elif isinstance(event, HelloAck):
                if event.accepted:
                    self.ack = event
                else:
                    self.superseded = event
            elif isinstance(event, ConnectionClosed):
                open_ = False
            elif isinstance(event, LineSkipped) and self.ack is None and self.superseded is None:
                raise event.error  # no hello_ack yet: the peer may speak another protocol
            elif not isinstance(event, (LineSkipped, Ping)):  # pings: the core answers
                self._pending.append(event)
        pongs = self.conn.data_to_send()  # the core answers pings by itself
        if pongs:
            await self._write(pongs)
        return open_ and bool(data)

    async def receive(self) -> ConsumerItem | None:
        """Return the next request/event/reply, or ``None`` at EOF.

        Raises:
            SupersededError: another consumer took over (after the items
                that arrived before the notice were returned).

        """
        while True:
            if self._pending:
                return self._pending.popleft()
            if self.superseded is not None:
                raise SupersededError(self.superseded)
            if self.conn.closed or not await self._pump():
                if self._pending:
                    continue
                if self.superseded is not None:
                    raise SupersededError(self.superseded)
                return None

    def __aiter__(self) -> AsyncIterator[ConsumerItem]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[ConsumerItem]:
        while (item := await self.receive()) is not None:
            yield item

    async def respond(
        self,
        request: ApprovalRequest | str,
        decision: str,
        *,
        decided_by: str = "",
        scope: str = "",
        ttl: str = "",
    ) -> None:
        """Answer a request; exactly ``"approve"`` approves, anything else denies.

        Raises:
            LocalProtocolError: the request is unknown or already answered,
                or this consumer was superseded.
            anyio.BrokenResourceError: the agent went away.

        """
        request_id = request if isinstance(request, str) else request.id
        await self._send(
            ApprovalResponse(
                id=_new_id(),
                ts=_ts(),
                request_id=request_id,
                decision=decision,
                decided_by=decided_by,
                scope=scope,
                ttl=ttl,
            )
        )

    async def approve(
        self,
        request: ApprovalRequest | str,
        *,
        decided_by: str = "",
        scope: str = "",
        ttl: str = "",
    ) -> None:
        """Approve ``request`` (see :meth:`respond`)."""
        await self.respond(request, "approve", decided_by=decided_by, scope=scope, ttl=ttl)

    async def deny(self, request: ApprovalRequest | str, *, decided_by: str = "") -> None:
        """Deny ``request`` (see :meth:`respond`)."""
        await self.respond(request, "deny", decided_by=decided_by)

    async def send(self, frame: ConsumerFrame) -> None:
        """Send any consumer frame (``token.get``, ``credential.get``); replies come by iteration.

        Raises:
            LocalProtocolError: the core refuses the frame in this state.

        """
        await self._send(frame)

    async def aclose(self) -> None:
        """Close the connection (the agent fails this consumer's pending approvals closed)."""
        self.conn.close()
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
