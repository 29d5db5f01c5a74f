"""The raw anyio baseline shared by the socket benchmarks: a bare NDJSON echo.

Both ends use ``BufferedByteReceiveStream.receive_until`` over anyio's Unix
streams, as ``shared/specs/bench/bench_socket.py`` does. A run serves one
connection and ends when the client closes it, so nothing is cancelled
mid-read.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

__all__ = ["echo_connection", "echo_round_trips"]

MAX_LINE = 1 << 20


async def echo_connection(stream: anyio.abc.SocketStream) -> None:
    """Echo every line on ``stream`` until the peer closes it."""
    reader = BufferedByteReceiveStream(stream)
    async with stream:
        try:
            while True:
                line = await reader.receive_until(b"\n", MAX_LINE)
                await stream.send(line + b"\n")
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
            return


async def echo_round_trips(
    path: str, line: bytes, count: int, *, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Send ``line`` and read its echo ``count`` times on one connection; return ``clock`` time."""
    listener = await anyio.create_unix_listener(path)
    async with anyio.create_task_group() as tg:
        async with listener:
            stream = await anyio.connect_unix(path)
            tg.start_soon(echo_connection, await listener.accept())
        reader = BufferedByteReceiveStream(stream)
        start = clock()
        for _ in range(count):
            await stream.send(line)
            await reader.receive_until(b"\n", MAX_LINE)
        elapsed = clock() - start
        await stream.aclose()
    os.unlink(path)
    return elapsed
