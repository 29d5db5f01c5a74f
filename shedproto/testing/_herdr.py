"""``running_herdr_server``: a herdr reference server with PTY panes, for ``async with``."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shedproto.servers.herdr import HerdrServer

__all__ = ["running_herdr_server"]


@asynccontextmanager
async def running_herdr_server() -> AsyncIterator[HerdrServer]:
    """Run a herdr reference server (protocol 22, herdr 0.9.5) on a fresh short socket path.

    It is a :class:`~shedproto.servers.herdr.HerdrServer`; panes run
    ``/bin/sh`` in their PTYs. Point a client at ``server.path``
    (``AsyncHerdrClient.for_socket(server.path)``) or set
    ``HERDR_SOCKET_PATH`` to it. On exit the server stops, every pane
    process is hung up and reaped, and the directory is removed. herdr's
    config directory (agent manifests, plugin folders) is ``config/`` and the
    home ``integration.install`` edits is ``home/`` inside that directory,
    never the user's own.
    """
    import anyio

    from shedproto.servers.herdr import HerdrServer

    directory = Path(tempfile.mkdtemp(prefix="hd-", dir="/tmp"))
    try:
        async with anyio.create_task_group() as tg:
            server = HerdrServer(
                directory / "herdr.sock",
                shell=["/bin/sh"],
                cwd=str(directory),
                config_dir=str(directory / "config"),
                home=str(directory / "home"),
            )
            await tg.start(server.serve)
            try:
                yield server
            finally:
                server.shutdown()
    finally:
        shutil.rmtree(directory, ignore_errors=True)
