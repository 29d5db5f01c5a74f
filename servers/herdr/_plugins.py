"""The ``plugin.*`` handlers: plugins read from ``herdr-plugin.toml``, run as herdr runs them.

``plugin.link`` reads the manifest (a directory's ``herdr-plugin.toml`` or
the file named) by herdr's rules (:mod:`shedproto.herdr._plugins`), and
creates the plugin's config and state folders under the server's
``config_dir`` / ``state_dir`` as herdr does. ``plugin.action.invoke``
starts the action's argv in the plugin root with herdr's ``HERDR_*``
environment and answers at once with a ``running`` log; the log becomes
``succeeded`` or ``failed`` when the command ends (stdout and stderr kept
up to 64 KiB each, the last 200 logs kept). ``plugin.pane.open`` runs the
entrypoint's argv in a new pane: ``split`` and ``zoomed`` beside the
target pane, ``overlay`` beside the active pane (there is no TUI to
overlay), ``tab`` in a new tab; ``popup`` answers herdr's ``ui_busy``, as
herdr does outside its normal workspace view.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

import anyio
import msgspec

from shedproto.herdr import LifecycleEvent
from shedproto.herdr import types as t
from shedproto.herdr._plugins import (
    INVALID_PLUGIN_ID_MESSAGE,
    PLUGIN_COMMANDS_IN_FLIGHT_MAX,
    PLUGIN_HOOK_EVENTS,
    PLUGIN_LOG_LIMIT,
    PluginError,
    action_info,
    capped_output,
    command_env,
    effective_platforms,
    event_dot_name,
    find_action,
    find_link_handler,
    normalize_action_id,
    normalize_plugin_id,
    parse_plugin_manifest,
    platform_error,
    plugin_config_dir,
    plugin_state_dir,
)

from ._model import Pane, Split, Tab, Workspace
from ._state import AnswerError, ServerState
from ._tree import replace_leaf

HANDLERS: dict[str, str] = {
    "plugin.link": "_plugin_link",
    "plugin.list": "_plugin_list",
    "plugin.unlink": "_plugin_unlink",
    "plugin.enable": "_plugin_enable",
    "plugin.disable": "_plugin_disable",
    "plugin.action.list": "_plugin_action_list",
    "plugin.action.invoke": "_plugin_action_invoke",
    "plugin.log.list": "_plugin_log_list",
    "plugin.pane.open": "_plugin_pane_open",
    "plugin.pane.focus": "_plugin_pane_focus",
    "plugin.pane.close": "_plugin_pane_close",
}
"""Method -> the name of the coroutine here that answers it."""

HOST_PLATFORM = "linux"
_MAX_MANIFEST_BYTES = 1 << 20


def _answer(error: PluginError) -> AnswerError:
    return AnswerError(error.code, error.message)


def _now_ms() -> int:
    return int(time.time() * 1000)


class PluginHandlers(ServerState):
    """The ``plugin.*`` handlers."""

    def _plugin(self, plugin_id: str) -> t.InstalledPluginInfo:
        wanted = normalize_plugin_id(plugin_id)
        if wanted is None:
            raise AnswerError("invalid_plugin_id", INVALID_PLUGIN_ID_MESSAGE)
        plugin = self.plugins.get(wanted)
        if plugin is None:
            raise AnswerError("plugin_not_found", "plugin not found")
        return plugin

    def _plugin_filter(self, plugin_id: str | None) -> str | None:
        if plugin_id is None:
            return None
        wanted = normalize_plugin_id(plugin_id)
        if wanted is None:
            raise AnswerError("invalid_plugin_id", INVALID_PLUGIN_ID_MESSAGE)
        return wanted

    async def _load_plugin(self, path: str, enabled: bool) -> t.InstalledPluginInfo:
        target = anyio.Path(path)
        manifest = target / "herdr-plugin.toml" if await target.is_dir() else target
        try:
            manifest = await manifest.resolve(strict=True)
        except OSError as exc:
            raise AnswerError("plugin_manifest_not_found", str(exc)) from None
        try:
            data = await manifest.read_bytes()
            if len(data) > _MAX_MANIFEST_BYTES:
                raise OSError(f"{manifest} is larger than {_MAX_MANIFEST_BYTES} bytes")
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise AnswerError("plugin_manifest_read_failed", str(exc)) from None
        try:
            return parse_plugin_manifest(
                text, manifest_path=str(manifest), plugin_root=str(manifest.parent),
                enabled=enabled, herdr_version=self.version,
            )  # fmt: skip
        except PluginError as exc:
            raise _answer(exc) from None

    async def _plugin_dirs(self, plugin: t.InstalledPluginInfo) -> tuple[str, str]:
        config = plugin_config_dir(self.config_dir, plugin.plugin_id)
        state = plugin_state_dir(self.state_dir, plugin.plugin_id)
        try:
            for folder in (config, state):
                await anyio.Path(folder).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise AnswerError("plugin_user_dir_create_failed", str(exc)) from None
        return config, state

    async def _plugin_link(self, id: str, params: t.PluginLinkParams) -> t.PluginLinkedReply:
        plugin = await self._load_plugin(params.path, params.enabled)
        if params.source is not None:
            plugin = msgspec.structs.replace(plugin, source=params.source)
        await self._plugin_dirs(plugin)
        self.plugins[plugin.plugin_id] = plugin
        await self._save_registry()
        return t.PluginLinkedReply(plugin=plugin)

    async def _plugin_list(self, id: str, params: t.PluginListParams) -> t.PluginListReply:
        wanted = self._plugin_filter(params.plugin_id)
        plugins = [p for k, p in sorted(self.plugins.items()) if wanted in (None, k)]
        return t.PluginListReply(plugins=plugins)

    async def _plugin_unlink(self, id: str, params: t.PluginUnlinkParams) -> t.PluginUnlinkedReply:
        wanted = self._plugin_filter(params.plugin_id)
        assert wanted is not None
        removed = self.plugins.pop(wanted, None) is not None
        if removed:  # herdr forgets its plugin panes; they keep running
            self.plugin_panes = {k: v for k, v in self.plugin_panes.items() if v[0] != wanted}
            await self._save_registry()
        return t.PluginUnlinkedReply(plugin_id=wanted, removed=removed)

    def _set_enabled(self, plugin_id: str, enabled: bool) -> t.InstalledPluginInfo:
        plugin = msgspec.structs.replace(self._plugin(plugin_id), enabled=enabled)
        self.plugins[plugin.plugin_id] = plugin
        return plugin

    async def _plugin_enable(self, id: str, params: t.PluginSetEnabledParams) -> Any:
        plugin = self._set_enabled(params.plugin_id, True)
        await self._save_registry()
        return t.PluginEnabledReply(plugin=plugin)

    async def _plugin_disable(self, id: str, params: t.PluginSetEnabledParams) -> Any:
        plugin = self._set_enabled(params.plugin_id, False)
        await self._save_registry()
        return t.PluginDisabledReply(plugin=plugin)

    async def _plugin_action_list(
        self, id: str, params: t.PluginActionListParams
    ) -> t.PluginActionListReply:
        wanted = self._plugin_filter(params.plugin_id)
        actions = [
            action_info(plugin, action)
            for plugin in self.plugins.values()
            if wanted in (None, plugin.plugin_id)
            for action in plugin.actions
        ]
        actions.sort(key=lambda a: f"{a.plugin_id}.{a.action_id}")
        return t.PluginActionListReply(actions=actions)

    def _context(
        self, given: t.PluginInvocationContext | None, source: str
    ) -> t.PluginInvocationContext:
        """Return the invocation context: the caller's, filled in from the focused pane."""
        pane = self._focused_pane() if self.active is not None else None
        base = t.PluginInvocationContext(
            workspace_id=None if pane is None else pane.workspace.id,
            workspace_label=None if pane is None else pane.workspace.label,
            tab_id=None if pane is None else pane.tab.id,
            tab_label=None if pane is None else pane.tab.label,
            focused_pane_id=None if pane is None else pane.id,
            focused_pane_cwd=None if pane is None else pane.cwd,
            focused_pane_agent=None if pane is None else pane.agent,
            focused_pane_status=None if pane is None else pane.agent_status,
            invocation_source=source,
        )
        if given is None:
            return base
        overrides = {k: v for k, v in msgspec.structs.asdict(given).items() if v is not None}
        return msgspec.structs.replace(base, **overrides)

    def _push_log(self, log: t.PluginCommandLogInfo) -> None:
        self.plugin_logs = [entry for entry in self.plugin_logs if entry.log_id != log.log_id]
        self.plugin_logs.append(log)
        del self.plugin_logs[:-PLUGIN_LOG_LIMIT]

    async def _plugin_action_invoke(self, id: str, params: t.PluginActionInvokeParams) -> Any:
        try:
            plugin, action = find_action(self.plugins, params.plugin_id, params.action_id)
        except PluginError as exc:
            raise _answer(exc) from None
        if not plugin.enabled:
            raise AnswerError("plugin_disabled", f"plugin {plugin.plugin_id} is disabled")
        failure = platform_error(
            action.platforms, f"action '{plugin.plugin_id}.{action.action_id}'", HOST_PLATFORM
        )
        if failure is not None:
            raise _answer(failure)
        context = self._context(params.context, "api")
        log = await self._start_plugin_action(plugin, action, context)
        return t.PluginActionInvokedReply(action=action, context=context, log=log)

    async def _start_plugin_action(
        self,
        plugin: t.InstalledPluginInfo,
        action: t.PluginActionInfo | t.PluginManifestAction,
        context: t.PluginInvocationContext,
    ) -> t.PluginCommandLogInfo:
        """Start ``action``'s command with herdr's environment; return its ``running`` log."""
        action_id = action.action_id if isinstance(action, t.PluginActionInfo) else action.id
        return await self._start_plugin_command(
            plugin, action.command, context, action_id=action_id
        )

    async def _start_plugin_command(
        self,
        plugin: t.InstalledPluginInfo,
        command: list[str],
        context: t.PluginInvocationContext,
        *,
        action_id: str | None = None,
        event: str | None = None,
        event_json: str | None = None,
    ) -> t.PluginCommandLogInfo:
        """Start a plugin command as herdr's runtime does (runtime.rs start_plugin_command).

        Raises:
            AnswerError: ``invalid_plugin_command`` (empty argv),
                ``plugin_user_dir_create_failed``, or ``plugin_command_limit_reached``
                (32 already running; a ``failed`` log records the refusal).

        """
        if not command:
            raise AnswerError("invalid_plugin_command", "command must not be empty")
        config, state = await self._plugin_dirs(plugin)
        env = command_env(
            plugin, context, socket_path=str(self.path), config_dir=config, state_dir=state,
            context_json=msgspec.json.encode(context).decode(), action_id=action_id,
            event=event, event_json=event_json,
        )  # fmt: skip
        self.plugin_log_seq += 1
        now = _now_ms()
        log = t.PluginCommandLogInfo(
            log_id=f"plugin-log-{self.plugin_log_seq}", plugin_id=plugin.plugin_id,
            action_id=action_id, event=event, command=command, status="running",
            started_unix_ms=now,
        )  # fmt: skip
        if self.plugin_in_flight >= PLUGIN_COMMANDS_IN_FLIGHT_MAX:
            message = (
                f"maximum concurrent plugin commands reached ({PLUGIN_COMMANDS_IN_FLIGHT_MAX})"
            )
            self._push_log(msgspec.structs.replace(
                log, status="failed", finished_unix_ms=now, stdout="", stderr="", error=message
            ))  # fmt: skip
            raise AnswerError("plugin_command_limit_reached", message)
        self._push_log(log)
        if self._tasks is not None:
            self.plugin_in_flight += 1
            self._tasks.start_soon(self._run_plugin_command, log, plugin.plugin_root, env)
        return log

    async def _run_plugin_command(
        self, log: t.PluginCommandLogInfo, cwd: str, env: dict[str, str]
    ) -> None:
        environment = {**self.environ, **env}
        try:
            done = await anyio.run_process(
                log.command, cwd=cwd, env=environment, check=False, stdin=None
            )
        except OSError as exc:
            self.plugin_in_flight -= 1
            finished = msgspec.structs.replace(
                log, status="failed", finished_unix_ms=_now_ms(), stdout="", stderr="",
                error=str(exc),
            )  # fmt: skip
        else:
            self.plugin_in_flight -= 1
            finished = msgspec.structs.replace(
                log,
                status="succeeded" if done.returncode == 0 else "failed",
                finished_unix_ms=_now_ms(),
                exit_code=done.returncode if done.returncode >= 0 else None,
                stdout=capped_output(done.stdout),
                stderr=capped_output(done.stderr),
            )
        self._push_log(finished)

    async def _plugin_log_list(
        self, id: str, params: t.PluginLogListParams
    ) -> t.PluginLogListReply:
        wanted = self._plugin_filter(params.plugin_id)
        limit = min(max(50 if params.limit is None else params.limit, 1), PLUGIN_LOG_LIMIT)
        logs = [log for log in self.plugin_logs if wanted in (None, log.plugin_id)]
        return t.PluginLogListReply(logs=logs[-limit:])

    async def _plugin_pane_open(self, id: str, params: t.PluginPaneOpenParams) -> Any:
        plugin = self._plugin(params.plugin_id)
        if not plugin.enabled:
            raise AnswerError("plugin_disabled", f"plugin {plugin.plugin_id} is disabled")
        entrypoint = normalize_action_id(params.entrypoint)
        if entrypoint is None:
            raise AnswerError("invalid_plugin_entrypoint", "invalid entrypoint id")
        manifest = next((p for p in plugin.panes if p.id == entrypoint), None)
        if manifest is None:
            raise AnswerError(
                "plugin_pane_not_found", f"plugin pane entrypoint '{entrypoint}' not found"
            )
        failure = platform_error(
            effective_platforms(manifest.platforms, plugin.platforms), "plugin pane", HOST_PLATFORM
        )
        if failure is not None:
            raise _answer(failure)
        placement = params.placement or manifest.placement
        self._check_placement(params, placement)
        self._check_env(params.env)
        target = self._find_pane(params.target_pane_id) if params.target_pane_id else None
        anchor = target or self._focused_pane()
        context = self._context(None, "plugin_pane")
        config, state = await self._plugin_dirs(plugin)
        env = {
            **params.env,
            **command_env(
                plugin, context, socket_path=str(self.path), config_dir=config, state_dir=state,
                context_json=msgspec.json.encode(context).decode(),
            ),
            "HERDR_PLUGIN_ENTRYPOINT_ID": entrypoint,
        }  # fmt: skip
        cwd = params.cwd or anchor.cwd
        if placement == "tab":
            ws = anchor.workspace
            if params.workspace_id:
                ws = self._find_workspace(params.workspace_id)
            tab = ws.new_tab(manifest.title)
            pane = self._spawn(ws, tab, cwd, env, manifest.command)
            tab.root = pane
            tab.focused_pane = pane
            self.hub.emit(t.TabCreatedEventData(tab=self._tab_info(tab)))
        else:
            pane = self._spawn(anchor.workspace, anchor.tab, cwd, env, manifest.command)
            self._place_beside(anchor.tab, anchor, pane, params.direction or "right")
        pane.label = manifest.title
        self.hub.emit(t.PaneCreatedEventData(pane=self._pane_info(pane)))
        self.plugin_panes[pane.id] = (plugin.plugin_id, entrypoint)
        if params.focus or placement in ("zoomed", "overlay", "tab"):
            self._focus_pane(pane)
        return t.PluginPaneOpenedReply(plugin_pane=self._plugin_pane_info(pane))

    def _check_placement(self, params: t.PluginPaneOpenParams, placement: str) -> None:
        if placement != "popup" and (params.width is not None or params.height is not None):
            raise AnswerError(
                "invalid_params", "width and height are only supported when placement is popup"
            )
        if placement == "popup":
            raise AnswerError("ui_busy", "popup panes can only open from the normal workspace view")
        if placement == "overlay" and (
            params.workspace_id or params.target_pane_id or params.direction
        ):
            raise AnswerError(
                "invalid_params", "overlay and popup plugin panes target the active pane"
            )
        if placement in ("split", "zoomed") and params.workspace_id:
            raise AnswerError(
                "invalid_params",
                "split and zoomed plugin panes target an existing pane; use target_pane_id",
            )
        if placement == "tab" and (params.target_pane_id or params.direction):
            raise AnswerError(
                "invalid_params",
                "tab plugin panes support workspace_id but not target_pane_id or direction",
            )

    def _place_beside(self, tab: Tab, target: Pane, pane: Pane, direction: Any) -> None:
        split = Split(
            id=f"s{next(tab.split_ids)}", direction=direction, ratio=0.5, first=target, second=pane
        )
        tab.root = replace_leaf(tab.root, target, split)
        self._resize(tab)
        self._emit_layout(tab)

    def _plugin_pane_info(self, pane: Pane) -> t.PluginPaneInfo:
        plugin_id, entrypoint = self.plugin_panes[pane.id]
        return t.PluginPaneInfo(
            plugin_id=plugin_id, entrypoint=entrypoint, pane=self._pane_info(pane)
        )

    def _plugin_pane_target(self, pane_id: str) -> Pane:
        if pane_id not in self.plugin_panes:
            raise AnswerError("plugin_pane_not_found", "plugin pane not found")
        try:
            return self._find_pane(pane_id)
        except AnswerError:
            self.plugin_panes.pop(pane_id, None)
            raise AnswerError("plugin_pane_not_found", "plugin pane not found") from None

    async def _plugin_pane_focus(self, id: str, params: t.PluginPaneFocusParams) -> Any:
        pane = self._plugin_pane_target(params.pane_id)
        self._focus_pane(pane)
        return t.PluginPaneFocusedReply(plugin_pane=self._plugin_pane_info(pane))

    async def _plugin_pane_close(self, id: str, params: t.PluginPaneCloseParams) -> Any:
        pane = self._plugin_pane_target(params.pane_id)
        await self._close_pane(pane)
        self.plugin_panes.pop(pane.id, None)
        return t.PluginPaneClosedReply(pane_id=params.pane_id)




    # -- hooks: startup, events, link handlers (herdr's runtime.rs, context.rs, mod.rs) --

    def _context_for(
        self, ws: Workspace | None, tab: Tab | None, pane: Pane | None, correlation: str
    ) -> t.PluginInvocationContext:
        """Return herdr's context for a workspace / tab / pane (``api`` source, correlated)."""
        if pane is not None:
            tab, ws = pane.tab, pane.workspace
        if tab is not None:
            ws = tab.workspace
        if tab is None and ws is not None:
            tab = ws.active_tab
        if pane is None and tab is not None:
            pane = tab.focused_pane
        return t.PluginInvocationContext(
            workspace_id=None if ws is None else ws.id,
            workspace_label=None if ws is None else ws.label,
            workspace_cwd=None if pane is None else pane.cwd,
            tab_id=None if tab is None else tab.id,
            tab_label=None if tab is None else tab.label,
            focused_pane_id=None if pane is None else pane.id,
            focused_pane_cwd=None if pane is None else pane.cwd,
            focused_pane_agent=None if pane is None else pane.agent,
            focused_pane_status=None if pane is None else pane.agent_status,
            invocation_source="api", correlation_id=correlation,
        )  # fmt: skip

    def _event_context(self, event: LifecycleEvent, name: str) -> t.PluginInvocationContext:
        """Return the context herdr gives an event hook: the pane, tab or workspace it names."""
        data = event.data
        nested = {key: getattr(data, key, None) for key in ("pane", "tab", "workspace")}
        pane_id = getattr(data, "pane_id", None) or getattr(nested["pane"], "pane_id", None)
        tab_id = getattr(data, "tab_id", None) or getattr(nested["tab"], "tab_id", None)
        ws_id = getattr(data, "workspace_id", None) or getattr(
            nested["workspace"], "workspace_id", None
        )
        for finder, ref in ((self._find_pane, pane_id), (self._find_tab, tab_id)):
            if isinstance(ref, str):
                try:
                    found = finder(ref)
                except AnswerError:
                    continue
                if isinstance(found, Pane):
                    return self._context_for(None, None, found, name)
                return self._context_for(None, found, None, name)
        if isinstance(ws_id, str):
            try:
                return self._context_for(self._find_workspace(ws_id), None, None, name)
            except AnswerError:
                pass
        base = self._context_for(None, None, None, name)
        return msgspec.structs.replace(
            base,
            workspace_id=ws_id if isinstance(ws_id, str) else None,
            tab_id=tab_id if isinstance(tab_id, str) else None,
            focused_pane_id=pane_id if isinstance(pane_id, str) else None,
        )

    def _plugin_event_hook(self, event: LifecycleEvent) -> None:
        """Start every enabled plugin's hooks for ``event`` (the event hub's listener)."""
        if not self.plugins or self._tasks is None:
            return
        name = event_dot_name(event.event)
        if name not in PLUGIN_HOOK_EVENTS:
            return
        hooked = [
            (plugin, hook)
            for _, plugin in sorted(self.plugins.items())
            if plugin.enabled
            for hook in plugin.events
            if hook.on == name
            and platform_error(
                effective_platforms(hook.platforms, plugin.platforms), name, HOST_PLATFORM
            ) is None
        ]  # fmt: skip
        if not hooked:
            return
        context = self._event_context(event, name)
        event_json = msgspec.json.encode(event).decode()
        for plugin, hook in hooked:
            self._tasks.start_soon(self._start_hook, plugin, hook.command, context, name,
                                   event_json)  # fmt: skip

    async def _start_hook(
        self,
        plugin: t.InstalledPluginInfo,
        command: list[str],
        context: t.PluginInvocationContext,
        event: str,
        event_json: str | None,
    ) -> None:
        """Start one hook command; a refusal is already in the logs (herdr ignores it too)."""
        with contextlib.suppress(AnswerError):
            await self._start_plugin_command(
                plugin, command, context, event=event, event_json=event_json
            )

    def run_plugin_startup_hooks(self) -> None:
        """Start every enabled plugin's ``[[startup]]`` commands (herdr does this once serving)."""
        if self._tasks is None:
            return
        context = msgspec.structs.replace(
            self._context_for(self.active, None, None, "plugin.startup"),
            invocation_source="startup",
        )
        for _, plugin in sorted(self.plugins.items()):
            if not plugin.enabled:
                continue
            for startup in plugin.startup:
                platforms = effective_platforms(startup.platforms, plugin.platforms)
                if platform_error(platforms, "startup", HOST_PLATFORM) is None:
                    self._tasks.start_soon(self._start_hook, plugin, startup.command, context,
                                           "startup", None)  # fmt: skip

    async def _run_link_handler(self, pane: Pane, url: str) -> bool:
        """Run the plugin link handler matching ``url`` clicked in ``pane``; False if none."""
        found = find_link_handler(self.plugins, url, HOST_PLATFORM)
        if found is None:
            return False
        plugin, handler, action = found
        context = msgspec.structs.replace(
            self._context_for(None, None, pane, "link_click"),
            invocation_source="link_click", clicked_url=url, link_handler_id=handler.id,
        )  # fmt: skip
        await self._start_plugin_action(plugin, action, context)
        return True

    # -- the registry: <config_dir>/plugins.json (herdr's src/persist/plugin_registry.rs) --

    def _load_registry(self) -> None:
        """Read ``plugins.json``, re-reading each manifest (a missing one is kept, warned)."""
        path = Path(self.config_dir) / "plugins.json"
        try:
            stored = msgspec.json.decode(
                path.read_bytes(), type=list[t.InstalledPluginInfo]
            ) if path.is_file() else []
        except (OSError, msgspec.ValidationError, msgspec.DecodeError):
            stored = []  # herdr: a corrupt registry never blocks startup
        for entry in stored:
            try:
                text = Path(entry.manifest_path).read_text(encoding="utf-8")
                fresh = parse_plugin_manifest(
                    text, manifest_path=entry.manifest_path, plugin_root=entry.plugin_root,
                    enabled=entry.enabled, herdr_version=self.version,
                )  # fmt: skip
                fresh = msgspec.structs.replace(fresh, source=entry.source)
            except (OSError, UnicodeDecodeError, PluginError) as exc:
                reason = exc.message if isinstance(exc, PluginError) else str(exc)
                fresh = msgspec.structs.replace(
                    entry, warnings=[f"manifest unavailable: {reason}"]
                )
            self.plugins[fresh.plugin_id] = fresh

    async def _save_registry(self) -> None:
        """Write ``plugins.json`` (sorted by id) when the server owns its config dir.

        Raises:
            AnswerError: ``plugin_registry_save_failed``.

        """
        if not self.registry_writable:
            return
        path = anyio.Path(self.config_dir) / "plugins.json"
        entries = [plugin for _, plugin in sorted(self.plugins.items())]
        text = json.dumps(json.loads(msgspec.json.encode(entries)), indent=2)
        try:
            await path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".json.tmp")
            await tmp.write_text(text, encoding="utf-8")
            await tmp.rename(path)
        except OSError as exc:
            raise AnswerError("plugin_registry_save_failed", str(exc)) from None
