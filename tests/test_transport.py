"""Async and blocking line transports against the echo reference shell and scripted peers."""

from __future__ import annotations

import errno
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import anyio.abc
import pytest

from shedproto import ErrorCode, FramingError, FramingPolicy, RemoteProtocolError
from shedproto.clients import AsyncLineTransport, BlockingLineTransport, ConnectError
from shedproto.servers import UnixServer


def scripted(reply: bytes, *, close: bool) -> UnixServer:
    """A server that reads once, writes ``reply`` and then closes or hangs."""

    async def handler(stream: anyio.abc.SocketStream) -> None:
        await stream.receive()
        if reply:
            await stream.send(reply)
        if not close:
            await anyio.sleep_forever()

    return UnixServer("unused", handler, grace=0)


async def run_scripted(
    directory: Path, reply: bytes, *, close: bool, policy: FramingPolicy | None = None
) -> list[bytes | BaseException]:
    server = scripted(reply, close=close)
    server.path = directory / "p.sock"
    results: list[bytes | BaseException] = []
    async with anyio.create_task_group() as tg:
        path = await tg.start(server.serve)
        transport = await AsyncLineTransport.connect(path, policy=policy or FramingPolicy())
        await transport.send(b"go\n")
        for _ in range(3):
            try:
                results.append(await transport.receive_frame(timeout=0.3))
            except (RemoteProtocolError, TimeoutError) as exc:
                results.append(exc)
                break
        await transport.aclose()
        server.shutdown()
    return results


async def test_async_receives_frames_split_across_reads(short_socket_dir: Path) -> None:
    results = await run_scripted(short_socket_dir, b"a\nb\n", close=True)
    assert results[:2] == [b"a", b"b"]
    assert isinstance(results[2], RemoteProtocolError)
    assert results[2].code is ErrorCode.CONNECTION_CLOSED


async def test_async_timeout_leaves_partial_frame_buffered(short_socket_dir: Path) -> None:
    results = await run_scripted(short_socket_dir, b"partial", close=False)
    assert len(results) == 1
    assert isinstance(results[0], TimeoutError)


async def test_async_over_cap_frame_is_a_framing_error(short_socket_dir: Path) -> None:
    policy = FramingPolicy(max_frame_bytes=4)
    results = await run_scripted(short_socket_dir, b"ok\n0123456789\n", close=False, policy=policy)
    assert results[0] == b"ok"
    assert isinstance(results[1], FramingError)
    assert results[1].code is ErrorCode.FRAME_TOO_LARGE


async def test_async_connect_to_missing_socket(short_socket_dir: Path) -> None:
    with pytest.raises(ConnectError) as info:
        await AsyncLineTransport.connect(short_socket_dir / "nope.sock", timeout=1)
    assert info.value.errno == errno.ENOENT


# -- blocking ------------------------------------------------------------------------


@pytest.fixture
def blocking_peer(short_socket_dir: Path) -> Iterator[tuple[Path, list[bytes]]]:
    """A thread-backed peer whose replies are scripted per test through the list."""
    path = short_socket_dir / "b.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    script: list[bytes] = []

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(1024)
            for part in script:
                conn.sendall(part)
            conn.recv(1024)  # wait for the client to go away

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path, script
    listener.close()
    thread.join(timeout=5)


def test_blocking_round_trips_and_timeout(blocking_peer: tuple[Path, list[bytes]]) -> None:
    path, script = blocking_peer
    script += [b'{"a"', b":1}\n", b"second\n"]
    with BlockingLineTransport.connect(path) as transport:
        assert transport.request(b"hi\n", timeout=5) == b'{"a":1}'
        assert transport.receive_frame(timeout=5) == b"second"
        with pytest.raises(TimeoutError):
            transport.receive_frame(timeout=0.05)


def test_blocking_connect_to_missing_socket(short_socket_dir: Path) -> None:
    with pytest.raises(ConnectError) as info:
        BlockingLineTransport.connect(short_socket_dir / "nope.sock", timeout=1)
    assert info.value.errno == errno.ENOENT


def test_blocking_peer_closing_mid_frame_is_connection_closed() -> None:
    ours, theirs = socket.socketpair()
    theirs.sendall(b"whole\nhalf")
    theirs.close()
    with BlockingLineTransport(ours) as transport:
        assert transport.receive_frame(timeout=5) == b"whole"
        assert transport.receive_frame(timeout=5) == b"half"  # default policy: tail is a frame
        with pytest.raises(RemoteProtocolError) as info:
            transport.receive_frame(timeout=5)
        assert info.value.code is ErrorCode.CONNECTION_CLOSED
