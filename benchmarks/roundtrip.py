"""Round trips through the reference shell against a raw anyio echo, both over Unix sockets.

Baseline: ``anyio.create_unix_listener`` plus ``BufferedByteReceiveStream.receive_until``
on both ends. Candidate: the echo reference shell (bind ceremony, ``UnixServer``,
``FrameQueue``) with ``AsyncLineTransport``. One connection, sequential round
trips, the same 300-byte frame, asyncio backend. Target: ratio >= 0.90.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import anyio
import anyio.abc

from shedproto import encode_line
from shedproto.clients import AsyncLineTransport
from shedproto.servers.echo import echo_server

from ._frames import sample_frame
from ._harness import Case
from ._raw import echo_round_trips

FRAME = encode_line(sample_frame(1))


async def _shell_run(path: str, count: int) -> float:
    async with anyio.create_task_group() as tg:
        server = echo_server(path)
        await tg.start(server.serve)
        async with await AsyncLineTransport.connect(path) as transport:
            start = time.perf_counter()
            for _ in range(count):
                await transport.send(FRAME)
                await transport.receive_frame()
            elapsed = time.perf_counter() - start
        server.shutdown()
    return elapsed


def cases(quick: bool) -> list[Case]:
    count = 2000 if quick else 10000
    directory = Path(tempfile.mkdtemp(prefix="spbench-", dir="/tmp"))

    def baseline() -> float:
        return anyio.run(echo_round_trips, str(directory / "raw.sock"), FRAME, count)

    def candidate() -> float:
        return anyio.run(_shell_run, str(directory / "shell.sock"), count)

    case = Case(
        name=f"roundtrip: echo reference shell vs raw anyio echo ({count} rt)",
        baseline=baseline,
        candidate=candidate,
        target=0.90,
        units=count,
        unit="round trip",
        repeat=3 if quick else 7,
    )
    import atexit

    atexit.register(shutil.rmtree, directory, True)
    return [case]
