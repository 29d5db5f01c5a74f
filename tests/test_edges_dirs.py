"""Directories the servers create: every missing level 0700, existing ones untouched."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from shedproto.connector import AgentsHostCliOptions, parse_agents_host_config
from shedproto.servers._dirs import create_directories
from shedproto.servers.agents_host import HostRun, run_host
from shedproto.servers.connector import PrivatePathError, ensure_private_directory
from shedproto.testing import EchoDriver
from shedproto.testing._agentshost import AGENTS_HOST_OWNER
from shedproto.testing._connector import AgentsHostDirs


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


async def test_failed_agents_host_run_leaves_the_socket_folder_alone(
    agents_host_dirs: AgentsHostDirs,
) -> None:
    """``agents-host run --socket <file>`` used to chmod the file's folder 0700, then fail."""
    folder = agents_host_dirs.root / "shared"
    folder.mkdir()
    os.chmod(folder, 0o1777)
    in_the_way = folder / "notes.txt"
    in_the_way.write_text("precious")
    before = (os.stat(folder).st_mode, os.stat(folder).st_mtime_ns)
    identity = agents_host_dirs.root / "operator.key"
    identity.write_bytes(b"k")
    errors: list[str] = []
    run = HostRun(
        cli=AgentsHostCliOptions(
            config_path=str(agents_host_dirs.root / "agents.jsonc"),
            api_url="http://localhost:8000",
            identity_path=str(identity),
            space="did:key:z6MkSpace",
        ),
        config=parse_agents_host_config(
            {
                "schema": "commonfabric.agents-host.config",
                "ownerDid": AGENTS_HOST_OWNER,
                "collectionIntervalMs": 0,
                "sources": [{"id": "echo", "driver": "acp", "enabled": True, "command": ["x"]}],
            }
        ),
        env=agents_host_dirs.env,
        socket_path=str(in_the_way),
        driver_factory=EchoDriver,
        out=lambda line: None,
        err=errors.append,
        handle_signals=False,
    )
    with anyio.fail_after(30):
        assert await run_host(run) == 1
    assert any(str(in_the_way) in line for line in errors), errors
    assert (os.stat(folder).st_mode, os.stat(folder).st_mtime_ns) == before
    assert in_the_way.read_text() == "precious"
