"""Round trips through the reference shell against a raw anyio echo, both over Unix sockets.

Baseline: ``anyio.create_unix_listener`` plus ``BufferedByteReceiveStream.receive_until``
on both ends. Candidate: the echo reference shell (bind ceremony, ``UnixServer``,
``FrameQueue``) with ``AsyncLineTransport``. One connection, sequential round
trips, the same 300-byte frame, asyncio backend. Target: ratio >= 0.90.

Stretch case (issue 16): the same shell run against a bare ``asyncio.Protocol``
echo on both ends (no anyio, no buffered reader), the fastest stack the
baseline measurements found. Informational floor 0.25; with
``python -m benchmarks --uvloop`` both sides run on uvloop.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from pathlib import Path
from typing import cast

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


class _LineEcho(asyncio.Protocol):
    """Server side of the bare baseline: echo every complete line."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast("asyncio.Transport", transport)  # uvloop's is not a subclass
        self._buffer = b""

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        end = self._buffer.rfind(b"\n") + 1
        if end:
            self._transport.write(self._buffer[:end])
            self._buffer = self._buffer[end:]


class _LineClient(asyncio.Protocol):
    """Client side of the bare baseline: resolve ``waiter`` on each complete line."""

    def __init__(self) -> None:
        self.waiter: asyncio.Future[None] | None = None
        self._buffer = b""

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        end = self._buffer.rfind(b"\n") + 1
        if end and self.waiter is not None and not self.waiter.done():
            self._buffer = self._buffer[end:]
            self.waiter.set_result(None)


async def _protocol_run(path: str, count: int) -> float:
    loop = asyncio.get_running_loop()
    server = await loop.create_unix_server(_LineEcho, path)
    transport, client = await loop.create_unix_connection(_LineClient, path)
    start = time.perf_counter()
    for _ in range(count):
        client.waiter = loop.create_future()
        transport.write(FRAME)
        await client.waiter
    elapsed = time.perf_counter() - start
    transport.close()
    server.close()
    await server.wait_closed()
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

    def protocol_baseline() -> float:
        path = directory / "proto.sock"
        elapsed = asyncio.run(_protocol_run(str(path), count))
        path.unlink(missing_ok=True)
        return elapsed

    stretch = Case(
        name=f"roundtrip: echo reference shell vs bare asyncio.Protocol echo ({count} rt)",
        baseline=protocol_baseline,
        candidate=candidate,
        target=0.25,
        units=count,
        unit="round trip",
        repeat=3 if quick else 7,
    )
    import atexit

    atexit.register(shutil.rmtree, directory, True)
    return [case, stretch]
