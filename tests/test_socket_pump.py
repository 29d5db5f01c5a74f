"""The servers' byte pump (issue 16): direct socket I/O that still yields, ends and waits."""

from __future__ import annotations

import socket

import anyio
import anyio.abc
import pytest
from anyio.streams.stapled import StapledByteStream

from shedproto.servers._receive import EAGER_READS, SocketPump, raw_socket_of


async def _pair() -> tuple[anyio.abc.SocketStream, socket.socket]:
    """Return an anyio stream over one end of a socket pair, and the plain other end."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    return await anyio.abc.UNIXSocketStream.from_socket(ours), theirs


async def test_socket_pump_lets_other_tasks_run_while_data_keeps_arriving() -> None:
    stream, peer = await _pair()
    peer.sendall(b"x" * (EAGER_READS * 4))
    pump = SocketPump(stream)
    reads = 0
    reads_when_other_task_ran: list[int] = []

    async def other_task() -> None:
        reads_when_other_task_ran.append(reads)

    async with stream, anyio.create_task_group() as tg:
        tg.start_soon(other_task)
        while reads < EAGER_READS * 4:
            assert await pump.receive(1) == b"x"
            reads += 1
    peer.close()
    assert reads_when_other_task_ran
    # trio may run the pump's task first in the batch the other task joined: one more round
    assert reads_when_other_task_ran[0] <= 2 * EAGER_READS


async def test_socket_pump_reads_the_peers_close_as_end_of_stream() -> None:
    stream, peer = await _pair()
    pump = SocketPump(stream)
    async with stream:
        peer.sendall(b"last\n")
        peer.close()
        assert await pump.receive() == b"last\n"
        assert await pump.receive() == b""


async def test_socket_pump_waits_for_data_that_is_not_there_yet() -> None:
    stream, peer = await _pair()
    pump = SocketPump(stream)

    async def late_write() -> None:
        await anyio.sleep(0.01)
        peer.sendall(b"late\n")

    async with stream, anyio.create_task_group() as tg:
        tg.start_soon(late_write)
        assert await pump.receive() == b"late\n"
    peer.close()


async def test_socket_pump_send_beyond_the_socket_buffer_arrives_whole() -> None:
    stream, peer = await _pair()
    peer.setblocking(False)
    pump = SocketPump(stream)
    payload = bytes(range(256)) * 16384  # 4 MiB: more than the socket buffer holds
    received = bytearray()

    async def read_all() -> None:
        while len(received) < len(payload):
            await anyio.wait_readable(peer)
            received.extend(peer.recv(1 << 20))

    async with stream, anyio.create_task_group() as tg:
        tg.start_soon(read_all)
        await pump.send(payload)
    peer.close()
    assert bytes(received) == payload


async def test_socket_pump_send_to_a_closed_peer_raises_broken_resource() -> None:
    stream, peer = await _pair()
    pump = SocketPump(stream)
    peer.close()

    async def write_until_it_fails() -> None:
        for _ in range(64):  # the first writes may still land in the buffer
            await pump.send(b"x" * 65536)

    async with stream:
        with pytest.raises(anyio.BrokenResourceError):
            await write_until_it_fails()


async def test_raw_socket_of_is_what_extra_answers_without_its_cost() -> None:
    stream, peer = await _pair()
    async with stream:
        expected = stream.extra(anyio.abc.SocketAttribute.raw_socket)
        assert raw_socket_of(stream) is expected
        assert SocketPump(stream).raw is expected
    peer.close()


class _Bytes(anyio.abc.ByteStream):
    """A byte stream that is no socket (what a test double looks like to the pump)."""

    async def receive(self, max_bytes: int = 65536) -> bytes:
        return b""

    async def send(self, item: bytes) -> None:
        return None

    async def send_eof(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


async def test_raw_socket_of_a_stream_that_is_no_socket_is_none() -> None:
    stapled = StapledByteStream(_Bytes(), _Bytes())
    assert raw_socket_of(stapled) is None
    assert SocketPump(stapled).raw is None
    assert await SocketPump(stapled).receive() == b""


def _fill(sock: socket.socket) -> None:
    """Write into ``sock`` until its buffers are full."""
    sock.setblocking(False)
    try:
        while True:
            sock.send(b"x" * 65536)
    except BlockingIOError:
        pass


def _drain(sock: socket.socket) -> None:
    sock.setblocking(False)
    try:
        while sock.recv(1 << 20):
            pass
    except BlockingIOError:
        pass


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_send_cancelled_as_the_socket_turns_writable_reports_no_loop_error() -> None:
    # Regression (herdr subscription bursts to a client that hung up): anyio's asyncio
    # socket stream resolves its writability future from an unguarded loop callback;
    # a cancellation landing in the same loop pass as the writable report made the
    # loop report InvalidStateError, failing whichever test ran then.
    import asyncio

    loop = asyncio.get_running_loop()
    errors: list[dict[str, object]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    stream, peer = await _pair()
    raw = raw_socket_of(stream)
    assert raw is not None
    try:
        _fill(raw)
        pump = SocketPump(stream)
        sender = asyncio.ensure_future(pump.send(b"y" * 65536))
        await asyncio.sleep(0.05)  # the send now waits for the socket to be writable
        assert not sender.done()

        def turn_writable_then_cancel() -> None:
            _drain(peer)  # the next select reports the socket writable ...
            loop.call_soon(sender.cancel)  # ... in the pass that runs this cancel first

        loop.call_soon(turn_writable_then_cancel)
        with pytest.raises(asyncio.CancelledError):
            await sender
        for _ in range(5):
            await asyncio.sleep(0)
        assert errors == []
    finally:
        loop.set_exception_handler(previous)
        await stream.aclose()
        peer.close()
