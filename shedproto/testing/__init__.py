"""The shedproto pytest plugin (registered as the ``pytest11`` entry point ``shedproto``).

Fixtures:

* ``short_socket_dir``: a fresh private directory under ``/tmp`` with a short
  path, so socket paths stay well under the AF_UNIX limit (107 bytes on
  Linux) that pytest's deep ``tmp_path`` can exceed. Removed afterwards.
* ``host_agent_server``: a running reference shed-host-agent
  (:class:`shedproto.servers.host_agent.HostAgentServer`) on a private
  socket directory; async tests only.

* ``desktop_server`` / ``desktop_server_factory``: a running reference
  shed-desktop control socket (Tauri dialect in test mode by default; the
  factory takes ``dialect``, ``test_mode``, ``model``, ...), served from a
  background thread so plain and async tests can use it; seed and inspect
  ``.model``. ``running_desktop_server(path, ...)`` is the same as a
  context manager.

* ``herdr_server``: a running herdr reference server
  (:class:`shedproto.servers.herdr.HerdrServer`, protocol 21, ``/bin/sh``
  panes on real PTYs) on a private socket; async tests only.

* ``agents_host_dirs``: private agents-host state and lock directories and
  the environment mapping (``XDG_STATE_HOME``, ``CF_AGENTS_HOST_LOCK_DIR``)
  that selects them. ``command_ledger``: an empty durable command ledger
  (:class:`shedproto.servers.connector.CommandLedger`) inside them.

* ``claude_projects``: a private Claude config directory whose ``write``
  adds transcripts in Claude Code's real layout
  (``projects/<encoded cwd>/<uuid>.jsonl``), for the ``claude-agent-sdk``
  driver's ``configDir``.

* ``agents_host``: a running reference agents-host (socket API, SQLite
  target) with one ``echo`` source served by the in-memory ``EchoDriver``;
  yields a ``RunningAgentsHost`` (``socket``, ``owner_did``, ``driver``);
  async tests only. ``make_command`` builds commands for it.

* ``cassette_server`` and ``--record-mode=none|once|new_episodes|all``:
  record a protocol session through the validating proxy once, replay the
  cassette afterwards (see :mod:`shedproto.testing._cassette`).

Protocol issues add their reference-server fixtures here.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ._agentshost import EchoDriver, RunningAgentsHost, agents_host, make_command
from ._cassette import CassetteServer, cassette_server, pytest_addoption
from ._connector import agents_host_dirs, command_ledger
from ._desktop import desktop_server, desktop_server_factory, running_desktop_server
from ._drivers import ClaudeProjects, claude_projects
from ._herdr import herdr_server
from ._hostagent import host_agent_server

__all__ = [
    "CassetteServer",
    "cassette_server",
    "pytest_addoption",
    "ClaudeProjects",
    "EchoDriver",
    "RunningAgentsHost",
    "agents_host",
    "make_command",
    "agents_host_dirs",
    "claude_projects",
    "command_ledger",
    "desktop_server",
    "desktop_server_factory",
    "herdr_server",
    "host_agent_server",
    "running_desktop_server",
    "short_socket_dir",
]


@pytest.fixture
def short_socket_dir() -> Iterator[Path]:
    """Yield a new 0700 directory with a short path for Unix sockets; deleted after the test."""
    path = Path(tempfile.mkdtemp(prefix="sp-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
