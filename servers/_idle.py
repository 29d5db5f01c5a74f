"""A cheap sliding idle deadline for long-lived connections.

Re-arming an anyio cancel scope on every read schedules a new timer each time,
which shows up in round-trip benchmarks. :class:`IdleDeadline` keeps one scope
per connection and moves its deadline only when less than ``timeout`` remains,
arming it ``slack`` seconds beyond: a silent peer is cut off after between
``timeout`` and ``timeout + slack`` seconds, and a busy one costs a clock read
per frame instead of a timer.
"""

from __future__ import annotations

import anyio

__all__ = ["IdleDeadline"]


class IdleDeadline:
    """Wraps a connection's work: ``with idle.scope:`` … ``idle.touch()`` on activity.

    ``idle.expired`` tells afterwards whether the peer was cut off for silence.
    Must be created inside a running event loop.
    """

    def __init__(self, timeout: float, *, slack: float | None = None) -> None:
        self.timeout = timeout
        self.slack = timeout / 10 if slack is None else slack
        self.scope = anyio.CancelScope(deadline=anyio.current_time() + timeout + self.slack)

    def touch(self) -> None:
        """Record activity: push the deadline out if less than ``timeout`` remains."""
        now = anyio.current_time()
        if self.scope.deadline - now < self.timeout:
            self.scope.deadline = now + self.timeout + self.slack

    @property
    def expired(self) -> bool:
        """True when the scope was cancelled by its deadline (the peer fell silent)."""
        return self.scope.cancelled_caught
