"""The durable ledger file: write order, private-path checks, crash safety under SIGKILL."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from shedproto.connector import LedgerError, LedgerState, in_flight_receipt
from shedproto.servers.connector import CommandLedger, PrivatePathError

from ._helpers import OWNER

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX rename scheme")
NOW = "2026-07-20T01:00:00.000Z"


def _claim(command_id: str, producer: str | None = None):  # type: ignore[no-untyped-def]
    return in_flight_receipt(
        owner_did=OWNER,
        command_id=command_id,
        source_id="codex",
        native_session_id="thr_123",
        claimed_at="2026-07-20T00:05:01.000Z",
        producer=producer,
    )


def test_missing_file_is_empty_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "state" / "target-x.command-ledger.json"
    ledger = CommandLedger.open(path)
    assert ledger.generation == 0
    assert ledger.pending() == []
    assert not path.exists()
    assert stat.S_IMODE((tmp_path / "state").stat().st_mode) == 0o700


def test_operations_persist_with_modes_and_generation(tmp_path: Path) -> None:
    path = tmp_path / "state" / "ledger.json"
    ledger = CommandLedger.open(path)
    ledger.put(_claim("c1"))
    ledger.put(_claim("c1", producer="wb"))
    assert ledger.generation == 2
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    ledger.mark_published("c1")
    ledger.mark_published("c1")  # not pending any more: no write
    assert ledger.generation == 3
    assert ledger.pending_publication_count() == 1
    assert ledger.get("c1", "wb") is not None
    reopened = CommandLedger.open(path)
    assert reopened.state == ledger.state
    assert path.read_bytes() == ledger.state.encode()
    recovered = reopened.recover(now=NOW)
    assert [r.identity for r in recovered] == ["c1", "wb\x00c1"]
    assert all(r.status == "unknown" for r in recovered)
    assert CommandLedger.open(path).generation == 4
    assert sorted(p.name for p in path.parent.iterdir()) == ["ledger.json"]  # no temp files left


def test_durable_write_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real_open, real_fsync, real_rename = os.open, os.fsync, os.rename

    def spy_open(path: str, flags: int, mode: int = 0o777) -> int:
        fd = real_open(path, flags, mode)
        if flags & os.O_EXCL:
            calls.append(f"open-excl {Path(path).name.split('.tmp-')[1][:0]}mode={oct(mode)}")
        return fd

    def spy_fsync(fd: int) -> None:
        calls.append("fsync-dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "fsync-file")
        real_fsync(fd)

    def spy_rename(src: str, dst: str) -> None:
        calls.append("rename")
        real_rename(src, dst)

    ledger = CommandLedger.open(tmp_path / "d" / "ledger.json")
    monkeypatch.setattr(os, "open", spy_open)
    monkeypatch.setattr(os, "fsync", spy_fsync)
    monkeypatch.setattr(os, "rename", spy_rename)
    ledger.put(_claim("c1"))
    assert calls == ["open-excl mode=0o600", "fsync-file", "rename", "fsync-dir"]


def test_failed_write_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "d" / "ledger.json"
    ledger = CommandLedger.open(path)
    ledger.put(_claim("c1"))
    before = path.read_bytes()

    def broken_rename(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "rename", broken_rename)
    with pytest.raises(OSError, match="No space left"):
        ledger.put(_claim("c2"))
    assert ledger.generation == 1
    assert ledger.get("c2") is None
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["ledger.json"]  # temp removed


def test_private_path_messages(tmp_path: Path) -> None:
    directory = tmp_path / "d"
    path = directory / "ledger.json"
    CommandLedger.open(path).put(_claim("c1"))

    path.chmod(0o640)
    with pytest.raises(PrivatePathError) as caught:
        CommandLedger.open(path)
    assert str(caught.value) == f"command ledger file permits access by other users: {path}"
    path.chmod(0o600)

    directory.chmod(0o750)
    with pytest.raises(PrivatePathError) as caught:
        CommandLedger.open(path)
    assert (
        str(caught.value) == f"command ledger directory permits access by other users: {directory}"
    )
    directory.chmod(0o700)

    real = directory / "real.json"
    path.rename(real)
    path.symlink_to(real)
    with pytest.raises(PrivatePathError) as caught:
        CommandLedger.open(path)
    assert str(caught.value) == f"command ledger file cannot be a symbolic link: {path}"
    path.unlink()

    path.mkdir()
    with pytest.raises(PrivatePathError) as caught:
        CommandLedger.open(path)
    assert str(caught.value) == f"command ledger file is not a file: {path}"
    path.rmdir()

    linked_dir = tmp_path / "linked"
    linked_dir.symlink_to(directory)
    with pytest.raises(PrivatePathError) as caught:
        CommandLedger.open(linked_dir / "ledger.json")
    assert str(caught.value) == f"command ledger directory cannot be a symbolic link: {linked_dir}"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown")
def test_other_owner_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "d" / "ledger.json"
    CommandLedger.open(path).put(_claim("c1"))
    os.chown(path, 12345, 12345)
    with pytest.raises(PrivatePathError) as caught:
        CommandLedger.open(path)
    assert str(caught.value) == f"command ledger file has a different owner: {path}"


def test_open_removes_only_dead_writers_temp_files(tmp_path: Path) -> None:
    path = tmp_path / "d" / "ledger.json"
    CommandLedger.open(path).put(_claim("c1"))
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    dead_pid = int(dead.stdout)
    stale = path.parent / f"ledger.json.tmp-{dead_pid}-0000"
    live = path.parent / f"ledger.json.tmp-{os.getpid()}-1111"
    other = path.parent / "unrelated.tmp-1-2"
    for file in (stale, live, other):
        file.write_bytes(b"partial")
    assert CommandLedger.open(path).generation == 1
    assert sorted(p.name for p in path.parent.iterdir()) == sorted(
        ["ledger.json", live.name, other.name]
    )


def test_corrupt_file_reports_the_real_message(tmp_path: Path) -> None:
    path = tmp_path / "d" / "ledger.json"
    CommandLedger.open(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, b'{"schema": "commonfabric.agent-connector.command-ledger", "generation": -1}')
    os.close(fd)
    with pytest.raises(
        LedgerError, match=r"^command ledger generation must be a non-negative safe integer$"
    ):
        CommandLedger.open(path)


# --- crash safety ------------------------------------------------------------------------------

# The fork/kill loop runs in a fresh single-threaded interpreter: forking a process that has
# threads (anyio workers left by other tests) is unsafe and warns on Python 3.12+.
CRASH_LOOP = """
import json, os, random, select, signal, sys, time
from pathlib import Path
from shedproto.connector import in_flight_receipt, parse_ledger
from shedproto.servers.connector import CommandLedger

path, kills, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)

def claim(command_id):
    return in_flight_receipt(owner_did="did:key:o", command_id=command_id, source_id="codex",
                             native_session_id="thr", claimed_at="2026-07-20T00:05:01.000Z")

def writer(report):
    try:
        ledger = CommandLedger.open(path)
        i = ledger.generation
        while True:
            i += 1
            ledger.put(claim(f"cmd-{i % 7}"))
            os.write(report, f"{ledger.generation}\\n".encode())  # committed
            if i % 3 == 0:
                ledger.mark_published(f"cmd-{i % 7}")
                os.write(report, f"{ledger.generation}\\n".encode())
    finally:
        os._exit(0)

committed = 0
for _ in range(kills):
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        writer(write_end)
    os.close(write_end)
    time.sleep(rng.uniform(0, 0.006))
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    reported = b""
    while select.select([read_end], [], [], 0)[0]:
        chunk = os.read(read_end, 65536)
        if not chunk:
            break
        reported += chunk
    os.close(read_end)
    lines = [int(x) for x in reported.split()]
    if lines:
        committed = lines[-1]
    try:
        on_disk = CommandLedger.open(path)
        same = on_disk.generation == 0 or parse_ledger(Path(path).read_bytes()) == on_disk.state
        observation = [committed, on_disk.generation, same, None]
    except Exception as exc:
        observation = [committed, None, False, f"{type(exc).__name__}: {exc}"]
    print(json.dumps(observation), flush=True)
    if observation[1] is None:
        break
    committed = observation[1]
"""


def test_sigkill_during_writes_never_corrupts(tmp_path: Path) -> None:
    path = tmp_path / "state" / "ledger.json"
    kills = 300
    result = subprocess.run(
        [sys.executable, "-c", CRASH_LOOP, str(path), str(kills), "6"],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    observations = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(observations) == kills
    for committed, on_disk, same, error in observations:
        assert error is None  # the ledger always opens
        assert same  # and what it holds is exactly the file, never a torn one
        # the last committed generation, or one more if the kill came right after a rename
        assert on_disk in (committed, committed + 1)
    assert observations[-1][1] > 0
    # a kill between the O_EXCL create and the rename leaves a temp file; the next open
    # removes those of dead writers, so nothing accumulates
    assert sorted(p.name for p in path.parent.iterdir()) == ["ledger.json"]


def test_state_equality_is_by_value() -> None:
    assert LedgerState().put(_claim("c")) == LedgerState().put(_claim("c"))
    assert LedgerState() != LedgerState(1)
