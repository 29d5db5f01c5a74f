"""``GroupCommit``: concurrent callers share one flush, each gets its own outcome."""

from __future__ import annotations

import anyio
import pytest

from shedproto.servers.agents_host.batching import BatchCancelledError, GroupCommit


class Recorder:
    """A flush that records its batches; an item ``"bad"`` fails alone, ``"boom"`` fails all."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    async def flush(self, items: list[str]) -> list[str | Exception]:
        self.batches.append(list(items))
        if "boom" in items:
            raise OSError("the write failed")
        return [ValueError(item) if item == "bad" else item.upper() for item in items]


async def test_concurrent_callers_share_one_flush_and_get_their_own_results() -> None:
    recorder = Recorder()
    group: GroupCommit[str, str] = GroupCommit(recorder.flush)
    results: dict[str, object] = {}

    async def call(item: str) -> None:
        try:
            results[item] = await group.submit(item)
        except ValueError as exc:
            results[item] = exc

    async with anyio.create_task_group() as tg:
        for item in ("a", "bad", "c"):
            tg.start_soon(call, item)
    assert len(recorder.batches) == 1
    assert sorted(recorder.batches[0]) == ["a", "bad", "c"]
    assert results["a"] == "A"
    assert results["c"] == "C"
    assert isinstance(results["bad"], ValueError)


async def test_a_failed_flush_reaches_every_caller_of_its_batch() -> None:
    recorder = Recorder()
    group: GroupCommit[str, str] = GroupCommit(recorder.flush)
    failures: list[str] = []

    async def call(item: str) -> None:
        with pytest.raises(OSError, match="the write failed"):
            await group.submit(item)
        failures.append(item)

    async with anyio.create_task_group() as tg:
        tg.start_soon(call, "boom")
        tg.start_soon(call, "x")
    assert sorted(failures) == ["boom", "x"]
    assert await group.submit("after") == "AFTER"  # the group is usable again


async def test_callers_arriving_during_a_write_form_the_next_batch() -> None:
    release = anyio.Event()
    batches: list[list[str]] = []

    async def slow(items: list[str]) -> list[str | Exception]:
        batches.append(list(items))
        if len(batches) == 1:
            await release.wait()
        return list(items)

    group: GroupCommit[str, str] = GroupCommit(slow)
    async with anyio.create_task_group() as tg:
        tg.start_soon(group.submit, "first")
        await anyio.wait_all_tasks_blocked()
        tg.start_soon(group.submit, "second")
        tg.start_soon(group.submit, "third")
        await anyio.wait_all_tasks_blocked()
        release.set()
    assert batches[0] == ["first"]
    assert sorted(batches[1]) == ["second", "third"]
    assert len(batches) == 2


async def test_a_cancelled_leader_fails_its_followers_instead_of_stranding_them() -> None:
    never = anyio.Event()

    async def hang(items: list[str]) -> list[str | Exception]:
        await never.wait()
        return list(items)

    group: GroupCommit[str, str] = GroupCommit(hang)
    outcome: list[BaseException] = []

    async def follower() -> None:
        try:
            await group.submit("follower")
        except BatchCancelledError as exc:
            outcome.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(group.submit, "writing")  # batch 1: its write never ends
        await anyio.wait_all_tasks_blocked()
        async with anyio.create_task_group() as second:
            second.start_soon(group.submit, "leader")  # batch 2 waits for batch 1
            await anyio.wait_all_tasks_blocked()
            tg.start_soon(follower)  # joins batch 2
            await anyio.wait_all_tasks_blocked()
            second.cancel_scope.cancel()
        await anyio.wait_all_tasks_blocked()
        assert len(outcome) == 1
        tg.cancel_scope.cancel()
