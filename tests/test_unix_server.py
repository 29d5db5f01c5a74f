"""The bind ceremony and the serve loop, over real Unix sockets."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import pwd
import socket
import stat
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import anyio
import anyio.abc
import pytest

from shedproto.clients import AsyncLineTransport, BlockingLineTransport, ConnectError
from shedproto.servers import (
    BindError,
    CannotBindError,
    NotASocketError,
    SocketInUseError,
    SocketPathTooLongError,
    UnixServer,
    _unix,
    bind_unix_socket,
    max_socket_path_bytes,
)
from shedproto.servers.echo import echo_server


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def stale_socket(path: Path) -> None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.close()  # bound but never listening: nobody will answer


def test_creates_parent_0700_and_socket_0600(short_socket_dir: Path) -> None:
    path = short_socket_dir / "nested" / "s.sock"
    bound = bind_unix_socket(path)
    try:
        assert mode(path.parent) == 0o700
        assert stat.S_ISSOCK(os.lstat(path).st_mode)
        assert mode(path) == 0o600
    finally:
        bound.sock.close()
        assert bound.unlink_if_ours()
    assert not path.exists()


def test_dedicated_dir_rechmods_a_preexisting_0777_directory(short_socket_dir: Path) -> None:
    parent = short_socket_dir / "loose"
    parent.mkdir()
    os.chmod(parent, 0o777)
    bound = bind_unix_socket(parent / "s.sock", dedicated_dir=True)
    try:
        assert mode(parent) == 0o700
    finally:
        bound.sock.close()


def test_live_socket_is_refused(short_socket_dir: Path) -> None:
    path = short_socket_dir / "s.sock"
    first = bind_unix_socket(path)
    try:
        with pytest.raises(SocketInUseError, match="live server"):
            bind_unix_socket(path)
        assert stat.S_ISSOCK(os.lstat(path).st_mode)  # still there, still first's
        assert first.unlink_if_ours() is True
    finally:
        first.sock.close()


def test_stale_socket_is_replaced(short_socket_dir: Path) -> None:
    path = short_socket_dir / "s.sock"
    stale_socket(path)
    bound = bind_unix_socket(path)
    try:
        assert os.lstat(path).st_ino == bound.inode
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.connect(str(path))  # the new socket listens
        client.close()
    finally:
        bound.sock.close()
        bound.unlink_if_ours()


@pytest.mark.parametrize("kind", ["file", "directory", "symlink"])
def test_non_socket_is_refused_and_left_alone(short_socket_dir: Path, kind: str) -> None:
    path = short_socket_dir / "s.sock"
    if kind == "file":
        path.write_text("precious")
    elif kind == "directory":
        path.mkdir()
    else:
        (short_socket_dir / "target").write_text("precious")
        path.symlink_to(short_socket_dir / "target")
    with pytest.raises(NotASocketError, match="non-socket"):
        bind_unix_socket(path)
    assert path.exists()
    if kind != "directory":
        assert path.read_text() == "precious"


def test_path_too_long_is_refused(short_socket_dir: Path) -> None:
    limit = max_socket_path_bytes()
    name = "x" * (limit - len(str(short_socket_dir)))  # one byte over with the slash
    path = short_socket_dir / name
    assert len(os.fsencode(path)) == limit + 1
    with pytest.raises(SocketPathTooLongError, match=f"at most {limit}"):
        bind_unix_socket(path)
    assert not path.exists()


def test_path_at_the_limit_binds(short_socket_dir: Path) -> None:
    limit = max_socket_path_bytes()
    path = short_socket_dir / ("y" * (limit - len(str(short_socket_dir)) - 1))
    assert len(os.fsencode(path)) == limit
    bound = bind_unix_socket(path)
    bound.sock.close()
    assert bound.unlink_if_ours()


def test_platform_limits() -> None:
    assert max_socket_path_bytes("linux") == 107
    assert max_socket_path_bytes("darwin") == 103


def test_unlink_only_if_still_ours(short_socket_dir: Path) -> None:
    path = short_socket_dir / "s.sock"
    bound = bind_unix_socket(path)
    bound.sock.close()
    # Move ours aside (keeping its inode alive, so the successor cannot reuse it).
    os.rename(path, short_socket_dir / "moved.sock")
    successor = bind_unix_socket(path)  # someone else's socket now
    try:
        assert bound.unlink_if_ours() is False
        assert stat.S_ISSOCK(os.lstat(path).st_mode)
    finally:
        successor.sock.close()
        assert successor.unlink_if_ours() is True
    assert bound.unlink_if_ours() is False  # missing file: no error


# -- the serve loop ------------------------------------------------------------------


async def test_serve_signals_readiness_and_unlinks_on_shutdown(short_socket_dir: Path) -> None:
    path = short_socket_dir / "echo.sock"
    async with anyio.create_task_group() as tg:
        server = echo_server(path)
        ready = await tg.start(server.serve)
        assert ready == path
        assert mode(path) == 0o600
        async with await AsyncLineTransport.connect(path) as transport:
            assert await transport.request(b'{"x":1}\n', timeout=5) == b'{"x":1}'
        server.shutdown()
    assert not path.exists()


async def test_serve_refuses_a_live_socket(short_socket_dir: Path) -> None:
    path = short_socket_dir / "echo.sock"
    async with anyio.create_task_group() as tg:
        first = echo_server(path)
        await tg.start(first.serve)
        with pytest.raises(SocketInUseError):
            await tg.start(echo_server(path).serve)
        assert path.exists()  # the refused server did not remove the live one
        first.shutdown()


async def test_connections_run_concurrently(short_socket_dir: Path) -> None:
    path = short_socket_dir / "echo.sock"
    async with anyio.create_task_group() as tg:
        server = echo_server(path)
        await tg.start(server.serve)
        silent = await AsyncLineTransport.connect(path)  # holds a connection open
        async with await AsyncLineTransport.connect(path) as other:
            assert await other.request(b"a\n", timeout=5) == b"a"
        await silent.aclose()
        server.shutdown()


async def test_handler_crash_closes_only_that_connection(
    short_socket_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def handler(stream: anyio.abc.SocketStream) -> None:
        data = await stream.receive()
        if data.startswith(b"boom"):
            raise RuntimeError("handler bug")
        await stream.send(data)

    path = short_socket_dir / "h.sock"
    async with anyio.create_task_group() as tg:
        server = UnixServer(path, handler)
        await tg.start(server.serve)
        async with await AsyncLineTransport.connect(path) as crashing:
            await crashing.send(b"boom\n")
            with pytest.raises(Exception, match="closed"):
                await crashing.receive_frame(timeout=5)
        async with await AsyncLineTransport.connect(path) as healthy:
            assert await healthy.request(b"fine\n", timeout=5) == b"fine"
        server.shutdown()
    assert "handler bug" in caplog.text


async def test_graceful_shutdown_lets_open_connections_finish(short_socket_dir: Path) -> None:
    finished = anyio.Event()
    received = anyio.Event()

    async def handler(stream: anyio.abc.SocketStream) -> None:
        await stream.receive()
        received.set()
        await anyio.sleep(0.05)
        await stream.send(b"done\n")
        finished.set()

    path = short_socket_dir / "g.sock"
    async with anyio.create_task_group() as tg:
        server = UnixServer(path, handler, grace=5)
        await tg.start(server.serve)
        transport = await AsyncLineTransport.connect(path)
        await transport.send(b"go\n")
        await received.wait()
        server.shutdown()
        assert await transport.receive_frame(timeout=5) == b"done"
        await transport.aclose()
    assert finished.is_set()
    assert not path.exists()


async def test_grace_expiry_cancels_stuck_connections(short_socket_dir: Path) -> None:
    async def handler(stream: anyio.abc.SocketStream) -> None:
        await anyio.sleep_forever()

    path = short_socket_dir / "stuck.sock"
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            server = UnixServer(path, handler, grace=0.05)
            await tg.start(server.serve)
            transport = await AsyncLineTransport.connect(path)
            server.shutdown()
    with pytest.raises(Exception, match="closed"):
        await transport.receive_frame(timeout=5)
    await transport.aclose()


async def test_shutdown_before_serve_returns_after_readiness(short_socket_dir: Path) -> None:
    path = short_socket_dir / "early.sock"
    server = echo_server(path)
    server.shutdown()
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            await tg.start(server.serve)
    assert not path.exists()


def test_blocking_client_against_a_stale_socket_gets_connect_error(short_socket_dir: Path) -> None:
    path = short_socket_dir / "dead.sock"
    stale_socket(path)
    with pytest.raises(ConnectError) as info:
        BlockingLineTransport.connect(path, timeout=1)
    assert info.value.errno is not None
    assert str(path) in str(info.value)


async def test_grace_expiry_ends_reading_handlers_with_end_of_stream(
    short_socket_dir: Path,
) -> None:
    ended_cleanly = anyio.Event()
    reading = anyio.Event()

    async def handler(stream: anyio.abc.SocketStream) -> None:
        try:
            while True:
                await stream.receive()
                reading.set()
        except anyio.EndOfStream:
            ended_cleanly.set()
            raise

    path = short_socket_dir / "reader.sock"
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            server = UnixServer(path, handler, grace=0.05)
            await tg.start(server.serve)
            transport = await AsyncLineTransport.connect(path)
            await transport.send(b"hello\n")
            await reading.wait()
            server.shutdown()
    assert ended_cleanly.is_set()  # woken by the socket shutdown, not cancelled mid-read
    await transport.aclose()


# -- the bind ceremony never changes what it did not create (issue 11, item 1) ---------------

Snapshot = dict[str, tuple[int, int, int]]


def snapshot(directory: Path) -> Snapshot:
    """Mode, mtime and size of ``directory`` and of everything directly in it."""
    entries = [directory, *sorted(directory.iterdir())]
    return {
        entry.name if entry != directory else ".": (
            os.lstat(entry).st_mode,
            os.lstat(entry).st_mtime_ns,
            os.lstat(entry).st_size,
        )
        for entry in entries
    }


def shared_dir(root: Path, name: str = "shared", dir_mode: int = 0o1777) -> Path:
    """A directory like ``/tmp`` (sticky, world-writable) that the ceremony must leave alone."""
    directory = root / name
    directory.mkdir()
    os.chmod(directory, dir_mode)
    return directory


NOBODY = pwd.getpwnam("nobody").pw_uid

requires_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="needs root to own a directory as another user (chown)"
)


def read_only_dir(root: Path) -> Path:
    """A directory this process may read but not write (as root: ``nobody`` will act)."""
    os.chmod(root, 0o711)  # let nobody reach it
    return shared_dir(root, "readonly", 0o755 if os.geteuid() == 0 else 0o555)


@contextlib.contextmanager
def without_write_access() -> Iterator[None]:
    """Run the body without root's override of mode bits (as ``nobody``)."""
    if os.geteuid() != 0:
        yield
        return
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)


@pytest.mark.parametrize("dir_mode", [0o1777, 0o755, 0o777, 0o750], ids=oct)
def test_existing_directory_keeps_its_mode(short_socket_dir: Path, dir_mode: int) -> None:
    parent = shared_dir(short_socket_dir, dir_mode=dir_mode)
    bound = bind_unix_socket(parent / "s.sock")
    try:
        assert mode(parent) == dir_mode  # was forced to 0700 before
        assert mode(parent / "s.sock") == 0o600
    finally:
        bound.sock.close()
        bound.unlink_if_ours()


def test_dedicated_dir_leaves_a_sticky_directory_alone(short_socket_dir: Path) -> None:
    parent = shared_dir(short_socket_dir)
    bound = bind_unix_socket(parent / "s.sock", dedicated_dir=True)
    bound.sock.close()
    bound.unlink_if_ours()
    assert mode(parent) == 0o1777


@requires_root
@pytest.mark.parametrize("dedicated", [False, True])
def test_directory_owned_by_another_user_keeps_mode_and_owner(
    short_socket_dir: Path, dedicated: bool
) -> None:
    parent = shared_dir(short_socket_dir, dir_mode=0o755)
    os.chown(parent, NOBODY, -1)
    bound = bind_unix_socket(parent / "s.sock", dedicated_dir=dedicated)
    bound.sock.close()
    bound.unlink_if_ours()
    assert mode(parent) == 0o755
    assert os.stat(parent).st_uid == NOBODY


def test_missing_parents_are_all_created_0700(short_socket_dir: Path) -> None:
    old_umask = os.umask(0o022)
    try:
        bound = bind_unix_socket(short_socket_dir / "a" / "b" / "c" / "s.sock")
    finally:
        os.umask(old_umask)
    bound.sock.close()
    bound.unlink_if_ours()
    for directory in ("a", "a/b", "a/b/c"):
        assert mode(short_socket_dir / directory) == 0o700, directory


FAILURES: dict[str, type[OSError]] = {
    "live socket": SocketInUseError,
    "regular file": NotASocketError,
    "directory": NotASocketError,
    "over-long path": SocketPathTooLongError,
    "no permission": CannotBindError,
}


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_failed_bind_changes_nothing_on_disk(short_socket_dir: Path, case: str) -> None:
    if case == "no permission":
        parent = read_only_dir(short_socket_dir)
    else:
        parent = shared_dir(short_socket_dir)
    path = parent / "s.sock"
    keep: list[socket.socket] = []
    if case == "live socket":
        live = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        live.bind(str(path))
        live.listen()
        keep.append(live)
    elif case == "regular file":
        path.write_text("precious")
    elif case == "directory":
        path.mkdir()
        (path / "inside").write_text("precious")
    elif case == "over-long path":
        path = parent / "new" / ("x" * max_socket_path_bytes())
    elif case == "no permission":
        path = parent / "sub" / "s.sock"
    before = snapshot(parent)
    inside_before = snapshot(path) if case == "directory" else None
    try:
        as_nobody = without_write_access() if case == "no permission" else contextlib.nullcontext()
        with as_nobody, pytest.raises(FAILURES[case]):
            bind_unix_socket(path)
        assert snapshot(parent) == before
        if inside_before is not None:
            assert snapshot(path) == inside_before
        if case == "regular file":
            assert path.read_text() == "precious"
    finally:
        for sock in keep:
            sock.close()


class RefusingSocket(socket.socket):
    """A socket whose bind fails the way a full disk makes it fail (after the dirs exist)."""

    def bind(self, address: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")


@contextlib.contextmanager
def refusing() -> Iterator[None]:
    """Make the ceremony's ``bind`` fail inside the body."""
    fake = SimpleNamespace(
        socket=RefusingSocket, AF_UNIX=socket.AF_UNIX, SOCK_STREAM=socket.SOCK_STREAM
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_unix, "socket", fake)
        yield


def test_failed_bind_removes_only_the_directories_it_created(short_socket_dir: Path) -> None:
    parent = shared_dir(short_socket_dir)
    (parent / "existing").mkdir()
    before = snapshot(parent)
    with refusing(), pytest.raises(OSError, match="No space"):
        bind_unix_socket(parent / "existing" / "new" / "deeper" / "s.sock")
    with refusing(), pytest.raises(OSError, match="No space"):
        bind_unix_socket(parent / "fresh" / "s.sock")
    assert sorted(p.name for p in (parent / "existing").iterdir()) == []
    assert snapshot(parent) == before


def test_failed_dedicated_bind_restores_the_directory_mode(short_socket_dir: Path) -> None:
    parent = shared_dir(short_socket_dir, dir_mode=0o777)
    with refusing(), pytest.raises(OSError, match="No space"):
        bind_unix_socket(parent / "s.sock", dedicated_dir=True)
    assert mode(parent) == 0o777


def test_bind_error_says_what_is_in_the_way(short_socket_dir: Path) -> None:
    (short_socket_dir / "d.sock").mkdir()
    with pytest.raises(BindError, match="non-socket directory"):
        bind_unix_socket(short_socket_dir / "d.sock")


def test_dedicated_dir_chmod_failure_is_not_fatal(
    short_socket_dir: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    parent = shared_dir(short_socket_dir, dir_mode=0o777)
    real_chmod = os.chmod

    def chmod(path: object, mode: int, **kwargs: object) -> None:
        if Path(str(path)) == parent:
            raise OSError(errno.EROFS, "Read-only file system")
        real_chmod(path, mode)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "chmod", chmod)
    bound = bind_unix_socket(parent / "s.sock", dedicated_dir=True)
    monkeypatch.undo()
    bound.sock.close()
    bound.unlink_if_ours()
    assert mode(parent) == 0o777
    assert "could not chmod" in caplog.text


def test_bind_error_message_names_the_path_once(short_socket_dir: Path) -> None:
    live = short_socket_dir / "live.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(live))
    listener.listen(1)
    with listener, pytest.raises(SocketInUseError) as caught:
        bind_unix_socket(live)
    assert str(caught.value) == f"a live server is already listening on {live}"
    assert caught.value.errno == errno.EADDRINUSE
    assert caught.value.filename == str(live)


def test_system_refusal_is_a_bind_error_naming_the_path_once(short_socket_dir: Path) -> None:
    blocker = short_socket_dir / "file"
    blocker.write_text("")
    target = blocker / "sub" / "s.sock"
    with pytest.raises(CannotBindError) as caught:
        bind_unix_socket(target)
    assert str(caught.value) == f"cannot bind {target}: {blocker} is not a directory"
    assert str(caught.value).count(str(target)) == 1
    assert sorted(p.name for p in short_socket_dir.iterdir()) == ["file"]


def test_refused_bind_system_call_is_a_bind_error(
    short_socket_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def bind(self: socket.socket, address: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(socket.socket, "bind", bind)
    target = short_socket_dir / "s.sock"
    with pytest.raises(CannotBindError) as caught:
        bind_unix_socket(target)
    assert str(caught.value) == f"cannot bind {target}: Permission denied"
    assert caught.value.errno == errno.EACCES
    assert not target.exists()


async def test_server_survives_running_out_of_file_descriptors(
    short_socket_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """EMFILE on accept is logged and retried: the waiting connection is served afterwards."""
    import resource

    path = short_socket_dir / "fd.sock"
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    refused = anyio.Event()

    class Watcher(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "failed" in record.getMessage():
                refused.set()

    watcher = Watcher()
    servers_log = logging.getLogger("shedproto.servers")
    servers_log.addHandler(watcher)
    try:
        async with anyio.create_task_group() as tg:
            server = echo_server(path)
            await tg.start(server.serve)
            with socket.socket(socket.AF_UNIX) as client:
                client.settimeout(5)
                client.connect(str(path))  # waits in the backlog until the server accepts
                lowest_free = os.dup(0)
                os.close(lowest_free)
                resource.setrlimit(resource.RLIMIT_NOFILE, (lowest_free, hard))
                try:
                    with anyio.fail_after(5):
                        await refused.wait()
                finally:
                    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
                assert "Too many open files" in caplog.text
                client.sendall(b"still here\n")
                reply = await anyio.to_thread.run_sync(client.recv, 100)
            assert reply == b"still here\n"
            server.shutdown()
    finally:
        servers_log.removeHandler(watcher)
