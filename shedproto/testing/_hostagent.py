"""The ``host_agent_server`` fixture: a running reference shed-host-agent on a private directory."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from shedproto.servers.host_agent import HostAgentServer

__all__ = ["host_agent_server"]


@pytest.fixture
async def host_agent_server() -> AsyncIterator[HostAgentServer]:
    """Yield a running :class:`HostAgentServer` whose sockets live in a fresh short directory.

    Policies start as deny-all for every namespace (an empty config), the
    approval timeout is 25 s; change them through the server's API. Point
    clients at ``server.socket_dir`` (or set ``SHED_HOST_AGENT_SOCKET_DIR``
    to it). On teardown the server is shut down, pending approvals fail
    closed, and the directory is removed. Needs the anyio pytest plugin (an
    async test).
    """
    import anyio  # imported lazily: loading the plugin stays cheap

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
