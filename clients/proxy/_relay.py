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
unrecorded (a cassette gets a ``gap`` record there), which is reported once
(``on_error``) and counted in
:attr:`Proxy.dropped`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

import anyio
import anyio.abc

from shedproto.clients._transport import RECEIVE_CHUNK
from shedproto.observe import Diagnostic, Direction, Observer, ObserverFactory
from shedproto.servers._loop import running_asyncio_loop
from shedproto.servers._receive import SocketPump
from shedproto.servers._unix import UnixServer, bind_unix_socket

from ._loop_relay import LoopServer
from ._recorder import Recorder

__all__ = ["MAX_QUEUED_BYTES", "RECEIVE_CHUNK", "Proxy"]

GRACE = 1.0
"""Seconds open connections get to end on their own once the proxy stops."""

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
        self.listen = Path(listen)
        self.server = UnixServer(listen, self._handle, grace=GRACE)
        """The accept loop on trio (on asyncio the relay runs in loop callbacks)."""
        self._loop_server: LoopServer | None = None
        self._stop_requested = False
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
            if self._loop is None:
                await self.server.serve(task_status=task_status)
            else:
                await self._relay_on_loop(self._loop, task_status)
        finally:
            self._closed = True
            if self._wake is not None:
                self._wake.set()  # the observer task drains what is queued, then ends

    async def _relay_on_loop(
        self, loop: asyncio.AbstractEventLoop, task_status: anyio.abc.TaskStatus[Path]
    ) -> None:
        """Bind (the ceremony, in a worker thread: it may probe a socket), relay by callbacks."""
        listen = self.listen
        bound = await anyio.to_thread.run_sync(lambda: bind_unix_socket(listen))
        try:
            self._loop_server = LoopServer(self, loop, bound.sock, GRACE)
            if self._stop_requested:
                self._loop_server.stop()
            task_status.started(bound.path)
            await self._loop_server.serve()
        finally:
            bound.sock.close()
            bound.unlink_if_ours()

    def shutdown(self) -> None:
        """Stop accepting; open connections get a second, then everything relayed is observed.

        Safe to call before ``serve`` has started and more than once.
        """
        self._stop_requested = True
        if self._loop_server is not None:
            self._loop_server.stop()
        self.server.shutdown()

    # ------------------------------------------------------------ the queue

    def _put(
        self,
        conn: int,
        ev: str,
        direction: Direction | None,
        data: bytes = b"",
        *,
        hold: bool = False,
    ) -> None:
        """Queue a copy of what was relayed (never blocks; drops when the observers lag).

        While a single connection is open, what is queued is observed at once
        (after the relay's send), except an ``open`` or a ``hold``: those wait
        for the next event of that connection (the relay holds the answer while
        it relays the end of stream that came with it).
        """
        if conn in self._unobserved:
            if ev == "close":
                self._unobserved.discard(conn)
            return
        queue = self._queue
        if data and self._queued_bytes + len(data) > self.max_queued_bytes:
            self._unobserved.add(conn)
            self.dropped += 1
            ev, data = "drop", b""
        item = (self.clock() - self._start, conn, ev, direction, data)
        server = self._loop_server
        if server is not None and len(server.pipes) <= 1:
            if ev != "open" and not hold:
                if queue:
                    self._drain()
                self._observe(item)  # observed now, in order, without a trip through the queue
                return
            queue.append(item)
            self._queued_bytes += len(data)
            return
        queue.append(item)
        self._queued_bytes += len(data)
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
            self._record(self.recorder, (t, conn, "gap", None, b""))
        self.on_error(
            f"connection {conn}: the observers fell behind ({self.max_queued_bytes} bytes "
            "waiting); the rest of this connection is relayed unobserved and unrecorded"
        )

    def _record(self, recorder: Recorder, item: _Item) -> None:
        t, conn, ev, direction, data = item
        try:
            if ev == "data" and direction is not None:
                recorder.data(t, conn, direction, data)
            elif ev == "gap":
                recorder.gap(t, conn)
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
        """Relay one connection with a task per direction (trio; asyncio uses ``LoopServer``)."""
        self.connections += 1
        conn = self.connections
        try:
            upstream = await anyio.connect_unix(self.upstream)
        except OSError as exc:
            self.on_error(f"connection {conn}: cannot reach upstream {self.upstream}: {exc}")
            return
        self._put(conn, "open", None)
        try:
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
