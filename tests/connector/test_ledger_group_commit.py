"""Group commit in the durable ledger: concurrent changes share writes, nothing else changes.

The deterministic tests hold the leader inside its file ``fsync`` (a gate in a
spied ``os.fsync``) until the other threads' changes are queued, so which
changes share a write never depends on timing.
"""

from __future__ import annotations

import json
import os
import random
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
import pytest

from shedproto import LocalProtocolError
from shedproto.connector import (
    MAX_SAFE_INTEGER,
    LedgerExhaustedError,
    LedgerState,
    Receipt,
    in_flight_receipt,
    parse_ledger,
    terminal_receipt,
)
from shedproto.servers.connector import CommandLedger

from ._helpers import OWNER
from .test_ledger_core import whole_document

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX rename scheme")
NOW = "2026-07-20T01:00:00.000Z"
DEADLINE = 30.0


def _claim(command_id: str, producer: str | None = None) -> Receipt:
    return in_flight_receipt(
        owner_did=OWNER,
        command_id=command_id,
        source_id="codex",
        native_session_id="thr_123",
        claimed_at="2026-07-20T00:05:01.000Z",
        producer=producer,
    )


def _version(command_id: str, version: int) -> Receipt:
    """A terminal receipt whose ``providerOperationId`` names its version."""
    return terminal_receipt(
        _claim(command_id),
        status="succeeded",
        completed_at=NOW,
        provider_operation_id=f"v{version}",
    )


def _on_disk(path: Path) -> LedgerState:
    return parse_ledger(path.read_bytes())


def _wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.001)


@dataclass
class Gate:
    """Spies the durable writes; can hold a chosen write in its file fsync, or fail it."""

    hold: set[int] = field(default_factory=set)  # 1-based write numbers to hold
    fail: set[int] = field(default_factory=set)  # 1-based write numbers whose rename fails
    writes: int = 0
    renamed_generations: list[int] = field(default_factory=list)
    held: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    spy = Gate()
    real_fsync, real_rename, real_open = os.fsync, os.rename, os.open

    def spy_open(path: Any, flags: int, mode: int = 0o777, **kwargs: Any) -> int:
        if flags & os.O_EXCL:
            spy.writes += 1  # one O_EXCL temp file per durable write
        return real_open(path, flags, mode, **kwargs)

    def spy_fsync(fd: int) -> None:
        if not stat.S_ISDIR(os.fstat(fd).st_mode) and spy.writes in spy.hold:
            spy.held.set()
            assert spy.release.wait(DEADLINE), "gate never released"
        real_fsync(fd)

    def spy_rename(src: str, dst: str) -> None:
        if spy.writes in spy.fail:
            raise OSError(28, "No space left on device")
        spy.renamed_generations.append(json.loads(Path(src).read_bytes())["generation"])
        real_rename(src, dst)

    monkeypatch.setattr(os, "open", spy_open)
    monkeypatch.setattr(os, "fsync", spy_fsync)
    monkeypatch.setattr(os, "rename", spy_rename)
    yield spy
    spy.release.set()


class Caller(threading.Thread):
    """Runs one ledger call in a thread and keeps its outcome."""

    def __init__(self, call: Callable[[], object]) -> None:
        super().__init__(daemon=True)
        self.call = call
        self.result: object = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.call()
        except BaseException as exc:
            self.error = exc

    def outcome(self) -> object:
        self.join(DEADLINE)
        assert not self.is_alive(), "ledger call never returned"
        return self.error if self.error is not None else self.result


def _has_queued(ledger: CommandLedger, count: int) -> bool:
    return len(ledger._queue) == count


def _start_while_held(
    ledger: CommandLedger, gate: Gate, calls: list[Callable[[], object]]
) -> list[Caller]:
    """Start ``calls`` one by one (so their arrival order is the list's) while a write is held."""
    assert gate.held.wait(DEADLINE)
    callers: list[Caller] = []
    for call in calls:
        caller = Caller(call)
        caller.start()
        callers.append(caller)
        _wait_until(partial(_has_queued, ledger, len(callers)))
    return callers


def _hold_first_write(ledger: CommandLedger, gate: Gate, call: Callable[[], object]) -> Caller:
    gate.hold.add(gate.writes + 1)
    leader = Caller(call)
    leader.start()
    assert gate.held.wait(DEADLINE)
    return leader


# --- deterministic batching ------------------------------------------------------------------


def test_changes_queued_during_a_write_share_the_next_one(tmp_path: Path, gate: Gate) -> None:
    path = tmp_path / "d" / "ledger.json"
    ledger = CommandLedger.open(path)
    leader = _hold_first_write(ledger, gate, lambda: ledger.put(_claim("lead")))
    followers = _start_while_held(
        ledger, gate, [partial(ledger.put, _claim(f"c{i:02d}")) for i in range(12)]
    )
    assert all(f.is_alive() for f in followers)  # nobody returns before a write holds its change
    gate.release.set()
    assert leader.outcome() is None
    assert [f.outcome() for f in followers] == [None] * 12
    # one write for the leader, one for all twelve followers: one generation each
    assert gate.writes == 2
    assert gate.renamed_generations == [1, 2]
    assert ledger.generation == 2
    on_disk = _on_disk(path)
    assert on_disk == ledger.state
    assert on_disk.pending_publication_count() == 13
    assert path.read_bytes() == ledger.state.encode()
    assert sorted(p.name for p in path.parent.iterdir()) == ["ledger.json"]


def test_every_caller_returns_only_after_its_change_is_on_disk(tmp_path: Path, gate: Gate) -> None:
    path = tmp_path / "d" / "ledger.json"
    ledger = CommandLedger.open(path)
    seen: dict[str, bool] = {}

    def put_and_check(command_id: str) -> None:
        ledger.put(_claim(command_id))
        seen[command_id] = _on_disk(path).get(command_id) is not None

    leader = _hold_first_write(ledger, gate, lambda: put_and_check("lead"))
    followers = _start_while_held(ledger, gate, [partial(put_and_check, f"c{i}") for i in range(6)])
    gate.release.set()
    for caller in [leader, *followers]:
        assert caller.outcome() is None
    assert seen == {"lead": True, **{f"c{i}": True for i in range(6)}}


def test_later_put_of_the_same_command_wins_within_a_write(tmp_path: Path, gate: Gate) -> None:
    path = tmp_path / "d" / "ledger.json"
    ledger = CommandLedger.open(path)
    leader = _hold_first_write(ledger, gate, lambda: ledger.put(_version("x", 0)))
    followers = _start_while_held(
        ledger,
        gate,
        [
            lambda: ledger.put(_version("x", 1)),
            lambda: ledger.mark_published("x"),  # applies to version 1
            lambda: ledger.put(_version("x", 2)),  # pending again
            lambda: ledger.put(_version("y", 1)),
            lambda: ledger.mark_published("y"),
        ],
    )
    gate.release.set()
    assert [c.outcome() for c in [leader, *followers]] == [None] * 6
    on_disk = _on_disk(path)
    assert on_disk.get("x").providerOperationId == "v2"  # type: ignore[union-attr]
    assert on_disk.pending_identities == {"x"}
    assert gate.writes == 2


def test_mark_published_of_a_receipt_put_earlier_in_the_same_write(
    tmp_path: Path, gate: Gate
) -> None:
    ledger = CommandLedger.open(tmp_path / "d" / "ledger.json")
    leader = _hold_first_write(ledger, gate, lambda: ledger.put(_claim("lead")))
    followers = _start_while_held(
        ledger,
        gate,
        [lambda: ledger.put(_claim("a")), lambda: ledger.mark_published("a")],
    )
    gate.release.set()
    assert [c.outcome() for c in [leader, *followers]] == [None, None, None]
    assert ledger.state.pending_identities == {"lead"}
    assert ledger.generation == 2


def test_a_no_op_mark_writes_nothing_even_while_a_write_is_in_flight(
    tmp_path: Path, gate: Gate
) -> None:
    ledger = CommandLedger.open(tmp_path / "d" / "ledger.json")
    ledger.put(_claim("done"))
    ledger.mark_published("done")
    assert gate.writes == 2
    leader = _hold_first_write(ledger, gate, lambda: ledger.put(_claim("lead")))
    (noop,) = _start_while_held(ledger, gate, [lambda: ledger.mark_published("done")])
    gate.release.set()
    assert leader.outcome() is None
    assert noop.outcome() is None
    assert gate.writes == 3  # the no-op made no write of its own
    assert ledger.generation == 3


def test_an_invalid_receipt_fails_alone(tmp_path: Path, gate: Gate) -> None:
    path = tmp_path / "d" / "ledger.json"
    ledger = CommandLedger.open(path)
    bad = msgspec.structs.replace(_claim("bad"), sourceId="Codex")
    leader = _hold_first_write(ledger, gate, lambda: ledger.put(_claim("lead")))
    first, invalid, last = _start_while_held(
        ledger,
        gate,
        [
            lambda: ledger.put(_claim("a")),
            lambda: ledger.put(bad),
            lambda: ledger.put(_claim("b")),
        ],
    )
    gate.release.set()
    assert leader.outcome() is None
    assert first.outcome() is None
    assert last.outcome() is None
    error = invalid.outcome()
    assert isinstance(error, LocalProtocolError)
    assert str(error) == "command ledger receipt sourceId is not normalized: bad"
    assert ledger.generation == 2
    assert ledger.get("bad") is None
    assert set(_on_disk(path).receipts) == {"lead", "a", "b"}


def test_recover_in_a_write_returns_the_pending_set_at_its_place(
    tmp_path: Path, gate: Gate
) -> None:
    ledger = CommandLedger.open(tmp_path / "d" / "ledger.json")
    ledger.put(_claim("old"))
    leader = _hold_first_write(ledger, gate, lambda: ledger.put(_claim("lead")))
    before, recover, after = _start_while_held(
        ledger,
        gate,
        [
            lambda: ledger.put(_claim("a")),
            lambda: ledger.recover(now=NOW),
            lambda: ledger.put(_claim("z")),
        ],
    )
    gate.release.set()
    assert leader.outcome() is None
    assert before.outcome() is None
    assert after.outcome() is None
    recovered = recover.outcome()
    assert isinstance(recovered, list)
    assert [(r.commandId, r.status) for r in recovered] == [
        ("a", "unknown"),
        ("lead", "unknown"),
        ("old", "unknown"),
    ]
    assert ledger.get("z").status == "in-flight"  # type: ignore[union-attr]
    assert ledger.generation == 3


# --- failures ----------------------------------------------------------------------------------


def test_a_failed_write_fails_exactly_its_batch(tmp_path: Path, gate: Gate) -> None:
    path = tmp_path / "d" / "ledger.json"
    ledger = CommandLedger.open(path)
    ledger.put(_version("kept", 0))
    gate.fail.add(gate.writes + 2)  # the write after the held one
    leader = _hold_first_write(ledger, gate, lambda: ledger.put(_claim("lead")))
    followers = _start_while_held(
        ledger,
        gate,
        [
            lambda: ledger.put(_claim("a")),
            lambda: ledger.put(_version("kept", 1)),
            lambda: ledger.mark_published("lead"),
        ],
    )
    gate.release.set()
    assert leader.outcome() is None
    errors = [f.outcome() for f in followers]
    assert all(isinstance(e, OSError) and e.errno == 28 for e in errors), errors
    assert len({id(e) for e in errors}) == 1  # the one write's error, reported to each of them
    # their changes are nowhere: not in memory, not on disk; the leader's change is in both
    assert ledger.generation == 2
    assert ledger.get("a") is None
    assert ledger.get("kept").providerOperationId == "v0"  # type: ignore[union-attr]
    assert ledger.state.pending_identities == {"kept", "lead"}
    assert _on_disk(path) == ledger.state
    assert sorted(p.name for p in path.parent.iterdir()) == ["ledger.json"]  # temp removed
    # and the ledger carries on: the next write is generation 3
    ledger.put(_claim("a"))
    assert ledger.generation == 3
    assert _on_disk(path).get("a") is not None


def test_changes_queued_behind_a_failing_write_still_succeed(tmp_path: Path, gate: Gate) -> None:
    path = tmp_path / "d" / "ledger.json"
    ledger = CommandLedger.open(path)
    gate.fail.add(1)
    leader = _hold_first_write(ledger, gate, lambda: ledger.put(_claim("lead")))
    followers = _start_while_held(
        ledger, gate, [lambda: ledger.put(_claim("a")), lambda: ledger.put(_claim("b"))]
    )
    gate.release.set()
    error = leader.outcome()
    assert isinstance(error, OSError)
    assert [f.outcome() for f in followers] == [None, None]
    assert ledger.generation == 1  # the failed write used no generation
    assert set(_on_disk(path).receipts) == {"a", "b"}


def test_a_mark_that_depends_on_a_failed_write_fails_with_it(tmp_path: Path, gate: Gate) -> None:
    ledger = CommandLedger.open(tmp_path / "d" / "ledger.json")
    ledger.put(_claim("k"))
    gate.fail.add(gate.writes + 2)
    leader = _hold_first_write(ledger, gate, lambda: ledger.put(_claim("lead")))
    first, second = _start_while_held(
        ledger, gate, [lambda: ledger.mark_published("k"), lambda: ledger.mark_published("k")]
    )
    gate.release.set()
    assert leader.outcome() is None
    # the second mark is a no-op only because of the first one, whose write failed
    assert isinstance(first.outcome(), OSError)
    assert isinstance(second.outcome(), OSError)
    assert "k" in ledger.state.pending_identities


def test_exhausted_generation_fails_every_change_and_writes_nothing(
    tmp_path: Path, gate: Gate
) -> None:
    path = tmp_path / "d" / "ledger.json"
    ledger = CommandLedger(str(path), LedgerState(MAX_SAFE_INTEGER - 1))
    os.makedirs(path.parent, mode=0o700)
    ledger.put(_claim("last"))
    assert ledger.generation == MAX_SAFE_INTEGER
    with pytest.raises(LedgerExhaustedError):
        ledger.put(_claim("more"))
    with pytest.raises(LedgerExhaustedError):
        ledger.recover(now=NOW)
    with pytest.raises(LedgerExhaustedError):
        ledger.mark_published("last")
    assert gate.writes == 1


# --- many threads --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2])
def test_many_threads_lose_and_reorder_nothing(tmp_path: Path, gate: Gate, seed: int) -> None:
    path = tmp_path / "d" / "ledger.json"
    ledger = CommandLedger.open(path)
    threads, rounds = 16, 12
    problems: list[str] = []
    start = threading.Barrier(threads)

    def worker(t: int) -> None:
        rng = random.Random(seed * 100 + t)
        mine = [f"t{t:02d}-{k}" for k in range(3)]
        latest: dict[str, int] = {}
        start.wait(DEADLINE)
        for version in range(rounds):
            key = rng.choice(mine)
            ledger.put(_version(key, version))
            latest[key] = version
            disk = _on_disk(path)  # durable on return: the file already holds this change
            stored = disk.get(key)
            if stored is None or stored.providerOperationId != f"v{version}":
                problems.append(f"{key} v{version} not on disk after put")
            if rng.random() < 0.5:
                ledger.mark_published(key)
                if key in _on_disk(path).pending_identities:
                    problems.append(f"{key} still pending on disk after mark_published")
        for key, version in latest.items():
            stored = ledger.get(key)
            if stored is None or stored.providerOperationId != f"v{version}":
                problems.append(f"{key}: lost update, wanted v{version}")

    workers = [threading.Thread(target=worker, args=(t,), daemon=True) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(DEADLINE * 2)
        assert not w.is_alive()
    assert problems == []
    final = CommandLedger.open(path)
    assert final.state == ledger.state
    assert path.read_bytes() == ledger.state.encode()
    # a generation per durable write: the renamed files carry 1, 2, 3, ... with no gaps
    assert gate.renamed_generations == list(range(1, gate.writes + 1))
    assert final.generation == gate.writes
    assert sorted(p.name for p in path.parent.iterdir()) == ["ledger.json"]


def test_encoded_bytes_match_whole_document_formatting_after_concurrent_writes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "d" / "ledger.json"
    ledger = CommandLedger.open(path)
    ids = ["b", "A", "a", "10", "2", "cmd_1", "Cmd-1", "é", "0", "4294967295", "wb"]

    def put_all(producer: str | None) -> None:
        for command_id in ids:
            ledger.put(_claim(command_id, producer))
            ledger.mark_published(command_id, producer)

    callers = [Caller(partial(put_all, p)) for p in (None, "wb", "zz", "w-b")]
    for caller in callers:
        caller.start()
    assert [c.outcome() for c in callers] == [None] * 4
    assert path.read_bytes() == whole_document(ledger.state)


def test_exhaustion_is_judged_per_write_not_per_change(tmp_path: Path, gate: Gate) -> None:
    path = tmp_path / "d" / "ledger.json"
    os.makedirs(path.parent, mode=0o700)
    ledger = CommandLedger(str(path), LedgerState(MAX_SAFE_INTEGER - 2))
    leader = _hold_first_write(ledger, gate, lambda: ledger.put(_claim("lead")))
    followers = _start_while_held(
        ledger, gate, [partial(ledger.put, _claim(f"c{i}")) for i in range(3)]
    )
    gate.release.set()
    # three changes, one write: the last generation there is still holds all of them
    assert [c.outcome() for c in [leader, *followers]] == [None] * 4
    assert ledger.generation == MAX_SAFE_INTEGER
    assert _on_disk(path).generation == MAX_SAFE_INTEGER
    assert len(ledger.state) == 4
