"""A pane's foreground job from the real process tree, as herdr reports it on Linux.

The foreground process group comes from ``tcgetpgrp`` on the pane's PTY
(falling back to the ``tpgid`` field of the shell's ``/proc/PID/stat``);
its members are the processes of that group found by walking the process
tree from the shell and the group leader (``/proc/PID/task/TID/children``),
sorted by pid. Each member reports ``name`` (the kernel's ``comm``), ``argv``
(``/proc/PID/cmdline``), ``cmdline`` (argv joined by spaces) and ``cwd``
(``/proc/PID/cwd``); ``argv0`` and ``tty`` stay unset, as in herdr. Anything
unreadable (a process that just exited, another user's) is left out; with no
``/proc`` the job is empty.
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path

from shedproto.herdr import types as t

__all__ = ["follow_cwd", "foreground_job", "process_info"]

PROC = Path("/proc")


def _stat_fields(pid: int) -> tuple[str, list[str]] | None:
    """Return ``(comm, fields after comm)`` of ``/proc/PID/stat``, or None."""
    try:
        stat = (PROC / str(pid) / "stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    open_at, close_at = stat.find("("), stat.rfind(")")
    if open_at < 0 or close_at < open_at:
        return None
    return stat[open_at + 1 : close_at], stat[close_at + 2 :].split()


def _pgrp(pid: int) -> tuple[int, str] | None:
    parsed = _stat_fields(pid)
    if parsed is None or len(parsed[1]) < 3:
        return None
    return int(parsed[1][2]), parsed[0]


def _foreground_group(shell_pid: int, master_fd: int | None) -> int | None:
    if master_fd is not None:
        try:
            group = os.tcgetpgrp(master_fd)
        except OSError:
            group = 0
        if group > 0:
            return group
    parsed = _stat_fields(shell_pid)
    if parsed is None or len(parsed[1]) < 6:
        return None
    tpgid = int(parsed[1][5])
    return tpgid if tpgid > 0 else None


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir(PROC / str(pid) / "task")
    except OSError:
        return found
    for tid in tasks:
        try:
            text = (PROC / str(pid) / "task" / tid / "children").read_text()
        except OSError:
            continue
        found += [int(child) for child in text.split()]
    return found


def _argv(pid: int) -> list[str] | None:
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None
    parts = [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]
    return parts or None


def _cwd(pid: int) -> str | None:
    try:
        return os.readlink(PROC / str(pid) / "cwd")
    except OSError:
        return None


def foreground_job(
    shell_pid: int, master_fd: int | None = None
) -> tuple[int | None, list[t.PaneProcessInfoProcess]]:
    """Return ``(foreground process group id, its processes)`` for the shell at ``shell_pid``."""
    group = _foreground_group(shell_pid, master_fd)
    if group is None:
        return None, []
    roots = list(dict.fromkeys((shell_pid, group)))
    pending, seen, members = deque(roots), set(roots), []
    while pending:
        pid = pending.popleft()
        info = _pgrp(pid)
        if info is not None and info[0] == group:
            members.append((pid, info[1]))
        for child in _children(pid):
            if child not in seen:
                seen.add(child)
                pending.append(child)
    processes = []
    for pid, comm in sorted(members):
        argv = _argv(pid)
        processes.append(
            t.PaneProcessInfoProcess(
                pid=pid,
                name=comm,
                argv=argv,
                cmdline=" ".join(argv) if argv else None,
                cwd=_cwd(pid),
            )
        )
    return (group if processes else None), processes


def process_info(pane_id: str, shell_pid: int | None, master_fd: int | None) -> t.PaneProcessInfo:
    """Return herdr's ``PaneProcessInfo`` for a pane whose shell runs as ``shell_pid``."""
    if shell_pid is None:
        return t.PaneProcessInfo(pane_id=pane_id)
    group, processes = foreground_job(shell_pid, master_fd)
    return t.PaneProcessInfo(
        pane_id=pane_id,
        shell_pid=shell_pid,
        foreground_process_group_id=group,
        foreground_processes=processes,
    )


def follow_cwd(shell_pid: int, master_fd: int | None) -> str | None:
    """Return the directory a new terminal follows from this pane, as herdr's ``follow_cwd``.

    The cwd of the PTY's foreground process group leader, else the shell's
    (herdrdev/herdr ``src/pane.rs:2972@1c76079f``); ``None`` when neither can be read.
    """
    group = _foreground_group(shell_pid, master_fd)
    return (_cwd(group) if group is not None else None) or _cwd(shell_pid)
