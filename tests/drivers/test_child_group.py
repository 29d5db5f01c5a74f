"""Driver children (codex app-server, claude queries) stop with their whole process group."""

from __future__ import annotations

import anyio

from shedproto.servers.agents_host.process_group import group_alive
from shedproto.servers.drivers._child import ChildProcess

WRAPPER = ("/bin/sh", "-c", 'trap "" TERM; sleep 300 & exec cat')
"""A wrapper whose grandchild ignores SIGTERM and would outlive a killed direct child."""


async def test_aclose_stops_the_childs_whole_group() -> None:
    # Regression (issue 17 item 5): only the direct child was killed.
    with anyio.fail_after(20):
        child = await ChildProcess.spawn(WRAPPER, env=None, cwd=None)
        pgid = child.process.pid
        await child.send(b"ping\n")
        assert group_alive(pgid)
        await child.aclose(grace=0.2)
    assert child.returncode is not None
    assert not group_alive(pgid)


async def test_aclose_without_grace_kills_the_group_at_once() -> None:
    with anyio.fail_after(20):
        child = await ChildProcess.spawn(WRAPPER, env=None, cwd=None)
        pgid = child.process.pid
        await child.aclose(grace=0.0)
    assert not group_alive(pgid)
