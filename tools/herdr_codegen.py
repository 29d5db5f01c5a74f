"""Generate :mod:`shedproto.herdr.types` from herdr's published API schemas.

Usage::

    python tools/herdr_codegen.py SCHEMA [SCHEMA ...] [--out DIR] [--check]
    python tools/herdr_codegen.py P20 P21 tools/herdr-api.protocol22.delta.json

Each SCHEMA is one ``herdr-api.schema.json`` (the file carries its own
``protocol`` number) or a delta on one of them (``base_protocol`` set, see
:func:`apply_delta`; protocol 22 is :data:`DELTA_22`). The newest protocol's
types get plain names; a type
whose JSON differs in an older protocol (or that refers to such a type, or is
a union holding one) gets a twin suffixed ``P<n>`` (``RequestP20``). The
output is deterministic, so ``--check`` (exit 1 on drift) keeps the committed
module honest. The JSON Schema to msgspec mapping rules are in the
documentation: ``docs/architecture/decisions/herdr.rst`` (*Generated types*).

A development tool in the repository's ``tools/`` folder, not installed. The
typed methods are written once, for the async client; the blocking mixin is
their rewrite by ``tools/unasync.py``, as for the clients themselves.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import keyword
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "DELTA_22",
    "METHOD_RESULTS",
    "SchemaError",
    "apply_delta",
    "load_documents",
    "generate",
    "generate_files",
    "main",
]

TOOLS = Path(__file__).resolve().parent
DEFAULT_OUT = TOOLS.parent / "shedproto" / "herdr"
DELTA_22 = TOOLS / "herdr-api.protocol22.delta.json"
"""Protocol 22 reconstructed as a delta on protocol 21 (provenance inside the file)."""

UNION_SUFFIX = {
    "ResponseResult": "Reply",
    "EventData": "EventData",
    "Subscription": "Subscription",
    "EventMatch": "EventMatch",
    "AgentViewFilter": "Filter",
    "LayoutNode": "LayoutNode",
    "OutputMatch": "OutputMatch",
    "PaneMoveDestination": "Destination",
}
"""Name suffix of the member Structs of each tagged union."""

STREAM_METHODS = frozenset(
    {"events.subscribe", "pane.graphics.stream", "server.ssh_agent.register"}
)
"""Methods that hold the connection after their answer: the clients offer them by hand."""

METHOD_RESULTS: dict[str, tuple[str, ...]] = {
    "ping": ("pong",),
    "server.stop": ("ok",),
    "server.live_handoff": ("ok",),
    "server.reload_config": ("config_reload",),
    "server.ssh_agent.register": ("ok",),
    "server.agent_manifests": ("agent_manifest_status",),
    "server.reload_agent_manifests": ("agent_manifest_reload",),
    "notification.show": ("notification_show",),
    "client.window_title.set": ("client_window_title",),
    "client.window_title.clear": ("client_window_title",),
    "session.snapshot": ("session_snapshot",),
    "workspace.create": ("workspace_created",),
    "workspace.list": ("workspace_list",),
    "workspace.get": ("workspace_info",),
    "workspace.focus": ("workspace_info",),
    "workspace.rename": ("workspace_info",),
    "workspace.move": ("workspace_list",),
    "workspace.move_block": ("workspace_list",),
    "workspace.report_metadata": ("ok",),
    "workspace.close": ("ok",),
    "worktree.list": ("worktree_list",),
    "worktree.create": ("worktree_created",),
    "worktree.open": ("worktree_opened",),
    "worktree.remove": ("worktree_removed",),
    "tab.create": ("tab_created",),
    "tab.list": ("tab_list",),
    "tab.get": ("tab_info",),
    "tab.focus": ("tab_info",),
    "tab.rename": ("tab_info",),
    "tab.move": ("tab_list",),
    "tab.close": ("ok",),
    "agent.list": ("agent_list",),
    "agent.get": ("agent_info",),
    "agent.read": ("pane_read",),
    "agent.explain": ("agent_explain",),
    "agent.send_keys": ("ok",),
    "agent.rename": ("agent_info",),
    "agent.view.set": ("agent_view",),
    "agent.view.clear": ("agent_view",),
    "agent.focus": ("agent_info",),
    "agent.start": ("agent_started",),
    "agent.prompt": ("agent_prompted",),
    "agent.wait": ("agent_info",),
    "pane.split": ("pane_info",),
    "pane.swap": ("pane_swap",),
    "pane.move": ("pane_move",),
    "pane.zoom": ("pane_zoom",),
    "pane.layout": ("pane_layout",),
    "pane.process_info": ("pane_process_info",),
    "layout.export": ("layout_export",),
    "layout.apply": ("layout_apply",),
    "layout.set_split_ratio": ("layout_split_ratio_set",),
    "pane.neighbor": ("pane_neighbor",),
    "pane.edges": ("pane_edges",),
    "pane.focus_direction": ("pane_focus_direction",),
    "pane.resize": ("pane_resize",),
    "pane.list": ("pane_list",),
    "pane.current": ("pane_current",),
    "pane.get": ("pane_info",),
    "pane.focus": ("pane_info",),
    "pane.input.set": ("ok",),
    "pane.rename": ("pane_info",),
    "pane.send_text": ("ok",),
    "pane.send_keys": ("ok",),
    "pane.send_input": ("ok",),
    "pane.read": ("pane_read",),
    "pane.graphics.set": ("ok",),
    "pane.graphics.clear": ("ok",),
    "pane.graphics.info": ("pane_graphics_info",),
    "pane.graphics.stream": ("ok",),
    "pane.report_agent": ("ok",),
    "pane.report_agent_session": ("ok",),
    "pane.report_metadata": ("ok",),
    "pane.clear_agent_authority": ("ok",),
    "pane.release_agent": ("ok",),
    "pane.close": ("ok",),
    "popup.close": ("ok",),
    "events.subscribe": ("subscription_started",),
    "events.wait": ("wait_matched",),
    "pane.wait_for_output": ("output_matched",),
    "integration.install": ("integration_install",),
    "integration.uninstall": ("integration_uninstall",),
    "plugin.link": ("plugin_linked",),
    "plugin.list": ("plugin_list",),
    "plugin.unlink": ("plugin_unlinked",),
    "plugin.enable": ("plugin_enabled",),
    "plugin.disable": ("plugin_disabled",),
    "plugin.action.list": ("plugin_action_list",),
    "plugin.action.invoke": ("plugin_action_invoked",),
    "plugin.log.list": ("plugin_log_list",),
    "plugin.pane.open": ("plugin_pane_opened", "ok"),
    "plugin.pane.focus": ("plugin_pane_focused",),
    "plugin.pane.close": ("plugin_pane_closed",),
    "integration.list": ("integration_list",),
    "pane.scroll": ("ok",),
    "pane.clear": ("ok",),
    "pane.edit_scrollback": ("ok",),
    "pane.selection.read": ("pane_selection",),
    "pane.copy_motion": ("pane_copy_motion",),
    "pane.copy_search": ("pane_copy_search",),
    "pane.link.resolve": ("pane_link_resolved",),
    "pane.link.activate": ("pane_link_activated",),
    "command.invoke": ("ok",),
    "client_shell.surface.set": ("client_shell_surface_set",),
    "product_announcement.dismiss": ("ok",),
    "release_notes.dismiss": ("ok",),
}
"""Method -> the ``result.type`` tags a success answer can carry (from the digest)."""

FIELD_ORDER: dict[str, tuple[str, ...]] = {
    "AgentInfo": (
        "terminal_id",
        "name",
        "agent",
        "title",
        "terminal_title",
        "terminal_title_stripped",
        "display_agent",
        "agent_status",
        "screen_detection_skipped",
        "state_labels",
        "tokens",
        "agent_session",
        "workspace_id",
        "tab_id",
        "pane_id",
        "focused",
        "launch_pending",
        "interactive_ready",
        "state_change_seq",
        "cwd",
        "foreground_cwd",
        "revision",
    ),
    "AgentManifestInfo": (
        "agent",
        "source",
        "source_kind",
        "active_version",
        "cached_remote_version",
        "local_override_shadowing_remote",
        "remote_update_result",
        "remote_update_error",
        "remote_last_checked_unix",
        "warning",
    ),
    "PaneScrollParams": ("pane_id", "offset_from_bottom"),
    "PaneSelectionReadParams": ("pane_id", "anchor", "cursor", "content_revision"),
    "PaneCopyMotionParams": ("pane_id", "cursor", "motion", "content_revision"),
    "PaneCopySearchParams": (
        "pane_id",
        "query",
        "direction",
        "cursor",
        "content_revision",
        "previous",
    ),
    "PaneLinkActivateParams": (
        "pane_id",
        "viewport_row",
        "col",
        "content_revision",
        "offset_from_bottom",
    ),
    "PaneTextPoint": ("row", "col"),
    "PaneTextRange": ("start", "end"),
    "ProductAnnouncementDismissParams": ("version", "id"),
    "CommandInvokeParams": ("command_id", "pane_id", "tab_id", "workspace_id", "selection"),
    "AgentPromptParams": (
        "target",
        "text",
        "wait",
    ),
    "AgentPromptWaitOptions": (
        "until",
        "timeout_ms",
    ),
    "AgentReadParams": (
        "target",
        "source",
        "lines",
        "format",
        "strip_ansi",
    ),
    "AgentRenameParams": (
        "target",
        "name",
    ),
    "AgentSendKeysParams": (
        "target",
        "keys",
    ),
    "AgentSessionInfo": (
        "source",
        "agent",
        "kind",
        "value",
    ),
    "AgentStartParams": (
        "name",
        "kind",
        "pane_id",
        "args",
        "timeout_ms",
    ),
    "AgentTarget": ("target",),
    "AgentViewClearParams": ("source",),
    "AgentViewFilter:all": ("filters",),
    "AgentViewFilter:any": ("filters",),
    "AgentViewFilter:eq": (
        "field",
        "value",
    ),
    "AgentViewFilter:exists": ("field",),
    "AgentViewFilter:in": (
        "field",
        "values",
    ),
    "AgentViewFilter:not": ("filter",),
    "AgentViewSetParams": (
        "source",
        "label",
        "filter",
        "sort",
    ),
    "AgentViewSort": (
        "field",
        "order",
    ),
    "AgentWaitParams": (
        "target",
        "until",
        "timeout_ms",
    ),
    "ClientWindowTitleSetParams": ("title",),
    "EmptyParams": ("workspace_id",),
    "ErrorBody": (
        "code",
        "message",
    ),
    "EventData:layout_updated": ("layout",),
    "EventData:pane_agent_detected": (
        "pane_id",
        "workspace_id",
        "agent",
        "released",
        "final_status",
    ),
    "EventData:pane_agent_status_changed": (
        "pane_id",
        "workspace_id",
        "agent_status",
        "agent",
        "title",
        "display_agent",
        "state_labels",
    ),
    "EventData:pane_closed": (
        "pane_id",
        "workspace_id",
    ),
    "EventData:pane_created": ("pane",),
    "EventData:pane_exited": (
        "pane_id",
        "workspace_id",
    ),
    "EventData:pane_focused": (
        "pane_id",
        "workspace_id",
    ),
    "EventData:pane_moved": (
        "previous_pane_id",
        "previous_workspace_id",
        "previous_tab_id",
        "pane",
        "created_workspace",
        "created_tab",
        "closed_workspace_id",
        "closed_tab_id",
    ),
    "EventData:pane_output_changed": (
        "pane_id",
        "workspace_id",
        "revision",
    ),
    "EventData:pane_updated": ("pane",),
    "EventData:tab_closed": (
        "tab_id",
        "workspace_id",
    ),
    "EventData:tab_created": ("tab",),
    "EventData:tab_focused": (
        "tab_id",
        "workspace_id",
    ),
    "EventData:tab_moved": (
        "tab_id",
        "workspace_id",
        "insert_index",
        "tabs",
    ),
    "EventData:tab_renamed": (
        "tab_id",
        "workspace_id",
        "label",
    ),
    "EventData:workspace_closed": (
        "workspace_id",
        "workspace",
    ),
    "EventData:workspace_created": ("workspace",),
    "EventData:workspace_focused": ("workspace_id",),
    "EventData:workspace_metadata_updated": ("workspace",),
    "EventData:workspace_moved": (
        "workspace_id",
        "insert_index",
        "workspaces",
    ),
    "EventData:workspace_renamed": (
        "workspace_id",
        "label",
    ),
    "EventData:workspace_reordered": (
        "workspace_ids",
        "before_workspace_id",
        "workspaces",
    ),
    "EventData:workspace_updated": ("workspace",),
    "EventData:worktree_created": (
        "workspace",
        "worktree",
    ),
    "EventData:worktree_opened": (
        "workspace",
        "worktree",
        "already_open",
    ),
    "EventData:worktree_removed": (
        "workspace_id",
        "workspace",
        "worktree",
        "forced",
    ),
    "EventEnvelope": (
        "event",
        "data",
    ),
    "EventMatch:pane_agent_detected": (
        "pane_id",
        "agent",
    ),
    "EventMatch:pane_agent_status_changed": (
        "pane_id",
        "agent_status",
    ),
    "EventMatch:pane_closed": ("pane_id",),
    "EventMatch:pane_created": (
        "pane_id",
        "workspace_id",
    ),
    "EventMatch:pane_exited": ("pane_id",),
    "EventMatch:pane_focused": ("pane_id",),
    "EventMatch:pane_moved": ("pane_id",),
    "EventMatch:pane_output_changed": (
        "pane_id",
        "min_revision",
    ),
    "EventMatch:tab_closed": ("tab_id",),
    "EventMatch:tab_created": (
        "tab_id",
        "workspace_id",
    ),
    "EventMatch:tab_focused": ("tab_id",),
    "EventMatch:tab_moved": ("tab_id",),
    "EventMatch:tab_renamed": (
        "tab_id",
        "label",
    ),
    "EventMatch:workspace_closed": ("workspace_id",),
    "EventMatch:workspace_created": ("workspace_id",),
    "EventMatch:workspace_focused": ("workspace_id",),
    "EventMatch:workspace_moved": ("workspace_id",),
    "EventMatch:workspace_renamed": (
        "workspace_id",
        "label",
    ),
    "EventMatch:workspace_updated": ("workspace_id",),
    "EventsSubscribeParams": ("subscriptions",),
    "EventsWaitParams": (
        "match_event",
        "timeout_ms",
    ),
    "InstalledPluginInfo": (
        "plugin_id",
        "name",
        "version",
        "min_herdr_version",
        "description",
        "manifest_path",
        "plugin_root",
        "enabled",
        "platforms",
        "build",
        "startup",
        "actions",
        "events",
        "panes",
        "link_handlers",
        "source",
        "warnings",
    ),
    "IntegrationInstallParams": ("target",),
    "IntegrationInstallResult": ("messages",),
    "IntegrationUninstallParams": ("target",),
    "IntegrationUninstallResult": ("messages",),
    "LayoutApplyParams": (
        "workspace_id",
        "tab_id",
        "tab_label",
        "focus",
        "root",
    ),
    "LayoutDescription": (
        "workspace_id",
        "tab_id",
        "zoomed",
        "focused_pane_id",
        "root",
    ),
    "LayoutExportParams": (
        "tab_id",
        "pane_id",
    ),
    "LayoutNode:pane": ("pane",),
    "LayoutNode:split": (
        "direction",
        "ratio",
        "first",
        "second",
    ),
    "LayoutSetSplitRatioParams": (
        "tab_id",
        "pane_id",
        "path",
        "ratio",
    ),
    "NotificationShowParams": (
        "title",
        "body",
        "position",
        "sound",
    ),
    "PaneAgentStatusChangedEvent": (
        "pane_id",
        "workspace_id",
        "agent_status",
        "agent",
        "title",
        "display_agent",
        "state_labels",
    ),
    "PaneClearAgentAuthorityParams": (
        "pane_id",
        "source",
        "seq",
    ),
    "PaneCurrentParams": ("caller_pane_id",),
    "PaneEdgesParams": ("pane_id",),
    "PaneEdgesResult": (
        "pane_id",
        "left",
        "right",
        "up",
        "down",
        "layout",
    ),
    "PaneFocusDirectionParams": (
        "pane_id",
        "direction",
    ),
    "PaneFocusDirectionResult": (
        "changed",
        "reason",
        "source_pane_id",
        "focused_pane_id",
        "layout",
    ),
    "PaneGraphicsClearParams": (
        "pane_id",
        "layer_id",
    ),
    "PaneGraphicsPlacementParams": (
        "viewport_col",
        "viewport_row",
        "grid_cols",
        "grid_rows",
    ),
    "PaneGraphicsSetParams": (
        "pane_id",
        "layer_id",
        "z_index",
        "owner",
        "format",
        "image_width",
        "image_height",
        "data",
        "data_base64",
        "placement",
    ),
    "PaneInfo": (
        "pane_id",
        "terminal_id",
        "workspace_id",
        "tab_id",
        "focused",
        "cwd",
        "foreground_cwd",
        "restore_error",
        "label",
        "agent",
        "title",
        "terminal_title",
        "terminal_title_stripped",
        "display_agent",
        "agent_status",
        "state_labels",
        "tokens",
        "agent_session",
        "scroll",
        "revision",
    ),
    "PaneInputSetParams": (
        "pane_id",
        "right_click",
    ),
    "PaneLayoutPane": (
        "pane_id",
        "focused",
        "rect",
    ),
    "PaneLayoutParams": ("pane_id",),
    "PaneLayoutRect": (
        "x",
        "y",
        "width",
        "height",
    ),
    "PaneLayoutSnapshot": (
        "workspace_id",
        "tab_id",
        "zoomed",
        "area",
        "focused_pane_id",
        "panes",
        "splits",
    ),
    "PaneLayoutSplit": (
        "id",
        "direction",
        "ratio",
        "rect",
    ),
    "PaneListParams": ("workspace_id",),
    "PaneMoveDestination:new_tab": (
        "workspace_id",
        "label",
    ),
    "PaneMoveDestination:new_workspace": (
        "label",
        "tab_label",
    ),
    "PaneMoveDestination:tab": (
        "tab_id",
        "target_pane_id",
        "split",
        "ratio",
    ),
    "PaneMoveParams": (
        "pane_id",
        "destination",
        "focus",
    ),
    "PaneMoveResult": (
        "changed",
        "reason",
        "previous_pane_id",
        "previous_workspace_id",
        "previous_tab_id",
        "pane",
        "source_layout",
        "target_layout",
        "created_workspace",
        "created_tab",
        "closed_workspace_id",
        "closed_tab_id",
        "focused_pane_id",
    ),
    "PaneNeighborParams": (
        "pane_id",
        "direction",
    ),
    "PaneNeighborResult": (
        "pane_id",
        "direction",
        "neighbor_pane_id",
        "layout",
    ),
    "PaneOutputMatchedEvent": (
        "pane_id",
        "matched_line",
        "read",
    ),
    "PaneProcessInfo": (
        "pane_id",
        "shell_pid",
        "foreground_process_group_id",
        "tty",
        "foreground_processes",
    ),
    "PaneProcessInfoParams": ("pane_id",),
    "PaneProcessInfoProcess": (
        "pid",
        "name",
        "argv0",
        "argv",
        "cmdline",
        "cwd",
    ),
    "PaneReadParams": (
        "pane_id",
        "source",
        "lines",
        "format",
        "strip_ansi",
    ),
    "PaneReadResult": (
        "pane_id",
        "workspace_id",
        "tab_id",
        "source",
        "format",
        "text",
        "revision",
        "truncated",
    ),
    "PaneReleaseAgentParams": (
        "pane_id",
        "source",
        "agent",
        "seq",
    ),
    "PaneRenameParams": (
        "pane_id",
        "label",
    ),
    "PaneReportAgentParams": (
        "pane_id",
        "source",
        "agent",
        "state",
        "message",
        "seq",
        "agent_session_id",
        "agent_session_path",
    ),
    "PaneReportAgentSessionParams": (
        "pane_id",
        "source",
        "agent",
        "seq",
        "agent_session_id",
        "agent_session_path",
        "session_start_source",
    ),
    "PaneReportMetadataParams": (
        "pane_id",
        "source",
        "agent",
        "applies_to_source",
        "title",
        "display_agent",
        "state_labels",
        "tokens",
        "clear_title",
        "clear_display_agent",
        "clear_state_labels",
        "seq",
        "ttl_ms",
    ),
    "PaneResizeParams": (
        "pane_id",
        "direction",
        "amount",
    ),
    "PaneResizeResult": (
        "changed",
        "reason",
        "pane_id",
        "focused_pane_id",
        "layout",
    ),
    "PaneScrollChangedEvent": (
        "pane_id",
        "workspace_id",
        "scroll",
    ),
    "PaneScrollInfo": (
        "offset_from_bottom",
        "max_offset_from_bottom",
        "viewport_rows",
    ),
    "PaneSendInputParams": (
        "pane_id",
        "text",
        "keys",
    ),
    "PaneSendKeysParams": (
        "pane_id",
        "keys",
    ),
    "PaneSendTextParams": (
        "pane_id",
        "text",
    ),
    "PaneSplitParams": (
        "workspace_id",
        "target_pane_id",
        "direction",
        "ratio",
        "cwd",
        "focus",
        "right_click",
        "env",
    ),
    "PaneSwapParams": (
        "pane_id",
        "direction",
        "source_pane_id",
        "target_pane_id",
    ),
    "PaneSwapResult": (
        "changed",
        "reason",
        "source_pane_id",
        "target_pane_id",
        "focused_pane_id",
        "layout",
    ),
    "PaneTarget": ("pane_id",),
    "PaneWaitForOutputParams": (
        "pane_id",
        "source",
        "lines",
        "timeout_ms",
        "strip_ansi",
    ),
    "PaneZoomParams": (
        "pane_id",
        "mode",
    ),
    "PaneZoomResult": (
        "changed",
        "zoom_changed",
        "focus_changed",
        "reason",
        "pane_id",
        "focused_pane_id",
        "zoomed",
        "layout",
    ),
    "PingParams": (
        "import_exe",
        "expected_protocol",
        "expected_version",
    ),
    "PluginActionInfo": (
        "plugin_id",
        "action_id",
        "title",
        "description",
        "contexts",
        "command",
        "platforms",
    ),
    "PluginActionInvokeParams": (
        "action_id",
        "plugin_id",
        "context",
    ),
    "PluginActionListParams": ("plugin_id",),
    "PluginCommandLogInfo": (
        "log_id",
        "plugin_id",
        "action_id",
        "event",
        "command",
        "status",
        "started_unix_ms",
        "finished_unix_ms",
        "exit_code",
        "stdout",
        "stderr",
        "error",
    ),
    "PluginInvocationContext": (
        "workspace_id",
        "workspace_label",
        "workspace_cwd",
        "worktree",
        "tab_id",
        "tab_label",
        "focused_pane_id",
        "focused_pane_cwd",
        "focused_pane_agent",
        "focused_pane_status",
        "selected_text",
        "invocation_source",
        "correlation_id",
        "clicked_url",
        "link_handler_id",
    ),
    "PluginLinkParams": (
        "path",
        "enabled",
        "source",
    ),
    "PluginListParams": ("plugin_id",),
    "PluginLogListParams": (
        "plugin_id",
        "limit",
    ),
    "PluginManifestAction": (
        "id",
        "title",
        "description",
        "contexts",
        "platforms",
        "command",
    ),
    "PluginManifestBuild": (
        "platforms",
        "command",
    ),
    "PluginManifestEventHook": (
        "on",
        "platforms",
        "command",
    ),
    "PluginManifestLinkHandler": (
        "id",
        "title",
        "pattern",
        "action",
        "platforms",
    ),
    "PluginManifestPane": (
        "id",
        "title",
        "description",
        "platforms",
        "placement",
        "width",
        "height",
        "command",
    ),
    "PluginManifestStartup": (
        "platforms",
        "command",
    ),
    "PluginPaneCloseParams": ("pane_id",),
    "PluginPaneFocusParams": ("pane_id",),
    "PluginPaneInfo": (
        "plugin_id",
        "entrypoint",
        "pane",
    ),
    "PluginPaneOpenParams": (
        "plugin_id",
        "entrypoint",
        "placement",
        "width",
        "height",
        "workspace_id",
        "target_pane_id",
        "direction",
        "cwd",
        "focus",
        "env",
    ),
    "PluginSetEnabledParams": ("plugin_id",),
    "PluginSourceInfo": (
        "kind",
        "owner",
        "repo",
        "subdir",
        "requested_ref",
        "resolved_commit",
        "managed_path",
        "installed_unix_ms",
    ),
    "PluginUnlinkParams": ("plugin_id",),
    "ResponseResult:agent_explain": ("explain",),
    "ResponseResult:agent_info": ("agent",),
    "ResponseResult:agent_list": ("agents",),
    "ResponseResult:agent_manifest_reload": ("manifests",),
    "ResponseResult:agent_manifest_status": (
        "last_check_unix",
        "last_result",
        "manifests",
    ),
    "ResponseResult:agent_prompted": ("agent",),
    "ResponseResult:agent_started": (
        "agent",
        "argv",
    ),
    "ResponseResult:agent_view": (
        "active",
        "source",
        "label",
    ),
    "ResponseResult:client_window_title": (
        "changed",
        "reason",
    ),
    "ResponseResult:config_reload": (
        "status",
        "diagnostics",
    ),
    "ResponseResult:integration_install": (
        "target",
        "details",
    ),
    "ResponseResult:integration_uninstall": (
        "target",
        "details",
    ),
    "ResponseResult:layout_apply": ("layout",),
    "ResponseResult:layout_export": ("layout",),
    "ResponseResult:layout_split_ratio_set": ("layout",),
    "ResponseResult:notification_show": (
        "shown",
        "reason",
    ),
    "ResponseResult:output_matched": (
        "pane_id",
        "revision",
        "matched_line",
        "read",
    ),
    "ResponseResult:pane_current": ("pane",),
    "ResponseResult:pane_edges": ("edges",),
    "ResponseResult:pane_focus_direction": ("focus",),
    "ResponseResult:pane_graphics_frame_ack": (
        "sequence",
        "revision",
    ),
    "ResponseResult:pane_graphics_info": (
        "cell_width_px",
        "cell_height_px",
        "pane_visible",
        "file_frame_directory",
        "file_frame_formats",
        "file_frame_max_bytes",
        "file_frame_direct_max_bytes",
        "file_frame_damage",
        "max_layers_per_pane",
        "pixel_mouse",
        "file_frame_transport",
    ),
    "ResponseResult:pane_info": ("pane",),
    "ResponseResult:pane_layout": ("layout",),
    "ResponseResult:pane_list": ("panes",),
    "ResponseResult:pane_move": ("move_result",),
    "ResponseResult:pane_neighbor": ("neighbor",),
    "ResponseResult:pane_process_info": ("process_info",),
    "ResponseResult:pane_read": ("read",),
    "ResponseResult:pane_resize": ("resize",),
    "ResponseResult:pane_swap": ("swap",),
    "ResponseResult:pane_zoom": ("zoom",),
    "ResponseResult:plugin_action_invoked": (
        "action",
        "context",
        "log",
    ),
    "ResponseResult:plugin_action_list": ("actions",),
    "ResponseResult:plugin_disabled": ("plugin",),
    "ResponseResult:plugin_enabled": ("plugin",),
    "ResponseResult:plugin_linked": ("plugin",),
    "ResponseResult:plugin_list": ("plugins",),
    "ResponseResult:plugin_log_list": ("logs",),
    "ResponseResult:plugin_pane_closed": ("pane_id",),
    "ResponseResult:plugin_pane_focused": ("plugin_pane",),
    "ResponseResult:plugin_pane_opened": ("plugin_pane",),
    "ResponseResult:plugin_unlinked": (
        "plugin_id",
        "removed",
    ),
    "ResponseResult:pong": (
        "version",
        "protocol",
        "capabilities",
    ),
    "ResponseResult:session_snapshot": ("snapshot",),
    "ResponseResult:subscription_started": ("event",),
    "ResponseResult:tab_created": (
        "tab",
        "root_pane",
    ),
    "ResponseResult:tab_info": ("tab",),
    "ResponseResult:tab_list": ("tabs",),
    "ResponseResult:workspace_created": (
        "workspace",
        "tab",
        "root_pane",
    ),
    "ResponseResult:workspace_info": ("workspace",),
    "ResponseResult:workspace_list": ("workspaces",),
    "ResponseResult:worktree_created": (
        "workspace",
        "tab",
        "root_pane",
        "worktree",
    ),
    "ResponseResult:worktree_list": (
        "source",
        "worktrees",
    ),
    "ResponseResult:worktree_opened": (
        "workspace",
        "tab",
        "root_pane",
        "worktree",
        "already_open",
    ),
    "ResponseResult:worktree_removed": (
        "workspace_id",
        "path",
        "forced",
    ),
    "ServerCapabilities": (
        "live_handoff",
        "detached_server_daemon",
    ),
    "SessionSnapshot": (
        "version",
        "protocol",
        "focused_workspace_id",
        "focused_tab_id",
        "focused_pane_id",
        "workspaces",
        "tabs",
        "panes",
        "layouts",
        "agents",
    ),
    "Subscription:pane_agent_status_changed": (
        "pane_id",
        "agent_status",
    ),
    "Subscription:workspace_created": (
        "pane_id",
        "source",
        "lines",
        "match",
        "strip_ansi",
    ),
    "TabCreateParams": (
        "workspace_id",
        "cwd",
        "focus",
        "label",
        "env",
    ),
    "TabInfo": (
        "tab_id",
        "workspace_id",
        "number",
        "label",
        "focused",
        "pane_count",
        "agent_status",
    ),
    "TabListParams": ("workspace_id",),
    "TabMoveParams": (
        "tab_id",
        "insert_index",
    ),
    "TabRenameParams": (
        "tab_id",
        "label",
    ),
    "TabTarget": ("tab_id",),
    "WorkspaceCreateParams": (
        "cwd",
        "focus",
        "label",
        "env",
    ),
    "WorkspaceInfo": (
        "workspace_id",
        "number",
        "label",
        "focused",
        "pane_count",
        "tab_count",
        "active_tab_id",
        "agent_status",
        "tokens",
        "worktree",
    ),
    "WorkspaceMoveBlockParams": (
        "workspace_ids",
        "before_workspace_id",
    ),
    "WorkspaceMoveParams": (
        "workspace_id",
        "insert_index",
    ),
    "WorkspaceRenameParams": (
        "workspace_id",
        "label",
    ),
    "WorkspaceReportMetadataParams": (
        "workspace_id",
        "source",
        "tokens",
        "seq",
        "ttl_ms",
    ),
    "WorkspaceWorktreeInfo": (
        "repo_key",
        "repo_name",
        "repo_root",
        "checkout_path",
        "is_linked_worktree",
    ),
    "WorktreeCreateParams": (
        "workspace_id",
        "cwd",
        "branch",
        "base",
        "path",
        "label",
        "focus",
    ),
    "WorktreeInfo": (
        "path",
        "branch",
        "is_bare",
        "is_detached",
        "is_prunable",
        "is_linked_worktree",
        "open_workspace_id",
        "label",
    ),
    "WorktreeListParams": (
        "workspace_id",
        "cwd",
    ),
    "WorktreeOpenParams": (
        "workspace_id",
        "cwd",
        "path",
        "branch",
        "label",
        "focus",
    ),
    "WorktreeRemoveParams": (
        "workspace_id",
        "force",
    ),
    "WorktreeSourceInfo": (
        "repo_key",
        "repo_name",
        "repo_root",
        "source_checkout_path",
        "source_workspace_id",
    ),
}
"""Wire order of the fields herdr writes (its Rust declaration order), keyed by
``$def`` name or ``Union:tag``; fields not listed follow, required first, by name."""

ALWAYS_WRITTEN: dict[str, tuple[str, ...]] = {
    "ResponseResult:output_matched": ("matched_line",),
}
"""Optional fields herdr writes as ``null`` although the schema gives no default
(a bare ``Option<T>`` without ``skip_serializing_if``; the schema cannot tell)."""

INT_FORMATS = {
    "uint": ("UInt", 0, None),
    "uint8": ("UInt8", 0, 255),
    "uint16": ("UInt16", 0, 65535),
    "uint32": ("UInt32", 0, 4294967295),
    "uint64": ("UInt64", 0, None),
    "int32": ("Int32", -2147483648, 2147483647),
    "int64": ("Int64", -9223372036854775808, 9223372036854775807),
}
"""Integer ``format`` -> (alias name, minimum, maximum), as serde's integer types check."""


class SchemaError(ValueError):
    """The schema uses a construct the generator does not map."""


def camel(text: str) -> str:
    """``workspace.created`` / ``pane_output`` -> ``WorkspaceCreated`` / ``PaneOutput``."""
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[._\-\s]+", text) if part)


def _ref_name(ref: str) -> str:
    match = re.fullmatch(r"#/schemas/[a-z_]+/\$defs/([A-Za-z0-9_]+)", ref)
    if match is None:
        raise SchemaError(f"unsupported $ref {ref!r}")
    return match.group(1)


def _normalized(node: Any) -> Any:
    """``node`` with section-qualified refs reduced to the def name (for comparison)."""
    if isinstance(node, dict):
        return {
            key: (_ref_name(value) if key == "$ref" else _normalized(value))
            for key, value in node.items()
            if key not in ("description", "title")
        }
    if isinstance(node, list):
        return [_normalized(item) for item in node]
    return node


def _refs(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                found.add(_ref_name(value))
            else:
                found |= _refs(value)
    elif isinstance(node, list):
        for item in node:
            found |= _refs(item)
    return found


def _tag_of(member: dict[str, Any]) -> tuple[str, str] | None:
    consts = [
        (name, prop["const"])
        for name, prop in member.get("properties", {}).items()
        if isinstance(prop, dict) and "const" in prop
    ]
    return consts[0] if len(consts) == 1 else None


@dataclass
class Protocol:
    """One schema file: its protocol number and every ``$def`` (merged across sections)."""

    number: int
    defs: dict[str, Any]
    methods: list[tuple[str, str]]
    """(method, params def name) in schema order."""
    sections: dict[str, Any]


def apply_delta(base: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    """Return the schema document ``delta`` describes, built on ``base`` (not modified).

    A delta (``"base_protocol"`` set) carries: ``protocol``; ``request_methods``
    (every ``[method, params def]`` in schema order); ``defs`` per section
    (added or replaced); ``add_properties`` per section and def (optional
    fields added, last or after the property a spec's ``$after`` names);
    ``union_members`` per section and union (``order`` of the tags, ``add``
    the new members).

    Raises:
        SchemaError: the delta names a section, def or union tag the base lacks.

    """
    document: dict[str, Any] = json.loads(json.dumps(base))
    try:
        sections = document["schemas"]
        document["protocol"] = int(delta["protocol"])
        for section, defs in delta.get("defs", {}).items():
            sections[section]["$defs"].update(defs)
        for section, changes in delta.get("add_properties", {}).items():
            for name, props in changes.items():
                body = sections[section]["$defs"][name]
                for prop, spec in props.items():
                    body["properties"] = _insert_property(body["properties"], prop, spec)
        for section, unions in delta.get("union_members", {}).items():
            for name, change in unions.items():
                body = sections[section]["$defs"][name]
                members = {_tag_of(m)[1]: m for m in body["oneOf"]}  # type: ignore[index]
                members.update(change.get("add", {}))
                body["oneOf"] = [members[tag] for tag in change["order"]]
        methods = delta.get("request_methods")
        if methods is not None:
            sections["request"]["oneOf"] = [
                {
                    "properties": {
                        "method": {"const": method, "type": "string"},
                        "params": {"$ref": f"#/schemas/request/$defs/{params}"},
                    },
                    "required": ["method", "params"],
                    "type": "object",
                }
                for method, params in methods
            ]
    except (KeyError, TypeError, ValueError) as exc:
        number = delta.get("protocol")
        raise SchemaError(f"delta for protocol {number} does not apply: {exc!r}") from None
    return document


def _insert_property(properties: dict[str, Any], name: str, spec: dict[str, Any]) -> dict[str, Any]:
    """Add ``name``; a spec's ``$after`` key places it after that property (else last)."""
    spec = dict(spec)
    after = spec.pop("$after", None)
    if after is None:
        return {**properties, name: spec}
    if after not in properties:
        raise KeyError(f"$after {after!r}")
    out: dict[str, Any] = {}
    for key, value in properties.items():
        out[key] = value
        if key == after:
            out[name] = spec
    return out


def load_documents(paths: Sequence[Path]) -> list[tuple[Path, dict[str, Any]]]:
    """Read schema files and deltas; a delta becomes the document it describes.

    Raises:
        SchemaError: a delta whose base protocol is not among ``paths``.

    """
    raw = [(path, json.loads(path.read_text(encoding="utf-8"))) for path in paths]
    if not all(isinstance(document, dict) for _, document in raw):
        raise SchemaError("a schema file is not a JSON object")
    full = {d.get("protocol"): d for _, d in raw if "base_protocol" not in d}
    out = []
    for path, read in sorted(raw, key=lambda item: int(item[1].get("protocol", 0))):
        document = read
        if "base_protocol" in read:
            base = full.get(read["base_protocol"])
            if base is None:
                raise SchemaError(f"{path}: base protocol {read['base_protocol']} not given")
            document = apply_delta(base, read)
            full[document["protocol"]] = document
        out.append((path, document))
    return out


def load_protocol(path: Path, document: dict[str, Any] | None = None) -> Protocol:
    """Read one schema file (or take its already-read ``document``).

    Raises:
        SchemaError: two sections define one name differently, or the file lacks
            the expected top-level keys.

    """
    if document is None:
        document = json.loads(path.read_text(encoding="utf-8"))
    try:
        number = int(document["protocol"])
        sections = document["schemas"]
    except (KeyError, TypeError, ValueError) as exc:
        raise SchemaError(f"{path}: not a herdr API schema ({exc})") from None
    defs: dict[str, Any] = {}
    for section_name, section in sections.items():
        for name, body in section.get("$defs", {}).items():
            if name in defs and _normalized(defs[name]) != _normalized(body):
                raise SchemaError(f"{path}: {name} differs between sections ({section_name})")
            defs.setdefault(name, body)
    methods = []
    for member in sections["request"]["oneOf"]:
        props = member["properties"]
        methods.append((props["method"]["const"], _ref_name(props["params"]["$ref"])))
    return Protocol(number=number, defs=defs, methods=methods, sections=sections)


@dataclass
class Emitter:
    """Accumulates the generated module for all protocols."""

    newest: Protocol
    literals: dict[str, str] = field(default_factory=dict)
    classes: dict[str, str] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    int_aliases: set[str] = field(default_factory=set)
    struct_fields: dict[str, list[tuple[str, str, str, bool]]] = field(default_factory=dict)
    """Struct name -> (wire name, attribute, annotation, required) in field order."""
    # per version: def name -> emitted python name
    def_names: dict[int, dict[str, str]] = field(default_factory=dict)

    def type_expr(self, node: dict[str, Any] | bool, ctx: Context, hint: str) -> str:
        """Return the annotation for schema ``node``; ``hint`` names inline objects."""
        if node is True or node == {}:
            return "Any"
        if node is False:
            raise SchemaError(f"schema `false` at {hint}")
        if "$ref" in node:
            return ctx.ref(_ref_name(node["$ref"]))
        if "anyOf" in node or "oneOf" in node:
            options = node.get("anyOf") or node["oneOf"]
            parts = []
            for index, option in enumerate(options):
                parts.append(self.type_expr(option, ctx, f"{hint}{index}"))
            return _union(parts)
        if "enum" in node:
            return "Literal[" + ", ".join(json.dumps(v) for v in node["enum"]) + "]"
        if "const" in node:
            return f"Literal[{json.dumps(node['const'])}]"
        kinds = node.get("type")
        if isinstance(kinds, list):
            nullable = "null" in kinds
            rest = [k for k in kinds if k != "null"]
            if len(rest) != 1:
                raise SchemaError(f"unsupported type list {kinds!r}")
            inner = self.type_expr({**node, "type": rest[0]}, ctx, hint)
            return _union([inner, "None"]) if nullable else inner
        if kinds == "string":
            if "pattern" in node:
                return f"Annotated[str, Meta(pattern={json.dumps(node['pattern'])})]"
            return "str"
        if kinds == "boolean":
            return "bool"
        if kinds == "number":
            return "float"
        if kinds == "null":
            return "None"
        if kinds == "integer":
            fmt = node.get("format")
            if fmt is None:
                low, high = node.get("minimum"), node.get("maximum")
                if low is None and high is None:
                    return "int"
                bounds = ", ".join(
                    f"{k}={v}" for k, v in (("ge", low), ("le", high)) if v is not None
                )
                return f"Annotated[int, Meta({bounds})]"
            if fmt not in INT_FORMATS:
                raise SchemaError(f"unsupported integer format {fmt!r}")
            alias = INT_FORMATS[fmt][0]
            self.int_aliases.add(fmt)
            return alias
        if kinds == "array":
            items = node.get("items")
            if not isinstance(items, dict):
                raise SchemaError(f"array without items schema at {hint}")
            return f"list[{self.type_expr(items, ctx, hint + 'Item')}]"
        if kinds == "object":
            if "properties" in node:
                return ctx.inline_struct(node, hint)
            values = node.get("additionalProperties", True)
            value_type = "Any" if values is True else self.type_expr(values, ctx, hint + "Value")
            return f"dict[str, {value_type}]"
        raise SchemaError(f"unsupported schema node at {hint}: {json.dumps(node)[:120]}")


def _union(parts: list[str]) -> str:
    unique: list[str] = []
    for part in parts:
        if part not in unique:
            unique.append(part)
    if "None" in unique:
        unique = [p for p in unique if p != "None"] + ["None"]
    return " | ".join(unique)


@dataclass
class Context:
    """Name resolution for one protocol version."""

    emitter: Emitter
    protocol: Protocol
    suffix: str
    names: dict[str, str]
    """def name -> python name (shared or suffixed)."""
    versioned: set[str]
    """def names that get this version's suffix."""

    def ref(self, name: str) -> str:
        """Return the Python name a reference to def ``name`` resolves to."""
        if name not in self.protocol.defs:
            raise SchemaError(f"reference to unknown def {name}")
        return self.names[name]

    def inline_struct(self, node: dict[str, Any], hint: str) -> str:
        """Emit an anonymous object as a Struct named after its position."""
        props = sorted(node.get("required") or node.get("properties", {}))
        name = re.sub(r"\d+$", "", hint) + (
            camel(props[0]) if props and hint[-1:].isdigit() else ""
        )
        self.emitter_struct(name, node, tag=None)
        return name

    def emitter_struct(
        self, name: str, node: dict[str, Any], tag: tuple[str, str, str] | None
    ) -> None:
        """Emit class ``name`` for object ``node`` (``tag`` = field, value, base)."""
        emitter = self.emitter
        required = set(node.get("required", []))
        lines: list[tuple[int, str, str]] = []
        key = f"{tag[2]}:{tag[1]}" if tag else re.sub(r"P[0-9]+$", "", name)
        always = ALWAYS_WRITTEN.get(key, ())
        tag_field = tag[0] if tag else None
        for prop, schema in sorted(node.get("properties", {}).items(), key=lambda kv: kv[0]):
            if prop == tag_field:
                continue
            annotation = emitter.type_expr(schema, self, name + camel(prop))
            attr = prop + "_" if keyword.iskeyword(prop) else prop
            rename = f'name="{prop}"' if attr != prop else ""
            if prop in required:
                default = f" = msgspec.field({rename})" if rename else ""
                lines.append((0, f"    {attr}: {annotation}{default}", prop))
                continue
            if "default" in schema or prop in always:
                value = self.default_literal(schema, schema.get("default"), annotation)
                args = ", ".join(a for a in (f"default_factory=lambda: {value}", rename) if a)
                lines.append((1, f"    {attr}: {annotation} = msgspec.field({args})", prop))
                continue
            empty = _empty_default(schema, annotation)
            if empty == "UNSET":
                annotation += " | UnsetType"
            if rename:
                lines.append(
                    (
                        1,
                        f"    {attr}: {annotation} = msgspec.field(default={empty}, {rename})",
                        prop,
                    )
                )
            else:
                lines.append((1, f"    {attr}: {annotation} = {empty}", prop))
        wire_order = FIELD_ORDER.get(key) or FIELD_ORDER.get(key.replace(".", "_"))
        if wire_order:
            rank = {f: i for i, f in enumerate(wire_order)}
            lines.sort(key=lambda item: rank.get(item[2], len(rank)))
        else:
            lines.sort(key=lambda item: item[0])
        description = node.get("description") or (
            f"The ``{tag[1]}`` member of ``{tag[2]}``."
            if tag
            else f"herdr's ``{re.sub(r'P[0-9]+$', '', name)}``."
        )
        base = "LenientFrame"
        options = "frozen=True, kw_only=True, omit_defaults=True"
        if tag:
            options = f'tag_field="{tag[0]}", tag="{tag[1]}", ' + options
        body = [f"class {name}({base}, {options}):", f"    {_docstring(description)}"]
        if lines:
            body.append("")
            body += [line for _, line, _ in lines]
        text = "\n".join(body)
        emitter.struct_fields[name] = [
            (prop, prop + "_" if keyword.iskeyword(prop) else prop, _annotation_of(line), rank == 0)
            for rank, line, prop in lines
        ]
        previous = emitter.classes.get(name)
        if previous is not None and previous != text:
            raise SchemaError(f"two different classes would be named {name}")
        emitter.classes[name] = text

    def default_literal(self, schema: dict[str, Any], value: Any, annotation: str) -> str:
        """Return a Python expression building the schema default ``value``."""
        if isinstance(value, dict):
            target = _ref_name(schema["$ref"]) if "$ref" in schema else None
            if target is None:
                return repr(value)
            cls = self.ref(target)
            args = ", ".join(
                f"{k}={self.default_literal({}, v, '')}" for k, v in sorted(value.items())
            )
            return f"{cls}({args})"
        if isinstance(value, list):
            return "[]" if not value else repr(value)
        return json.dumps(value) if isinstance(value, str) else repr(value)


def _annotation_of(line: str) -> str:
    """Return the annotation part of an emitted field line (``name: annotation = ...``)."""
    annotation = line.split(":", 1)[1]
    return annotation.split(" = ", 1)[0].strip()


def _empty_default(schema: dict[str, Any], annotation: str) -> str:
    if annotation.endswith("| None"):
        return "None"
    kinds = schema.get("type")
    if kinds == "array":
        return "[]"
    if kinds == "object":
        return "{}"
    if kinds == "boolean":
        return "False"
    if kinds == "string":
        return '""'
    if kinds == "integer":
        return "0"
    if "$ref" in schema:
        return "UNSET"
    raise SchemaError(f"no empty default for optional field {json.dumps(schema)[:100]}")


def _docstring(text: str) -> str:
    text = " ".join(text.split()).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if not text.endswith((".", "!", "?")):
        text += "."
    text = text[:1].upper() + text[1:]
    if text.endswith('"'):
        text += " "
    return f'"""{text}"""'


def _versioned_defs(old: Protocol, new: Protocol) -> set[str]:
    """Def names of ``old`` that need their own twin: they differ, or refer to one that does."""
    differing = {
        name
        for name, body in old.defs.items()
        if name not in new.defs or _normalized(new.defs[name]) != _normalized(body)
    }
    changed = True
    while changed:
        changed = False
        for name, body in old.defs.items():
            if name not in differing and _refs(body) & differing:
                differing.add(name)
                changed = True
    return differing


def generate(paths: Sequence[Path]) -> str:
    """Return the generated types module for the schema files at ``paths``.

    Raises:
        SchemaError: see :func:`generate_files`.

    """
    return generate_files(paths)["types.py"]


def generate_files(paths: Sequence[Path]) -> dict[str, str]:
    """Return ``{file name: source}``: ``types.py`` and ``_methods.py`` for ``paths``.

    Raises:
        SchemaError: a schema construct the generator does not support, or two
            files with the same protocol number.

    """
    protocols = sorted(
        (load_protocol(path, document) for path, document in load_documents(paths)),
        key=lambda p: p.number,
    )
    numbers = [p.number for p in protocols]
    if len(set(numbers)) != len(numbers):
        raise SchemaError(f"duplicate protocol numbers {numbers}")
    newest = protocols[-1]
    emitter = Emitter(newest=newest)
    version_lines: list[str] = []
    for protocol in reversed(protocols):
        if protocol is newest:
            suffix, versioned = "", set(protocol.defs)
        else:
            suffix, versioned = f"P{protocol.number}", _versioned_defs(protocol, newest)
        names = {n: (n + suffix if n in versioned else n) for n in protocol.defs}
        ctx = Context(emitter, protocol, suffix, names, versioned)
        for name in sorted(versioned):
            _emit_def(ctx, name, protocol.defs[name])
        request_names = _emit_requests(ctx)
        version_lines.append(_version_table(ctx, request_names))
    return {
        "types.py": _render(emitter, protocols, version_lines),
        "_methods.py": _render_methods(emitter, newest),
    }


def _emit_def(ctx: Context, name: str, body: dict[str, Any]) -> None:
    emitter = ctx.emitter
    py_name = ctx.names[name]
    if "oneOf" in body and all(_tag_of(m) for m in body["oneOf"]):
        members = []
        base = name if name in UNION_SUFFIX else None
        if base is None:
            raise SchemaError(f"tagged union {name} has no member suffix in UNION_SUFFIX")
        for member in body["oneOf"]:
            tag_field, tag_value = _tag_of(member)  # type: ignore[misc]
            member_name = camel(tag_value) + UNION_SUFFIX[name] + ctx.suffix
            if member_name in ctx.protocol.defs:
                raise SchemaError(f"member {member_name} of {name} collides with a def")
            if ctx.suffix and not _member_differs(ctx, name, tag_value, member):
                member_name = camel(tag_value) + UNION_SUFFIX[name]
            else:
                ctx.emitter_struct(member_name, member, tag=(tag_field, tag_value, name))
            members.append(member_name)
        emitter.aliases[py_name] = _alias(py_name, members, body.get("description"))
        return
    if "properties" in body or (
        body.get("type") == "object" and "additionalProperties" not in body
    ):
        ctx.emitter_struct(py_name, body, tag=None)
        return
    if "enum" in body:
        values = ", ".join(json.dumps(v) for v in body["enum"])
        emitter.literals[py_name] = f"{py_name}: TypeAlias = Literal[{values}]"
        return
    annotation = emitter.type_expr(body, ctx, name)
    emitter.aliases[py_name] = f"{py_name}: TypeAlias = {annotation}"


def _member_differs(ctx: Context, union: str, tag: str, member: dict[str, Any]) -> bool:
    newest = ctx.emitter.newest.defs.get(union, {})
    for other in newest.get("oneOf", []):
        if _tag_of(other) == _tag_of(member):
            if _normalized(other) != _normalized(member):
                return True
            return bool(_refs(member) & ctx.versioned - {union})
    return True


def _alias(name: str, members: list[str], description: str | None) -> str:
    joined = " | ".join(members)
    del description
    return f"{name}: TypeAlias = {joined}"


def _emit_requests(ctx: Context) -> list[tuple[str, str]]:
    """One Struct per method: ``{id, method (tag), params}``; returns (method, class)."""
    out = []
    for method, params in ctx.protocol.methods:
        cls = camel(method) + "Request"
        params_type = ctx.ref(params)
        newest_params = dict(ctx.emitter.newest.methods).get(method)
        if ctx.suffix and params not in ctx.versioned and params == newest_params:
            out.append((method, cls))
            continue
        cls += ctx.suffix
        text = "\n".join(
            [
                f'class {cls}(Request, tag="{method}", frozen=True, kw_only=True):',
                f'    """A ``{method}`` request."""',
                "",
                f"    params: {params_type}",
            ]
        )
        ctx.emitter.classes[cls] = text
        out.append((method, cls))
    return out


def _version_table(ctx: Context, requests: list[tuple[str, str]]) -> str:
    n = ctx.protocol.number
    s = ctx.suffix
    lines = [f"REQUEST_TYPES_P{n}: dict[str, type[Request]] = {{"]
    lines += [f'    "{method}": {cls},' for method, cls in requests]
    lines.append("}")
    lines.append(f'"""Protocol {n}: method -> its request Struct, in schema order."""')
    lines.append("")
    lines.append(f"PARAMS_TYPES_P{n}: dict[str, Any] = {{")
    lines += [f'    "{method}": {ctx.ref(params)},' for method, params in ctx.protocol.methods]
    lines.append("}")
    lines.append(f'"""Protocol {n}: method -> its params type."""')
    lines.append("")
    union = " | ".join(c for _, c in requests)
    lines.append(f"AnyRequest{s}: TypeAlias = {union}")
    lines.append("")
    lines.append(f"DEFS_P{n}: dict[str, Any] = {{")
    lines += [f'    "{name}": {ctx.names[name]},' for name in sorted(ctx.protocol.defs)]
    lines.append("}")
    lines.append(f'"""Protocol {n}: every schema ``$def`` -> its Python type."""')
    return "\n".join(lines)


HEADER = '''\
# ruff: noqa: E501, RUF012
# This file is generated by `python tools/herdr_codegen.py`; do not edit.
"""herdr API types for protocols {numbers}, generated from the published schemas.

Every ``$def`` of each schema has a type here (:data:`DEFS_P{newest}` and its
siblings map schema names to them). The newest protocol's types have plain
names; a type that differs in an older protocol has a ``P<n>`` twin. Structs
ignore unknown fields, write required fields always, write fields with a
schema default always, and omit other optional fields when they are empty,
as herdr's serde attributes do.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

import msgspec
from msgspec import UNSET, Meta, UnsetType

from shedproto._codec import LenientFrame

METHOD_RESULTS: dict[str, tuple[str, ...]] = {results}
"""Method -> the ``result.type`` tags its success answer can carry."""


class Request(LenientFrame, tag_field="method", frozen=True, kw_only=True, omit_defaults=True):
    """Base of every request Struct: ``{{"id": ..., "method": ..., "params": {{...}}}}``."""

    id: str
'''


def _render(emitter: Emitter, protocols: list[Protocol], version_lines: list[str]) -> str:
    numbers = ", ".join(str(p.number) for p in protocols)
    results = "{\n" + "".join(f'    "{m}": {r!r},\n' for m, r in METHOD_RESULTS.items()) + "}"
    parts = [HEADER.format(numbers=numbers, newest=protocols[-1].number, results=results)]
    ints = []
    for fmt in sorted(emitter.int_aliases, key=lambda f: INT_FORMATS[f][0]):
        alias, low, high = INT_FORMATS[fmt]
        bounds = f"ge={low}" + (f", le={high}" if high is not None else "")
        ints.append(f"{alias}: TypeAlias = Annotated[int, Meta({bounds})]")
    parts.append("\n".join(ints))
    parts.append("\n".join(emitter.literals[k] for k in sorted(emitter.literals)))
    parts += [emitter.classes[k] for k in sorted(emitter.classes)]
    parts.append("\n".join(emitter.aliases[k] for k in sorted(emitter.aliases)))
    parts += version_lines
    newest = protocols[-1].number
    versions = ", ".join(
        f"{p.number}: (REQUEST_TYPES_P{p.number}, PARAMS_TYPES_P{p.number}, DEFS_P{p.number})"
        for p in protocols
    )
    parts.append(
        "PROTOCOL_TABLES: dict[int, tuple[dict[str, type[Request]], dict[str, Any], "
        "dict[str, Any]]] = {"
        + versions
        + "}\n"
        + '"""Protocol -> (request types, params types, defs) for every generated protocol."""'
    )
    unions = ", ".join(
        f"{p.number}: AnyRequest{'' if p.number == newest else f'P{p.number}'}" for p in protocols
    )
    parts.append(
        "REQUEST_UNIONS: dict[int, Any] = {"
        + unions
        + "}\n"
        + '"""Protocol -> the tagged union of its requests (exactly its method table)."""'
    )
    results = ", ".join(f'{p.number}: DEFS_P{p.number}["ResponseResult"]' for p in protocols)
    parts.append(
        "RESULT_UNIONS: dict[int, Any] = {"
        + results
        + "}\n"
        + '"""Protocol -> the tagged union of its success results (its ``ResponseResult``)."""'
    )
    parts.append(f"NEWEST_PROTOCOL = {newest}")
    return "\n\n\n".join(part for part in parts if part) + "\n"


METHODS_HEADER = '''\
# ruff: noqa: E501
# This file is generated by `python tools/herdr_codegen.py`; do not edit.
"""One typed method per herdr API method, for the async and the blocking client.

Each method builds the params Struct from its arguments (an argument left
as ``None`` takes the schema default), calls ``_call`` and returns the typed
result. The shells (:mod:`shedproto.clients.herdr`) implement ``_call``; a
server error answer raises :class:`~shedproto.herdr.HerdrApiError`.
``events.subscribe``, ``pane.graphics.stream`` and ``server.ssh_agent.register``
are not here: the clients offer ``subscribe()``, ``graphics_stream()`` and
``ssh_agent_register()``, which hold the connection.
``BlockingMethods`` is ``AsyncMethods`` rewritten by ``tools/unasync.py``.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import {typing_names}

from .types import (
{imports}
)

__all__ = ["AsyncMethods", "BlockingMethods"]

R = TypeVar("R")


def _params(params_type: type[R], **fields: Any) -> R:
    return params_type(**{{k: v for k, v in fields.items() if v is not None}})


{async_methods}


{blocking_methods}
'''

ASYNC_METHODS = '''\
class AsyncMethods:
    """Typed API methods of the async client (``await client.workspace_create(...)``)."""

    def _call(self, method: str, params: Any, result: Any) -> Awaitable[Any]:
        raise NotImplementedError
{methods}'''
"""The async mixin; the blocking one is its rewrite by ``tools/unasync.py``."""

_NAME = re.compile(r"\b[A-Z][A-Za-z0-9_]*\b")


def _render_methods(emitter: Emitter, newest: Protocol) -> str:
    """Render ``_methods.py``: typed wrappers for every method of the newest protocol."""
    names: set[str] = set()
    uses_literal = False
    async_parts: list[str] = []
    for method, params in newest.methods:
        if method in STREAM_METHODS:
            continue
        results = [camel(tag) + "Reply" for tag in METHOD_RESULTS[method]]
        fields = emitter.struct_fields.get(params, [])
        fields = [(w, a, ann.replace(" | UnsetType", ""), r) for w, a, ann, r in fields]
        required = [f for f in fields if f[3]]
        optional = [f for f in fields if not f[3]]
        args = [f"{attr}: {ann}" for _, attr, ann, _ in required]
        if optional:
            args.append("*")
            args += [
                f"{attr}: {ann if ann.endswith('| None') else ann + ' | None'} = None"
                for _, attr, ann, _ in optional
            ]
        for _, _, ann, _ in fields:
            names.update(_NAME.findall(ann))
            uses_literal = uses_literal or "Literal[" in ann
        names.update(results)
        names.add(params)
        signature = ", ".join(["self", *args])
        returns = " | ".join(results)
        call_args = ", ".join(f"{attr}={attr}" for _, attr, _, _ in fields)
        build = f"_params({params}, {call_args})" if call_args else f"{params}()"
        result_arg = results[0] if len(results) == 1 else "(" + ", ".join(results) + ")"
        name = method.replace(".", "_")
        tags = "``/``".join(METHOD_RESULTS[method])
        doc = f'        """Call ``{method}``; return its ``{tags}`` result."""'
        call = f'self._call("{method}", {build}, {result_arg})'
        async_parts.append(
            f"\n    async def {name}({signature}) -> {returns}:\n{doc}\n"
            f"        result: {returns} = await {call}\n        return result"
        )
    names -= {"Literal", "Any", "None"}
    imports = "\n".join(f"    {n}," for n in sorted(names, key=lambda n: (n.lower(), n)))
    async_class = ASYNC_METHODS.format(methods="\n".join(async_parts))
    return METHODS_HEADER.format(
        typing_names="Any, Literal, TypeVar" if uses_literal else "Any, TypeVar",
        imports=imports,
        async_methods=async_class,
        blocking_methods=_unasync_text(async_class).replace(
            "of the async client", "of the blocking client"
        ),
    )


def _unasync_text(text: str) -> str:
    """Rewrite async source into its blocking twin with ``tools/unasync.py`` (loaded by path)."""
    spec = importlib.util.spec_from_file_location("_herdr_codegen_unasync", TOOLS / "unasync.py")
    if spec is None or spec.loader is None:
        raise OSError(f"cannot load {TOOLS / 'unasync.py'}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rewritten: str = module.unasync_text(text)
    return rewritten


def main(argv: Sequence[str] | None = None) -> int:
    """Generate (or ``--check``) the types module; return the exit code."""
    parser = argparse.ArgumentParser(prog="python tools/herdr_codegen.py")
    parser.add_argument("schemas", nargs="+", type=Path, metavar="SCHEMA")
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="directory (default: shedproto/herdr)"
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if a module would change")
    args = parser.parse_args(argv)
    try:
        files = generate_files(args.schemas)
    except (OSError, SchemaError, json.JSONDecodeError) as exc:
        sys.stderr.write(f"codegen: error: {exc}\n")
        return 1
    out: Path = args.out
    stale = []
    for name, source in files.items():
        target = out / name
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        if current == source:
            continue
        stale.append(target)
        if not args.check:
            target.write_text(source, encoding="utf-8")
            sys.stdout.write(f"wrote {target} ({source.count(chr(10))} lines)\n")
    if args.check and stale:
        sys.stderr.write("codegen: out of date: " + ", ".join(map(str, stale)) + "\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
