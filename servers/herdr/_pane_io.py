"""The pane input and output handlers of the herdr reference server.

Send text, keys and input; read and wait for output; scroll, selection, copy-mode
motion and search, links and the scrollback editor.
"""

from __future__ import annotations

import anyio

from shedproto.herdr import (
    MAX_MATCHES,
    copy_motion,
    current_match,
    links,
    search,
    select_text,
)
from shedproto.herdr import types as t
from shedproto.herdr._screen import split_lines

from ._model import Pane
from ._state import AnswerError, E, ServerState, paste, probe_client

HANDLERS: dict[str, str] = {
    "pane.send_text": "_pane_send_text",
    "pane.send_keys": "_pane_send_keys",
    "pane.send_input": "_pane_send_input",
    "pane.read": "_pane_read",
    "pane.wait_for_output": "_pane_wait_for_output",
    "pane.scroll": "_pane_scroll",
    "pane.clear": "_pane_clear",
    "pane.selection.read": "_pane_selection_read",
    "pane.edit_scrollback": "_edit_scrollback",
    "pane.copy_motion": "_copy_motion",
    "pane.copy_search": "_copy_search",
    "pane.link.resolve": "_link_resolve",
    "pane.link.activate": "_link_activate",
}
"""Method -> the name of the coroutine here that answers it."""


class PaneIOHandlers(ServerState):
    """The handlers that write to a pane or read its screen."""

    async def _pane_send_text(self, id: str, params: t.PaneSendTextParams) -> t.OkReply:
        await self._write_pane(self._find_pane(params.pane_id), params.text.encode())
        return t.OkReply()

    async def _pane_send_keys(self, id: str, params: t.PaneSendKeysParams) -> t.OkReply:
        pane = self._find_pane(params.pane_id)
        await self._write_pane(pane, self._keys(params.keys))
        return t.OkReply()

    async def _pane_send_input(self, id: str, params: t.PaneSendInputParams) -> t.OkReply:
        pane = self._find_pane(params.pane_id)
        keys = self._keys(params.keys)  # an unknown key fails before anything is written
        await self._write_pane(pane, paste(pane, params.text) + keys)
        return t.OkReply()

    async def _pane_read(self, id: str, params: t.PaneReadParams) -> t.PaneReadReply:
        pane = self._find_pane(params.pane_id)
        return t.PaneReadReply(read=self._read(pane, params.source, params.lines, params.format))

    async def _pane_wait_for_output(
        self, id: str, params: t.PaneWaitForOutputParams
    ) -> t.OutputMatchedReply:
        test = self._matcher(params.match)
        deadline = (
            None if params.timeout_ms is None else anyio.current_time() + params.timeout_ms / 1000
        )
        while True:
            probe_client()
            pane = self._find_pane(params.pane_id)
            matched, read = self._match_read(pane, params.source, params.lines, test)
            if matched is not None:
                return t.OutputMatchedReply(
                    pane_id=pane.id, revision=read.revision, matched_line=matched, read=read
                )
            if deadline is not None and anyio.current_time() >= deadline:
                raise AnswerError(E.TIMEOUT, "timed out waiting for output match")
            wait = (
                self.poll_interval
                if deadline is None
                else min(self.poll_interval, max(0.0, deadline - anyio.current_time()))
            )
            await anyio.sleep(wait)

    async def _pane_scroll(self, id: str, params: t.PaneScrollParams) -> t.OkReply:
        self._find_pane(params.pane_id)  # the viewport stays at the bottom (decision notes)
        return t.OkReply()

    async def _pane_clear(self, id: str, params: t.PaneTarget) -> t.OkReply:
        """Clear the pane's screen and scrollback, as a terminal's clear does (herdr 0.9.2+).

        The program in the pane is not told (nothing is written to it).
        """
        pane = self._find_pane(params.pane_id)
        pane.screen.clear()
        pane.notify_output()  # terminal streams and output waits see the cleared screen
        return t.OkReply()

    async def _pane_selection_read(
        self, id: str, params: t.PaneSelectionReadParams
    ) -> t.PaneSelectionReply:
        pane = self._find_pane(params.pane_id)
        lines = self._copy_lines(pane)
        anchor, cursor = params.anchor, params.cursor
        text = select_text(lines, (anchor.row, anchor.col), (cursor.row, cursor.col))
        return t.PaneSelectionReply(pane_id=pane.id, text=text)

    def _copy_lines(self, pane: Pane) -> list[str]:
        """Return the pane's copy-mode lines: retained scrollback, then the screen."""
        total = pane.screen.scrollback_rows + pane.screen.rows
        return split_lines(pane.screen.read("recent", lines=total).text)

    async def _copy_motion(self, id: str, params: t.PaneCopyMotionParams) -> t.PaneCopyMotionReply:
        pane = self._find_pane(params.pane_id)
        cursor = params.cursor
        row, col = copy_motion(self._copy_lines(pane), (cursor.row, cursor.col), params.motion)
        return t.PaneCopyMotionReply(
            pane_id=pane.id,
            content_revision=pane.content_revision,
            cursor=t.PaneTextPoint(row=row, col=col),
        )

    async def _copy_search(self, id: str, params: t.PaneCopySearchParams) -> t.PaneCopySearchReply:
        pane = self._find_pane(params.pane_id)
        found = search(self._copy_lines(pane), params.query)
        previous = params.previous
        at = current_match(
            found,
            (params.cursor.row, params.cursor.col),
            params.direction == "forward",
            None if previous is None else (previous.start.row, previous.start.col),
        )
        matches = [
            t.PaneTextRange(
                start=t.PaneTextPoint(row=start[0], col=start[1]),
                end=t.PaneTextPoint(row=end[0], col=end[1]),
            )
            for start, end in found[:MAX_MATCHES]
        ]
        return t.PaneCopySearchReply(
            pane_id=pane.id, content_revision=pane.content_revision, matches=matches,
            total=len(found), current=at, current_global=at,
        )  # fmt: skip

    def _link_at(self, params: t.PaneLinkActivateParams) -> tuple[int, tuple[int, int, str] | None]:
        pane = self._find_pane(params.pane_id)
        rows = pane.screen.read("visible").text.split("\n")
        line = rows[params.viewport_row] if params.viewport_row < len(rows) else ""
        hit = next((link for link in links(line) if link[0] <= params.col <= link[1]), None)
        return params.viewport_row, hit

    async def _link_resolve(
        self, id: str, params: t.PaneLinkActivateParams
    ) -> t.PaneLinkResolvedReply:
        row, hit = self._link_at(params)
        if hit is None:
            return t.PaneLinkResolvedReply(regions=[])
        region = t.PaneLinkRegion(row=row, start_col=hit[0], end_col=hit[1])
        return t.PaneLinkResolvedReply(regions=[region])

    async def _link_activate(
        self, id: str, params: t.PaneLinkActivateParams
    ) -> t.PaneLinkActivatedReply:
        _, hit = self._link_at(params)
        if hit is None:
            return t.PaneLinkActivatedReply(handled=False, url=None)
        # a plugin link handler runs its action (herdr's activate_resolved_link); opening a
        # URL otherwise needs a desktop opener: reported, never opened (decision notes)
        handled = await self._run_link_handler(self._find_pane(params.pane_id), hit[2])
        return t.PaneLinkActivatedReply(handled=handled, url=hit[2])

    async def _edit_scrollback(self, id: str, params: t.PaneTarget) -> t.OkReply:
        self._find_pane(params.pane_id)  # needs an interactive editor: decision notes
        return t.OkReply()
