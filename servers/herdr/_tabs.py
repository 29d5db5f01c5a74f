"""The ``tab.*`` handlers: create, list, get, focus, rename, close, move."""

from __future__ import annotations

from shedproto.herdr import types as t

from ._state import AnswerError, E, ServerState

HANDLERS: dict[str, str] = {
    "tab.create": "_tab_create",
    "tab.list": "_tab_list",
    "tab.get": "_tab_get",
    "tab.focus": "_tab_focus",
    "tab.rename": "_tab_rename",
    "tab.close": "_tab_close",
    "tab.move": "_tab_move",
}
"""Method -> the name of the coroutine here that answers it."""


class TabHandlers(ServerState):
    """The ``tab.*`` handlers: create, list, get, focus, rename, close, move."""

    async def _tab_create(self, id: str, params: t.TabCreateParams) -> t.TabCreatedReply:
        self._check_env(params.env)
        if params.workspace_id is not None:
            ws = self._find_workspace(params.workspace_id)
        elif self.active is not None:
            ws = self.active
        else:
            raise AnswerError(E.WORKSPACE_NOT_FOUND, "no active workspace")
        # herdr: the new tab follows the workspace's focused pane (src/app/api/tabs.rs:65@1c76079f)
        cwd = params.cwd or self._follow_cwd(ws.active_tab.focused_pane if ws.active_tab else None)
        tab = ws.new_tab(params.label)
        try:
            pane = self._spawn(ws, tab, cwd, params.env)
        except AnswerError as failure:
            ws.tabs.remove(tab)
            raise AnswerError(E.TAB_CREATE_FAILED, failure.message) from None
        tab.root = tab.focused_pane = pane
        self.hub.emit(t.TabCreatedEventData(tab=self._tab_info(tab)))
        self.hub.emit(t.PaneCreatedEventData(pane=self._pane_info(pane)))
        self._emit_layout(tab)
        if params.focus:
            self._focus_pane(pane)
        return t.TabCreatedReply(tab=self._tab_info(tab), root_pane=self._pane_info(pane))

    async def _tab_list(self, id: str, params: t.TabListParams) -> t.TabListReply:
        spaces = (
            [self._find_workspace(params.workspace_id)] if params.workspace_id else self.workspaces
        )
        return t.TabListReply(tabs=[self._tab_info(tab) for ws in spaces for tab in ws.tabs])

    async def _tab_get(self, id: str, params: t.TabTarget) -> t.TabInfoReply:
        return t.TabInfoReply(tab=self._tab_info(self._find_tab(params.tab_id)))

    async def _tab_focus(self, id: str, params: t.TabTarget) -> t.TabInfoReply:
        tab = self._find_tab(params.tab_id)
        if tab.focused_pane is not None:
            self._focus_pane(tab.focused_pane)
        return t.TabInfoReply(tab=self._tab_info(tab))

    async def _tab_rename(self, id: str, params: t.TabRenameParams) -> t.TabInfoReply:
        tab = self._find_tab(params.tab_id)
        tab.label = params.label
        self.hub.emit(
            t.TabRenamedEventData(tab_id=tab.id, workspace_id=tab.workspace.id, label=params.label)
        )
        return t.TabInfoReply(tab=self._tab_info(tab))

    async def _tab_close(self, id: str, params: t.TabTarget) -> t.OkReply:
        tab = self._find_tab(params.tab_id)
        if len(tab.workspace.tabs) == 1:
            self._refuse_implicit_group_close(tab.workspace, "tab")
        await self._close_all(tab.panes())
        return t.OkReply()

    async def _tab_move(self, id: str, params: t.TabMoveParams) -> t.TabListReply:
        tab = self._find_tab(params.tab_id)
        ws = tab.workspace
        ws.tabs.remove(tab)
        ws.tabs.insert(min(params.insert_index, len(ws.tabs)), tab)
        tabs = [self._tab_info(x) for x in ws.tabs]
        self.hub.emit(
            t.TabMovedEventData(
                tab_id=tab.id, workspace_id=ws.id, insert_index=ws.tabs.index(tab), tabs=tabs
            )
        )
        return t.TabListReply(tabs=tabs)
