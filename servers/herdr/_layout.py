"""The layout handlers of the herdr reference server.

``pane.layout``, ``layout.*``, zoom, neighbours, edges, directional focus, resize, swap
and ``pane.move``.
"""

from __future__ import annotations

import os
import shlex

from shedproto.herdr import types as t

from ._model import Pane, Split, Tab, Workspace, new_workspace_id
from ._state import AnswerError, E, ServerState
from ._tree import beside, move_edge, remove_leaf, replace_leaf, swap_leaves

HANDLERS: dict[str, str] = {
    "pane.layout": "_pane_layout",
    "pane.zoom": "_pane_zoom",
    "layout.export": "_layout_export",
    "pane.neighbor": "_pane_neighbor",
    "pane.edges": "_pane_edges",
    "pane.focus_direction": "_pane_focus_direction",
    "pane.resize": "_pane_resize",
    "pane.swap": "_pane_swap",
    "layout.set_split_ratio": "_set_split_ratio",
    "pane.move": "_pane_move",
    "layout.apply": "_layout_apply",
}
"""Method -> the name of the coroutine here that answers it."""


class LayoutHandlers(ServerState):
    """The layout, geometry and pane-move handlers."""

    async def _pane_layout(self, id: str, params: t.PaneLayoutParams) -> t.PaneLayoutReply:
        pane = self._find_pane(params.pane_id) if params.pane_id else self._focused_pane()
        return t.PaneLayoutReply(layout=self._layout(pane.tab))

    async def _layout_export(self, id: str, params: t.LayoutExportParams) -> t.LayoutExportReply:
        tab = self._tab_of(params.tab_id, params.pane_id)
        if tab.root is None:
            raise AnswerError(E.PANE_LAYOUT_UNAVAILABLE, "pane layout unavailable")

        def node(item: Split | Pane) -> t.LayoutNode:
            if isinstance(item, Pane):
                return t.PaneLayoutNode(pane_id=item.id, cwd=item.cwd, label=item.label)
            return t.SplitLayoutNode(
                direction=item.direction, ratio=item.ratio,
                first=node(item.first), second=node(item.second),
            )  # fmt: skip

        focused = tab.focused_pane.id if tab.focused_pane else ""
        layout = t.LayoutDescription(
            workspace_id=tab.workspace.id, tab_id=tab.id, zoomed=tab.zoomed,
            focused_pane_id=focused, root=node(tab.root),
        )  # fmt: skip
        return t.LayoutExportReply(layout=layout)

    async def _pane_zoom(self, id: str, params: t.PaneZoomParams) -> t.PaneZoomReply:
        pane = self._pane_or_focused(params.pane_id)
        tab = pane.tab
        focus_changed = tab.focused_pane is not pane
        want = {"on": True, "off": False}.get(params.mode, not tab.zoomed)
        reason: t.PaneZoomReason | None = None
        if want and len(tab.panes()) < 2:
            reason, want = "single_pane", tab.zoomed
        elif want == tab.zoomed:
            reason = "already_zoomed" if want else "already_unzoomed"
        zoom_changed = want != tab.zoomed
        tab.zoomed = want
        self._focus_pane(pane)
        if zoom_changed or focus_changed:
            self._emit_layout(tab)
        result = t.PaneZoomResult(
            changed=zoom_changed or focus_changed,
            zoom_changed=zoom_changed,
            focus_changed=focus_changed,
            reason=reason if not (zoom_changed or focus_changed) else None,
            pane_id=pane.id,
            focused_pane_id=pane.id,
            zoomed=tab.zoomed,
            layout=self._layout(tab),
        )
        return t.PaneZoomReply(zoom=result)

    def _rects(self, tab: Tab) -> dict[str, t.PaneLayoutRect]:
        return {entry.pane_id: entry.rect for entry in self._layout(tab).panes}

    def _neighbor(self, pane: Pane, direction: str) -> Pane | None:
        """Return the pane beside ``pane`` in ``direction``: most overlap, then nearest."""
        rects = self._rects(pane.tab)
        own = rects[pane.id]
        best: tuple[int, int, Pane] | None = None
        for other in pane.tab.panes():
            if other is pane:
                continue
            found = beside(own, rects[other.id], direction)
            if found is not None and (best is None or found > best[:2]):
                best = (*found, other)
        return best[2] if best else None

    async def _pane_neighbor(self, id: str, params: t.PaneNeighborParams) -> t.PaneNeighborReply:
        pane = self._pane_or_focused(params.pane_id)
        other = self._neighbor(pane, params.direction)
        return t.PaneNeighborReply(
            neighbor=t.PaneNeighborResult(
                pane_id=pane.id, direction=params.direction,
                neighbor_pane_id=other.id if other else None, layout=self._layout(pane.tab),
            )
        )  # fmt: skip

    async def _pane_edges(self, id: str, params: t.PaneEdgesParams) -> t.PaneEdgesReply:
        pane = self._pane_or_focused(params.pane_id)
        rect = self._rects(pane.tab)[pane.id]
        edges = t.PaneEdgesResult(
            pane_id=pane.id,
            left=rect.x == 0,
            right=rect.x + rect.width >= self.area.cols,
            up=rect.y == 0,
            down=rect.y + rect.height >= self.area.rows,
            layout=self._layout(pane.tab),
        )
        return t.PaneEdgesReply(edges=edges)

    async def _pane_focus_direction(
        self, id: str, params: t.PaneFocusDirectionParams
    ) -> t.PaneFocusDirectionReply:
        pane = self._pane_or_focused(params.pane_id)
        other = self._neighbor(pane, params.direction)
        if other is not None:
            self._focus_pane(other)
        result = t.PaneFocusDirectionResult(
            changed=other is not None,
            reason=None if other else "no_neighbor",
            source_pane_id=pane.id,
            focused_pane_id=other.id if other else pane.id,
            layout=self._layout(pane.tab),
        )
        return t.PaneFocusDirectionReply(focus=result)

    async def _pane_resize(self, id: str, params: t.PaneResizeParams) -> t.PaneResizeReply:
        pane = self._pane_or_focused(params.pane_id)
        amount = 0.05 if params.amount is None else params.amount
        if not 0 < amount < 1:
            raise AnswerError(E.INVALID_RATIO, "amount must be between 0 and 1")
        changed = move_edge(pane.tab.root, pane, params.direction, amount)
        if changed:
            self._resize(pane.tab)
            self._emit_layout(pane.tab)
        result = t.PaneResizeResult(
            changed=changed, reason=None if changed else "unchanged", pane_id=pane.id,
            focused_pane_id=pane.tab.focused_pane.id if pane.tab.focused_pane else pane.id,
            layout=self._layout(pane.tab),
        )  # fmt: skip
        return t.PaneResizeReply(resize=result)

    async def _pane_swap(self, id: str, params: t.PaneSwapParams) -> t.PaneSwapReply:
        source = self._pane_or_focused(params.source_pane_id or params.pane_id)
        reason: t.PaneSwapReason | None = None
        target: Pane | None = None
        if params.target_pane_id is not None:
            try:
                target = self._find_pane(params.target_pane_id)
            except AnswerError:
                reason = "not_found"
        elif params.direction is not None:
            target = self._neighbor(source, params.direction)
            reason = None if target else "no_neighbor"
        else:
            raise AnswerError(E.INVALID_PANE_SWAP, "give target_pane_id or direction")
        if target is source:
            reason, target = "same_pane", None
        elif target is not None and target.tab is not source.tab:
            reason, target = "cross_tab", None
        if target is not None:
            swap_leaves(source.tab, source, target)
            self._resize(source.tab)
            self._emit_layout(source.tab)
        result = t.PaneSwapResult(
            changed=target is not None, reason=reason, source_pane_id=source.id,
            target_pane_id=target.id if target else None,
            focused_pane_id=source.tab.focused_pane.id if source.tab.focused_pane else source.id,
            layout=self._layout(source.tab),
        )  # fmt: skip
        return t.PaneSwapReply(swap=result)

    async def _set_split_ratio(
        self, id: str, params: t.LayoutSetSplitRatioParams
    ) -> t.LayoutSplitRatioSetReply:
        tab = self._tab_of(params.tab_id, params.pane_id)
        if not 0 < params.ratio < 1:
            raise AnswerError(E.INVALID_RATIO, "ratio must be between 0 and 1")
        node = tab.root
        for second in params.path:
            if not isinstance(node, Split):
                raise AnswerError(E.SPLIT_NOT_FOUND, "no split at that path")
            node = node.second if second else node.first
        if not isinstance(node, Split):
            raise AnswerError(E.SPLIT_NOT_FOUND, "no split at that path")
        node.ratio = params.ratio
        self._resize(tab)
        self._emit_layout(tab)
        exported = await self._layout_export(id, t.LayoutExportParams(tab_id=tab.id))
        return t.LayoutSplitRatioSetReply(layout=exported.layout)

    def _detach(self, pane: Pane) -> tuple[str | None, str | None]:
        """Take ``pane`` out of its tab (the process keeps running); return closed tab/ws ids."""
        tab, ws = pane.tab, pane.workspace
        tab.root = remove_leaf(tab.root, pane) if tab.root is not None else None
        if tab.focused_pane is pane:
            remaining = tab.panes()
            tab.focused_pane = remaining[0] if remaining else None
        if tab.root is not None:
            self._resize(tab)
            self._emit_layout(tab)
            return None, None
        closed_ws = ws.id if len(ws.tabs) == 1 else None
        self._drop_tab(tab)
        return tab.id, closed_ws

    def _attach(
        self, pane: Pane, tab: Tab, target: Pane | None, direction: str, ratio: float
    ) -> None:
        """Put ``pane`` into ``tab`` beside ``target`` (or as its only pane), renumbering it."""
        if pane.workspace is not tab.workspace:
            pane.number, pane.id = tab.workspace.next_pane_ids()
        pane.workspace, pane.tab = tab.workspace, tab
        if target is None:
            tab.root = tab.focused_pane = pane
        else:
            split = Split(
                id=f"s{next(tab.split_ids)}", direction=direction,  # type: ignore[arg-type]
                ratio=ratio, first=target, second=pane,
            )  # fmt: skip
            tab.root = replace_leaf(tab.root, target, split)
        self._resize(tab)
        self._emit_layout(tab)

    async def _pane_move(self, id: str, params: t.PaneMoveParams) -> t.PaneMoveReply:
        pane = self._find_pane(params.pane_id)
        before = (pane.id, pane.workspace.id, pane.tab.id)
        source_tab = pane.tab
        dest = params.destination
        created_ws: t.WorkspaceInfo | None = None
        created_tab: t.TabInfo | None = None
        if isinstance(dest, t.TabDestination):
            tab = self._find_tab(dest.tab_id)
            target = self._find_pane(dest.target_pane_id) if dest.target_pane_id else None
            if target is not None and target.tab is not tab:
                raise AnswerError(E.TARGET_PANE_NOT_FOUND, f"pane {target.id} is not in {tab.id}")
            if tab is source_tab or tab.zoomed:
                reason: t.PaneMoveReason = "same_tab" if tab is source_tab else "zoomed_tab"
                return t.PaneMoveReply(
                    move_result=t.PaneMoveResult(
                        changed=False, reason=reason, previous_pane_id=pane.id,
                        previous_workspace_id=before[1], previous_tab_id=before[2],
                        pane=self._pane_info(pane), target_layout=self._layout(tab),
                        focused_pane_id=pane.id,
                    )
                )  # fmt: skip
            if dest.ratio is not None and not 0 < dest.ratio < 1:
                raise AnswerError(E.INVALID_RATIO, "ratio must be between 0 and 1")
            closed_tab, closed_ws = self._detach(pane)
            panes = tab.panes()
            anchor = target or tab.focused_pane or (panes[0] if panes else None)
            self._attach(pane, tab, anchor, dest.split, dest.ratio or 0.5)
        elif isinstance(dest, t.NewTabDestination):
            ws = self._find_workspace(dest.workspace_id) if dest.workspace_id else pane.workspace
            closed_tab, closed_ws = self._detach(pane)
            tab = ws.new_tab(dest.label)
            self._attach(pane, tab, None, "right", 0.5)
            ws.active_tab = ws.active_tab or tab
            created_tab = self._tab_info(tab)
            self.hub.emit(t.TabCreatedEventData(tab=created_tab))
        else:
            closed_tab, closed_ws = self._detach(pane)
            number = next(self._workspace_numbers)
            label = dest.label or os.path.basename((pane.cwd or self.cwd).rstrip("/")) or "shell"
            ws = Workspace(number=number, id=new_workspace_id(number), label=label)
            self.workspaces.append(ws)
            tab = ws.new_tab(dest.tab_label)
            ws.active_tab = tab
            self._attach(pane, tab, None, "right", 0.5)
            created_ws, created_tab = self._ws_info(ws), self._tab_info(tab)
            self.hub.emit(t.WorkspaceCreatedEventData(workspace=created_ws))
            self.hub.emit(t.TabCreatedEventData(tab=created_tab))
        if params.focus:
            self._focus_pane(pane)
        info = self._pane_info(pane)
        self.hub.emit(
            t.PaneMovedEventData(
                previous_pane_id=before[0], previous_workspace_id=before[1],
                previous_tab_id=before[2], pane=info, created_workspace=created_ws,
                created_tab=created_tab, closed_workspace_id=closed_ws, closed_tab_id=closed_tab,
            )
        )  # fmt: skip
        result = t.PaneMoveResult(
            changed=True, previous_pane_id=before[0], previous_workspace_id=before[1],
            previous_tab_id=before[2], pane=info,
            source_layout=self._layout(source_tab) if source_tab.root is not None else None,
            target_layout=self._layout(pane.tab), created_workspace=created_ws,
            created_tab=created_tab, closed_workspace_id=closed_ws, closed_tab_id=closed_tab,
            focused_pane_id=pane.tab.focused_pane.id if pane.tab.focused_pane else pane.id,
        )  # fmt: skip
        return t.PaneMoveReply(move_result=result)

    def _layout_panes(self, node: t.LayoutNode, moving: list[Pane]) -> None:
        """Validate ``node``; collect the existing panes it names into ``moving``."""
        if isinstance(node, t.SplitLayoutNode):
            if not 0 < node.ratio < 1:
                raise AnswerError(E.INVALID_LAYOUT, "split ratios must be between 0 and 1")
            self._layout_panes(node.first, moving)
            self._layout_panes(node.second, moving)
        elif node.pane_id is not None:
            moving.append(self._find_pane(node.pane_id))
        else:
            self._check_env(node.env)

    def _layout_build(
        self,
        node: t.LayoutNode,
        tab: Tab,
        spawned: list[tuple[Pane, list[str] | None]],
        follow: str | None = None,
    ) -> Split | Pane:
        """Build ``node``; a new pane without ``cwd`` starts in ``follow`` (herdr's rule)."""
        if isinstance(node, t.SplitLayoutNode):
            return Split(
                id=f"s{next(tab.split_ids)}", direction=node.direction, ratio=node.ratio,
                first=self._layout_build(node.first, tab, spawned, follow),
                second=self._layout_build(node.second, tab, spawned, follow),
            )  # fmt: skip
        ws = tab.workspace
        if node.pane_id is not None:
            pane = self._find_pane(node.pane_id)
            self._detach(pane)
            if pane.workspace is not ws:
                pane.number, pane.id = ws.next_pane_ids()
            pane.workspace, pane.tab = ws, tab
            return pane
        try:
            pane = self._spawn(ws, tab, node.cwd or follow, node.env)
        except AnswerError as failure:
            raise AnswerError(E.LAYOUT_APPLY_FAILED, failure.message) from None
        pane.label = node.label
        spawned.append((pane, node.command))
        return pane

    async def _layout_apply(self, id: str, params: t.LayoutApplyParams) -> t.LayoutApplyReply:
        """Build a new tab from ``root``: panes named by id move into it, others spawn."""
        if params.workspace_id is not None:
            ws = self._find_workspace(params.workspace_id)
        elif self.active is not None:
            ws = self.active
        else:
            raise AnswerError(E.WORKSPACE_NOT_FOUND, "no active workspace")
        moving: list[Pane] = []
        self._layout_panes(params.root, moving)
        if len({p.id for p in moving}) != len(moving):
            raise AnswerError(E.INVALID_LAYOUT, "a pane appears twice in the layout")
        # herdr: panes without cwd follow the workspace's focused pane (src/app/api/layouts.rs:355)
        follow = self._follow_cwd(ws.active_tab.focused_pane if ws.active_tab else None)
        tab = ws.new_tab(params.tab_label)
        spawned: list[tuple[Pane, list[str] | None]] = []
        tab.root = self._layout_build(params.root, tab, spawned, follow)
        tab.focused_pane = tab.panes()[0]
        self._resize(tab)
        self.hub.emit(t.TabCreatedEventData(tab=self._tab_info(tab)))
        for pane, _ in spawned:
            self.hub.emit(t.PaneCreatedEventData(pane=self._pane_info(pane)))
        self._emit_layout(tab)
        for pane, command in spawned:
            if command:
                await self._write_pane(pane, (shlex.join(command) + "\r").encode())
        if params.focus:
            self._focus_pane(tab.panes()[0])
        exported = await self._layout_export(id, t.LayoutExportParams(tab_id=tab.id))
        return t.LayoutApplyReply(layout=exported.layout)
