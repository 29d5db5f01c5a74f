"""Real processes in pseudo-terminals for the reference server's panes.

Each pane's program runs in a new session with the PTY as its controlling
terminal (a tiny exec shim calls ``TIOCSCTTY``; ``preexec_fn`` is avoided
because it is unsafe with threads). Output is read without blocking the event
loop via ``anyio.wait_readable`` on the master descriptor. Closing a pane
hangs up its process group (SIGHUP), then kills it after a grace period, and
always reaps the child, so no process outlives the server, except the
programs a live handoff passed to a successor: it adopts their PTYs
(:meth:`PtyProcess.adopt`) without being their parent (:class:`AdoptedProcess`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
from collections.abc import Mapping, Sequence
from typing import Protocol

import anyio

__all__ = ["AdoptedProcess", "ChildProcess", "PtyProcess"]

_SHIM = (
    "import fcntl,os,sys,termios\n"
    "fcntl.ioctl(0, termios.TIOCSCTTY, 0)\n"
    "os.execvp(sys.argv[1], sys.argv[1:])\n"
)

READ_CHUNK = 65536


class ChildProcess(Protocol):
    """What a pane needs of its program's process: its id and whether it has exited."""

    @property
    def pid(self) -> int:
        """The process id."""
        ...

    def poll(self) -> int | None:
        """Return the exit status once the process has exited, else ``None``."""
        ...


class AdoptedProcess:
    """A pane program this server did not start (a live handoff passed its PTY here).

    It is not our child, so it cannot be waited for: it counts as exited once
    no process has its id any more, or that process is a zombie (read from
    ``/proc`` where there is one). The exit status is unknown (``0``).
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def poll(self) -> int | None:
        """Return ``None`` while the process runs, ``0`` once it is gone or a zombie."""
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return 0
        except PermissionError:  # the id was reused by another user's process
            return 0
        try:
            with open(f"/proc/{self.pid}/stat", "rb") as stat:
                state = stat.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            return None
        return 0 if state in (b"Z", b"X") else None


class PtyProcess:
    """One program running on a fresh PTY.

    Raises (from :meth:`spawn`):
        OSError: the PTY could not be opened or the program could not start.
    """

    def __init__(self, process: ChildProcess, master: int) -> None:
        self.process = process
        self.master = master
        self.closed = False

    @property
    def pid(self) -> int:
        """The child's process id (also its process group and session id)."""
        return self.process.pid

    @classmethod
    def spawn(
        cls,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | None,
        cols: int = 80,
        rows: int = 24,
    ) -> PtyProcess:
        """Start ``argv`` on a new PTY of ``cols`` x ``rows`` in ``cwd`` with exactly ``env``."""
        master, slave = pty.openpty()
        try:
            _set_size(master, cols, rows)
            process = subprocess.Popen(
                [sys.executable, "-c", _SHIM, *argv],
                stdin=slave,
                stdout=slave,
                stderr=slave,
                cwd=cwd,
                env=dict(env),
                start_new_session=True,
                close_fds=True,
            )
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(slave)
        os.set_blocking(master, False)
        return cls(process, master)

    @classmethod
    def adopt(cls, master: int, pid: int) -> PtyProcess:
        """Take over a PTY master ``master`` whose program ``pid`` another server started."""
        os.set_blocking(master, False)
        return cls(AdoptedProcess(pid), master)

    def resize(self, cols: int, rows: int) -> None:
        """Tell the program its terminal is now ``cols`` x ``rows``; ignored after close."""
        if not self.closed:
            with contextlib.suppress(OSError):
                _set_size(self.master, cols, rows)

    def foreground_is_shell(self) -> bool:
        """Return whether the terminal's foreground process group is the pane's own program."""
        if self.closed:
            return False
        try:
            return os.tcgetpgrp(self.master) == self.process.pid
        except OSError:
            return False

    async def read(self) -> bytes:
        """Wait for output and return it; ``b""`` once the program side is gone."""
        while not self.closed:
            try:
                return os.read(self.master, READ_CHUNK)
            except BlockingIOError:
                await anyio.wait_readable(self.master)
            except OSError as exc:
                if exc.errno in (errno.EIO, errno.EBADF):
                    return b""
                raise
        return b""

    async def write(self, data: bytes, *, timeout: float = 5.0) -> None:
        """Write ``data`` to the program's terminal in full, waiting while the PTY is full.

        Raises:
            OSError: the terminal is closed, or the program did not read for
                ``timeout`` seconds (``ETIMEDOUT``); part of ``data`` may be written.

        """
        view = memoryview(data)
        with anyio.move_on_after(timeout):
            while view:
                if self.closed:
                    raise OSError(errno.EBADF, "the pane's terminal is closed")
                try:
                    written = os.write(self.master, view)
                except BlockingIOError:
                    try:
                        await anyio.wait_writable(self.master)
                    except anyio.ClosedResourceError:
                        raise OSError(errno.EBADF, "the pane's terminal was closed") from None
                    continue
                view = view[written:]
            return
        raise OSError(errno.ETIMEDOUT, "the pane's program is not reading its input")

    async def wait_exit(self, timeout: float) -> int | None:
        """Wait up to ``timeout`` seconds for the program to exit; return its status or None."""
        with anyio.move_on_after(timeout):
            delay = 0.005
            while (code := self.process.poll()) is None:
                await anyio.sleep(delay)
                delay = min(delay * 2, 0.05)
            return code
        return None

    async def terminate(self, grace: float = 1.0) -> None:
        """Hang up the process group, kill it after ``grace`` s, reap the child, close the PTY."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGHUP)
            if await self.wait_exit(grace) is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                await self.wait_exit(5.0)
        else:
            # the leader is gone; make sure nothing it left in its group survives
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
        self.close_fd()

    def close_fd(self) -> None:
        """Close the master descriptor; idempotent."""
        if not self.closed:
            self.closed = True
            with contextlib.suppress(Exception):
                anyio.notify_closing(self.master)
            with contextlib.suppress(OSError):
                os.close(self.master)


def _set_size(fd: int, cols: int, rows: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
