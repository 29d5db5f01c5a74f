"""Round trips through the validating proxy against the same round trips made directly.

As deployed, client, proxy and server are three processes: the Tauri-dialect
desktop reference server (``shedproto desktop serve``) and ``shedproto proxy
--protocol desktop`` (observer on, no recording) run as subprocesses; this
process is the client. Baseline: the desktop client calls ``identify`` on the
server directly (one connection, sequential round trips); candidate: the same
calls through the proxy. A second case runs the :class:`Proxy` inside the
client's process (as the ``cassette_server`` fixture does). Goal: ratio >= 0.5.
"""

from __future__ import annotations

import atexit
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from shedproto.clients.desktop import AsyncDesktopClient
from shedproto.clients.proxy import Proxy
from shedproto.observe import observer_factory

from ._harness import Case

CLI = [sys.executable, "-m", "shedproto.clients.cli"]


async def _round_trips(path: Path, count: int) -> float:
    async with AsyncDesktopClient(path) as client:
        await client.call("identify")
        start = time.perf_counter()
        for _ in range(count):
            await client.call("identify")
        return time.perf_counter() - start


def _start(command: list[str]) -> subprocess.Popen[str]:
    """Start a CLI server and wait for its readiness line (its first line of output)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    process.stdout.readline()
    atexit.register(process.wait)
    atexit.register(process.terminate)
    return process


async def _in_process(listen: Path, upstream: Path, count: int) -> float:
    proxy = Proxy(listen, upstream, observer_factory("desktop"), on_diagnostic=print)
    async with anyio.create_task_group() as tasks:
        path = await tasks.start(proxy.serve)
        elapsed = await _round_trips(path, count)
        proxy.shutdown()
    return elapsed


def cases(quick: bool) -> list[Case]:
    count = 500 if quick else 3000
    directory = Path(tempfile.mkdtemp(prefix="spbench-", dir="/tmp"))
    atexit.register(shutil.rmtree, directory, True)
    server, proxy = directory / "desktop.sock", directory / "proxy.sock"
    _start([*CLI, "desktop", "serve", "--dialect", "tauri", "--socket", str(server)])
    _start(
        [*CLI, "proxy", "--protocol", "desktop", "--listen", str(proxy), "--upstream", str(server)]
    )

    def baseline() -> float:
        return anyio.run(_round_trips, server, count)

    def candidate() -> float:
        return anyio.run(_round_trips, proxy, count)

    def in_process() -> float:
        return anyio.run(_in_process, directory / "inproc.sock", server, count)

    return [
        Case(
            name=f"proxy: desktop identify via `shedproto proxy` vs direct ({count} rt)",
            baseline=baseline,
            candidate=candidate,
            target=0.5,
            units=count,
            unit="round trip",
            repeat=3,
        ),
        Case(
            name=f"proxy: desktop identify via an in-process Proxy vs direct ({count} rt)",
            baseline=baseline,
            candidate=in_process,
            target=0.5,
            units=count,
            unit="round trip",
            repeat=3,
        ),
    ]
