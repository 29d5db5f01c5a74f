"""``integration.install`` / ``uninstall`` for every target herdr ships, inside a sandbox home.

Each target's steps are herdr's (herdrdev/herdr src/integration/targets.rs,
actions.rs, version.rs@1c76079f): the directory it must find, the files it
writes, the entries it adds or removes (the editors live in
``shedproto.herdr._integration_edits``), and its messages. Every path is
resolved and must lie inside the server's home: an override such as
``CODEX_HOME=/real/.codex`` that points outside is refused, so the reference
server never edits a user's real agent configuration. These functions do
blocking file I/O; the handlers run them in a worker thread.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from shedproto.herdr._integration_assets import (
    INTEGRATION_VERSIONS,
    hermes_plugin_files,
    hook_script,
    js_plugin,
    parse_integration_version,
)
from shedproto.herdr._integration_edits import (
    AGENT_DIR_NAMES,
    HERMES_PLUGIN_NAME,
    KIMI_MIN_VERSION,
    OPENCODE_TUI_PLUGIN_SPEC,
    agent_dir,
    codex_config_with_hooks,
    ensure_command_hook,
    ensure_direct_command_hook,
    ensure_flat_command_hook,
    ensure_hooks_object,
    ensure_simple_command_hook,
    hermes_plugin_enabled,
    hooks_object_if_present,
    json_pretty,
    jsonc_add_plugin,
    jsonc_check_plugin_list,
    jsonc_remove_plugin,
    kimi_config_with_hooks,
    kimi_config_without_block,
    parse_json,
    parse_version_triple,
    remove_direct_hook_commands,
    remove_flat_command_hook,
    remove_hook_commands,
    remove_simple_command_hook,
)
from shedproto.herdr._integrations import (
    CLAUDE_HOOK_NAME,
    CLAUDE_HOOK_SCRIPT,
    IntegrationError,
    claude_settings_install,
    claude_settings_uninstall,
    hook_command,
)

__all__ = ["install", "state", "uninstall"]

HOOK = "herdr-agent-state.sh"

# (event, action) tables from herdr's src/integration/mod.rs@1c76079f
CODEX_REMOVED = (("PermissionRequest", "blocked"), ("SessionStart", "idle"),
                 ("UserPromptSubmit", "working"), ("PreToolUse", "working"),
                 ("Stop", "idle"), ("SessionStart", "session"))  # fmt: skip
CODEX_UNINSTALL = (("SessionStart", "idle"), ("SessionStart", "session"),
                   ("UserPromptSubmit", "working"), ("PreToolUse", "working"),
                   ("PermissionRequest", "blocked"), ("Stop", "idle"))  # fmt: skip
COPILOT_EVENTS = ("SessionStart",)
COPILOT_REMOVED = ("UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
                   "Stop", "agentStop", "SessionEnd", "notification", "sessionStart")  # fmt: skip
DEVIN_EVENTS = tuple(
    (event, "session")
    for event in ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
                  "PermissionRequest", "Stop")
)  # fmt: skip
DEVIN_REMOVED = (("UserPromptSubmit", "working"), ("PreToolUse", "working"),
                 ("PostToolUse", "working"), ("PermissionRequest", "blocked"),
                 ("Stop", "idle"), ("SessionEnd", "release"))  # fmt: skip
DROID_EVENTS = (("SessionStart", "session"),)
DROID_REMOVED = (("SessionStart", "idle"), ("UserPromptSubmit", "working"),
                 ("PreToolUse", "working"), ("PostToolUse", "working"),
                 ("Notification", "blocked"), ("Stop", "idle"), ("SubagentStop", "working"),
                 ("PreCompact", "working"), ("SessionEnd", "release"))  # fmt: skip
QODERCLI_EVENTS = (("SessionStart", "session"),)
QODERCLI_REMOVED = (("SessionStart", "idle"), ("UserPromptSubmit", "working"),
                    ("PreToolUse", "working"), ("PostToolUse", "working"),
                    ("PostToolUseFailure", "working"), ("SubagentStart", "working"),
                    ("SubagentStop", "working"), ("PreCompact", "working"),
                    ("Notification", "blocked"), ("PermissionRequest", "blocked"),
                    ("Stop", "idle"), ("SessionEnd", "release"))  # fmt: skip
CURSOR_REMOVED = ("beforeSubmitPrompt", "beforeShellExecution", "beforeMCPExecution",
                  "stop", "sessionEnd")  # fmt: skip
MASTRACODE_EVENTS = (("SessionStart", "session"), ("UserPromptSubmit", "working"),
                     ("AgentStart", "working"), ("PreToolUse", "working"),
                     ("PermissionRequest", "blocked"), ("PermissionResult", "working"),
                     ("SubagentStart", "working"), ("SubagentEnd", "working"),
                     ("Interrupt", "idle"), ("AgentEnd", "idle"), ("Stop", "idle"))  # fmt: skip
MASTRACODE_REMOVED = (("SessionStart", "idle"), ("SessionEnd", "release"))

_MISSING = {
    "codex": "codex config directory not found at {}. install codex first",
    "kimi": "kimi code config directory not found at {}. install kimi code first",
    "copilot": "copilot config directory not found at {}. install github copilot cli first",
    "devin": "devin config directory not found at {}. install devin cli first",
    "droid": "droid config directory not found at {}. install droid first",
    "opencode": "opencode config directory not found at {}. install opencode first",
    "kilo": "kilo config directory not found at {}. install kilo first",
    "hermes": "hermes config directory not found at {}. install hermes agent first",
    "qodercli": "qodercli config directory not found at {}. install qodercli first",
    "qwen": "qwen code config directory not found at {}. install qwen code first",
    "cursor": "cursor config directory not found at {}. install cursor agent cli first",
    "antigravity_cli": (
        "antigravity cli config directory not found at {}. install antigravity cli first"
    ),
    "grok": "grok config directory not found at {}. install grok cli first",
}
"""herdr's message when an agent's config dir is missing (targets.rs)."""


class _Sandbox:
    """File access for one install or uninstall, confined to ``home``."""

    def __init__(self, environ: Mapping[str, str], home: str) -> None:
        self.environ = environ
        self.home = home
        self.root = Path(home).resolve()

    def inside(self, path: Path, what: str) -> Path:
        resolved = path.resolve()
        if not resolved.is_relative_to(self.root):
            raise IntegrationError(
                f"{what} ({resolved}) is outside the server's home ({self.home}): the "
                "reference server edits agent configuration only under its home"
            )
        return path

    def dir(self, target: str) -> Path:
        override = AGENT_DIR_NAMES.get(target, (None, ()))[0]
        names = {"pi": "PI_CODING_AGENT_DIR", "omp": "PI_CODING_AGENT_DIR or PI_CONFIG_DIR",
                 "devin": "XDG_CONFIG_HOME", "grok": "GROK_CONFIG_DIR or GROK_HOME"}  # fmt: skip
        what = names.get(target, override) or f"{target}'s config dir"
        return self.inside(Path(agent_dir(target, self.environ, self.home)), what)

    def existing_dir(self, target: str) -> Path:
        directory = self.dir(target)
        if not directory.is_dir():
            raise IntegrationError(_MISSING[target].format(directory))
        return directory

    def read(self, path: Path) -> str | None:
        self.inside(path, str(path))
        return path.read_text(encoding="utf-8") if path.is_file() else None

    def write(self, path: Path, text: str, *, executable: bool = False) -> None:
        self.inside(path.parent, str(path.parent))
        path.parent.mkdir(parents=True, exist_ok=True)
        self.inside(path, str(path))
        path.write_text(text, encoding="utf-8")
        if executable:
            path.chmod(0o755)

    def remove(self, path: Path) -> bool:
        self.inside(path.parent, str(path.parent))
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        return True

    def json(self, path: Path, default: Any) -> Any:
        text = self.read(path)
        return default if text is None else parse_json(text, str(path))


# -- the hook-and-settings targets (JSON hooks under "hooks") --


def _nested(
    box: _Sandbox,
    settings_path: Path,
    hook: Path,
    desc: str,
    *,
    removed: tuple[tuple[str, str | None], ...],
    events: tuple[tuple[str, str], ...],
    timeout: int,
    matcher: str | None,
) -> None:
    settings = box.json(settings_path, {})
    hooks = ensure_hooks_object(settings, str(settings_path), desc, f"{desc} hooks")
    for event, action in removed:
        remove_hook_commands(hooks, event, str(hook), action)
    for event, action in events:
        remove_hook_commands(hooks, event, str(hook), action)
    for event, action in events:
        ensure_command_hook(hooks, event, hook_command(str(hook), action), timeout, matcher)
    box.write(settings_path, json_pretty(settings))


def _nested_off(
    box: _Sandbox,
    settings_path: Path,
    hook: Path,
    desc: str,
    pairs: tuple[tuple[str, str | None], ...],
) -> bool:
    """Remove herdr's nested hooks for ``pairs``; rewrite the file only if any went."""
    settings = box.json(settings_path, None)
    if settings is None:
        return False
    hooks = hooks_object_if_present(settings, str(settings_path), desc, f"{desc} hooks")
    updated = False
    if hooks is not None:
        for event, action in pairs:
            updated |= remove_hook_commands(hooks, event, str(hook), action)
    if updated:
        box.write(settings_path, json_pretty(settings))
    return updated


def _hook_messages(
    label: str, hook: Path, removed: bool, path: Path, *, updated: bool, legacy: str = ""
) -> list[str]:
    return [
        f"removed {label} hook at {hook}" if removed else f"no {label} hook found at {hook}",
        f"removed {legacy}herdr {label} hook entries from {path}"
        if updated
        else f"no {legacy}herdr {label} hook entries found in {path}",
    ]


def _install_claude(box: _Sandbox) -> list[str]:
    directory = box.dir("claude")
    if not directory.is_dir():
        raise IntegrationError(
            f"claude directory not found at {directory}. install claude code first"
        )
    hook = directory / "hooks" / CLAUDE_HOOK_NAME
    box.write(hook, CLAUDE_HOOK_SCRIPT, executable=True)
    path = directory / "settings.json"
    text = box.read(path)
    settings = {} if text is None else parse_json(text, str(path))
    updated = claude_settings_install(settings, str(path), str(hook))
    if text is None or updated != settings:
        box.write(path, json.dumps(updated, indent=2) + "\n")
    return [f"installed claude integration hook to {hook}", f"ensured claude settings at {path}"]


def _uninstall_claude(box: _Sandbox) -> list[str]:
    directory = box.dir("claude")
    hook, path = directory / "hooks" / CLAUDE_HOOK_NAME, directory / "settings.json"
    changed = False
    settings = box.json(path, None)
    if settings is not None:
        updated, changed = claude_settings_uninstall(settings, str(path), str(hook))
        if changed:
            box.write(path, json.dumps(updated, indent=2) + "\n")
    return _hook_messages("claude", hook, box.remove(hook), path, updated=changed)


def _install_codex(box: _Sandbox) -> list[str]:
    directory = box.existing_dir("codex")
    hook, hooks_path = directory / HOOK, directory / "hooks.json"
    box.write(hook, hook_script("codex"), executable=True)
    _nested(box, hooks_path, hook, "codex hooks file", removed=CODEX_REMOVED,
            events=(("SessionStart", "session"),), timeout=10, matcher=None)  # fmt: skip
    config = directory / "config.toml"
    existing = box.read(config) or ""
    updated = codex_config_with_hooks(existing)
    if updated != existing:
        box.write(config, updated)
    return [f"installed codex integration hook to {hook}", f"ensured codex hooks at {hooks_path}",
            f"ensured codex config at {config}"]  # fmt: skip


def _uninstall_codex(box: _Sandbox) -> list[str]:
    directory = box.dir("codex")
    hook, hooks_path = directory / HOOK, directory / "hooks.json"
    updated = _nested_off(box, hooks_path, hook, "codex hooks file", CODEX_UNINSTALL)
    messages = _hook_messages("codex", hook, box.remove(hook), hooks_path, updated=updated)
    return [*messages, f"left codex config unchanged at {directory / 'config.toml'}"]


def _kimi_version(box: _Sandbox) -> str | None:
    """Herdr's version gate: ``kimi --version`` must be >= 0.14.0 (a warning if unknown)."""
    probe = "kimi --version"
    binary = shutil.which("kimi", path=box.environ.get("PATH"))
    output = None
    if binary is not None:
        try:
            done = subprocess.run(
                [binary, "--version"], capture_output=True, timeout=10, check=False,
                stdin=subprocess.DEVNULL, env=dict(box.environ),
            )  # fmt: skip
            output = done.stdout.decode(errors="replace") if done.returncode == 0 else None
        except (OSError, subprocess.TimeoutExpired):
            output = None
    if output is None:
        return (
            f"warning: could not run `{probe}` to verify the installed version; hooks require "
            f"kimi code {KIMI_MIN_VERSION} or newer"
        )
    found = parse_version_triple(output)
    if found is None:
        return (
            f"warning: could not parse the kimi code version from `{probe}` output; hooks "
            f"require kimi code kimi code {KIMI_MIN_VERSION} or newer"
        )
    if found < (0, 14, 0):
        version = ".".join(map(str, found))
        raise IntegrationError(
            f"kimi code {version} is too old: herdr hooks require kimi code {KIMI_MIN_VERSION}"
            " or newer. upgrade kimi code, then re-run install"
        )
    return None


def _install_kimi(box: _Sandbox) -> list[str]:
    warning = _kimi_version(box)
    directory = box.existing_dir("kimi")
    hook, config = directory / "hooks" / HOOK, directory / "config.toml"
    box.write(hook, hook_script("kimi"), executable=True)
    existing = box.read(config) or ""
    updated = kimi_config_with_hooks(existing, str(hook))
    if updated != existing:
        box.write(config, updated)
    messages = [f"installed kimi integration hook to {hook}", f"ensured kimi config at {config}",
                f"requires kimi code {KIMI_MIN_VERSION} or newer"]  # fmt: skip
    return messages if warning is None else [*messages, warning]


def _uninstall_kimi(box: _Sandbox) -> list[str]:
    directory = box.dir("kimi")
    hook, config = directory / "hooks" / HOOK, directory / "config.toml"
    existing = box.read(config)
    updated = False
    if existing is not None:
        new = kimi_config_without_block(existing)
        if new != existing:
            box.write(config, new)
            updated = True
    return _hook_messages("kimi", hook, box.remove(hook), config, updated=updated)


def _install_copilot(box: _Sandbox) -> list[str]:
    directory = box.existing_dir("copilot")
    hook, path = directory / "hooks" / HOOK, directory / "settings.json"
    box.write(hook, hook_script("copilot"), executable=True)
    settings = box.json(path, {})
    hooks = ensure_hooks_object(settings, str(path), "copilot settings", "copilot settings hooks")
    for event in (*COPILOT_REMOVED, *COPILOT_EVENTS):
        remove_direct_hook_commands(hooks, event, str(hook), None)
    for event in COPILOT_EVENTS:
        ensure_direct_command_hook(hooks, event, hook_command(str(hook), None), 10, None)
    box.write(path, json_pretty(settings))
    return [f"installed copilot integration hook to {hook}", f"ensured copilot settings at {path}"]


def _uninstall_copilot(box: _Sandbox) -> list[str]:
    directory = box.dir("copilot")
    hook, path = directory / "hooks" / HOOK, directory / "settings.json"
    updated = False
    settings = box.json(path, None)
    if settings is not None:
        hooks = hooks_object_if_present(
            settings, str(path), "copilot settings", "copilot settings hooks"
        )
        if hooks is not None:
            for event in (*COPILOT_EVENTS, *COPILOT_REMOVED):
                updated |= remove_direct_hook_commands(hooks, event, str(hook), None)
        if updated:
            box.write(path, json_pretty(settings))
    return _hook_messages("copilot", hook, box.remove(hook), path, updated=updated)


def _simple_nested(
    target: str, label: str, settings: str, *, in_hooks_dir: bool,
    removed: tuple[tuple[str, str], ...], events: tuple[tuple[str, str], ...],
    timeout: int, matcher: str | None, hook_name: str = HOOK,
) -> tuple[Callable[[_Sandbox], list[str]], Callable[[_Sandbox], list[str]]]:  # fmt: skip
    """Build install/uninstall for a target with one hook and one nested-hooks settings file."""
    desc = f"{target} settings"

    def paths(directory: Path) -> tuple[Path, Path]:
        hook = (directory / "hooks" if in_hooks_dir else directory) / hook_name
        return hook, directory / settings

    def install_it(box: _Sandbox) -> list[str]:
        hook, path = paths(box.existing_dir(target))
        box.write(hook, hook_script(target), executable=True)
        _nested(box, path, hook, desc, removed=removed, events=events, timeout=timeout,
                matcher=matcher)
        return [f"installed {label} integration hook to {hook}",
                f"ensured {label} settings at {path}"]  # fmt: skip

    def uninstall_it(box: _Sandbox) -> list[str]:
        hook, path = paths(box.dir(target))
        updated = _nested_off(box, path, hook, desc, (*removed, *events))
        return _hook_messages(label, hook, box.remove(hook), path, updated=updated)

    return install_it, uninstall_it


_install_devin, _uninstall_devin = _simple_nested(
    "devin", "devin", "config.json", in_hooks_dir=False, removed=DEVIN_REMOVED,
    events=DEVIN_EVENTS, timeout=10, matcher=None,
)  # fmt: skip
_install_qodercli, _uninstall_qodercli = _simple_nested(
    "qodercli", "qodercli", "settings.json", in_hooks_dir=True, removed=QODERCLI_REMOVED,
    events=QODERCLI_EVENTS, timeout=10, matcher="*",
)  # fmt: skip
_install_qwen, _uninstall_qwen = _simple_nested(
    "qwen", "qwen", "settings.json", in_hooks_dir=True, removed=(),
    events=(("SessionStart", "session"),), timeout=10_000, matcher="*",
    hook_name="herdr-agent-session.sh",
)  # fmt: skip


def _droid_strip(box: _Sandbox, path: Path, hook: Path, desc: str) -> bool:
    pairs: tuple[tuple[str, str | None], ...] = (
        ("SessionStart", None), *DROID_REMOVED, *DROID_EVENTS
    )
    return _nested_off(box, path, hook, desc, pairs)


def _install_droid(box: _Sandbox) -> list[str]:
    directory = box.existing_dir("droid")
    hook, path = directory / "hooks" / HOOK, directory / "settings.json"
    box.write(hook, hook_script("droid"), executable=True)
    _nested(box, path, hook, "droid settings", removed=(("SessionStart", None), *DROID_REMOVED),
            events=DROID_EVENTS, timeout=10, matcher=None)  # fmt: skip
    legacy = directory / "hooks.json"
    messages = [f"installed droid integration hook to {hook}", f"ensured droid hooks at {path}"]
    if _droid_strip(box, legacy, hook, "droid hooks file"):
        messages.append(f"removed legacy herdr droid hook entries from {legacy}")
    return messages


def _uninstall_droid(box: _Sandbox) -> list[str]:
    directory = box.dir("droid")
    hook, path = directory / "hooks" / HOOK, directory / "settings.json"
    legacy = directory / "hooks.json"
    legacy_updated = _droid_strip(box, legacy, hook, "droid hooks file")
    updated = _droid_strip(box, path, hook, "droid settings")
    removed = box.remove(hook)
    first = _hook_messages("droid", hook, removed, legacy, updated=legacy_updated, legacy="legacy ")
    return [*first, _hook_messages("droid", hook, removed, path, updated=updated)[1]]


def _install_cursor(box: _Sandbox) -> list[str]:
    directory = box.existing_dir("cursor")
    hook, path = directory / HOOK, directory / "hooks.json"
    box.write(hook, hook_script("cursor"), executable=True)
    data = box.json(path, {"version": 1})
    if not (isinstance(data, dict) and "version" in data):
        if not isinstance(data, dict):
            raise IntegrationError(f"cursor hooks file at {path} must be a JSON object")
        data["version"] = 1
    hooks = ensure_hooks_object(data, str(path), "cursor hooks file", "cursor hooks file hooks")
    command = hook_command(str(hook), "session")
    for event in CURSOR_REMOVED:
        remove_simple_command_hook(hooks, event, command)
    ensure_simple_command_hook(hooks, "sessionStart", command)
    box.write(path, json_pretty(data))
    return [f"installed cursor integration hook to {hook}", f"updated cursor hooks at {path}"]


def _uninstall_cursor(box: _Sandbox) -> list[str]:
    directory = box.dir("cursor")
    hook, path = directory / HOOK, directory / "hooks.json"
    updated = False
    data = box.json(path, None)
    if data is not None:
        hooks = hooks_object_if_present(data, str(path), "cursor hooks file",
                                        "cursor hooks file hooks")  # fmt: skip
        command = hook_command(str(hook), "session")
        if hooks is not None:
            for event in ("sessionStart", *CURSOR_REMOVED):
                updated |= remove_simple_command_hook(hooks, event, command)
        if updated:
            box.write(path, json_pretty(data))
    return _hook_messages("cursor", hook, box.remove(hook), path, updated=updated)


def _flat_root(box: _Sandbox, path: Path, label: str, default: Any) -> Any:
    data = box.json(path, default)
    if data is not None and not isinstance(data, dict):
        raise IntegrationError(f"{label} hooks file at {path} must be a JSON object")
    return data


def _install_mastracode(box: _Sandbox) -> list[str]:
    directory = box.dir("mastracode")  # herdr creates it: no "install first" check
    hook, path = directory / "hooks" / HOOK, directory / "hooks.json"
    box.write(hook, hook_script("mastracode"), executable=True)
    hooks = _flat_root(box, path, "mastracode", {})
    for event, action in MASTRACODE_REMOVED:
        remove_flat_command_hook(hooks, event, hook_command(str(hook), action))
    for event, action in MASTRACODE_EVENTS:
        command = hook_command(str(hook), action)
        remove_flat_command_hook(hooks, event, command)
        ensure_flat_command_hook(hooks, event, command, 10_000)
    box.write(path, json_pretty(hooks))
    return [f"installed mastracode integration hook to {hook}",
            f"ensured mastracode hooks at {path}"]  # fmt: skip


def _uninstall_mastracode(box: _Sandbox) -> list[str]:
    directory = box.dir("mastracode")
    hook, path = directory / "hooks" / HOOK, directory / "hooks.json"
    updated = False
    hooks = _flat_root(box, path, "mastracode", None)
    if hooks is not None:
        for event, action in (*MASTRACODE_EVENTS, *MASTRACODE_REMOVED):
            updated |= remove_flat_command_hook(hooks, event, hook_command(str(hook), action))
        if updated:
            box.write(path, json_pretty(hooks))
    return _hook_messages("mastracode", hook, box.remove(hook), path, updated=updated)


def _install_antigravity(box: _Sandbox) -> list[str]:
    directory = box.existing_dir("antigravity_cli")
    hook, path = directory / "hooks" / HOOK, directory / "hooks.json"
    box.write(hook, hook_script("antigravity_cli"), executable=True)
    root = _flat_root(box, path, "antigravity cli", {})
    handler = {"type": "command", "command": hook_command(str(hook), "session"), "timeout": 10}
    root["herdr"] = {"PreInvocation": [handler]}  # herdr owns this block outright
    box.write(path, json_pretty(root))
    return [f"installed antigravity-cli integration hook to {hook}",
            f"ensured antigravity-cli hooks at {path}"]  # fmt: skip


def _uninstall_antigravity(box: _Sandbox) -> list[str]:
    directory = box.dir("antigravity_cli")
    hook, path = directory / "hooks" / HOOK, directory / "hooks.json"
    root = _flat_root(box, path, "antigravity cli", None)
    updated = root is not None and "herdr" in root
    if updated:
        del root["herdr"]
        box.write(path, json_pretty(root))
    return _hook_messages("antigravity-cli", hook, box.remove(hook), path, updated=updated)


def _install_grok(box: _Sandbox) -> list[str]:
    directory = box.existing_dir("grok")
    hook, config = directory / "hooks" / HOOK, directory / "hooks" / "herdr.json"
    box.write(hook, hook_script("grok"), executable=True)
    quoted = hook_command(str(hook), "session").removeprefix("bash ")
    entry = {"hooks": [{"type": "command", "command": f"sh {quoted}", "timeout": 10}]}
    box.write(config, json_pretty({"hooks": {"SessionStart": [entry]}}))
    return [f"installed grok integration hook to {hook}",
            f"registered grok hook config at {config}"]  # fmt: skip


def _uninstall_grok(box: _Sandbox) -> list[str]:
    hooks = box.dir("grok") / "hooks"
    hook, config = hooks / HOOK, hooks / "herdr.json"
    removed_config, removed_hook = box.remove(config), box.remove(hook)
    return [
        f"removed grok hook at {hook}" if removed_hook else f"no grok hook found at {hook}",
        f"removed grok hook config at {config}"
        if removed_config
        else f"no grok hook config found at {config}",
    ]


# -- the plugin/extension targets --


def _extension_dir(box: _Sandbox, target: str) -> Path:
    directory = box.dir(target)
    if not directory.is_dir():
        if not directory.parent.is_dir():
            raise IntegrationError(
                f"{target} extension directory not found at {directory}. install {target} first"
            )
        directory.mkdir(parents=True)
    return directory


def _install_pi(box: _Sandbox) -> list[str]:
    path = _extension_dir(box, "pi") / "herdr-agent-state.ts"
    box.write(path, js_plugin("pi", typescript=True))
    return [f"installed pi integration to {path}"]


def _install_omp(box: _Sandbox) -> list[str]:
    directory = box.dir("omp")
    if directory == box.dir("pi"):
        raise IntegrationError(
            f"Pi and OMP resolve to the same extension directory at {directory}; configure "
            "separate agent directories before installing OMP"
        )
    _extension_dir(box, "omp")
    messages = []
    legacy = directory / "herdr-agent-state.ts"
    text = box.read(legacy)
    if text is not None and "HERDR_INTEGRATION_ID=pi" in text:
        box.remove(legacy)
        messages.append(
            f"removed legacy pi integration from omp extension directory at {legacy}"
        )
    path = directory / "herdr-omp-agent-state.ts"
    box.write(path, js_plugin("omp", typescript=True))
    return [*messages, f"installed omp integration to {path}"]


def _uninstall_extension(target: str, name: str) -> Callable[[_Sandbox], list[str]]:
    def uninstall_it(box: _Sandbox) -> list[str]:
        path = box.dir(target) / name
        if box.remove(path):
            return [f"removed {target} integration extension at {path}"]
        return [f"no {target} integration extension found at {path}"]

    return uninstall_it


def _install_opencode(box: _Sandbox) -> list[str]:
    directory = box.existing_dir("opencode")
    config = directory / "tui.jsonc"
    text = box.read(config)
    if text is not None:
        jsonc_check_plugin_list(text, str(config))
    plugin = directory / "plugins" / "herdr-agent-state.js"
    tui = directory / "herdr-tui-session.js"
    box.write(plugin, js_plugin("opencode"))
    box.write(tui, js_plugin("opencode", marker="opencode-tui"))
    updated = jsonc_add_plugin(text if text is not None else "{}\n", str(config),
                               OPENCODE_TUI_PLUGIN_SPEC)  # fmt: skip
    if updated is not None:
        box.write(config, updated)
    return [f"installed opencode integration plugin to {plugin}",
            f"installed opencode tui integration plugin to {tui}",
            f"ensured opencode tui plugin config at {config}"]  # fmt: skip


def _uninstall_opencode(box: _Sandbox) -> list[str]:
    directory = box.dir("opencode")
    config = directory / "tui.jsonc"
    plugin = directory / "plugins" / "herdr-agent-state.js"
    tui = directory / "herdr-tui-session.js"
    errors: list[str] = []
    updated = False
    try:
        text = box.read(config)
        new = None if text is None else jsonc_remove_plugin(text, str(config),
                                                            OPENCODE_TUI_PLUGIN_SPEC)  # fmt: skip
        if new is not None:
            box.write(config, new)
            updated = True
    except (OSError, IntegrationError) as exc:
        errors.append(str(exc))
    removed: list[bool] = []
    for path in (plugin, tui):
        try:
            removed.append(box.remove(path))
        except OSError as exc:
            errors.append(f"failed to remove {path}: {exc}")
            removed.append(False)
    if errors:
        raise IntegrationError("; ".join(errors))
    messages = [
        f"removed opencode integration plugin at {plugin}" if removed[0]
        else f"no opencode integration plugin found at {plugin}",
        f"removed opencode tui integration plugin at {tui}" if removed[1]
        else f"no opencode tui integration plugin found at {tui}",
    ]  # fmt: skip
    if updated:
        messages.append(f"removed herdr opencode plugin entry from {config}")
    return messages


def _install_kilo(box: _Sandbox) -> list[str]:
    path = box.existing_dir("kilo") / "plugin" / "herdr-agent-state.js"
    box.write(path, js_plugin("kilo"))
    return [f"installed kilo integration plugin to {path}"]


def _uninstall_kilo(box: _Sandbox) -> list[str]:
    path = box.dir("kilo") / "plugin" / "herdr-agent-state.js"
    if box.remove(path):
        return [f"removed kilo integration plugin at {path}"]
    return [f"no kilo integration plugin found at {path}"]


def _install_hermes(box: _Sandbox) -> list[str]:
    directory = box.existing_dir("hermes")
    plugin_dir = directory / "plugins" / HERMES_PLUGIN_NAME
    for name, text in hermes_plugin_files().items():
        box.write(plugin_dir / name, text)
    config = directory / "config.yaml"
    existing = box.read(config) or ""
    updated = hermes_plugin_enabled(existing, True)
    if updated != existing:
        box.write(config, updated)
    return [f"installed hermes integration plugin to {plugin_dir}",
            f"enabled hermes plugin in {config}"]  # fmt: skip


def _uninstall_hermes(box: _Sandbox) -> list[str]:
    directory = box.dir("hermes")
    plugin_dir = box.inside(directory / "plugins" / HERMES_PLUGIN_NAME, "the hermes plugin dir")
    removed = plugin_dir.is_dir() and not plugin_dir.is_symlink()
    if removed:
        shutil.rmtree(plugin_dir)
    config = directory / "config.yaml"
    existing = box.read(config)
    updated = False
    if existing is not None:
        new = hermes_plugin_enabled(existing, False)
        if new != existing:
            box.write(config, new)
            updated = True
    return [
        f"removed hermes integration plugin at {plugin_dir}" if removed
        else f"no hermes integration plugin found at {plugin_dir}",
        f"disabled hermes plugin in {config}" if updated
        else f"no hermes plugin entry found in {config}",
    ]  # fmt: skip


_INSTALL: dict[str, Callable[[_Sandbox], list[str]]] = {
    "pi": _install_pi, "omp": _install_omp, "claude": _install_claude, "codex": _install_codex,
    "kimi": _install_kimi, "copilot": _install_copilot, "devin": _install_devin,
    "droid": _install_droid, "opencode": _install_opencode, "kilo": _install_kilo,
    "hermes": _install_hermes, "qodercli": _install_qodercli, "qwen": _install_qwen,
    "cursor": _install_cursor, "mastracode": _install_mastracode,
    "antigravity_cli": _install_antigravity, "grok": _install_grok,
}  # fmt: skip
_UNINSTALL: dict[str, Callable[[_Sandbox], list[str]]] = {
    "pi": _uninstall_extension("pi", "herdr-agent-state.ts"),
    "omp": _uninstall_extension("omp", "herdr-omp-agent-state.ts"),
    "claude": _uninstall_claude, "codex": _uninstall_codex, "kimi": _uninstall_kimi,
    "copilot": _uninstall_copilot, "devin": _uninstall_devin, "droid": _uninstall_droid,
    "opencode": _uninstall_opencode, "kilo": _uninstall_kilo, "hermes": _uninstall_hermes,
    "qodercli": _uninstall_qodercli, "qwen": _uninstall_qwen, "cursor": _uninstall_cursor,
    "mastracode": _uninstall_mastracode, "antigravity_cli": _uninstall_antigravity,
    "grok": _uninstall_grok,
}  # fmt: skip
TARGETS = frozenset(_INSTALL)
"""The targets herdr installs on Linux and macOS."""


def install(target: str, environ: Mapping[str, str], home: str) -> list[str]:
    """Install herdr's ``target`` integration under ``home``; return herdr's messages.

    Raises:
        IntegrationError: herdr's refusal (missing agent dir, malformed config,
            a config dir outside ``home``).
        OSError: a file could not be read or written.
        KeyError: ``target`` is not one herdr installs.

    """
    return _INSTALL[target](_Sandbox(environ, home))


def uninstall(target: str, environ: Mapping[str, str], home: str) -> list[str]:
    """Remove only what herdr's ``target`` integration added under ``home``; herdr's messages.

    Raises:
        IntegrationError: herdr's refusal (malformed config, a dir outside ``home``).
        OSError: a file could not be read or written.
        KeyError: ``target`` is not one herdr installs.

    """
    return _UNINSTALL[target](_Sandbox(environ, home))


_STATUS_FILES: dict[str, str] = {
    "pi": "herdr-agent-state.ts", "omp": "herdr-omp-agent-state.ts",
    "claude": f"hooks/{CLAUDE_HOOK_NAME}", "codex": HOOK, "copilot": f"hooks/{HOOK}",
    "devin": HOOK, "droid": f"hooks/{HOOK}", "kimi": f"hooks/{HOOK}",
    "opencode": "plugins/herdr-agent-state.js", "kilo": "plugin/herdr-agent-state.js",
    "hermes": f"plugins/{HERMES_PLUGIN_NAME}/__init__.py", "qodercli": f"hooks/{HOOK}",
    "qwen": "hooks/herdr-agent-session.sh", "cursor": HOOK, "mastracode": f"hooks/{HOOK}",
    "antigravity_cli": f"hooks/{HOOK}", "grok": f"hooks/{HOOK}",
}  # fmt: skip
"""The file whose version marker says a target is installed (registry.rs integration_specs)."""


def _version_of(path: Path) -> int | None:
    try:
        return parse_integration_version(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None


def state(target: str, environ: Mapping[str, str], home: str) -> str:
    """Return herdr's ``not_installed`` / ``current`` / ``outdated`` for ``target`` under ``home``.

    A marker older than herdr's version is ``outdated``; so is a grok hook whose
    ``herdr.json`` is not herdr's, or an opencode plugin whose TUI half is missing
    (registry.rs integration_status_at). A dir outside ``home`` counts as not installed.
    """
    box = _Sandbox(environ, home)
    try:
        directory = box.dir(target)
    except IntegrationError:
        return "not_installed"
    path = directory / _STATUS_FILES[target]
    if not path.is_file():
        return "not_installed"
    version = _version_of(path)
    if version is None or version < INTEGRATION_VERSIONS[target]:
        return "outdated"
    if target == "grok":
        config = path.parent / "herdr.json"
        quoted = hook_command(str(path), "session").removeprefix("bash ")
        entry = {"hooks": [{"type": "command", "command": f"sh {quoted}", "timeout": 10}]}
        try:
            valid = json.loads(config.read_text(encoding="utf-8")) == {
                "hooks": {"SessionStart": [entry]}
            }
        except (OSError, ValueError):
            valid = False
        return "current" if valid else "outdated"
    if target == "opencode":
        tui = directory / "herdr-tui-session.js"
        config = directory / "tui.jsonc"
        tui_version = _version_of(tui)
        try:
            listed = jsonc_add_plugin(
                config.read_text(encoding="utf-8"), str(config), OPENCODE_TUI_PLUGIN_SPEC
            ) is None
        except (OSError, IntegrationError):
            listed = False
        current = tui_version is not None and tui_version >= INTEGRATION_VERSIONS[target]
        return "current" if current and listed else "outdated"
    return "current"
