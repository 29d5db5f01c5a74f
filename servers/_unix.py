"""The Unix-socket bind ceremony and serve loop shared by every reference server.

The ceremony (what shed-host-agent and herdr do before they listen):

1. The path must fit ``sockaddr_un.sun_path`` (107 bytes on Linux, 103 on
   macOS, plus the NUL); longer paths raise :class:`SocketPathTooLongError`.
2. The parent directory is created if needed and ``chmod 0700``, even when it
   already existed with looser bits.
3. Whatever is at the path is inspected. A non-socket file is never deleted:
   :class:`NotASocketError`. A socket that accepts a connection within
   ``probe_timeout`` (500 ms) belongs to a live server: :class:`SocketInUseError`.
   A socket nobody answers on is stale and removed.
4. The socket is bound, ``chmod 0600`` and listened on. Its (device, inode)
   pair is remembered so that shutdown unlinks the file only if it is still
   ours, never a successor's.

:class:`UnixServer` runs one task per connection under a task group, signals
readiness through ``task_status.started()``, and shuts down gracefully: stop
accepting, give open connections ``grace`` seconds, then shut their sockets
down (their handlers see end-of-stream) and cancel whatever still runs.
"""

from __future__ import annotations

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

__all__ = [
    "BindError",
    "BoundSocket",
    "ConnectionHandler",
    "NotASocketError",
    "SocketInUseError",
    "SocketPathTooLongError",
    "UnixServer",
    "bind_unix_socket",
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
    """The bind ceremony refused the path; nothing on disk was changed."""


class SocketPathTooLongError(BindError):
    """The path does not fit in ``sockaddr_un.sun_path``."""


class NotASocketError(BindError):
    """Something other than a socket sits at the path; it is left untouched."""


class SocketInUseError(BindError):
    """A live server already answers on the path."""


def max_socket_path_bytes(platform: str = sys.platform) -> int:
    """Return the longest usable AF_UNIX path in bytes on ``platform`` (without the NUL)."""
    return 103 if platform == "darwin" or platform.startswith(("freebsd", "openbsd")) else 107


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


def _clear_path(path: Path, probe_timeout: float) -> None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        raise NotASocketError(
            errno.EEXIST, f"refusing to replace non-socket file {path}", os.fspath(path)
        )
    if _probe_live(path, probe_timeout):
        raise SocketInUseError(
            errno.EADDRINUSE, f"a live server is already listening on {path}", os.fspath(path)
        )
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def bind_unix_socket(
    path: str | os.PathLike[str],
    *,
    backlog: int = 128,
    probe_timeout: float = PROBE_TIMEOUT,
    dir_mode: int = 0o700,
    socket_mode: int = 0o600,
) -> BoundSocket:
    """Run the bind ceremony (module docstring) and return the listening socket.

    This blocks for up to ``probe_timeout`` when a socket already exists; call
    it from a worker thread in async code (``UnixServer`` does).

    Raises:
        SocketPathTooLongError: the path exceeds the AF_UNIX limit.
        NotASocketError: a non-socket file is at the path (it is not touched).
        SocketInUseError: a live server answers on the path.
        OSError: the directory or socket could not be created.

    """
    target = Path(path)
    encoded = os.fsencode(target)
    limit = max_socket_path_bytes()
    if len(encoded) > limit:
        raise SocketPathTooLongError(
            errno.ENAMETOOLONG,
            f"socket path is {len(encoded)} bytes; AF_UNIX allows at most {limit}",
            os.fspath(target),
        )
    target.parent.mkdir(mode=dir_mode, parents=True, exist_ok=True)
    os.chmod(target.parent, dir_mode)
    _clear_path(target, probe_timeout)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(os.fspath(target))
        os.chmod(target, socket_mode)
        sock.listen(backlog)
        st = os.lstat(target)
    except BaseException:
        sock.close()
        raise
    return BoundSocket(sock=sock, path=target, device=st.st_dev, inode=st.st_ino)


class UnixServer:
    """Serve ``handler`` on a Unix socket, one task per connection.

    Use ``await task_group.start(server.serve)`` for readiness (it returns the
    bound path), then :meth:`shutdown` (or cancel the scope) to stop. A handler
    that raises is logged and its connection closed; the server stays up.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        handler: ConnectionHandler,
        *,
        grace: float = 5.0,
        backlog: int = 128,
    ) -> None:
        self.path = Path(path)
        self.handler = handler
        self.grace = grace
        self.backlog = backlog
        self._accepting: anyio.CancelScope | None = None
        self._stop_requested = False
        self._open: set[anyio.abc.SocketStream] = set()
        self._drained: anyio.Event | None = None

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
            lambda: bind_unix_socket(self.path, backlog=self.backlog)
        )
        try:
            listener = await anyio.abc.SocketListener.from_socket(bound.sock)
        except BaseException:
            bound.sock.close()
            bound.unlink_if_ours()
            raise
        try:
            async with anyio.create_task_group() as connections:
                async with listener:
                    with anyio.CancelScope() as self._accepting:
                        if self._stop_requested:
                            self._accepting.cancel()
                        task_status.started(bound.path)
                        await self._accept_loop(listener, connections)
                await self._drain()
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
        while True:
            try:
                stream = await listener.accept()
            except OSError as exc:
                if exc.errno not in _TRANSIENT_ACCEPT_ERRORS:
                    raise
                log.warning("accept on %s failed (%s); retrying", self.path, exc)
                await anyio.sleep(ACCEPT_RETRY_DELAY)
                continue
            connections.start_soon(self._run_handler, stream)

    async def _run_handler(self, stream: anyio.abc.SocketStream) -> None:
        self._open.add(stream)
        try:
            async with stream:
                await self.handler(stream)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream):
            pass  # the peer went away; nothing to report
        except Exception:
            log.exception("connection handler failed on %s", self.path)
        finally:
            self._open.discard(stream)
            if not self._open and self._drained is not None:
                self._drained.set()
