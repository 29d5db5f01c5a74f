"""A cancellation landing in the loop pass that reports a herdr connection ready logs nothing.

Regression: the herdr server's subscription handlers read (``_watch_client``)
and wrote (``_write``, ``_round``, ``_end_stream``) through anyio's asyncio
socket stream, whose readability/writability future is resolved by an
unguarded loop callback. A cancellation (the client leaving, a deadline, the
server stopping) that ran in the same loop pass as the socket's ready report
made the loop log ``InvalidStateError`` ("exception in callback"): about 3 in 8
runs of ``docs/examples/clients.py`` on uvloop. The server now waits with the
guarded helpers of ``shedproto.servers._receive``.

The race is provoked deterministically, as in tests/test_socket_pump.py: the
socket is made ready (a byte from the client, or room in a full buffer) and the
server's task cancelled in an order its loop runs before the ready callback.
The stock loop runs a pass's I/O callbacks after the handles queued before its
select (``queued``); uvloop runs them from libuv's poll phase, after the
callbacks of the same iteration (``same-callback``). Both orders run on both
loops; each loop fails the old code in at least one. trio is not affected (its
waits are not loop callbacks), so these tests drive asyncio loops directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from shedproto.servers.herdr import HerdrServer

SUBSCRIBE = (
    b'{"id":"s","method":"events.subscribe",'
    b'"params":{"subscriptions":[{"type":"workspace.created"}]}}\n'
)


def _new_loop(name: str) -> asyncio.AbstractEventLoop:
    if name == "uvloop":
        uvloop = pytest.importorskip("uvloop", reason="the fast extra (uvloop) is not installed")
        loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
        return loop
    return asyncio.SelectorEventLoop()


def _run(name: str, main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    loop = _new_loop(name)
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()


def _fill(sock: socket.socket) -> None:
    """Write into ``sock`` until its buffers are full."""
    sock.setblocking(False)
    try:
        while True:
            sock.send(b"x" * 65536)
    except BlockingIOError:
        pass


def _drain(sock: socket.socket) -> bytes:
    """Read everything ``sock`` holds now."""
    sock.setblocking(False)
    got = bytearray()
    try:
        while chunk := sock.recv(1 << 20):
            got.extend(chunk)
    except BlockingIOError:
        pass
    return bytes(got)


async def _handled(
    server: HerdrServer, ours: socket.socket
) -> tuple[asyncio.Task[None], Callable[[], None]]:
    """Start ``server._handle`` on ``ours`` as a task; return it and the stream's closer."""
    import anyio.abc

    ours.setblocking(False)
    stream = await anyio.abc.UNIXSocketStream.from_socket(ours)
    task = asyncio.ensure_future(server._handle(stream))

    def close() -> None:
        ours.close()

    return task, close


async def _provoke(
    task: asyncio.Task[None], make_ready: Callable[[], object], order: str
) -> list[dict[str, Any]]:
    """Make the socket ready and cancel ``task`` in ``order``; return what the loop reported."""
    loop = asyncio.get_running_loop()
    errors: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    try:
        if order == "queued":

            def ready_then_cancel() -> None:
                make_ready()  # the next select reports the socket ready ...
                loop.call_soon(task.cancel)  # ... in the pass that runs this cancel first

            loop.call_soon(ready_then_cancel)
        else:

            def ready_and_cancel() -> None:
                make_ready()  # uvloop polls right after this iteration's callbacks
                task.cancel()

            loop.call_soon(ready_and_cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await task
        for _ in range(5):
            await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(previous)
    return errors


LOOPS = ["asyncio", "uvloop"]
ORDERS = ["queued", "same-callback"]


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
        task, close = await _handled(server, ours)
        try:
            started = b""
            for _ in range(500):  # until the acknowledgement arrives: the watch is waiting
                await asyncio.sleep(0.001)
                started += _drain(peer)
                if started.endswith(b"\n"):
                    break
            assert b'"id":"s"' in started
            for _ in range(5):
                await asyncio.sleep(0)
            assert not task.done()
            errors = await _provoke(task, lambda: peer.send(b"x"), order)
            assert errors == []
        finally:
            close()
            peer.close()

    _run(loop_name, main)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("loop_name", LOOPS)
def test_a_subscription_write_cancelled_as_the_socket_turns_writable_reports_no_loop_error(
    tmp_path: Path, loop_name: str, order: str
) -> None:
    # _write waits for room for the acknowledgement: the client does not read yet.
    async def main() -> None:
        server = HerdrServer(tmp_path / "herdr.sock", poll_interval=60.0)
        ours, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        _fill(ours)
        peer.setblocking(False)
        peer.send(SUBSCRIBE)
        task, close = await _handled(server, ours)
        try:
            for _ in range(20):
                await asyncio.sleep(0)
            assert not task.done()  # it waits for room
            errors = await _provoke(task, lambda: _drain(peer), order)
            assert errors == []
        finally:
            close()
            peer.close()

    _run(loop_name, main)
