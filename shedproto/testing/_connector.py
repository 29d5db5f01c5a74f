"""Fixtures for the agents-host connector: private state and lock directories, a ledger."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from shedproto.servers.connector import CommandLedger

__all__ = ["AgentsHostDirs", "agents_host_dirs", "command_ledger"]


@dataclass(frozen=True)
class AgentsHostDirs:
    """Private (``0700``) state and lock directories and the environment that selects them.

    Pass ``env`` to :func:`shedproto.connector.state_directory` and
    :func:`~shedproto.connector.lock_directory` (or ``monkeypatch`` it into
    ``os.environ``) and every ledger and lock lands under ``root``.
    """

    root: Path
    state_home: Path
    lock_dir: Path
    env: dict[str, str] = field(default_factory=dict)
    target: str | None = None
    """The agents-host target: ``None`` (SQLite) or a ``postgresql://`` URL (also in ``env``)."""


@pytest.fixture
def agents_host_dirs() -> Iterator[AgentsHostDirs]:
    """Yield fresh private agents-host directories under ``/tmp``; removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix="sp-cf-", dir="/tmp"))
    state_home = root / "state"
    lock_dir = root / "locks"
    for directory in (state_home, lock_dir):
        directory.mkdir(mode=0o700)
        os.chmod(directory, 0o700)
    env = {
        "XDG_STATE_HOME": str(state_home),
        "CF_AGENTS_HOST_LOCK_DIR": str(lock_dir),
        "HOME": str(root),
    }
    try:
        yield AgentsHostDirs(root=root, state_home=state_home, lock_dir=lock_dir, env=env)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def command_ledger(agents_host_dirs: AgentsHostDirs) -> CommandLedger:
    """Open an empty :class:`~shedproto.servers.connector.CommandLedger` in a private directory.

    Its file is ``<state>/commonfabric/agents-host/target-test.command-ledger.json``
    and does not exist until the first write.
    """
    from shedproto.servers.connector import CommandLedger

    directory = agents_host_dirs.state_home / "commonfabric" / "agents-host"
    return CommandLedger.open(directory / "target-test.command-ledger.json")
