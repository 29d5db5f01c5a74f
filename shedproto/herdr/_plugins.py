"""herdr's plugin rules: ``herdr-plugin.toml``, action lookup and a command's environment.

:func:`plugin_from_manifest` turns a parsed manifest into herdr's
``InstalledPluginInfo`` with herdr's checks and codes: ``id`` (ASCII
letters, digits, ``:._-``, at most 120), ``name``, ``version`` and
``min_herdr_version`` (a semantic version no newer than the running herdr),
``platforms`` (linux/macos/windows; an empty list is refused), actions and
panes (ids of letters, digits, ``:_-``; a title; a non-empty argv;
duplicates refused; sorted by id), events, link handlers (naming a known
action) and the "platform support unknown" warning
(herdrdev/herdr src/app/api/plugins/manifest.rs:1-610@1c76079f).

:func:`find_action` is herdr's lookup for ``plugin.action.invoke``: with a
``plugin_id``, that plugin's action; without, the one action whose id or
``plugin.action`` qualified id matches (``ambiguous_plugin_action`` when
several do). :func:`command_env` is the environment herdr gives a plugin
command (src/app/api/plugins/runtime.rs:36-75, env.rs@1c76079f).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from . import types as t

__all__ = [
    "PLUGIN_LOG_LIMIT",
    "PLUGIN_OUTPUT_MAX_BYTES",
    "PluginError",
    "action_info",
    "command_env",
    "effective_platforms",
    "find_action",
    "normalize_action_id",
    "normalize_plugin_id",
    "parse_plugin_manifest",
    "platform_error",
    "plugin_config_dir",
    "plugin_dir_component",
    "plugin_state_dir",
    "plugin_from_manifest",
]

PLUGIN_OUTPUT_MAX_BYTES = 64 * 1024
"""herdr keeps at most this much of a command's stdout and of its stderr."""
PLUGIN_LOG_LIMIT = 200
"""herdr keeps this many command logs."""
INVALID_PLUGIN_ID_MESSAGE = (
    "plugin id must be non-empty, <= 120 characters, and contain only ASCII letters, "
    "digits, colon, dot, underscore, or hyphen"
)
_ID = re.compile(r"[A-Za-z0-9:._-]{1,120}")
_LOCAL_ID = re.compile(r"[A-Za-z0-9:_-]{1,120}")
_SEMVER = re.compile(r"v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?")
_PLATFORMS = ("linux", "macos", "windows")
_PLACEMENTS = ("overlay", "popup", "split", "tab", "zoomed")
_PARSE = "plugin_manifest_parse_failed"
_MIN_VERSION = "invalid_plugin_min_herdr_version"


class PluginError(Exception):
    """A plugin request herdr refuses: ``code`` and ``message`` are herdr's."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def normalize_plugin_id(value: str) -> str | None:
    """Return the trimmed plugin id when herdr accepts it, else None."""
    value = value.strip()
    return value if _ID.fullmatch(value) else None


def normalize_action_id(value: str) -> str | None:
    """Return the trimmed action, pane or entrypoint id when herdr accepts it, else None."""
    value = value.strip()
    return value if _LOCAL_ID.fullmatch(value) else None


def _version(value: str) -> tuple[int, int, int] | None:
    match = _SEMVER.fullmatch(value.strip())
    return None if match is None else (int(match[1]), int(match[2]), int(match[3]))


def _text(raw: Mapping[str, Any], key: str, code: str, message: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str):
        raise PluginError(_PARSE, f"missing field `{key}`")
    value = value.strip()
    if not value:
        raise PluginError(code, message)
    return value


def _description(raw: Mapping[str, Any]) -> str | None:
    value = raw.get("description")
    return value.strip() or None if isinstance(value, str) else None


def _platforms(raw: Mapping[str, Any]) -> list[t.PluginPlatform] | None:
    value = raw.get("platforms")
    if value is None:
        return None
    if not isinstance(value, list):
        raise PluginError(_PARSE, "invalid type: `platforms` must be an array")
    for item in value:
        if item not in _PLATFORMS:
            raise PluginError(_PARSE, f"invalid_plugin_platform: unknown platform '{item}'")
    if not value:
        raise PluginError(
            "invalid_plugin_platform",
            "platforms must not be an empty array; omit the field to leave platforms undeclared",
        )
    return list(value)


def _command(raw: Mapping[str, Any]) -> list[str]:
    value = raw.get("command")
    if value is None:
        raise PluginError(_PARSE, "missing field `command`")
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(arg, str) and arg for arg in value)
    ):
        raise PluginError("invalid_plugin_command", "command must contain non-empty argv strings")
    return list(value)


def _tables(data: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise PluginError(_PARSE, f"invalid type: `{key}` must be an array of tables")
    return value


def _action(raw: Mapping[str, Any]) -> t.PluginManifestAction:
    ident = normalize_action_id(raw.get("id", "") if isinstance(raw.get("id"), str) else "")
    if ident is None:
        raise PluginError("invalid_plugin_action_id", "invalid action id")
    contexts = raw.get("contexts", [])
    return t.PluginManifestAction(
        id=ident,
        title=_text(raw, "title", "invalid_plugin_action_title", "action title is required"),
        description=_description(raw),
        contexts=list(contexts) if isinstance(contexts, list) else [],
        platforms=_platforms(raw),
        command=_command(raw),
    )


def _pane(raw: Mapping[str, Any]) -> t.PluginManifestPane:
    ident = normalize_action_id(raw.get("id", "") if isinstance(raw.get("id"), str) else "")
    if ident is None:
        raise PluginError("invalid_plugin_pane_id", "invalid pane id")
    title = _text(raw, "title", "invalid_plugin_pane_title", "pane title is required")
    placement = raw.get("placement", "overlay")
    if placement not in _PLACEMENTS:
        raise PluginError(_PARSE, f"unknown variant `{placement}`")
    platforms, command = _platforms(raw), _command(raw)
    width, height = raw.get("width"), raw.get("height")
    if placement != "popup" and (width is not None or height is not None):
        raise PluginError(
            "invalid_plugin_pane_size",
            "pane width and height are only supported when placement is popup",
        )
    return t.PluginManifestPane(
        id=ident, title=title, description=_description(raw), platforms=platforms,
        placement=placement, width=width, height=height, command=command,
    )  # fmt: skip


def _duplicates(ids: Iterable[str], code: str, noun: str) -> None:
    seen: set[str] = set()
    for ident in ids:
        if ident in seen:
            raise PluginError(code, f"duplicate {noun} id '{ident}'")
        seen.add(ident)


def parse_plugin_manifest(text: str, **kwargs: Any) -> t.InstalledPluginInfo:
    """Parse ``herdr-plugin.toml`` text; keyword arguments as :func:`plugin_from_manifest`.

    Raises:
        PluginError: ``plugin_manifest_parse_failed`` for bad TOML, else as
            :func:`plugin_from_manifest`.

    """
    from ._manifests import _toml_loads

    loads = _toml_loads()
    if loads is None:
        raise PluginError(
            "plugin_manifest_parse_failed", "reading TOML needs Python 3.11+ or the tomli package"
        )
    try:
        data = loads(text)
    except ValueError as exc:
        raise PluginError(_PARSE, str(exc)) from None
    return plugin_from_manifest(data, **kwargs)


def plugin_from_manifest(
    data: Mapping[str, Any],
    *,
    manifest_path: str,
    plugin_root: str,
    enabled: bool,
    herdr_version: str,
    known_events: Sequence[str] = (),
) -> t.InstalledPluginInfo:
    """Return herdr's ``InstalledPluginInfo`` for a parsed manifest.

    Raises:
        PluginError: the manifest is one herdr refuses (herdr's code and message).

    """
    raw_id = data.get("id")
    plugin_id = normalize_plugin_id(raw_id) if isinstance(raw_id, str) else None
    if plugin_id is None:
        raise PluginError("invalid_plugin_id", "invalid plugin id")
    name = _text(data, "name", "invalid_plugin_name", "plugin name is required")
    version = _text(data, "version", "invalid_plugin_version", "plugin version is required")
    raw_min = data.get("min_herdr_version")
    if not isinstance(raw_min, str) or not raw_min.strip():
        raise PluginError(_MIN_VERSION, "plugin min_herdr_version is required")
    required, current = _version(raw_min), _version(herdr_version)
    if required is None:
        raise PluginError(
            _MIN_VERSION,
            f"plugin min_herdr_version must be a semantic version like {herdr_version}",
        )
    if current is not None and required > current:
        wanted = ".".join(map(str, required))
        raise PluginError(
            "plugin_requires_newer_herdr",
            f"plugin requires Herdr {wanted} or newer; current Herdr is {herdr_version}",
        )
    platforms = _platforms(data)
    build = [
        t.PluginManifestBuild(platforms=_platforms(b), command=_command(b))
        for b in _tables(data, "build")
    ]
    startup = [
        t.PluginManifestStartup(platforms=_platforms(s), command=_command(s))
        for s in _tables(data, "startup")
    ]
    actions = [_action(a) for a in _tables(data, "actions")]
    _duplicates((a.id for a in actions), "duplicate_plugin_action_id", "action")
    events = []
    for raw in _tables(data, "events"):
        on = _text(raw, "on", "invalid_plugin_event", "event name is required")
        events.append(
            t.PluginManifestEventHook(on=on, platforms=_platforms(raw), command=_command(raw))
        )
    panes = [_pane(p) for p in _tables(data, "panes")]
    _duplicates((p.id for p in panes), "duplicate_plugin_pane_id", "pane")
    handlers = [_link_handler(h) for h in _tables(data, "link_handlers")]
    _duplicates((h.id for h in handlers), "duplicate_plugin_link_handler_id", "link handler")
    action_ids = {a.id for a in actions}
    for handler in handlers:
        if handler.action not in action_ids:
            raise PluginError(
                "invalid_plugin_link_handler_action",
                f"link handler '{handler.id}' references unknown action '{handler.action}'",
            )
    warnings = [
        f"unknown event '{e.on}'" for e in events if known_events and e.on not in known_events
    ]
    if platforms is None:
        warnings.append("manifest does not declare platforms; platform support unknown")
    return t.InstalledPluginInfo(
        plugin_id=plugin_id, name=name, version=version,
        min_herdr_version=".".join(map(str, required)), description=_description(data),
        manifest_path=manifest_path, plugin_root=plugin_root, enabled=enabled,
        platforms=platforms, build=build, startup=startup,
        actions=sorted(actions, key=lambda a: a.id),
        events=sorted(events, key=lambda e: (e.on, [arg.strip() for arg in e.command])),
        panes=sorted(panes, key=lambda p: p.id), link_handlers=handlers, warnings=warnings,
    )  # fmt: skip


def _link_handler(raw: Mapping[str, Any]) -> t.PluginManifestLinkHandler:
    ident = normalize_action_id(raw.get("id", "") if isinstance(raw.get("id"), str) else "")
    if ident is None:
        raise PluginError("invalid_plugin_link_handler_id", "invalid link handler id")
    title = _text(
        raw, "title", "invalid_plugin_link_handler_title", "link handler title is required"
    )
    pattern = _text(
        raw, "pattern", "invalid_plugin_link_handler_pattern", "link handler pattern is required"
    )
    try:
        re.compile(pattern)
    except re.error as exc:
        raise PluginError("invalid_plugin_link_handler_pattern", str(exc)) from None
    raw_action = raw.get("action")
    action = normalize_action_id(raw_action) if isinstance(raw_action, str) else None
    if action is None:
        raise PluginError("invalid_plugin_link_handler_action", "invalid link handler action")
    return t.PluginManifestLinkHandler(
        id=ident, title=title, pattern=pattern, action=action, platforms=_platforms(raw)
    )


def plugin_dir_component(plugin_id: str) -> str:
    """Return the directory name herdr gives a plugin's config and state folders.

    Lower-case ASCII letters, digits and ``._-`` stay; every other byte is
    ``%XX``; a trailing dot is ``%2E``; nothing at all is ``%plugin``
    (src/plugin_paths.rs:64-92@1c76079f; herdr's Windows-reserved-name and
    over-long-hash cases are not needed for ids this server accepts on Linux).
    """
    out = []
    for byte in plugin_id.encode():
        char = chr(byte)
        keep = char.isascii() and (char.islower() or char.isdigit() or char in "._-")
        out.append(char if keep else f"%{byte:02X}")
    component = "".join(out)
    if component.endswith("."):
        component = component[:-1] + "%2E"
    return component or "%plugin"


def plugin_config_dir(config_dir: str, plugin_id: str) -> str:
    """Return ``<config_dir>/plugins/config/<component>``, herdr's plugin config folder."""
    return f"{config_dir.rstrip('/')}/plugins/config/{plugin_dir_component(plugin_id)}"


def plugin_state_dir(state_dir: str, plugin_id: str) -> str:
    """Return ``<state_dir>/plugins/<component>``, herdr's plugin state folder."""
    return f"{state_dir.rstrip('/')}/plugins/{plugin_dir_component(plugin_id)}"


def effective_platforms(
    item: list[t.PluginPlatform] | None, plugin: list[t.PluginPlatform] | None
) -> list[t.PluginPlatform] | None:
    """Return an item's platforms, or its plugin's when it declares none."""
    return item if item is not None else plugin


def platform_error(
    platforms: list[t.PluginPlatform] | None, subject: str, host: str
) -> PluginError | None:
    """Return herdr's ``platform_unsupported`` error when ``host`` is not listed."""
    if platforms is not None and host not in platforms:
        return PluginError(
            "platform_unsupported", f"{subject} does not support the current platform ({host})"
        )
    return None


def action_info(
    plugin: t.InstalledPluginInfo, action: t.PluginManifestAction
) -> t.PluginActionInfo:
    """Return herdr's ``PluginActionInfo`` for one of ``plugin``'s actions."""
    return t.PluginActionInfo(
        plugin_id=plugin.plugin_id, action_id=action.id, title=action.title,
        description=action.description, contexts=action.contexts, command=action.command,
        platforms=effective_platforms(action.platforms, plugin.platforms),
    )  # fmt: skip


def find_action(
    plugins: Mapping[str, t.InstalledPluginInfo], plugin_id: str | None, action_id: str
) -> tuple[t.InstalledPluginInfo, t.PluginActionInfo]:
    """Return the plugin and action ``plugin.action.invoke`` names.

    Raises:
        PluginError: herdr's ``invalid_plugin_id``, ``invalid_plugin_action_id``,
            ``plugin_not_found``, ``plugin_action_not_found`` or
            ``ambiguous_plugin_action``.

    """
    if plugin_id is not None:
        wanted = normalize_plugin_id(plugin_id)
        if wanted is None:
            raise PluginError("invalid_plugin_id", "invalid plugin id")
        local = normalize_action_id(action_id)
        if local is None:
            raise PluginError("invalid_plugin_action_id", "invalid action id")
        plugin = plugins.get(wanted)
        if plugin is None:
            raise PluginError("plugin_not_found", "plugin not found")
        for action in plugin.actions:
            if action.id == local:
                return plugin, action_info(plugin, action)
        raise PluginError("plugin_action_not_found", "plugin action not found")
    wanted_action = action_id.strip()
    matches = [
        (plugin, action_info(plugin, action))
        for plugin in plugins.values()
        for action in plugin.actions
        if wanted_action in (action.id, f"{plugin.plugin_id}.{action.id}")
    ]
    if not matches:
        raise PluginError("plugin_action_not_found", "plugin action not found")
    if len(matches) > 1:
        raise PluginError(
            "ambiguous_plugin_action",
            "plugin action id matches more than one action; include plugin_id",
        )
    return matches[0]


def command_env(
    plugin: t.InstalledPluginInfo,
    context: t.PluginInvocationContext,
    *,
    socket_path: str,
    config_dir: str,
    state_dir: str,
    context_json: str,
    bin_path: str | None = None,
    action_id: str | None = None,
    event: str | None = None,
    event_json: str | None = None,
) -> dict[str, str]:
    """Return the variables herdr adds to a plugin command's environment."""
    env = {
        "HERDR_PLUGIN_ROOT": plugin.plugin_root,
        "HERDR_PLUGIN_CONFIG_DIR": config_dir,
        "HERDR_PLUGIN_STATE_DIR": state_dir,
        "HERDR_SOCKET_PATH": socket_path,
        "HERDR_ENV": "1",
        "HERDR_PLUGIN_ID": plugin.plugin_id,
        "HERDR_PLUGIN_CONTEXT_JSON": context_json,
    }
    optional = {
        "HERDR_BIN_PATH": bin_path,
        "HERDR_PLUGIN_ACTION_ID": action_id,
        "HERDR_PLUGIN_EVENT": event,
        "HERDR_PLUGIN_EVENT_JSON": event_json,
        "HERDR_WORKSPACE_ID": context.workspace_id,
        "HERDR_TAB_ID": context.tab_id,
        "HERDR_PANE_ID": context.focused_pane_id,
        "HERDR_PLUGIN_CLICKED_URL": context.clicked_url,
        "HERDR_PLUGIN_LINK_HANDLER_ID": context.link_handler_id,
    }
    env.update({key: value for key, value in optional.items() if value is not None})
    return env


PLUGIN_HOOK_EVENTS: frozenset[str] = frozenset(
    {
        "workspace.created", "workspace.updated", "workspace.closed", "workspace.renamed",
        "workspace.moved", "workspace.reordered", "workspace.focused", "worktree.created",
        "worktree.opened", "worktree.removed", "tab.created", "tab.closed", "tab.renamed",
        "tab.moved", "tab.focused", "pane.created", "pane.closed", "pane.focused", "pane.moved",
        "pane.exited", "pane.agent_detected", "pane.agent_status_changed",
    }
)  # fmt: skip
"""The 22 events a manifest ``[[events]]`` hook may name: every event but
``workspace.metadata_updated``, ``pane.updated``, ``pane.output_changed`` and
``layout.updated`` (herdrdev/herdr src/api/schema/events.rs:286-309@1c76079f)."""

PLUGIN_COMMANDS_IN_FLIGHT_MAX = 32
"""herdr's cap on plugin commands running at once (runtime.rs MAX_PLUGIN_COMMANDS_IN_FLIGHT)."""


def event_dot_name(kind: str) -> str:
    """Return an event kind's hook name (``pane_agent_detected`` -> ``pane.agent_detected``)."""
    head, _, rest = kind.partition("_")
    return f"{head}.{rest}" if rest else head


def capped_output(data: bytes, cap: int = PLUGIN_OUTPUT_MAX_BYTES) -> str:
    """Return a command's output as herdr logs it: the first ``cap`` bytes, then a notice."""
    text = data[:cap].decode("utf-8", "replace")
    if len(data) > cap:
        text += f"\n[herdr truncated plugin output after {cap} bytes]"
    return text


def find_link_handler(
    plugins: Mapping[str, t.InstalledPluginInfo], url: str, host: str
) -> tuple[t.InstalledPluginInfo, t.PluginManifestLinkHandler, t.PluginManifestAction] | None:
    """Return the first enabled plugin's link handler whose pattern matches ``url``.

    Plugins are tried by id, handlers in manifest order; a handler or its action
    not supported on ``host``, or whose action is missing, is skipped (herdr's
    ``find_plugin_link_handler``, src/app/api/plugins/mod.rs:564-609@1c76079f).
    """
    for plugin_id in sorted(plugins):
        plugin = plugins[plugin_id]
        if not plugin.enabled:
            continue
        for handler in plugin.link_handlers:
            if platform_error(effective_platforms(handler.platforms, plugin.platforms), "", host):
                continue
            action = next((a for a in plugin.actions if a.id == handler.action), None)
            if action is None or platform_error(
                effective_platforms(action.platforms, plugin.platforms), "", host
            ):
                continue
            try:
                if re.search(handler.pattern, url):
                    return plugin, handler, action
            except re.error:
                continue
    return None
