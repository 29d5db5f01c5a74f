"""The servers' byte pump (issue 16): direct socket I/O that still yields, ends and waits."""

from __future__ import annotations

import socket

import anyio
import anyio.abc
import pytest

from shedproto.servers._receive import EAGER_READS, SocketPump


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
