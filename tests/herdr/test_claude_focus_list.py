"""Interop: claude-focus 0.1.2's real ``list`` command against the herdr reference server at 22.

claude-focus is not a dependency: its wheel is unpacked into the directory
named by ``SHEDPROTO_CLAUDE_FOCUS`` (see ``tests/herdr/_interop.py``; .ci/run
does it) and run unchanged in a subprocess. It skips with the reason when the
wheel is not there.

What ``list`` does with herdr (read from its source): ``ping``; ``pane.list``
and ``pane.process_info`` for every pane; ``workspace.list`` and
``tab.list`` for the free terminals; the live Claude sessions come from
``~/.claude/sessions/<pid>.json`` (the process must be alive; the
transcript under ``~/.claude/projects/`` is read only to score a session
that waits, which a busy one never is); a session's
pane is the one whose foreground process has the session's pid; the engine
then writes each session's place in the queue into that pane's metadata
tokens (``pane.report_metadata``, source ``claude-focus``). ``list`` prints
the queue but not the free terminals, so the test wraps its ``print_queue``
to write the terminals and the session-to-pane map it computed to a file;
everything else runs as shipped.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import anyio
import pytest

from shedproto.clients.herdr import AsyncHerdrClient
from shedproto.servers.herdr import HerdrServer
from shedproto.testing import ClaudeProjects

from ._interop import CLAUDE_FOCUS_DIR, CLAUDE_FOCUS_READY, CLAUDE_FOCUS_SKIP

SESSION_ID = "5b0c2a8e-2f4d-4c1e-9a57-0d6f3e1c9b42"
SESSION_NAME = "focus-stand-in"

LIST_SCRIPT = r"""
import json, sys
from claude_focus import cli

shown, where = cli.print_queue, sys.argv[1]

def print_queue(app):
    shown(app)
    with open(where, "w") as f:
        json.dump({
            "terminals": [t["pane"] for t in app.view["terminals"]],
            "panes": {s["sessionId"]: app.pane_of(s) for s in app.sessions},
        }, f)

cli.print_queue = print_queue
sys.argv = ["claude-focus", "list"]
cli.main()
"""


def _write_claude_home(home: Path, pid: int, cwd: Path) -> None:
    """Write what Claude Code keeps in ``~/.claude`` for a live session: pid file, transcript."""
    now_ms = int(time.time() * 1000)
    sessions = home / ".claude" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / f"{pid}.json").write_text(
        json.dumps(
            {
                "pid": pid,
                "sessionId": SESSION_ID,
                "cwd": str(cwd),
                "startedAt": now_ms,
                "kind": "interactive",
                "entrypoint": "cli",
                "name": SESSION_NAME,
                "status": "busy",  # a turn runs: listed under WORKING, never sent to a scorer
                "statusUpdatedAt": now_ms,
            }
        ),
        encoding="utf-8",
    )
    ClaudeProjects(home / ".claude").write(
        str(cwd),
        SESSION_ID,
        [
            {
                "type": "user",
                "sessionId": SESSION_ID,
                "cwd": str(cwd),
                "message": {"role": "user", "content": "list the files"},
            },
            {
                "type": "assistant",
                "sessionId": SESSION_ID,
                "cwd": str(cwd),
                "message": {"role": "assistant", "content": [{"type": "text", "text": "Working."}]},
            },
        ],
    )


async def _wait_for_stand_in(client: AsyncHerdrClient, pane: str) -> int:
    """Poll ``pane.process_info`` until the pane's foreground is the stand-in; return its pid."""
    while True:
        info = (await client.pane_process_info(pane_id=pane)).process_info
        if [p.name for p in info.foreground_processes] == ["claude"]:
            return info.foreground_processes[0].pid
        await anyio.sleep(0.05)


@pytest.mark.skipif(not CLAUDE_FOCUS_READY, reason=CLAUDE_FOCUS_SKIP)
async def test_claude_focus_list_finds_shell_panes_and_the_claude_session(
    short_socket_dir: Path, tmp_path: Path
) -> None:
    sleep = shutil.which("sleep")
    assert sleep is not None
    work = tmp_path / "project"
    work.mkdir()
    (work / "claude").symlink_to(sleep)  # a harmless stand-in named like the agent
    home = tmp_path / "home"
    report = tmp_path / "seen.json"
    with anyio.fail_after(90):
        server = HerdrServer(
            short_socket_dir / "herdr.sock", protocol=22, shell=["/bin/sh"], cwd="/tmp"
        )
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            client = AsyncHerdrClient.for_socket(path)
            shell = (await client.workspace_create(label="focus", focus=True)).root_pane.pane_id
            agent = (await client.pane_split("right", target_pane_id=shell)).pane.pane_id
            lower = (await client.pane_split("down", target_pane_id=shell)).pane.pane_id
            await client.pane_send_text(agent, f"cd {work} && exec ./claude 120\r")
            pid = await _wait_for_stand_in(client, agent)
            _write_claude_home(home, pid, work)
            env = {**os.environ, "PYTHONPATH": str(CLAUDE_FOCUS_DIR), "HOME": str(home)}
            for name in ("HERDR_PANE_ID", "CLAUDE_FOCUS_DIR", "ITERM_SESSION_ID"):
                env.pop(name, None)
            # as inside a herdr pane: selects the herdr bridge and names the socket
            env["HERDR_SOCKET_PATH"] = str(path)
            result = await anyio.run_process(
                [sys.executable, "-c", LIST_SCRIPT, str(report)],
                env=env,
                cwd=tmp_path,
                check=False,
            )
            tokens = (await client.pane_get(agent)).pane.tokens
            shell_tokens = (await client.pane_get(shell)).pane.tokens
            await client.workspace_close("w1")
            server.shutdown()
    assert result.returncode == 0, result.stderr.decode()
    out = result.stdout.decode()
    assert "NEED YOU (0)" in out
    assert f"WORKING (1): {SESSION_NAME}" in out
    assert report.exists(), out + result.stderr.decode()
    seen = json.loads(report.read_text(encoding="utf-8"))
    assert seen["panes"] == {SESSION_ID: agent}
    assert seen["terminals"] == [shell, lower]
    assert tokens.get("cf_state") == "working"
    assert "cf_state" not in shell_tokens
