"""The ``herdr_server`` fixture: a running herdr reference server with real PTY panes."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from shedproto.servers.herdr import HerdrServer

__all__ = ["herdr_server"]


@pytest.fixture
async def herdr_server() -> AsyncIterator[HerdrServer]:
    """Yield a running :class:`HerdrServer` (protocol 22, herdr 0.9.5) on a fresh short socket path.

    Panes run ``/bin/sh`` in their PTYs. Point a client at ``server.path``
    (``AsyncHerdrClient.for_socket(server.path)``) or set
    ``HERDR_SOCKET_PATH`` to it. On teardown the server stops, every pane
    process is hung up and reaped, and the directory is removed. Needs the
    anyio pytest plugin (an async test).
    """
    directory = Path(tempfile.mkdtemp(prefix="hd-", dir="/tmp"))
    try:
        async with anyio.create_task_group() as tg:
            server = HerdrServer(directory / "herdr.sock", shell=["/bin/sh"], cwd=str(directory))
            await tg.start(server.serve)
            try:
                yield server
            finally:
                server.shutdown()
    finally:
        shutil.rmtree(directory, ignore_errors=True)
