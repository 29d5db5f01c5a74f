r"""Process locks: :class:`ProcessLock` and the host's pair, :func:`acquire_host_locks`.

A lock is a private file (``0600`` in a ``0700`` directory) held with a
non-blocking exclusive ``flock``. Acquiring:

1. refuse a path this process already holds;
2. ensure the private directory;
3. ``lstat`` the file: absent, create it new (``O_EXCL``, ``0600``); present,
   check it, open it, ``fstat`` and check again, and compare ``(st_dev,
   st_ino)`` with the ``lstat`` (``process lock file changed while opening:
   <path>``): a file swapped in between is never trusted;
4. ``flock(LOCK_EX | LOCK_NB)``; busy raises ``another agent host holds the
   process lock: <path>``;
5. truncate, write ``<pid>\n`` and ``fdatasync``.

The file is never deleted: releasing unlocks and closes it, so a successor
that already opened the same inode is never stranded on an unlinked file.
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
from types import TracebackType

from ._private import check_private, ensure_private_directory

__all__ = [
    "LABEL",
    "HostLocks",
    "LockChangedError",
    "LockHeldError",
    "ProcessLock",
    "acquire_host_locks",
]

LABEL = "process lock"
"""The prefix of every private-path message about lock paths."""

_held: set[str] = set()
_held_guard = threading.Lock()


class LockHeldError(BlockingIOError):
    """Another agent host (another process, or this one) holds the lock.

    ``str(error)`` is ``another agent host holds the process lock: <path>``.
    """


class LockChangedError(PermissionError):
    """The lock file was replaced between ``lstat`` and ``open``; nothing was locked."""


def _open_lock_file(path: str) -> int:
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    try:
        prior = os.lstat(path)
    except FileNotFoundError:
        try:
            return os.open(
                path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | nofollow, 0o600
            )
        except FileExistsError:
            prior = os.lstat(path)
    check_private(LABEL, "file", path, prior)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | nofollow)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # swapped for a symlink after the lstat
            raise LockChangedError(f"process lock file changed while opening: {path}") from None
        raise
    try:
        actual = os.fstat(fd)
        check_private(LABEL, "file", path, actual)
        if (prior.st_dev, prior.st_ino) != (actual.st_dev, actual.st_ino):
            raise LockChangedError(f"process lock file changed while opening: {path}")
    except BaseException:
        os.close(fd)
        raise
    return fd


class ProcessLock:
    """One held process lock; release it with :meth:`release` or a ``with`` block."""

    __slots__ = ("_fd", "path")

    def __init__(self, fd: int, path: str) -> None:
        self._fd: int | None = fd
        self.path = path

    @classmethod
    def acquire(cls, path: str | os.PathLike[str], *, pid: int | None = None) -> ProcessLock:
        """Take the lock at ``path`` (made absolute) without blocking.

        Raises:
            LockHeldError: another process, or this one, holds it.
            LockChangedError: the file was swapped while it was being opened.
            PrivatePathError: the directory or file is not private.
            OSError: the file could not be created, opened or written.

        """
        normalized = os.path.abspath(os.fspath(path))
        with _held_guard:
            if normalized in _held:
                raise LockHeldError(f"another agent host holds the process lock: {normalized}")
            _held.add(normalized)
        fd: int | None = None
        try:
            ensure_private_directory(LABEL, os.path.dirname(normalized))
            fd = _open_lock_file(normalized)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise LockHeldError(
                    f"another agent host holds the process lock: {normalized}"
                ) from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid() if pid is None else pid}\n".encode(), 0)
            (getattr(os, "fdatasync", None) or os.fsync)(fd)
            return cls(fd, normalized)
        except BaseException:
            if fd is not None:
                os.close(fd)
            with _held_guard:
                _held.discard(normalized)
            raise

    @property
    def held(self) -> bool:
        """Whether this object still holds the lock."""
        return self._fd is not None

    def release(self) -> None:
        """Unlock and close (the file stays). Idempotent; never raises for a second call.

        Raises:
            OSError: unlocking failed (the descriptor is closed anyway).

        """
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
            with _held_guard:
                _held.discard(self.path)

    def __enter__(self) -> ProcessLock:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"ProcessLock({self.path!r}, held={self.held})"


class HostLocks:
    """The target lock and the ledger lock, taken in that order and released in reverse."""

    __slots__ = ("ledger", "target")

    def __init__(self, target: ProcessLock, ledger: ProcessLock) -> None:
        self.target = target
        self.ledger = ledger

    def release(self) -> None:
        """Release the ledger lock, then the target lock; idempotent.

        Raises:
            OSError: an unlock failed (both descriptors are closed anyway).

        """
        try:
            self.ledger.release()
        finally:
            self.target.release()

    def __enter__(self) -> HostLocks:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def acquire_host_locks(
    target_lock: str | os.PathLike[str], ledger_lock: str | os.PathLike[str]
) -> HostLocks:
    """Take the target lock, then the ledger lock; on failure nothing stays held.

    Raises:
        LockHeldError: either lock is held elsewhere.
        LockChangedError, PrivatePathError, OSError: as :meth:`ProcessLock.acquire`.

    """
    target = ProcessLock.acquire(target_lock)
    try:
        ledger = ProcessLock.acquire(ledger_lock)
    except BaseException:
        target.release()
        raise
    return HostLocks(target, ledger)
