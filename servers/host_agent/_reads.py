"""How the agent reads its consumer's connection: one reader registration for its whole life.

:class:`~shedproto.servers.SocketPump` registers a reader with the event loop
for each wait and removes it after (two ``epoll_ctl`` calls and the
selector's bookkeeping per approval), and first tries a read that usually
fails (a raised ``BlockingIOError``). The consumer connection is read for
as long as it lives, so :class:`WatchedReads` registers once (asyncio,
uvloop too): the loop's callback reads the bytes for the waiting receive
and hands them over through one future. A readiness report with nothing to
read (the stale one a level-triggered loop makes right after a wake-up)
wakes nobody; with no receive waiting, the callback stops the watch until
the next wait. Bytes read for a receive that was cancelled meanwhile are
kept for the next one. Elsewhere (trio, a stream that is no socket) it is
the pump.
"""

from __future__ import annotations

import asyncio

from shedproto.servers._receive import RECEIVE_CHUNK, SocketPump

__all__ = ["WatchedReads"]


class WatchedReads:
    """``receive()`` like :meth:`SocketPump.receive`; ``close()`` before the socket closes.

    One task receives at a time. ``receive`` returns ``b""`` at EOF, when the
    peer is gone, or after :meth:`close`; cancellation propagates.
    """

    __slots__ = ("_fd", "_kept", "_loop", "_pump", "_waiter", "_watched")

    def __init__(self, pump: SocketPump) -> None:
        self._pump = pump
        loop: asyncio.AbstractEventLoop | None
        try:
            loop = asyncio.get_running_loop() if pump.raw is not None else None
        except RuntimeError:  # trio
            loop = None
        self._loop = loop
        self._fd = -1 if pump.raw is None else pump.raw.fileno()
        self._waiter: asyncio.Future[bytes] | None = None
        self._watched = False
        self._kept: bytes | None = None

    async def receive(self) -> bytes:
        """Return the next bytes, ``b""`` at EOF, when the peer is gone or after :meth:`close`."""
        loop = self._loop
        if loop is None:
            return await self._pump.receive()
        kept = self._kept
        if kept is not None:
            self._kept = None
            return kept
        if self._fd < 0:
            return b""
        waiter: asyncio.Future[bytes] = loop.create_future()
        self._waiter = waiter
        if not self._watched:
            loop.add_reader(self._fd, self._on_readable)
            self._watched = True
        try:
            return await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self._kept = waiter.result()  # read for us, then cancelled: nothing is lost
            raise
        finally:
            if self._waiter is waiter:
                self._waiter = None

    def _on_readable(self) -> None:
        waiter = self._waiter
        if waiter is None:
            self.unwatch()
        elif not waiter.done():
            raw = self._pump.raw
            assert raw is not None
            try:
                data = raw.recv(RECEIVE_CHUNK)
            except BlockingIOError:
                return  # a stale report: keep waiting
            except OSError:  # a hang-up
                data = b""
            waiter.set_result(data)

    def unwatch(self) -> None:
        """Stop the loop watching the socket (until the next wait)."""
        if self._watched:
            assert self._loop is not None
            self._loop.remove_reader(self._fd)
            self._watched = False

    def close(self) -> None:
        """Stop watching for good and end a waiting receive with ``b""``; idempotent."""
        self.unwatch()
        self._fd = -1
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(b"")
