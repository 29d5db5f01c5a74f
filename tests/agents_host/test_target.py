"""The SQLite target: byte-compatible documents, one transaction per receipt, queues, privacy."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import msgspec
import pytest

from shedproto.connector import (
    RECEIPT_INDEX_LIMIT,
    in_flight_receipt,
    parse_receipt_index,
    terminal_receipt,
)
from shedproto.servers.agents_host import (
    SqliteTarget,
    TargetStoreError,
    receipt_link,
    target_file_name,
)

from .conftest import OWNER, open_target


def claim(command_id: str, producer: str | None = None) -> object:
    return in_flight_receipt(
        owner_did=OWNER,
        command_id=command_id,
        source_id="echo",
        native_session_id="s1",
        claimed_at="2026-01-01T00:00:00.000Z",
        producer=producer,
    )


def test_receipt_bytes_and_index(tmp_path: Path) -> None:
    target = open_target(tmp_path / "t.sqlite3")
    first = in_flight_receipt(
        owner_did=OWNER,
        command_id="c1",
        source_id="echo",
        native_session_id="s1",
        claimed_at="2026-01-01T00:00:00.000Z",
    )
    target.publish_receipt(first, now="2026-01-01T00:00:00.500Z")
    done = terminal_receipt(first, status="succeeded", completed_at="2026-01-01T00:00:01.000Z")
    target.publish_receipt(done, now="2026-01-01T00:00:01.500Z")
    stored = target._db.execute("SELECT body FROM receipts").fetchall()
    assert [bytes(row[0]) for row in stored] == [msgspec.json.encode(done)]
    assert bytes(stored[0][0]) == (
        b'{"schema":"commonfabric.agent-connector.command-receipt","ownerDid":"'
        + OWNER.encode()
        + b'","commandId":"c1","sourceId":"echo","nativeSessionId":"s1","status":"succeeded",'
        b'"claimedAt":"2026-01-01T00:00:00.000Z","completedAt":"2026-01-01T00:00:01.000Z"}'
    )
    index = target.read_receipt_index()
    assert index is not None
    assert [(row.commandId, row.status, row.updatedAt) for row in index.receipts] == [
        ("c1", "succeeded", "2026-01-01T00:00:01.000Z")
    ]
    assert index.receipts[0].receipt == receipt_link("c1", None, "did:key:space")
    raw = target._document("receipt-index")
    assert raw is not None
    parse_receipt_index(msgspec.json.decode(raw), owner_did=OWNER, link_for=target.link_for)


def test_index_keeps_the_last_200(tmp_path: Path) -> None:
    target = open_target(tmp_path / "t.sqlite3")
    for i in range(RECEIPT_INDEX_LIMIT + 5):
        target.publish_receipt(claim(f"c{i:03d}"), now="2026-01-01T00:00:00.000Z")  # type: ignore[arg-type]
    index = target.read_receipt_index()
    assert index is not None
    assert len(index.receipts) == RECEIPT_INDEX_LIMIT
    assert index.receipts[0].commandId == "c005"
    assert len(target.list_receipts(limit=1000)) == RECEIPT_INDEX_LIMIT + 5


def test_malformed_index_fails_the_whole_transaction(tmp_path: Path) -> None:
    target = open_target(tmp_path / "t.sqlite3")
    target._db.execute(
        "INSERT INTO documents (name, body) VALUES ('receipt-index', ?)", (b'{"schema":"x"}',)
    )
    with pytest.raises(TargetStoreError):
        target.publish_receipt(claim("c1"), now="2026-01-01T00:00:00.000Z")  # type: ignore[arg-type]
    assert target.read_receipt("c1", None) is None  # the receipt did not land either


def test_foreign_owner_is_refused(tmp_path: Path) -> None:
    target = open_target(tmp_path / "t.sqlite3")
    foreign = in_flight_receipt(
        owner_did="did:key:other",
        command_id="c1",
        source_id="echo",
        native_session_id="s1",
        claimed_at="2026-01-01T00:00:00.000Z",
    )
    with pytest.raises(TargetStoreError, match="another owner"):
        target.publish_receipt(foreign, now="2026-01-01T00:00:00.000Z")


def test_producer_queues_and_receipts_are_separate(tmp_path: Path) -> None:
    target = open_target(tmp_path / "t.sqlite3")
    assert target.append_command({"a": 1}, None) == 1
    assert target.append_command('{"b":2}', None) == 2
    assert target.append_command({"c": 3}, "bench") == 1
    assert target.read_commands(None) == [(1, {"a": 1}), (2, '{"b":2}')]
    assert target.read_commands(None, after=1) == [(2, '{"b":2}')]
    assert target.read_commands("bench") == [(1, {"c": 3})]
    target.publish_receipt(claim("c1"), now="2026-01-01T00:00:00.000Z")  # type: ignore[arg-type]
    target.publish_receipt(claim("c1", "bench"), now="2026-01-01T00:00:00.000Z")  # type: ignore[arg-type]
    owner = target.read_receipt("c1", None)
    bench = target.read_receipt("c1", "bench")
    assert owner is not None
    assert bench is not None
    assert (owner.producer, bench.producer) == (None, "bench")
    assert [r.producer for r in target.list_receipts(limit=5, producer="bench")] == ["bench"]


def test_file_is_private_wal_and_named_from_the_key(tmp_path: Path) -> None:
    state = tmp_path / "state"
    target = SqliteTarget.open(str(state), "ab" * 32, owner_did=OWNER, space="did:key:space")
    path = state / target_file_name("ab" * 32)
    assert path.name == f"target-{'ab' * 32}.agents-host.sqlite3"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(state).st_mode) == 0o700
    assert target._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert target.next_observation() == 1
    assert target.next_observation() == 2
    target.close()
    again = SqliteTarget.open(str(state), "ab" * 32, owner_did=OWNER, space="did:key:space")
    assert again.next_observation() == 3
    again.close()
    os.chmod(path, 0o644)
    with pytest.raises(OSError, match="permits access by other users"):
        SqliteTarget.open(str(state), "ab" * 32, owner_did=OWNER, space="did:key:space")


def test_listeners_see_commits(tmp_path: Path) -> None:
    target = open_target(tmp_path / "t.sqlite3")
    seen: list[str] = []
    remove = target.subscribe(lambda kind, value: seen.append(kind))
    target.append_command({}, None)
    target.publish_receipt(claim("c1"), now="2026-01-01T00:00:00.000Z")  # type: ignore[arg-type]
    remove()
    remove()
    target.append_command({}, None)
    assert seen == ["command", "receipt"]
