"""One driver child process: spawn, write under a lock, read stdout, drain stderr, reap.

stderr is read continuously so the child can never block on a full pipe; its
last :data:`STDERR_TAIL` bytes are kept for error messages and never echoed.
Children start in their own process group, and stopping one stops the group
(close stdin, ``SIGTERM`` after a grace, ``SIGKILL`` after another), so a
wrapper's grandchildren never outlive it.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Mapping, Sequence

import anyio
import anyio.abc

from shedproto.servers._receive import RECEIVE_CHUNK
from shedproto.servers.agents_host.process_group import stop_process_group

__all__ = ["ChildProcess", "ChildError", "STDERR_TAIL", "RECEIVE_CHUNK", "STOP_GRACE"]

STDERR_TAIL = 8192
"""How many trailing stderr bytes are kept for error messages."""
"""Bytes asked for per stdout read."""
STOP_GRACE = 5.0
"""Seconds a child gets to exit after its stdin closes, before it is killed."""

_GONE = (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError)


class ChildError(Exception):
    """The child could not be written to (it exited or closed its stdin)."""


class ChildProcess:
    """A spawned child with piped stdio; use :meth:`spawn`, then :meth:`aclose` when done."""

    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process
        self.stderr_tail = bytearray()
        self._send_lock = anyio.Lock()

    @classmethod
    async def spawn(
        cls, argv: Sequence[str], *, env: Mapping[str, str] | None, cwd: str | None
    ) -> ChildProcess:
        """Start ``argv`` with piped stdin, stdout and stderr.

        Raises:
            OSError: the program cannot be executed (``FileNotFoundError`` when missing).

        """
        process = await anyio.open_process(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
        return cls(process)

    @property
    def returncode(self) -> int | None:
        """The exit status once the child ended, else ``None``."""
        return self.process.returncode

    async def send(self, data: bytes) -> None:
        """Write ``data`` to stdin whole (writes never interleave).

        Raises:
            ChildError: stdin is closed or the child is gone.

        """
        stdin = self.process.stdin
        if stdin is None:
            raise ChildError("the child has no stdin")
        async with self._send_lock:
            try:
                await stdin.send(data)
            except _GONE as exc:
                raise ChildError(f"could not write to the child: {exc}") from exc

    async def receive(self) -> bytes:
        """Return the next stdout chunk, ``b""`` at end of stream."""
        stdout = self.process.stdout
        assert stdout is not None
        try:
            return await stdout.receive(RECEIVE_CHUNK)
        except (anyio.EndOfStream, *_GONE):
            return b""

    async def drain_stderr(self) -> None:
        """Read stderr until it ends, keeping only the tail; never raises."""
        stderr = self.process.stderr
        assert stderr is not None
        while True:
            try:
                data = await stderr.receive(RECEIVE_CHUNK)
            except (anyio.EndOfStream, *_GONE):
                return
            self.stderr_tail += data
            if len(self.stderr_tail) > STDERR_TAIL:
                del self.stderr_tail[: len(self.stderr_tail) - STDERR_TAIL]

    def stderr_last_line(self) -> str | None:
        """Return the last non-empty stderr line seen, if any."""
        lines = bytes(self.stderr_tail).decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else None

    async def close_stdin(self) -> None:
        """Close stdin (the child's cue to finish); never raises."""
        stdin = self.process.stdin
        if stdin is not None:
            with anyio.CancelScope(shield=True), contextlib.suppress(*_GONE):
                await stdin.aclose()

    async def aclose(self, grace: float = STOP_GRACE) -> None:
        """Close stdin, then stop the child's process group and reap it; never raises.

        The group gets ``grace`` seconds after stdin closes, ``SIGTERM``, then
        ``grace`` more before ``SIGKILL`` (``grace`` 0: ``SIGKILL`` at once).
        """
        with anyio.CancelScope(shield=True):
            await self.close_stdin()
            await stop_process_group(self.process, grace=grace, close_stdin=False)
            with contextlib.suppress(*_GONE):
                await self.process.aclose()
