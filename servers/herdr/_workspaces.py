"""The ``workspace.*`` handlers: create, list, get, focus, rename, close, move, metadata."""

from __future__ import annotations

import os
from typing import Any

from shedproto.herdr import GROUP_CLOSE_REQUIRED_MESSAGE
from shedproto.herdr import types as t

from ._model import Workspace, new_workspace_id
from ._state import AnswerError, E, ServerState, apply_tokens

HANDLERS: dict[str, str] = {
    "workspace.create": "_workspace_create",
    "workspace.list": "_workspace_list",
    "workspace.get": "_workspace_get",
    "workspace.focus": "_workspace_focus",
    "workspace.rename": "_workspace_rename",
    "workspace.close": "_workspace_close",
    "workspace.report_metadata": "_workspace_report_metadata",
    "workspace.move": "_workspace_move",
    "workspace.move_block": "_workspace_move_block",
}
"""Method -> the name of the coroutine here that answers it."""


class WorkspaceHandlers(ServerState):
    """The ``workspace.*`` handlers: create, list, get, focus, rename, close, move, metadata."""

    def _creation_follow_cwd(self, params: t.WorkspaceCreateParams) -> str | None:
        """Return the directory a new workspace follows (herdr's ``handle_workspace_create``).

        The source workspace (``source_workspace_id``, else the active one):
        its focused pane's directory, else its first pane's
        (herdrdev/herdr ``src/app/api/workspaces.rs:46@1c76079f``).
        """
        source_id = getattr(params, "source_workspace_id", None)
        source = self.active
        if source_id is not None:
            source = next((ws for ws in self.workspaces if ws.id == source_id), None)
        if source is None:
            return None
        focused = source.active_tab.focused_pane if source.active_tab else None
        panes = source.panes()
        return self._follow_cwd(focused) or (self._follow_cwd(panes[0]) if panes else None)

    async def _workspace_create(
        self,
        id: str,
        params: t.WorkspaceCreateParams,
        *,
        worktree: t.WorkspaceWorktreeInfo | None = None,
    ) -> t.WorkspaceCreatedReply:
        """Create a workspace with one tab and one pane (``worktree``: its group membership).

        The membership is set before the creation events, so ``workspace_created``
        carries it (herdrdev/herdr src/app/api/worktrees.rs:127-153@v0.8.2).
        """
        self._check_env(params.env)
        number = next(self._workspace_numbers)
        cwd = params.cwd or self._creation_follow_cwd(params) or self.cwd
        label = params.label or (os.path.basename(cwd.rstrip("/")) or cwd)
        ws = Workspace(number=number, id=new_workspace_id(number), label=label, worktree=worktree)
        tab = ws.new_tab(None)
        try:
            pane = self._spawn(ws, tab, cwd, params.env)
        except AnswerError as failure:
            raise AnswerError(E.WORKSPACE_CREATE_FAILED, failure.message) from None
        tab.root = tab.focused_pane = pane
        ws.active_tab = tab
        self.workspaces.append(ws)
        self.hub.emit(t.WorkspaceCreatedEventData(workspace=self._ws_info(ws)))
        self.hub.emit(t.TabCreatedEventData(tab=self._tab_info(tab)))
        self.hub.emit(t.PaneCreatedEventData(pane=self._pane_info(pane)))
        self._emit_layout(tab)
        if params.focus or self.active is None:
            self._focus_pane(pane)
        return t.WorkspaceCreatedReply(
            workspace=self._ws_info(ws), tab=self._tab_info(tab), root_pane=self._pane_info(pane)
        )

    async def _workspace_list(self, id: str, params: Any) -> t.WorkspaceListReply:
        return t.WorkspaceListReply(workspaces=[self._ws_info(ws) for ws in self.workspaces])

    async def _workspace_get(self, id: str, params: t.WorkspaceTarget) -> t.WorkspaceInfoReply:
        return t.WorkspaceInfoReply(
            workspace=self._ws_info(self._find_workspace(params.workspace_id))
        )

    async def _workspace_focus(self, id: str, params: t.WorkspaceTarget) -> t.WorkspaceInfoReply:
        ws = self._find_workspace(params.workspace_id)
        tab = ws.active_tab
        if tab is not None and tab.focused_pane is not None:
            self._focus_pane(tab.focused_pane)
        return t.WorkspaceInfoReply(workspace=self._ws_info(ws))

    async def _workspace_rename(
        self, id: str, params: t.WorkspaceRenameParams
    ) -> t.WorkspaceInfoReply:
        ws = self._find_workspace(params.workspace_id)
        ws.label = params.label
        self.hub.emit(t.WorkspaceRenamedEventData(workspace_id=ws.id, label=ws.label))
        return t.WorkspaceInfoReply(workspace=self._ws_info(ws))

    async def _workspace_close(self, id: str, params: Any) -> t.OkReply:
        """Close a workspace, or its whole worktree group when it is the group's primary.

        From 0.9.0 (``release.group_close_intent``) a group closes only with
        ``close_group: true``; otherwise the answer is
        ``workspace_group_close_required`` and nothing closes. 0.8.2 closes
        the group unasked and announces only the target (herdrdev/herdr
        src/app/actions.rs:1680-1697, src/app/api/workspaces.rs:318-328@v0.8.2).
        """
        ws = self._find_workspace(params.workspace_id)
        members = self._group_of(ws)
        if len(members) > 1 and self.release.group_close_intent:
            if not getattr(params, "close_group", False):
                raise AnswerError(E.WORKSPACE_GROUP_CLOSE_REQUIRED, GROUP_CLOSE_REQUIRED_MESSAGE)
        elif len(members) > 1:
            for member in members:
                member.announce_close = member is ws
        for member in members:
            await self._close_all(member.panes())
        return t.OkReply()

    async def _workspace_move(self, id: str, params: t.WorkspaceMoveParams) -> t.WorkspaceListReply:
        ws = self._find_workspace(params.workspace_id)
        self.workspaces.remove(ws)
        self.workspaces.insert(min(params.insert_index, len(self.workspaces)), ws)
        infos = [self._ws_info(x) for x in self.workspaces]
        self.hub.emit(
            t.WorkspaceMovedEventData(
                workspace_id=ws.id, insert_index=self.workspaces.index(ws), workspaces=infos
            )
        )
        return t.WorkspaceListReply(workspaces=infos)

    async def _workspace_move_block(
        self, id: str, params: t.WorkspaceMoveBlockParams
    ) -> t.WorkspaceListReply:
        block = [self._find_workspace(ref) for ref in params.workspace_ids]
        if not block or len({w.id for w in block}) != len(block):
            raise AnswerError(E.WORKSPACE_MOVE_FAILED, "workspace_ids must be distinct, not empty")
        before = (
            None
            if params.before_workspace_id is None
            else self._find_workspace(params.before_workspace_id)
        )
        if before in block:
            raise AnswerError(E.WORKSPACE_MOVE_FAILED, "cannot move a block before itself")
        rest = [w for w in self.workspaces if w not in block]
        at = rest.index(before) if before is not None else len(rest)
        self.workspaces[:] = rest[:at] + block + rest[at:]
        infos = [self._ws_info(x) for x in self.workspaces]
        self.hub.emit(
            t.WorkspaceReorderedEventData(
                workspace_ids=[w.id for w in block],
                before_workspace_id=before.id if before else None,
                workspaces=infos,
            )
        )
        return t.WorkspaceListReply(workspaces=infos)

    async def _workspace_report_metadata(
        self, id: str, params: t.WorkspaceReportMetadataParams
    ) -> t.OkReply:
        ws = self._find_workspace(params.workspace_id)
        self._check_source(params.source)
        apply_tokens(ws.tokens, params.tokens)
        self.hub.emit(t.WorkspaceMetadataUpdatedEventData(workspace=self._ws_info(ws)))
        return t.OkReply()
