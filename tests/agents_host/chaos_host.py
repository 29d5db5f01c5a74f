"""One fleet host as a process, for the chaos test: ``python -m tests.agents_host.chaos_host``.

Arguments: ``ROOT URL NAME TURN_MS``. The host runs on the PostgreSQL
database at ``URL`` with the space ``did:key:NAME`` and an in-memory echo
source whose every provider call is appended (and fsync-ed) to
``ROOT/NAME/calls.log`` before the turn runs, so the journal survives a
``kill -9``; each turn then takes up to ``TURN_MS`` milliseconds. It prints
``Ready;`` when it serves and stops on SIGTERM like ``agents-host run``.
"""

from __future__ import annotations

import faulthandler
import os
import random
import signal
import sys
from pathlib import Path
from typing import Any

import anyio

from shedproto.connector import AgentSourceConfig
from shedproto.servers.agents_host import HostRun, run_host
from shedproto.testing._agents_host import EchoDriver, echo_host_run

OWNER = "did:key:z6MkFleetOwner"


class JournalDriver(EchoDriver):
    """An echo driver that journals each provider call durably, then takes its time."""

    def __init__(self, source: AgentSourceConfig, journal: Path, turn_ms: int) -> None:
        super().__init__(source)
        self.journal = journal
        self.turn_ms = turn_ms
        self.random = random.Random(os.getpid())

    async def _turn(self, session: str, text: str, options: Any) -> Any:
        with self.journal.open("a") as handle:
            handle.write(f"{session}\t{text}\n")
            handle.flush()
            os.fsync(handle.fileno())
        if self.turn_ms:
            await anyio.sleep(self.random.uniform(0, self.turn_ms) / 1000)
        return await super()._turn(session, text, options)


def main(argv: list[str]) -> int:
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # the test's diagnosis
    root, url, name, turn_ms = Path(argv[0]), argv[1], argv[2], int(argv[3])
    base = root / name
    base.mkdir(parents=True, exist_ok=True, mode=0o700)
    journal = base / "calls.log"

    def factory(source: AgentSourceConfig) -> JournalDriver:
        return JournalDriver(source, journal, turn_ms)

    run: HostRun = echo_host_run(
        base, owner_did=OWNER, space=f"did:key:{name}", target=url, driver_factory=factory
    )
    run.handle_signals = True
    run.heartbeat_interval = 0.5
    run.out = lambda line: print(line, flush=True)
    run.err = lambda line: print(line, file=sys.stderr, flush=True)
    return anyio.run(run_host, run)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
