"""The host end to end in process: socket API, collection, health, shutdown, the lock."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import msgspec
import pytest

from shedproto.clients.agents_host import (
    AgentsHostApiError,
    AsyncAgentsHostClient,
    BlockingAgentsHostClient,
)
from shedproto.connector import (
    AgentsHostCliOptions,
    AgentSourceConfig,
    in_flight_receipt,
    parse_agents_host_config,
)
from shedproto.servers.agents_host import HostRun, SqliteTarget, run_host
from shedproto.testing._agents_host import EchoDriver, make_command
from shedproto.testing._connector import AgentsHostDirs

from .conftest import OWNER

SPACE = "did:key:z6MkSpace"


def config(**extra: Any) -> Any:
    return parse_agents_host_config(
        {
            "schema": "commonfabric.agents-host.config",
            "ownerDid": OWNER,
            "collectionIntervalMs": 0,
            "sources": [{"id": "echo", "driver": "acp", "enabled": True, "command": ["x"]}],
            **extra,
        }
    )


def host_run(dirs: AgentsHostDirs, socket: Path, *, once: bool = False, **extra: Any) -> HostRun:
    identity = dirs.root / "operator.key"
    identity.write_bytes(b"not parsed")
    drivers: dict[str, EchoDriver] = {}

    def factory(source: AgentSourceConfig) -> EchoDriver:
        drivers[source.id] = EchoDriver(source)
        return drivers[source.id]

    lines: list[str] = []
    errors: list[str] = []
    run = HostRun(
        cli=AgentsHostCliOptions(
            config_path=str(dirs.root / "agents.jsonc"),
            api_url="http://localhost:8000",
            identity_path=str(identity),
            space=SPACE,
            once=once,
            target=dirs.target,
        ),
        config=config(**extra),
        env=dirs.env,
        socket_path=str(socket),
        driver_factory=factory,
        out=lines.append,
        err=errors.append,
        handle_signals=False,
    )
    run.drivers = drivers  # type: ignore[attr-defined]
    run.lines = lines  # type: ignore[attr-defined]
    run.errors = errors  # type: ignore[attr-defined]
    return run


@asynccontextmanager
async def running(run: HostRun, *, limit: float = 30) -> AsyncIterator[list[int]]:
    status: list[int] = []

    async def main() -> None:
        status.append(await run_host(run))
        run.ready.set()

    with anyio.fail_after(limit):
        async with anyio.create_task_group() as tg:
            tg.start_soon(main)
            with anyio.fail_after(10):
                await run.ready.wait()
            assert not status, run.errors  # type: ignore[attr-defined]
            yield status
            run.stop_requested.set()


async def test_socket_api_end_to_end(
    agents_host_dirs: AgentsHostDirs, short_socket_dir: Path
) -> None:
    socket = short_socket_dir / "h.sock"
    run = host_run(agents_host_dirs, socket, commandProducers=[{"id": "bench", "piece": "p1"}])
    async with running(run) as status, await AsyncAgentsHostClient.connect(socket) as client:
        lines = run.lines  # type: ignore[attr-defined]
        assert lines[0] == f"Agent host synchronized 0 sessions in {SPACE}"
        assert lines[1:4] == [
            "Command cell: commands/_owner",
            "Receipt cell: receipt-index",
            lines[3],
        ]
        assert lines[3].startswith("Command ledger: ")
        assert lines[3].endswith(".command-ledger.json")
        assert lines[-1] == "Ready; send SIGHUP to collect again, or SIGINT/SIGTERM to stop"
        health = (await client.health()).health
        assert health is not None
        assert health.status == "ready"
        assert health.activity[0].type == "host-starting"
        await client.subscribe(("receipts",))
        submitted = await client.submit(
            make_command(
                OWNER, "c1", type_="start", session="s9", payload={"text": "hi", "title": "T"}
            ),
            wait=True,
        )
        assert submitted.receipt is not None
        assert submitted.receipt.status == "succeeded"
        assert submitted.receiptPath.startswith("receipts/_owner/")
        statuses: list[str] = []
        while "succeeded" not in statuses:
            event = await client.next_event(timeout=5)
            statuses.append(event.data["status"])
        assert statuses == ["in-flight", "succeeded"]
        as_string = await client.submit(
            json.dumps(make_command(OWNER, "c2", session="s9")), wait=True
        )
        assert as_string.receipt is not None
        assert as_string.receipt.status == "succeeded"
        on_producer = await client.submit(
            make_command(OWNER, "c2", session="s9"), producer="bench", wait=True
        )
        assert on_producer.receipt is not None
        assert on_producer.receipt.producer == "bench"
        again = await client.submit(make_command(OWNER, "c1", session="s9"), wait=True)
        assert again.receipt == submitted.receipt  # deduplicated, not re-run
        assert [c[2] for c in run.drivers["echo"].calls] == [  # type: ignore[attr-defined]
            "hi",
            "prompt c2",
            "prompt c2",
        ]
        got = (await client.receipt("c1")).receipt
        assert got == submitted.receipt
        assert (await client.receipt("nope")).receipt is None
        listed = (await client.receipts(limit=10)).receipts
        assert [r.commandId for r in listed][:1] == ["c2"]
        assert len(listed) == 3
        index = (await client.sessions("all")).index
        assert index is not None
        assert [row.key for row in index.sessions] == ["echo/s9"]
        row = index.sessions[0]
        assert row.title == "T"
        assert [m.textPreview for m in row.recentMessages][-1] == "echo: prompt c2"
        one = await client.session("echo/s9")
        assert one.manifest is not None
        assert one.manifest["key"] == "echo/s9"
        assert (await client.collect()).outcome in ("started", "pending")
    assert status == [0]


async def test_socket_api_errors(agents_host_dirs: AgentsHostDirs, short_socket_dir: Path) -> None:
    socket = short_socket_dir / "e.sock"
    run = host_run(agents_host_dirs, socket)
    async with running(run) as status, await AsyncAgentsHostClient.connect(socket) as client:
        with pytest.raises(AgentsHostApiError) as bad:
            await client.submit({"schema": "x"})
        assert bad.value.code == "invalid-command"
        with pytest.raises(AgentsHostApiError) as foreign:
            await client.submit(make_command("did:key:other", "c9"))
        assert foreign.value.code == "invalid-command"
        with pytest.raises(AgentsHostApiError) as producer:
            await client.submit(make_command(OWNER, "c9"), producer="nobody")
        assert producer.value.code == "unknown-producer"
        await client.transport.send(b"not json\n")
        assert json.loads(await client.transport.receive_frame(timeout=5)) == {
            "id": None,
            "ok": False,
            "error": {"code": "parse-error", "message": "request is not a JSON object"},
        }
        await client.transport.send(b'{"id":7,"op":"launch"}\n')
        assert (
            json.loads(await client.transport.receive_frame(timeout=5))["error"]["code"]
            == "unknown-op"
        )
        assert (await client.health()).health is not None  # still usable

        async def flood() -> None:
            # the host closes after its error reply, so the tail of this write may fail
            with contextlib.suppress(anyio.BrokenResourceError, OSError):
                await client.transport.send(b"x" * (2 << 20) + b"\n")

        async with anyio.create_task_group() as tg:
            tg.start_soon(flood)
            reply = json.loads(await client.transport.receive_frame(timeout=5))
        assert reply["error"]["code"] == "frame-too-large"
    assert status == [0]


def test_blocking_client(agents_host_dirs: AgentsHostDirs, short_socket_dir: Path) -> None:
    socket = short_socket_dir / "b.sock"
    run = host_run(agents_host_dirs, socket)
    results: dict[str, Any] = {}

    async def main() -> None:
        async with running(run):

            def use() -> None:
                with BlockingAgentsHostClient.connect(socket) as client:
                    results["submit"] = client.submit(make_command(OWNER, "b1"), wait=True)
                    results["health"] = client.health()
                    # the refresh follows the terminal receipt: wait for the row
                    for _ in range(500):
                        index = client.sessions("all").index
                        if index is not None and index.sessions:
                            break
                        time.sleep(0.01)
                    results["sessions"] = client.sessions("all")

            await anyio.to_thread.run_sync(use)

    anyio.run(main)
    assert results["submit"].receipt.status == "succeeded"
    assert results["health"].health.status in ("ready", "degraded")
    assert [row.key for row in results["sessions"].index.sessions] == ["echo/s1"]


async def test_once_collects_publishes_final_health_and_exits(
    agents_host_dirs: AgentsHostDirs, short_socket_dir: Path
) -> None:
    run = host_run(agents_host_dirs, short_socket_dir / "o.sock", once=True)
    with anyio.fail_after(20):
        assert await run_host(run) == 0
    lines = run.lines  # type: ignore[attr-defined]
    assert lines[0] == f"Agent host synchronized 0 sessions in {SPACE}"
    assert not any(line.startswith("Ready") for line in lines)
    assert not socket_exists(short_socket_dir / "o.sock")


def socket_exists(path: Path) -> bool:
    return path.exists()


async def test_second_host_on_one_target_fails_fast(
    agents_host_dirs: AgentsHostDirs, short_socket_dir: Path
) -> None:
    first = host_run(agents_host_dirs, short_socket_dir / "1.sock")
    async with running(first):
        second = host_run(agents_host_dirs, short_socket_dir / "2.sock")
        with anyio.fail_after(5):
            assert await run_host(second) == 1
        errors = second.errors  # type: ignore[attr-defined]
        assert errors[0].startswith("Agent host failed: another agent host holds the process lock")


async def test_stop_publishes_stopping_then_stopped(
    agents_host_dirs: AgentsHostDirs, short_socket_dir: Path
) -> None:
    socket = short_socket_dir / "s.sock"
    run = host_run(agents_host_dirs, socket)
    seen: list[str] = []
    async with running(run):
        assert run.host is not None
        run.host.target.subscribe(
            lambda kind, value: seen.append(value.status) if kind == "health" else None
        )
    assert seen[-2:] == ["stopping", "stopped"], seen


async def test_periodic_collection(
    agents_host_dirs: AgentsHostDirs, short_socket_dir: Path
) -> None:
    run = host_run(agents_host_dirs, short_socket_dir / "p.sock")
    run.config = msgspec.structs.replace(run.config, collectionIntervalMs=20)
    async with running(run):
        assert run.host is not None
        done = anyio.Event()
        reasons: list[str] = []

        def seen(kind: str, value: Any) -> None:
            if kind == "health" and value.sync is not None and value.sync.reason == "periodic":
                reasons.append(value.sync.status)
                if value.sync.status == "complete":
                    done.set()

        run.host.target.subscribe(seen)
        with anyio.fail_after(10):
            await done.wait()
    assert "complete" in reasons
    assert run.lines[-1].startswith("Ready; collecting every 20ms")  # type: ignore[attr-defined]


class NeverStarts(EchoDriver):
    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        await anyio.sleep_forever()


async def test_startup_cancelled_by_a_signal_exits_0_without_health(
    agents_host_dirs: AgentsHostDirs, short_socket_dir: Path
) -> None:
    run = host_run(agents_host_dirs, short_socket_dir / "c.sock")
    run.driver_factory = NeverStarts
    status: list[int] = []
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:

            async def main() -> None:
                status.append(await run_host(run))

            tg.start_soon(main)
            await anyio.wait_all_tasks_blocked()
            assert run.startup_scope is not None
            assert run.host is not None
            assert run.host.status == "starting"
            run.startup_scope.cancel()  # what SIGINT/SIGTERM do during startup
    assert status == [0]
    host = run.host
    assert host is not None
    if agents_host_dirs.target is None:
        assert isinstance(host.target, SqliteTarget)
        reopened = SqliteTarget.open_path(host.target.path, owner_did=OWNER, space="x")
        assert reopened.read_health() is None  # startup never owned health: nothing published
        reopened.close()
    else:
        from shedproto.servers.agents_host.target_postgres import PostgresTarget

        attached = PostgresTarget.attach(agents_host_dirs.target, "")
        assert attached.read_health() is None
        attached.close()
    assert not any(line.startswith("Ready") for line in run.lines)  # type: ignore[attr-defined]


async def test_submit_and_wait_answers_a_task_failure_instead_of_waiting(
    agents_host_dirs: AgentsHostDirs, short_socket_dir: Path
) -> None:
    """Regression: a command ending without a receipt used to hold ``--wait`` until timeout."""
    socket = short_socket_dir / "t.sock"
    run = host_run(agents_host_dirs, socket)
    async with running(run), await AsyncAgentsHostClient.connect(socket) as client:
        assert run.host is not None
        claimed_at = "2026-01-01T00:00:00.000Z"
        run.host.target.publish_receipt(  # another host's claim, for another session
            in_flight_receipt(
                owner_did=OWNER,
                command_id="c7",
                source_id="echo",
                native_session_id="elsewhere",
                claimed_at=claimed_at,
            ),
            now=claimed_at,
        )
        with anyio.fail_after(10), pytest.raises(AgentsHostApiError) as failed:
            await client.submit(make_command(OWNER, "c7", session="s1"), wait=True)
        assert failed.value.code == "command-task-failed"
        assert "belongs to another session: c7" in str(failed.value)
        assert run.drivers["echo"].calls == []  # type: ignore[attr-defined]


def test_blocking_client_follows_events(
    agents_host_dirs: AgentsHostDirs, short_socket_dir: Path
) -> None:
    # The hand-written blocking twin had no subscribe/next_event and dropped
    # events; generated from the async client it has both.
    socket = short_socket_dir / "v.sock"
    run = host_run(agents_host_dirs, socket)
    statuses: list[str] = []

    async def main() -> None:
        async with running(run):

            def use() -> None:
                with BlockingAgentsHostClient.connect(socket) as client:
                    client.subscribe(("receipts",))
                    client.submit(make_command(OWNER, "e1"), wait=True)
                    while "succeeded" not in statuses:
                        statuses.append(client.next_event(timeout=5).data["status"])
                    with pytest.raises(TimeoutError):
                        client.next_event(timeout=0.05)

            await anyio.to_thread.run_sync(use)

    anyio.run(main)
    assert statuses == ["in-flight", "succeeded"]
