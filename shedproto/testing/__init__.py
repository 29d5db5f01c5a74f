"""Reference servers for tests: pytest fixtures, and the same servers outside pytest.

Installing shedproto registers its pytest plugin (:mod:`shedproto.testing.plugin`,
the ``pytest11`` entry point ``shedproto``), so the fixtures below need no
import. Importing this package needs no pytest: ``running_host_agent()``,
``running_herdr_server()``, ``running_agents_host()``,
``running_desktop_server()`` and ``serve_in_thread()`` work after a plain
``pip install shedproto``; the fixture names and the fixture-only types
(``HerdrShim``, ``CassetteServer``, ...) import pytest when first used.

Fixtures. *sync* ones work in a plain ``def test_...`` (and in async tests);
*async* ones need an ``async def`` test run by the anyio pytest plugin, and
each has a ``<name>_sync`` twin that serves the same server from a
background thread. Asking for an async fixture from a plain test fails at
setup with a message naming its twin.

* ``short_socket_dir`` (sync): a fresh private directory under ``/tmp`` with
  a short path, so socket paths stay well under the AF_UNIX limit (107 bytes
  on Linux) that pytest's deep ``tmp_path`` can exceed. Removed afterwards.
* ``host_agent_server`` (async) / ``host_agent_server_sync`` (sync): a
  reference shed-host-agent
  (:class:`shedproto.servers.host_agent.HostAgentServer`) on a private
  socket directory (``.socket_dir``).
* ``herdr_server`` (async) / ``herdr_server_sync`` (sync): a herdr reference
  server (:class:`shedproto.servers.herdr.HerdrServer`, protocol 21,
  ``/bin/sh`` panes on real PTYs) on a private socket (``.path``).
* ``herdr_shim`` (sync): ``herdr_server_sync`` plus an executable ``herdr``
  (``shedproto herdr cli``) first on ``PATH`` and ``HERDR_SOCKET_PATH`` set,
  so a tool that shells out to ``herdr`` talks to the reference server
  (:class:`HerdrShim`: ``run(*args)``, ``socket``, ``bin_dir``).
* ``agents_host`` (async) / ``agents_host_sync`` (sync): a reference
  agents-host (socket API, SQLite target) with one ``echo`` source served by
  the in-memory ``EchoDriver`` (:class:`RunningAgentsHost`: ``socket``,
  ``owner_did``, ``driver``); ``make_command`` builds commands for it.
* ``desktop_server`` / ``desktop_server_factory`` (sync, also fine in async
  tests): a reference shed-desktop control socket (Tauri dialect in test mode
  by default; the factory takes ``dialect``, ``test_mode``, ``model``, ...)
  served from a background thread; seed and inspect ``.model``.
* ``agents_host_dirs`` (sync): private agents-host state and lock directories
  and the environment mapping (``XDG_STATE_HOME``, ``CF_AGENTS_HOST_LOCK_DIR``)
  that selects them. ``command_ledger`` (sync): an empty durable command
  ledger (:class:`shedproto.servers.connector.CommandLedger`) inside them.
* ``claude_projects`` (sync): a private Claude config directory whose
  ``write`` adds transcripts in Claude Code's real layout
  (``projects/<encoded cwd>/<uuid>.jsonl``), for the ``claude-agent-sdk``
  driver's ``configDir``.

A sync twin yields a :class:`ServerThread`: ``.server`` is the running server
(read its attributes directly); ``.call(fn, *args)`` runs ``fn`` (sync or
async) on the server's loop and returns its result; ``.start(fn, *args)``
starts a coroutine there and returns a :class:`concurrent.futures.Future`.
Outside pytest, ``running_host_agent()``, ``running_herdr_server()`` and
``running_agents_host()`` are the same servers as async context managers,
and ``serve_in_thread(running_...)`` runs one in a thread.

* ``postgres_cluster`` / ``postgres_url``: a throwaway PostgreSQL cluster
  (session scope, Unix socket only, run as ``postgres`` when root) and a
  fresh database in it per test; skip where no PostgreSQL binaries exist.
  ``agents_host_postgres`` / ``agents_host_postgres_sync`` are the
  ``agents_host`` fixtures on such a database instead of SQLite.

* ``cassette_server`` and ``--record-mode=none|once|new_episodes|all``:
  record a protocol session through the validating proxy once, replay the
  cassette afterwards (see ``docs/proxy.md``, *In a pytest suite*).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._agents_host_running import RunningAgentsHost, running_agents_host
from ._desktop import DesktopServerFactory, RunningDesktopServer, running_desktop_server
from ._herdr import running_herdr_server
from ._host_agent import running_host_agent
from ._threaded import ServerThread, serve_in_thread

if TYPE_CHECKING:
    from ._agents_host import EchoDriver, make_command
    from ._cassette import CassetteServer
    from ._connector import AgentsHostDirs
    from ._drivers import ClaudeProjects
    from ._herdr_shim import HerdrShim
    from ._postgres import PostgresCluster
    from .plugin import (
        agents_host,
        agents_host_dirs,
        agents_host_postgres,
        agents_host_postgres_sync,
        agents_host_sync,
        cassette_server,
        claude_projects,
        command_ledger,
        desktop_server,
        desktop_server_factory,
        herdr_server,
        herdr_server_sync,
        herdr_shim,
        host_agent_server,
        host_agent_server_sync,
        postgres_cluster,
        postgres_url,
        short_socket_dir,
    )

__all__ = [
    "AgentsHostDirs",
    "CassetteServer",
    "ClaudeProjects",
    "DesktopServerFactory",
    "EchoDriver",
    "HerdrShim",
    "PostgresCluster",
    "RunningAgentsHost",
    "RunningDesktopServer",
    "ServerThread",
    "agents_host",
    "agents_host_dirs",
    "agents_host_postgres",
    "agents_host_postgres_sync",
    "agents_host_sync",
    "cassette_server",
    "claude_projects",
    "command_ledger",
    "desktop_server",
    "desktop_server_factory",
    "herdr_server",
    "herdr_server_sync",
    "herdr_shim",
    "host_agent_server",
    "host_agent_server_sync",
    "make_command",
    "postgres_cluster",
    "postgres_url",
    "running_agents_host",
    "running_desktop_server",
    "running_herdr_server",
    "running_host_agent",
    "serve_in_thread",
    "short_socket_dir",
]

_LAZY = {
    "EchoDriver": "._agents_host",
    "make_command": "._agents_host",
    "CassetteServer": "._cassette",
    "AgentsHostDirs": "._connector",
    "ClaudeProjects": "._drivers",
    "HerdrShim": "._herdr_shim",
    "PostgresCluster": "._postgres",
}
"""Public names whose modules import pytest or heavy dependencies; the rest are fixtures."""

_FIXTURE_MODULE = ".plugin"


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(_LAZY.get(name, _FIXTURE_MODULE), __name__)
    return getattr(module, name)
