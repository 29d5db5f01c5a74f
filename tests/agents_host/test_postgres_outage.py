"""A host meets a database outage: publication converges, claims wait, sources recover.

The reproductions of issue 28 (items 1, 2 and 4 of its report), on one host
and a stopped or restarted PostgreSQL cluster. Each test owns the cluster
for its run (the session's cluster is stopped and started again).
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from shedproto.clients.agents_host import AsyncAgentsHostClient
from shedproto.connector import TERMINAL_STATUSES, Receipt
from shedproto.testing import PostgresCluster
from shedproto.testing._agents_host import EchoDriver, make_command

pytest.importorskip("psycopg", reason="psycopg is not installed (the postgres extra)")

from shedproto.servers.agents_host.target_postgres import PostgresTarget

from .test_postgres_fleet import OWNER, eventually, fleet, key_of

pytestmark = pytest.mark.timeout(120)


def published(url: str, name: str) -> list[Receipt]:
    """Every receipt published for host ``name`` (any status)."""
    reader = PostgresTarget.attach(url, key_of(name))
    try:
        return reader.list_receipts(limit=500)
    finally:
        reader.close()


def append(url: str, name: str, commands: list[dict[str, Any]]) -> None:
    producer = PostgresTarget.attach(url, key_of(name))
    try:
        for command in commands:
            producer.append_command(command, None)
    finally:
        producer.close()


async def test_receipts_submitted_during_an_outage_are_published_after_it(
    postgres_cluster: PostgresCluster,
) -> None:
    """Issue 28 item 1: a long turn and three more, stop the database, submit eight, start it.

    Before the fix the host republished pending receipts once, inside its
    working connection's backoff; both failed and nothing retried them, so
    the eight never got receipts and the long turn stayed ``in-flight``.
    """
    url = postgres_cluster.create_database()
    async with fleet(url, ["omega"]) as runs:
        run = runs[0]
        host = run.host
        assert host is not None
        driver: EchoDriver = run.drivers["echo"]  # type: ignore[attr-defined]
        gate = anyio.Event()
        driver.gate = gate  # the long turn holds until the database is down
        first = [make_command(OWNER, "long", session="s1")] + [
            make_command(OWNER, f"next-{i}", session="s1") for i in range(3)
        ]
        append(url, "omega", first)
        await eventually(lambda: bool(driver.calls), 30)
        eight = [make_command(OWNER, f"late-{i}", session=f"s{i % 3 + 2}") for i in range(8)]
        results: list[Any] = []
        postgres_cluster.stop()
        try:
            async with anyio.create_task_group() as tg:

                async def submit(command: dict[str, Any]) -> None:
                    async with await AsyncAgentsHostClient.connect(str(run.socket_path)) as client:
                        results.append(await client.submit(command, timeout=60))

                for command in eight:
                    tg.start_soon(submit, command)
                await anyio.sleep(0.5)  # the host meets the outage (nothing asserted on time)
                gate.set()  # the long turn ends while its receipt cannot be published
                await anyio.sleep(0.5)
                postgres_cluster.start()
        finally:
            if not postgres_cluster_running(postgres_cluster):
                postgres_cluster.start()
        assert len(results) == len(eight)
        ids = [c["id"] for c in first + eight]

        def all_terminal() -> bool:
            terminal = [r for r in published(url, "omega") if r.status in TERMINAL_STATUSES]
            return sorted(r.commandId for r in terminal) == sorted(ids)

        await eventually(all_terminal, 60)
        receipts = {r.commandId: r for r in published(url, "omega")}
        assert receipts["long"].status == "succeeded"  # the long turn finished
        # the outage was shorter than the target wait: no command failed (issue 28 item 4)
        assert {r.status for r in receipts.values()} == {"succeeded"}
        await eventually(lambda: host.ledger.pending_publication_count() == 0, 30)
        # the published health is not the stale one
        await eventually(lambda: health_caught_up(url, "omega"), 30)
        # issue 28 item 2: the long turn's refresh failed while the database was down,
        # which degraded the source; republished after reconnect, it is ready again
        types = [entry.type for entry in host.activity.entries]
        assert "session-refresh-failed" in types
        assert types.index("source-recovered") > types.index("session-refresh-failed")
        await eventually(lambda: host.status == "ready", 30)
        assert host.sources["echo"].status == "ready"
        assert host.sources["echo"].last_error is None


async def test_a_degradation_the_target_did_not_cause_survives_reconnect(
    postgres_cluster: PostgresCluster,
) -> None:
    """Issue 28 item 2: only degraded-because-the-target-was-down clears on reconnect."""
    url = postgres_cluster.create_database()
    async with fleet(url, ["sigma"]) as runs:
        host = runs[0].host
        assert host is not None
        assert host.worker is not None
        assert host.worker.hooks.on_refresh is not None
        # the provider's read failed (not the target): the source is degraded for that
        host.worker.hooks.on_refresh("echo", "s1", RuntimeError("read failed: no such session"))
        assert host.sources["echo"].status == "degraded"
        reconnected = anyio.Event()

        def watch(kind: str, value: Any) -> None:
            if kind == "target" and value.state == "reconnected":
                reconnected.set()

        host.target.subscribe(watch)
        postgres_cluster.restart()
        with anyio.fail_after(30):
            await reconnected.wait()
        await eventually(lambda: host.ledger.pending_publication_count() == 0, 30)
        await eventually(lambda: not host._has_backlog(), 30)
        assert host.sources["echo"].status == "degraded"
        assert host.sources["echo"].last_error == "read failed: no such session"
        assert "source-recovered" not in [entry.type for entry in host.activity.entries]


def health_caught_up(url: str, name: str) -> bool:
    """Whether the published health counts no pending receipt and shows the reconnection."""
    reader = PostgresTarget.attach(url, key_of(name))
    try:
        health = reader.read_health()
    finally:
        reader.close()
    return (
        health is not None
        and health.commandProcessing.pendingReceiptPublications == 0
        and any(e.type == "target-reconnected" for e in health.activity)
    )


def postgres_cluster_running(cluster: PostgresCluster) -> bool:
    """Whether the cluster's server answers (its pid file exists)."""
    return (cluster.data_dir / "db" / "postmaster.pid").exists()
