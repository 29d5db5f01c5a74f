"""The servers' loop clock (issue 16) reads the very clock anyio's deadlines use."""

from __future__ import annotations

import anyio

from shedproto.servers._idle import IdleDeadline, loop_clock


async def test_loop_clock_is_anyio_current_time_on_this_backend() -> None:
    clock = loop_clock()
    assert clock is not anyio.current_time  # resolved to the loop's own clock
    readings = [anyio.current_time(), clock(), anyio.current_time(), clock()]
    assert readings == sorted(readings)  # one clock: interleaved reads never go back


async def test_idle_deadline_is_armed_on_the_loop_clock() -> None:
    idle = IdleDeadline(30.0, slack=3.0)
    now = anyio.current_time()
    assert now < idle.scope.deadline <= now + 33.0
    with idle.scope:
        idle.touch()
    assert not idle.expired


def test_loop_clock_outside_a_loop_falls_back_to_anyio() -> None:
    assert loop_clock() is anyio.current_time
