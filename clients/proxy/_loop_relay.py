"""The proxy's relay on an asyncio loop (uvloop too): accept, connect and pump in loop callbacks.

A connection costs no task, future, stream object or checkpoint: the
listening socket's reader callback accepts one client, connects the
upstream at once (a non-blocking Unix connect completes or fails at once;
only a full backlog makes it retry), and registers one reader callback per
direction. A readable source is read once and what it held is sent to the
sink at once; what the sink does not take is written by a writer callback
when there is room, and that direction reads no more meanwhile (the slower
side sets the pace, as with a direct connection). An end of stream is
relayed as a half-close; when both directions have ended (or a sink failed:
its peer is gone) both sockets are closed in the same callback.

System calls per connection are the relay's own: the accepted socket stays
in blocking mode and every read and write passes ``MSG_DONTWAIT`` (no
``ioctl`` to switch it), the upstream socket is made non-blocking when it is
created, the listener is read once per readiness report (no failing accept),
the last half-close is left to the close, and the end of stream that comes
with the server's first chunk (an answer, then a close) is found by one peek
and relayed in the same pass, before that chunk is observed.

Shutting down stops accepting at once (the listening socket is closed), gives
open connections ``grace`` seconds, then shuts their sockets down (both
directions read an end of stream and finish as usual), waits
:data:`STRAGGLER_DELAY` and closes whatever is left; cancellation closes
every connection at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import socket
from typing import TYPE_CHECKING

from shedproto.clients._transport import RECEIVE_CHUNK
from shedproto.observe import Direction

if TYPE_CHECKING:
    from ._relay import Proxy

__all__ = ["ACCEPT_RETRY_DELAY", "CONNECT_RETRY_DELAY", "STRAGGLER_DELAY", "LoopServer"]

ACCEPT_RETRY_DELAY = 0.1
"""Seconds to back off when accept fails for lack of descriptors or memory."""

CONNECT_RETRY_DELAY = 0.001
"""Seconds between connect attempts while the upstream's backlog is full."""

STRAGGLER_DELAY = 0.5
"""Seconds connections get after their sockets were shut down, before they are closed."""

_TRANSIENT_ACCEPT_ERRORS = frozenset(
    {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM, errno.ECONNABORTED}
)
_NOWAIT = socket.MSG_DONTWAIT
_PEEK = socket.MSG_PEEK | socket.MSG_DONTWAIT


class LoopServer:
    """Relay every client of a listening socket to ``proxy.upstream`` by loop callbacks.

    ``serve`` returns after :meth:`stop` once the connections have ended (see
    the module docstring); a non-transient accept error ends it by raising
    that ``OSError``. The listening socket is closed by then; unlinking its
    file is the caller's.
    """

    def __init__(
        self, proxy: Proxy, loop: asyncio.AbstractEventLoop, listener: socket.socket, grace: float
    ) -> None:
        self.proxy = proxy
        self.loop = loop
        self.listener = listener
        self.grace = grace
        self.upstream = os.fspath(proxy.upstream)
        self.pipes: set[LoopPipe] = set()
        self._fd = listener.fileno()
        self._accepting = False
        self._retry: asyncio.TimerHandle | None = None
        self._stopping: asyncio.Future[None] = loop.create_future()
        self._idle: asyncio.Future[None] | None = None

    def stop(self) -> None:
        """Stop accepting (the listener closes) and let ``serve`` wind down; idempotent."""
        self._close_listener()
        if not self._stopping.done():
            self._stopping.set_result(None)

    async def serve(self) -> None:
        """Accept and relay until :meth:`stop`, then end the connections (module docstring).

        Raises:
            OSError: accepting failed with an error that is not transient.

        """
        try:
            self.listener.setblocking(False)
            self._accepting = True
            self.loop.add_reader(self._fd, self._accept)
            await self._stopping
            self._close_listener()
            await self._until_idle(self.grace)
            for pipe in list(self.pipes):
                pipe.hang_up()
            await self._until_idle(STRAGGLER_DELAY)
        finally:
            self._close_listener()
            for pipe in list(self.pipes):
                pipe.finish()

    async def _until_idle(self, timeout: float) -> None:
        if not self.pipes:
            return
        idle = self._idle = self.loop.create_future()
        timer = self.loop.call_later(timeout, _resolve, idle)
        try:
            await idle
        finally:
            timer.cancel()
            self._idle = None

    def _close_listener(self) -> None:
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        if self._accepting:
            self._accepting = False
            self.loop.remove_reader(self._fd)
        if self.listener.fileno() >= 0:
            self.listener.close()

    def ended(self, pipe: LoopPipe) -> None:
        """Forget a finished connection (a waiting shutdown may end)."""
        self.pipes.discard(pipe)
        if not self.pipes and self._idle is not None and not self._idle.done():
            self._idle.set_result(None)

    def _accept(self) -> None:
        """Accept one client (the loop reports again while more wait) and start its relay."""
        try:
            client, _ = self.listener.accept()
        except BlockingIOError:
            return
        except OSError as exc:
            self._accept_failed(exc)
            return
        proxy = self.proxy
        proxy.connections += 1
        conn = proxy.connections
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_NONBLOCK)
        pipe = LoopPipe(self, conn, client, upstream)
        self.pipes.add(pipe)
        pipe.connect()

    def _accept_failed(self, exc: OSError) -> None:
        if exc.errno not in _TRANSIENT_ACCEPT_ERRORS:
            if not self._stopping.done():
                self._stopping.set_exception(exc)
            return
        self.proxy.on_error(
            f"accept on {self.proxy.listen} failed ({exc.strerror or exc}); "
            f"retrying in {ACCEPT_RETRY_DELAY} s"
        )
        self.loop.remove_reader(self._fd)
        self._accepting = False
        self._retry = self.loop.call_later(ACCEPT_RETRY_DELAY, self._accept_again)

    def _accept_again(self) -> None:
        self._retry = None
        if not self._stopping.done():
            self._accepting = True
            self.loop.add_reader(self._fd, self._accept)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class LoopPipe:
    """Both directions of one proxied connection as reader (and writer) callbacks.

    :meth:`finish` closes both sockets, unregisters everything and queues the
    connection's ``close``; it runs when both directions have ended, when a
    sink fails, or when the server closes what is left.
    """

    __slots__ = (
        "conn",
        "ended",
        "finished",
        "first",
        "loop",
        "pending",
        "proxy",
        "retry",
        "server",
        "sockets",
        "watched",
    )

    def __init__(
        self, server: LoopServer, conn: int, client: socket.socket, upstream: socket.socket
    ) -> None:
        self.server = server
        self.proxy = server.proxy
        self.loop = server.loop
        self.conn = conn
        self.sockets: dict[Direction, tuple[socket.socket, socket.socket]] = {
            "c2s": (client, upstream),
            "s2c": (upstream, client),
        }
        self.pending: dict[Direction, bytes] = {}
        self.ended: set[Direction] = set()
        self.first: set[Direction] = {"s2c"}
        """Directions whose first chunk is followed by a peek for an end of stream.

        The server's only: a server that closes after its answer is the usual
        pattern (herdr, the status socket); a client waits for the answer first.
        """
        self.watched: set[tuple[str, int]] = set()
        self.finished = False
        self.retry: asyncio.TimerHandle | None = None

    # ------------------------------------------------------------ connecting

    def connect(self) -> None:
        """Connect the upstream; relay once connected (retried while its backlog is full)."""
        self.retry = None
        client, upstream = self.sockets["c2s"]
        try:
            upstream.connect(self.server.upstream)
        except BlockingIOError:  # the upstream's backlog is full: it accepts later
            self.retry = self.loop.call_later(CONNECT_RETRY_DELAY, self.connect)
            return
        except OSError as exc:
            self.proxy.on_error(
                f"connection {self.conn}: cannot reach upstream {self.proxy.upstream}: {exc}"
            )
            self.finished = True
            client.close()
            upstream.close()
            self.server.ended(self)
            return
        self.proxy._put(self.conn, "open", None)
        # a client usually spoke before it was accepted: its request goes on before the
        # readers are registered (a level-triggered loop reports what is already there)
        self._readable("c2s")
        if self.finished:
            return
        if "c2s" not in self.ended and "c2s" not in self.pending:
            self._read("c2s")
        self._read("s2c")

    # ------------------------------------------------------------ relaying

    def _read(self, direction: Direction) -> None:
        fd = self.sockets[direction][0].fileno()
        self.loop.add_reader(fd, self._readable, direction)
        self.watched.add(("r", fd))

    def _unread(self, direction: Direction) -> None:
        fd = self.sockets[direction][0].fileno()
        self.loop.remove_reader(fd)
        self.watched.discard(("r", fd))

    def _readable(self, direction: Direction) -> None:
        if self.finished:
            return
        source, sink = self.sockets[direction]
        try:
            data = source.recv(RECEIVE_CHUNK, _NOWAIT)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._eof(direction)
            return
        try:
            sent = sink.send(data, _NOWAIT)
        except BlockingIOError:
            sent = 0
        except OSError:
            self.finish()  # the other end is gone: nothing more can be delivered
            return
        if sent < len(data):
            self.proxy._put(self.conn, "data", direction, data)
            self.pending[direction] = data[sent:]
            self._unread(direction)
            fd = sink.fileno()
            self.loop.add_writer(fd, self._writable, direction)
            self.watched.add(("w", fd))
        elif direction in self.first:
            self.first.discard(direction)
            if len(data) < RECEIVE_CHUNK and self._ended_now(direction):
                # the answer waits for its observer until its end of stream is relayed
                self.proxy._put(self.conn, "data", direction, data, hold=True)
                self._eof(direction)
            else:
                self.proxy._put(self.conn, "data", direction, data)
        else:
            self.proxy._put(self.conn, "data", direction, data)

    def _ended_now(self, direction: Direction) -> bool:
        """Whether the end of stream came with the first answer (an answer, then a close).

        Relayed in the same pass, it saves the loop a pass, and the peer the wait
        for it; a peek, so data is never read.
        """
        try:
            more = self.sockets[direction][0].recv(1, _PEEK)
        except OSError:  # BlockingIOError: nothing yet; the reader sees the rest
            return False
        return not more

    def _eof(self, direction: Direction) -> None:
        """Relay an end of stream (a half-close, or the close once both ended), then queue it."""
        self._unread(direction)
        self.ended.add(direction)
        if direction in self.pending:  # the half-close follows the rest
            self.proxy._put(self.conn, "eof", direction)
        elif len(self.ended) == 2 and not self.pending:
            self.proxy._put(self.conn, "eof", direction)
            self.finish()  # the close ends the stream: no shutdown needed
        else:
            with contextlib.suppress(OSError):
                self.sockets[direction][1].shutdown(socket.SHUT_WR)
            self.proxy._put(self.conn, "eof", direction)

    def _writable(self, direction: Direction) -> None:
        sink = self.sockets[direction][1]
        rest = self.pending[direction]
        try:
            sent = sink.send(rest, _NOWAIT)
        except BlockingIOError:
            return
        except OSError:
            self.finish()
            return
        if sent < len(rest):
            self.pending[direction] = rest[sent:]
            return
        del self.pending[direction]
        fd = sink.fileno()
        self.loop.remove_writer(fd)
        self.watched.discard(("w", fd))
        if direction in self.ended:
            self._half_close(direction)
        else:
            self._read(direction)

    def _half_close(self, direction: Direction) -> None:
        if direction in self.pending:
            return  # after the rest is written
        if len(self.ended) == 2 and not self.pending:
            self.finish()  # the close ends the stream: no shutdown needed
            return
        with contextlib.suppress(OSError):
            self.sockets[direction][1].shutdown(socket.SHUT_WR)

    # ------------------------------------------------------------ ending

    def hang_up(self) -> None:
        """Shut both sockets down: each direction reads an end of stream and ends as usual."""
        if self.retry is not None:
            self.finish()
            return
        for source, _ in self.sockets.values():
            with contextlib.suppress(OSError):
                source.shutdown(socket.SHUT_RDWR)

    def finish(self) -> None:
        """Unregister and close both sockets, queue the ``close``; idempotent."""
        if self.finished:
            return
        self.finished = True
        if self.retry is not None:  # never connected: nothing was opened
            self.retry.cancel()
            self.retry = None
            for sock, _ in self.sockets.values():
                sock.close()
            self.server.ended(self)
            return
        loop = self.loop
        for what, fd in self.watched:
            if what == "r":
                loop.remove_reader(fd)
            else:
                loop.remove_writer(fd)
        self.watched.clear()
        for sock, _ in self.sockets.values():
            sock.close()
        self.proxy._put(self.conn, "close", None)
        self.server.ended(self)
