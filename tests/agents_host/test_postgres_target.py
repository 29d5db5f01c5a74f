"""``PostgresTarget``: the target contract on both stores, migrations, claims, notifications."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from shedproto.connector import (
    HEALTH_SCHEMA,
    CommandProcessingHealth,
    Health,
    HealthTarget,
    TargetCells,
    in_flight_receipt,
    terminal_receipt,
)
from shedproto.servers.agents_host import AgentsHostTarget, SqliteTarget, TargetStoreError
from shedproto.testing import PostgresCluster

from .conftest import OWNER

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (the postgres extra)")

from shedproto.servers.agents_host.target_postgres import (  # noqa: E402
    MIGRATIONS,
    PostgresTarget,
    TargetState,
)

SPACE = "did:key:space"
KEY = "ab" * 32


@pytest.fixture(params=["sqlite", "postgres"])
def any_target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[AgentsHostTarget]:
    """One target of each kind, empty."""
    target: SqliteTarget | PostgresTarget
    if request.param == "sqlite":
        target = SqliteTarget.open_path(str(tmp_path / "t.sqlite3"), owner_did=OWNER, space=SPACE)
    else:
        url = str(request.getfixturevalue("postgres_url"))
        target = PostgresTarget.open(url, KEY, owner_did=OWNER, space=SPACE)
    try:
        yield target
    finally:
        target.close()


def claim(command_id: str, producer: str | None = None) -> Any:
    return in_flight_receipt(
        owner_did=OWNER,
        command_id=command_id,
        source_id="echo",
        native_session_id="s1",
        claimed_at="2026-01-01T00:00:00.000Z",
        producer=producer,
    )


def health() -> Health:
    return Health(
        schema=HEALTH_SCHEMA,
        ownerDid=OWNER,
        service="agents-host",
        status="ready",
        startedAt="2026-01-01T00:00:00.000Z",
        updatedAt="2026-01-01T00:00:01.000Z",
        target=HealthTarget(
            spaceDid=SPACE,
            ownerDid=OWNER,
            cells=TargetCells(
                recentIndex="r", allIndex="a", health="h", commands="c", receipts="x"
            ),
        ),
        commandProcessing=CommandProcessingHealth(
            accepting=True, pendingReceiptPublications=0, failedCommands=0
        ),
        sources=(),
        activity=(),
    )


def exercise(target: AgentsHostTarget) -> dict[str, Any]:
    """Drive the whole interface; return what a reader sees."""
    seen: list[tuple[str, Any]] = []
    remove = target.subscribe(lambda kind, value: seen.append((kind, value)))
    first = claim("c1")
    target.publish_receipt(first, now="2026-01-01T00:00:00.500Z")
    done = terminal_receipt(first, status="succeeded", completed_at="2026-01-01T00:00:02.000Z")
    target.publish_receipt(done, now="2026-01-01T00:00:02.000Z")
    target.publish_receipt(claim("c1", "bench"), now="2026-01-01T00:00:03.000Z")
    target.publish_health(health())
    assert target.append_command({"id": "a"}, None) == 1
    assert target.append_command('{"id": "b"}', None) == 2
    assert target.append_command({"id": "p"}, "bench") == 1
    observations = [target.next_observation(), target.next_observation()]
    remove()
    index = target.read_receipt_index()
    assert index is not None
    return {
        "receipt": target.read_receipt("c1", None),
        "producer receipt": target.read_receipt("c1", "bench"),
        "missing": target.read_receipt("c2", None),
        "index rows": [(r.commandId, r.producer, r.status) for r in index.receipts],
        "listed": [r.commandId for r in target.list_receipts(limit=10)],
        "owner listed": [r.status for r in target.list_receipts(limit=10, producer="")],
        "health": target.read_health(),
        "owner queue": target.read_commands(None),
        "after 1": target.read_commands(None, 1),
        "bench queue": target.read_commands("bench"),
        "observations": observations,
        "events": [kind for kind, _ in seen],
    }


def test_the_target_contract_holds_on_both_stores(any_target: AgentsHostTarget) -> None:
    seen = exercise(any_target)
    assert seen["receipt"].status == "succeeded"
    assert seen["producer receipt"].producer == "bench"
    assert seen["missing"] is None
    assert seen["index rows"] == [("c1", None, "succeeded"), ("c1", "bench", "in-flight")]
    assert seen["listed"] == ["c1", "c1"]
    assert seen["owner listed"] == ["succeeded"]
    assert seen["health"] == health()
    assert seen["owner queue"] == [(1, {"id": "a"}), (2, '{"id": "b"}')]
    assert seen["after 1"] == [(2, '{"id": "b"}')]
    assert seen["bench queue"] == [(1, {"id": "p"})]
    assert seen["observations"] == [1, 2]
    assert seen["events"][:4] == ["receipt", "receipt", "receipt", "health"]
    assert seen["events"][4:] == ["command", "command", "command"]


def test_documents_are_byte_identical_on_both_stores(tmp_path: Path, postgres_url: str) -> None:
    lite = SqliteTarget.open_path(str(tmp_path / "t.sqlite3"), owner_did=OWNER, space=SPACE)
    pg = PostgresTarget.open(postgres_url, KEY, owner_did=OWNER, space=SPACE)
    try:
        for target in (lite, pg):
            target.publish_receipt(claim("c1"), now="2026-01-01T00:00:00.500Z")
            target.publish_health(health())
        with psycopg.connect(postgres_url) as conn:
            pg_docs = dict(conn.execute("SELECT name, body FROM agents_host_documents").fetchall())
            pg_receipt = conn.execute("SELECT body FROM agents_host_receipts").fetchone()
        lite_docs = dict(lite._db.execute("SELECT name, body FROM documents").fetchall())
        lite_receipt = lite._db.execute("SELECT body FROM receipts").fetchone()
        assert {k: bytes(v) for k, v in pg_docs.items()} == lite_docs
        assert pg_receipt is not None
        assert lite_receipt is not None
        assert bytes(pg_receipt[0]) == lite_receipt[0]
    finally:
        lite.close()
        pg.close()


def test_migrations_are_versioned_and_applied_once(postgres_url: str) -> None:
    first = PostgresTarget.open(postgres_url, KEY, owner_did=OWNER, space=SPACE)
    first.close()
    again = PostgresTarget.open(postgres_url, KEY, owner_did=OWNER, space=SPACE)
    again.close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        versions = [v for (v,) in conn.execute("SELECT version FROM agents_host_schema_migrations")]
        assert versions == list(range(1, len(MIGRATIONS) + 1))
        conn.execute("INSERT INTO agents_host_schema_migrations (version) VALUES (99)")
    with pytest.raises(TargetStoreError, match="schema version 99 is newer than this host"):
        PostgresTarget.open(postgres_url, KEY, owner_did=OWNER, space=SPACE)


def test_hosts_with_distinct_keys_share_a_database_without_seeing_each_other(
    postgres_url: str,
) -> None:
    one = PostgresTarget.open(postgres_url, "1" * 64, owner_did=OWNER, space=SPACE)
    two = PostgresTarget.open(postgres_url, "2" * 64, owner_did=OWNER, space=SPACE)
    try:
        one.publish_receipt(claim("c1"), now="2026-01-01T00:00:00.500Z")
        one.append_command({"id": "x"}, None)
        assert two.read_receipt("c1", None) is None
        assert two.read_commands(None) == []
        assert two.read_receipt_index() is None
        with pytest.raises(TargetStoreError, match="another agent host holds the process lock"):
            PostgresTarget.open(postgres_url, "2" * 64, owner_did=OWNER, space=SPACE)
    finally:
        one.close()
        two.close()
    reopened = PostgresTarget.open(postgres_url, "2" * 64, owner_did=OWNER, space=SPACE)
    reopened.close()  # closing released the advisory lock


def test_a_command_row_locked_elsewhere_is_never_skipped(postgres_url: str) -> None:
    target = PostgresTarget.open(postgres_url, KEY, owner_did=OWNER, space=SPACE)
    try:
        for i in range(1, 4):
            target.append_command({"id": str(i)}, None)
        with psycopg.connect(postgres_url) as other, other.transaction():
            other.execute("SELECT 1 FROM agents_host_commands WHERE seq = 2 FOR UPDATE")
            assert target.read_commands(None) == [(1, {"id": "1"})]
        assert target.read_commands(None, 1) == [(2, {"id": "2"}), (3, {"id": "3"})]
        assert target.queue_counts() == {"": (3, 3)}
    finally:
        target.close()


async def test_a_command_appended_elsewhere_wakes_the_subscribed_loop(postgres_url: str) -> None:
    target = PostgresTarget.open(postgres_url, KEY, owner_did=OWNER, space=SPACE)
    producer = PostgresTarget.attach(postgres_url, KEY[:6])
    try:
        woken = anyio.Event()
        got: list[Any] = []

        def listener(kind: str, value: Any) -> None:
            got.append((kind, value))
            woken.set()  # an anyio.Event: only valid in the loop's own thread

        target.subscribe(listener)
        producer.append_command({"id": "remote"}, "bench")
        with anyio.fail_after(10):
            await woken.wait()
        assert got == [("command", ("bench", 1))]
    finally:
        producer.close()
        target.close()


def test_the_first_call_after_a_restart_reconnects(postgres_cluster: PostgresCluster) -> None:
    url = postgres_cluster.create_database()
    target = PostgresTarget.open(url, KEY, owner_did=OWNER, space=SPACE)
    states: list[TargetState] = []
    target.subscribe(lambda kind, value: states.append(value) if kind == "target" else None)
    try:
        try:
            postgres_cluster.stop()
            with pytest.raises(TargetStoreError, match="target database unavailable"):
                target.read_health()
        finally:
            postgres_cluster.start()
        target._retry_at = 0.0  # skip the backoff wait instead of sleeping through it
        target.publish_health(health())
        assert target.read_health() == health()
        with pytest.raises(TargetStoreError, match="another agent host holds the process lock"):
            PostgresTarget.open(url, KEY, owner_did=OWNER, space=SPACE)  # lock re-taken
    finally:
        target.close()


def test_receipt_bodies_decode_as_stored(any_target: AgentsHostTarget) -> None:
    receipt = claim("c9")
    any_target.publish_receipt(receipt, now="2026-01-01T00:00:00.500Z")
    assert any_target.read_receipt("c9", None) == receipt
    assert msgspec.json.encode(any_target.list_receipts(limit=1)[0]) == msgspec.json.encode(receipt)


def test_a_host_whose_key_was_taken_while_it_was_cut_off_stops_writing(
    postgres_url: str,
) -> None:
    first = PostgresTarget.open(postgres_url, KEY, owner_did=OWNER, space=SPACE)
    states: list[TargetState] = []
    first.subscribe(lambda kind, value: states.append(value) if kind == "target" else None)
    second = None
    try:
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            # the timeout (ms, PostgreSQL 14+) waits until the backend has exited and its
            # advisory lock is free; without it the next open raced the backend's exit
            admin.execute(
                "SELECT pg_terminate_backend(pid, 10000) FROM pg_locks"
                " WHERE locktype = 'advisory' AND granted"
                " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            )
        second = PostgresTarget.open(postgres_url, KEY, owner_did=OWNER, space=SPACE)
        message = "another agent host holds the process lock: postgresql://"
        for _ in range(2):  # the reconnect finds the key taken, and it stays refused
            with pytest.raises(TargetStoreError, match=message):
                first.publish_health(health())
        assert any(state.state == "lock-lost" for state in states)
        assert second.read_health() is None  # the first host wrote nothing after losing it
    finally:
        first.close()
        if second is not None:
            second.close()


def test_a_receipt_batch_stores_what_publishing_one_by_one_stores(
    any_target: AgentsHostTarget, tmp_path: Path
) -> None:
    first, second = claim("b1"), claim("b2", producer="workbench")
    done = terminal_receipt(first, status="succeeded", completed_at="2026-01-01T00:00:02.000Z")
    one_by_one = SqliteTarget.open_path(str(tmp_path / "ref.sqlite3"), owner_did=OWNER, space=SPACE)
    try:
        for receipt in (first, second, done):
            one_by_one.publish_receipt(receipt, now="2026-01-01T00:00:03.000Z")
        seen: list[str] = []
        any_target.subscribe(lambda kind, value: seen.append(value.commandId))
        any_target.publish_receipts([first, second, done], now="2026-01-01T00:00:03.000Z")
        assert seen == ["b1", "b2", "b1"]
        assert any_target.read_receipt_index() == one_by_one.read_receipt_index()
        assert any_target.list_receipts(limit=10) == one_by_one.list_receipts(limit=10)
        assert any_target.read_receipt("b1", None) == done
    finally:
        one_by_one.close()


def test_a_receipt_batch_with_another_owners_receipt_writes_nothing(
    any_target: AgentsHostTarget,
) -> None:
    stranger = msgspec.structs.replace(claim("b4"), ownerDid="did:key:someone-else")
    with pytest.raises(TargetStoreError, match="belongs to another owner: b4"):
        any_target.publish_receipts([claim("b3"), stranger], now="2026-01-01T00:00:03.000Z")
    assert any_target.read_receipt("b3", None) is None
    assert any_target.read_receipt_index() is None


def test_list_receipts_reports_a_malformed_stored_receipt_as_a_store_error(
    any_target: AgentsHostTarget,
) -> None:
    any_target.publish_receipt(claim("c7"), now="2026-01-01T00:00:00.500Z")
    if isinstance(any_target, SqliteTarget):
        any_target._db.execute("UPDATE receipts SET body = ?", (b'{"commandId": 7}',))
    else:
        assert isinstance(any_target, PostgresTarget)
        any_target._call(
            lambda conn: conn.execute(
                "UPDATE agents_host_receipts SET body = %s", (b'{"commandId": 7}',)
            )
        )
    with pytest.raises(TargetStoreError, match="stored command receipt is invalid"):
        any_target.list_receipts(limit=5)
