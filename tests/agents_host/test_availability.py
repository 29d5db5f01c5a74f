"""``TargetAvailability``: waits bounded by the target wait, retries only unreachable targets."""

from __future__ import annotations

import anyio
import pytest

from shedproto.servers.agents_host import TargetStoreError, TargetUnavailableError
from shedproto.servers.agents_host.availability import TargetAvailability


async def test_retry_waits_for_the_reconnection_then_runs_the_operation() -> None:
    availability = TargetAvailability(wait=3600)
    availability.set_state("disconnected")
    calls: list[str] = []

    async def op() -> str:
        calls.append(availability.state)
        return "published"

    async with anyio.create_task_group() as tg:
        results: list[str] = []

        async def run() -> None:
            results.append(await availability.retry(op))

        tg.start_soon(run)
        await anyio.wait_all_tasks_blocked()
        assert calls == []  # nothing is tried while the target is known down
        availability.set_state("connected")
    assert (calls, results) == (["connected"], ["published"])


async def test_retry_gives_up_at_the_deadline_with_the_last_error() -> None:
    availability = TargetAvailability(wait=0.2)
    attempts = 0

    async def op() -> None:
        nonlocal attempts
        attempts += 1
        raise TargetUnavailableError(f"down {attempts}")

    with pytest.raises(TargetUnavailableError, match="down"):
        await availability.retry(op)
    assert attempts >= 2  # a blip the listener did not report is retried


async def test_retry_does_not_retry_other_store_errors_or_a_lost_lock() -> None:
    availability = TargetAvailability(wait=3600)
    attempts = 0

    async def refused() -> None:
        nonlocal attempts
        attempts += 1
        raise TargetStoreError("receipt belongs to another owner")

    with pytest.raises(TargetStoreError, match="another owner"):
        await availability.retry(refused)
    assert attempts == 1
    availability.set_state("lock-lost")
    with pytest.raises(TargetStoreError, match="lock was lost"):
        await availability.retry(refused)
    assert attempts == 1


async def test_until_up_reports_a_target_still_down_at_the_deadline() -> None:
    availability = TargetAvailability(wait=0.05)
    availability.set_state("disconnected")
    assert await availability.until_up(availability.deadline()) is False
    availability.set_state("connected")
    assert await availability.until_up(availability.deadline()) is True
