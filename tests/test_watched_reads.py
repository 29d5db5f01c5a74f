"""The agent's reads of its consumer connection (one reader registration for its life)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.abc
import pytest

from shedproto.servers._receive import SocketPump, WatchedReads


@asynccontextmanager
async def watched_pair() -> AsyncIterator[tuple[WatchedReads, socket.socket]]:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ours.setblocking(False)
    stream = await anyio.abc.UNIXSocketStream.from_socket(ours)
    reads = WatchedReads(SocketPump(stream))
    try:
        yield reads, theirs
    finally:
        reads.close()
        await stream.aclose()
        theirs.close()


async def test_reads_deliver_in_order_then_eof() -> None:
    """Both backends (trio: the pump's own reads)."""
    async with watched_pair() as (reads, theirs):
        theirs.send(b"one\n")
        with anyio.fail_after(10):
            assert await reads.receive() == b"one\n"
            theirs.send(b"two\n")
            assert await reads.receive() == b"two\n"
            theirs.shutdown(socket.SHUT_WR)
            assert await reads.receive() == b""


async def test_close_ends_a_waiting_receive() -> None:
    async with watched_pair() as (reads, _theirs):
        got: list[bytes] = []

        async def receive() -> None:
            got.append(await reads.receive())

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(receive)
                await anyio.wait_all_tasks_blocked()
                if isinstance(reads._loop, asyncio.AbstractEventLoop):
                    reads.close()
                else:  # trio: the pump waits; a hang-up ends it
                    _theirs.shutdown(socket.SHUT_WR)
        assert got == [b""]
        if reads._loop is not None:
            assert await reads.receive() == b""  # closed for good


def test_a_stale_readable_report_wakes_nobody_and_cancelled_reads_are_kept() -> None:
    """asyncio only (the watched path): a report with nothing to read wakes no receive;
    bytes read for a receive whose task was cancelled go to the next receive."""

    async def run() -> None:
        async with watched_pair() as (reads, theirs):
            task = asyncio.ensure_future(reads.receive())
            await asyncio.sleep(0)
            waiter = reads._waiter
            assert waiter is not None
            reads._on_readable()  # stale: nothing to read
            assert not waiter.done()
            theirs.send(b"kept\n")
            reads._on_readable()  # read and handed over ...
            assert waiter.done()
            task.cancel()  # ... but the task is cancelled before it resumes
            with pytest.raises(asyncio.CancelledError):
                await task
            assert await asyncio.wait_for(reads.receive(), 10) == b"kept\n"

    asyncio.run(run())
