"""The validating proxy: a byte pump, with observing and recording off the forwarding path.

Each accepted client gets its own upstream connection. Bytes are forwarded
before anything looks at them: on asyncio (uvloop too) each direction is a
reader callback on the loop that reads what the socket holds and writes it
straight to the other socket, with no task, future or checkpoint per chunk
(what the socket does not take waits for room, and that direction reads no
more until it is written: the slow side sets the pace, as a plain relay
does). Elsewhere (trio) each direction is a task. End of stream is relayed
as a half-close.

A copy of each chunk goes to a bounded queue that the observers (one
:class:`~shedproto.observe.Observer` per connection) and the optional
:class:`Recorder` drain in batches: on asyncio once the loop has run the
callbacks that were ready (every chunk that arrived together is relayed
first, and the loop never wakes up only to observe), on trio in a task. The
relay never waits for them: when more than ``max_queued_bytes`` are
waiting, that connection's further bytes are relayed unobserved and
unrecorded, which is reported once (``on_error``) and counted in
:attr:`Proxy.dropped`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

import anyio
import anyio.abc

from shedproto.clients._transport import RECEIVE_CHUNK
from shedproto.observe import Diagnostic, Direction, Observer, ObserverFactory
from shedproto.servers._loop import running_asyncio_loop
from shedproto.servers._receive import SocketPump, raw_socket_of
from shedproto.servers._unix import UnixServer

from ._recorder import Recorder

__all__ = ["MAX_QUEUED_BYTES", "RECEIVE_CHUNK", "Proxy"]

MAX_QUEUED_BYTES = 64 << 20
"""Relayed bytes that may wait for the observers before a connection goes unobserved."""

_Item = tuple[float, int, str, Direction | None, bytes]
_GONE = (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError)


class Proxy:
    """A validating proxy from ``listen`` to ``upstream`` for one protocol.

    ``on_diagnostic`` is called (in an observing batch) for every deviation;
    ``on_error`` with a one-line message when the upstream cannot be reached
    for a client (that client is disconnected), an observer fails (that
    connection is relayed on, unobserved), the observers fall behind by more
    than ``max_queued_bytes`` (the rest of that connection is relayed
    unobserved and unrecorded) or recording fails. A relay never waits for
    an observer. With ``strict`` the first deviation stops the proxy as
    :meth:`shutdown` does (connections in flight get their grace second); it
    is then in :attr:`failed`. Run with ``await task_group.start(proxy.serve)``;
    stop with :meth:`shutdown`.
    """

    def __init__(
        self,
        listen: str | os.PathLike[str],
        upstream: str | os.PathLike[str],
        observers: ObserverFactory,
        *,
        on_diagnostic: Callable[[Diagnostic], None],
        on_error: Callable[[str], None] = lambda message: None,
        recorder: Recorder | None = None,
        strict: bool = False,
        clock: Callable[[], float] = time.monotonic,
        max_queued_bytes: int = MAX_QUEUED_BYTES,
    ) -> None:
        self.upstream = Path(upstream)
        self.observers = observers
        self.on_diagnostic = on_diagnostic
        self.on_error = on_error
        self.recorder = recorder
        self.strict = strict
        self.clock = clock
        self.max_queued_bytes = max_queued_bytes
        self.failed: Diagnostic | None = None
        """The deviation that stopped a strict proxy."""
        self.diagnostics = 0
        """How many deviations were reported so far."""
        self.connections = 0
        """How many client connections were accepted so far."""
        self.dropped = 0
        """How many connections went unobserved because the observers fell behind."""
        self.server = UnixServer(listen, self._handle, grace=1.0)
        self._start = clock()
        self._queue: deque[_Item] = deque()
        self._queued_bytes = 0
        self._unobserved: set[int] = set()
        self._observing: dict[int, Observer | None] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._scheduled = False
        self._timer: asyncio.Handle | None = None
        self._wake: anyio.Event | None = None
        self._closed = False

    async def serve(
        self, *, task_status: anyio.abc.TaskStatus[Path] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Bind ``listen`` (the bind ceremony), report readiness with its path, relay until stopped.

        When it returns, everything relayed has been observed and recorded.

        Raises:
            BindError: the listen path was refused (readiness is never signalled).

        """
        self._loop = running_asyncio_loop()
        _warm_up(self.observers)
        try:
            async with anyio.create_task_group() as tasks:
                if self._loop is None:
                    self._wake = anyio.Event()
                    tasks.start_soon(self._observe_task)
                path = await tasks.start(self._relay)
                task_status.started(path)
        finally:
            if self._timer is not None:
                self._timer.cancel()
            self._drain()
            if self.recorder is not None:
                self.recorder.close()

    async def _relay(self, *, task_status: anyio.abc.TaskStatus[Path]) -> None:
        try:
            await self.server.serve(task_status=task_status)
        finally:
            self._closed = True
            if self._wake is not None:
                self._wake.set()  # the observer task drains what is queued, then ends

    def shutdown(self) -> None:
        """Stop accepting; open connections get a second, then everything relayed is observed."""
        self.server.shutdown()

    # ------------------------------------------------------------ the queue

    def _put(self, conn: int, ev: str, direction: Direction | None, data: bytes = b"") -> None:
        """Queue a copy of what was relayed (never blocks; drops when the observers lag)."""
        if conn in self._unobserved:
            if ev == "close":
                self._unobserved.discard(conn)
            return
        if data:
            if self._queued_bytes + len(data) > self.max_queued_bytes:
                self._unobserved.add(conn)
                self.dropped += 1
                ev, data = "drop", b""
            else:
                self._queued_bytes += len(data)
        self._queue.append((self.clock() - self._start, conn, ev, direction, data))
        if not self._scheduled:
            self._scheduled = True
            loop = self._loop
            if loop is not None:
                self._timer = loop.call_soon(self._drain)
            elif self._wake is not None:
                self._wake.set()

    async def _observe_task(self) -> None:
        """Drain the queue whenever it is kicked (trio; asyncio drains from a loop timer)."""
        while True:
            assert self._wake is not None
            await self._wake.wait()
            self._wake = anyio.Event()
            self._drain()
            if self._closed:
                return

    def _drain(self) -> None:
        """Observe and record everything queued so far, in order (one batch)."""
        self._scheduled = False
        self._timer = None
        queue = self._queue
        while queue:
            item = queue.popleft()
            self._queued_bytes -= len(item[4])
            self._observe(item)

    def _observe(self, item: _Item) -> None:
        t, conn, ev, direction, data = item
        observers = self._observing
        if ev == "drop":
            self._dropped(t, conn)
            return
        if self.recorder is not None:
            self._record(self.recorder, item)
        if ev == "open":
            observers[conn] = self.observers(conn)
        elif ev == "close":
            observers.pop(conn, None)
        elif direction is not None:
            self._feed(conn, direction, data)

    def _dropped(self, t: float, conn: int) -> None:
        self._observing.pop(conn, None)
        if self.recorder is not None:
            self.recorder.forget(conn)
        self.on_error(
            f"connection {conn}: the observers fell behind ({self.max_queued_bytes} bytes "
            "waiting); the rest of this connection is relayed unobserved and unrecorded"
        )

    def _record(self, recorder: Recorder, item: _Item) -> None:
        t, conn, ev, direction, data = item
        try:
            if ev == "data" and direction is not None:
                recorder.data(t, conn, direction, data)
            else:
                recorder.event(t, conn, ev, direction)
        except OSError as exc:  # a full disk must not stop the relay
            self.recorder = None
            self.on_error(f"recording to {recorder.path} stopped: {exc.strerror or exc}")
            with contextlib.suppress(OSError):
                recorder.close()

    def _feed(self, conn: int, direction: Direction, data: bytes) -> None:
        observer = self._observing.get(conn)
        if observer is None:
            return
        try:
            found = observer.feed(direction, data)
        except Exception as exc:  # an observer bug must never stop the relay
            self._observing[conn] = None
            self.on_error(f"connection {conn}: observer failed ({exc!r}); no longer observed")
            return
        self._report(found)

    def _report(self, diagnostics: list[Diagnostic]) -> None:
        for diagnostic in diagnostics:
            self.diagnostics += 1
            self.on_diagnostic(diagnostic)
            if self.strict and self.failed is None:
                self.failed = diagnostic
                self.shutdown()

    # ------------------------------------------------------------ the relay

    async def _handle(self, client: anyio.abc.SocketStream) -> None:
        self.connections += 1
        conn = self.connections
        loop = self._loop
        near = raw_socket_of(client) if loop is not None else None
        try:
            far = _connect_now(self.upstream) if near is not None else None
            upstream = None if far is not None else await anyio.connect_unix(self.upstream)
        except OSError as exc:
            self.on_error(f"connection {conn}: cannot reach upstream {self.upstream}: {exc}")
            return
        self._put(conn, "open", None)
        try:
            if far is not None and near is not None and loop is not None:
                with far:
                    await _LoopPipe(self, conn, loop, near, far).run()
            elif upstream is not None:
                async with upstream, anyio.create_task_group() as pumps:
                    both = pumps.cancel_scope
                    pumps.start_soon(self._pump, conn, "c2s", client, upstream, both)
                    pumps.start_soon(self._pump, conn, "s2c", upstream, client, both)
        finally:
            self._put(conn, "close", None)

    async def _pump(
        self,
        conn: int,
        direction: Direction,
        source: anyio.abc.SocketStream,
        sink: anyio.abc.SocketStream,
        both: anyio.CancelScope,
    ) -> None:
        """Relay one direction as a task (trio, a stream that is no socket, a connect that waited).

        Through :class:`SocketPump` s, whose waits are guarded (never anyio's stream
        ``send``/``receive``: see ``shedproto.servers._receive.send_all``).
        """
        reads, writes = SocketPump(source), SocketPump(sink)
        while True:
            data = await reads.receive(RECEIVE_CHUNK)
            if not data:  # the end, or the peer is gone
                break
            self._put(conn, "data", direction, data)  # queued only: parsed after it is sent
            try:
                await writes.send(data)
            except _GONE:
                both.cancel()  # the other end is gone: nothing more can be delivered
                return
        self._put(conn, "eof", direction)
        with contextlib.suppress(*_GONE):
            await sink.send_eof()


def _warm_up(observers: ObserverFactory) -> None:
    """Build the observers' decoders before the first client, not in its first batch.

    herdr's request decoder takes about 0.25 s to build; built lazily, the
    first connection's batch would hold the loop (and so every relay) that
    long. A throwaway observer is fed ``{}`` each way; what it reports (or
    raises) is ignored.
    """
    with contextlib.suppress(Exception):
        observer = observers(0)
        observer.feed("c2s", b"{}\n")
        observer.feed("s2c", b"{}\n")


def _connect_now(path: Path) -> socket.socket | None:
    """Connect a non-blocking Unix socket to ``path`` at once; ``None`` if it has to wait.

    A Unix-socket connect completes at once unless the listener's backlog is
    full (then anyio's connect waits for it). Raises ``OSError`` as ``connect``.
    """
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.setblocking(False)
    try:
        sock.connect(os.fspath(path))
    except BlockingIOError:
        sock.close()
        return None
    except BaseException:
        sock.close()
        raise
    return sock


class _LoopPipe:
    """Both directions of one connection as reader callbacks on an asyncio loop (uvloop too).

    A readable source is read once and what it held is sent to the sink at
    once; what the sink does not take is written when it has room, and the
    source is not read meanwhile. ``run`` returns when both directions have
    ended (or a sink failed: the other end is gone); cancellation
    unregisters everything.
    """

    __slots__ = ("conn", "done", "ended", "loop", "pending", "proxy", "sockets", "watched")

    def __init__(
        self,
        proxy: Proxy,
        conn: int,
        loop: asyncio.AbstractEventLoop,
        client: socket.socket,
        upstream: socket.socket,
    ) -> None:
        self.proxy = proxy
        self.conn = conn
        self.loop = loop
        self.sockets: dict[Direction, tuple[socket.socket, socket.socket]] = {
            "c2s": (client, upstream),
            "s2c": (upstream, client),
        }
        self.pending: dict[Direction, bytes] = {}
        self.ended: set[Direction] = set()
        self.watched: set[tuple[str, int]] = set()
        self.done: asyncio.Future[None] = loop.create_future()

    async def run(self) -> None:
        """Relay until both directions ended or one side is gone."""
        try:
            self._read("c2s")
            self._read("s2c")
            self._readable("c2s")  # a client that spoke before the upstream answered the connect
            await self.done
        finally:
            for what, fd in self.watched:
                if what == "r":
                    self.loop.remove_reader(fd)
                else:
                    self.loop.remove_writer(fd)
            self.watched.clear()

    def _read(self, direction: Direction) -> None:
        fd = self.sockets[direction][0].fileno()
        self.loop.add_reader(fd, self._readable, direction)
        self.watched.add(("r", fd))

    def _unread(self, direction: Direction) -> None:
        fd = self.sockets[direction][0].fileno()
        self.loop.remove_reader(fd)
        self.watched.discard(("r", fd))

    def _readable(self, direction: Direction) -> None:
        source, sink = self.sockets[direction]
        try:
            data = source.recv(RECEIVE_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._unread(direction)
            self.ended.add(direction)
            self.proxy._put(self.conn, "eof", direction)
            self._half_close(direction)
            return
        try:
            sent = sink.send(data)
        except BlockingIOError:
            sent = 0
        except OSError:
            self._finish()  # the other end is gone: nothing more can be delivered
            return
        self.proxy._put(self.conn, "data", direction, data)
        if sent < len(data):
            self.pending[direction] = data[sent:]
            self._unread(direction)
            fd = sink.fileno()
            self.loop.add_writer(fd, self._writable, direction)
            self.watched.add(("w", fd))
        elif len(data) < RECEIVE_CHUNK:
            self._ended_now(direction)

    def _ended_now(self, direction: Direction) -> None:
        """Relay an end of stream that came with the last bytes (an answer, then a close) now.

        Saves the loop a pass, and the client the wait for it; a peek, so data is never read.
        """
        try:
            more = self.sockets[direction][0].recv(1, socket.MSG_PEEK)
        except OSError:  # BlockingIOError: nothing yet; the reader sees the rest
            return
        if not more:
            self._readable(direction)

    def _writable(self, direction: Direction) -> None:
        sink = self.sockets[direction][1]
        rest = self.pending[direction]
        try:
            sent = sink.send(rest)
        except BlockingIOError:
            return
        except OSError:
            self._finish()
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
        with contextlib.suppress(OSError):
            self.sockets[direction][1].shutdown(socket.SHUT_WR)
        if len(self.ended) == 2 and not self.pending:
            self._finish()

    def _finish(self) -> None:
        if not self.done.done():
            self.done.set_result(None)
