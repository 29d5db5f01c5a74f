"""Directories the servers create: every missing level 0700, existing ones untouched."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from shedproto.servers._dirs import create_directories
from shedproto.servers.connector import PrivatePathError, ensure_private_directory


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def loose_umask() -> Iterator[None]:
    """A umask of 022, under which ``os.makedirs`` gives intermediate levels 0755."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_private_directory_creates_every_missing_level_0700(
    short_socket_dir: Path, loose_umask: None
) -> None:
    target = short_socket_dir / "state" / "commonfabric" / "ledgers"
    ensure_private_directory("command ledger", str(target))
    for level in ("state", "state/commonfabric", "state/commonfabric/ledgers"):
        assert mode(short_socket_dir / level) == 0o700, level  # was 0755 above the last


def test_private_directory_names_a_file_in_the_way(short_socket_dir: Path) -> None:
    (short_socket_dir / "locks").write_text("not a directory")
    with pytest.raises(PrivatePathError, match="is not a directory"):
        ensure_private_directory("agents-host lock", str(short_socket_dir / "locks"))
    assert (short_socket_dir / "locks").read_text() == "not a directory"


def test_create_directories_leaves_existing_levels_alone(
    short_socket_dir: Path, loose_umask: None
) -> None:
    existing = short_socket_dir / "shared"
    existing.mkdir()
    os.chmod(existing, 0o1777)
    created = create_directories(existing / "a" / "b")
    assert created.paths == (existing / "a", existing / "a" / "b")
    assert mode(existing) == 0o1777
    assert mode(existing / "a") == mode(existing / "a" / "b") == 0o700
    assert create_directories(existing / "a").paths == ()


def test_create_directories_undo_restores_the_ancestor(short_socket_dir: Path) -> None:
    before = os.stat(short_socket_dir)
    created = create_directories(short_socket_dir / "x" / "y")
    created.undo()
    after = os.stat(short_socket_dir)
    assert not (short_socket_dir / "x").exists()
    assert after.st_mtime_ns == before.st_mtime_ns


def test_create_directories_refuses_a_file_in_the_way(short_socket_dir: Path) -> None:
    (short_socket_dir / "file").write_text("x")
    with pytest.raises(NotADirectoryError):
        create_directories(short_socket_dir / "file" / "sub")
    assert sorted(p.name for p in short_socket_dir.iterdir()) == ["file"]
