"""``host_agent_server`` (async) and ``host_agent_server_sync``: a reference shed-host-agent."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ._threaded import ServerThread, serve_in_thread

if TYPE_CHECKING:
    from shedproto.servers.host_agent import HostAgentServer

__all__ = ["host_agent_server", "host_agent_server_sync", "running_host_agent"]


@asynccontextmanager
async def running_host_agent() -> AsyncIterator[HostAgentServer]:
    """Run a :class:`HostAgentServer` on a fresh short directory for the ``async with`` block.

    Policies start as deny-all for every namespace (an empty config), the
    approval timeout is 25 s; change them through the server's API. Point
    clients at ``server.socket_dir`` (or set ``SHED_HOST_AGENT_SOCKET_DIR``
    to it). On exit the server is shut down, pending approvals fail closed,
    and the directory is removed.
    """
    import anyio

    from shedproto.servers.host_agent import HostAgentServer

    directory = Path(tempfile.mkdtemp(prefix="sha-", dir="/tmp"))
    try:
        async with anyio.create_task_group() as tg:
            server: HostAgentServer = await tg.start(HostAgentServer(directory / "s").serve)
            try:
                yield server
            finally:
                server.shutdown()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


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
