"""The state every herdr handler shares and the lookups over it.

:class:`ServerState` is the base of the domain handler classes that
:class:`~shedproto.servers.herdr._server.HerdrServer` is composed of: it declares the
server's state (set by ``HerdrServer.__init__``), builds the info records, finds
workspaces, tabs and panes by reference, moves focus, and spawns, pumps and closes panes.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel

from shedproto.herdr import (
    HerdrErrorCode,
    HerdrRelease,
    ReplayRule,
    UnsupportedKeyError,
    close_group_members,
    encode_keys,
    parse_pane_ref,
    parse_tab_ref,
    parse_workspace_ref,
)
from shedproto.herdr import types as t
from shedproto.herdr._screen import split_lines

from ._detection import ManifestSet, PaneDetector
from ._model import EventHub, Pane, Split, Tab, Workspace, aggregate_status
from ._procinfo import follow_cwd
from ._pty import PtyProcess
from ._screen import PaneScreen
from ._terminal import TerminalStreams
from ._tree import divide, remove_leaf

FEED_SLICE = 4096
"""Bytes of pane output emulated between two event-loop checkpoints."""


class AnswerError(Exception):
    """Raised inside a handler: answer ``{"error": {code, message}}`` (optionally another id)."""

    def __init__(self, code: str | HerdrErrorCode, message: str, *, id: str | None = None) -> None:
        super().__init__(message)
        self.code = code.value if isinstance(code, HerdrErrorCode) else code
        self.message = message
        self.id = id


E = HerdrErrorCode

CLIENT_GONE: contextvars.ContextVar[bool] = contextvars.ContextVar("CLIENT_GONE", default=False)
"""Set while answering a wait whose client already sent the bytes that end it."""


class ClientLeftError(Exception):
    """Raised at a socket probe point when the client is gone: the answer is dropped."""


def probe_client() -> None:
    """Probe the socket as herdr does between rounds: raise if the client is gone."""
    if CLIENT_GONE.get():
        raise ClientLeftError


@dataclass
class Area:
    """The terminal area every tab is laid out in (cells)."""

    cols: int
    rows: int


class ServerState:
    """The server's shared state and the helpers every domain's handlers use."""

    path: Path
    protocol: int
    version: str
    replay: ReplayRule
    shell: list[str]
    agent_commands: dict[str, str]
    environ: dict[str, str]
    cwd: str
    area: Area
    poll_interval: float
    request_timeout: float
    input_timeout: float
    agent_settle_delay: float
    hub: EventHub
    notifications: list[t.NotificationShowParams]
    dismissed: list[Any]
    window_title: str | None
    agent_view: t.AgentViewSetParams | None
    graphics: dict[str, dict[str, t.PaneGraphicsSetParams]]
    graphics_streams: set[tuple[str, str]]
    release: HerdrRelease
    ssh_agents: list[str]
    plugins: dict[str, t.InstalledPluginInfo]
    plugin_logs: list[t.PluginCommandLogInfo]
    plugin_panes: dict[str, tuple[str, str]]
    plugin_log_seq: int
    plugin_in_flight: int
    registry_writable: bool
    state_dir: str
    config_dir: str
    home: str | None
    detect_interval: float | None
    manifests: ManifestSet
    detectors: dict[Pane, PaneDetector]
    worktrees_dir: str
    _worktree_seeds: itertools.count[int]
    workspaces: list[Workspace]
    active: Workspace | None
    _workspace_numbers: itertools.count[int]
    _terminal_numbers: itertools.count[int]
    _tasks: anyio.abc.TaskGroup | None
    _live: set[PtyProcess]
    streams: TerminalStreams

    def _ws_info(self, ws: Workspace) -> t.WorkspaceInfo:
        panes = ws.panes()
        active = ws.active_tab.id if ws.active_tab else ""
        return t.WorkspaceInfo(
            workspace_id=ws.id,
            number=self.workspaces.index(ws) + 1 if ws in self.workspaces else ws.number,
            label=ws.label,
            focused=ws is self.active,
            pane_count=len(panes),
            tab_count=len(ws.tabs),
            active_tab_id=active,
            agent_status=aggregate_status(panes),  # type: ignore[arg-type]
            tokens=dict(ws.tokens),
            worktree=ws.worktree,
        )

    def _tab_focused(self, tab: Tab) -> bool:
        return tab.workspace is self.active and tab.workspace.active_tab is tab

    def _tab_info(self, tab: Tab) -> t.TabInfo:
        panes = tab.panes()
        ws = tab.workspace
        return t.TabInfo(
            tab_id=tab.id,
            workspace_id=ws.id,
            number=ws.tabs.index(tab) + 1 if tab in ws.tabs else tab.number,
            label=tab.label or str(tab.number),
            focused=self._tab_focused(tab),
            pane_count=len(panes),
            agent_status=aggregate_status(panes),  # type: ignore[arg-type]
        )

    def _pane_focused(self, pane: Pane) -> bool:
        return self._tab_focused(pane.tab) and pane.tab.focused_pane is pane

    def _pane_info(self, pane: Pane) -> t.PaneInfo:
        return pane.info(self._pane_focused(pane))

    def _layout(self, tab: Tab) -> t.PaneLayoutSnapshot:
        panes: list[t.PaneLayoutPane] = []
        splits: list[t.PaneLayoutSplit] = []
        area = t.PaneLayoutRect(x=0, y=0, width=self.area.cols, height=self.area.rows)

        def walk(node: Split | Pane, rect: t.PaneLayoutRect) -> None:
            if isinstance(node, Pane):
                panes.append(
                    t.PaneLayoutPane(pane_id=node.id, focused=self._pane_focused(node), rect=rect)
                )
                return
            splits.append(
                t.PaneLayoutSplit(id=node.id, direction=node.direction, ratio=node.ratio, rect=rect)
            )
            first, second = divide(rect, node.direction, node.ratio)
            walk(node.first, first)
            walk(node.second, second)

        if tab.root is not None:
            walk(tab.root, area)
        focused = tab.focused_pane.id if tab.focused_pane else ""
        return t.PaneLayoutSnapshot(
            workspace_id=tab.workspace.id,
            tab_id=tab.id,
            zoomed=tab.zoomed,
            area=area,
            focused_pane_id=focused,
            panes=panes,
            splits=splits,
        )

    def _pane_rect(self, pane: Pane) -> tuple[int, int]:
        for entry in self._layout(pane.tab).panes:
            if entry.pane_id == pane.id:
                return max(entry.rect.width, 1), max(entry.rect.height, 1)
        return self.area.cols, self.area.rows

    def _find_workspace(self, ref: str) -> Workspace:
        parsed = parse_workspace_ref(ref)
        for ws in self.workspaces:
            if ws.id == parsed.id:
                return ws
        if parsed.index is not None and parsed.index < len(self.workspaces):
            return self.workspaces[parsed.index]
        raise AnswerError(E.WORKSPACE_NOT_FOUND, f"workspace {ref} not found")

    def _find_tab(self, ref: str) -> Tab:
        parsed = parse_tab_ref(ref)
        if parsed is not None:
            try:
                ws = self._find_workspace(parsed.workspace.id)
            except AnswerError:
                ws = None
            if ws is not None:
                for tab in ws.tabs:
                    if parsed.number is not None and tab.number == parsed.number:
                        return tab
                if parsed.index is not None and parsed.index < len(ws.tabs):
                    return ws.tabs[parsed.index]
        raise AnswerError(E.TAB_NOT_FOUND, f"tab {ref} not found")

    def _find_pane(self, ref: str) -> Pane:
        parsed = parse_pane_ref(ref)
        if parsed is not None:
            try:
                ws = self._find_workspace(parsed.workspace.id)
            except AnswerError:
                ws = None
            if ws is not None:
                for pane in ws.panes():
                    if pane.number == parsed.number:
                        return pane
        raise AnswerError(E.PANE_NOT_FOUND, f"pane {ref} not found")

    def _focused_pane(self) -> Pane:
        ws = self.active
        tab = ws.active_tab if ws else None
        if tab is None or tab.focused_pane is None:
            raise AnswerError(E.NO_ACTIVE_PANE, "no active pane")
        return tab.focused_pane

    def _pane_or_focused(self, pane_id: str | None) -> Pane:
        return self._focused_pane() if pane_id is None else self._find_pane(pane_id)

    def _tab_of(self, tab_id: str | None, pane_id: str | None) -> Tab:
        """Return the tab named, else the named pane's tab, else the focused pane's."""
        return self._find_tab(tab_id) if tab_id is not None else self._pane_or_focused(pane_id).tab

    def _focus_pane(self, pane: Pane) -> None:
        """Focus ``pane`` (and its tab and workspace), emitting the focus events that change."""
        tab, ws = pane.tab, pane.workspace
        if self.active is not ws:
            self.active = ws
            self.hub.emit(t.WorkspaceFocusedEventData(workspace_id=ws.id))
        if ws.active_tab is not tab:
            ws.active_tab = tab
            self.hub.emit(t.TabFocusedEventData(tab_id=tab.id, workspace_id=ws.id))
        if tab.focused_pane is not pane:
            tab.focused_pane = pane
            self.hub.emit(t.PaneFocusedEventData(pane_id=pane.id, workspace_id=ws.id))
        if pane.agent_status == "done":
            pane.agent_status = "idle"

    def _emit_layout(self, tab: Tab) -> None:
        self.hub.emit(t.LayoutUpdatedEventData(layout=self._layout(tab)))

    def _pane_updated(self, pane: Pane) -> t.PaneInfo:
        """Emit ``pane_updated`` for ``pane`` and return the info it carried."""
        info = self._pane_info(pane)
        self.hub.emit(t.PaneUpdatedEventData(pane=info))
        return info

    async def _run_link_handler(self, pane: Pane, url: str) -> bool:
        """Run a plugin link handler for ``url`` clicked in ``pane`` (the plugins domain's)."""
        return False

    def _check_env(self, env: Mapping[str, str]) -> None:
        for key, value in env.items():
            if not key or "=" in key or "\0" in key or "\0" in value:
                raise AnswerError(E.INVALID_ENV, f"invalid environment variable {key!r}")

    def _check_source(self, source: str) -> None:
        if not source.strip():
            raise AnswerError(E.INVALID_METADATA_SOURCE, "metadata source must not be empty")

    def _spawn(
        self,
        ws: Workspace,
        tab: Tab,
        cwd: str | None,
        env: Mapping[str, str],
        argv: Sequence[str] | None = None,
    ) -> Pane:
        number, public_id = ws.next_pane_ids()
        environment = dict(self.environ)
        environment.update(env)
        environment.update(
            {
                "HERDR_SOCKET_PATH": str(self.path),
                "HERDR_ENV": "1",
                "HERDR_WORKSPACE_ID": ws.id,
                "HERDR_TAB_ID": tab.id,
                "HERDR_PANE_ID": public_id,
                "TERM": environment.get("TERM", "xterm-256color") or "xterm-256color",
            }
        )
        directory = cwd or self.cwd
        try:
            program = list(argv) if argv else self.shell
            process = PtyProcess.spawn(
                program, env=environment, cwd=directory, cols=self.area.cols, rows=self.area.rows
            )
        except OSError as exc:
            raise AnswerError(E.PANE_SPLIT_FAILED, f"cannot start {program[0]}: {exc}") from exc
        self._live.add(process)
        pane = Pane(
            number=number,
            id=public_id,
            terminal_id=f"term_{next(self._terminal_numbers)}",
            workspace=ws,
            tab=tab,
            process=process,
            screen=PaneScreen(cols=self.area.cols, rows=self.area.rows),
            cwd=directory,
            created_at=anyio.current_time(),
        )
        if self._tasks is not None:
            self._tasks.start_soon(self._pump, pane)
        return pane

    async def _pump(self, pane: Pane) -> None:
        """Copy the pane's PTY output into its screen until the program exits."""
        with anyio.CancelScope() as scope:
            pane.reader = scope
            while not pane.paused:
                data = await pane.process.read()
                if not data:
                    break
                # a pause (live handoff) waits for a read: bytes read are never half-fed
                with anyio.CancelScope(shield=True):
                    await self._feed(pane, data)
        if pane.paused:
            pane.reader = None
            pane.wake()  # the handoff waiting for the pause
            return
        if pane.closed:
            return
        await pane.process.wait_exit(2.0)
        if _is_closed(pane):
            return
        pane.exited = True
        self.hub.emit(t.PaneExitedEventData(pane_id=pane.id, workspace_id=pane.workspace.id))
        pane.notify_output()
        await self._close_pane(pane)

    async def _feed(self, pane: Pane, data: bytes) -> None:
        """Apply ``data`` read from the pane's PTY to its screen and answer its queries."""
        # pyte is pure Python: feed a burst in slices and let other
        # connections run in between, so a chatty pane cannot stall the server
        for start in range(0, len(data), FEED_SLICE):
            pane.screen.feed(data[start : start + FEED_SLICE])
            if len(data) > FEED_SLICE:
                await anyio.lowlevel.checkpoint()
        replies = pane.screen.take_replies()
        if replies:
            with contextlib.suppress(OSError):
                await pane.process.write(replies, timeout=self.input_timeout)
        pane.notify_output()

    def _follow_cwd(self, pane: Pane | None) -> str | None:
        """Return where a new terminal started from ``pane`` begins (herdr's follow rule).

        The directory of the pane's foreground program, else its shell's,
        else the directory it started in; ``None`` without a live pane. See
        ``docs/protocols/herdr.md`` (*New terminals follow the focused pane*).
        """
        if pane is None or pane.closed:
            return None
        found = follow_cwd(pane.process.pid, None if pane.process.closed else pane.process.master)
        return found or pane.cwd

    def _resize(self, tab: Tab) -> None:
        """Give each pane its layout size, except one a terminal controller holds at its own."""
        for pane in tab.panes():
            cols, rows = self.streams.locked_size(pane) or self._pane_rect(pane)
            pane.screen.resize(cols, rows)
            pane.process.resize(cols, rows)

    async def _close_pane(self, pane: Pane) -> None:
        if pane.closed and pane not in pane.tab.panes():
            return
        pane.closed = True
        tab, ws = pane.tab, pane.workspace
        tab.root = remove_leaf(tab.root, pane) if tab.root is not None else None
        if tab.focused_pane is pane:
            remaining = tab.panes()
            tab.focused_pane = remaining[0] if remaining else None
        self.hub.emit(t.PaneClosedEventData(pane_id=pane.id, workspace_id=ws.id))
        pane.notify_output()
        if pane.reader is not None:
            pane.reader.cancel()
        if self._tasks is not None:
            self._tasks.start_soon(self._reap, pane.process)
        if tab.root is None:
            self._drop_tab(tab)
        else:
            self._resize(tab)
            self._emit_layout(tab)

    def _drop_tab(self, tab: Tab) -> None:
        ws = tab.workspace
        index = ws.tabs.index(tab)
        ws.tabs.remove(tab)
        self.hub.emit(t.TabClosedEventData(tab_id=tab.id, workspace_id=ws.id))
        if not ws.tabs:
            self._drop_workspace(ws)
            return
        if ws.active_tab is tab:
            ws.active_tab = ws.tabs[max(0, index - 1)]
            if ws is self.active:
                self.hub.emit(t.TabFocusedEventData(tab_id=ws.active_tab.id, workspace_id=ws.id))

    def _drop_workspace(self, ws: Workspace) -> None:
        index = self.workspaces.index(ws)
        info = self._ws_info(ws)
        self.workspaces.remove(ws)
        if ws.announce_close:
            self.hub.emit(t.WorkspaceClosedEventData(workspace_id=ws.id, workspace=info))
        if self.active is ws:
            self.active = self.workspaces[max(0, index - 1)] if self.workspaces else None
            if self.active is not None:
                self.hub.emit(t.WorkspaceFocusedEventData(workspace_id=self.active.id))

    def _group_of(self, ws: Workspace) -> list[Workspace]:
        """Return the workspaces closing ``ws`` closes: its worktree group when it is a primary."""
        trees = [member.worktree for member in self.workspaces]
        return [self.workspaces[i] for i in close_group_members(self.workspaces.index(ws), trees)]

    def _refuse_implicit_group_close(self, ws: Workspace, what: str) -> None:
        """Answer ``confirmation_required`` when closing ``what`` would close ``ws``'s group.

        herdr asks first (its ``ui.confirm_close``, on by default) when a tab or
        pane close would take a worktree group's primary, and so the group,
        with it (herdrdev/herdr src/app/api/tabs.rs:246-253, panes.rs:1562-1569,
        actions.rs:2004-2012@v0.8.2).
        """
        if len(self._group_of(ws)) > 1:
            raise AnswerError(
                E.CONFIRMATION_REQUIRED, f"closing this {what} would close a worktree group"
            )

    async def _close_all(self, panes: list[Pane]) -> None:
        for pane in panes:
            await self._close_pane(pane)

    async def _reap(self, process: PtyProcess) -> None:
        """Terminate and reap one pane process; shielded so shutdown cannot leave it behind."""
        with anyio.CancelScope(shield=True):
            await process.terminate()
        self._live.discard(process)

    async def _write_pane(self, pane: Pane, data: bytes) -> None:
        try:
            await pane.process.write(data, timeout=self.input_timeout)
        except OSError as exc:
            raise AnswerError(E.PANE_SEND_FAILED, f"pane {pane.id}: {exc}") from exc

    def _keys(self, keys: Sequence[str]) -> bytes:
        try:
            return encode_keys(keys)
        except UnsupportedKeyError as exc:
            raise AnswerError(E.INVALID_KEY, str(exc)) from None

    def _read(self, pane: Pane, source: str, lines: int | None, fmt: str) -> t.PaneReadResult:
        outcome = pane.screen.read(source, lines=lines, ansi=fmt == "ansi")
        return t.PaneReadResult(
            pane_id=pane.id,
            workspace_id=pane.workspace.id,
            tab_id=pane.tab.id,
            source=source,  # type: ignore[arg-type]
            format=fmt,  # type: ignore[arg-type]
            text=outcome.text,
            revision=0,
            truncated=outcome.truncated,
        )

    def _matcher(self, match: t.OutputMatch, id: str | None = None) -> Callable[[str], bool]:
        if isinstance(match, t.RegexOutputMatch):
            try:
                pattern = re.compile(match.value)
            except re.error as exc:
                raise AnswerError(E.INVALID_REGEX, f"regex parse error: {exc}", id=id) from None
            return lambda line: pattern.search(line) is not None
        needle = match.value
        return lambda line: needle in line

    def _match_read(
        self, pane: Pane, source: str, lines: int | None, test: Callable[[str], bool]
    ) -> tuple[str | None, t.PaneReadResult]:
        source = "recent_unwrapped" if source == "recent" else source
        read = self._read(pane, source, lines, "text")
        for line in split_lines(read.text):
            if test(line):
                return line, read
        return None, read


def apply_tokens(tokens: dict[str, str], update: Mapping[str, str | None]) -> None:
    """Merge reported metadata tokens: a ``null`` value removes its key."""
    for key, value in update.items():
        if value is None:
            tokens.pop(key, None)
        else:
            tokens[key] = value


def paste(pane: Pane, text: str) -> bytes:
    """``text`` as herdr types it: in bracketed paste when the pane's program enabled it."""
    if text and pane.screen.bracketed_paste:
        return b"\x1b[200~" + text.encode() + b"\x1b[201~"
    return text.encode()


def _is_closed(pane: Pane) -> bool:
    """Read ``pane.closed`` afresh (another task may have closed it across an await)."""
    return pane.closed
