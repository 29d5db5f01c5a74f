"""``shedproto agents-host init`` on disk: created directories are 0700, a failed write
leaves nothing behind, and nothing it did not create is changed (run as real processes).
"""

from __future__ import annotations

import os
import resource
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "shedproto.clients.cli"]


def _snapshot(directory: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every path under ``directory`` (itself included): mode, mtime and file bytes."""
    found = {}
    for path in [directory, *sorted(directory.rglob("*"))]:
        info = path.lstat()
        body = path.read_bytes() if stat.S_ISREG(info.st_mode) else b""
        found[str(path.relative_to(directory))] = (info.st_mode, info.st_mtime_ns, body)
    return found


def _init(target: Path, preexec: Callable[[], None]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [*CLI, "agents-host", "init", str(target)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
        preexec_fn=preexec,
    )


def _umask_022() -> None:
    os.umask(0o022)


def _tiny_files() -> None:
    """Let the process write at most 16 bytes to any file (writes beyond fail with EFBIG)."""
    _umask_022()
    resource.setrlimit(resource.RLIMIT_FSIZE, (16, 16))


def test_init_creates_missing_directories_0700_and_keeps_existing_modes(tmp_path: Path) -> None:
    existing = tmp_path / "mine"
    existing.mkdir()
    existing.chmod(0o751)
    target = existing / "a" / "b"
    done = _init(target, _umask_022)
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(existing.stat().st_mode) == 0o751
    assert stat.S_IMODE((existing / "a").stat().st_mode) == 0o700
    assert stat.S_IMODE(target.stat().st_mode) == 0o700
    assert sorted(p.name for p in target.iterdir()) == ["agents.jsonc", "operator.key"]


def test_init_that_cannot_write_removes_the_directories_it_created(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    before = _snapshot(tmp_path)
    target = tmp_path / "mine" / "new" / "deeper"
    done = _init(target, _tiny_files)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"shedproto: error: cannot write {target / 'agents.jsonc'}: File too large"
    ]
    assert _snapshot(tmp_path) == before


def test_init_that_cannot_write_keeps_an_existing_directory_and_its_files(tmp_path: Path) -> None:
    target = tmp_path / "mine"
    target.mkdir()
    target.chmod(0o755)
    (target / "notes.txt").write_text("my notes\n")
    (target / "operator.key").write_text("my key\n")
    before = _snapshot(tmp_path)
    done = _init(target, _tiny_files)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert f"cannot write {target / 'agents.jsonc'}" in done.stderr
    assert _snapshot(tmp_path) == before
