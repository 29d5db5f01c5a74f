"""herdr's integration config edits for every target, as pure functions.

Each function takes a parsed document or a file's text and returns the edited
one; nothing here reads or writes files. The rules are herdr's
(herdrdev/herdr src/integration/config_edit.rs, opencode_config.rs, env.rs,
command.rs, mod.rs@1c76079f): which events carry herdr's hook, in which of the
agents' three JSON hook shapes, how a re-install leaves exactly one entry, how
uninstall removes only the commands herdr wrote (and, as herdr, drops a hook
group or an event left empty), and the line-based TOML/YAML edits for codex,
kimi and hermes, which keep the user's text byte for byte.

JSON files herdr rewrites come out as ``serde_json::to_string_pretty`` writes
them (:func:`json_pretty`): two-space indent, keys sorted (herdr's serde_json
has no ``preserve_order``), no trailing newline. OpenCode's ``tui.jsonc`` is
edited in place so its comments survive (:func:`jsonc_add_plugin`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._integrations import IntegrationError, hook_command

__all__ = [
    "AGENT_DIR_NAMES",
    "HERMES_PLUGIN_NAME",
    "KIMI_BLOCK_BEGIN",
    "KIMI_BLOCK_END",
    "KIMI_HOOK_EVENTS",
    "KIMI_MIN_VERSION",
    "OPENCODE_TUI_PLUGIN_SPEC",
    "agent_dir",
    "codex_config_with_hooks",
    "ensure_command_hook",
    "ensure_direct_command_hook",
    "ensure_flat_command_hook",
    "ensure_hooks_object",
    "ensure_simple_command_hook",
    "hermes_plugin_enabled",
    "hooks_object_if_present",
    "json_pretty",
    "jsonc_add_plugin",
    "jsonc_check_plugin_list",
    "jsonc_remove_plugin",
    "kimi_config_with_hooks",
    "kimi_config_without_block",
    "parse_json",
    "parse_version_triple",
    "remove_direct_hook_commands",
    "remove_flat_command_hook",
    "remove_hook_commands",
    "remove_simple_command_hook",
]

# -- where each agent keeps its configuration (herdr src/integration/env.rs) --

AGENT_DIR_NAMES: dict[str, tuple[str | None, tuple[str, ...]]] = {
    "pi": ("PI_CODING_AGENT_DIR", (".pi", "agent")),
    "claude": ("CLAUDE_CONFIG_DIR", (".claude",)),
    "codex": ("CODEX_HOME", (".codex",)),
    "kimi": ("KIMI_CODE_HOME", (".kimi-code",)),
    "copilot": ("COPILOT_HOME", (".copilot",)),
    "droid": (None, (".factory",)),
    "opencode": (None, (".config", "opencode")),
    "kilo": (None, (".config", "kilo")),
    "hermes": ("HERMES_HOME", (".hermes",)),
    "qodercli": ("QODER_CONFIG_DIR", (".qoder",)),
    "qwen": ("QWEN_HOME", (".qwen",)),
    "cursor": ("CURSOR_CONFIG_DIR", (".cursor",)),
    "mastracode": (None, (".mastracode",)),
    "antigravity_cli": ("ANTIGRAVITY_CLI_CONFIG_DIR", (".gemini", "config")),
}
"""Target -> (the env var that overrides its dir, the dir's segments under home)."""

HERMES_PLUGIN_NAME = "herdr-agent-state"
OPENCODE_TUI_PLUGIN_SPEC = "./herdr-tui-session.js"
KIMI_BLOCK_BEGIN = "# >>> herdr kimi integration"
KIMI_BLOCK_END = "# <<< herdr kimi integration"
KIMI_MIN_VERSION = "0.14.0"
_KIMI_ASK = "^AskUserQuestion$"
_KIMI_OTHER = "^(?!AskUserQuestion$).*$"
KIMI_HOOK_EVENTS: tuple[tuple[str, str | None, str], ...] = (
    ("SessionStart", None, "session"), ("UserPromptSubmit", None, "working"),
    ("PreToolUse", _KIMI_OTHER, "working"), ("PreToolUse", _KIMI_ASK, "blocked"),
    ("PostToolUse", _KIMI_ASK, "working"), ("PostToolUseFailure", _KIMI_ASK, "working"),
    ("SubagentStart", None, "working"), ("PreCompact", None, "working"),
    ("PermissionRequest", None, "blocked"), ("PermissionResult", None, "working"),
    ("Stop", None, "idle"), ("Interrupt", None, "idle"),
)  # fmt: skip
"""Kimi's ``[[hooks]]`` tables herdr writes: (event, matcher, action)."""


def _expand(value: str, home: str) -> str:
    home = home.rstrip("/") or "/"
    if value == "~":
        return home
    if value.startswith("~"):
        return f"{home}/{value[1:].lstrip('/')}"
    return value


def _join(base: str, *parts: str) -> str:
    path = base
    for part in parts:
        path = part if part.startswith("/") else f"{path.rstrip('/')}/{part}"
    return path


def agent_dir(target: str, env: Mapping[str, str], home: str) -> str:
    """Return the directory herdr edits for ``target`` (herdr's env var rules).

    ``~`` in an override means ``home``. For pi and omp this is the
    extensions directory; for hermes its config dir; for grok its config home.

    Raises:
        KeyError: ``target`` is not one herdr installs.

    """

    def override(name: str) -> str | None:
        value = env.get(name, "")
        return _expand(value, home) if value else None

    if target in ("pi", "omp"):
        agent = override("PI_CODING_AGENT_DIR")
        if agent is not None:
            return _join(agent, "extensions")
        if target == "pi":
            return _join(home, ".pi", "agent", "extensions")
        return _join(home, env.get("PI_CONFIG_DIR", "") or ".omp", "agent", "extensions")
    if target == "devin":
        xdg = override("XDG_CONFIG_HOME")
        return _join(xdg, "devin") if xdg is not None else _join(home, ".config", "devin")
    if target == "grok":
        for var in ("GROK_CONFIG_DIR", "GROK_HOME"):
            grok = override(var)
            if grok is not None:
                return grok
        return _join(home, ".grok")
    name, segments = AGENT_DIR_NAMES[target]
    found = override(name) if name else None
    return found if found is not None else _join(home, *segments)


# -- JSON documents --


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json(text: str, path: str) -> Any:
    """Parse a JSON config file as herdr does (strict JSON, no NaN).

    Raises:
        IntegrationError: ``failed to parse <path>: <reason>`` (herdr's message).

    """
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise IntegrationError(
            f"failed to parse {path}: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except ValueError as exc:
        raise IntegrationError(f"failed to parse {path}: {exc}") from None


def json_pretty(value: Any) -> str:
    """Return ``value`` as ``serde_json::to_string_pretty`` writes it (sorted keys)."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def ensure_hooks_object(root: Any, path: str, root_desc: str, hooks_desc: str) -> dict[str, Any]:
    """Return ``root["hooks"]``, created empty when missing.

    Raises:
        IntegrationError: ``<root_desc> at <path> must be a JSON object`` or the same
            for ``hooks``.

    """
    if not isinstance(root, dict):
        raise IntegrationError(f"{root_desc} at {path} must be a JSON object")
    hooks = root.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise IntegrationError(f"{hooks_desc} at {path} must be a JSON object")
    return hooks


def hooks_object_if_present(
    root: Any, path: str, root_desc: str, hooks_desc: str
) -> dict[str, Any] | None:
    """Return ``root["hooks"]`` or None when absent (same errors as ensure_hooks_object)."""
    if not isinstance(root, dict):
        raise IntegrationError(f"{root_desc} at {path} must be a JSON object")
    if "hooks" not in root:
        return None
    hooks = root["hooks"]
    if not isinstance(hooks, dict):
        raise IntegrationError(f"{hooks_desc} at {path} must be a JSON object")
    return hooks


def _entries(hooks: dict[str, Any], event: str, *, create: bool) -> list[Any] | None:
    if event not in hooks:
        if not create:
            return None
        hooks[event] = []
    entries = hooks[event]
    if not isinstance(entries, list):
        raise IntegrationError(f"hook entries for {event} must be an array")
    return entries


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def _is_command(hook: Any, command: str) -> bool:
    return bool(_get(hook, "type") == "command" and _get(hook, "command") == command)


def ensure_command_hook(
    hooks: dict[str, Any], event: str, command: str, timeout: int, matcher: str | None
) -> None:
    """Add ``{matcher?, hooks: [{type: command, command, timeout}]}`` unless one holds it.

    Raises:
        IntegrationError: the event's entries are not an array.

    """
    entries = _entries(hooks, event, create=True)
    assert entries is not None
    for entry in entries:
        inner = _get(entry, "hooks")
        if isinstance(inner, list) and any(_is_command(hook, command) for hook in inner):
            return
    new: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
    new["hooks"] = [{"type": "command", "command": command, "timeout": timeout}]
    entries.append(new)


def ensure_flat_command_hook(
    hooks: dict[str, Any], event: str, command: str, timeout_ms: int
) -> None:
    """Add mastracode's flat ``{type, command, timeout, description}`` entry once."""
    entries = _entries(hooks, event, create=True)
    assert entries is not None
    if any(_is_command(entry, command) for entry in entries):
        return
    entries.append(
        {
            "type": "command",
            "command": command,
            "timeout": timeout_ms,
            "description": "Report MastraCode agent state to Herdr",
        }
    )


def _direct_matches(entry: Any, command: str) -> bool:
    return any(_get(entry, field) == command for field in ("command", "bash", "powershell"))


def ensure_direct_command_hook(
    hooks: dict[str, Any], event: str, command: str, timeout_sec: int, matcher: str | None
) -> None:
    """Add or refresh copilot's ``{type, bash, timeoutSec}`` entry for ``command``."""
    entries = _entries(hooks, event, create=True)
    assert entries is not None
    for entry in entries:
        if _get(entry, "type") == "command" and _direct_matches(entry, command):
            for field in ("command", "bash", "powershell"):
                entry.pop(field, None)
            entry["bash"] = command
            entry["timeoutSec"] = timeout_sec
            if matcher is None:
                entry.pop("matcher", None)
            else:
                entry["matcher"] = matcher
            return
    new: dict[str, Any] = {"type": "command"}
    if matcher is not None:
        new["matcher"] = matcher
    new["bash"] = command
    new["timeoutSec"] = timeout_sec
    entries.append(new)


def ensure_simple_command_hook(hooks: dict[str, Any], event: str, command: str) -> None:
    """Add cursor's minimal ``{command}`` entry once."""
    entries = _entries(hooks, event, create=True)
    assert entries is not None
    if not any(_get(entry, "command") == command for entry in entries):
        entries.append({"command": command})


def _drop_if_empty(hooks: dict[str, Any], event: str, entries: list[Any]) -> None:
    if not entries:
        del hooks[event]


def _remove_nested(hooks: dict[str, Any], event: str, command: str) -> bool:
    entries = _entries(hooks, event, create=False)
    if entries is None:
        return False
    removed = False
    kept: list[Any] = []
    for entry in entries:
        inner = _get(entry, "hooks")
        if not isinstance(inner, list):
            kept.append(entry)
            continue
        left = [hook for hook in inner if not _is_command(hook, command)]
        removed |= len(left) != len(inner)
        entry["hooks"] = left
        if left:  # herdr drops a group left empty (even one that was empty before)
            kept.append(entry)
    entries[:] = kept
    _drop_if_empty(hooks, event, entries)
    return removed


def remove_hook_commands(
    hooks: dict[str, Any], event: str, hook_path: str, action: str | None
) -> bool:
    """Remove herdr's nested command hooks for ``action`` from ``event``; True if any went.

    Raises:
        IntegrationError: the event's entries are not an array.

    """
    return _remove_nested(hooks, event, hook_command(hook_path, action))


def _remove_where(hooks: dict[str, Any], event: str, match: Any) -> bool:
    entries = _entries(hooks, event, create=False)
    if entries is None:
        return False
    before = len(entries)
    entries[:] = [entry for entry in entries if not match(entry)]
    _drop_if_empty(hooks, event, entries)
    return len(entries) != before


def remove_direct_hook_commands(
    hooks: dict[str, Any], event: str, hook_path: str, action: str | None
) -> bool:
    """Remove copilot-shaped entries running herdr's hook from ``event``."""
    command = hook_command(hook_path, action)
    return _remove_where(
        hooks, event, lambda e: _get(e, "type") == "command" and _direct_matches(e, command)
    )


def remove_flat_command_hook(hooks: dict[str, Any], event: str, command: str) -> bool:
    """Remove mastracode-shaped entries running ``command`` from ``event``."""
    return _remove_where(hooks, event, lambda e: _is_command(e, command))


def remove_simple_command_hook(hooks: dict[str, Any], event: str, command: str) -> bool:
    """Remove cursor-shaped entries running ``command`` from ``event``."""
    return _remove_where(hooks, event, lambda e: _get(e, "command") == command)


# -- TOML text (codex, kimi) --


def _join_lines(lines: list[str], trailing_newline: bool) -> str:
    text = "\n".join(lines)
    if trailing_newline or not text:
        text += "\n"
    return text


def _lines(text: str) -> list[str]:
    r"""Split as Rust's ``str::lines`` (``\\n``, ``\\r\\n``; no empty last line)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _toml_header(line: str) -> str | None:
    trimmed = line.lstrip()
    if trimmed.startswith("#") or not trimmed.startswith("["):
        return None
    end = trimmed.find("]]") + 2 if trimmed.startswith("[[") else trimmed.find("]") + 1
    if end <= (1 if trimmed.startswith("[[") else 0):
        return None
    rest = trimmed[end:].lstrip()
    if rest and not rest.startswith("#"):
        return None
    return trimmed[:end]


def _is_toml_key(line: str, key: str) -> bool:
    trimmed = line.strip()
    if trimmed.startswith("#") or not trimmed.startswith(key):
        return False
    return trimmed[len(key) :].lstrip().startswith("=")


def codex_config_with_hooks(content: str) -> str:
    """Return codex's ``config.toml`` with ``[features] hooks = true`` (old key dropped)."""
    lines = _lines(content)
    trailing = content.endswith("\n")
    in_features = False
    header_index: int | None = None
    hooks_index: int | None = None
    deprecated: list[int] = []
    for index, line in enumerate(lines):
        header = _toml_header(line)
        if header is not None:
            in_features = header == "[features]"
            if in_features and header_index is None:
                header_index = index
            continue
        if not in_features:
            continue
        if _is_toml_key(line, "codex_hooks"):
            deprecated.append(index)
        elif _is_toml_key(line, "hooks"):
            hooks_index = index
    if hooks_index is not None:
        lines[hooks_index] = "hooks = true"
    for index in reversed(deprecated):
        del lines[index]
    if hooks_index is None:
        if header_index is not None:
            lines.insert(header_index + 1, "hooks = true")
            return _join_lines(lines, trailing)
        result = content.rstrip("\n")
        if result:
            result += "\n\n"
        return result + "[features]\nhooks = true\n"
    return _join_lines(lines, trailing)


def _toml_string(value: str) -> str:
    out = ['"']
    escapes = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n",
               "\f": "\\f", "\r": "\\r"}  # fmt: skip
    for ch in value:
        if ch in escapes:
            out.append(escapes[ch])
        elif ch <= "\x1f" or ch == "\x7f":
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def kimi_config_without_block(content: str) -> str:
    """Return kimi's ``config.toml`` without herdr's marked block (unchanged if none)."""
    kept: list[str] = []
    in_block = removed = False
    for line in _lines(content):
        if line.strip() == KIMI_BLOCK_BEGIN:
            in_block = removed = True
            continue
        if in_block:
            if line.strip() == KIMI_BLOCK_END:
                in_block = False
            continue
        kept.append(line)
    if not removed:
        return content
    result = _join_lines(kept, content.endswith("\n"))
    while result.endswith("\n\n"):
        result = result[:-1]
    return "" if result == "\n" else result


def kimi_config_with_hooks(content: str, hook_path: str) -> str:
    """Return kimi's ``config.toml`` with herdr's block (replacing any older one) at the end."""
    result = kimi_config_without_block(content).rstrip("\n")
    if result:
        result += "\n\n"
    result += KIMI_BLOCK_BEGIN + "\n"
    for event, matcher, action in KIMI_HOOK_EVENTS:
        result += f"[[hooks]]\nevent = {_toml_string(event)}\n"
        if matcher is not None:
            result += f"matcher = {_toml_string(matcher)}\n"
        result += f"command = {_toml_string(hook_command(hook_path, action))}\ntimeout = 10\n\n"
    return result + KIMI_BLOCK_END + "\n"


def parse_version_triple(text: str) -> tuple[int, int, int] | None:
    """Return the first ``[v]MAJOR.MINOR[.PATCH]`` among ``text``'s words (herdr's rule)."""
    for token in text.split():
        parts = token.lstrip("v").split(".", 2)
        if len(parts) < 2 or not (parts[0].isdigit() and parts[1].isdigit()):
            continue
        digits = ""
        if len(parts) == 3:
            for ch in parts[2]:
                if not ch.isdigit():
                    break
                digits += ch
        return int(parts[0]), int(parts[1]), int(digits) if digits else 0
    return None


# -- YAML text (hermes) --


def _yaml_indent(line: str) -> int | None:
    trimmed = line.lstrip()
    if not trimmed or trimmed.startswith("#"):
        return None
    return len(line) - len(trimmed)


def _yaml_key(line: str) -> str | None:
    trimmed = line.lstrip()
    if not trimmed or trimmed.startswith(("#", "-")) or ":" not in trimmed:
        return None
    key = trimmed.split(":", 1)[0].strip()
    return key or None


def _yaml_key_at(line: str, indent: int) -> str | None:
    return _yaml_key(line) if _yaml_indent(line) == indent else None


def _strip_comment(value: str) -> str:
    quote: str | None = None
    escaped = False
    for index, ch in enumerate(value):
        if quote is not None:
            if quote == '"' and ch == "\\" and not escaped:
                escaped = True
                continue
            if ch == quote and not escaped:
                quote = None
            escaped = False
            continue
        if ch in "\"'":
            quote = ch
        elif ch == "#" and (index == 0 or value[index - 1].isspace()):
            return value[:index].rstrip()
    return value


def _yaml_scalar(value: str) -> str:
    value = _strip_comment(value).strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _yaml_item(line: str) -> str | None:
    stripped = line.strip()
    return stripped[2:].strip() if stripped.startswith("- ") else None


def _yaml_item_is(line: str, value: str, indent: int | None = None) -> bool:
    if indent is not None and _yaml_indent(line) != indent:
        return False
    item = _yaml_item(line)
    return item is not None and _yaml_scalar(item) == value


def _yaml_flow_items(value: str) -> list[str] | None:
    value = _strip_comment(value).strip()
    if not (value.startswith("[") and value.endswith("]")):
        return None
    inner = value[1:-1].strip()
    if not inner:
        return []
    items: list[str] = []
    current = ""
    quote: str | None = None
    escaped = False
    for ch in inner:
        if quote is not None:
            current += ch
            if quote == '"' and ch == "\\" and not escaped:
                escaped = True
                continue
            if ch == quote and not escaped:
                quote = None
            escaped = False
            continue
        if ch in "\"'":
            quote = ch
            current += ch
        elif ch == ",":
            items.append(_yaml_scalar(current))
            current = ""
        else:
            current += ch
    if quote is not None:
        return None
    items.append(_yaml_scalar(current))
    return items


def hermes_plugin_enabled(content: str, enabled: bool) -> str:
    """Return hermes's ``config.yaml`` with herdr's plugin listed (or unlisted).

    Edits lines only (herdr's rules): a ``plugins.enabled`` list, a flow list
    ``plugins: [...]`` or a flat ``plugins:`` list; text it does not own is kept.
    """
    name = HERMES_PLUGIN_NAME
    trailing = content.endswith("\n")
    lines = _lines(content)
    start = next((i for i, line in enumerate(lines) if _yaml_key_at(line, 0) == "plugins"), None)
    if start is None:
        if not enabled:
            return content
        result = content.rstrip("\n")
        if result:
            result += "\n"
        return result + f"plugins:\n  enabled:\n    - {name}\n"
    end = next(
        (i for i in range(start + 1, len(lines))
         if _yaml_indent(lines[i]) == 0 and _yaml_key(lines[i]) is not None),
        len(lines),
    )  # fmt: skip
    section = range(start + 1, end)
    enabled_at = next((i for i in section if _yaml_key_at(lines[i], 2) == "enabled"), None)
    flat_at = next(
        (i for i in section if _yaml_indent(lines[i]) == 2 and _yaml_item(lines[i]) is not None),
        None,
    )
    if enabled_at is not None:
        if lines[enabled_at].strip() in ("enabled: []", "enabled: [] # herdr"):
            if enabled:
                lines[enabled_at] = "  enabled:"
                lines.insert(enabled_at + 1, f"    - {name}")
            return _join_lines(lines, trailing)
        list_start = enabled_at + 1
        list_end = next(
            (i for i in range(list_start, end)
             if (_yaml_indent(lines[i]) or 99) <= 2 and _yaml_key(lines[i]) is not None),
            end,
        )  # fmt: skip
        found = next(
            (i for i in range(list_start, list_end) if _yaml_item_is(lines[i], name)), None
        )
        if (found is not None) == enabled:
            return content
        if enabled:
            lines.insert(list_start, f"    - {name}")
        else:
            assert found is not None
            del lines[found]
        return _join_lines(lines, trailing)
    head = lines[start].lstrip()
    inline = _yaml_flow_items(head.split(":", 1)[1]) if _yaml_indent(lines[start]) == 0 else None
    if inline is not None:
        if (name in inline) == enabled:
            return content
        if enabled:
            inline.insert(0, name)
        else:
            inline.remove(name)
        block = ["plugins:", *(f"  - {item}" for item in inline)] if inline else ["plugins: []"]
        lines[start:end] = block
        return _join_lines(lines, trailing)
    if flat_at is not None:
        found = next((i for i in section if _yaml_item_is(lines[i], name, 2)), None)
        if (found is not None) == enabled:
            return content
        if enabled:
            lines.insert(flat_at, f"  - {name}")
        else:
            assert found is not None
            del lines[found]
        return _join_lines(lines, trailing)
    if enabled:
        lines[start + 1 : start + 1] = ["  enabled:", f"    - {name}"]
        return _join_lines(lines, trailing)
    return content


# -- JSONC text (opencode's tui.jsonc) --


@dataclass
class _Node:
    kind: str  # "object", "array", "string", "scalar"
    start: int
    end: int
    value: Any = None
    items: list[_Node] | None = None  # array elements; object values
    keys: list[tuple[str, int]] | None = None  # object keys (name, key start)


class _Jsonc:
    """A small JSONC reader keeping each value's span (comments, trailing commas)."""

    def __init__(self, text: str, path: str) -> None:
        self.text, self.path, self.pos = text, path, 0

    def fail(self, what: str) -> IntegrationError:
        line = self.text.count("\n", 0, self.pos) + 1
        return IntegrationError(
            f"failed to parse OpenCode TUI config at {self.path}: {what} on line {line}"
        )

    def skip(self) -> None:
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch in " \t\r\n\ufeff":
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("unterminated comment")
                self.pos = end + 2
            else:
                return

    def string(self) -> _Node:
        start = self.pos
        decoder = json.JSONDecoder()
        try:
            value, end = decoder.raw_decode(self.text, start)
        except ValueError:
            raise self.fail("invalid string") from None
        self.pos = end
        return _Node("string", start, end, value)

    def value(self, depth: int = 0) -> _Node:
        if depth > 128:
            raise self.fail("nesting too deep")
        self.skip()
        if self.pos >= len(self.text):
            raise self.fail("unexpected end of input")
        ch = self.text[self.pos]
        if ch == '"':
            return self.string()
        if ch in "[{":
            return self.container(ch, depth)
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in ",]} \t\r\n/":
            self.pos += 1
        word = self.text[start : self.pos]
        try:
            value = json.loads(word, parse_constant=_reject_constant)
        except ValueError:
            raise self.fail(f"unexpected token {word[:20]!r}") from None
        return _Node("scalar", start, self.pos, value)

    def container(self, open_ch: str, depth: int) -> _Node:
        start = self.pos
        self.pos += 1
        close = "]" if open_ch == "[" else "}"
        items: list[_Node] = []
        keys: list[tuple[str, int]] = []
        while True:
            self.skip()
            if self.text.startswith(close, self.pos):
                self.pos += 1
                break
            if open_ch == "{":
                if not self.text.startswith('"', self.pos):
                    raise self.fail("expected a property name")
                key = self.string()
                keys.append((key.value, key.start))
                self.skip()
                if not self.text.startswith(":", self.pos):
                    raise self.fail("expected a colon")
                self.pos += 1
            items.append(self.value(depth + 1))
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif not self.text.startswith(close, self.pos):
                raise self.fail("expected a comma")
        kind = "array" if open_ch == "[" else "object"
        return _Node(kind, start, self.pos, None, items, keys if kind == "object" else None)


def _jsonc_root(text: str, path: str) -> _Node:
    reader = _Jsonc(text, path)
    root = reader.value()
    reader.skip()
    if reader.pos != len(text):
        raise reader.fail("text after the value")
    if root.kind != "object":
        raise IntegrationError(f"OpenCode TUI config at {path} must be a JSON object")
    return root


def _plugin_list(root: _Node, path: str) -> tuple[int, _Node] | None:
    assert root.keys is not None
    assert root.items is not None
    for index, (key, _) in enumerate(root.keys):
        if key == "plugin":
            node = root.items[index]
            if node.kind != "array":
                raise IntegrationError(
                    f"OpenCode TUI config plugin list at {path} must be an array"
                )
            return index, node
    return None


def _entry_is(node: _Node, spec: str) -> bool:
    if node.kind == "string":
        return bool(node.value == spec)
    return (
        node.kind == "array"
        and bool(node.items)
        and node.items is not None
        and node.items[0].kind == "string"
        and node.items[0].value == spec
    )


def jsonc_check_plugin_list(text: str, path: str) -> None:
    """Check ``tui.jsonc`` is an object whose ``plugin`` (if any) is an array.

    Raises:
        IntegrationError: herdr's messages for a bad file.

    """
    _plugin_list(_jsonc_root(text, path), path)


def jsonc_add_plugin(text: str, path: str, spec: str) -> str | None:
    """Return ``tui.jsonc`` with ``spec`` appended to ``plugin``; None when listed already.

    Comments and the user's other text are kept.

    Raises:
        IntegrationError: herdr's messages for a bad file.

    """
    root = _jsonc_root(text, path)
    found = _plugin_list(root, path)
    quoted = json.dumps(spec)
    if found is not None:
        array = found[1]
        assert array.items is not None
        if any(_entry_is(item, spec) for item in array.items):
            return None
        if array.items:
            at = array.items[-1].end
            return text[:at] + f", {quoted}" + text[at:]
        return text[: array.start + 1] + quoted + text[array.start + 1 :]
    assert root.items is not None
    member = f'"plugin": [{quoted}]'
    if root.items:
        at = root.items[-1].end
        return text[:at] + f",\n  {member}" + text[at:]
    close = root.end - 1
    return text[: root.start + 1] + f"\n  {member}\n" + text[close:]


def _cut(text: str, start: int, end: int, siblings: list[tuple[int, int]], index: int) -> str:
    """Remove sibling ``index`` (span start..end) and one adjacent comma."""
    after = text.find(",", end)
    if index + 1 < len(siblings):
        return text[:start] + text[siblings[index + 1][0] :]
    if index > 0:
        prev_end = siblings[index - 1][1]
        comma = text.find(",", prev_end)
        return text[:comma] + text[end:]
    if after >= 0 and text[end:after].strip() == "":
        end = after + 1
    return text[:start] + text[end:]


def jsonc_remove_plugin(text: str, path: str, spec: str) -> str | None:
    """Return ``tui.jsonc`` without entries for ``spec`` (the ``plugin`` key goes once empty).

    None when nothing names ``spec``.

    Raises:
        IntegrationError: herdr's messages for a bad file.

    """
    changed = False
    while True:
        root = _jsonc_root(text, path)
        found = _plugin_list(root, path)
        if found is None:
            return text if changed else None
        member, array = found
        assert array.items is not None
        assert root.items is not None
        assert root.keys is not None
        matching = [i for i, item in enumerate(array.items) if _entry_is(item, spec)]
        if not matching:
            return text if changed else None
        changed = True
        if len(matching) == len(array.items):
            spans = [(key_start, root.items[i].end) for i, (_, key_start) in enumerate(root.keys)]
        else:
            spans = [(item.start, item.end) for item in array.items]
            member = matching[0]
        text = _cut(text, spans[member][0], spans[member][1], spans, member)
        emptied = _jsonc_root(text, path)
        inside = text[emptied.start + 1 : emptied.end - 1]
        if not emptied.items and not inside.strip():
            text = text[: emptied.start] + "{}" + text[emptied.end :]
