"""``agents-host run --socket <file>`` never touches the file's folder (issue 11, item 1)."""

from __future__ import annotations

import os

import anyio

from shedproto.servers.agents_host import run_host
from shedproto.testing._connector import AgentsHostDirs

from .test_host_api import host_run


async def test_failed_run_leaves_the_socket_folder_alone(agents_host_dirs: AgentsHostDirs) -> None:
    """The bind used to chmod the folder 0700 and then refuse the file."""
    folder = agents_host_dirs.root / "shared"
    folder.mkdir()
    os.chmod(folder, 0o1777)
    in_the_way = folder / "notes.txt"
    in_the_way.write_text("precious")
    before = (os.stat(folder).st_mode, os.stat(folder).st_mtime_ns)
    run = host_run(agents_host_dirs, in_the_way)
    with anyio.fail_after(30):
        assert await run_host(run) == 1
    errors: list[str] = run.errors  # type: ignore[attr-defined]
    assert any(str(in_the_way) in line for line in errors), errors
    assert (os.stat(folder).st_mode, os.stat(folder).st_mtime_ns) == before
    assert in_the_way.read_text() == "precious"
