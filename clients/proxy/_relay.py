"""The validating proxy: relay bytes unchanged, observe them off the hot path.

Each accepted client gets its own upstream connection and two pumps (one per
direction). A pump writes every chunk to the other side *before* it hands a
copy to the observer task through an unbounded queue, so a diagnostic never
alters, drops or delays a byte. End of stream is relayed as a half-close.
The observer task feeds the chunks to one :class:`~shedproto.observe.Observer`
per connection and to the optional :class:`Recorder`.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from shedproto.clients._transport import RECEIVE_CHUNK
from shedproto.observe import Diagnostic, Direction, Observer, ObserverFactory
from shedproto.servers._unix import UnixServer

from ._recorder import Recorder

__all__ = ["RECEIVE_CHUNK", "Proxy"]

"""Bytes asked of a socket per receive call."""

_Item = tuple[float, int, str, Direction | None, bytes]
_GONE = (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError)


class Proxy:
    """A validating proxy from ``listen`` to ``upstream`` for one protocol.

    ``on_diagnostic`` is called (in the observer task) for every deviation;
    ``on_error`` with a one-line message when the upstream cannot be reached
    for a client (that client is disconnected) or an observer fails (that
    connection is relayed on, unobserved). The observer queue is unbounded:
    a relay never waits for the observer. With ``strict`` the first
    deviation stops the proxy as :meth:`shutdown` does (connections in
    flight get their grace second); it is then in :attr:`failed`. Run with
    ``await task_group.start(proxy.serve)``; stop with :meth:`shutdown`.
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
    ) -> None:
        self.upstream = Path(upstream)
        self.observers = observers
        self.on_diagnostic = on_diagnostic
        self.on_error = on_error
        self.recorder = recorder
        self.strict = strict
        self.clock = clock
        self.failed: Diagnostic | None = None
        """The deviation that stopped a strict proxy."""
        self.diagnostics = 0
        """How many deviations were reported so far."""
        self.connections = 0
        """How many client connections were accepted so far."""
        self.server = UnixServer(listen, self._handle, grace=1.0)
        self._start = clock()
        send, receive = anyio.create_memory_object_stream[_Item](math.inf)
        self._queue: MemoryObjectSendStream[_Item] = send
        self._inbox: MemoryObjectReceiveStream[_Item] = receive

    async def serve(
        self, *, task_status: anyio.abc.TaskStatus[Path] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Bind ``listen`` (the bind ceremony), report readiness with its path, relay until stopped.

        Raises:
            BindError: the listen path was refused (readiness is never signalled).

        """
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self._observe)
                path = await tasks.start(self._relay)
                task_status.started(path)
        finally:
            self._queue.close()
            self._inbox.close()
            if self.recorder is not None:
                self.recorder.close()

    async def _relay(self, *, task_status: anyio.abc.TaskStatus[Path]) -> None:
        try:
            await self.server.serve(task_status=task_status)
        finally:
            self._queue.close()  # the observer drains what is queued, then ends

    def shutdown(self) -> None:
        """Stop accepting; open connections get a second, then everything relayed is observed."""
        self.server.shutdown()

    def _put(self, conn: int, ev: str, direction: Direction | None, data: bytes = b"") -> None:
        self._queue.send_nowait((self.clock() - self._start, conn, ev, direction, data))

    async def _handle(self, client: anyio.abc.SocketStream) -> None:
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
                pumps.start_soon(self._pump, conn, "c2s", client, upstream, pumps.cancel_scope)
                pumps.start_soon(self._pump, conn, "s2c", upstream, client, pumps.cancel_scope)
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
        while True:
            try:
                data = await source.receive(RECEIVE_CHUNK)
            except _GONE:
                break
            try:
                await sink.send(data)
            except _GONE:
                both.cancel()  # the other end is gone: nothing more can be delivered
                return
            self._put(conn, "data", direction, data)
        self._put(conn, "eof", direction)
        with contextlib.suppress(*_GONE):
            await sink.send_eof()

    async def _observe(self) -> None:
        observers: dict[int, Observer | None] = {}
        async with self._inbox:
            await self._observe_all(observers)

    async def _observe_all(self, observers: dict[int, Observer | None]) -> None:
        async for item in self._inbox:
            if self.recorder is not None:
                self._record(self.recorder, item)
            _, conn, ev, direction, data = item
            if ev == "open":
                observers[conn] = self.observers(conn)
            elif ev == "close":
                observers.pop(conn, None)
            elif direction is not None:
                self._feed(observers, conn, direction, data)

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

    def _feed(
        self, observers: dict[int, Observer | None], conn: int, direction: Direction, data: bytes
    ) -> None:
        observer = observers.get(conn)
        if observer is None:
            return
        try:
            found = observer.feed(direction, data)
        except Exception as exc:  # an observer bug must never stop the relay
            observers[conn] = None
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
