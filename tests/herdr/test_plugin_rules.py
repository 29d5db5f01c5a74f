# ruff: noqa: E501 - refused manifests read best one a line
"""herdr's herdr-plugin.toml rules, action lookup and command environment.

Source: herdrdev/herdr src/app/api/plugins/manifest.rs, mod.rs, runtime.rs,
env.rs and src/plugin_paths.rs, all @1c76079f.
"""

from __future__ import annotations

from typing import Any

import pytest

from shedproto.herdr import types as t
from shedproto.herdr._plugins import (
    PluginError,
    command_env,
    find_action,
    parse_plugin_manifest,
    platform_error,
    plugin_config_dir,
    plugin_dir_component,
    plugin_from_manifest,
    plugin_state_dir,
)

MANIFEST = """
id = "example.notes"
name = " Notes "
version = "1.2.0"
min_herdr_version = "0.8.0"
platforms = ["linux", "macos"]

[[actions]]
id = "save"
title = "Save a note"
command = ["sh", "-c", "echo saved"]

[[actions]]
id = "archive"
title = "Archive"
platforms = ["windows"]
command = ["archive.cmd"]

[[panes]]
id = "viewer"
title = "Notes viewer"
placement = "split"
command = ["sh", "-c", "cat notes.txt"]
"""

WHERE: dict[str, Any] = {"manifest_path": "/p/herdr-plugin.toml", "plugin_root": "/p", "enabled": True}


def load(text: str = MANIFEST, version: str = "0.8.2") -> t.InstalledPluginInfo:
    return parse_plugin_manifest(text, herdr_version=version, **WHERE)


def test_manifest_becomes_installed_plugin_info() -> None:
    plugin = load()
    assert (plugin.plugin_id, plugin.name, plugin.min_herdr_version) == (
        "example.notes",
        "Notes",
        "0.8.0",
    )
    assert [a.id for a in plugin.actions] == ["archive", "save"]  # sorted by id
    assert plugin.panes[0].placement == "split"
    assert plugin.warnings == []


def test_undeclared_platforms_warn() -> None:
    plugin = load(MANIFEST.replace('platforms = ["linux", "macos"]\n', "", 1))
    assert plugin.warnings == ["manifest does not declare platforms; platform support unknown"]


def base(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"id": "p", "name": "P", "version": "1", "min_herdr_version": "0.1.0"}
    data.update(changes)
    return {k: v for k, v in data.items() if v is not None}


@pytest.mark.parametrize(
    ("data", "code", "message"),
    [
        (base(id="bad id"), "invalid_plugin_id", "invalid plugin id"),
        (base(name="  "), "invalid_plugin_name", "plugin name is required"),
        (base(min_herdr_version=None), "invalid_plugin_min_herdr_version", "plugin min_herdr_version is required"),
        (base(min_herdr_version="soon"), "invalid_plugin_min_herdr_version", "plugin min_herdr_version must be a semantic version like 0.8.2"),
        (base(min_herdr_version="9.0.0"), "plugin_requires_newer_herdr", "plugin requires Herdr 9.0.0 or newer; current Herdr is 0.8.2"),
        (base(platforms=[]), "invalid_plugin_platform", "platforms must not be an empty array; omit the field to leave platforms undeclared"),
        (base(actions=[{"id": "a.b", "title": "x", "command": ["x"]}]), "invalid_plugin_action_id", "invalid action id"),
        (base(actions=[{"id": "a", "title": "x", "command": []}]), "invalid_plugin_command", "command must contain non-empty argv strings"),
        (base(actions=[{"id": "a", "title": "x", "command": ["x"]}] * 2), "duplicate_plugin_action_id", "duplicate action id 'a'"),
        (base(panes=[{"id": "v", "title": "V", "width": 10, "command": ["x"]}]), "invalid_plugin_pane_size", "pane width and height are only supported when placement is popup"),
        (base(link_handlers=[{"id": "l", "title": "L", "pattern": "x", "action": "nope"}]), "invalid_plugin_link_handler_action", "link handler 'l' references unknown action 'nope'"),
    ],
)  # fmt: skip
def test_manifests_herdr_refuses(data: dict[str, Any], code: str, message: str) -> None:
    with pytest.raises(PluginError) as caught:
        plugin_from_manifest(data, herdr_version="0.8.2", **WHERE)
    assert (caught.value.code, caught.value.message) == (code, message)


def test_bad_toml_is_a_parse_failure() -> None:
    with pytest.raises(PluginError) as caught:
        load("id = [")
    assert caught.value.code == "plugin_manifest_parse_failed"


def test_action_lookup() -> None:
    plugin = load()
    other = plugin_from_manifest(
        base(id="other", actions=[{"id": "save", "title": "S", "command": ["x"]}]),
        herdr_version="0.8.2",
        **WHERE,
    )
    plugins = {plugin.plugin_id: plugin, other.plugin_id: other}
    found, action = find_action(plugins, "example.notes", "save")
    assert (found.plugin_id, action.action_id, action.platforms) == (
        "example.notes",
        "save",
        ["linux", "macos"],
    )
    assert find_action(plugins, None, "example.notes.save")[1].plugin_id == "example.notes"
    with pytest.raises(PluginError, match="include plugin_id") as caught:
        find_action(plugins, None, "save")
    assert caught.value.code == "ambiguous_plugin_action"
    with pytest.raises(PluginError) as missing:
        find_action(plugins, "nobody", "save")
    assert missing.value.code == "plugin_not_found"


def test_platform_rule() -> None:
    error = platform_error(["windows"], "action 'example.notes.archive'", "linux")
    assert error is not None
    assert (error.code, error.message) == (
        "platform_unsupported",
        "action 'example.notes.archive' does not support the current platform (linux)",
    )
    assert platform_error(None, "x", "linux") is None


def test_command_environment() -> None:
    plugin = load()
    context = t.PluginInvocationContext(workspace_id="w1", focused_pane_id="w1:p1")
    env = command_env(
        plugin, context, socket_path="/s/herdr.sock", config_dir="/c", state_dir="/st",
        context_json="{}", action_id="save",
    )  # fmt: skip
    assert env["HERDR_PLUGIN_ID"] == "example.notes"
    assert env["HERDR_SOCKET_PATH"] == "/s/herdr.sock"
    assert env["HERDR_ENV"] == "1"
    assert env["HERDR_PLUGIN_ACTION_ID"] == "save"
    assert env["HERDR_PANE_ID"] == "w1:p1"
    assert "HERDR_TAB_ID" not in env


def test_plugin_directories() -> None:
    assert plugin_dir_component("examples.agent-telegram-notify") == "examples.agent-telegram-notify"
    assert plugin_dir_component("example:a") == "example%3Aa"
    assert plugin_dir_component("Example") == "%45xample"
    assert plugin_config_dir("/cfg/herdr", "a:b") == "/cfg/herdr/plugins/config/a%3Ab"
    assert plugin_state_dir("/st/herdr", "ab.") == "/st/herdr/plugins/ab%2E"
