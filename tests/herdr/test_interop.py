"""Interop: independent herdr tools from PyPI (herdr-client, claude-focus) against the server.

``herdr-client`` needs Python 3.13 and is not a dependency of this project, so
the test runs it in a ``python3.13`` subprocess from an unpacked wheel named
by ``SHEDPROTO_HERDR_CLIENT`` (default ``/tmp/interop/herdr_client``), e.g.::

    pip download --no-deps --python-version 3.13 --only-binary=:all: herdr-client -d /tmp/interop
    cd /tmp/interop && unzip herdr_client-*.whl -d herdr_client

It skips cleanly when either is missing. The client is used unchanged.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import anyio
import pytest

from shedproto.clients.herdr import AsyncHerdrClient
from shedproto.servers.herdr import HerdrServer

from ._interop import (
    CLAUDE_FOCUS_DIR,
    CLAUDE_FOCUS_READY,
    CLAUDE_FOCUS_SKIP,
    CLIENT_DIR,
    CLIENT_READY,
    CLIENT_SKIP,
    python313,
)

PYTHON = python313() if CLIENT_READY else None

SCRIPT = r"""
import asyncio, json, sys
from herdr_client import AsyncHerdrClient, HerdrApiError, HerdrClient

client = HerdrClient(socket_path=sys.argv[1], timeout=10.0)
out = {}
out["pong"] = client.ping()
created = client.request("workspace.create", {"label": "interop", "focus": True})
pane = created["root_pane"]["pane_id"]
out["created"] = created["workspace"]["workspace_id"]
client.pane_send_text(pane, "echo INTEROP-$((6*7))\r")
want = {"type": "substring", "value": "INTEROP-42"}
matched = client.pane_wait_for_output(pane, want, timeout_ms=10000)
out["matched"] = matched["matched_line"]
out["read"] = client.pane_read(pane, source="recent", lines=10)["read"]["text"]
out["workspaces"] = [w["workspace_id"] for w in client.workspace_list()["workspaces"]]
out["tabs"] = [t["tab_id"] for t in client.tab_list()["tabs"]]
out["panes"] = [p["pane_id"] for p in client.pane_list()["panes"]]
client.pane_send_keys(pane, ["enter"])
client.pane_send_input(pane, text="echo KEYS-$((1+1))", keys=["enter"])
client.pane_wait_for_output(pane, {"type": "substring", "value": "KEYS-2"}, timeout_ms=10000)
with client.subscribe([{"type": "workspace.created"}]) as stream:
    client.request("workspace.create", {"label": "later"})  # protocol 22: no history replay
    for event in stream.events():
        out["event"] = event
        break
second = client.request("pane.split", {"target_pane_id": pane, "direction": "right"})["pane"]
calls = {
    "integration.list": {},
    "pane.scroll": {"pane_id": pane, "offset_from_bottom": 0},
    "pane.selection.read": {
        "pane_id": pane, "anchor": {"row": 0, "col": 0}, "cursor": {"row": 0, "col": 3},
    },
    "release_notes.dismiss": {"version": "0.9.5"},
    "pane.process_info": {"pane_id": pane},
    "pane.zoom": {"pane_id": second["pane_id"], "mode": "on"},
    "notification.show": {"title": "interop", "body": "hello"},
    "pane.report_metadata": {"pane_id": pane, "source": "interop", "title": "T"},
    "layout.export": {"pane_id": pane},
    "server.reload_config": {},
}
out["results"] = {m: client.request(m, params)["type"] for m, params in calls.items()}
client.request("pane.report_agent", {
    "pane_id": pane, "source": "interop", "agent": "claude", "state": "idle",
})
out["results"]["agent.read"] = client.request(
    "agent.read", {"target": pane, "source": "recent", "lines": 5}
)["type"]
try:
    client.request("pane.get", {"pane_id": "w9:p9"})
except HerdrApiError as exc:
    out["error"] = str(exc)


async def run_async():
    aclient = AsyncHerdrClient(socket_path=sys.argv[1], timeout=10.0)
    got = {"ping": (await aclient.ping())["type"]}
    got["workspace_list"] = len((await aclient.workspace_list())["workspaces"])
    got["tab_list"] = len((await aclient.tab_list())["tabs"])
    got["pane_list"] = len((await aclient.pane_list())["panes"])
    await aclient.pane_send_text(pane, "echo ASYNC-$((2+3))\r")
    await aclient.pane_send_keys(pane, ["enter"])
    await aclient.pane_send_input(pane, text="", keys=["enter"])
    hit = await aclient.pane_wait_for_output(
        pane, {"type": "substring", "value": "ASYNC-5"}, timeout_ms=10000
    )
    got["wait"] = hit["type"]
    got["read"] = (await aclient.pane_read(pane, source="visible"))["type"]
    async with aclient.subscribe([{"type": "tab.created"}]) as stream:
        await aclient.request("tab.create", {"workspace_id": "w1"})
        async for event in stream.events():
            got["event"] = event["event"]
            break
    return got


out["async"] = asyncio.run(run_async())
client.request("workspace.close", {"workspace_id": "w1"})
print(json.dumps(out))
"""


@pytest.mark.skipif(PYTHON is None, reason="no working Python >= 3.13")
@pytest.mark.skipif(not CLIENT_READY, reason=CLIENT_SKIP)
async def test_herdr_client_package_works_unchanged(short_socket_dir: Path) -> None:
    assert PYTHON is not None
    with anyio.fail_after(60):
        server = HerdrServer(short_socket_dir / "herdr.sock", shell=["/bin/sh"], cwd="/tmp")
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            env = {**os.environ, "PYTHONPATH": str(CLIENT_DIR)}
            env.pop("HERDR_SOCKET_PATH", None)
            result = await anyio.run_process(
                [PYTHON, "-c", SCRIPT, str(path)], env=env, check=False
            )
            server.shutdown()
    assert result.returncode == 0, result.stderr.decode()
    out = json.loads(result.stdout)
    assert out["pong"]["type"] == "pong"
    assert (out["pong"]["protocol"], out["pong"]["version"]) == (22, "0.9.5")
    assert out["created"] == "w1"
    assert out["matched"].endswith("INTEROP-42")
    assert "INTEROP-42" in out["read"]
    assert out["workspaces"] == ["w1"]
    assert out["event"]["data"]["workspace"]["label"] == "later"
    assert out["event"]["event"] == "workspace_created"
    assert "pane_not_found" in out["error"]
    assert (out["tabs"], out["panes"]) == (["w1:t1"], ["w1:p1"])
    assert out["results"] == {
        "integration.list": "integration_list",
        "pane.scroll": "ok",
        "pane.selection.read": "pane_selection",
        "release_notes.dismiss": "ok",
        "pane.process_info": "pane_process_info",
        "pane.zoom": "pane_zoom",
        "notification.show": "notification_show",
        "pane.report_metadata": "ok",
        "layout.export": "layout_export",
        "server.reload_config": "config_reload",
        "agent.read": "pane_read",
    }
    assert out["async"] == {
        "ping": "pong",
        "workspace_list": 2,
        "tab_list": 2,
        "pane_list": 3,
        "wait": "output_matched",
        "read": "pane_read",
        "event": "tab_created",
    }


FOCUS_SCRIPT = r"""
import asyncio, json, sys
from claude_focus import herdr

async def main():
    bridge = herdr.Bridge(sys.argv[1])
    await bridge.start()
    await bridge.refresh()
    rows = await bridge.pane_info()
    session = {"pid": int(sys.argv[2]), "sessionId": "stand-in-session"}
    print(json.dumps({
        "version": bridge.version,
        "rows": [[pane, job] for pane, _where, _profile, _folder, job in rows],
        "free": [pane for pane, _w, profile, _f, job in rows if bridge.is_free(profile, job, {})],
        "session_pane": bridge.pane_of(session),
        "by_hook": bridge.pane_of({"pid": 1, "sessionId": "hooked"}),
    }))

asyncio.run(main())
"""


def _resolved(path: str) -> str:
    return str(Path(path).resolve())


@pytest.mark.skipif(not CLAUDE_FOCUS_READY, reason=CLAUDE_FOCUS_SKIP)
async def test_claude_focus_finds_shell_panes_and_the_agent_session(
    short_socket_dir: Path, tmp_path: Path
) -> None:
    """claude-focus's herdr bridge, as its ``list`` uses it (without macOS's app queries)."""
    sleep = shutil.which("sleep")
    assert sleep is not None
    (tmp_path / "claude").symlink_to(sleep)  # a harmless stand-in named like the agent
    with anyio.fail_after(60):
        server = HerdrServer(short_socket_dir / "herdr.sock", shell=["/bin/sh"], cwd="/tmp")
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            client = AsyncHerdrClient.for_socket(path)
            shell = (await client.workspace_create(focus=True)).root_pane.pane_id
            agent = (await client.pane_split("right", target_pane_id=shell)).pane.pane_id
            hooked = (await client.pane_split("down", target_pane_id=shell)).pane.pane_id
            await client.pane_report_agent_session(
                hooked, "claude-hook", "claude", agent_session_id="hooked"
            )
            await client.pane_send_text(agent, f"cd {tmp_path} && ./claude 60\r")
            while True:
                info = (await client.pane_process_info(pane_id=agent)).process_info
                if [p.name for p in info.foreground_processes] == ["claude"]:
                    break
                await anyio.sleep(0.05)
            pid = info.foreground_processes[0].pid
            env = {**os.environ, "PYTHONPATH": str(CLAUDE_FOCUS_DIR), "HOME": str(tmp_path)}
            env.pop("HERDR_SOCKET_PATH", None)
            result = await anyio.run_process(
                [sys.executable, "-c", FOCUS_SCRIPT, str(path), str(pid)], env=env, check=False
            )
            await client.workspace_close("w1")
            server.shutdown()
    assert result.returncode == 0, result.stderr.decode()
    out = json.loads(result.stdout)
    assert out["version"] == "0.9.5"
    jobs = dict(out["rows"])
    assert jobs[agent] == "claude"
    assert out["session_pane"] == agent
    assert out["by_hook"] == hooked
    assert sorted(out["free"]) == sorted([shell, hooked])
