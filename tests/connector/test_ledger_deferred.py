"""``mark_published_later`` and ``flush``: published marks ride on the next durable write."""

from __future__ import annotations

from pathlib import Path

from shedproto.connector import Receipt, in_flight_receipt, terminal_receipt
from shedproto.servers.connector import CommandLedger

from ._helpers import OWNER


def claim(command_id: str) -> Receipt:
    return in_flight_receipt(
        owner_did=OWNER,
        command_id=command_id,
        source_id="echo",
        native_session_id="s1",
        claimed_at="2026-01-01T00:00:00.000Z",
    )


def test_a_deferred_mark_is_in_memory_at_once_and_on_disk_with_the_next_put(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state" / "ledger.json"
    ledger = CommandLedger.open(path)
    first = claim("c1")
    ledger.put(first)
    written = path.read_bytes()
    ledger.mark_published_later("c1")
    assert ledger.pending_publication_count() == 0
    assert ledger.generation == 1
    assert path.read_bytes() == written  # no write of its own
    assert CommandLedger.open(path).pending_publication_count() == 1
    ledger.put(claim("c2"))
    reopened = CommandLedger.open(path)
    assert reopened.generation == 2
    assert [r.commandId for r in reopened.pending()] == ["c2"]


def test_flush_writes_deferred_marks_once_and_nothing_without_them(tmp_path: Path) -> None:
    path = tmp_path / "state" / "ledger.json"
    ledger = CommandLedger.open(path)
    ledger.put(claim("c1"))
    ledger.flush()
    assert ledger.generation == 1  # nothing deferred: no write
    ledger.mark_published_later("c1")
    ledger.flush()
    assert ledger.generation == 2
    assert CommandLedger.open(path).pending_publication_count() == 0
    ledger.flush()
    assert ledger.generation == 2


def test_a_deferred_mark_of_a_receipt_not_pending_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "state" / "ledger.json"
    ledger = CommandLedger.open(path)
    first = claim("c1")
    ledger.put(first)
    ledger.mark_published("c1")
    ledger.mark_published_later("c1")
    ledger.mark_published_later("unknown")
    ledger.flush()
    assert ledger.generation == 2
    done = terminal_receipt(first, status="succeeded", completed_at="2026-01-01T00:00:01.000Z")
    ledger.put(done)
    assert ledger.pending_publication_count() == 1
