"""Stopping a child started in its own session (``start_new_session=True``) with its whole group.

An agent command is often a wrapper (``npx``, an npm ``bin`` script) whose
real program is a grandchild: killing only the direct child leaves the
grandchild running, re-parented to PID 1. Every driver therefore starts its
children as process-group leaders and stops them with :func:`stop_process_group`:
close stdin, wait ``grace`` seconds, ``SIGTERM`` the group, wait ``grace``
again, then ``SIGKILL`` the group. Group members that outlive the leader are
signalled the same way.
"""

from __future__ import annotations

import contextlib
import os
import signal

import anyio
import anyio.abc

__all__ = ["STOP_GRACE", "group_alive", "signal_group", "stop_process_group"]

STOP_GRACE = 5.0
"""Seconds a child gets after its stdin closes, and again after ``SIGTERM``."""
_POLL = 0.05


def signal_group(pgid: int, signum: int) -> bool:
    """Send ``signum`` to process group ``pgid``; return ``False`` when the group is gone."""
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False
    return True


def _proc_members(pgid: int) -> bool | None:
    """Whether a live (non-zombie) member of ``pgid`` is listed in /proc; ``None`` without /proc."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] != b"Z":
            return True
    return False


def group_alive(pgid: int) -> bool:
    """Return whether any process of group ``pgid`` still runs (zombies do not count)."""
    if not signal_group(pgid, 0):
        return False
    listed = _proc_members(pgid)
    return True if listed is None else listed


async def _wait_group(process: anyio.abc.Process, pgid: int, seconds: float) -> bool:
    """Wait up to ``seconds`` for the leader to exit and the group to empty."""
    with anyio.move_on_after(seconds):
        await process.wait()
        while group_alive(pgid):  # noqa: ASYNC110 - no event tells when a non-child exits
            await anyio.sleep(_POLL)
        return True
    return False


async def stop_process_group(
    process: anyio.abc.Process, *, grace: float = STOP_GRACE, close_stdin: bool = True
) -> None:
    """Stop ``process`` and every member of its process group; never raises; shielded.

    ``process`` must have been started with ``start_new_session=True`` (its
    pid is its group id). With ``close_stdin`` the child first gets its stdin
    closed and ``grace`` seconds to finish on its own.
    """
    pgid = process.pid
    with anyio.CancelScope(shield=True):
        if close_stdin and process.stdin is not None:
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                await process.stdin.aclose()
        if grace > 0 and await _wait_group(process, pgid, grace):
            return
        if signal_group(pgid, signal.SIGTERM) and await _wait_group(process, pgid, grace):
            return
        signal_group(pgid, signal.SIGKILL)
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        await _wait_group(process, pgid, grace if grace > 0 else STOP_GRACE)
