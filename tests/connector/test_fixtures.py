"""The connector's pytest fixtures."""

from __future__ import annotations

import stat
import sys

from shedproto.connector import in_flight_receipt, lock_directory, state_directory
from shedproto.servers.connector import CommandLedger, ProcessLock
from shedproto.testing._connector import AgentsHostDirs


def test_agents_host_dirs_select_private_directories(agents_host_dirs: AgentsHostDirs) -> None:
    env = agents_host_dirs.env
    state = state_directory(env, platform=sys.platform)
    locks = lock_directory(env, platform=sys.platform, uid=0)
    assert state.startswith(str(agents_host_dirs.state_home))
    assert locks == str(agents_host_dirs.lock_dir)
    assert stat.S_IMODE(agents_host_dirs.lock_dir.stat().st_mode) == 0o700
    with ProcessLock.acquire(f"{locks}/target-x.lock"):
        pass


def test_command_ledger_fixture(command_ledger: CommandLedger) -> None:
    assert command_ledger.generation == 0
    command_ledger.put(
        in_flight_receipt(
            owner_did="did:key:o",
            command_id="c",
            source_id="codex",
            native_session_id="s",
            claimed_at="2026-07-20T00:00:00.000Z",
        )
    )
    assert CommandLedger.open(command_ledger.path).generation == 1
