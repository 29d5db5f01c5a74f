"""The host-agent clients over anyio: ``read_status_async`` and the approval consumer.

The source of the blocking clients (``tools/unasync.py`` writes ``_blocking.py``).
"""

from __future__ import annotations

import os
import time
from collections import deque
from pathlib import Path

from typing_extensions import Self

from shedproto import ErrorCode, RemoteProtocolError, __version__
from shedproto.clients import AsyncLineTransport, ConnectError
from shedproto.clients._transport import SEND_FAILURES, AsyncClosing, first_reply
from shedproto.host_agent import (
    STATUS_CONNECT_TIMEOUT,
    STATUS_READ_TIMEOUT,
    ApprovalRequest,
    ClientInfo,
    ConnectionClosed,
    ConsumerConnection,
    ConsumerFrame,
    Event,
    Hello,
    HelloAck,
    LineSkipped,
    LiveStatus,
    Ping,
    StatusSchemaError,
    approval_socket_path,
    decode_live_status,
)

from ._common import (
    MAX_STATUS_BYTES,
    PROBE_AFTER,
    STATUS_PROBE,
    ConsumerItem,
    StatusTimeoutError,
    SupersededError,
    default_socket_dir,
    new_id,
    not_a_status_report,
    not_running,
    status_path,
    timestamp,
    too_large,
)

__all__ = ["AsyncApprovalConsumer", "read_status_async"]


async def read_status_async(
    directory: str | os.PathLike[str] | None = None,
    *,
    connect_timeout: float = STATUS_CONNECT_TIMEOUT,
    read_timeout: float = STATUS_READ_TIMEOUT,
) -> LiveStatus:
    """Read one LiveStatus from ``<directory>/host-agent-status.sock`` (default: the real location).

    Raises:
        AgentNotRunningError: the socket is missing or refuses (or the connect timed out).
        StatusTimeoutError: the report did not end within ``read_timeout`` seconds.
        UnreachableSocketError: ``other-protocol`` when the bytes are not a
            LiveStatus (or there are none): another server listens there. A
            server that waits for a request is recognised after
            ``PROBE_AFTER`` seconds of silence: it answers
            ``STATUS_PROBE``, which the real agent ignores.
        RemoteProtocolError: the report exceeds 16 MiB.
        StatusSchemaError: the agent speaks another status schema.

    """
    path = status_path(directory)
    try:
        transport = await AsyncLineTransport.connect(path, timeout=connect_timeout)
    except ConnectError as exc:
        raise not_running(path, exc) from exc
    chunks: list[bytes] = []
    size = 0
    try:  # not ``async with``: two coroutines fewer per read
        # Silent for PROBE_AFTER seconds: probe once (a request-driven server of
        # another protocol answers it); the whole read keeps its one deadline.
        transport.set_timeout(min(PROBE_AFTER, read_timeout))
        probe_pending = read_timeout > PROBE_AFTER
        deadline = transport.deadline + max(0.0, read_timeout - PROBE_AFTER)
        try:
            while True:
                try:
                    chunk = await transport.receive_some()
                except TimeoutError:
                    if not probe_pending:
                        raise
                    probe_pending = False
                    transport.deadline = deadline
                    try:  # noqa: SIM105 (no context manager per read)
                        await transport.send(STATUS_PROBE)
                    except SEND_FAILURES:
                        pass  # the agent wrote its report and closed meanwhile: read it
                    continue
                if not chunk:
                    break
                if probe_pending:
                    probe_pending = False
                    transport.deadline = deadline
                size += len(chunk)
                if size > MAX_STATUS_BYTES:
                    raise too_large()
                chunks.append(chunk)
                if chunk.endswith(b"\n"):
                    break  # the report is one line (another server may stay open)
        except TimeoutError:
            message = f"no complete status report within {read_timeout} s"
            raise StatusTimeoutError(message) from None
        data = b"".join(chunks)
        with first_reply(transport):
            try:
                return decode_live_status(data)
            except StatusSchemaError as exc:
                raise not_a_status_report(path, data, exc) from None
    finally:
        await transport.aclose()


class AsyncApprovalConsumer(AsyncClosing):
    """One connection to ``host-agent.sock`` acting as the approval consumer.

    Use :meth:`connect` (it completes the handshake), then iterate (or call
    :meth:`receive`) to get approval requests, events and credential
    replies; pings are answered while reading. Answer requests with
    :meth:`approve` / :meth:`deny`. Iteration ends at EOF and raises
    :class:`SupersededError` when another consumer takes over. One task (or
    thread) reads; any may answer.

    Per approval (issue 16) the core decodes the request with its one cached
    typed decoder and no state-table lookup, :meth:`respond` encodes through
    ``ConsumerConnection.respond`` (a pre-encoded template, no Struct), the
    ``ts`` text is kept for its second, iteration calls :meth:`receive`
    without a generator, and on asyncio the transport's reader callback reads
    for the waiting receive (no spurious wake-up per round trip).
    """

    def __init__(self, transport: AsyncLineTransport, conn: ConsumerConnection) -> None:
        self.transport = transport
        self.conn = conn
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
                id=new_id(),
                ts=timestamp(),
                client=ClientInfo(
                    name=client_name,
                    version=client_version,
                    pid=os.getpid() if pid is None else pid,
                ),
                capabilities=capabilities,
                replay_events=replay_events,
            )
            await self._send(hello)
            transport.set_timeout(timeout)
            with first_reply(transport):
                while self.ack is None:
                    if not await self._pump():
                        if self.superseded is not None:  # a frame of ours: its own error
                            raise SupersededError(self.superseded)
                        raise RemoteProtocolError(
                            ErrorCode.CONNECTION_CLOSED, "the agent closed without a hello_ack"
                        )
        except TimeoutError:
            await transport.aclose()
            raise TimeoutError("no hello_ack from the agent in time") from None
        except BaseException:
            await transport.aclose()
            raise
        return self

    async def _send(self, frame: ConsumerFrame) -> None:
        """Encode and write ``frame`` (the transport writes straight to the socket when it can)."""
        await self.transport.send(self.conn.send(frame))

    async def _pump(self) -> bool:
        """Read once (within the deadline) and queue what arrived; answer pings.

        Returns False at EOF.

        Raises:
            TimeoutError: nothing arrived before the deadline.

        """
        data = await self.transport.receive_some()
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
            await self.transport.send(pongs)
        return open_ and bool(data)

    async def receive(self, *, timeout: float | None = None) -> ConsumerItem | None:
        """Return the next request/event/reply, or ``None`` at EOF.

        ``timeout`` bounds the wait (``None``: wait as long as it takes).

        Raises:
            TimeoutError: nothing arrived within ``timeout``; nothing is lost.
            SupersededError: another consumer took over (after the items
                that arrived before the notice were returned).

        """
        self.transport.set_timeout(timeout)
        while True:
            if self._pending:
                return self._pending.popleft()
            if self.superseded is not None:
                raise SupersededError(self.superseded)
            if self.conn.closed:
                return None
            if not await self._pump():
                if self._pending:
                    continue
                if self.superseded is not None:
                    raise SupersededError(self.superseded)
                return None

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> ConsumerItem:
        """Return :meth:`receive`'s next item (no generator in between); stop at EOF."""
        item = await self.receive()
        if item is None:
            raise StopAsyncIteration
        return item

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
            anyio.BrokenResourceError: (async) the agent went away;
                ``BrokenPipeError`` in the blocking form.

        """
        line = self.conn.respond(
            request if isinstance(request, str) else request.id,
            decision,
            id=new_id(),
            ts=timestamp(),
            decided_by=decided_by,
            scope=scope,
            ttl=ttl,
        )
        await self.transport.send(line)

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
        """Send any consumer frame (``token.get``, ``credential.get``); replies come by reading.

        Raises:
            LocalProtocolError: the core refuses the frame in this state.

        """
        await self._send(frame)

    async def aclose(self) -> None:
        """Close the connection (the agent fails this consumer's pending approvals closed)."""
        self.conn.close()
        await self.transport.aclose()
