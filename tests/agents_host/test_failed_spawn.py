"""A source whose executable does not exist fails like one that exits at once (issue 11 item 3)."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest

from shedproto.connector import AgentSourceConfig
from shedproto.servers.drivers import AcpDriver, AcpDriverError

from .acp_driving import host_run, hosting

MISSING = "/nonexistent/agent-bin"


def source_entry(driver: str, program: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": "a", "driver": driver, "enabled": True}
    if driver == "codex-app-server":
        entry["codexBin"] = program
    else:
        entry["command"] = [program]
    return entry


async def run_once(entry: dict[str, Any]) -> tuple[int, list[str]]:
    """Run a host with one source; stop it as soon as it is up. Returns (status, stderr)."""
    root = Path(tempfile.mkdtemp(prefix="sp-spawn-", dir="/tmp"))
    errors: list[str] = []
    try:
        async with hosting(host_run(root, [entry], errors), deadline=20) as status:
            pass
        return status[0] if status else -1, errors
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("driver", ["acp", "codex-app-server", "claude-agent-sdk"])
async def test_missing_executable_fails_like_bin_false(driver: str) -> None:
    # Regression: a nonexistent ACP command left `run` silent until SIGTERM.
    missing = await run_once(source_entry(driver, MISSING))
    exits_at_once = await run_once(source_entry(driver, "/bin/false"))
    assert missing[0] == exits_at_once[0]
    if driver == "claude-agent-sdk":
        # No child at startup (one per query): both start, and stop cleanly.
        assert missing == (0, [])
    else:
        assert missing[0] == 1
        assert missing[1][-1] == (
            "Agent host failed: no configured agent source started successfully"
        )
        assert exits_at_once[1][-1] == missing[1][-1]


async def test_acp_driver_spawn_failure_releases_stop() -> None:
    driver = AcpDriver(AgentSourceConfig(id="a", driver="acp", enabled=True, command=(MISSING,)))
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            with pytest.raises(AcpDriverError, match="cannot run /nonexistent/agent-bin"):
                await driver.start(tg)
            await driver.stop()  # must not wait for a process that never existed


async def test_acp_driver_stop_before_start_returns() -> None:
    driver = AcpDriver(AgentSourceConfig(id="a", driver="acp", enabled=True, command=(MISSING,)))
    with anyio.fail_after(10):
        await driver.stop()


async def test_stop_during_a_silent_initialize_does_not_wait_for_the_handshake() -> None:
    # A stop (host shutdown, or during a restart) must not wait out handshake_timeout.
    config = AgentSourceConfig(id="a", driver="acp", enabled=True, command=("sleep", "300"))
    driver = AcpDriver(config, handshake_timeout=300, stop_grace=0.2)
    failures: list[str] = []
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:

            async def start() -> None:
                try:
                    await driver.start(tg)
                except AcpDriverError as exc:
                    failures.append(str(exc))

            tg.start_soon(start)
            await anyio.sleep(0.2)  # the agent is spawned and silent
            await driver.stop()
    assert failures == ["the agent was stopped before it answered initialize"]


@pytest.mark.parametrize(
    ("program", "expected"),
    [
        ("raise SystemExit(3)", "the agent process exited with status 3"),
        (
            "import os, time; os.close(1); time.sleep(300)",  # EOF, the process lives on
            "the agent process closed its output",
        ),
    ],
)
async def test_acp_agent_that_exits_during_startup_fails_at_once(
    program: str, expected: str
) -> None:
    """Issue 28 item 5: an agent exiting before ``initialize`` waited out the handshake timeout.

    The initialize request was written before the process died, and only the
    timeout ended the wait; now its output's end (or its exit) ends it.
    """
    config = AgentSourceConfig(
        id="a", driver="acp", enabled=True, command=(sys.executable, "-c", program)
    )
    driver = AcpDriver(config, handshake_timeout=3600, stop_grace=0.2)
    with anyio.fail_after(30):  # far below the handshake timeout: not a timed assertion
        async with anyio.create_task_group() as tg:
            with pytest.raises(AcpDriverError) as caught:
                await driver.start(tg)
            await driver.stop()
    assert str(caught.value).startswith(expected)
