"""The SQLite target's receipt-index memo: O(1) validation per publish, never a hidden bad index.

Every test checks the target against the definition: the stored index after a
publish is ``update_receipt_index`` of the bytes stored before it (a full
validation), and a stored index that does not validate refuses the publish
with nothing written, whoever wrote it and whatever the target remembers.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from shedproto.connector import (
    RECEIPT_INDEX_LIMIT,
    Receipt,
    ReceiptIndexError,
    ReceiptLink,
    in_flight_receipt,
    parse_receipt_index,
    terminal_receipt,
    update_receipt_index,
)
from shedproto.servers.agents_host import SqliteTarget, TargetStoreError

from .conftest import OWNER, open_target

SPACE = "did:key:space"
T0 = "2026-01-01T00:00:00.000Z"


def claim(command_id: str, producer: str | None = None, **overrides: Any) -> Receipt:
    receipt = in_flight_receipt(
        owner_did=OWNER,
        command_id=command_id,
        source_id="echo",
        native_session_id="s1",
        claimed_at=T0,
        producer=producer,
    )
    return msgspec.structs.replace(receipt, **overrides)


def stamp(i: int) -> str:
    return f"2026-01-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000Z"


def stored_index(target: SqliteTarget) -> bytes | None:
    return target._document("receipt-index")


def stored_receipts(target: SqliteTarget) -> list[tuple[str, bytes]]:
    rows = target._db.execute("SELECT identity, body FROM receipts ORDER BY identity").fetchall()
    return [(str(identity), bytes(body)) for identity, body in rows]


def by_definition(target: SqliteTarget, before: bytes | None, receipt: Receipt, now: str) -> bytes:
    """The index bytes a full validation of ``before`` gives after publishing ``receipt``."""
    index = update_receipt_index(
        None if before is None else msgspec.json.decode(before),
        receipt,
        link=target.link_for(receipt.commandId, receipt.producer),
        now=now,
        link_for=target.link_for,
    )
    return msgspec.json.encode(index)


def publish_checked(target: SqliteTarget, receipt: Receipt, now: str) -> None:
    """Publish and assert the stored index is exactly what full validation gives."""
    before = stored_index(target)
    expected = by_definition(target, before, receipt, now)
    target.publish_receipt(receipt, now=now)
    assert stored_index(target) == expected


def workload() -> Iterator[tuple[Receipt, str]]:
    """Claims and terminals, republished identities, two queues, past the 200-row bound."""
    for i in range(RECEIPT_INDEX_LIMIT + 60):
        command_id = f"c{i % (RECEIPT_INDEX_LIMIT + 20):03d}"
        producer = "wb" if i % 9 == 0 else None
        first = claim(command_id, producer)
        yield first, stamp(2 * i)
        if i % 3 == 0:
            done = terminal_receipt(first, status="succeeded", completed_at=stamp(2 * i + 1))
            yield done, stamp(2 * i + 1)


def test_every_publish_stores_what_full_validation_stores(tmp_path: Path) -> None:
    target = open_target(tmp_path / "t.sqlite3")
    for receipt, now in workload():
        publish_checked(target, receipt, now)
    raw = stored_index(target)
    assert raw is not None
    full = parse_receipt_index(msgspec.json.decode(raw), owner_did=OWNER, link_for=target.link_for)
    assert target.read_receipt_index() == full
    assert len(full.receipts) == RECEIPT_INDEX_LIMIT
    # A fresh target (no memo) reading the same file agrees byte for byte.
    target.close()
    again = open_target(tmp_path / "t.sqlite3")
    assert again.read_receipt_index() == full


class CountingLinks:
    """Wraps a target's ``link_for`` (the sha256 of every row a full validation checks)."""

    def __init__(self, target: SqliteTarget, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        original: Callable[[str, str | None], ReceiptLink] = target.link_for

        def counted(command_id: str, producer: str | None) -> ReceiptLink:
            self.calls += 1
            return original(command_id, producer)

        monkeypatch.setattr(target, "link_for", counted)


def fill(target: SqliteTarget) -> None:
    for i in range(RECEIPT_INDEX_LIMIT):
        target.publish_receipt(claim(f"f{i:03d}"), now=T0)


def test_publishing_into_a_full_index_checks_only_the_new_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = open_target(tmp_path / "t.sqlite3")
    fill(target)
    links = CountingLinks(target, monkeypatch)
    for i in range(10):
        target.publish_receipt(claim(f"n{i}"), now=T0)
    # A link for the new row and one to check it: never one per stored row (a full
    # validation makes RECEIPT_INDEX_LIMIT of them per publish).
    assert links.calls <= 2 * 10
    # Another connection rewrites the index (valid, same rows): the next publish revalidates all.
    other = sqlite3.connect(target.path)
    raw = stored_index(target)
    assert raw is not None
    value = msgspec.json.decode(raw)
    value["updatedAt"] = "2026-02-02T00:00:00.000Z"
    other.execute(
        "UPDATE documents SET body = ? WHERE name = 'receipt-index'", (msgspec.json.encode(value),)
    )
    other.commit()
    other.close()
    links.calls = 0
    target.publish_receipt(claim("after"), now=T0)
    assert links.calls >= RECEIPT_INDEX_LIMIT


def corrupt_row(index: int, **changes: Any) -> Callable[[dict[str, Any]], None]:
    def change(value: dict[str, Any]) -> None:
        value["receipts"][index].update(changes)

    return change


def duplicate_row(value: dict[str, Any]) -> None:
    value["receipts"][150] = value["receipts"][20]


def too_many(value: dict[str, Any]) -> None:
    value["receipts"].append({**value["receipts"][0], "commandId": "extra"})


CORRUPTIONS: dict[str, Callable[[dict[str, Any]], None]] = {
    "wrong link deep inside": corrupt_row(57, receipt={"id": "elsewhere", "space": SPACE}),
    "other owner": corrupt_row(3, ownerDid="did:key:other"),
    "bad row timestamp": corrupt_row(100, updatedAt="yesterday"),
    "bad row status": corrupt_row(199, status="lost"),
    "bad producer": corrupt_row(42, producer="Not A Producer"),
    "duplicate row": duplicate_row,
    "bad header timestamp": lambda value: value.update(updatedAt="soon"),
    "header owner": lambda value: value.update(ownerDid="did:key:other"),
    "more than 200 rows": too_many,
}


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
def test_externally_corrupted_index_is_refused_with_a_warm_memo(
    tmp_path: Path, corruption: str
) -> None:
    target = open_target(tmp_path / "t.sqlite3")
    fill(target)
    target.publish_receipt(claim("warm"), now=T0)  # the memo now holds the stored bytes
    raw = stored_index(target)
    assert raw is not None
    value = msgspec.json.decode(raw)
    CORRUPTIONS[corruption](value)
    bad = msgspec.json.encode(value)
    with pytest.raises(ReceiptIndexError) as expected:
        parse_receipt_index(value, owner_did=OWNER, link_for=target.link_for)
    other = sqlite3.connect(target.path)
    other.execute("UPDATE documents SET body = ? WHERE name = 'receipt-index'", (bad,))
    other.commit()
    other.close()
    receipts = stored_receipts(target)
    with pytest.raises(TargetStoreError) as caught:
        target.publish_receipt(claim("refused"), now=T0)
    assert str(caught.value) == str(expected.value)
    assert stored_index(target) == bad  # left untouched
    assert stored_receipts(target) == receipts  # the receipt did not land either
    with pytest.raises(TargetStoreError):
        target.read_receipt_index()


def test_unparsable_bytes_are_refused_with_a_warm_memo(tmp_path: Path) -> None:
    target = open_target(tmp_path / "t.sqlite3")
    target.publish_receipt(claim("warm"), now=T0)
    raw = stored_index(target)
    assert raw is not None
    target._db.execute("UPDATE documents SET body = ? WHERE name = 'receipt-index'", (raw[:-1],))
    with pytest.raises(TargetStoreError):
        target.publish_receipt(claim("refused"), now=T0)
    assert stored_index(target) == raw[:-1]
    assert target.read_receipt("refused", None) is None


def test_another_writer_on_the_same_file_is_never_lost(tmp_path: Path) -> None:
    first = open_target(tmp_path / "t.sqlite3")
    second = open_target(tmp_path / "t.sqlite3")
    for i, (receipt, now) in enumerate(workload()):
        publish_checked(first if i % 5 else second, receipt, now)
    index = first.read_receipt_index()
    assert index == second.read_receipt_index()
    assert index is not None
    last = [receipt for receipt, _ in workload()][-1]
    assert index.receipts[-1].commandId == last.commandId


def test_a_rolled_back_publish_is_not_remembered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = open_target(tmp_path / "t.sqlite3")
    publish_checked(target, claim("c1"), T0)
    before = stored_index(target)
    original = target._bump

    def failing(db: sqlite3.Connection, name: str) -> int:
        raise sqlite3.OperationalError("disk I/O error (injected)")

    monkeypatch.setattr(target, "_bump", failing)
    with pytest.raises(sqlite3.OperationalError):
        target.publish_receipt(claim("lost"), now=T0)
    assert stored_index(target) == before
    monkeypatch.setattr(target, "_bump", original)
    publish_checked(target, claim("c2"), T0)
    index = target.read_receipt_index()
    assert index is not None
    assert [row.commandId for row in index.receipts] == ["c1", "c2"]


INVALID_NEW_ROWS: list[tuple[Receipt, str, str]] = [
    (claim("c2"), "not a time", "command receipt index updatedAt must be an ISO timestamp"),
    (claim("c2", claimedAt="yesterday"), T0, "command receipt index row 1 is invalid"),
    (claim("c2", "Not A Producer"), T0, "command receipt index row 1 is invalid"),
]


@pytest.mark.parametrize(("receipt", "now", "message"), INVALID_NEW_ROWS)
def test_an_index_written_invalid_is_refused_on_the_next_publish(
    tmp_path: Path, receipt: Receipt, now: str, message: str
) -> None:
    """The target does not validate the receipt it publishes (as before); the index it wrote
    then fails validation, and the memo must not let the next publish build on it."""
    target = open_target(tmp_path / "t.sqlite3")
    target.publish_receipt(claim("c1"), now=T0)
    target.publish_receipt(receipt, now=now)
    written = stored_index(target)
    with pytest.raises(TargetStoreError) as caught:
        target.publish_receipt(claim("c3"), now=T0)
    assert str(caught.value) == message
    assert stored_index(target) == written
    assert target.read_receipt("c3", None) is None


def test_a_changed_space_or_owner_misses_the_memo(tmp_path: Path) -> None:
    target = open_target(tmp_path / "t.sqlite3")
    target.publish_receipt(claim("c1"), now=T0)
    target.space = "did:key:another-space"
    with pytest.raises(TargetStoreError, match="links the wrong receipt: c1"):
        target.publish_receipt(claim("c2"), now=T0)
    target.space = SPACE
    target.owner_did = "did:key:another-owner"
    with pytest.raises(TargetStoreError, match="another owner"):
        target.read_receipt_index()
