"""Process locks: contention between processes, swap detection, pid content, never deleted."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from shedproto.servers.connector import (
    LockChangedError,
    LockHeldError,
    PrivatePathError,
    ProcessLock,
    acquire_host_locks,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock")

HOLDER = textwrap.dedent(
    """
    import sys
    from shedproto.servers.connector import ProcessLock, LockHeldError
    try:
        lock = ProcessLock.acquire(sys.argv[1])
    except LockHeldError as exc:
        print("held:" + str(exc), flush=True)
        sys.exit(3)
    print("acquired", flush=True)
    sys.stdin.readline()  # hold until the parent says so
    lock.release()
    print("released", flush=True)
    """
)


def _holder(path: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def test_acquire_writes_pid_and_never_deletes(tmp_path: Path) -> None:
    path = tmp_path / "locks" / "target-k.lock"
    with ProcessLock.acquire(path) as lock:
        assert repr(lock) == f"ProcessLock({str(path)!r}, held=True)"
        assert lock.path == str(path)
        assert path.read_text() == f"{os.getpid()}\n"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert repr(lock) == f"ProcessLock({str(path)!r}, held=False)"
    assert path.exists()
    lock.release()  # idempotent
    path.write_text("99999999\nstale junk\n")
    with ProcessLock.acquire(path, pid=42):
        assert path.read_text() == "42\n"  # truncated, then the pid


def test_same_process_refuses_a_held_path(tmp_path: Path) -> None:
    path = tmp_path / "l" / "x.lock"
    with ProcessLock.acquire(path):
        with pytest.raises(LockHeldError) as caught:
            ProcessLock.acquire(path)
        assert str(caught.value) == f"another agent host holds the process lock: {path}"
        with pytest.raises(LockHeldError):
            ProcessLock.acquire(tmp_path / "l" / "." / "x.lock")  # normalised path
    with ProcessLock.acquire(path):
        pass


def test_two_processes_contend(tmp_path: Path) -> None:
    path = tmp_path / "l" / "target.lock"
    with _holder(path) as first:
        try:
            assert first.stdout is not None
            assert first.stdin is not None
            assert first.stdout.readline().strip() == "acquired"
            with _holder(path) as second:
                out, _ = second.communicate(timeout=30)
            assert second.returncode == 3
            assert out.strip() == f"held:another agent host holds the process lock: {path}"
            with pytest.raises(LockHeldError, match="another agent host holds the process lock"):
                ProcessLock.acquire(path)
            assert path.read_text() == f"{first.pid}\n"
            first.stdin.write("go\n")
            first.stdin.flush()
            assert first.stdout.readline().strip() == "released"
            assert first.wait(timeout=30) == 0
        finally:
            first.kill()
            first.wait(timeout=30)
    with ProcessLock.acquire(path):
        assert path.read_text() == f"{os.getpid()}\n"


def test_lock_released_when_holder_is_killed(tmp_path: Path) -> None:
    path = tmp_path / "l" / "target.lock"
    with _holder(path) as holder:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "acquired"
        holder.kill()
        holder.wait(timeout=30)
    with ProcessLock.acquire(path):  # the kernel dropped the dead holder's flock
        pass


def test_swapped_file_is_detected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "l" / "x.lock"
    with ProcessLock.acquire(path):
        pass
    real_open = os.open

    def swapping_open(target: str, flags: int, mode: int = 0o777) -> int:
        if target == str(path) and not flags & os.O_CREAT:
            replacement = tmp_path / "l" / "replacement"
            replacement.write_text("")
            replacement.chmod(0o600)
            os.replace(replacement, path)  # another inode appears between lstat and open
        return real_open(target, flags, mode)

    monkeypatch.setattr(os, "open", swapping_open)
    with pytest.raises(LockChangedError) as caught:
        ProcessLock.acquire(path)
    assert str(caught.value) == f"process lock file changed while opening: {path}"
    monkeypatch.undo()
    with ProcessLock.acquire(path):  # nothing stayed held
        pass


def test_symlink_swapped_in_is_detected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "l" / "x.lock"
    with ProcessLock.acquire(path):
        pass
    other = tmp_path / "elsewhere"
    other.write_text("")
    real_open = os.open

    def swapping_open(target: str, flags: int, mode: int = 0o777) -> int:
        if target == str(path) and not flags & os.O_CREAT:
            path.unlink()
            path.symlink_to(other)
        return real_open(target, flags, mode)

    monkeypatch.setattr(os, "open", swapping_open)
    with pytest.raises(LockChangedError, match="process lock file changed while opening"):
        ProcessLock.acquire(path)


def test_private_checks(tmp_path: Path) -> None:
    directory = tmp_path / "l"
    path = directory / "x.lock"
    with ProcessLock.acquire(path):
        pass
    path.chmod(0o644)
    with pytest.raises(PrivatePathError) as caught:
        ProcessLock.acquire(path)
    assert str(caught.value) == f"process lock file permits access by other users: {path}"
    path.unlink()
    path.symlink_to(tmp_path / "target")
    with pytest.raises(PrivatePathError) as caught:
        ProcessLock.acquire(path)
    assert str(caught.value) == f"process lock file cannot be a symbolic link: {path}"
    path.unlink()
    directory.chmod(0o755)
    with pytest.raises(PrivatePathError) as caught:
        ProcessLock.acquire(path)
    assert str(caught.value) == f"process lock directory permits access by other users: {directory}"


def test_host_locks_order_and_rollback(tmp_path: Path) -> None:
    target = tmp_path / "locks" / "target-k.lock"
    ledger = tmp_path / "state" / "ledger.json.lock"
    with acquire_host_locks(target, ledger) as locks:
        assert locks.target.held
        assert locks.ledger.held
    assert (locks.target.held, locks.ledger.held) == (False, False)
    with ProcessLock.acquire(ledger):
        with pytest.raises(LockHeldError):
            acquire_host_locks(target, ledger)
        with ProcessLock.acquire(target):  # the target lock was rolled back
            pass
