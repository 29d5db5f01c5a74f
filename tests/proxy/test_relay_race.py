"""The proxy's task relay and the replay server never log a loop error on a well-timed cancel.

Regression: the relay's task path (trio, a stream that is no socket, or an
upstream connect that had to wait) and the replay server read and wrote with
anyio's asyncio socket stream, whose ready future an unguarded loop callback
resolves: a cancellation (the other direction ending, the proxy stopping) in
the loop pass that reported the socket ready made the loop log
``InvalidStateError``. Both now go through ``SocketPump`` s (guarded waits).
Provoked with ``tests/_loop_race.py`` (both orders, stock loop and uvloop;
trio is not affected).
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import anyio
import anyio.abc
import pytest

from shedproto import FrameQueue
from shedproto.clients.proxy import Proxy
from shedproto.clients.proxy._replay import _LINES, _next_line
from shedproto.observe import Observer
from shedproto.servers._receive import SocketPump
from tests._loop_race import LOOPS, ORDERS, drain, fill, provoke, run_on


class _Quiet(Observer):
    protocol = "herdr"


async def _stream(sock: socket.socket) -> anyio.abc.SocketStream:
    sock.setblocking(False)
    return await anyio.abc.UNIXSocketStream.from_socket(sock)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("loop_name", LOOPS)
@pytest.mark.parametrize("wait", ["read", "write"])
def test_a_task_relay_cancelled_as_its_socket_turns_ready_reports_no_loop_error(
    tmp_path: Path, loop_name: str, order: str, wait: str
) -> None:
    async def main() -> None:
        proxy = Proxy(tmp_path / "p.sock", tmp_path / "u.sock", _Quiet, on_diagnostic=print)
        source, client = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        sink, upstream = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            if wait == "write":
                fill(sink)  # the upstream never reads: the relayed bytes wait for room
                client.send(b'{"id":"1","method":"ping"}\n')
            with anyio.CancelScope() as both:
                task = asyncio.ensure_future(
                    proxy._pump(1, "c2s", await _stream(source), await _stream(sink), both)
                )
                for _ in range(20):
                    await asyncio.sleep(0)
                assert not task.done()  # it waits for the client, or for room upstream
                def ready() -> object:
                    return drain(upstream) if wait == "write" else client.send(b"x")

                assert await provoke(task, ready, order) == []
        finally:
            for sock in (source, client, sink, upstream):
                sock.close()

    run_on(loop_name, main)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("loop_name", LOOPS)
def test_a_replay_read_cancelled_as_the_client_writes_reports_no_loop_error(
    loop_name: str, order: str
) -> None:
    async def main() -> None:
        ours, client = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            pump = SocketPump(await _stream(ours))
            task = asyncio.ensure_future(_next_line(pump, FrameQueue(_LINES)))
            for _ in range(20):
                await asyncio.sleep(0)
            assert not task.done()  # it waits for the client's line
            assert await provoke(task, lambda: client.send(b"x"), order) == []
        finally:
            ours.close()
            client.close()

    run_on(loop_name, main)
