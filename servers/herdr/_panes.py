"""The pane handlers of the herdr reference server.

Split, list, get, focus, rename, close, current, input settings, process info and
reported metadata.
"""

from __future__ import annotations

from shedproto.herdr import types as t

from ._model import Split
from ._procinfo import process_info
from ._state import AnswerError, E, ServerState, apply_tokens
from ._tree import replace_leaf

HANDLERS: dict[str, str] = {
    "pane.split": "_pane_split",
    "pane.list": "_pane_list",
    "pane.get": "_pane_get",
    "pane.focus": "_pane_focus",
    "pane.rename": "_pane_rename",
    "pane.close": "_pane_close",
    "pane.process_info": "_pane_process_info",
    "pane.report_metadata": "_pane_report_metadata",
    "pane.input.set": "_pane_input_set",
    "pane.current": "_pane_current",
}
"""Method -> the name of the coroutine here that answers it."""


class PaneHandlers(ServerState):
    """The ``pane.*`` lifecycle and identity handlers."""

    async def _pane_split(self, id: str, params: t.PaneSplitParams) -> t.PaneInfoReply:
        self._check_env(params.env)
        if params.ratio is not None and not 0.0 < params.ratio < 1.0:
            raise AnswerError(E.INVALID_RATIO, f"ratio must be between 0 and 1, got {params.ratio}")
        if params.target_pane_id is not None:
            target = self._find_pane(params.target_pane_id)
        elif params.workspace_id is not None:
            ws = self._find_workspace(params.workspace_id)
            if ws.active_tab is None or ws.active_tab.focused_pane is None:
                raise AnswerError(E.NO_ACTIVE_PANE, f"workspace {ws.id} has no focused pane")
            target = ws.active_tab.focused_pane
        else:
            target = self._focused_pane()
        tab, ws = target.tab, target.workspace
        # herdr: the new pane follows the pane it splits (src/app/api/panes.rs:54@1c76079f)
        pane = self._spawn(ws, tab, params.cwd or self._follow_cwd(target), params.env)
        split = Split(
            id=f"s{next(tab.split_ids)}",
            direction=params.direction,
            ratio=0.5 if params.ratio is None else params.ratio,
            first=target,
            second=pane,
        )
        tab.root = replace_leaf(tab.root, target, split)
        self._resize(tab)
        self.hub.emit(t.PaneCreatedEventData(pane=self._pane_info(pane)))
        self._emit_layout(tab)
        if params.focus:
            self._focus_pane(pane)
        return t.PaneInfoReply(pane=self._pane_info(pane))

    async def _pane_list(self, id: str, params: t.PaneListParams) -> t.PaneListReply:
        spaces = (
            [self._find_workspace(params.workspace_id)] if params.workspace_id else self.workspaces
        )
        return t.PaneListReply(panes=[self._pane_info(p) for ws in spaces for p in ws.panes()])

    async def _pane_get(self, id: str, params: t.PaneTarget) -> t.PaneInfoReply:
        return t.PaneInfoReply(pane=self._pane_info(self._find_pane(params.pane_id)))

    async def _pane_focus(self, id: str, params: t.PaneTarget) -> t.PaneInfoReply:
        pane = self._find_pane(params.pane_id)
        self._focus_pane(pane)
        return t.PaneInfoReply(pane=self._pane_info(pane))

    async def _pane_rename(self, id: str, params: t.PaneRenameParams) -> t.PaneInfoReply:
        pane = self._find_pane(params.pane_id)
        pane.label = params.label or None
        return t.PaneInfoReply(pane=self._pane_updated(pane))

    async def _pane_close(self, id: str, params: t.PaneTarget) -> t.OkReply:
        pane = self._find_pane(params.pane_id)
        if pane.workspace.panes() == [pane]:
            self._refuse_implicit_group_close(pane.workspace, "pane")
        await self._close_pane(pane)
        return t.OkReply()

    async def _pane_current(self, id: str, params: t.PaneCurrentParams) -> t.PaneCurrentReply:
        pane = self._pane_or_focused(params.caller_pane_id)
        return t.PaneCurrentReply(pane=self._pane_info(pane))

    async def _pane_input_set(self, id: str, params: t.PaneInputSetParams) -> t.OkReply:
        self._find_pane(params.pane_id).right_click = params.right_click
        return t.OkReply()

    async def _pane_process_info(
        self, id: str, params: t.PaneProcessInfoParams
    ) -> t.PaneProcessInfoReply:
        pane = self._pane_or_focused(params.pane_id)
        info = process_info(pane.id, pane.process.pid, pane.process.master)
        return t.PaneProcessInfoReply(process_info=info)

    async def _pane_report_metadata(self, id: str, params: t.PaneReportMetadataParams) -> t.OkReply:
        pane = self._find_pane(params.pane_id)
        self._check_source(params.source)
        if params.clear_title:
            pane.title = None
        if params.title is not None:
            pane.title = params.title
        if params.clear_display_agent:
            pane.display_agent = None
        if params.display_agent is not None:
            pane.display_agent = params.display_agent
        if params.clear_state_labels:
            pane.state_labels.clear()
        pane.state_labels.update(params.state_labels)
        apply_tokens(pane.tokens, params.tokens)
        self._pane_updated(pane)
        return t.OkReply()
