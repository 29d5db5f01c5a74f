"""agents-host: commands per second end to end, and how the cost splits between ledger and target.

* **End to end** (candidate): N prompt commands across 20 sessions submitted
  over the socket API to an in-process host with the no-op
  :class:`~shedproto.testing._agents_host.EchoDriver`, until every terminal
  receipt is published. Baseline: the 4N ledger changes those commands need
  (claim, mark published, terminal, mark published) made one by one from one
  thread, i.e. one durable write each. Before group commit that was a floor
  (ratio = the ledger's share of the end-to-end time); with group commit the
  host's concurrent sessions share writes, so the ratio can exceed 1.0.
* **Ledger, the host's way** (candidate): the same 4N changes issued as the
  worker issues them, 20 sessions at once (one thread each, every session's
  commands in order), so concurrent changes share durable writes. Baseline:
  the same changes one by one. The ratio is the group-commit speed-up.
* **Target** (candidate): the SQLite target publishing the 2N receipts (and
  their index rows) of N commands. Baseline: the sequential ledger writes.
  The ratio says how many times cheaper than one-by-one ledger writes the
  target is.
* **Target into a full index** (candidate): the SQLite target publishing the
  2N receipts of N commands on top of a full 200-row receipt index, as a
  long-running host does, validating only each new row (the target's index
  memo). Baseline: the same publishes with the memo dropped before each one,
  i.e. the whole stored index re-validated every time (what the target did
  before the memo). The ratio is the memo's speed-up.

* **PostgreSQL target end to end** (candidate): the end-to-end run with the
  host publishing to a PostgreSQL fleet database (a throwaway local cluster,
  Unix socket, ``fsync=off`` as the test fixture runs it). Baseline: the same
  run on the SQLite target. The ratio is PostgreSQL's throughput relative to
  SQLite's; commands/s = 1e6 / the per-command microseconds. Left out, with a
  note, where no PostgreSQL binaries or psycopg exist.

* **API server, health** (server side): one raw anyio client sends
  ``health`` requests one after another on one connection and reads each
  reply line, against (a) a raw anyio server answering every line with the
  reply bytes the host produced (captured once before timing) and (b) the
  host's API socket with the no-op driver. Timed in CPU seconds of this
  process, as ``benchmarks.servers``. Target 0.95 (issue 16).

Issue 16's goal for the end-to-end case is >= 500 commands/s: 1e6 / the
candidate's per-command microseconds (asyncio and ``--uvloop``).

Targets are informational floors: e2e >= 0.3, ledger the host's way >= 2.0,
target >= 1.0, target into a full index >= 2.0, PostgreSQL vs SQLite >= 0.3.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio

from shedproto._codec import encode_line
from shedproto.agents_host import decode_reply
from shedproto.clients.agents_host import AsyncAgentsHostClient
from shedproto.connector import (
    RECEIPT_INDEX_LIMIT,
    Receipt,
    in_flight_receipt,
    terminal_receipt,
)
from shedproto.servers.agents_host import SqliteTarget, run_host
from shedproto.servers.connector import CommandLedger
from shedproto.testing._agents_host import echo_host_run, make_command

from ._harness import Case, timed
from .servers import _first_reply, _line_driver, _raw_server, _replier

OWNER = "did:key:z6MkBenchOwner"
HEALTH = b'{"id":1,"op":"health"}\n'


def _private_dir() -> Path:
    path = Path(tempfile.mkdtemp(prefix="sp-ah-", dir="/tmp"))
    os.chmod(path, 0o700)
    return path


def _receipts(count: int) -> list[tuple[Receipt, Receipt]]:
    pairs: list[tuple[Receipt, Receipt]] = []
    for i in range(count):
        claim = in_flight_receipt(
            owner_did=OWNER,
            command_id=f"c{i:05d}",
            source_id="echo",
            native_session_id=f"s{i % 20:02d}",
            claimed_at="2026-01-01T00:00:00.000Z",
        )
        done = terminal_receipt(claim, status="succeeded", completed_at="2026-01-01T00:00:01.000Z")
        pairs.append((claim, done))
    return pairs


def _ledger_only(count: int) -> None:
    root = _private_dir()
    try:
        ledger = CommandLedger.open(root / "state" / "ledger.json")
        for claim, done in _receipts(count):
            ledger.put(claim)
            ledger.mark_published(claim.commandId)
            ledger.put(done)
            ledger.mark_published(claim.commandId)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _ledger_concurrent(count: int, sessions: int = 20) -> None:
    root = _private_dir()
    try:
        ledger = CommandLedger.open(root / "state" / "ledger.json")
        pairs = _receipts(count)

        def session(index: int) -> None:
            for claim, done in pairs[index::sessions]:
                ledger.put(claim)
                ledger.mark_published(claim.commandId)
                ledger.put(done)
                ledger.mark_published(claim.commandId)

        workers = [threading.Thread(target=session, args=(i,)) for i in range(sessions)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _target_only(count: int) -> None:
    root = _private_dir()
    try:
        target = SqliteTarget.open_path(str(root / "t.sqlite3"), owner_did=OWNER, space="did:s")
        for claim, done in _receipts(count):
            target.publish_receipt(claim, now="2026-01-01T00:00:00.000Z")
            target.publish_receipt(done, now="2026-01-01T00:00:01.000Z")
        target.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


class _RevalidatingTarget(SqliteTarget):
    """The target as it was before its index memo: the stored index fully validated per publish."""

    def publish_receipts(self, receipts: Sequence[Receipt], *, now: str) -> None:
        self._index_memo = None
        super().publish_receipts(receipts, now=now)


def _target_full_index(count: int, target_type: type[SqliteTarget]) -> Callable[[], float]:
    def run() -> float:
        root = _private_dir()
        try:
            target = target_type.open_path(str(root / "t.sqlite3"), owner_did=OWNER, space="did:s")
            for claim, _ in _receipts(RECEIPT_INDEX_LIMIT + count)[count:]:
                target.publish_receipt(claim, now="2026-01-01T00:00:00.000Z")
            pairs = _receipts(count)
            start = time.perf_counter()
            for claim, done in pairs:
                target.publish_receipt(claim, now="2026-01-01T00:00:00.000Z")
                target.publish_receipt(done, now="2026-01-01T00:00:01.000Z")
            elapsed = time.perf_counter() - start
            target.close()
            return elapsed
        finally:
            shutil.rmtree(root, ignore_errors=True)

    return run


async def _end_to_end(count: int, target: str | None = None) -> None:
    root = _private_dir()
    try:
        run = echo_host_run(root, owner_did=OWNER, space="did:key:bench", target=target)
        payload = b"".join(
            encode_line(
                {
                    "id": i,
                    "op": "submit",
                    "command": make_command(OWNER, f"c{i}", session=f"s{i % 20}"),
                }
            )
            for i in range(count)
        )
        async with anyio.create_task_group() as tg:
            tg.start_soon(run_host, run)
            await run.ready.wait()
            async with await AsyncAgentsHostClient.connect(root / "h.sock") as client:
                await client.subscribe(("receipts",))
                done = 0
                async with anyio.create_task_group() as io:
                    io.start_soon(client.transport.send, payload)
                    while done < count:
                        reply = decode_reply(await client.transport.receive_frame())
                        if reply.event is not None and reply.data["status"] != "in-flight":
                            done += 1
            run.stop_requested.set()
    finally:
        shutil.rmtree(root, ignore_errors=True)


async def _health_run(count: int, capture: list[bytes] | None = None) -> float:
    """Time ``count`` health round trips on one connection to a no-op-driver host."""
    root = _private_dir()
    try:
        run = echo_host_run(root, owner_did=OWNER, space="did:key:bench")
        async with anyio.create_task_group() as tg:
            tg.start_soon(run_host, run)
            await run.ready.wait()
            path = str(root / "h.sock")
            if capture is not None:
                capture.append(await _first_reply(path, HEALTH))
            elapsed = await _line_driver(HEALTH)(path, count)
            run.stop_requested.set()
        return elapsed
    finally:
        shutil.rmtree(root, ignore_errors=True)


_CLUSTER: list[Any] = []


def _postgres_database() -> str | None:
    """Return a fresh database in a throwaway cluster (started once), or ``None``."""
    try:
        import psycopg  # noqa: F401

        from shedproto.testing._postgres import PostgresCluster, find_postgres_bin
    except ImportError:
        return None
    if not _CLUSTER:
        bin_dir = find_postgres_bin()
        if bin_dir is None:
            return None
        cluster = PostgresCluster(bin_dir)
        atexit.register(cluster.close)
        _CLUSTER.append(cluster)
    database: str = _CLUSTER[0].create_database()
    return database


def _postgres_case(count: int) -> Case | None:
    if _postgres_database() is None:
        print("agents-host: PostgreSQL case left out (no PostgreSQL binaries or no psycopg)")
        return None

    def on_sqlite() -> float:
        start = time.perf_counter()
        anyio.run(_end_to_end, count)
        return time.perf_counter() - start

    def on_postgres() -> float:
        url = _postgres_database()
        start = time.perf_counter()
        anyio.run(_end_to_end, count, url)
        return time.perf_counter() - start

    return Case(
        name=f"agents-host: {count} commands end to end, PostgreSQL target vs SQLite target",
        baseline=on_sqlite,
        candidate=on_postgres,
        target=0.3,
        units=count,
        unit="command",
        repeat=3,
    )


def cases(quick: bool) -> list[Case]:
    """Return the agents-host cases (``quick``: 50 commands instead of 300)."""
    count = 50 if quick else 300
    postgres = _postgres_case(count)
    round_trips = 1000 if quick else 5000
    captured: list[bytes] = []
    anyio.run(_health_run, 0, captured)
    health = captured[0]
    raw_dir = _private_dir()
    atexit.register(shutil.rmtree, raw_dir, True)
    counter = iter(range(1 << 30))

    def raw_health() -> float:
        path = str(raw_dir / f"r{next(counter)}.sock")
        return anyio.run(_raw_server, path, _replier(health), _line_driver(HEALTH), round_trips)

    def end_to_end() -> float:
        start = time.perf_counter()
        anyio.run(_end_to_end, count)
        return time.perf_counter() - start

    return [
        Case(
            name=f"agents-host: {count} commands end to end (no-op driver) vs their ledger writes",
            baseline=timed(lambda: _ledger_only(count)),
            candidate=end_to_end,
            target=0.3,
            units=count,
            unit="command",
            repeat=3,
        ),
        Case(
            name=f"agents-host: ledger writes of {count} commands, 20 sessions at once vs serial",
            baseline=timed(lambda: _ledger_only(count)),
            candidate=timed(lambda: _ledger_concurrent(count)),
            target=2.0,
            units=count,
            unit="command",
            repeat=3,
        ),
        Case(
            name=f"agents-host: SQLite target, {2 * count} receipts vs the ledger writes",
            baseline=timed(lambda: _ledger_only(count)),
            candidate=timed(lambda: _target_only(count)),
            target=1.0,
            units=count,
            unit="command",
            repeat=3,
        ),
        Case(
            name=f"agents-host: SQLite target, {2 * count} receipts into a full index,"
            " new row validated vs whole index re-validated",
            baseline=_target_full_index(count, _RevalidatingTarget),
            candidate=_target_full_index(count, SqliteTarget),
            target=2.0,
            units=count,
            unit="command",
            repeat=3,
        ),
        Case(
            name=f"agents-host: API server, health, vs raw anyio server ({round_trips} rt)",
            baseline=raw_health,
            candidate=lambda: anyio.run(_health_run, round_trips),
            target=0.95,
            units=round_trips,
            unit="round trip",
            repeat=3 if quick else 5,
        ),
        *([] if postgres is None else [postgres]),
    ]
