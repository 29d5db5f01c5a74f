"""``running_agents_host``: a reference agents-host on an echo driver, for ``async with``."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._agents_host import EchoDriver

__all__ = ["RunningAgentsHost", "running_agents_host"]


@dataclass
class RunningAgentsHost:
    """A running host: its API socket, the run, the echo driver, the owner DID commands need."""

    socket: Path
    run: Any
    owner_did: str

    @property
    def driver(self) -> EchoDriver:
        """The ``echo`` source's driver (inspect ``calls``, set ``gate`` or ``fail``)."""
        from ._agents_host import EchoDriver

        assert self.run.host is not None
        driver = self.run.host.sources["echo"].driver
        assert isinstance(driver, EchoDriver)
        return driver


@asynccontextmanager
async def running_agents_host(target: str | None = None) -> AsyncIterator[RunningAgentsHost]:
    """Run an agents-host with one ``echo`` source for the block.

    The source is served by :class:`~shedproto.testing.EchoDriver`.

    ``target`` is ``None`` for the SQLite target or a ``postgresql://`` URL.
    Connect with ``AsyncAgentsHostClient.connect(host.socket)``; commands need
    ``owner_did`` (``make_command`` builds them). On exit the host stops
    gracefully and its directories are removed.

    Raises:
        RuntimeError: the host exited while starting (its exit status is named).

    """
    import anyio

    from shedproto.servers.agents_host import run_host

    from ._agents_host import AGENTS_HOST_OWNER, echo_host_run

    root = Path(tempfile.mkdtemp(prefix="sp-ah-", dir="/tmp"))
    os.chmod(root, 0o700)
    run = echo_host_run(
        root, owner_did=AGENTS_HOST_OWNER, space="did:key:z6MkTestSpace", target=target
    )
    status: list[int] = []
    try:
        async with anyio.create_task_group() as tg:

            async def main() -> None:
                status.append(await run_host(run))
                run.ready.set()

            tg.start_soon(main)
            with anyio.fail_after(30):
                await run.ready.wait()
            if status:
                raise RuntimeError(f"the agents-host fixture failed to start (exit {status[0]})")
            try:
                yield RunningAgentsHost(
                    socket=root / "h.sock", run=run, owner_did=AGENTS_HOST_OWNER
                )
            finally:
                run.stop_requested.set()
    finally:
        shutil.rmtree(root, ignore_errors=True)
