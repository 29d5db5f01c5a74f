"""SocketPump.receive_now: the read that never waits (issue 16, herdr's one-request read)."""

from __future__ import annotations

import socket

import anyio
import anyio.abc

from shedproto.servers._receive import SocketPump


async def _pair() -> tuple[anyio.abc.SocketStream, socket.socket]:
    """Return an anyio stream over one end of a socket pair, and the plain other end."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    return await anyio.abc.UNIXSocketStream.from_socket(ours), theirs


async def test_socket_pump_receive_now_never_waits() -> None:
    stream, peer = await _pair()
    pump = SocketPump(stream)
    async with stream:
        assert pump.receive_now() is None  # nothing has arrived yet
        peer.sendall(b"here\n")
        assert pump.receive_now() == b"here\n"
        peer.close()
        assert pump.receive_now() == b""  # the peer is gone


class _NoSocket(anyio.abc.ByteStream):
    """A byte stream without a socket (a test double): hands out ``chunks``, then EOF."""

    def __init__(self, *chunks: bytes) -> None:
        self.chunks = list(chunks)

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self.chunks:
            raise anyio.EndOfStream
        return self.chunks.pop(0)

    async def send(self, item: bytes) -> None:
        self.chunks.append(item)

    async def send_eof(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


async def test_socket_pump_receive_now_without_a_socket_leaves_it_to_receive() -> None:
    pump = SocketPump(_NoSocket(b"queued"))
    assert pump.raw is None
    assert pump.receive_now() is None
    assert await pump.receive() == b"queued"
    assert await pump.receive() == b""


async def test_socket_pump_wait_cancelled_then_waits_again() -> None:
    # the wait's reader registration is removed on cancellation: the next wait works
    stream, peer = await _pair()
    pump = SocketPump(stream)
    async with stream:
        with anyio.move_on_after(0.01) as scope:
            await pump.receive()
        assert scope.cancelled_caught

        async def late_write() -> None:
            await anyio.sleep(0.01)
            peer.sendall(b"after\n")

        async with anyio.create_task_group() as tg:
            tg.start_soon(late_write)
            assert await pump.receive() == b"after\n"
    peer.close()
