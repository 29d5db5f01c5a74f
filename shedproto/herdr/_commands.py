"""herdr's custom commands (``[[keys.command]]`` in ``config.toml``), as pure functions.

A custom command is a key binding that runs ``command`` one of four ways
(``type``): ``shell`` (detached ``/bin/sh -lc <command>``, no terminal),
``pane`` (a new zoomed pane beside the focused one running ``/bin/sh -c
<command>``), ``popup`` (the same in herdr's popup) or ``plugin_action``
(``command`` names a plugin action). herdr hands clients an opaque id per
command (``cmd_<namespace>_<index>``, a fresh namespace each time the config
is loaded) and ``command.invoke`` runs the command behind an id; an id from an
older load answers ``command_not_found``
(herdrdev/herdr src/config/keybinds.rs:78-125,740-795@1c76079f;
src/app/commands.rs ``handle_command_invoke`` and ``custom_command_env`` in
the 0.9.x source the search index stores).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "COMMAND_ACTIONS",
    "CustomCommand",
    "command_id",
    "custom_command_env",
    "parse_custom_commands",
]

CommandAction = Literal["shell", "pane", "popup", "plugin_action"]
COMMAND_ACTIONS: tuple[CommandAction, ...] = ("shell", "pane", "popup", "plugin_action")
"""The ``type`` values herdr accepts (``shell`` when absent)."""


@dataclass(frozen=True)
class CustomCommand:
    """One usable ``[[keys.command]]`` entry."""

    command: str
    action: CommandAction
    label: str
    labels: tuple[str, ...]
    description: str | None = None
    width: int | str | None = None
    height: int | str | None = None


def command_id(namespace: str, index: int) -> str:
    """Return herdr's opaque command id for entry ``index`` of one config load."""
    return f"cmd_{namespace}_{index}"


def _keys(value: Any) -> tuple[str, ...]:
    values = value if isinstance(value, list) else [value]
    return tuple(v.strip() for v in values if isinstance(v, str) and v.strip())


def _size(value: Any) -> int | str | None:
    """Return a popup size (cells, or ``"NN%"``), None when absent or not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value > 0:
        return value
    if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit():
        return value if 0 < int(value[:-1]) <= 100 else None
    return None


def parse_custom_commands(config: Mapping[str, Any]) -> tuple[list[CustomCommand], list[str]]:
    """Return the usable custom commands of a parsed ``config.toml`` and herdr's diagnostics.

    An entry with an empty command, no usable key, or an unknown ``type`` is
    skipped with a diagnostic naming its field; a popup size on another type is
    ignored with herdr's diagnostic. Key strings are taken as written (herdr's
    key grammar and conflict rules are not checked here).
    """
    keys = config.get("keys")
    entries = keys.get("command", []) if isinstance(keys, Mapping) else []
    if not isinstance(entries, list):
        return [], ["invalid keys.command: expected an array of tables; ignoring custom commands"]
    commands: list[CustomCommand] = []
    diagnostics: list[str] = []
    for index, entry in enumerate(entries):
        where = f"keys.command[{index}]"
        if not isinstance(entry, Mapping):
            diagnostics.append(f"invalid custom command: {where}; disabling custom command")
            continue
        command = entry.get("command", "")
        if not isinstance(command, str) or not command.strip():
            diagnostics.append(
                f"empty custom command: {where}.command; disabling custom command"
            )
            continue
        labels = _keys(entry.get("key", ""))
        if not labels:
            diagnostics.append(f"missing key for custom command: {where}.key; disabling it")
            continue
        action = entry.get("type", "shell")
        if action not in COMMAND_ACTIONS:
            diagnostics.append(f"unknown custom command type: {where}.type = {action!r}")
            continue
        width, height = _size(entry.get("width")), _size(entry.get("height"))
        if action != "popup":
            if "width" in entry or "height" in entry:
                diagnostics.append(
                    f"popup size on non-popup custom command: {where}; ignoring width and height"
                )
            width = height = None
        description = entry.get("description")
        commands.append(
            CustomCommand(
                command=command, action=action, label=" / ".join(labels), labels=labels,
                description=description if isinstance(description, str) else None,
                width=width, height=height,
            )
        )  # fmt: skip
    return commands, diagnostics


def custom_command_env(
    socket_path: str,
    *,
    workspace_id: str | None,
    tab_id: str | None,
    pane_id: str | None,
    pane_cwd: str | None,
    bin_path: str | None = None,
) -> dict[str, str]:
    """Return the variables herdr adds to a custom command's environment."""
    values = {
        "HERDR_SOCKET_PATH": socket_path, "HERDR_BIN_PATH": bin_path or None,
        "HERDR_ACTIVE_WORKSPACE_ID": workspace_id, "HERDR_ACTIVE_TAB_ID": tab_id,
        "HERDR_ACTIVE_PANE_ID": pane_id, "HERDR_ACTIVE_PANE_CWD": pane_cwd,
    }  # fmt: skip
    return {name: value for name, value in values.items() if value is not None}
