# ruff: noqa: E501 - manifests and expectations read best one a line
"""Plugins that run: a linked herdr-plugin.toml with an action and a pane.

herdr's behaviour: herdrdev/herdr src/app/api/plugins/mod.rs, runtime.rs,
panes.rs and manifest.rs @1c76079f.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from shedproto import herdr
from shedproto.clients.herdr import AsyncHerdrClient
from shedproto.herdr import types as t
from shedproto.servers.herdr import HerdrServer

LIMIT = 30

MANIFEST = """
id = "example.notes"
name = "Notes"
version = "1.0.0"
min_herdr_version = "0.8.0"
platforms = ["linux"]

[[actions]]
id = "save"
title = "Save a note"
command = ["sh", "-c", "echo \\"$HERDR_PLUGIN_ID:$HERDR_PLUGIN_ACTION_ID:$HERDR_PANE_ID:$HERDR_ENV\\" > saved.txt; echo done; echo oops >&2"]

[[actions]]
id = "fail"
title = "Fail"
command = ["sh", "-c", "exit 3"]

[[panes]]
id = "viewer"
title = "Notes viewer"
placement = "split"
command = ["sh", "-c", "echo VIEWER-$HERDR_PLUGIN_ENTRYPOINT_ID; exec cat"]
"""


@pytest.fixture
async def served(short_socket_dir: Path) -> AsyncIterator[tuple[AsyncHerdrClient, Path, Path]]:
    plugin_dir, config_dir = short_socket_dir / "notes", short_socket_dir / "cfg"
    plugin_dir.mkdir()
    (plugin_dir / "herdr-plugin.toml").write_text(MANIFEST)
    async with anyio.create_task_group() as tg:
        server = HerdrServer(
            short_socket_dir / "h.sock", shell=["/bin/sh"], cwd=str(short_socket_dir),
            poll_interval=0.02, config_dir=str(config_dir),
            environ={"PATH": "/usr/bin:/bin", "TERM": "xterm-256color"},
        )  # fmt: skip
        path = await tg.start(server.serve)
        client = AsyncHerdrClient.for_socket(path)
        await client.workspace_create(cwd=str(short_socket_dir), focus=True)
        try:
            yield client, plugin_dir, config_dir
        finally:
            server.shutdown()


async def finished_log(client: AsyncHerdrClient, log_id: str) -> t.PluginCommandLogInfo:
    with anyio.fail_after(10):
        while True:
            logs = (await client.plugin_log_list(plugin_id="example.notes")).logs
            found = [log for log in logs if log.log_id == log_id]
            if found and found[0].status != "running":
                return found[0]
            await anyio.sleep(0.05)


async def test_link_list_and_invoke_an_action(served: tuple[AsyncHerdrClient, Path, Path]) -> None:
    client, plugin_dir, config_dir = served
    with anyio.fail_after(LIMIT):
        linked = (await client.plugin_link(str(plugin_dir))).plugin
        assert (linked.plugin_id, linked.name, linked.warnings) == ("example.notes", "Notes", [])
        assert (config_dir / "plugins" / "config" / "example.notes").is_dir()
        actions = (await client.plugin_action_list()).actions
        assert [(a.plugin_id, a.action_id) for a in actions] == [
            ("example.notes", "fail"),
            ("example.notes", "save"),
        ]
        invoked = await client.plugin_action_invoke("save", plugin_id="example.notes")
        assert invoked.log.status == "running"
        assert invoked.context.focused_pane_id == "w1:p1"
        log = await finished_log(client, invoked.log.log_id)
        assert (log.status, log.exit_code, log.stdout, log.stderr) == ("succeeded", 0, "done\n", "oops\n")
        assert (plugin_dir / "saved.txt").read_text() == "example.notes:save:w1:p1:1\n"
        failed = await client.plugin_action_invoke("example.notes.fail")
        log = await finished_log(client, failed.log.log_id)
        assert (log.status, log.exit_code) == ("failed", 3)


async def test_disabled_plugins_and_herdrs_error_codes(
    served: tuple[AsyncHerdrClient, Path, Path],
) -> None:
    client, plugin_dir, _ = served
    with anyio.fail_after(LIMIT):
        await client.plugin_link(str(plugin_dir))
        await client.plugin_disable("example.notes")
        cases = [
            (client.plugin_action_invoke("save", plugin_id="example.notes"), "plugin_disabled"),
            (client.plugin_pane_open("example.notes", "viewer"), "plugin_disabled"),
            (client.plugin_action_invoke("nope"), "plugin_action_not_found"),
            (client.plugin_list(plugin_id="bad id"), "invalid_plugin_id"),
            (client.plugin_enable("missing"), "plugin_not_found"),
            (client.plugin_link(str(plugin_dir / "absent")), "plugin_manifest_not_found"),
            (client.plugin_pane_focus("w1:p1"), "plugin_pane_not_found"),
        ]
        for call, code in cases:
            with pytest.raises(herdr.HerdrApiError) as caught:
                await call
            assert caught.value.code == code
        await client.plugin_enable("example.notes")
        with pytest.raises(herdr.HerdrApiError) as missing:
            await client.plugin_pane_open("example.notes", "nothing")
        assert (missing.value.code, missing.value.message) == (
            "plugin_pane_not_found", "plugin pane entrypoint 'nothing' not found",
        )  # fmt: skip


async def test_open_focus_and_close_a_plugin_pane(
    served: tuple[AsyncHerdrClient, Path, Path],
) -> None:
    client, plugin_dir, _ = served
    with anyio.fail_after(LIMIT):
        await client.plugin_link(str(plugin_dir))
        reply = await client.plugin_pane_open("example.notes", "viewer")
        assert isinstance(reply, t.PluginPaneOpenedReply)
        opened = reply.plugin_pane
        assert (opened.plugin_id, opened.entrypoint) == ("example.notes", "viewer")
        pane = opened.pane.pane_id
        await client.pane_wait_for_output(
            pane, "visible", t.SubstringOutputMatch(value="VIEWER-viewer"), timeout_ms=10_000
        )
        focused = (await client.plugin_pane_focus(pane)).plugin_pane
        assert focused.pane.focused
        closed = await client.plugin_pane_close(pane)
        assert closed.pane_id == pane
        assert pane not in [p.pane_id for p in (await client.pane_list()).panes]
