"""The reference servers' pytest fixtures: an async one and its ``_sync`` twin for each server.

The servers come from the pytest-free ``running_*`` context managers; this
module is imported only by the plugin (:mod:`shedproto.testing.plugin`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ._agents_host_running import RunningAgentsHost, running_agents_host
from ._desktop import DesktopServerFactory, RunningDesktopServer, running_desktop_server
from ._herdr import running_herdr_server
from ._host_agent import running_host_agent
from ._threaded import ServerThread, serve_in_thread

if TYPE_CHECKING:
    from shedproto.desktop import Dialect, LaunchPolicy
    from shedproto.servers.desktop import DesktopModel
    from shedproto.servers.herdr import HerdrServer
    from shedproto.servers.host_agent import HostAgentServer

__all__ = [
    "agents_host",
    "agents_host_postgres",
    "agents_host_postgres_sync",
    "agents_host_sync",
    "desktop_server",
    "desktop_server_factory",
    "herdr_server",
    "herdr_server_sync",
    "host_agent_server",
    "host_agent_server_sync",
]


@pytest.fixture
async def herdr_server() -> AsyncIterator[HerdrServer]:
    """Yield a running :class:`HerdrServer` (see :func:`running_herdr_server`); async tests."""
    async with running_herdr_server() as server:
        yield server


@pytest.fixture
def herdr_server_sync() -> Iterator[ServerThread[HerdrServer]]:
    """Yield a :class:`ServerThread` running :func:`running_herdr_server`; plain ``def`` tests.

    Talk to it with ``BlockingHerdrClient.for_socket(handle.server.path)``.
    """
    with serve_in_thread(running_herdr_server) as handle:
        yield handle


@pytest.fixture
async def host_agent_server() -> AsyncIterator[HostAgentServer]:
    """Yield a running :class:`HostAgentServer` (see :func:`running_host_agent`); async tests."""
    async with running_host_agent() as server:
        yield server


@pytest.fixture
def host_agent_server_sync() -> Iterator[ServerThread[HostAgentServer]]:
    """Yield a :class:`ServerThread` running :func:`running_host_agent`; plain ``def`` tests.

    ``handle.server.socket_dir`` is where clients connect; change the server
    with ``handle.call(handle.server.set_policy, ...)`` and ask for an
    approval with ``handle.start(handle.server.request_approval, ...)``.
    """
    with serve_in_thread(running_host_agent) as handle:
        yield handle


@pytest.fixture
def desktop_server_factory(short_socket_dir: Path) -> Iterator[DesktopServerFactory]:
    """Yield ``start(**options)`` -> a running server (options of :func:`running_desktop_server`).

    Every server started through it is shut down after the test.
    """
    with ExitStack() as stack:
        count = 0

        def start(
            *,
            dialect: Dialect | str = "tauri",
            test_mode: bool = True,
            model: DesktopModel | None = None,
            mock_base_url: str | None = None,
            launch_policy: LaunchPolicy | None = None,
            release: str = "latest",
        ) -> RunningDesktopServer:
            from shedproto.desktop import Dialect

            nonlocal count
            count += 1
            path = short_socket_dir / f"desktop-{Dialect(dialect).value}-{count}.sock"
            return stack.enter_context(
                running_desktop_server(
                    path,
                    dialect=dialect,
                    test_mode=test_mode,
                    model=model,
                    mock_base_url=mock_base_url,
                    launch_policy=launch_policy,
                    release=release,
                )
            )

        yield start


@pytest.fixture
def desktop_server(desktop_server_factory: DesktopServerFactory) -> RunningDesktopServer:
    """Return a running Tauri-dialect reference server in test mode, with an empty model."""
    return desktop_server_factory()


@pytest.fixture
async def agents_host() -> AsyncIterator[RunningAgentsHost]:
    """Yield a running agents-host on the SQLite target (see :func:`running_agents_host`)."""
    async with running_agents_host(None) as host:
        yield host


@pytest.fixture
async def agents_host_postgres(postgres_url: str) -> AsyncIterator[RunningAgentsHost]:
    """Yield a running agents-host on a fresh PostgreSQL database (``postgres_url``).

    Skips, saying why, where no PostgreSQL binaries or no ``postgres`` extra exist.
    """
    async with running_agents_host(postgres_url) as host:
        yield host


@pytest.fixture
def agents_host_sync() -> Iterator[ServerThread[RunningAgentsHost]]:
    """Yield a :class:`ServerThread` running :func:`running_agents_host`; plain ``def`` tests.

    ``handle.server.socket`` is the API socket (``BlockingAgentsHostClient``
    or the CLI); set ``handle.server.driver.gate`` through ``handle.call``.
    """
    with serve_in_thread(running_agents_host) as handle:
        yield handle


@pytest.fixture
def agents_host_postgres_sync(postgres_url: str) -> Iterator[ServerThread[RunningAgentsHost]]:
    """Yield :func:`agents_host_sync`'s thread with the host on ``postgres_url``."""
    with serve_in_thread(lambda: running_agents_host(postgres_url)) as handle:
        yield handle
