"""``running_host_agent``: a reference shed-host-agent for an ``async with`` block."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shedproto.servers.host_agent import HostAgentServer

__all__ = ["running_host_agent"]


@asynccontextmanager
async def running_host_agent() -> AsyncIterator[HostAgentServer]:
    """Run a reference host agent on a fresh short directory for the ``async with`` block.

    It is a :class:`~shedproto.servers.host_agent.HostAgentServer`.

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
