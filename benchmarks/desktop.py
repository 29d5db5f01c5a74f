"""desktop-control round trips through the reference server against a raw anyio echo.

Baseline: a raw anyio Unix echo (``receive_until`` on both ends) bouncing the
same request line. Candidate: :class:`DesktopServer` (one-pass request
decode, gate, the model's handler, response encode, a sliding per-connection
deadline) driven by :class:`AsyncDesktopClient` (request encode, typed
response parse, id pairing, a per-call deadline), one connection, sequential
calls of ``ui.navigate {pane: sheds}``, asyncio, server and client in one
event loop (no threads). One case per dialect, plus one whose client arms no
per-call deadline (``timeout=math.inf``) to show what that scope costs.
Target: ratio >= 0.90 (perf-baseline bar 4); the cases report honestly when
they miss it. The socket cases time CPU seconds of this process (see
``_clock``).

Core cases (no sockets): a ``ServerConnection`` turning a batch of request
lines into events and answering each (envelope, op lookup, gate, typed
params, response encoding) against a bare ``msgspec.json.decode`` +
``encode`` of the same lines that checks nothing. Target: ratio >= 0.20, a
regression floor (about 3.5 us a request here against about 1 us).
"""

from __future__ import annotations

import atexit
import math
import shutil
import tempfile
import time
from pathlib import Path

import anyio
import anyio.abc
import msgspec

from shedproto.clients.desktop import DEFAULT_TIMEOUT, AsyncDesktopClient
from shedproto.desktop import Answer, Dialect, RequestReceived, ServerConnection, request_line
from shedproto.servers.desktop import DesktopServer

from ._harness import Case
from ._raw import echo_round_trips

PARAMS = {"pane": "sheds"}

_clock = time.process_time
"""Socket cases time CPU seconds of this process (user + system, both ends run here).

Server and client share one event loop and nothing sleeps, so the CPU time is
the work; wall time on this shared 2-core machine mostly measures the other
tenants (load average above 3 during development).
"""
LINE = request_line("1", "ui.navigate", PARAMS)


async def _raw_run(path: str, count: int) -> float:
    return await echo_round_trips(path, LINE, count, clock=_clock)


async def _desktop_run(path: str, dialect: Dialect, count: int, timeout: float) -> float:
    async with anyio.create_task_group() as tg:
        server = DesktopServer(path, dialect=dialect, test_mode=True, env={}, grace=0.1)
        await tg.start(server.serve)
        async with await AsyncDesktopClient.connect(path, timeout=timeout) as client:
            start = _clock()
            for _ in range(count):
                await client.call("ui.navigate", PARAMS)
            elapsed = _clock() - start
        server.shutdown()
    return elapsed


def _core_case(dialect: Dialect, quick: bool) -> Case:
    count = 5000 if quick else 50000
    batch = b"".join(request_line(str(i), "ui.navigate", PARAMS) for i in range(1, count + 1))
    lines = batch.splitlines()

    def baseline() -> float:
        start = _clock()
        decode, encode = msgspec.json.decode, msgspec.json.encode
        for line in lines:
            request = decode(line)
            encode({"id": request["id"], "ok": True, "result": request["params"]})
        return _clock() - start

    def candidate() -> float:
        start = _clock()
        conn = ServerConnection(dialect, test_mode=True)
        for event in conn.receive_data(batch):
            if isinstance(event, RequestReceived):
                conn.send(Answer(id=event.id, result=PARAMS))
        return _clock() - start

    return Case(
        name=f"desktop: {dialect.value} core connection vs bare msgspec ({count} req)",
        baseline=baseline,
        candidate=candidate,
        target=0.20,
        units=count,
        unit="request",
        repeat=3 if quick else 5,
    )


def cases(quick: bool) -> list[Case]:
    count = 1000 if quick else 5000
    directory = Path(tempfile.mkdtemp(prefix="spbench-", dir="/tmp"))
    atexit.register(shutil.rmtree, directory, True)

    def baseline() -> float:
        return anyio.run(_raw_run, str(directory / "raw.sock"), count)

    def make(dialect: Dialect, timeout: float = DEFAULT_TIMEOUT) -> Case:
        sock = str(directory / f"{dialect.value}.sock")

        def candidate() -> float:
            return anyio.run(_desktop_run, sock, dialect, count, timeout)

        label = "" if timeout != math.inf else ", no per-call deadline"
        return Case(
            name=f"desktop: {dialect.value} reference server vs raw anyio echo{label} ({count} rt)",
            baseline=baseline,
            candidate=candidate,
            target=0.90,
            units=count,
            unit="round trip",
            repeat=3 if quick else 5,
        )

    return [
        make(Dialect.TAURI),
        make(Dialect.MAC),
        make(Dialect.TAURI, math.inf),
        _core_case(Dialect.TAURI, quick),
        _core_case(Dialect.MAC, quick),
    ]
