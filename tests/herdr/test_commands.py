# ruff: noqa: E501 - configs and expectations read best one a line
"""command.invoke runs the custom commands of herdr's config.toml; reload issues new ids.

herdr's rules: herdrdev/herdr src/config/keybinds.rs:78-125,740-795@1c76079f (the
``[[keys.command]]`` schema and diagnostics) and src/app/commands.rs
``handle_command_invoke``, ``focus_client_shell_command_target``,
``custom_command_env`` (0.9.x, the search index's stored version).
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from shedproto import herdr
from shedproto.clients.herdr import AsyncHerdrClient
from shedproto.herdr import types as t
from shedproto.herdr._commands import parse_custom_commands
from shedproto.servers.herdr import HerdrServer

LIMIT = 30

CONFIG = """
[[keys.command]]
key = "prefix+m"
command = "echo \\"$HERDR_ACTIVE_WORKSPACE_ID $HERDR_ACTIVE_PANE_ID $PWD\\" > marker.txt"
description = "mark"

[[keys.command]]
key = ["prefix+p", "ctrl+alt+p"]
type = "pane"
command = "echo PANE-RAN-$HERDR_ACTIVE_PANE_ID; exec cat"

[[keys.command]]
key = "prefix+g"
type = "popup"
width = 90
height = "80%"
command = "echo POPUP; exec cat"

[[keys.command]]
key = "prefix+n"
type = "plugin_action"
command = "example.notes.show"
"""

PLUGIN = """
id = "example.notes"
name = "Notes"
version = "1.0.0"
min_herdr_version = "0.8.0"

[[actions]]
id = "show"
title = "Show"
command = ["sh", "-c", "printf %s \\"$HERDR_PLUGIN_CONTEXT_JSON\\""]
"""


def test_config_rules_and_diagnostics() -> None:
    config = {"keys": {"command": [
        {"key": "prefix+a", "command": "  "},
        {"key": "prefix+b", "command": "x", "type": "pane", "width": 10},
        {"key": "", "command": "y"},
        {"key": "prefix+c", "command": "z"},
        {"key": "prefix+d", "command": "w", "type": "teleport"},
    ]}}  # fmt: skip
    commands, diagnostics = parse_custom_commands(config)
    assert [(c.command, c.action, c.label, c.width) for c in commands] == [("x", "pane", "prefix+b", None), ("z", "shell", "prefix+c", None)]
    assert diagnostics[0] == "empty custom command: keys.command[0].command; disabling custom command"
    assert diagnostics[1] == "popup size on non-popup custom command: keys.command[1]; ignoring width and height"
    assert len(diagnostics) == 4
    assert parse_custom_commands({}) == ([], [])


@pytest.fixture
async def served(short_socket_dir: Path) -> AsyncIterator[tuple[AsyncHerdrClient, HerdrServer, Path]]:
    config_dir = short_socket_dir / "cfg"
    config_dir.mkdir()
    (config_dir / "config.toml").write_text(CONFIG)
    plugin_dir = short_socket_dir / "notes"
    plugin_dir.mkdir()
    (plugin_dir / "herdr-plugin.toml").write_text(PLUGIN)
    async with anyio.create_task_group() as tg:
        server = HerdrServer(
            short_socket_dir / "h.sock", shell=["/bin/sh"], cwd=str(short_socket_dir),
            poll_interval=0.02, config_dir=str(config_dir),
            environ={"PATH": "/usr/bin:/bin", "TERM": "xterm-256color"},
        )  # fmt: skip
        client = AsyncHerdrClient.for_socket(await tg.start(server.serve))
        await client.workspace_create(cwd=str(short_socket_dir), focus=True)
        await client.plugin_link(str(plugin_dir))
        try:
            yield client, server, short_socket_dir
        finally:
            server.shutdown()


def ids(server: HerdrServer) -> dict[str, str]:
    return {entry.binding_label: entry.command_id for entry in server.command_manifest()}


async def test_manifest_is_herdrs_shape(served: tuple[AsyncHerdrClient, HerdrServer, Path]) -> None:
    _, server, _ = served
    manifest = server.command_manifest()
    assert [(e.binding_label, e.binding_labels, e.action, e.description) for e in manifest] == [
        ("prefix+m", ("prefix+m",), "shell", "mark"),
        ("prefix+p / ctrl+alt+p", ("prefix+p", "ctrl+alt+p"), "pane", None),
        ("prefix+g", ("prefix+g",), "popup", None),
        ("prefix+n", ("prefix+n",), "plugin_action", None),
    ]
    assert all(e.command_id.startswith("cmd_") and e.command_id.endswith(f"_{i}") for i, e in enumerate(manifest))


async def test_shell_command_runs_detached_with_herdrs_env(served: tuple[AsyncHerdrClient, HerdrServer, Path]) -> None:
    client, server, cwd = served
    pane = (await client.pane_list()).panes[0]
    marker = cwd / "marker.txt"
    os.mkfifo(marker)  # the detached command's write is the event the test waits for
    with anyio.fail_after(LIMIT):
        assert await client.command_invoke(ids(server)["prefix+m"], pane_id=pane.pane_id) == t.OkReply()
        written = await anyio.to_thread.run_sync(marker.read_text, abandon_on_cancel=True)
    assert written.split() == [pane.workspace_id, pane.pane_id, str(cwd)]


async def test_pane_command_opens_a_zoomed_pane(served: tuple[AsyncHerdrClient, HerdrServer, Path]) -> None:
    client, server, _ = served
    first = (await client.pane_list()).panes[0]
    with anyio.fail_after(LIMIT):
        await client.command_invoke(ids(server)["prefix+p / ctrl+alt+p"])
        panes = (await client.pane_list()).panes
        assert len(panes) == 2
        new = next(p for p in panes if p.pane_id != first.pane_id)
        assert new.focused
        await client.pane_wait_for_output(new.pane_id, "visible", t.SubstringOutputMatch(value=f"PANE-RAN-{first.pane_id}"), timeout_ms=10_000)
        layout = (await client.pane_layout(pane_id=new.pane_id)).layout
        assert layout.zoomed


async def test_popup_command_and_popup_close(served: tuple[AsyncHerdrClient, HerdrServer, Path]) -> None:
    client, server, _ = served
    with anyio.fail_after(LIMIT):
        with pytest.raises(herdr.HerdrApiError) as none_open:
            await client.popup_close()
        assert none_open.value.code == "popup_not_open"
        await client.command_invoke(ids(server)["prefix+g"])
        assert len((await client.pane_list()).panes) == 2
        assert await client.popup_close() == t.OkReply()
        assert len((await client.pane_list()).panes) == 1
        with pytest.raises(herdr.HerdrApiError):
            await client.popup_close()


async def test_plugin_action_command_runs_with_the_selection(served: tuple[AsyncHerdrClient, HerdrServer, Path]) -> None:
    client, server, _ = served
    pane = (await client.pane_list()).panes[0]
    with anyio.fail_after(LIMIT):
        await client.pane_send_text(pane.pane_id, "echo SELECT-$((40+2))\n")
        await client.pane_wait_for_output(pane.pane_id, "recent", t.SubstringOutputMatch(value="SELECT-42"), timeout_ms=10_000)
        lines = (await client.pane_read(pane.pane_id, source="recent")).read.text.split("\n")
        row = next((i for i, line in enumerate(lines) if "SELECT-42" in line and "$" not in line), None)
        assert row is not None, lines
        col = lines[row].index("SELECT-42")
        selection = t.PaneSelectionReadParams(pane_id=pane.pane_id, anchor=t.PaneTextPoint(row=row, col=col), cursor=t.PaneTextPoint(row=row, col=col + 8))
        command = ids(server)["prefix+n"]
        with pytest.raises(herdr.HerdrApiError) as mismatch:
            await client.command_invoke(command, selection=selection)
        assert (mismatch.value.code, mismatch.value.message) == ("command_target_mismatch", "command selection does not belong to the requested pane")
        await client.command_invoke(command, pane_id=pane.pane_id, selection=selection)
        while True:
            logs = [log for log in (await client.plugin_log_list()).logs if log.status != "running"]
            if logs:
                break
            await anyio.sleep(0.05)
    assert logs[0].status == "succeeded"
    context = json.loads(logs[0].stdout or "{}")
    assert context["invocation_source"] == "keybinding"
    assert context["selected_text"] == "SELECT-42"


async def test_stale_ids_and_targets_are_herdrs_errors(served: tuple[AsyncHerdrClient, HerdrServer, Path]) -> None:
    client, server, cwd = served
    pane = (await client.pane_list()).panes[0]
    old = ids(server)["prefix+m"]
    for kwargs, code, message in [
        ({"pane_id": "w9:p9"}, "pane_not_found", "pane not found: w9:p9"),
        ({"pane_id": pane.pane_id, "workspace_id": "w-other"}, "command_target_mismatch", "command target does not belong to the requested workspace"),
        ({"pane_id": pane.pane_id, "tab_id": "w-other:t9"}, "command_target_mismatch", "command pane does not belong to the requested tab"),
        ({"tab_id": "w9:t9"}, "tab_not_found", "tab not found: w9:t9"),
        ({"workspace_id": "w9"}, "workspace_not_found", "workspace not found: w9"),
    ]:
        with pytest.raises(herdr.HerdrApiError) as refused:
            await client.command_invoke(old, **kwargs)  # type: ignore[arg-type]
        assert (refused.value.code, refused.value.message) == (code, message), kwargs
    reloaded = await client.server_reload_config()
    assert (reloaded.status, reloaded.diagnostics) == ("applied", [])
    assert ids(server)["prefix+m"] != old
    with pytest.raises(herdr.HerdrApiError) as stale:
        await client.command_invoke(old)
    assert (stale.value.code, stale.value.message) == ("command_not_found", "custom command manifest is stale; reload configuration")
    (cwd / "cfg" / "config.toml").write_text("[[keys.command]\nbroken")
    broken = await client.server_reload_config()
    assert broken.status == "partial"
    assert broken.diagnostics[0].startswith("failed to parse ")
    assert server.command_manifest() == []


async def test_a_command_that_cannot_start_is_command_failed(served: tuple[AsyncHerdrClient, HerdrServer, Path]) -> None:
    client, server, cwd = served
    (cwd / "cfg" / "config.toml").write_text('[[keys.command]]\nkey = "prefix+x"\ntype = "plugin_action"\ncommand = "no.such.action"\n')
    await client.server_reload_config()
    with pytest.raises(herdr.HerdrApiError) as refused:
        await client.command_invoke(ids(server)["prefix+x"])
    assert refused.value.code == "command_failed"
    assert refused.value.message == "plugin action not found"
