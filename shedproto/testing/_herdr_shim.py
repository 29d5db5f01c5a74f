"""``herdr_shim`` (sync): the herdr reference server plus a ``herdr`` executable first on PATH.

A tool under test that shells out to ``herdr`` reaches the reference server
unchanged: the shim runs ``shedproto herdr cli "$@"`` and ``HERDR_SOCKET_PATH``
points at the server for the test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ._herdr import running_herdr_server
from ._threaded import ServerThread, serve_in_thread

if TYPE_CHECKING:
    from shedproto.servers.herdr import HerdrServer

__all__ = ["HerdrShim", "herdr_shim"]

PROTOCOL_ENV = "SHEDPROTO_HERDR_CLIENT_PROTOCOL"
VERSION_ENV = "SHEDPROTO_HERDR_CLIENT_VERSION"


@dataclass(frozen=True)
class HerdrShim:
    """A running herdr reference server and the ``herdr`` shim that talks to it.

    ``handle`` is the server thread (``handle.server`` the
    :class:`~shedproto.servers.herdr.HerdrServer`), ``bin_dir`` the directory
    first on ``PATH``, ``executable`` the shim itself, ``socket`` the API socket.
    """

    handle: ServerThread[HerdrServer]
    bin_dir: Path
    executable: Path
    socket: str

    def run(self, *args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
        """Run ``herdr ARGS...`` through the shim and return the completed process.

        A non-zero exit is returned, not raised; past ``timeout`` seconds
        ``subprocess.TimeoutExpired`` is raised.
        """
        return subprocess.run(
            ["herdr", *args], capture_output=True, text=True, timeout=timeout, check=False
        )


@pytest.fixture
def herdr_shim(monkeypatch: pytest.MonkeyPatch) -> Iterator[HerdrShim]:
    """Yield a :class:`HerdrShim`: server started, shim written, PATH and socket set.

    ``PATH`` starts with the shim's directory, ``HERDR_SOCKET_PATH`` names the
    server's socket and the shim claims the server's protocol and version (so
    ``herdr status`` reports it compatible, no restart needed), for the test
    only. Afterwards the server stops and the directory is removed.
    """
    from shedproto.clients.herdr_cli import write_shim

    with serve_in_thread(running_herdr_server) as handle:
        bin_dir = Path(tempfile.mkdtemp(prefix="hs-", dir="/tmp"))
        try:
            executable = write_shim(bin_dir)
            server = handle.server
            monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
            monkeypatch.setenv("HERDR_SOCKET_PATH", str(server.path))
            monkeypatch.setenv(PROTOCOL_ENV, str(server.protocol))
            monkeypatch.setenv(VERSION_ENV, str(server.version))
            monkeypatch.delenv("HERDR_SESSION", raising=False)
            yield HerdrShim(handle, bin_dir, executable, str(server.path))
        finally:
            shutil.rmtree(bin_dir, ignore_errors=True)
