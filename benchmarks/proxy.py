"""Round trips through the validating proxy against the same round trips made directly.

As deployed, client, proxy and server are three processes: a reference
server (``shedproto desktop serve`` / ``shedproto herdr serve``) and
``shedproto proxy`` (observer on, no recording) run as subprocesses, on the
loop this run uses (``--uvloop``: ``SHEDPROTO_LOOP=uvloop``, else
``asyncio``); this process is the client. Baseline: the client's calls made
directly to the server, measured in the same run; candidate: the same calls
through the proxy. Goal: ratio >= 0.5 (the proxy costs at most half the rate).

* desktop: ``identify`` on one connection, sequential round trips (Tauri dialect);
* herdr: ``ping`` on a connection per request, as herdr's own clients do;
* in-process: the desktop case through a :class:`Proxy` inside the client's
  process (as the ``cassette_server`` fixture runs it);
* recording: the herdr case through a recording ``shedproto proxy``; each
  run also prints the cassette bytes written per second.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from shedproto.clients.desktop import AsyncDesktopClient
from shedproto.clients.herdr import AsyncHerdrClient
from shedproto.clients.proxy import Proxy
from shedproto.observe import observer_factory

from ._harness import Case

CLI = [sys.executable, "-m", "shedproto.clients.cli"]


async def _desktop_round_trips(path: Path, count: int) -> float:
    async with await AsyncDesktopClient.connect(path) as client:
        await client.call("identify")
        start = time.perf_counter()
        for _ in range(count):
            await client.call("identify")
        return time.perf_counter() - start


async def _herdr_round_trips(path: Path, count: int) -> float:
    client = AsyncHerdrClient.for_socket(path)
    await client.request("ping")
    start = time.perf_counter()
    for _ in range(count):
        await client.request("ping")  # a connection per request
    return time.perf_counter() - start


def _loop_env() -> dict[str, str]:
    """Return the subprocesses' environment: uvloop when this run's cases use it, else asyncio."""
    on_uvloop = type(asyncio.get_event_loop_policy()).__module__.startswith("uvloop")
    return {**os.environ, "SHEDPROTO_LOOP": "uvloop" if on_uvloop else "asyncio"}


def _start(command: list[str]) -> subprocess.Popen[str]:
    """Start a CLI server and wait for its readiness line (its first line of output)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=_loop_env())
    assert process.stdout is not None
    process.stdout.readline()
    atexit.register(process.wait)
    atexit.register(process.terminate)
    return process


async def _in_process(listen: Path, upstream: Path, count: int) -> float:
    proxy = Proxy(listen, upstream, observer_factory("desktop"), on_diagnostic=print)
    async with anyio.create_task_group() as tasks:
        path = await tasks.start(proxy.serve)
        elapsed = await _desktop_round_trips(path, count)
        proxy.shutdown()
    return elapsed


def _proxy(protocol: str, listen: Path, upstream: Path, *extra: str) -> subprocess.Popen[str]:
    argv = ["proxy", "--protocol", protocol, "--listen", str(listen), "--upstream", str(upstream)]
    return _start([*CLI, *argv, *extra])


def cases(quick: bool) -> list[Case]:
    count = 500 if quick else 3000
    directory = Path(tempfile.mkdtemp(prefix="spbench-", dir="/tmp"))
    atexit.register(shutil.rmtree, directory, True)
    desktop, herdr = directory / "desktop.sock", directory / "herdr.sock"
    _start([*CLI, "desktop", "serve", "--dialect", "tauri", "--socket", str(desktop)])
    _start([*CLI, "herdr", "serve", "--socket", str(herdr), "--shell", "/bin/sh"])
    _proxy("desktop", directory / "pd.sock", desktop)
    _proxy("herdr", directory / "ph.sock", herdr)
    cassettes = directory / "cassettes"
    cassettes.mkdir()
    rates: list[float] = []

    def desktop_direct() -> float:
        return anyio.run(_desktop_round_trips, desktop, count)

    def herdr_direct() -> float:
        return anyio.run(_herdr_round_trips, herdr, count)

    def recording() -> float:
        cassette = cassettes / f"{len(rates)}.ndjson"
        listen = directory / f"pr{len(rates)}.sock"
        process = _proxy("herdr", listen, herdr, "--record", str(cassette))
        elapsed = anyio.run(_herdr_round_trips, listen, count)
        process.terminate()  # SIGTERM: the cassette is flushed and closed
        process.wait()
        rates.append(cassette.stat().st_size / elapsed)
        return elapsed

    def report_cassettes() -> None:
        if rates:
            print(
                "proxy: cassette bytes written per second by a recording herdr proxy: median "
                f"{statistics.median(rates) / 1e6:.3f} MB/s over {len(rates)} runs",
                file=sys.stderr,  # stdout stays one JSON document under --json
                flush=True,
            )

    atexit.register(report_cassettes)
    return [
        Case(
            name=f"proxy: desktop identify via `shedproto proxy` vs direct ({count} rt)",
            baseline=desktop_direct,
            candidate=lambda: anyio.run(_desktop_round_trips, directory / "pd.sock", count),
            target=0.5,
            units=count,
            unit="round trip",
            repeat=3,
        ),
        Case(
            name=f"proxy: herdr ping, a connection each, via `shedproto proxy` ({count} rt)",
            baseline=herdr_direct,
            candidate=lambda: anyio.run(_herdr_round_trips, directory / "ph.sock", count),
            target=0.5,
            units=count,
            unit="round trip",
            repeat=3,
        ),
        Case(
            name=f"proxy: desktop identify via an in-process Proxy vs direct ({count} rt)",
            baseline=desktop_direct,
            candidate=lambda: anyio.run(_in_process, directory / "inproc.sock", desktop, count),
            target=0.5,
            units=count,
            unit="round trip",
            repeat=3,
        ),
        Case(
            name=f"proxy: herdr ping via a recording `shedproto proxy` ({count} rt)",
            baseline=herdr_direct,
            candidate=recording,
            target=0.5,
            units=count,
            unit="round trip",
            repeat=3,
        ),
    ]
