"""Async and blocking line transports against the echo reference shell and scripted peers."""

from __future__ import annotations

import errno
import os
import pwd
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import anyio.abc
import pytest

from shedproto import ErrorCode, FramingError, FramingPolicy, RemoteProtocolError
from shedproto.clients import (
    AsyncLineTransport,
    BlockingLineTransport,
    ConnectError,
    ConnectReason,
    UnreachableSocketError,
)
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


# -- connection errors say what is at the path (issue 11, item 8) ----------------------------

NOBODY = pwd.getpwnam("nobody").pw_uid

WHAT_IS_THERE = {
    "nothing": (ConnectReason.NOTHING, "nothing is there"),
    "missing parent": (ConnectReason.NOTHING, "nothing is there"),
    "directory": (ConnectReason.DIRECTORY, "it is a directory, not a socket"),
    "regular file": (ConnectReason.REGULAR_FILE, "it is a regular file, not a socket"),
    "fifo": (ConnectReason.NOT_A_SOCKET, "it is not a socket"),
    "stale socket": (
        ConnectReason.NOT_LISTENING,
        "a socket is there but no server is listening on it",
    ),
}


def make_obstacle(directory: Path, kind: str) -> Path:
    """Put ``kind`` at a path in ``directory`` and return the path."""
    path = directory / "x.sock"
    if kind == "missing parent":
        return directory / "no-such-dir" / "x.sock"
    if kind == "directory":
        path.mkdir()
    elif kind == "regular file":
        path.write_text("data")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "stale socket":
        stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stale.bind(str(path))
        stale.close()
    return path


def assert_one_clear_line(error: UnreachableSocketError, path: Path, kind: str) -> None:
    reason, says = WHAT_IS_THERE[kind]
    assert error.reason is reason
    assert error.path == str(path)
    assert str(error) == f"cannot connect to {path}: {says}"
    assert str(error).count(str(path)) == 1  # was "[Errno 111] ... {path}: ...: '{path}'"
    assert "\n" not in str(error)
    assert isinstance(error, ConnectError)
    assert error.errno is not None
    assert error.filename == str(path)


@pytest.mark.parametrize("kind", sorted(WHAT_IS_THERE))
def test_blocking_connect_error_says_what_is_there(short_socket_dir: Path, kind: str) -> None:
    path = make_obstacle(short_socket_dir, kind)
    with pytest.raises(UnreachableSocketError) as info:
        BlockingLineTransport.connect(path, timeout=1)
    assert_one_clear_line(info.value, path, kind)


@pytest.mark.parametrize("kind", sorted(WHAT_IS_THERE))
async def test_async_connect_error_says_what_is_there(short_socket_dir: Path, kind: str) -> None:
    path = make_obstacle(short_socket_dir, kind)
    with pytest.raises(UnreachableSocketError) as info:
        await AsyncLineTransport.connect(path, timeout=1)
    assert_one_clear_line(info.value, path, kind)


async def test_connect_error_for_an_over_long_path(short_socket_dir: Path) -> None:
    path = short_socket_dir / ("x" * 200)
    with pytest.raises(UnreachableSocketError) as blocking:
        BlockingLineTransport.connect(path, timeout=1)
    with pytest.raises(UnreachableSocketError) as asynchronous:
        await AsyncLineTransport.connect(path, timeout=1)
    for error in (blocking.value, asynchronous.value):
        assert error.reason is ConnectReason.PATH_TOO_LONG
        size = len(os.fsencode(path))
        assert str(error) == (
            f"cannot connect to {path}: the path is {size} bytes; "
            "a Unix socket path may have at most 107"
        )


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user (seteuid)")
def test_connect_error_for_permission_denied(short_socket_dir: Path) -> None:
    os.chmod(short_socket_dir, 0o755)
    path = short_socket_dir / "private.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    os.chmod(path, 0o600)
    listener.listen()
    os.seteuid(NOBODY)
    try:
        with pytest.raises(UnreachableSocketError) as info:
            BlockingLineTransport.connect(path, timeout=1)
    finally:
        os.seteuid(0)
        listener.close()
    assert info.value.reason is ConnectReason.PERMISSION_DENIED
    assert str(info.value) == f"cannot connect to {path}: permission denied"
    assert info.value.errno == errno.EACCES


def connect_until_refused(path: Path) -> tuple[list[socket.socket], UnreachableSocketError]:
    """Connect until the backlog is full and a connect times out; return both."""
    held: list[socket.socket] = []
    for _ in range(8):
        try:
            transport = BlockingLineTransport.connect(path, timeout=0.2)
        except UnreachableSocketError as exc:
            return held, exc
        held.append(transport.sock)
    raise AssertionError("the server accepted every connection")


def test_connect_error_for_a_server_that_does_not_accept(short_socket_dir: Path) -> None:
    path = short_socket_dir / "busy.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(0)  # a backlog of one, never accepted
    held, error = connect_until_refused(path)
    for sock in [*held, listener]:
        sock.close()
    assert error.reason is ConnectReason.TIMEOUT
    assert str(error) == (
        f"cannot connect to {path}: the server did not accept the connection in time"
    )


# -- one sliding deadline per connection; one receive helper (issue 13 item 2, issue 16) -------


async def test_async_deadline_is_set_once_per_call_and_spans_its_waits(
    short_socket_dir: Path,
) -> None:
    server = scripted(b"a\n", close=False)
    server.path = short_socket_dir / "d.sock"
    async with anyio.create_task_group() as tg:
        path = await tg.start(server.serve)
        async with await AsyncLineTransport.connect(path) as transport:
            await transport.send(b"go\n")
            transport.set_timeout(0.2)
            assert await transport.receive_frame() == b"a"
            with pytest.raises(TimeoutError):
                await transport.receive_frame()  # the same call's deadline, not a fresh one
            transport.set_timeout(None)
            assert transport.deadline == float("inf")
        server.shutdown()


async def test_async_receive_some_is_empty_at_eof(short_socket_dir: Path) -> None:
    server = scripted(b"raw bytes", close=True)
    server.path = short_socket_dir / "e.sock"
    async with anyio.create_task_group() as tg:
        path = await tg.start(server.serve)
        async with await AsyncLineTransport.connect(path) as transport:
            await transport.send(b"go\n")
            received = b""
            while chunk := await transport.receive_some():
                received += chunk
            assert received == b"raw bytes"
        server.shutdown()


async def test_async_send_after_close_is_a_closed_resource(short_socket_dir: Path) -> None:
    server = scripted(b"", close=False)
    server.path = short_socket_dir / "c.sock"
    async with anyio.create_task_group() as tg:
        path = await tg.start(server.serve)
        transport = await AsyncLineTransport.connect(path)
        await transport.send(b"go\n")
        await transport.aclose()
        with pytest.raises(anyio.ClosedResourceError):
            await transport.send(b"late\n")
        server.shutdown()


def test_blocking_deadline_spans_the_waits_of_one_call() -> None:
    ours, theirs = socket.socketpair()
    theirs.sendall(b"a\n")
    with BlockingLineTransport(ours) as transport, theirs:
        transport.set_timeout(0.2)
        assert transport.receive_frame() == b"a"
        with pytest.raises(TimeoutError):
            transport.receive_frame()
        theirs.sendall(b"late")
        transport.set_timeout(0)  # past the deadline it still takes what is there
        assert transport.receive_some() == b"late"
        theirs.close()
        transport.set_timeout(None)
        assert transport.receive_some() == b""
