"""What a live handoff carries from one reference server to its successor, and its checks.

herdr's handoff manifest (herdrdev/herdr src/server/handoff.rs:34-49@1c76079f)
is one JSON line: the handoff format version (1), the source's version and
protocol, the ``expected_version`` / ``expected_protocol`` the caller of
``server.live_handoff`` asked for, the session snapshot, one runtime record per
pane (its id, the program's pid, its size, its screen history as ANSI;
src/handoff_runtime.rs:13-31@1c76079f) and the window title set over the API.
The successor checks the manifest before it takes anything
(``receive``, src/server/handoff.rs:241-267@1c76079f): an unknown
format version, a protocol other than its own, or a version other than its own
is refused with herdr's message.

The envelope and the checks are herdr's; the snapshot is this server's own
(:class:`SessionRecord`: workspaces, tabs, layout trees and panes with what the
API reports about them), since herdr's persisted-session format is not
modelled. So a reference server hands off only to a reference server, never to
a real herdr, and the other way round. :class:`ServerSettings` (an addition to
herdr's envelope) carries the source's constructor options, which herdr reads
from its config file instead, so the successor serves the same paths with the
same shell, directories and timings.

:func:`capture` reads a server into a manifest; :func:`restore` rebuilds the
model in a successor from it and the PTY masters that came with it.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Union

import anyio
import msgspec

from shedproto.herdr import types as t
from shedproto.herdr._handoff import HANDOFF_FORMAT_VERSION, handoff_refusal

from ._model import Pane, Split, Tab, Workspace
from ._pty import PtyProcess
from ._screen import PaneScreen

if TYPE_CHECKING:
    from ._server import HerdrServer

__all__ = [
    "HandoffManifest",
    "ServerSettings",
    "capture",
    "decode_manifest",
    "restore",
    "validate_manifest",
]



class PaneRuntime(msgspec.Struct, frozen=True, kw_only=True):
    """One pane's running program: herdr's ``HandoffRuntimeState``, in this server's terms."""

    pane_id: str
    child_pid: int
    rows: int
    cols: int
    terminal_title: str | None = None
    initial_history_ansi: str | None = None
    """What redraws the pane's screen, scrollback and modes (:meth:`PaneScreen.replay`)."""


class LeafRecord(msgspec.Struct, frozen=True, kw_only=True, tag="pane"):
    """A layout leaf: the pane shown there."""

    pane_id: str


class SplitRecord(msgspec.Struct, frozen=True, kw_only=True, tag="split"):
    """A layout split and its two sides."""

    id: str
    direction: t.SplitDirection
    ratio: float
    first: Node
    second: Node


Node = Union[LeafRecord, SplitRecord]  # noqa: UP007 - msgspec resolves the forward reference


class PaneRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A pane's identity and what the API reports about it."""

    number: int
    id: str
    terminal_id: str
    cwd: str | None
    age: float
    """Seconds since the pane was created (clocks are per process)."""
    exited: bool = False
    label: str | None = None
    agent: str | None = None
    agent_name: str | None = None
    agent_status: t.AgentStatus = "unknown"
    agent_source: str | None = None
    state_change_seq: int = 0
    title: str | None = None
    display_agent: str | None = None
    state_labels: dict[str, str] = {}
    tokens: dict[str, str] = {}
    agent_session: t.AgentSessionInfo | None = None
    right_click: str = "herdr"


class TabRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A tab, its layout tree and its focused pane."""

    number: int
    id: str
    label: str
    zoomed: bool
    next_split: int
    root: Node | None
    focused_pane_id: str | None


class WorkspaceRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A workspace, its tabs and panes, and its id counters."""

    number: int
    id: str
    label: str
    tokens: dict[str, str]
    worktree: t.WorkspaceWorktreeInfo | None
    next_tab: int
    next_pane: int
    active_tab_id: str | None
    tabs: list[TabRecord]
    panes: list[PaneRecord]


class SessionRecord(msgspec.Struct, frozen=True, kw_only=True):
    """The whole session: workspaces in order, the focused one, the server-wide counters."""

    workspaces: list[WorkspaceRecord]
    active_workspace_id: str | None
    next_workspace: int
    next_terminal: int
    plugin_panes: dict[str, tuple[str, str]] = {}
    agent_view: t.AgentViewSetParams | None = None


class ServerSettings(msgspec.Struct, frozen=True, kw_only=True):
    """The source server's options (herdr reads these from its config instead)."""

    path: str
    client_socket: str
    herdr_version: str
    shell: list[str]
    agent_commands: dict[str, str]
    environ: dict[str, str]
    cwd: str
    cols: int
    rows: int
    poll_interval: float
    request_timeout: float
    input_timeout: float
    worktrees_dir: str
    agent_settle_delay: float
    detect_interval: float | None
    config_dir: str | None
    """``None``: herdr's own config directory (the source was given none)."""
    state_dir: str
    home: str | None


class HandoffManifest(msgspec.Struct, frozen=True, kw_only=True):
    """herdr's handoff manifest (module docstring); ``settings`` is this server's addition."""

    version: int
    source_version: str
    source_protocol: int
    expected_version: str | None
    expected_protocol: int | None
    snapshot: SessionRecord
    panes: list[PaneRuntime]
    api_window_title: str | None = None
    settings: ServerSettings | None = None


_DECODER = msgspec.json.Decoder(HandoffManifest)


def decode_manifest(line: bytes) -> HandoffManifest:
    """Decode the manifest line.

    Raises:
        msgspec.DecodeError: the line is not a manifest this server can read
            (herdr's serde error; the successor then exits without validating).

    """
    return _DECODER.decode(line)


def validate_manifest(manifest: HandoffManifest, protocol: int, version: str) -> str | None:
    """Return why a successor speaking ``protocol`` as ``version`` refuses ``manifest``, or None."""
    return handoff_refusal(
        manifest.version,
        manifest.expected_protocol,
        manifest.expected_version,
        protocol=protocol,
        version=version,
    )


def _next(counter: itertools.count[int]) -> int:
    """Return the value ``counter`` yields next, without taking it (its repr: ``count(N)``)."""
    return int(repr(counter)[len("count(") : -1])


def _node(node: Split | Pane) -> Node:
    if isinstance(node, Pane):
        return LeafRecord(pane_id=node.id)
    return SplitRecord(
        id=node.id,
        direction=node.direction,
        ratio=node.ratio,
        first=_node(node.first),
        second=_node(node.second),
    )


def _pane_record(pane: Pane, now: float) -> PaneRecord:
    return PaneRecord(
        number=pane.number,
        id=pane.id,
        terminal_id=pane.terminal_id,
        cwd=pane.cwd,
        age=max(0.0, now - pane.created_at),
        exited=pane.exited,
        label=pane.label,
        agent=pane.agent,
        agent_name=pane.agent_name,
        agent_status=pane.agent_status,
        agent_source=pane.agent_source,
        state_change_seq=pane.state_change_seq,
        title=pane.title,
        display_agent=pane.display_agent,
        state_labels=dict(pane.state_labels),
        tokens=dict(pane.tokens),
        agent_session=pane.agent_session,
        right_click=pane.right_click,
    )


def _tab_record(tab: Tab) -> TabRecord:
    return TabRecord(
        number=tab.number,
        id=tab.id,
        label=tab.label,
        zoomed=tab.zoomed,
        next_split=_next(tab.split_ids),
        root=None if tab.root is None else _node(tab.root),
        focused_pane_id=tab.focused_pane.id if tab.focused_pane else None,
    )


def live_panes(server: HerdrServer) -> list[Pane]:
    """Return the panes a handoff passes on: every pane whose PTY is still open."""
    return [
        pane
        for ws in server.workspaces
        for pane in ws.panes()
        if not pane.closed and not pane.process.closed
    ]


def capture(
    server: HerdrServer,
    panes: Sequence[Pane],
    *,
    expected_protocol: int | None,
    expected_version: str | None,
) -> HandoffManifest:
    """Return the manifest of ``server`` handing off ``panes`` (their readers paused)."""
    now = anyio.current_time()
    workspaces = [
        WorkspaceRecord(
            number=ws.number,
            id=ws.id,
            label=ws.label,
            tokens=dict(ws.tokens),
            worktree=ws.worktree,
            next_tab=_next(ws.tab_numbers),
            next_pane=_next(ws.pane_numbers),
            active_tab_id=ws.active_tab.id if ws.active_tab else None,
            tabs=[_tab_record(tab) for tab in ws.tabs],
            panes=[_pane_record(pane, now) for pane in ws.panes() if pane in panes],
        )
        for ws in server.workspaces
    ]
    snapshot = SessionRecord(
        workspaces=workspaces,
        active_workspace_id=server.active.id if server.active else None,
        next_workspace=_next(server._workspace_numbers),
        next_terminal=_next(server._terminal_numbers),
        plugin_panes=dict(server.plugin_panes),
        agent_view=server.agent_view,
    )
    runtimes = [
        PaneRuntime(
            pane_id=pane.id,
            child_pid=pane.process.pid,
            rows=pane.screen.rows,
            cols=pane.screen.cols,
            terminal_title=pane.screen.title or None,
            initial_history_ansi=pane.screen.replay().decode("utf-8", "replace"),
        )
        for pane in panes
    ]
    return HandoffManifest(
        version=HANDOFF_FORMAT_VERSION,
        source_version=server.version,
        source_protocol=server.protocol,
        expected_version=expected_version,
        expected_protocol=expected_protocol,
        snapshot=snapshot,
        panes=runtimes,
        api_window_title=server.window_title,
        settings=settings_of(server),
    )


def settings_of(server: HerdrServer) -> ServerSettings:
    """Return the constructor options ``server`` runs with."""
    return ServerSettings(
        path=str(server.path),
        client_socket=str(server.streams.path),
        herdr_version=server.release.version,
        shell=list(server.shell),
        agent_commands=dict(server.agent_commands),
        environ=dict(server.environ),
        cwd=server.cwd,
        cols=server.area.cols,
        rows=server.area.rows,
        poll_interval=server.poll_interval,
        request_timeout=server.request_timeout,
        input_timeout=server.input_timeout,
        worktrees_dir=server.worktrees_dir,
        agent_settle_delay=server.agent_settle_delay,
        detect_interval=server.detect_interval,
        config_dir=server.config_dir if server.registry_writable else None,
        state_dir=server.state_dir,
        home=server.home,
    )


def restore(
    server: HerdrServer, manifest: HandoffManifest, masters: Mapping[str, int]
) -> list[Pane]:
    """Rebuild ``manifest``'s session in ``server`` (which has none yet); return its panes.

    ``masters`` maps a pane id to the PTY master received for it; a pane
    without one is left out (its layout leaf too). The panes' readers are not
    started: the caller starts them once the handoff is committed.
    """
    runtimes = {runtime.pane_id: runtime for runtime in manifest.panes}
    snapshot = manifest.snapshot
    now = anyio.current_time()
    restored: list[Pane] = []
    for record in snapshot.workspaces:
        ws = Workspace(
            number=record.number,
            id=record.id,
            label=record.label,
            tokens=dict(record.tokens),
            worktree=record.worktree,
            tab_numbers=itertools.count(record.next_tab),
            pane_numbers=itertools.count(record.next_pane),
        )
        pane_records = {pane.id: pane for pane in record.panes}
        for tab_record in record.tabs:
            tab = Tab(
                number=tab_record.number,
                id=tab_record.id,
                workspace=ws,
                label=tab_record.label,
                zoomed=tab_record.zoomed,
                split_ids=itertools.count(tab_record.next_split),
            )
            builder = _Builder(
                tab=tab, records=pane_records, runtimes=runtimes, masters=masters, now=now
            )
            tab.root = None if tab_record.root is None else builder.build(tab_record.root)
            if tab.root is None:
                continue
            focused = builder.panes.get(tab_record.focused_pane_id or "")
            tab.focused_pane = focused or tab.panes()[0]
            ws.tabs.append(tab)
            restored += tab.panes()
        if not ws.tabs:
            continue
        ws.active_tab = next((tab for tab in ws.tabs if tab.id == record.active_tab_id), ws.tabs[0])
        server.workspaces.append(ws)
    server.active = next(
        (ws for ws in server.workspaces if ws.id == snapshot.active_workspace_id),
        server.workspaces[0] if server.workspaces else None,
    )
    server._workspace_numbers = itertools.count(snapshot.next_workspace)
    server._terminal_numbers = itertools.count(snapshot.next_terminal)
    server.plugin_panes.update(
        {key: value for key, value in snapshot.plugin_panes.items() if _alive(server, key)}
    )
    server.agent_view = snapshot.agent_view
    server.window_title = manifest.api_window_title
    return restored


class _Builder:
    """Rebuilds one tab's layout tree from its record, adopting each leaf's PTY."""

    def __init__(
        self,
        *,
        tab: Tab,
        records: Mapping[str, PaneRecord],
        runtimes: Mapping[str, PaneRuntime],
        masters: Mapping[str, int],
        now: float,
    ) -> None:
        self.tab = tab
        self.records = records
        self.runtimes = runtimes
        self.masters = masters
        self.now = now
        self.panes: dict[str, Pane] = {}

    def build(self, node: Node) -> Split | Pane | None:
        """Return the subtree of ``node``; a leaf without its pane or PTY drops out."""
        if isinstance(node, LeafRecord):
            record = self.records.get(node.pane_id)
            runtime = self.runtimes.get(node.pane_id)
            master = self.masters.get(node.pane_id)
            if record is None or runtime is None or master is None:
                return None
            pane = _pane(record, runtime, master, tab=self.tab, now=self.now)
            self.panes[pane.id] = pane
            return pane
        first = self.build(node.first)
        second = self.build(node.second)
        if first is None or second is None:
            return first or second
        return Split(
            id=node.id, direction=node.direction, ratio=node.ratio, first=first, second=second
        )


def _alive(server: HerdrServer, pane_id: str) -> bool:
    return any(pane.id == pane_id for ws in server.workspaces for pane in ws.panes())


def _pane(record: PaneRecord, runtime: PaneRuntime, master: int, *, tab: Tab, now: float) -> Pane:
    screen = PaneScreen(cols=runtime.cols, rows=runtime.rows)
    if runtime.initial_history_ansi:
        screen.feed(runtime.initial_history_ansi.encode())
        screen.take_replies()  # the source already answered what the program asked
    return Pane(
        number=record.number,
        id=record.id,
        terminal_id=record.terminal_id,
        workspace=tab.workspace,
        tab=tab,
        process=PtyProcess.adopt(master, runtime.child_pid),
        screen=screen,
        cwd=record.cwd,
        created_at=now - record.age,
        exited=record.exited,
        label=record.label,
        agent=record.agent,
        agent_name=record.agent_name,
        agent_status=record.agent_status,
        agent_source=record.agent_source,
        state_change_seq=record.state_change_seq,
        title=record.title,
        display_agent=record.display_agent,
        state_labels=dict(record.state_labels),
        tokens=dict(record.tokens),
        agent_session=record.agent_session,
        right_click=record.right_click,
    )
