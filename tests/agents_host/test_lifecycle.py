"""Host lifecycle: deferred health, failed sources, collection requests, git discovery."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from shedproto.connector import AgentSourceConfig, TargetCells, parse_agents_host_config
from shedproto.servers.agents_host import AgentsHost, HostStartError, find_checkouts
from shedproto.servers.connector import CommandLedger
from shedproto.testing._agents_host import EchoDriver

from .conftest import OWNER, Clock, open_any_target

pytestmark = pytest.mark.usefixtures("both_targets")

CELLS = TargetCells(
    recentIndex="index/recent", allIndex="index/all", health="health", commands="c", receipts="r"
)


def make_host(
    tmp_path: Path, factory: Any, *, sources: int = 1, health_interval: float = 0.0, **extra: Any
) -> AgentsHost:
    config = parse_agents_host_config(
        {
            "schema": "commonfabric.agents-host.config",
            "ownerDid": OWNER,
            "sources": [
                {"id": f"s{i}", "driver": "acp", "enabled": True, "command": ["x"]}
                for i in range(sources)
            ],
            **extra,
        }
    )
    clock = Clock()
    return AgentsHost(
        config=config,
        target=open_any_target(tmp_path / "t.sqlite3"),
        ledger=CommandLedger.open(tmp_path / "state" / "l.json"),
        driver_factory=factory,
        clock_ms=lambda: clock.ms,
        cells=CELLS,
        space_did="did:key:space",
        defer_health_until_ready=True,
        health_interval=health_interval,
    )


@asynccontextmanager
async def started(host: AgentsHost) -> AsyncIterator[None]:
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            await host.start(tg)
            try:
                yield
            finally:
                await host.stop("test")
                tg.cancel_scope.cancel()


class SlowDriver(EchoDriver):
    release: anyio.Event

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        await self.release.wait()


async def test_health_is_deferred_until_startup_owns_the_host(tmp_path: Path) -> None:
    release = anyio.Event()

    def factory(source: AgentSourceConfig) -> EchoDriver:
        driver = SlowDriver(source)
        driver.release = release
        return driver

    host = make_host(tmp_path, factory)
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            up = anyio.Event()

            async def start() -> None:
                await host.start(tg)
                up.set()

            tg.start_soon(start)
            await anyio.wait_all_tasks_blocked()
            assert host.status == "starting"
            assert host.target.read_health() is None  # nothing published yet
            release.set()
            await up.wait()
            health = host.target.read_health()
            assert health is not None
            assert health.status == "ready"
            types = [entry.type for entry in health.activity]
            assert types[:3] == ["host-starting", "source-starting", "source-started"]
            assert "sync-completed" in types
            assert types[-1] == "host-started"
            await host.stop("test")
            tg.cancel_scope.cancel()


class BrokenDriver(EchoDriver):
    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        raise RuntimeError("no such binary")


async def test_a_failed_source_stays_visible_and_degrades_the_host(tmp_path: Path) -> None:
    def factory(source: AgentSourceConfig) -> EchoDriver:
        return BrokenDriver(source) if source.id == "s1" else EchoDriver(source)

    host = make_host(tmp_path, factory, sources=2)
    async with started(host):
        health = host.health()
        assert health.status == "degraded"
        by_id = {source.id: source for source in health.sources}
        assert by_id["s1"].status == "failed"
        assert by_id["s1"].lastError == "no such binary"
        assert by_id["s0"].status == "ready"


async def test_no_started_source_fails_startup(tmp_path: Path) -> None:
    host = make_host(tmp_path, BrokenDriver)
    with anyio.fail_after(20):
        try:
            async with anyio.create_task_group() as tg:
                await host.start(tg)
        except BaseException as exc:  # unwrap the task group's exception group
            while len(getattr(exc, "exceptions", ())) == 1:
                exc = exc.exceptions[0]  # type: ignore[attr-defined]
            assert isinstance(exc, HostStartError)
            assert str(exc) == "no configured agent source started successfully"
        else:
            raise AssertionError("startup did not fail")
    assert host.status == "failed"
    assert host.target.read_health() is None


async def test_collection_requests_keep_one_pending(tmp_path: Path) -> None:
    host = make_host(tmp_path, EchoDriver)
    async with started(host):
        release = anyio.Event()
        driver = host.sources["s0"].driver
        assert isinstance(driver, EchoDriver)
        real_list = driver.list_sessions

        async def slow_list(cursor: str | None = None) -> Any:
            await release.wait()
            return await real_list(cursor)

        driver.list_sessions = slow_list  # type: ignore[method-assign]
        done = anyio.Event()
        host.on_collection_done = done.set
        assert host.request_collection("SIGHUP") == "started"
        assert host.request_collection("SIGHUP") == "pending"
        assert host.request_collection("periodic") == "covered"
        assert host.request_collection("SIGHUP") == "covered"
        release.set()
        await done.wait()
        reasons = [
            (e.details or {})["reason"] for e in host.activity.entries if e.type == "sync-completed"
        ]
        assert reasons == ["startup", "SIGHUP", "SIGHUP"]


async def test_collection_reads_sessions_and_retains_unchanged_ones(tmp_path: Path) -> None:
    host = make_host(tmp_path, EchoDriver)
    async with started(host):
        driver = host.sources["s0"].driver
        assert isinstance(driver, EchoDriver)
        driver.sessions["a"] = [
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
        ]
        await host.synchronize("first")
        await host.synchronize("second")
        completed = [
            e.details or {}
            for e in host.activity.entries
            if e.type == "source-collection-completed"
        ]
        assert completed[-2]["retainedCount"] == 0
        assert completed[-1]["retainedCount"] == 1
        del driver.sessions["a"]
        await host.synchronize("third")
        rows = host.target.published_sessions()
        assert rows["s0/a"].syncStatus == "deleted"


async def test_git_checkouts_are_discovered(tmp_path: Path) -> None:
    repo = tmp_path / "roots" / "group" / "repo"
    (repo / "nested").mkdir(parents=True)
    await anyio.run_process(["git", "init", "-q", "-b", "main", str(repo)])
    await anyio.run_process(
        ["git", "-C", str(repo), "remote", "add", "origin", "git@example.test:o/r.git"]
    )
    (tmp_path / "roots" / "plain").mkdir()
    found = await find_checkouts((str(tmp_path / "roots"),), observed_at="2026-01-01T00:00:00.000Z")
    assert [c.root for c in found] == [str(repo)]
    assert found[0].gitRepo == "git@example.test:o/r.git"
    assert found[0].gitBranch == "main"
    assert found[0].gitHeadSha is None
    assert [r.name for r in found[0].gitRemotes] == ["origin"]


async def test_health_changes_during_the_interval_coalesce_into_one_publication(
    tmp_path: Path,
) -> None:
    host = make_host(tmp_path, EchoDriver, health_interval=3600.0)
    statuses: list[str] = []
    host.target.subscribe(
        lambda kind, value: statuses.append(value.status) if kind == "health" else None
    )
    async with started(host):
        await anyio.wait_all_tasks_blocked()
        published = len(statuses)
        for i in range(5):
            host.record("test-change", f"change {i}")
            await anyio.wait_all_tasks_blocked()
        assert len(statuses) == published  # resting: the changes wait for the interval's end
        await host.stop("test")
    assert statuses[-2:] == ["stopping", "stopped"]  # shutdown is never delayed
    health = host.target.read_health()
    assert health is not None
    assert "test-change" in [entry.type for entry in health.activity]
