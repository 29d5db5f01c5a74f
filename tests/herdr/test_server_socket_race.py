"""A cancellation landing in the loop pass that reports a herdr connection ready logs nothing.

Regression: the herdr server's subscription handlers read (``_watch_client``)
and wrote (``_write``, ``_round``, ``_end_stream``) through anyio's asyncio
socket stream, whose readability/writability future is resolved by an
unguarded loop callback. A cancellation (the client leaving, a deadline, the
server stopping) that ran in the same loop pass as the socket's ready report
made the loop log ``InvalidStateError`` ("exception in callback"): about 3 in 8
runs of ``docs/examples/clients.py`` on uvloop. The server now waits with the
guarded helpers of ``shedproto.servers._receive``.

The race is provoked deterministically with ``tests/_loop_race.py`` (both
cancellation orders on the stock loop and uvloop; trio is not affected).
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import anyio.abc
import pytest

from shedproto.servers.herdr import HerdrServer
from tests._loop_race import LOOPS, ORDERS, drain, fill, provoke, run_on

SUBSCRIBE = (
    b'{"id":"s","method":"events.subscribe",'
    b'"params":{"subscriptions":[{"type":"workspace.created"}]}}\n'
)


async def _handled(server: HerdrServer, ours: socket.socket) -> asyncio.Task[None]:
    """Serve the connection on ``ours`` with ``server._handle`` as a task of its own."""
    ours.setblocking(False)
    stream = await anyio.abc.UNIXSocketStream.from_socket(ours)
    return asyncio.ensure_future(server._handle(stream))


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("loop_name", LOOPS)
def test_a_subscription_cancelled_as_the_client_writes_reports_no_loop_error(
    tmp_path: Path, loop_name: str, order: str
) -> None:
    # _watch_client waits for the client's bytes (herdr's probe) while the stream runs.
    async def main() -> None:
        server = HerdrServer(tmp_path / "herdr.sock", poll_interval=60.0)
        ours, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        peer.setblocking(False)
        peer.send(SUBSCRIBE)
        task = await _handled(server, ours)
        try:
            started = b""
            for _ in range(500):  # until the acknowledgement arrives: the watch is waiting
                await asyncio.sleep(0.001)
                started += drain(peer)
                if started.endswith(b"\n"):
                    break
            assert b'"id":"s"' in started
            for _ in range(5):
                await asyncio.sleep(0)
            assert not task.done()
            errors = await provoke(task, lambda: peer.send(b"x"), order)
            assert errors == []
        finally:
            ours.close()
            peer.close()

    run_on(loop_name, main)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("loop_name", LOOPS)
def test_a_subscription_write_cancelled_as_the_socket_turns_writable_reports_no_loop_error(
    tmp_path: Path, loop_name: str, order: str
) -> None:
    # _write waits for room for the acknowledgement: the client does not read yet.
    async def main() -> None:
        server = HerdrServer(tmp_path / "herdr.sock", poll_interval=60.0)
        ours, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        fill(ours)
        peer.setblocking(False)
        peer.send(SUBSCRIBE)
        task = await _handled(server, ours)
        try:
            for _ in range(20):
                await asyncio.sleep(0)
            assert not task.done()  # it waits for room
            errors = await provoke(task, lambda: drain(peer), order)
            assert errors == []
        finally:
            ours.close()
            peer.close()

    run_on(loop_name, main)
