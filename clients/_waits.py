"""The asyncio waits of the async clients: :class:`CallLock` and :class:`LoopDeadlines`.

:class:`~._transport.AsyncLineTransport` uses both: a client's calls queue on
a :class:`CallLock`, and a receive that must wait on asyncio is bounded by its
loop's :class:`LoopDeadlines` instead of a cancel scope of its own.
"""

from __future__ import annotations

import asyncio
import math
import weakref
from collections import deque
from collections.abc import Callable
from types import TracebackType
from typing import ClassVar, Protocol

import anyio

from shedproto.servers._loop import running_asyncio_loop

__all__ = ["CallLock", "LoopDeadlines", "TimedWait", "running_asyncio_loop"]


class TimedWait(Protocol):
    """What :class:`LoopDeadlines` bounds: a wait with a deadline it can time out."""

    deadline: float

    def _time_out(self) -> None: ...


class CallLock:
    """Serialises a client's calls (``async with lock:``); first come, first served.

    An acquire nobody contends costs one flag test: no task lookup, no
    checkpoint. Callers that find it held queue on an event each; release
    hands the lock straight to the first of them. A queued caller that is
    cancelled leaves the queue, or, if the lock was already handed to it,
    passes it on.
    """

    __slots__ = ("_held", "_waiters")

    def __init__(self) -> None:
        self._held = False
        self._waiters: deque[anyio.Event] = deque()

    def locked(self) -> bool:
        """Return whether a call holds the lock."""
        return self._held

    async def __aenter__(self) -> None:
        if not self._held:
            self._held = True
            return
        turn = anyio.Event()
        self._waiters.append(turn)
        try:
            await turn.wait()
        except BaseException:
            if turn.is_set():
                self._release()  # it was handed to us as we were cancelled: pass it on
            else:
                self._waiters.remove(turn)
            raise

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._release()

    def _release(self) -> None:
        if self._waiters:
            self._waiters.popleft().set()  # handed over: stays held
        else:
            self._held = False


class LoopDeadlines:
    """One timer per asyncio event loop for the waiting receives of every transport on it.

    A wait registers its transport (:meth:`watch`) and leaves when it ends.
    The timer is armed at the earliest deadline it knows; a wait whose
    deadline is later (the usual case: each call moves its connection's
    deadline on) arms nothing. When the timer fires it times out every
    registered wait whose deadline has passed and re-arms itself at the
    earliest deadline still waiting, if any; deadlines that slid in the
    meantime are simply read anew. So a call costs a set insertion, not a
    timer, and a connection per request costs no timer either.
    """

    __slots__ = ("armed", "timer_at", "waiting")

    _last: ClassVar[tuple[Callable[[], asyncio.AbstractEventLoop | None], LoopDeadlines]]
    """The loop :meth:`of` found last (weakly referenced) and its deadlines."""

    def __init__(self) -> None:
        self.waiting: set[TimedWait] = set()
        """The transports whose receive waits with a finite deadline."""
        self.timer_at = math.inf
        """When the live timer fires (inf: none is live)."""
        self.armed = 0
        """Which timer is live: one armed earlier than another is not cancelled (holding
        its handle would keep the loop, this object's key, alive) but ignored when it fires."""

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop) -> LoopDeadlines:
        """Return ``loop``'s deadlines (made on first use).

        The last loop asked for is remembered through a weak reference, so
        the usual lookup (the same loop again) costs one call and one
        identity test, not a weak-keyed dictionary lookup.
        """
        last_loop, deadlines = cls._last
        if last_loop() is loop:
            return deadlines
        found = _BY_LOOP.get(loop)
        if found is None:
            found = _BY_LOOP[loop] = cls()  # holds no reference to its key
        cls._last = (weakref.ref(loop), found)  # swapped whole: threads never see a torn pair
        return found

    def watch(self, transport: TimedWait, deadline: float, loop: asyncio.AbstractEventLoop) -> None:
        """Bound ``transport``'s wait by ``deadline`` (it leaves :attr:`waiting` when done)."""
        self.waiting.add(transport)
        if deadline < self.timer_at:
            self._arm(loop, deadline)

    def _arm(self, loop: asyncio.AbstractEventLoop, at: float) -> None:
        self.armed += 1
        self.timer_at = at
        loop.call_at(at, self._fire, self.armed)

    def _fire(self, armed: int) -> None:
        if armed != self.armed:
            return  # superseded by a timer armed for an earlier deadline
        self.timer_at = math.inf
        loop = asyncio.get_running_loop()
        now = loop.time()
        earliest = math.inf
        for transport in list(self.waiting):
            deadline = transport.deadline
            if deadline <= now:
                self.waiting.discard(transport)
                transport._time_out()
            elif deadline < earliest:
                earliest = deadline
        if earliest != math.inf:
            self._arm(loop, earliest)


_BY_LOOP: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopDeadlines] = (
    weakref.WeakKeyDictionary()
)
"""Each running event loop's :class:`LoopDeadlines`."""

LoopDeadlines._last = (lambda: None, LoopDeadlines())
