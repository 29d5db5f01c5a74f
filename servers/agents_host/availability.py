"""What a host knows of its target's connection, and waits bounded by ``--target-wait``.

A remote target (PostgreSQL) reports ``("target", TargetState)`` changes;
:class:`TargetAvailability` keeps the last one and lets the host's tasks
wait for the target to be back. :meth:`TargetAvailability.retry` runs an
operation until it stops failing with
:class:`~shedproto.servers.agents_host.TargetUnavailableError`, waiting
while the target is known down and backing off
(:data:`RETRY_BACKOFF`) while it is believed up but still failing (a blip
the listener has not seen yet); after ``wait`` seconds the last error is
raised. A local target never reports a change, so nothing ever waits.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

from .target import TargetStoreError, TargetUnavailableError

__all__ = ["DEFAULT_TARGET_WAIT", "RETRY_BACKOFF", "TargetAvailability"]

T = TypeVar("T")

DEFAULT_TARGET_WAIT = 30.0
"""Seconds a command or a socket submit waits for an unreachable target before failing."""

RETRY_BACKOFF = (0.05, 2.0)
"""First and largest delay (seconds) between retries of a failing publication; doubles."""


class TargetAvailability:
    """The target's connection state as the host last heard it; see the module docstring."""

    def __init__(self, wait: float = DEFAULT_TARGET_WAIT) -> None:
        self.wait = wait
        self.state = "connected"
        self._up = anyio.Event()
        self._up.set()
        self._changed = anyio.Event()

    @property
    def up(self) -> bool:
        """Whether the target is believed reachable."""
        return self.state == "connected"

    def set_state(self, state: str) -> None:
        """Record ``connected`` / ``disconnected`` / ``lock-lost`` and wake every waiter."""
        self.state = state
        if state == "connected":
            self._up.set()
        elif self._up.is_set():
            self._up = anyio.Event()
        self._changed.set()
        self._changed = anyio.Event()
        if state == "lock-lost":
            self._up.set()  # waiters return (and fail at once: the lock is gone for good)

    def deadline(self) -> float:
        """Return the monotonic (anyio) time ``wait`` seconds from now."""
        return anyio.current_time() + self.wait

    async def until_up(self, deadline: float) -> bool:
        """Wait until the target is believed reachable or ``deadline``; return whether it is."""
        if not self.up:
            with anyio.move_on_after(max(0.0, deadline - anyio.current_time())):
                await self._up.wait()
        return self.up

    async def changed(self, timeout: float) -> None:
        """Wait for the next state change, at most ``timeout`` seconds."""
        with anyio.move_on_after(max(0.0, timeout)):
            await self._changed.wait()

    async def retry(self, op: Callable[[], Awaitable[T]], *, deadline: float | None = None) -> T:
        """Run ``op`` until it stops raising ``TargetUnavailableError`` (see the module).

        Raises:
            TargetUnavailableError: still unreachable at ``deadline`` (default: ``wait``
                seconds from now); the last error.
            TargetStoreError: the key's lock was lost; or whatever else ``op`` raised.

        """
        end = self.deadline() if deadline is None else deadline
        delay = RETRY_BACKOFF[0]
        while True:
            if self.state == "lock-lost":
                raise TargetStoreError("the target's lock was lost to another agent host")
            if not await self.until_up(end):
                raise TargetUnavailableError(
                    f"target database unreachable for {_seconds(self.wait)}"
                )
            try:
                return await op()
            except TargetUnavailableError:
                remaining = end - anyio.current_time()
                if remaining <= 0:
                    raise
                await self.changed(min(delay, remaining))
                delay = min(delay * 2, RETRY_BACKOFF[1])


def _seconds(value: float) -> str:
    if math.isfinite(value) and value == int(value):
        return f"{int(value)}s"
    return f"{value}s"
