"""ReadableWatch: waits for readability with one reader registration while waits recur."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import anyio.abc
import pytest

from shedproto.servers import UnixServer, _unix
from shedproto.servers._loop import running_asyncio_loop
from shedproto.servers._receive import ReadableWatch


@contextmanager
def socket_pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ours.setblocking(False)
    try:
        yield ours, theirs
    finally:
        ours.close()
        theirs.close()


def watching(watch: ReadableWatch) -> bool:
    """Whether ``watch`` has its reader registered with the loop."""
    return watch._watched


async def test_each_wait_returns_once_data_arrives_then_close_leaves_no_reader() -> None:
    with socket_pair() as (ours, theirs):
        watch = ReadableWatch(ours)
        with anyio.fail_after(10):
            for chunk in (b"one", b"two", b"three"):
                theirs.send(chunk)
                await watch.wait()
                assert ours.recv(100) == chunk
        watch.close()
        watch.close()  # idempotent
        loop = running_asyncio_loop()
        if loop is not None:
            assert not loop.remove_reader(ours.fileno())  # nothing left registered


async def test_a_readiness_report_with_nobody_waiting_stops_the_watch() -> None:
    """A socket left readable between waits must not keep waking the loop."""
    loop = running_asyncio_loop()
    if loop is None:
        pytest.skip("trio waits with anyio.wait_readable: nothing stays registered")
    with socket_pair() as (ours, theirs):
        watch = ReadableWatch(ours)
        theirs.send(b"x")
        with anyio.fail_after(10):
            await watch.wait()
            assert watching(watch)  # registered past the wait, for the next one
            await asyncio.sleep(0)  # a loop pass: the level-triggered report finds no waiter
            await asyncio.sleep(0)
            assert not watching(watch)
            await watch.wait()  # still readable: watched again, returns at once
        assert ours.recv(100) == b"x"
        watch.close()


async def test_a_cancelled_wait_leaves_the_next_one_working() -> None:
    with socket_pair() as (ours, theirs):
        watch = ReadableWatch(ours)
        with anyio.move_on_after(0.01) as scope:
            await watch.wait()
        assert scope.cancelled_caught
        theirs.send(b"late")
        with anyio.fail_after(10):
            await watch.wait()
        assert ours.recv(100) == b"late"
        watch.close()


async def test_the_server_stops_watching_its_listening_socket_before_closing_it(
    short_socket_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watches: list[ReadableWatch] = []

    class Recorded(ReadableWatch):
        __slots__ = ()

        def __init__(self, raw: socket.socket) -> None:
            super().__init__(raw)
            watches.append(self)

    async def handler(stream: anyio.abc.SocketStream) -> None:
        await stream.send(b"hi\n")

    monkeypatch.setattr(_unix, "ReadableWatch", Recorded)
    path = short_socket_dir / "w.sock"
    server = UnixServer(path, handler)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            await tg.start(server.serve)
            for _ in range(3):
                async with await anyio.connect_unix(path) as stream:
                    assert await stream.receive() == b"hi\n"
            server.shutdown()
    if running_asyncio_loop() is None:
        assert watches == []  # trio accepts through anyio's listener
    else:
        assert len(watches) == 1
        assert not watching(watches[0])
