"""Chaos on a fleet: hosts killed and restarted, the database restarted and stopped.

Three hosts run as processes (:mod:`.chaos_host`) on one PostgreSQL database.
Commands are submitted through the database in three waves; between them
one host is ``kill -9``-ed and restarted, the database is restarted
(``pg_ctl restart -m fast``) and then stopped for a few seconds. At the end:
exactly one terminal receipt per command, no provider call twice (the
hosts' durable call journals), per-session order, every host ``live`` and
``ready`` with nothing left to publish, and every host stopping cleanly on
SIGTERM.

``SHEDPROTO_CHAOS_COMMANDS`` (default 30) sets the commands per host and
wave; ``SHEDPROTO_CHAOS_SEED`` (default 28) picks which host dies, the
outage's length and the turns' durations, so a failing run is repeated
with its seed.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

from shedproto.connector import TERMINAL_STATUSES, Receipt, TargetIdentity
from shedproto.testing import PostgresCluster
from shedproto.testing._agents_host import make_command

pytest.importorskip("psycopg", reason="psycopg is not installed (the postgres extra)")

from shedproto.servers.agents_host.target_postgres import PostgresTarget, list_fleet

from .chaos_host import OWNER

T = TypeVar("T")

COMMANDS = int(os.environ.get("SHEDPROTO_CHAOS_COMMANDS", "30"))
SEED = int(os.environ.get("SHEDPROTO_CHAOS_SEED", "28"))
NAMES = ["chaos-a", "chaos-b", "chaos-c"]
SESSIONS = 6
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(max(240, COMMANDS * 3))


def key_of(name: str) -> str:
    return TargetIdentity("http://localhost:8000", f"did:key:{name}", OWNER).key


def wait_for(what: str, predicate: Callable[[], T | None], limit: float = 60) -> T:
    """Poll ``predicate`` (database failures count as not yet) until it returns a value."""
    deadline = time.monotonic() + limit
    last: BaseException | None = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
        except Exception as exc:  # the database is still coming back
            last = exc
            value = None
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"{what} did not happen within {limit}s (seed {SEED}); last error {last}")


class Host:
    """One host process; :meth:`start` waits for its ``Ready;`` line."""

    def __init__(self, root: Path, url: str, name: str, turn_ms: int) -> None:
        self.root, self.url, self.name, self.turn_ms = root, url, name, turn_ms
        self.process: subprocess.Popen[str] | None = None
        self.journal = root / name / "calls.log"

    def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.agents_host.chaos_host",
                str(self.root),
                self.url,
                self.name,
                str(self.turn_ms),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=str(ROOT),
        )
        assert self.process.stdout is not None
        lines = []
        for line in self.process.stdout:
            lines.append(line)
            if line.startswith("Ready;"):
                return
        raise AssertionError(f"{self.name} did not start: {lines} {self.process.stderr.read()}")  # type: ignore[union-attr]

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.communicate(timeout=30)  # reaps it and closes its pipes

    def stop(self) -> tuple[int, str]:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        _, err = self.process.communicate(timeout=60)
        return self.process.returncode, err

    def calls(self) -> list[tuple[str, str]]:
        if not self.journal.exists():
            return []
        rows = [line.split("\t", 1) for line in self.journal.read_text().splitlines()]
        return [(session, text) for session, text in rows]


@contextmanager
def hosts(url: str, rng: random.Random) -> Iterator[list[Host]]:
    root = Path(tempfile.mkdtemp(prefix="sp-ch-", dir="/tmp"))
    fleet = [Host(root, url, name, rng.choice([0, 5, 20])) for name in NAMES]
    try:
        for host in fleet:
            host.start()
        yield fleet
    finally:
        for host in fleet:
            if host.process is not None and host.process.poll() is None:
                host.process.kill()
                host.process.communicate(timeout=30)
        shutil.rmtree(root, ignore_errors=True)


def submit(url: str, wave: str) -> dict[str, list[dict[str, Any]]]:
    """Append ``COMMANDS`` prompts per host (through the database); return them by host."""
    sent: dict[str, list[dict[str, Any]]] = {}
    for name in NAMES:

        def attach(name: str = name) -> PostgresTarget:
            return PostgresTarget.attach(url, key_of(name))

        producer = wait_for("attach", attach)
        try:
            sent[name] = [
                make_command(OWNER, f"{name}-{wave}-{i}", session=f"s{i % SESSIONS}")
                for i in range(COMMANDS)
            ]
            for command in sent[name]:
                producer.append_command(command, None)
        finally:
            producer.close()
    return sent


def receipts_of(url: str, name: str) -> list[Receipt]:
    reader = PostgresTarget.attach(url, key_of(name))
    try:
        return reader.list_receipts(limit=COMMANDS * 10)
    finally:
        reader.close()


def health_of(url: str, name: str) -> Any:
    reader = PostgresTarget.attach(url, key_of(name))
    try:
        return reader.read_health()
    finally:
        reader.close()


def diagnose(url: str, name: str, commands: list[dict[str, Any]], fleet: list[Host]) -> str:
    """Say what is missing for host ``name``: receipts, queue, health's last entries."""
    receipts = {r.commandId: r.status for r in receipts_of(url, name)}
    missing = [(c["id"], receipts.get(c["id"])) for c in commands]
    missing = [m for m in missing if m[1] not in TERMINAL_STATUSES]
    reader = PostgresTarget.attach(url, key_of(name))
    try:
        queues = reader.queue_counts()
    finally:
        reader.close()
    health = health_of(url, name)
    activity = [] if health is None else [(e.type, e.message) for e in health.activity[-25:]]
    host = next(h for h in fleet if h.name == name)
    liveness = [(h.key[:8], h.liveness, h.heartbeat_age) for h in list_fleet(url)]
    stacks = ""
    if host.process is not None:
        if host.process.poll() is None:
            host.process.send_signal(signal.SIGUSR1)
            time.sleep(1)
            host.process.kill()
        stacks = f"exit {host.process.wait()}: " + host.process.communicate(timeout=30)[1][-6000:]
    return (
        f"missing {missing[:20]} ({len(missing)}); queues {queues};"
        f" health {None if health is None else health.status}; calls {len(host.calls())};"
        f" liveness {liveness}; activity {activity}\nstderr:\n{stacks}"
    )


def check_host(url: str, host: Host, sent: list[dict[str, Any]], *, victim: bool) -> None:
    """Exactly one terminal receipt per command, no provider call twice, per-session order."""
    receipts = [r for r in receipts_of(url, host.name) if r.status in TERMINAL_STATUSES]
    ids = [r.commandId for r in receipts]
    assert sorted(ids) == sorted(c["id"] for c in sent)  # exactly one each
    # a command in flight at the kill -9 is orphaned (unknown), never run again
    allowed = {"succeeded"} | ({"unknown"} if victim else set())
    assert {r.status for r in receipts} <= allowed, (SEED, host.name)
    calls = host.calls()
    texts = [text for _, text in calls]
    assert len(texts) == len(set(texts)), (SEED, host.name)  # no call twice
    for session in {c["nativeSessionId"] for c in sent}:
        called = [t for s, t in calls if s == session]
        order = [c["payload"]["text"] for c in sent]
        assert called == [t for t in order if t in set(called)], (SEED, host.name)
    for receipt in receipts:
        if receipt.status == "succeeded":
            assert f"prompt {receipt.commandId}" in texts


def test_fleet_survives_kills_and_database_outages(postgres_cluster: PostgresCluster) -> None:
    rng = random.Random(SEED)
    url = postgres_cluster.create_database()
    sent: dict[str, list[dict[str, Any]]] = {name: [] for name in NAMES}
    with hosts(url, rng) as fleet:
        victim = rng.choice(fleet)

        def add(wave: dict[str, list[dict[str, Any]]]) -> None:
            for name, commands in wave.items():
                sent[name] += commands

        def done(name: str) -> bool:
            receipts = receipts_of(url, name)
            terminal = {r.commandId for r in receipts if r.status in TERMINAL_STATUSES}
            return terminal >= {c["id"] for c in sent[name]}

        add(submit(url, "w1"))
        # kill -9 one host while it works through its queue, then restart it
        wait_for("the victim's first calls", lambda: len(victim.calls()) >= COMMANDS // 4)
        victim.kill()
        victim.start()
        # restart the database while commands run
        add(submit(url, "w2"))
        time.sleep(rng.uniform(0, 0.3))
        postgres_cluster.restart()
        # stop it for a few seconds, then bring it back
        wait_for("the second wave's first calls", lambda: all(h.calls() for h in fleet))
        add(submit(url, "w3"))
        time.sleep(rng.uniform(0, 0.3))
        postgres_cluster.stop()
        try:
            time.sleep(rng.uniform(2, 4))
        finally:
            postgres_cluster.start()
        for name in NAMES:
            try:

                def finished(name: str = name) -> bool:
                    return done(name)

                wait_for(f"every receipt of {name}", finished, limit=120)
            except AssertionError as exc:
                raise AssertionError(f"{exc}\n{diagnose(url, name, sent[name], fleet)}") from None

        for host in fleet:
            check_host(url, host, sent[host.name], victim=host is victim)

        def settled() -> bool:
            for name in NAMES:
                health = health_of(url, name)
                if health is None or health.status != "ready":
                    return False
                if health.commandProcessing.pendingReceiptPublications:
                    return False
            return all(h.liveness == "live" for h in list_fleet(url))

        wait_for("every host ready, published and live", settled, limit=60)
        stops = [host.stop() for host in fleet]
        assert [code for code, _ in stops] == [0, 0, 0], (SEED, stops)
    assert {h.liveness for h in list_fleet(url)} == {"gone"}
