"""The Unix-socket bind ceremony and serve loop shared by every reference server.

The ceremony (what shed-host-agent and herdr do before they listen):

1. The path must fit ``sockaddr_un.sun_path`` (107 bytes on Linux, 103 on
   macOS, plus the NUL); longer paths raise :class:`SocketPathTooLongError`.
2. Whatever is at the path is inspected. A non-socket file is never deleted:
   :class:`NotASocketError`. A socket that accepts a connection within
   ``probe_timeout`` (500 ms) belongs to a live server: :class:`SocketInUseError`.
   A socket nobody answers on is stale and removed.
3. Missing parent directories are created ``0700``. An existing directory
   keeps its mode (``/tmp``, a user's folder), except with ``dedicated_dir``:
   shed-host-agent re-chmods its own socket directory to ``0700`` even when it
   already existed, and only :class:`~shedproto.servers.host_agent.HostAgentServer`
   asks for that. Even then a sticky directory or one owned by another user
   is left alone: it is shared, not the program's own.
4. The socket is bound, ``chmod 0600`` and listened on. Its (device, inode)
   pair is remembered so that shutdown unlinks the file only if it is still
   ours, never a successor's.

When any step fails nothing on disk has changed: the directories this call
created are removed again and a re-chmodded directory gets its mode back.

:class:`UnixServer` runs one task per connection, signals readiness through
``task_status.started()``, and shuts down gracefully: stop accepting, give
open connections ``grace`` seconds, then shut their sockets down (their
handlers see end-of-stream) and cancel whatever still runs. A peer that
hangs up (even while it is still owed replies) is normal: at most one debug
line, never a traceback.

On asyncio (uvloop too) a connection's task is a plain loop task, not an
anyio task-group child (issue 16): anyio's ``start_soon`` builds a task
handle with its own cancel scope and event per task, about 20 µs, a fifth
of a whole connection that carries one request (herdr) on uvloop. The
server keeps the tasks in a set and gives them the group's guarantees
itself: when serving ends (shutdown or cancellation) the ones still running
are cancelled and awaited, shielded, before ``serve`` returns. On trio the
connections are children of a task group.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import socket
import stat
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.abc
import anyio.lowlevel

from shedproto._unix_paths import max_socket_path_bytes as _max_socket_path_bytes

from ._dirs import create_directories
from ._loop import running_asyncio_loop
from ._receive import EAGER_READS, HANGUP_ERRORS, ReadableWatch

__all__ = [
    "BindError",
    "BoundSocket",
    "CannotBindError",
    "ConnectionHandler",
    "NotASocketError",
    "SocketInUseError",
    "SocketPathTooLongError",
    "UnixServer",
    "bind_unix_socket",
    "is_hangup",
    "max_socket_path_bytes",
]

log = logging.getLogger("shedproto.servers")

ACCEPT_RETRY_DELAY = 0.1
"""Seconds to back off when accept fails for lack of descriptors or memory."""

_TRANSIENT_ACCEPT_ERRORS = frozenset(
    {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM, errno.ECONNABORTED}
)

STRAGGLER_DELAY = 0.5
"""Seconds handlers get after their sockets were shut down, before they are cancelled."""

PROBE_TIMEOUT = 0.5
"""Seconds a connect probe waits before an existing socket counts as stale."""

ConnectionHandler = Callable[[anyio.abc.SocketStream], Awaitable[None]]
"""A per-connection coroutine; the server closes the stream after it returns."""


class BindError(OSError):
    """The bind ceremony refused the path; nothing on disk was changed.

    ``str()`` is one line naming the path once and what is wrong (the
    ``strerror``); ``errno`` and ``filename`` are set as for any ``OSError``.
    """

    def __str__(self) -> str:
        return self.strerror or super().__str__()


class SocketPathTooLongError(BindError):
    """The path does not fit in ``sockaddr_un.sun_path``."""


class NotASocketError(BindError):
    """Something other than a socket sits at the path; it is left untouched."""


class SocketInUseError(BindError):
    """A live server already answers on the path."""


class CannotBindError(BindError):
    """The system refused a step of the bind; ``errno`` is the system's.

    For example no permission, a missing or read-only directory, or a parent
    that is not a directory.
    """


def _cannot_bind(target: Path, exc: OSError) -> CannotBindError:
    """Say in one line, naming ``target`` once, why the system refused to bind it."""
    why = exc.strerror or type(exc).__name__
    where = exc.filename if isinstance(exc.filename, str) else None
    if exc.errno == errno.ENOTDIR:
        blocker = next((p for p in target.parents if os.path.lexists(p) and not p.is_dir()), None)
        says = f"{blocker} is not a directory" if blocker else why
    elif where and where != os.fspath(target):
        says = f"cannot create or use its directory {where} ({why})"
    else:
        says = why
    return CannotBindError(exc.errno or errno.EIO, f"cannot bind {target}: {says}", str(target))


def max_socket_path_bytes(platform: str = sys.platform) -> int:
    """Return the longest usable AF_UNIX path in bytes on ``platform`` (without the NUL)."""
    return _max_socket_path_bytes(platform)


@dataclass(frozen=True)
class BoundSocket:
    """A listening socket produced by :func:`bind_unix_socket` and its on-disk identity."""

    sock: socket.socket
    path: Path
    device: int
    inode: int

    def unlink_if_ours(self) -> bool:
        """Remove the socket file if it is still the one we bound; return whether it was.

        Never raises for a missing or replaced file: a successor's socket is left alone.
        """
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            return False
        if (st.st_dev, st.st_ino) != (self.device, self.inode):
            return False
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            return False
        return True


def _probe_live(path: Path, timeout: float) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(timeout)
    try:
        probe.connect(os.fspath(path))
    except (ConnectionRefusedError, FileNotFoundError):
        return False
    except OSError as exc:
        # A full backlog or a slow accept is still a live server.
        return exc.errno in (errno.EAGAIN, errno.ETIMEDOUT) or isinstance(exc, TimeoutError)
    else:
        return True
    finally:
        probe.close()


def _describe(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "file" if stat.S_ISREG(mode) else "file (not a socket)"


def _clear_path(path: Path, probe_timeout: float) -> None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        raise NotASocketError(
            errno.EEXIST,
            f"refusing to replace non-socket {_describe(st.st_mode)} {path}",
            os.fspath(path),
        )
    if _probe_live(path, probe_timeout):
        raise SocketInUseError(
            errno.EADDRINUSE, f"a live server is already listening on {path}", os.fspath(path)
        )
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _claim_dedicated_dir(directory: Path, dir_mode: int) -> int | None:
    """Chmod our own socket directory to ``dir_mode``; return its previous mode if changed.

    A sticky directory, another user's, or a failing chmod is logged and left as it is.
    """
    st = os.stat(directory)
    if st.st_mode & stat.S_ISVTX or st.st_uid != os.geteuid():
        log.warning(
            "leaving the mode of %s alone: a sticky or another user's directory is not "
            "this program's own socket directory",
            directory,
        )
        return None
    previous = stat.S_IMODE(st.st_mode)
    if previous == dir_mode:
        return None
    try:
        os.chmod(directory, dir_mode)
    except OSError as exc:  # not fatal, as in shed-host-agent: the bind decides
        log.warning("could not chmod %s to %o: %s", directory, dir_mode, exc.strerror)
        return None
    return previous


def bind_unix_socket(
    path: str | os.PathLike[str],
    *,
    backlog: int = 128,
    probe_timeout: float = PROBE_TIMEOUT,
    dir_mode: int = 0o700,
    socket_mode: int = 0o600,
    dedicated_dir: bool = False,
) -> BoundSocket:
    """Run the bind ceremony (module docstring) and return the listening socket.

    ``dedicated_dir=True`` declares the parent directory this program's own
    socket directory, re-chmodded to ``dir_mode`` even if it already existed
    (only shed-host-agent does this). This blocks for up to ``probe_timeout``
    when a socket already exists; call it from a worker thread in async code
    (``UnixServer`` does).

    Raises:
        SocketPathTooLongError: the path exceeds the AF_UNIX limit.
        NotASocketError: a non-socket file is at the path (it is not touched).
        SocketInUseError: a live server answers on the path.
        CannotBindError: the directory or socket could not be created (for
            example no permission); nothing on disk was changed.

    """
    target = Path(path)
    try:
        return _bind(
            target,
            backlog=backlog,
            probe_timeout=probe_timeout,
            dir_mode=dir_mode,
            socket_mode=socket_mode,
            dedicated_dir=dedicated_dir,
        )
    except BindError:
        raise
    except OSError as exc:
        raise _cannot_bind(target, exc) from exc


def _bind(
    target: Path,
    *,
    backlog: int,
    probe_timeout: float,
    dir_mode: int,
    socket_mode: int,
    dedicated_dir: bool,
) -> BoundSocket:
    encoded = os.fsencode(target)
    limit = max_socket_path_bytes()
    if len(encoded) > limit:
        raise SocketPathTooLongError(
            errno.ENAMETOOLONG,
            f"socket path is {len(encoded)} bytes; AF_UNIX allows at most {limit}",
            os.fspath(target),
        )
    _clear_path(target, probe_timeout)
    created = create_directories(target.parent, dir_mode)
    previous_mode: int | None = None
    sock: socket.socket | None = None
    bound = False
    try:
        if dedicated_dir and not created.paths:
            previous_mode = _claim_dedicated_dir(target.parent, dir_mode)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(os.fspath(target))
        bound = True
        os.chmod(target, socket_mode)
        sock.listen(backlog)
        st = os.lstat(target)
    except BaseException:
        if sock is not None:
            sock.close()
        if bound:
            with contextlib.suppress(OSError):
                os.unlink(target)
        if previous_mode is not None:
            with contextlib.suppress(OSError):
                os.chmod(target.parent, previous_mode)
        created.undo()
        raise
    return BoundSocket(sock=sock, path=target, device=st.st_dev, inode=st.st_ino)


def is_hangup(exc: BaseException) -> bool:
    """Tell whether ``exc`` only says the peer went away (also inside exception groups).

    The peer went away when ``exc`` is one of
    :data:`~shedproto.servers._receive.HANGUP_ERRORS`. A group counts when
    every exception in it (recursively) is a hang-up.
    """
    if isinstance(exc, HANGUP_ERRORS):
        return True
    members = getattr(exc, "exceptions", None)  # BaseExceptionGroup (the backport on 3.10)
    return (
        isinstance(members, tuple)
        and bool(members)
        and all(isinstance(member, BaseException) and is_hangup(member) for member in members)
    )


class UnixServer:
    """Serve ``handler`` on a Unix socket, one task per connection.

    Use ``await task_group.start(server.serve)`` for readiness (it returns the
    bound path), then :meth:`shutdown` (or cancel the scope) to stop. A handler
    that raises is logged with its traceback and its connection closed; the
    server stays up. A hang-up (``is_hangup()``) is logged at debug level only.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        handler: ConnectionHandler,
        *,
        grace: float = 5.0,
        backlog: int = 128,
        dedicated_dir: bool = False,
    ) -> None:
        self.path = Path(path)
        self.handler = handler
        self.grace = grace
        self.backlog = backlog
        self.dedicated_dir = dedicated_dir
        """Passed to :func:`bind_unix_socket`: re-chmod the existing parent (host-agent only)."""
        self._accepting: anyio.CancelScope | None = None
        self._stop_requested = False
        self._open: set[anyio.abc.SocketStream] = set()
        self._drained: anyio.Event | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        """The connections' loop tasks on asyncio (trio: the task group holds them)."""

    def shutdown(self) -> None:
        """Stop accepting; open connections get ``grace`` seconds before cancellation.

        Safe to call before ``serve`` has started and more than once.
        """
        self._stop_requested = True
        if self._accepting is not None:
            self._accepting.cancel()

    async def serve(
        self, *, task_status: anyio.abc.TaskStatus[Path] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Bind, report readiness with the path, and serve until shut down or cancelled.

        Raises:
            BindError: the bind ceremony refused the path (readiness is never signalled).

        """
        bound = await anyio.to_thread.run_sync(
            lambda: bind_unix_socket(
                self.path, backlog=self.backlog, dedicated_dir=self.dedicated_dir
            )
        )
        try:
            listener = await anyio.abc.SocketListener.from_socket(bound.sock)
        except BaseException:
            bound.sock.close()
            bound.unlink_if_ours()
            raise
        loop = running_asyncio_loop()
        try:
            async with anyio.create_task_group() as connections:
                try:
                    async with listener:
                        with anyio.CancelScope() as self._accepting:
                            if self._stop_requested:
                                self._accepting.cancel()
                            task_status.started(bound.path)
                            if loop is not None:
                                await self._accept_direct(bound.sock, loop)
                            else:
                                await self._accept_loop(listener, connections)
                    await self._drain()
                finally:
                    await self._end_tasks()
                connections.cancel_scope.cancel()
        finally:
            bound.unlink_if_ours()

    async def _drain(self) -> None:
        """Give open connections ``grace`` seconds, then end the stragglers' sockets.

        Shutting a socket down wakes its handler with end-of-stream, so handlers
        blocked in a read finish on their own instead of being cancelled mid-read
        (which races with data arriving on anyio's asyncio backend).
        """
        if self._open:
            self._drained = anyio.Event()
            with anyio.move_on_after(self.grace):
                await self._drained.wait()
        if not self._open:
            return
        for stream in list(self._open):
            raw = stream.extra(anyio.abc.SocketAttribute.raw_socket)
            with contextlib.suppress(OSError):
                raw.shutdown(socket.SHUT_RDWR)
        self._drained = anyio.Event()
        with anyio.move_on_after(STRAGGLER_DELAY):
            await self._drained.wait()

    async def _accept_loop(
        self, listener: anyio.abc.SocketListener, connections: anyio.abc.TaskGroup
    ) -> None:
        """Accept through anyio's listener (trio); transient errors are logged and retried."""
        while True:
            try:
                stream = await listener.accept()
            except (OSError, anyio.BrokenResourceError) as exc:
                await self._accept_failed(exc)
                continue
            connections.start_soon(self._run_handler, stream)

    async def _accept_direct(self, sock: socket.socket, loop: asyncio.AbstractEventLoop) -> None:
        """Accept on the listening socket itself (asyncio, uvloop too).

        anyio's listener registers its socket *object* with the event loop
        for every wait, and asyncio's selector formats that socket's repr
        into an internal ``KeyError`` each time (about 12 µs a connection);
        this loop accepts until the socket is empty, then waits on its file
        descriptor, registered once (:class:`~._receive.ReadableWatch`, not an
        add and a remove per connection). Accepted sockets are
        wrapped by the backend's socket stream class, found on the first
        connection, and served by a loop task each (module docstring;
        :meth:`_end_tasks` ends them). A checkpoint every
        :data:`~._receive.EAGER_READS` accepts in a row lets the connections
        run. Transient errors (``EMFILE`` and kin) are logged and retried
        after :data:`ACCEPT_RETRY_DELAY`; others propagate.
        """
        tasks = self._tasks
        make: Callable[[socket.socket], anyio.abc.SocketStream] | None = None
        in_a_row = 0
        readable = ReadableWatch(sock)
        try:
            while True:
                try:
                    client, _ = sock.accept()
                except BlockingIOError:
                    in_a_row = 0
                    await readable.wait()
                    continue
                except OSError as exc:
                    await self._accept_failed(exc)
                    continue
                client.setblocking(False)
                if make is None:
                    stream: anyio.abc.SocketStream = await anyio.abc.UNIXSocketStream.from_socket(
                        client
                    )
                    make = type(stream)
                else:
                    stream = make(client)
                task = loop.create_task(self._run_handler(stream))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
                in_a_row += 1
                if in_a_row % EAGER_READS == 0:
                    await anyio.lowlevel.checkpoint()
        finally:
            readable.close()  # before the listener closes the socket

    async def _end_tasks(self) -> None:
        """Cancel the connections' loop tasks still running and wait for them, shielded.

        Called when serving ends, however it ends: like a task group, ``serve``
        never returns while one of its connections still runs.
        """
        tasks = self._tasks
        if not tasks:
            return
        for task in tasks:
            task.cancel()
        with anyio.CancelScope(shield=True):
            await asyncio.wait(list(tasks))

    async def _accept_failed(self, exc: BaseException) -> None:
        """Log a transient accept error and wait before retrying; re-raise any other.

        anyio wraps the listener's ``OSError`` in ``BrokenResourceError``; its
        cause is what decides.
        """
        cause = exc.__cause__ if isinstance(exc, anyio.BrokenResourceError) else exc
        if not isinstance(cause, OSError) or cause.errno not in _TRANSIENT_ACCEPT_ERRORS:
            raise exc
        log.warning("accept on %s failed (%s); retrying", self.path, cause)
        await anyio.sleep(ACCEPT_RETRY_DELAY)

    async def _run_handler(self, stream: anyio.abc.SocketStream) -> None:
        self._open.add(stream)
        try:
            async with stream:
                await self.handler(stream)
        except Exception as exc:
            if is_hangup(exc):
                log.debug("peer hung up on %s (%s)", self.path, type(exc).__name__)
            else:
                log.exception("connection handler failed on %s", self.path)
        finally:
            self._open.discard(stream)
            if not self._open and self._drained is not None:
                self._drained.set()
