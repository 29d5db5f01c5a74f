"""The reference server's workspace model: workspaces, tabs, panes, layouts, events.

Ids follow herdr: workspaces ``w<n>`` from one server-wide counter, tabs
``<ws>:t<n>`` and panes ``<ws>:p<n>`` from per-workspace counters, all in
bijective base 32 and never reused. Focus: the server has at most one
focused workspace, each workspace an active tab, each tab a focused pane; an
entity's ``focused`` flag is true only when every level above it is focused
too. Layout split ids (``s<n>``, per tab) are this server's own spelling;
herdr's are opaque.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from shedproto.herdr import (
    HUB_SIZE,
    LifecycleEvent,
    ManagedLaunch,
    pane_id,
    tab_id,
    workspace_id,
)
from shedproto.herdr import types as t
from shedproto.herdr._screen import stripped_terminal_title

if TYPE_CHECKING:
    from ._pty import PtyProcess
    from ._screen import PaneScreen

__all__ = ["EventHub", "Pane", "Split", "Tab", "Workspace"]

_STATUS_PRIORITY = {"blocked": 4, "done": 3, "working": 2, "idle": 1, "unknown": 0}


class EventHub:
    """A ring of the most recent lifecycle events with a global sequence number."""

    def __init__(self, size: int = HUB_SIZE) -> None:
        self.events: deque[tuple[int, LifecycleEvent]] = deque(maxlen=size)
        self.seq = 0
        self._changed = anyio.Event()
        self.listener: Callable[[LifecycleEvent], None] | None = None
        """Called with each event as it is emitted (the plugin event hooks)."""

    def emit(self, data: Any) -> None:
        """Append a lifecycle event built from its ``data`` Struct and wake waiters."""
        self.seq += 1
        tag = data.__struct_config__.tag
        event = LifecycleEvent(event=tag, data=data)
        self.events.append((self.seq, event))
        self._changed.set()
        self._changed = anyio.Event()
        if self.listener is not None:
            self.listener(event)

    def after(self, seq: int, kind: str) -> tuple[int, LifecycleEvent] | None:
        """Return the first buffered event of ``kind`` with a sequence above ``seq``."""
        for number, event in self.events:
            if number > seq and event.event == kind:
                return number, event
        return None

    def oldest(self) -> int | None:
        """Return the sequence of the oldest retained event (``None`` when empty)."""
        return self.events[0][0] if self.events else None

    async def wait(self) -> None:
        """Wait until the next event is emitted."""
        await self._changed.wait()


@dataclass(eq=False)
class Split:
    """An inner layout node: ``first`` | ``second`` side by side (right) or stacked (down)."""

    id: str
    direction: t.SplitDirection
    ratio: float
    first: Split | Pane
    second: Split | Pane


@dataclass(eq=False)
class Pane:
    """One pane: a real program on a PTY plus what herdr reports about it."""

    number: int
    id: str
    terminal_id: str
    workspace: Workspace
    tab: Tab
    process: PtyProcess
    screen: PaneScreen
    cwd: str | None
    label: str | None = None
    agent: str | None = None
    agent_name: str | None = None
    agent_status: t.AgentStatus = "unknown"
    agent_source: str | None = None
    state_change_seq: int = 0
    exited: bool = False
    created_at: float = 0.0
    closed: bool = False
    output: anyio.Event = field(default_factory=anyio.Event)
    reader: anyio.CancelScope | None = None
    title: str | None = None
    display_agent: str | None = None
    state_labels: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)
    agent_session: t.AgentSessionInfo | None = None
    right_click: str = "herdr"
    content_revision: int = 0
    """Counts output changes: what copy-mode answers report as ``content_revision``."""
    launch: ManagedLaunch | None = None
    """The readiness of the agent ``agent.start`` launched here (None: none pending/ready)."""
    paused: bool = False
    """A live handoff stopped reading this pane's output (the successor reads it next)."""

    def notify_output(self) -> None:
        """Wake everything waiting for this pane's output to change."""
        self.content_revision += 1
        self.output.set()
        self.output = anyio.Event()

    def wake(self) -> None:
        """Wake everything waiting on this pane without counting it as output (a new status)."""
        self.output.set()
        self.output = anyio.Event()

    def info(self, focused: bool) -> t.PaneInfo:
        """Return herdr's ``PaneInfo`` for this pane."""
        return t.PaneInfo(
            pane_id=self.id,
            terminal_id=self.terminal_id,
            workspace_id=self.workspace.id,
            tab_id=self.tab.id,
            focused=focused,
            cwd=self.cwd,
            label=self.label,
            agent=self.agent,
            terminal_title=self.screen.title or None,
            terminal_title_stripped=stripped_terminal_title(self.screen.title),
            title=self.title,
            display_agent=self.display_agent,
            state_labels=dict(self.state_labels),
            tokens=dict(self.tokens),
            agent_session=self.agent_session,
            agent_status=self.agent_status,
            scroll=self.scroll(),
            revision=0,
        )

    def scroll(self) -> t.PaneScrollInfo:
        """Return the pane's scroll metrics (a terminal stream's scroll moves the viewport)."""
        return t.PaneScrollInfo(
            offset_from_bottom=self.screen.scroll_offset,
            max_offset_from_bottom=self.screen.scrollback_rows,
            viewport_rows=self.screen.rows,
        )

    def agent_info(self, focused: bool) -> t.AgentInfo:
        """Return herdr's ``AgentInfo`` for this pane's agent."""
        return t.AgentInfo(
            terminal_id=self.terminal_id,
            name=self.agent_name,
            agent=self.agent,
            terminal_title=self.screen.title or None,
            terminal_title_stripped=stripped_terminal_title(self.screen.title),
            title=self.title,
            display_agent=self.display_agent,
            state_labels=dict(self.state_labels),
            tokens=dict(self.tokens),
            agent_session=self.agent_session,
            agent_status=self.agent_status,
            workspace_id=self.workspace.id,
            tab_id=self.tab.id,
            pane_id=self.id,
            focused=focused,
            launch_pending=self.launch is not None and self.launch.launch_pending,
            interactive_ready=self.launch is not None and self.launch.interactive_ready,
            state_change_seq=self.state_change_seq,
            cwd=self.cwd,
            revision=0,
        )


@dataclass(eq=False)
class Tab:
    """One tab: a layout tree of panes and the pane that has focus in it."""

    number: int
    id: str
    workspace: Workspace
    label: str
    root: Split | Pane | None = None
    focused_pane: Pane | None = None
    zoomed: bool = False
    split_ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def panes(self) -> list[Pane]:
        """Return the panes in layout order (left/top first)."""
        out: list[Pane] = []
        stack: list[Split | Pane] = [self.root] if self.root is not None else []
        while stack:
            node = stack.pop()
            if isinstance(node, Split):
                stack += [node.second, node.first]
            else:
                out.append(node)
        return out


@dataclass(eq=False)
class Workspace:
    """One workspace: its tabs, the active one, and its id counters.

    ``worktree`` is its worktree-group membership; ``announce_close`` false
    closes it without a ``workspace_closed`` event (a 0.8.2 group member).
    """

    number: int
    id: str
    label: str
    tabs: list[Tab] = field(default_factory=list)
    active_tab: Tab | None = None
    tokens: dict[str, str] = field(default_factory=dict)
    worktree: t.WorkspaceWorktreeInfo | None = None
    announce_close: bool = True
    tab_numbers: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    pane_numbers: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def panes(self) -> list[Pane]:
        """Return every pane of every tab, tab by tab."""
        return [pane for tab in self.tabs for pane in tab.panes()]

    def new_tab(self, label: str | None) -> Tab:
        """Create and append an empty tab with the next tab number."""
        number = next(self.tab_numbers)
        tab = Tab(number=number, id=tab_id(self.id, number), workspace=self, label=label or "")
        self.tabs.append(tab)
        return tab

    def next_pane_ids(self) -> tuple[int, str]:
        """Reserve the next pane number and return it with its public id."""
        number = next(self.pane_numbers)
        return number, pane_id(self.id, number)


def aggregate_status(panes: list[Pane]) -> str:
    """Return the most urgent agent status among ``panes`` (herdr's attention order)."""
    best = "unknown"
    for pane in panes:
        if _STATUS_PRIORITY.get(pane.agent_status, 0) > _STATUS_PRIORITY[best]:
            best = pane.agent_status
    return best


def new_workspace_id(number: int) -> str:
    """Return the public id of the ``number``-th workspace."""
    return workspace_id(number)
