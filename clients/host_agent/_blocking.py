"""A blocking approval-channel consumer: the twin of :class:`AsyncApprovalConsumer`.

A plain socket loop over :class:`~shedproto.clients.BlockingLineTransport`'s
socket, driven by the same :class:`~shedproto.host_agent.ConsumerConnection`:
no event loop, no helper thread. Pings are answered whenever the consumer
reads, which is enough: the agent pings for liveness and never drops a
consumer for a late pong.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from typing_extensions import Self

from shedproto import ErrorCode, RemoteProtocolError, __version__
from shedproto.clients import BlockingLineTransport
from shedproto.clients._transport import first_reply
from shedproto.host_agent import (
    ApprovalRequest,
    ApprovalResponse,
    ClientInfo,
    ConnectionClosed,
    ConsumerConnection,
    ConsumerFrame,
    Event,
    Hello,
    HelloAck,
    LineSkipped,
    Ping,
    approval_socket_path,
)

from ._consumer import ConsumerItem, SupersededError, _new_id, _ts
from ._status import default_socket_dir

__all__ = ["BlockingApprovalConsumer"]

RECEIVE_CHUNK = 65536


class BlockingApprovalConsumer:
    """One blocking connection to ``host-agent.sock`` acting as the approval consumer.

    Use :meth:`connect` (it completes the handshake), then iterate (or call
    :meth:`receive`) to get approval requests, events and credential
    replies; pings are answered while reading. Answer with :meth:`approve` /
    :meth:`deny`. Iteration ends at EOF and raises :class:`SupersededError`
    when another consumer takes over. One thread at a time.
    """

    def __init__(self, transport: BlockingLineTransport, conn: ConsumerConnection) -> None:
        self.transport = transport
        self.conn = conn
        self._pending: deque[ConsumerItem] = deque()
        self.ack: HelloAck | None = None
        """The accepted ``hello_ack``."""
        self.superseded: HelloAck | None = None
        """The superseded notice, once received."""

    @classmethod
    def connect(
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
        transport = BlockingLineTransport.connect(
            approval_socket_path(os.fspath(base)), timeout=timeout
        )
        self = cls(transport, ConsumerConnection())
        try:
            self._send(
                Hello(
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
            )
            deadline = time.monotonic() + timeout
            with first_reply(transport):
                while self.ack is None:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise TimeoutError("no hello_ack from the agent in time")
                    if not self._pump(remaining):
                        if self.superseded is not None:  # a frame of ours: its own error
                            raise SupersededError(self.superseded)
                        raise RemoteProtocolError(
                            ErrorCode.CONNECTION_CLOSED, "the agent closed without a hello_ack"
                        )
        except BaseException:
            transport.close()
            raise
        return self

    def _send(self, frame: ConsumerFrame) -> None:
        self.transport.send(self.conn.send(frame))

    def _pump(self, timeout: float | None) -> bool:
        """Read once (within ``timeout``) and queue what arrived; answer pings.

        Returns False at EOF.

        Raises:
            TimeoutError: nothing arrived in time.

        """
        sock = self.transport.sock
        sock.settimeout(timeout)
        try:
            data = sock.recv(RECEIVE_CHUNK)
        except (TimeoutError, BlockingIOError):  # a zero timeout makes the socket non-blocking
            raise TimeoutError("nothing from the agent in time") from None
        except ConnectionResetError:
            data = b""
        open_ = True
        for event in self.conn.receive_data(data, wall=time.time()):
            if type(event) is Event or type(event) is ApprovalRequest:
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
            self.transport.send(pongs)
        return open_ and bool(data)

    def receive(self, *, timeout: float | None = None) -> ConsumerItem | None:
        """Return the next request/event/reply, or ``None`` at EOF.

        ``timeout`` bounds the wait (``None``: wait as long as it takes).

        Raises:
            TimeoutError: nothing arrived within ``timeout``; nothing is lost.
            SupersededError: another consumer took over (after the items
                that arrived before the notice were returned).

        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self._pending:
                return self._pending.popleft()
            if self.superseded is not None:
                raise SupersededError(self.superseded)
            if self.conn.closed:
                return None
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not self._pump(remaining):
                if self._pending:
                    continue
                if self.superseded is not None:
                    raise SupersededError(self.superseded)
                return None

    def __iter__(self) -> Iterator[ConsumerItem]:
        while (item := self.receive()) is not None:
            yield item

    def respond(
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
            OSError: the agent went away (``BrokenPipeError``).

        """
        self._send(
            ApprovalResponse(
                id=_new_id(),
                ts=_ts(),
                request_id=request if isinstance(request, str) else request.id,
                decision=decision,
                decided_by=decided_by,
                scope=scope,
                ttl=ttl,
            )
        )

    def approve(
        self,
        request: ApprovalRequest | str,
        *,
        decided_by: str = "",
        scope: str = "",
        ttl: str = "",
    ) -> None:
        """Approve ``request`` (see :meth:`respond`)."""
        self.respond(request, "approve", decided_by=decided_by, scope=scope, ttl=ttl)

    def deny(self, request: ApprovalRequest | str, *, decided_by: str = "") -> None:
        """Deny ``request`` (see :meth:`respond`)."""
        self.respond(request, "deny", decided_by=decided_by)

    def send(self, frame: ConsumerFrame) -> None:
        """Send any consumer frame (``token.get``, ``credential.get``); replies come by reading.

        Raises:
            LocalProtocolError: the core refuses the frame in this state.
            OSError: the agent went away.

        """
        self._send(frame)

    def close(self) -> None:
        """Close the connection (the agent fails this consumer's pending approvals closed)."""
        self.conn.close()
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
