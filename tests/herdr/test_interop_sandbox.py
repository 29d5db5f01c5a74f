# ruff: noqa: E501 - the script reads best one call a line
"""Interop: herdr-client (unchanged, from PyPI) drives the sandboxed methods to success.

integration.install / uninstall in the server's home, command.invoke with an id from the
server's command manifest, popup.close on the popup a command opened, a plugin's action
and its event hook, pane.link.activate through a plugin link handler. Opt-in like
test_interop.py: it needs herdr-client unpacked (``SHEDPROTO_HERDR_CLIENT``, which .ci/run
sets) and a Python >= 3.13, and skips saying which is missing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

from shedproto.servers.herdr import HerdrServer

from ._interop import CLIENT_DIR, CLIENT_READY, python313

PYTHON = python313() if CLIENT_READY else None

CONFIG = """
[[keys.command]]
key = "prefix+g"
type = "popup"
command = "exec cat"
"""

PLUGIN = """
id = "example.sandbox"
name = "Sandbox"
version = "1.0.0"
min_herdr_version = "0.8.0"

[[actions]]
id = "hello"
title = "Hello"
command = ["sh", "-c", "echo hello-$HERDR_PLUGIN_ACTION_ID"]

[[events]]
on = "tab.created"
command = ["sh", "-c", "echo hooked-$HERDR_PLUGIN_EVENT"]

[[link_handlers]]
id = "docs"
title = "Docs"
pattern = "^https://example\\\\.com/"
action = "hello"
"""

SCRIPT = r"""
import json, sys, time
from herdr_client import HerdrClient

client = HerdrClient(socket_path=sys.argv[1], timeout=10.0)
command_id, plugin_dir = sys.argv[2], sys.argv[3]
out = {}
req = client.request
ws = req("workspace.create", {"focus": True})
pane = ws["root_pane"]["pane_id"]
out["install"] = req("integration.install", {"target": "codex"})["details"]["messages"]
out["uninstall"] = req("integration.uninstall", {"target": "codex"})["details"]["messages"]
out["command"] = req("command.invoke", {"command_id": command_id, "pane_id": pane})["type"]
out["popup"] = req("popup.close", {})["type"]
out["link"] = req("plugin.link", {"path": plugin_dir})["plugin"]["plugin_id"]
out["invoke"] = req("plugin.action.invoke", {"plugin_id": "example.sandbox", "action_id": "hello"})["log"]["status"]
req("tab.create", {"workspace_id": ws["workspace"]["workspace_id"]})
client.pane_send_text(pane, "clear; echo https://example.com/$((1+1))x\r")
client.pane_wait_for_output(pane, {"type": "substring", "value": "example.com/2x"}, source="visible", timeout_ms=10000)
rows = client.pane_read(pane, source="visible")["read"]["text"].split("\n")
row = next(i for i, line in enumerate(rows) if "example.com/2x" in line)
col = rows[row].index("https://") + 3
out["activate"] = req("pane.link.activate", {"pane_id": pane, "viewport_row": row, "col": col})
deadline = time.monotonic() + 10
while time.monotonic() < deadline:
    logs = req("plugin.log.list", {})["logs"]
    done = sorted((log.get("stdout") or "").strip() for log in logs if log["status"] != "running")
    if len(done) >= 3:
        break
    time.sleep(0.05)
out["logs"] = done
print(json.dumps(out))
"""


@pytest.mark.skipif(PYTHON is None, reason="no working Python >= 3.13, or herdr-client is not opted in (SHEDPROTO_HERDR_CLIENT)")
async def test_herdr_client_drives_the_sandboxed_methods(short_socket_dir: Path) -> None:
    assert PYTHON is not None
    home, config, plugin = short_socket_dir / "home", short_socket_dir / "cfg", short_socket_dir / "plugin"
    for folder in (home / ".codex", config, plugin):
        folder.mkdir(parents=True)
    (config / "config.toml").write_text(CONFIG)
    (plugin / "herdr-plugin.toml").write_text(PLUGIN)
    with anyio.fail_after(60):
        server = HerdrServer(
            short_socket_dir / "h.sock", shell=["/bin/sh"], cwd=str(short_socket_dir), home=str(home),
            config_dir=str(config), environ={"PATH": "/usr/bin:/bin", "TERM": "xterm-256color"},
        )  # fmt: skip
        command_id = server.command_manifest()[0].command_id
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            env = {**os.environ, "PYTHONPATH": str(CLIENT_DIR)}
            env.pop("HERDR_SOCKET_PATH", None)
            result = await anyio.run_process([PYTHON, "-c", SCRIPT, str(path), command_id, str(plugin)], env=env, check=False)
            server.shutdown()
    assert result.returncode == 0, result.stderr.decode()
    out = json.loads(result.stdout)
    hook = home / ".codex" / "herdr-agent-state.sh"
    assert out["install"][0] == f"installed codex integration hook to {hook}"
    assert out["uninstall"][0] == f"removed codex hook at {hook}"
    assert (out["command"], out["popup"], out["link"], out["invoke"]) == ("ok", "ok", "example.sandbox", "running")
    assert out["activate"] == {"type": "pane_link_activated", "handled": True, "url": "https://example.com/2x"}
    assert out["logs"] == ["hello-hello", "hello-hello", "hooked-tab.created"]
