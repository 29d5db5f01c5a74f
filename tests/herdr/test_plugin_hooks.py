# ruff: noqa: E501 - manifests and expectations read best one a line
"""Plugin startup and event hooks and link handlers run as herdr runs them.

herdr's runtime: herdrdev/herdr src/app/api/plugins/runtime.rs
(start_plugin_command, run_plugin_startup_hooks, run_plugin_event_hooks),
context.rs (plugin_context_for_event), mod.rs:256-300,564-609 (link handlers),
src/persist/plugin_registry.rs (plugins.json), src/api/schema/events.rs:286-309
(PLUGIN_HOOK_EVENT_KINDS) @1c76079f; src/server/headless.rs:5137 (startup hooks
run once the server is serving).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from shedproto.clients.herdr import AsyncHerdrClient
from shedproto.herdr import types as t
from shedproto.herdr._plugins import PLUGIN_HOOK_EVENTS, capped_output, event_dot_name
from shedproto.servers.herdr import HerdrServer

LIMIT = 30
REPORT = 'printf "%s|%s|%s" "$HERDR_PLUGIN_EVENT" "$HERDR_PLUGIN_CONTEXT_JSON" "$HERDR_PLUGIN_EVENT_JSON"'

MANIFEST = f"""
id = "example.hooks"
name = "Hooks"
version = "1.0.0"
min_herdr_version = "0.8.0"

[[startup]]
command = ["sh", "-c", {json.dumps(REPORT)}]

[[events]]
on = "tab.created"
command = ["sh", "-c", {json.dumps(REPORT)}]

[[events]]
on = "pane.updated"
command = ["sh", "-c", "echo never"]

[[actions]]
id = "open-pr"
title = "Open PR"
command = ["sh", "-c", "printf '%s %s' \\"$HERDR_PLUGIN_CLICKED_URL\\" \\"$HERDR_PLUGIN_LINK_HANDLER_ID\\""]

[[link_handlers]]
id = "github-pr"
title = "GitHub PR"
pattern = "^https://github\\\\.com/[^/]+/[^/]+/pull/[0-9]+$"
action = "open-pr"
"""


@asynccontextmanager
async def serving(root: Path) -> AsyncIterator[tuple[AsyncHerdrClient, HerdrServer]]:
    async with anyio.create_task_group() as tg:
        server = HerdrServer(
            root / "h.sock", shell=["/bin/sh"], cwd=str(root), poll_interval=0.02,
            config_dir=str(root / "cfg"), environ={"PATH": "/usr/bin:/bin", "TERM": "xterm-256color"},
        )  # fmt: skip
        client = AsyncHerdrClient.for_socket(await tg.start(server.serve))
        try:
            yield client, server
        finally:
            server.shutdown()


async def finished(client: AsyncHerdrClient, pick: Callable[[t.PluginCommandLogInfo], bool]) -> t.PluginCommandLogInfo:
    with anyio.fail_after(10):
        while True:
            done = [log for log in (await client.plugin_log_list()).logs if pick(log) and log.status != "running"]
            if done:
                return done[0]
            await anyio.sleep(0.05)


def parts(log: t.PluginCommandLogInfo) -> tuple[str, dict[str, object], str]:
    event, context, event_json = (log.stdout or "").split("|", 2)
    return event, json.loads(context), event_json


def test_hookable_events_are_herdrs_22() -> None:
    assert len(PLUGIN_HOOK_EVENTS) == 22
    assert not {"pane.updated", "pane.output_changed", "layout.updated", "workspace.metadata_updated"} & PLUGIN_HOOK_EVENTS
    assert event_dot_name("pane_agent_status_changed") == "pane.agent_status_changed"


def test_output_is_capped_with_herdrs_notice() -> None:
    assert capped_output(b"abc", cap=2) == "ab\n[herdr truncated plugin output after 2 bytes]"
    assert capped_output(b"ab", cap=2) == "ab"


async def test_startup_hook_runs_when_a_registered_plugin_is_served(short_socket_dir: Path) -> None:
    plugin = short_socket_dir / "hooks"
    plugin.mkdir()
    (plugin / "herdr-plugin.toml").write_text(MANIFEST)
    async with serving(short_socket_dir) as (client, _):
        await client.plugin_link(str(plugin))
    registry = json.loads((short_socket_dir / "cfg" / "plugins.json").read_text())
    assert [entry["plugin_id"] for entry in registry] == ["example.hooks"]
    async with serving(short_socket_dir) as (client, _):
        assert [p.plugin_id for p in (await client.plugin_list()).plugins] == ["example.hooks"]
        log = await finished(client, lambda log: log.event == "startup")
        assert log.status == "succeeded"
        event, context, event_json = parts(log)
        assert (event, event_json) == ("startup", "")
        assert (context["invocation_source"], context["correlation_id"]) == ("startup", "plugin.startup")


async def test_event_hook_gets_the_event_and_its_context(short_socket_dir: Path) -> None:
    plugin = short_socket_dir / "hooks"
    plugin.mkdir()
    (plugin / "herdr-plugin.toml").write_text(MANIFEST.replace("[[startup]]", "[[startup]]\nplatforms = [\"windows\"]"))
    async with serving(short_socket_dir) as (client, _):
        await client.plugin_link(str(plugin))
        ws = (await client.workspace_create(cwd=str(short_socket_dir), focus=True)).workspace
        tab = (await client.tab_create(workspace_id=ws.workspace_id)).tab
        log = await finished(client, lambda log: log.event == "tab.created" and tab.tab_id in (log.stdout or ""))
        assert log.status == "succeeded"
        event, context, event_json = parts(log)
        assert event == "tab.created"
        assert (context["tab_id"], context["workspace_id"], context["correlation_id"]) == (tab.tab_id, ws.workspace_id, "tab.created")
        assert json.loads(event_json)["event"] == "tab_created"
        logs = (await client.plugin_log_list()).logs
        assert {log.event for log in logs} == {"tab.created"}  # pane.updated is not hookable; startup is windows-only
        before = len(logs)
        await client.plugin_disable("example.hooks")
        await client.tab_create(workspace_id=ws.workspace_id)
        await client.tab_create(workspace_id=ws.workspace_id)
        assert len((await client.plugin_log_list()).logs) == before


async def test_link_handler_runs_its_action(short_socket_dir: Path) -> None:
    plugin = short_socket_dir / "hooks"
    plugin.mkdir()
    (plugin / "herdr-plugin.toml").write_text(MANIFEST)
    url = "https://github.com/herdrdev/herdr/pull/3102"
    async with serving(short_socket_dir) as (client, _):
        await client.plugin_link(str(plugin))
        await client.workspace_create(cwd=str(short_socket_dir), focus=True)
        pane = (await client.pane_list()).panes[0].pane_id
        await client.pane_send_text(pane, "clear; printf 'see %s\\n' " + url + "\n")
        await client.pane_wait_for_output(pane, "visible", t.SubstringOutputMatch(value="see https"), timeout_ms=10_000)
        rows = (await client.pane_read(pane, "visible")).read.text.split("\n")
        row = next(i for i, line in enumerate(rows) if line.startswith("see https"))
        activated = await client.pane_link_activate(pane, row, 10)
        assert (activated.handled, activated.url) == (True, url)
        log = await finished(client, lambda log: log.action_id == "open-pr")
        assert (log.status, log.stdout) == ("succeeded", f"{url} github-pr")
        other = await client.pane_link_activate(pane, row + 5, 10)
        assert other.handled is False


async def test_a_registry_entry_whose_manifest_went_is_kept_with_a_warning(short_socket_dir: Path) -> None:
    plugin = short_socket_dir / "hooks"
    plugin.mkdir()
    (plugin / "herdr-plugin.toml").write_text(MANIFEST)
    async with serving(short_socket_dir) as (client, _):
        await client.plugin_link(str(plugin), enabled=False)
    (plugin / "herdr-plugin.toml").unlink()
    async with serving(short_socket_dir) as (client, _):
        listed = (await client.plugin_list()).plugins
        assert [p.enabled for p in listed] == [False]
        assert listed[0].warnings[0].startswith("manifest unavailable: ")
    (short_socket_dir / "cfg" / "plugins.json").write_text("{broken")
    async with serving(short_socket_dir) as (client, _):  # a corrupt registry never blocks startup
        assert (await client.plugin_list()).plugins == []


@pytest.mark.parametrize("count", [33])
async def test_the_33rd_concurrent_command_is_refused(short_socket_dir: Path, count: int) -> None:
    plugin = short_socket_dir / "slow"
    plugin.mkdir()
    (plugin / "herdr-plugin.toml").write_text(
        'id = "example.slow"\nname = "Slow"\nversion = "1.0.0"\nmin_herdr_version = "0.8.0"\n'
        '[[actions]]\nid = "wait"\ntitle = "Wait"\ncommand = ["sleep", "30"]\n'
    )
    async with serving(short_socket_dir) as (client, _):
        await client.plugin_link(str(plugin))
        for _ in range(count - 1):
            await client.plugin_action_invoke("wait", plugin_id="example.slow")
        from shedproto import herdr

        with pytest.raises(herdr.HerdrApiError) as refused:
            await client.plugin_action_invoke("wait", plugin_id="example.slow")
        assert (refused.value.code, refused.value.message) == ("plugin_command_limit_reached", "maximum concurrent plugin commands reached (32)")
        failed = [log for log in (await client.plugin_log_list(limit=200)).logs if log.status == "failed"]
        assert [log.error for log in failed] == ["maximum concurrent plugin commands reached (32)"]
