"""The ``plugin.*`` handlers: the linked plugins and their enabled state."""

from __future__ import annotations

import re
from typing import Any

import anyio
import msgspec

from shedproto.herdr import types as t

from ._state import AnswerError, E, ServerState

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
    "plugin.pane.focus": "_plugin_pane",
    "plugin.pane.close": "_plugin_pane",
}
"""Method -> the name of the coroutine here that answers it."""


class PluginHandlers(ServerState):
    """The ``plugin.*`` handlers: the linked plugins and their enabled state."""

    def _plugin(self, plugin_id: str) -> t.InstalledPluginInfo:
        plugin = self.plugins.get(plugin_id)
        if plugin is None:
            raise AnswerError("plugin_not_found", f"plugin {plugin_id} not found")
        return plugin

    async def _plugin_link(self, id: str, params: t.PluginLinkParams) -> t.PluginLinkedReply:
        root = anyio.Path(params.path)
        if not root.is_absolute() or not await root.is_dir():
            raise AnswerError("plugin_link_failed", f"{params.path} is not a plugin directory")
        plugin_id = root.name
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", plugin_id):
            raise AnswerError(E.INVALID_PLUGIN_ID, f"invalid plugin id {plugin_id}")
        plugin = t.InstalledPluginInfo(
            plugin_id=plugin_id, name=plugin_id, version="0.0.0", min_herdr_version="0.0.0",
            manifest_path=str(root / "herdr-plugin.toml"), plugin_root=str(root),
            enabled=params.enabled, source=params.source or t.PluginSourceInfo(kind="local"),
            warnings=["the reference server does not read plugin manifests"],
        )  # fmt: skip
        self.plugins[plugin_id] = plugin
        return t.PluginLinkedReply(plugin=plugin)

    async def _plugin_list(self, id: str, params: t.PluginListParams) -> t.PluginListReply:
        if params.plugin_id is not None:
            return t.PluginListReply(plugins=[self._plugin(params.plugin_id)])
        return t.PluginListReply(plugins=list(self.plugins.values()))

    async def _plugin_unlink(self, id: str, params: t.PluginUnlinkParams) -> t.PluginUnlinkedReply:
        removed = self.plugins.pop(params.plugin_id, None) is not None
        return t.PluginUnlinkedReply(plugin_id=params.plugin_id, removed=removed)

    async def _plugin_enable(self, id: str, params: t.PluginSetEnabledParams) -> Any:
        plugin = msgspec.structs.replace(self._plugin(params.plugin_id), enabled=True)
        self.plugins[plugin.plugin_id] = plugin
        return t.PluginEnabledReply(plugin=plugin)

    async def _plugin_disable(self, id: str, params: t.PluginSetEnabledParams) -> Any:
        plugin = msgspec.structs.replace(self._plugin(params.plugin_id), enabled=False)
        self.plugins[plugin.plugin_id] = plugin
        return t.PluginDisabledReply(plugin=plugin)

    async def _plugin_action_list(
        self, id: str, params: t.PluginActionListParams
    ) -> t.PluginActionListReply:
        if params.plugin_id is not None:
            self._plugin(params.plugin_id)
        return t.PluginActionListReply(actions=[])  # no manifests, so no actions

    async def _plugin_action_invoke(self, id: str, params: t.PluginActionInvokeParams) -> Any:
        raise AnswerError("plugin_action_not_found", f"plugin action {params.action_id} not found")

    async def _plugin_log_list(
        self, id: str, params: t.PluginLogListParams
    ) -> t.PluginLogListReply:
        if params.plugin_id is not None:
            self._plugin(params.plugin_id)
        return t.PluginLogListReply(logs=[])

    async def _plugin_pane_open(self, id: str, params: t.PluginPaneOpenParams) -> Any:
        self._plugin(params.plugin_id)
        raise AnswerError(
            E.INVALID_PLUGIN_ENTRYPOINT,
            f"plugin {params.plugin_id} has no pane {params.entrypoint}",
        )

    async def _plugin_pane(self, id: str, params: Any) -> Any:
        raise AnswerError("plugin_pane_not_found", f"pane {params.pane_id} is not a plugin pane")
