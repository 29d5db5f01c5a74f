"""The shedproto pytest plugin (registered as the ``pytest11`` entry point ``shedproto``).

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

Lazy by design: pytest imports this plugin in every session of every
environment shedproto is installed in, so loading it must cost nothing. A
fixture module here imports only pytest, the standard library and typing
helpers at the top; the server it runs (and anyio, pyte, the protocol cores)
is imported inside the fixture or helper body, and names used only in
annotations come from ``if TYPE_CHECKING:`` imports. Helpers that need heavy
imports at module level (``EchoDriver``) live in their own module and are
listed in ``_LAZY`` below, which ``__getattr__`` imports on first use.
``tests/test_plugin.py`` fails if loading the plugin imports
``shedproto.servers``, ``shedproto.clients``, anyio or pyte.

* ``postgres_cluster`` / ``postgres_url``: a throwaway PostgreSQL cluster
  (session scope, Unix socket only, run as ``postgres`` when root) and a
  fresh database in it per test; skip where no PostgreSQL binaries exist.
  ``agents_host_postgres`` / ``agents_host_postgres_sync`` are the
  ``agents_host`` fixtures on such a database instead of SQLite.

* ``cassette_server`` and ``--record-mode=none|once|new_episodes|all``:
  record a protocol session through the validating proxy once, replay the
  cassette afterwards (see :mod:`shedproto.testing._cassette`).
"""

from __future__ import annotations

import importlib
import inspect
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ._agents_host_fixtures import (
    RunningAgentsHost,
    agents_host,
    agents_host_postgres,
    agents_host_postgres_sync,
    agents_host_sync,
    running_agents_host,
)
from ._cassette import CassetteServer, cassette_server, pytest_addoption
from ._connector import AgentsHostDirs, agents_host_dirs, command_ledger
from ._desktop import (
    RunningDesktopServer,
    desktop_server,
    desktop_server_factory,
    running_desktop_server,
)
from ._drivers import ClaudeProjects, claude_projects
from ._herdr import herdr_server, herdr_server_sync, running_herdr_server
from ._herdr_shim import HerdrShim, herdr_shim
from ._host_agent import host_agent_server, host_agent_server_sync, running_host_agent
from ._postgres import PostgresCluster, postgres_cluster, postgres_url
from ._threaded import ServerThread, serve_in_thread

if TYPE_CHECKING:
    from ._agents_host import EchoDriver, make_command

__all__ = [
    "AgentsHostDirs",
    "CassetteServer",
    "cassette_server",
    "pytest_addoption",
    "ClaudeProjects",
    "EchoDriver",
    "HerdrShim",
    "RunningAgentsHost",
    "RunningDesktopServer",
    "ServerThread",
    "agents_host",
    "agents_host_postgres",
    "agents_host_postgres_sync",
    "agents_host_sync",
    "make_command",
    "agents_host_dirs",
    "claude_projects",
    "command_ledger",
    "desktop_server",
    "desktop_server_factory",
    "herdr_server",
    "herdr_server_sync",
    "herdr_shim",
    "host_agent_server",
    "host_agent_server_sync",
    "running_agents_host",
    "PostgresCluster",
    "postgres_cluster",
    "postgres_url",
    "running_desktop_server",
    "running_herdr_server",
    "running_host_agent",
    "serve_in_thread",
    "short_socket_dir",
]

_LAZY = {"EchoDriver": "._agents_host", "make_command": "._agents_host"}
"""Public names whose modules import heavy dependencies: imported on first attribute access."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)


@pytest.fixture
def short_socket_dir() -> Iterator[Path]:
    """Yield a new 0700 directory with a short path for Unix sockets; deleted after the test."""
    path = Path(tempfile.mkdtemp(prefix="sp-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.hookimpl(tryfirst=True)
def pytest_fixture_setup(
    fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
) -> None:
    """Fail with one clear line when a plain test asks for one of this plugin's async fixtures.

    The message names the ``_sync`` twin. Any other fixture is left to pytest
    and the anyio plugin (which runs async fixtures for anyio tests).
    """
    func = fixturedef.func
    if (
        (inspect.isasyncgenfunction(func) or inspect.iscoroutinefunction(func))
        and getattr(func, "__module__", "").startswith(f"{__name__}.")
        and "anyio_backend" not in request.fixturenames
    ):
        name = fixturedef.argname
        pytest.fail(
            f"{request.node.name!r} is a plain (sync) test but asked for the async fixture "
            f"{name!r}: use {name + '_sync'!r} (the server in a background thread) or make "
            "the test `async def` with the anyio pytest plugin",
            pytrace=False,
        )
