"""herdr's claude integration edits (herdrdev/herdr src/integration/*.rs@1c76079f)."""

from __future__ import annotations

from typing import Any

import pytest

from shedproto.herdr._integrations import (
    IntegrationError,
    claude_dir,
    claude_settings_install,
    claude_settings_uninstall,
    hook_command,
)

HOOK = "/home/u/.claude/hooks/herdr-agent-state.sh"


def test_claude_dir() -> None:
    assert claude_dir({}, "/home/u") == "/home/u/.claude"
    assert claude_dir({"CLAUDE_CONFIG_DIR": "~/cc"}, "/home/u") == "/home/u/cc"
    assert claude_dir({"CLAUDE_CONFIG_DIR": "/x"}, "/home/u") == "/x"


def test_hook_command_quotes_the_path() -> None:
    assert hook_command("/a b/h.sh", "session") == "bash '/a b/h.sh' session"
    assert hook_command("/it's", None) == "bash '/it'\"'\"'s'"  # command.rs:3-5


def test_install_adds_one_session_start_entry_and_keeps_the_users() -> None:
    mine = {"hooks": [{"type": "command", "command": "notify-send hi"}]}
    settings: dict[str, Any] = {"model": "opus", "hooks": {"SessionStart": [mine]}}
    installed = claude_settings_install(settings, "s.json", HOOK)
    assert installed["model"] == "opus"
    assert installed["hooks"]["SessionStart"] == [
        mine,
        {
            "matcher": "*",
            "hooks": [{"type": "command", "command": f"bash '{HOOK}' session", "timeout": 10}],
        },
    ]
    assert claude_settings_install(installed, "s.json", HOOK) == installed  # idempotent
    assert settings["hooks"]["SessionStart"] == [mine]  # the input is not changed


def test_install_removes_older_versions_hooks() -> None:
    def entry(action: str) -> dict[str, Any]:
        return {"hooks": [{"type": "command", "command": f"bash '{HOOK}' {action}"}]}

    settings = {"hooks": {"UserPromptSubmit": [entry("working")], "Stop": [entry("idle")]}}
    installed = claude_settings_install(settings, "s.json", HOOK)
    assert set(installed["hooks"]) == {"SessionStart"}
    foreign = {"hooks": {"Stop": [entry("working")]}}  # not an action herdr ran on Stop
    assert claude_settings_install(foreign, "s.json", HOOK)["hooks"]["Stop"] == [entry("working")]


def test_uninstall_removes_only_herdrs_entries() -> None:
    mine = {"hooks": [{"type": "command", "command": "notify-send hi"}]}
    installed = claude_settings_install({"hooks": {"SessionStart": [mine]}}, "s.json", HOOK)
    removed, changed = claude_settings_uninstall(installed, "s.json", HOOK)
    assert changed
    assert removed == {"hooks": {"SessionStart": [mine]}}
    again, changed_again = claude_settings_uninstall(removed, "s.json", HOOK)
    assert (again, changed_again) == (removed, False)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ([], "claude settings at s.json must be a JSON object"),
        ({"hooks": []}, "claude settings hooks at s.json must be a JSON object"),
    ],
)
def test_settings_herdr_refuses(settings: object, message: str) -> None:
    with pytest.raises(IntegrationError, match=message):
        claude_settings_install(settings, "s.json", HOOK)
