"""A cheap sliding idle deadline for long-lived connections, and the loop's own clock.

Re-arming an anyio cancel scope on every read schedules a new timer each time,
which shows up in round-trip benchmarks. :class:`IdleDeadline` keeps one scope
per connection and moves its deadline only when less than ``timeout`` remains,
arming it ``slack`` seconds beyond: a silent peer is cut off after between
``timeout`` and ``timeout + slack`` seconds, and a busy one costs a clock read
per frame instead of a timer.

That clock read is :func:`loop_clock`'s, not ``anyio.current_time``: anyio
finds the running backend on every call (about 1-2 µs on asyncio, more than
a request's whole protocol work), while the loop's own ``time`` method,
looked up once per connection, reads the same clock in a fraction of that.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import anyio

from ._loop import running_asyncio_loop

__all__ = ["IdleDeadline", "loop_clock"]


def loop_clock() -> Callable[[], float]:
    """Return the running event loop's clock: what ``anyio.current_time`` reads, found once.

    asyncio (uvloop included): the loop's ``time``; trio: ``trio.current_time``.
    Anything else falls back to ``anyio.current_time`` itself. Deadlines of
    anyio cancel scopes are on this clock. Never raises inside a running loop.
    """
    loop = running_asyncio_loop()
    if loop is not None:
        return loop.time
    trio = sys.modules.get("trio")
    if trio is not None:
        try:
            trio.lowlevel.current_task()
        except RuntimeError:
            pass
        else:
            current_time: Callable[[], float] = trio.current_time
            return current_time
    return anyio.current_time


class IdleDeadline:
    """Wraps a connection's work: ``with idle.scope:`` … ``idle.touch()`` on activity.

    ``idle.expired`` tells afterwards whether the peer was cut off for silence.
    Must be created inside a running event loop.
    """

    def __init__(self, timeout: float, *, slack: float | None = None) -> None:
        self.timeout = timeout
        self.slack = timeout / 10 if slack is None else slack
        self.clock = loop_clock()
        """The loop's clock (``loop_clock()``), read on every :meth:`touch`."""
        self.scope = anyio.CancelScope(deadline=self.clock() + timeout + self.slack)

    def touch(self) -> None:
        """Record activity: push the deadline out if less than ``timeout`` remains."""
        now = self.clock()
        if self.scope.deadline - now < self.timeout:
            self.scope.deadline = now + self.timeout + self.slack

    @property
    def expired(self) -> bool:
        """True when the scope was cancelled by its deadline (the peer fell silent)."""
        return self.scope.cancelled_caught
