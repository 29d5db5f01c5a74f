"""herdr's ``integration.install`` / ``integration.uninstall`` edits, as pure functions.

herdr's claude integration (version 8) puts a hook script at
``<claude dir>/hooks/herdr-agent-state.sh`` and one ``SessionStart`` entry
in ``<claude dir>/settings.json``: ``{"matcher": "*", "hooks": [{"type":
"command", "command": "bash '<hook>' session", "timeout": 10}]}``, after
removing the entries older versions added (``working``, ``blocked``,
``idle``, ``release`` on nine events). The claude dir is
``$CLAUDE_CONFIG_DIR`` or ``<home>/.claude`` and must exist
(herdrdev/herdr src/integration/targets.rs:119-150,552-576,
claude_settings.rs:22-121, config_edit.rs:13-110, command.rs:7-31,
env.rs:58-90, actions.rs:61-73,298-323@1c76079f).

The script is this library's own: it reports the claude session to the
pane's herdr socket as ``pane.report_agent_session`` with source
``herdr:claude``, as herdr's does, and exits quietly outside herdr.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = [
    "CLAUDE_HOOK_NAME",
    "CLAUDE_HOOK_SCRIPT",
    "CLAUDE_REMOVED_HOOKS",
    "IntegrationError",
    "claude_dir",
    "claude_settings_install",
    "claude_settings_uninstall",
    "hook_command",
]

CLAUDE_HOOK_NAME = "herdr-agent-state.sh"
CLAUDE_REMOVED_HOOKS: dict[str, tuple[str, ...]] = {
    "PostToolUse": ("working",), "PostToolUseFailure": ("working",),
    "SubagentStop": ("working",), "PermissionRequest": ("blocked",),
    "SessionStart": ("idle", "session"), "UserPromptSubmit": ("working",),
    "PreToolUse": ("working",), "Stop": ("idle",), "SessionEnd": ("release",),
}  # fmt: skip
"""The hook entries herdr's claude integration removes: event -> the actions it ran."""


class IntegrationError(Exception):
    """An edit herdr refuses; the message is herdr's."""


def claude_dir(env: Mapping[str, str], home: str) -> str:
    """Return claude's config dir: ``$CLAUDE_CONFIG_DIR`` (``~`` expanded) or ``<home>/.claude``."""
    value = env.get("CLAUDE_CONFIG_DIR", "")
    if not value:
        return f"{home.rstrip('/')}/.claude"
    if value == "~":
        return home
    if value.startswith("~"):
        return f"{home.rstrip('/')}/{value[1:].lstrip('/')}"
    return value


def hook_command(hook_path: str, action: str | None) -> str:
    """Return the command herdr writes into an agent's hook config."""
    quoted = "'" + hook_path.replace("'", "'\"'\"'") + "'"
    command = f"bash {quoted}"
    return command if action is None else f"{command} {action}"


def _hooks(settings: Any, path: str, *, create: bool) -> dict[str, Any] | None:
    if not isinstance(settings, dict):
        raise IntegrationError(f"claude settings at {path} must be a JSON object")
    if "hooks" not in settings:
        if not create:
            return None
        settings["hooks"] = {}
    hooks = settings["hooks"]
    if not isinstance(hooks, dict):
        raise IntegrationError(f"claude settings hooks at {path} must be a JSON object")
    return hooks


def _remove(hooks: dict[str, Any], hook_path: str, keep: Any = None) -> bool:
    removed = False
    for event, actions in CLAUDE_REMOVED_HOOKS.items():
        entries = hooks.get(event)
        if not isinstance(entries, list):
            continue
        commands = {hook_command(hook_path, action) for action in actions}
        kept = []
        for entry in entries:
            if keep is not None and event == "SessionStart" and entry == keep:
                kept.append(entry)
                continue
            inner = entry.get("hooks") if isinstance(entry, dict) else None
            if isinstance(inner, list):
                left: list[Any] = [
                    h for h in inner
                    if not (isinstance(h, dict) and h.get("type") == "command"
                            and h.get("command") in commands)
                ]  # fmt: skip
                if len(left) != len(inner):
                    removed = True
                    if not left:
                        continue
                    kept.append({**entry, "hooks": left})
                    continue
            kept.append(entry)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    return removed


def _session_entry(hook_path: str) -> dict[str, Any]:
    return {
        "matcher": "*",
        "hooks": [
            {"type": "command", "command": hook_command(hook_path, "session"), "timeout": 10}
        ],
    }


def claude_settings_install(settings: Any, path: str, hook_path: str) -> Any:
    """Return ``settings`` (parsed settings.json) with herdr's hook; unchanged when present.

    Raises:
        IntegrationError: the settings or their ``hooks`` are not JSON objects.

    """
    desired = copy.deepcopy(settings)
    hooks = _hooks(desired, path, create=True)
    assert hooks is not None
    entry = _session_entry(hook_path)
    _remove(hooks, hook_path, keep=entry)
    sessions = hooks.setdefault("SessionStart", [])
    if not isinstance(sessions, list):
        raise IntegrationError("hook entries for SessionStart must be an array")
    if entry not in sessions:
        sessions.append(entry)
    return desired


def claude_settings_uninstall(settings: Any, path: str, hook_path: str) -> tuple[Any, bool]:
    """Return ``(settings without herdr's hooks, whether any were removed)``.

    Raises:
        IntegrationError: the settings or their ``hooks`` are not JSON objects.

    """
    desired = copy.deepcopy(settings)
    hooks = _hooks(desired, path, create=False)
    if hooks is None:
        return settings, False
    removed = _remove(hooks, hook_path)
    return (desired, True) if removed else (settings, False)


CLAUDE_HOOK_SCRIPT = r"""#!/bin/sh
# installed by herdr
# managed by herdr; reinstalling or updating the integration overwrites this file.
# HERDR_INTEGRATION_ID=claude
# HERDR_INTEGRATION_VERSION=8
# Reports claude's session to the herdr pane it runs in; silent outside herdr.
[ "${1:-}" = "session" ] || exit 0
[ "${HERDR_ENV:-}" = "1" ] || exit 0
[ -n "${HERDR_SOCKET_PATH:-}" ] && [ -n "${HERDR_PANE_ID:-}" ] || exit 0
command -v python3 >/dev/null 2>&1 || exit 0
exec python3 -c '
import json, os, socket, sys
try:
    hook = json.load(sys.stdin)
except Exception:
    hook = {}
params = {"pane_id": os.environ["HERDR_PANE_ID"], "source": "herdr:claude", "agent": "claude"}
if isinstance(hook, dict):
    if hook.get("session_id"):
        params["agent_session_id"] = str(hook["session_id"])
    if hook.get("transcript_path"):
        params["agent_session_path"] = str(hook["transcript_path"])
    if hook.get("source"):
        params["session_start_source"] = str(hook["source"])
line = json.dumps({"id": "claude-hook", "method": "pane.report_agent_session", "params": params})
try:
    with socket.socket(socket.AF_UNIX) as conn:
        conn.settimeout(2)
        conn.connect(os.environ["HERDR_SOCKET_PATH"])
        conn.sendall(line.encode() + b"\n")
        conn.recv(65536)
except OSError:
    pass
'
"""
"""This library's hook script for claude (herdr's is its own; this one does the same job)."""
