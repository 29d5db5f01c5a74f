"""The herdr reference server: herdr's connection model over a real workspace model.

One request per connection, read within 5 s and at most 1 MiB, answered with
one line, then closed; ``events.subscribe`` and the waits hold the connection.
Every pane runs a real program on a PTY. Every method of protocols 20, 21 and
22 has a handler (:data:`MODELLED_METHODS`); a method without one would answer
``not_implemented``, and a handler that fails unexpectedly answers
``internal_error``. What each method does here and where this server knowingly
differs from herdr are in the documentation:
``docs/architecture/decisions/herdr.rst`` (*The reference server*).
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import itertools
import logging
import os
import re
import shlex
import shutil
import socket
import typing
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
import msgspec

from shedproto import RemoteProtocolError
from shedproto.herdr import (
    AGENT_NAME_PATTERN,
    AGENT_START_SETTLE_SECONDS,
    DEFAULT_PROTOCOL,
    EVENTS_LOST,
    HERDR_VERSIONS,
    MAX_MATCHES,
    NOT_MODELLED,
    ClientGone,
    ConnectionClosed,
    ErrorResponse,
    HerdrErrorCode,
    LifecycleEvent,
    ReplayRule,
    ServerConnection,
    SubscriptionEvent,
    SuccessResponse,
    UnsupportedKeyError,
    agent_name_error,
    agent_start_error,
    begin_launch,
    branch_exists_args,
    checkout_path,
    copy_motion,
    current_match,
    detected_without_screen,
    encode_keys,
    event_kind,
    generated_branch,
    is_dirty_remove_error,
    links,
    option_shaped,
    parse_pane_ref,
    parse_tab_ref,
    parse_workspace_ref,
    parse_worktree_list,
    probe_id,
    reconcile_launch,
    removed_worktree,
    replay_rule,
    search,
    select_text,
    worktree_add_args,
    worktree_info,
    worktree_remove_args,
    worktree_source,
)
from shedproto.herdr import types as t
from shedproto.herdr._screen import split_lines
from shedproto.herdr._versions import require_supported
from shedproto.servers._idle import loop_clock
from shedproto.servers._receive import SocketPump, raw_socket_of, receive_or_eof
from shedproto.servers._unix import UnixServer

from ._model import EventHub, Pane, Split, Tab, Workspace, aggregate_status, new_workspace_id
from ._procinfo import process_info
from ._pty import PtyProcess
from ._screen import PaneScreen

__all__ = [
    "AGENT_NAME_PATTERN",
    "DEFAULT_AGENT_KINDS",
    "HerdrServer",
    "MODELLED_METHODS",
]

log = logging.getLogger("shedproto.servers.herdr")

DEFAULT_AGENT_KINDS: tuple[str, ...] = (
    "pi", "omp", "claude", "codex", "copilot", "devin", "droid", "kimi", "opencode",
    "kilo", "hermes", "qodercli", "qwen", "cursor", "mastracode", "antigravity_cli",
    "grok", "command_code", "gemini", "amp",
)  # fmt: skip
"""Agent kinds ``agent.start`` accepts by default; each runs the program of its name."""
POLL_INTERVAL = 0.1
"""herdr's subscription and output-wait polling period (seconds)."""
WRITE_TIMEOUT = 5.0
FEED_SLICE = 4096
"""Bytes of pane output emulated between two event-loop checkpoints."""
PROMPT_ENTER_DELAY = 0.05
PROMPT_STALL_SECONDS = 5.0

_HANDLERS: dict[str, str] = {
    "ping": "_ping",
    "server.stop": "_ok_handler",
    "session.snapshot": "_snapshot",
    "workspace.create": "_workspace_create",
    "workspace.list": "_workspace_list",
    "workspace.get": "_workspace_get",
    "workspace.focus": "_workspace_focus",
    "workspace.rename": "_workspace_rename",
    "workspace.close": "_workspace_close",
    "tab.create": "_tab_create",
    "tab.list": "_tab_list",
    "tab.get": "_tab_get",
    "tab.focus": "_tab_focus",
    "tab.rename": "_tab_rename",
    "tab.close": "_tab_close",
    "pane.split": "_pane_split",
    "pane.list": "_pane_list",
    "pane.get": "_pane_get",
    "pane.focus": "_pane_focus",
    "pane.rename": "_pane_rename",
    "pane.close": "_pane_close",
    "pane.send_text": "_pane_send_text",
    "pane.send_keys": "_pane_send_keys",
    "pane.send_input": "_pane_send_input",
    "pane.read": "_pane_read",
    "pane.wait_for_output": "_pane_wait_for_output",
    "pane.report_agent": "_pane_report_agent",
    "pane.layout": "_pane_layout",
    "agent.start": "_agent_start",
    "agent.list": "_agent_list",
    "agent.get": "_agent_get",
    "agent.wait": "_agent_wait",
    "agent.prompt": "_agent_prompt",
    "events.wait": "_events_wait",
    "pane.process_info": "_pane_process_info",
    "agent.read": "_agent_read",
    "pane.zoom": "_pane_zoom",
    "notification.show": "_notification_show",
    "pane.report_metadata": "_pane_report_metadata",
    "workspace.report_metadata": "_workspace_report_metadata",
    "pane.report_agent_session": "_pane_report_agent_session",
    "layout.export": "_layout_export",
    "integration.list": "_integration_list",
    "pane.scroll": "_pane_scroll",
    "pane.selection.read": "_pane_selection_read",
    "release_notes.dismiss": "_dismiss",
    "product_announcement.dismiss": "_dismiss",
    "server.reload_config": "_reload_config",
    "agent.send_keys": "_agent_send_keys",
    "agent.rename": "_agent_rename",
    "agent.focus": "_agent_focus",
    "agent.explain": "_agent_explain",
    "pane.clear_agent_authority": "_pane_clear_agent_authority",
    "pane.release_agent": "_pane_release_agent",
    "server.agent_manifests": "_agent_manifests",
    "server.reload_agent_manifests": "_reload_agent_manifests",
    "server.live_handoff": "_live_handoff",
    "client.window_title.set": "_window_title",
    "client.window_title.clear": "_window_title",
    "client_shell.surface.set": "_client_shell_surface",
    "pane.input.set": "_pane_input_set",
    "pane.current": "_pane_current",
    "popup.close": "_popup_close",
    "agent.view.set": "_agent_view_set",
    "agent.view.clear": "_agent_view_clear",
    "integration.install": "_integration_refused",
    "integration.uninstall": "_integration_refused",
    "command.invoke": "_command_invoke",
    "pane.edit_scrollback": "_edit_scrollback",
    "pane.neighbor": "_pane_neighbor",
    "pane.edges": "_pane_edges",
    "pane.focus_direction": "_pane_focus_direction",
    "pane.resize": "_pane_resize",
    "pane.swap": "_pane_swap",
    "layout.set_split_ratio": "_set_split_ratio",
    "tab.move": "_tab_move",
    "workspace.move": "_workspace_move",
    "workspace.move_block": "_workspace_move_block",
    "pane.graphics.set": "_graphics_set",
    "pane.graphics.clear": "_graphics_clear",
    "pane.graphics.info": "_graphics_info",
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
    "pane.copy_motion": "_copy_motion",
    "pane.copy_search": "_copy_search",
    "pane.link.resolve": "_link_resolve",
    "pane.link.activate": "_link_activate",
    "worktree.list": "_worktree_list",
    "worktree.create": "_worktree_create",
    "worktree.open": "_worktree_open",
    "worktree.remove": "_worktree_remove",
    "pane.move": "_pane_move",
    "layout.apply": "_layout_apply",
}
"""Method -> the name of the ``HerdrServer`` coroutine that answers it."""

MODELLED_METHODS: frozenset[str] = frozenset({*_HANDLERS, "events.subscribe"})
"""The methods the reference server implements; the rest answer ``not_implemented``."""


class AnswerError(Exception):
    """Raised inside a handler: answer ``{"error": {code, message}}`` (optionally another id)."""

    def __init__(self, code: str | HerdrErrorCode, message: str, *, id: str | None = None) -> None:
        super().__init__(message)
        self.code = code.value if isinstance(code, HerdrErrorCode) else code
        self.message = message
        self.id = id


E = HerdrErrorCode

_CLIENT_GONE: contextvars.ContextVar[bool] = contextvars.ContextVar("_CLIENT_GONE", default=False)
"""Set while answering a wait whose client already sent the bytes that end it."""


class _ClientLeftError(Exception):
    """Raised at a socket probe point when the client is gone: the answer is dropped."""


def _probe() -> None:
    """Probe the socket as herdr does between rounds: raise if the client is gone."""
    if _CLIENT_GONE.get():
        raise _ClientLeftError


@dataclass
class _Area:
    cols: int
    rows: int


Handler = Callable[[str, Any], Awaitable[Any]]


class HerdrServer:
    """A herdr stand-in serving the JSON API on ``path``; start it with ``serve``.

    ``protocol``/``version`` are what ``ping`` and ``session.snapshot`` report
    (``version`` defaults to the herdr release of that protocol); the
    protocol also picks herdr's subscription replay rule.
    ``shell`` is the program a new pane runs (default ``$SHELL``, else
    ``/bin/sh``); ``agent_commands`` maps an agent kind to the program
    ``agent.start`` types (default: the kind's own name), and its keys are
    added to the accepted kinds. ``environ`` is the base environment of pane
    processes (default ``os.environ``); the ``HERDR_*`` identity variables are
    added to it. ``input_timeout`` bounds how long a write to a pane may wait
    for its program to read (then ``pane_send_failed``). ``worktrees_dir`` is
    where ``worktree.create`` puts new checkouts (herdr's ``~/.herdr/worktrees``).
    ``agent_settle_delay`` is how long a started agent must exist before it
    can be ``interactive_ready`` (herdr's 3 s; tests may shorten it).

    Use ``await task_group.start(server.serve)``; ``shutdown()`` (or
    ``server.stop``) stops it and terminates every pane process.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        protocol: int = DEFAULT_PROTOCOL,
        version: str | None = None,
        shell: Sequence[str] | None = None,
        agent_commands: Mapping[str, str] | None = None,
        environ: Mapping[str, str] | None = None,
        cwd: str | None = None,
        size: tuple[int, int] = (120, 40),
        poll_interval: float = POLL_INTERVAL,
        request_timeout: float = 5.0,
        input_timeout: float = 5.0,
        worktrees_dir: str | None = None,
        agent_settle_delay: float = AGENT_START_SETTLE_SECONDS,
    ) -> None:
        require_supported(protocol)
        self.path = Path(path)
        self.protocol = protocol
        self.version = HERDR_VERSIONS[protocol] if version is None else version
        self.replay: ReplayRule = replay_rule(protocol)
        base_env = dict(os.environ if environ is None else environ)
        self.shell = list(shell) if shell else [base_env.get("SHELL") or "/bin/sh"]
        self.agent_commands = {kind: kind for kind in DEFAULT_AGENT_KINDS}
        self.agent_commands.update(agent_commands or {})
        self.environ = base_env
        self.cwd = cwd or base_env.get("HOME") or os.getcwd()
        self.area = _Area(cols=size[0], rows=size[1])
        self.poll_interval = poll_interval
        self.request_timeout = request_timeout
        self.input_timeout = input_timeout
        self.agent_settle_delay = agent_settle_delay
        self.hub = EventHub()
        self.notifications: list[t.NotificationShowParams] = []
        """Every ``notification.show`` accepted (no TUI shows them)."""
        self.dismissed: list[Any] = []
        """The params of every release-notes and announcement dismissal."""
        self.window_title: str | None = None
        self.surface_active = False
        self.surface_revision = 0
        self.agent_view: t.AgentViewSetParams | None = None
        self.graphics: dict[str, dict[str, t.PaneGraphicsSetParams]] = {}
        """Pane id -> layer id -> the image last set there (no terminal draws them)."""
        self.plugins: dict[str, t.InstalledPluginInfo] = {}
        self.worktrees_dir = worktrees_dir or os.path.join(
            base_env.get("HOME") or self.cwd, ".herdr", "worktrees"
        )
        self._worktree_seeds = itertools.count(1)
        self.workspaces: list[Workspace] = []
        self.active: Workspace | None = None
        self._workspace_numbers = itertools.count(1)
        self._terminal_numbers = itertools.count(1)
        self._tasks: anyio.abc.TaskGroup | None = None
        self._live: set[PtyProcess] = set()
        self._unix = UnixServer(self.path, self._handle, grace=1.0)
        self._clock: Callable[[], float] = anyio.current_time
        """The running loop's clock while serving (:func:`loop_clock`: found once, not per read)."""
        self._handlers: dict[str, Handler] = self._handler_table()

    # ------------------------------------------------------------------ lifecycle
    async def serve(
        self, *, task_status: anyio.abc.TaskStatus[Path] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Bind, report readiness with the socket path, serve until shut down.

        Every pane process is terminated when this returns (or is cancelled).

        Raises:
            BindError: the socket path is refused by the bind ceremony.

        """
        try:
            async with anyio.create_task_group() as tasks:
                self._tasks = tasks
                await tasks.start(self._serve_socket, task_status)
        finally:
            self._tasks = None
            with anyio.CancelScope(shield=True):
                await self._terminate_all()

    async def _serve_socket(
        self,
        outer: anyio.abc.TaskStatus[Path],
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        self._clock = loop_clock()
        path = await self._tasks.start(self._unix.serve)  # type: ignore[union-attr]
        task_status.started()
        outer.started(path)
        await anyio.sleep_forever()

    def shutdown(self) -> None:
        """Stop accepting, end open streams and terminate every pane; safe to call twice."""
        self._unix.shutdown()
        if self._tasks is not None:
            self._tasks.cancel_scope.cancel()

    async def _terminate_all(self) -> None:
        for ws in self.workspaces:
            for pane in ws.panes():
                pane.closed = True
        async with anyio.create_task_group() as tg:
            for process in list(self._live):
                tg.start_soon(self._reap, process)
        self.workspaces.clear()
        self.active = None

    async def _reap(self, process: PtyProcess) -> None:
        """Terminate and reap one pane process; shielded so shutdown cannot leave it behind."""
        with anyio.CancelScope(shield=True):
            await process.terminate()
        self._live.discard(process)

    # ------------------------------------------------------------------ connection
    async def _handle(self, stream: anyio.abc.SocketStream) -> None:
        """Serve one connection: read the request line, answer it, close.

        The fast path (issue 16) costs no timer and no extra event-loop pass:
        the request is read straight from the socket
        (:meth:`~shedproto.servers._receive.SocketPump.receive_now`) and a
        deadline scope is armed only when the line is not there yet; the
        answer is written straight to the socket
        (:meth:`~shedproto.servers._receive.SocketPump.send_now`) and only
        what the socket does not take waits, under :data:`WRITE_TIMEOUT`.
        The accept time is read from the loop's clock, found once per server
        (``anyio.current_time`` finds the backend on every call).
        """
        conn = ServerConnection(
            protocol=self.protocol,
            accepted_at=self._clock(),
            request_timeout=self.request_timeout,
        )
        pump = SocketPump(stream)
        received = await self._read_request(pump, conn)
        if received is None:
            return
        request, gone = received
        method = str(request.__struct_config__.tag)
        if method == "events.subscribe":
            await self._subscribe(stream, conn, request, gone=gone)
            return
        if conn.holds_connection:
            answer = await self._answer_unless_gone(stream, conn, request, gone)
            if answer is None:
                return
        else:
            answer = await self._answer(request)
        await self._write_pumped(pump, conn.send(answer))
        if method == "server.stop":
            self.shutdown()

    async def _read_request(
        self, pump: SocketPump, conn: ServerConnection
    ) -> tuple[t.Request, bool] | None:
        """Return the request and whether the client already left, or ``None`` when done.

        ``None``: the line was bad (herdr's ``invalid_request`` line is
        written first where herdr writes one), the stream ended first, or the
        line missed ``conn.deadline`` (a silent close, as herdr).
        """
        gone = False
        data = pump.receive_now()
        while True:
            if data is None:
                with anyio.CancelScope(deadline=conn.deadline):
                    data = await pump.receive()
                if data is None:  # the deadline passed
                    conn.handle_timeout(self._clock())
                    return None
            try:
                events = conn.receive_data(data)
            except RemoteProtocolError:
                reply = conn.data_to_send()  # herdr's invalid_request line, or a silent close
                if reply:
                    await self._write_pumped(pump, reply)
                return None
            request: t.Request | None = None
            for event in events:
                if isinstance(event, ConnectionClosed):
                    return None
                if isinstance(event, ClientGone):
                    gone = True
                else:
                    request = event
            if request is not None:
                return request, gone
            data = None

    async def _answer_unless_gone(
        self,
        stream: anyio.abc.SocketStream,
        conn: ServerConnection,
        request: t.Request,
        gone: bool,
    ) -> SuccessResponse[Any] | ErrorResponse | None:
        if gone:
            # herdr already has the bytes that end the wait: it still answers
            # whatever it decides before its first probe of the socket
            # (validation errors, a status that already matches) and drops
            # the rest; the handlers call _probe() where herdr probes.
            token = _CLIENT_GONE.set(True)
            try:
                return await self._answer(request)
            except _ClientLeftError:
                return None
            finally:
                _CLIENT_GONE.reset(token)
        result: list[SuccessResponse[Any] | ErrorResponse] = []
        async with anyio.create_task_group() as tg:

            async def work() -> None:
                result.append(await self._answer(request))
                tg.cancel_scope.cancel()

            tg.start_soon(work)
            await self._watch_client(stream, conn)
            tg.cancel_scope.cancel()  # the client left: drop the answer
        return result[0] if result else None

    async def _watch_client(self, stream: anyio.abc.SocketStream, conn: ServerConnection) -> None:
        while True:
            data = await receive_or_eof(stream)
            if any(isinstance(e, ClientGone) for e in conn.receive_data(data)) or not data:
                return

    async def _write_pumped(self, pump: SocketPump, data: bytes) -> None:
        """Write ``data`` straight to the socket; only a rest waits, up to :data:`WRITE_TIMEOUT`.

        A client that is gone loses its answer silently.
        """
        try:
            rest = pump.send_now(data)
        except anyio.BrokenResourceError:
            return
        if rest:
            await self._write(pump.stream, rest)

    async def _write(self, stream: anyio.abc.ByteSendStream, data: bytes) -> None:
        with (
            anyio.move_on_after(WRITE_TIMEOUT),
            contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError),
        ):
            await stream.send(data)

    async def _answer(self, request: t.Request) -> SuccessResponse[Any] | ErrorResponse:
        method = str(request.__struct_config__.tag)
        handler = self._handlers.get(method)
        if handler is None:
            return ErrorResponse.of(
                request.id,
                NOT_MODELLED,
                f"method {method} is not modelled by the shedproto herdr reference server",
            )
        try:
            result = await handler(request.id, request.params)  # type: ignore[attr-defined]
        except AnswerError as failure:
            failure_id = request.id if failure.id is None else failure.id
            return ErrorResponse.of(failure_id, failure.code, failure.message)
        except _ClientLeftError:
            raise
        except Exception as exc:  # a bug here must not cost the client its answer
            log.exception("%s failed", method)
            return ErrorResponse.of(request.id, E.INTERNAL_ERROR, f"{method} failed: {exc}")
        return SuccessResponse(id=request.id, result=result)

    def _handler_table(self) -> dict[str, Handler]:
        return {method: getattr(self, name) for method, name in _HANDLERS.items()}

    # ------------------------------------------------------------------ info builders
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
            first, second = _divide(rect, node.direction, node.ratio)
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

    # ------------------------------------------------------------------ lookups
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

    # ------------------------------------------------------------------ focus + events
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

    # ------------------------------------------------------------------ panes
    def _check_env(self, env: Mapping[str, str]) -> None:
        for key, value in env.items():
            if not key or "=" in key or "\0" in key or "\0" in value:
                raise AnswerError(E.INVALID_ENV, f"invalid environment variable {key!r}")

    def _spawn(self, ws: Workspace, tab: Tab, cwd: str | None, env: Mapping[str, str]) -> Pane:
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
            process = PtyProcess.spawn(
                self.shell, env=environment, cwd=directory, cols=self.area.cols, rows=self.area.rows
            )
        except OSError as exc:
            raise AnswerError(E.PANE_SPLIT_FAILED, f"cannot start {self.shell[0]}: {exc}") from exc
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
            while True:
                data = await pane.process.read()
                if not data:
                    break
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
        if pane.closed:
            return
        await pane.process.wait_exit(2.0)
        if _is_closed(pane):
            return
        pane.exited = True
        self.hub.emit(t.PaneExitedEventData(pane_id=pane.id, workspace_id=pane.workspace.id))
        pane.notify_output()
        await self._close_pane(pane)

    def _resize(self, tab: Tab) -> None:
        for pane in tab.panes():
            cols, rows = self._pane_rect(pane)
            pane.screen.resize(cols, rows)
            pane.process.resize(cols, rows)

    async def _close_pane(self, pane: Pane) -> None:
        if pane.closed and pane not in pane.tab.panes():
            return
        pane.closed = True
        tab, ws = pane.tab, pane.workspace
        tab.root = _remove(tab.root, pane) if tab.root is not None else None
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
        self.hub.emit(t.WorkspaceClosedEventData(workspace_id=ws.id, workspace=info))
        if self.active is ws:
            self.active = self.workspaces[max(0, index - 1)] if self.workspaces else None
            if self.active is not None:
                self.hub.emit(t.WorkspaceFocusedEventData(workspace_id=self.active.id))

    async def _close_all(self, panes: list[Pane]) -> None:
        for pane in panes:
            await self._close_pane(pane)

    # ------------------------------------------------------------------ handlers: server
    async def _ping(self, id: str, params: Any) -> t.PongReply:
        return t.PongReply(
            version=self.version,
            protocol=self.protocol,
            capabilities=t.ServerCapabilities(live_handoff=False, detached_server_daemon=False),
        )

    async def _ok_handler(self, id: str, params: Any) -> t.OkReply:
        return t.OkReply()

    async def _snapshot(self, id: str, params: Any) -> t.SessionSnapshotReply:
        tabs = [tab for ws in self.workspaces for tab in ws.tabs]
        panes = [pane for ws in self.workspaces for pane in ws.panes()]
        focused_tab = self.active.active_tab if self.active else None
        focused_pane = focused_tab.focused_pane if focused_tab else None
        snapshot = t.SessionSnapshot(
            version=self.version,
            protocol=self.protocol,
            focused_workspace_id=self.active.id if self.active else None,
            focused_tab_id=focused_tab.id if focused_tab else None,
            focused_pane_id=focused_pane.id if focused_pane else None,
            workspaces=[self._ws_info(ws) for ws in self.workspaces],
            tabs=[self._tab_info(tab) for tab in tabs],
            panes=[self._pane_info(pane) for pane in panes],
            layouts=[self._layout(tab) for tab in tabs],
            agents=[p.agent_info(self._pane_focused(p)) for p in panes if p.agent is not None],
        )
        return t.SessionSnapshotReply(snapshot=snapshot)

    # ------------------------------------------------------------------ handlers: workspaces
    async def _workspace_create(
        self, id: str, params: t.WorkspaceCreateParams
    ) -> t.WorkspaceCreatedReply:
        self._check_env(params.env)
        number = next(self._workspace_numbers)
        cwd = params.cwd or self.cwd
        label = params.label or (os.path.basename(cwd.rstrip("/")) or cwd)
        ws = Workspace(number=number, id=new_workspace_id(number), label=label)
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
        ws = self._find_workspace(params.workspace_id)
        await self._close_all(ws.panes())
        return t.OkReply()

    # ------------------------------------------------------------------ handlers: tabs
    async def _tab_create(self, id: str, params: t.TabCreateParams) -> t.TabCreatedReply:
        self._check_env(params.env)
        if params.workspace_id is not None:
            ws = self._find_workspace(params.workspace_id)
        elif self.active is not None:
            ws = self.active
        else:
            raise AnswerError(E.WORKSPACE_NOT_FOUND, "no active workspace")
        tab = ws.new_tab(params.label)
        try:
            pane = self._spawn(ws, tab, params.cwd, params.env)
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
        await self._close_all(tab.panes())
        return t.OkReply()

    # ------------------------------------------------------------------ handlers: panes
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
        pane = self._spawn(ws, tab, params.cwd or target.cwd, params.env)
        split = Split(
            id=f"s{next(tab.split_ids)}",
            direction=params.direction,
            ratio=0.5 if params.ratio is None else params.ratio,
            first=target,
            second=pane,
        )
        tab.root = _replace(tab.root, target, split)
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
        await self._close_pane(self._find_pane(params.pane_id))
        return t.OkReply()

    async def _write_pane(self, pane: Pane, data: bytes) -> None:
        try:
            await pane.process.write(data, timeout=self.input_timeout)
        except OSError as exc:
            raise AnswerError(E.PANE_SEND_FAILED, f"pane {pane.id}: {exc}") from exc

    async def _pane_send_text(self, id: str, params: t.PaneSendTextParams) -> t.OkReply:
        await self._write_pane(self._find_pane(params.pane_id), params.text.encode())
        return t.OkReply()

    def _keys(self, keys: Sequence[str]) -> bytes:
        try:
            return encode_keys(keys)
        except UnsupportedKeyError as exc:
            raise AnswerError(E.INVALID_KEY, str(exc)) from None

    async def _pane_send_keys(self, id: str, params: t.PaneSendKeysParams) -> t.OkReply:
        pane = self._find_pane(params.pane_id)
        await self._write_pane(pane, self._keys(params.keys))
        return t.OkReply()

    async def _pane_send_input(self, id: str, params: t.PaneSendInputParams) -> t.OkReply:
        pane = self._find_pane(params.pane_id)
        keys = self._keys(params.keys)  # an unknown key fails before anything is written
        await self._write_pane(pane, _paste(pane, params.text) + keys)
        return t.OkReply()

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

    async def _pane_read(self, id: str, params: t.PaneReadParams) -> t.PaneReadReply:
        pane = self._find_pane(params.pane_id)
        return t.PaneReadReply(read=self._read(pane, params.source, params.lines, params.format))

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

    async def _pane_wait_for_output(
        self, id: str, params: t.PaneWaitForOutputParams
    ) -> t.OutputMatchedReply:
        test = self._matcher(params.match)
        deadline = (
            None if params.timeout_ms is None else anyio.current_time() + params.timeout_ms / 1000
        )
        while True:
            _probe()
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

    async def _pane_report_agent(self, id: str, params: t.PaneReportAgentParams) -> t.OkReply:
        pane = self._find_pane(params.pane_id)
        if not params.source:
            raise AnswerError(E.INVALID_METADATA_SOURCE, "source must not be empty")
        newly = pane.agent != params.agent
        pane.agent = params.agent
        pane.agent_source = params.source
        status: t.AgentStatus = params.state
        if status == "idle" and pane.agent_status == "working" and not self._pane_focused(pane):
            status = "done"
        if newly:
            self.hub.emit(
                t.PaneAgentDetectedEventData(
                    pane_id=pane.id, workspace_id=pane.workspace.id, agent=pane.agent
                )
            )
        self._set_agent_status(pane, status)
        self._reconcile_launch(pane)
        pane.notify_output()
        return t.OkReply()

    def _set_agent_status(self, pane: Pane, status: t.AgentStatus) -> None:
        if status != pane.agent_status:
            pane.agent_status = status
            pane.state_change_seq += 1
            self.hub.emit(
                t.PaneAgentStatusChangedEventData(
                    pane_id=pane.id,
                    workspace_id=pane.workspace.id,
                    agent_status=status,
                    agent=pane.agent,
                )
            )

    async def _pane_layout(self, id: str, params: t.PaneLayoutParams) -> t.PaneLayoutReply:
        pane = self._find_pane(params.pane_id) if params.pane_id else self._focused_pane()
        return t.PaneLayoutReply(layout=self._layout(pane.tab))

    # ------------------------------------------------------------------ handlers: agents
    def _agent_panes(self) -> list[Pane]:
        panes = [p for ws in self.workspaces for p in ws.panes()]
        for pane in panes:
            self._reconcile_launch(pane)
        return [p for p in panes if p.agent is not None]

    def _reconcile_launch(self, pane: Pane) -> None:
        """Bring a started agent's readiness up to date (herdr's managed-agent rule).

        Without herdr's screen detection, an agent no hook reported on
        (``pane.report_agent``) counts as detected, and idle, while the program
        ``agent.start`` typed holds the terminal's foreground; when it is gone
        again it counts as exited. When the rule releases the name, such an
        agent leaves the pane too.
        """
        launch = pane.launch
        if launch is None:
            return
        hooked = pane.agent_source is not None
        running = not pane.closed and not pane.process.foreground_is_shell()
        known, status = detected_without_screen(
            launch, pane.agent, pane.agent_status, hooked=hooked, running=running
        )
        self._set_agent_status(pane, status)
        exited = pane.closed or pane.exited
        now = anyio.current_time()
        pane.launch = reconcile_launch(launch, now, known, status, process_exited=exited)
        if pane.launch is None:
            pane.agent_name = None
            if not hooked:
                pane.agent = None
                self._set_agent_status(pane, "unknown")

    def _find_agent(self, target: str) -> Pane:
        by_name = [p for p in self._agent_panes() if p.agent_name == target]
        by_pane = [p for p in self._agent_panes() if p.id == target]
        found = {id(p): p for p in by_name + by_pane}
        if len(found) > 1:
            raise AnswerError(E.AGENT_TARGET_AMBIGUOUS, f"agent target {target} is ambiguous")
        if not found:
            raise AnswerError(E.AGENT_NOT_FOUND, f"agent {target} not found")
        return next(iter(found.values()))

    def _agent_reply(self, pane: Pane) -> t.AgentInfo:
        return pane.agent_info(self._pane_focused(pane))

    async def _agent_list(self, id: str, params: Any) -> t.AgentListReply:
        return t.AgentListReply(agents=[self._agent_reply(p) for p in self._agent_panes()])

    async def _agent_get(self, id: str, params: t.AgentTarget) -> t.AgentInfoReply:
        return t.AgentInfoReply(agent=self._agent_reply(self._find_agent(params.target)))

    async def _agent_start(self, id: str, params: t.AgentStartParams) -> t.AgentStartedReply:
        failure = agent_start_error(
            params.name, params.kind, self.agent_commands, params.timeout_ms, params.args
        )
        if failure is not None:
            raise AnswerError(*failure)
        command = self.agent_commands[params.kind]
        try:
            pane = self._find_pane(params.pane_id)
        except AnswerError:
            raise AnswerError(E.AGENT_PANE_NOT_FOUND, f"pane {params.pane_id} not found") from None
        if any(p.agent_name == params.name for p in self._agent_panes()):
            raise AnswerError(E.AGENT_NAME_TAKEN, f"agent name {params.name} is already taken")
        if pane.agent is not None or not await self._shell_ready(pane):
            raise AnswerError(E.AGENT_PANE_BUSY, f"pane {pane.id} is busy")
        argv = [params.kind, *params.args]
        line = shlex.join([command, *params.args])
        try:
            await pane.process.write(_paste(pane, line))
            await anyio.sleep(PROMPT_ENTER_DELAY)
            await pane.process.write(b"\r")
        except OSError as exc:
            raise AnswerError(E.AGENT_START_INPUT_FAILED, f"pane {pane.id}: {exc}") from exc
        pane.agent = params.kind
        pane.agent_name = params.name
        pane.launch = begin_launch(
            params.kind, anyio.current_time(), params.timeout_ms, self.agent_settle_delay
        )
        self.hub.emit(
            t.PaneAgentDetectedEventData(
                pane_id=pane.id, workspace_id=pane.workspace.id, agent=pane.agent
            )
        )
        return t.AgentStartedReply(agent=self._agent_reply(pane), argv=argv)

    async def _shell_ready(self, pane: Pane) -> bool:
        """Return whether the pane's own program owns its terminal (a fresh pane gets 2 s)."""
        patience = max(0.0, pane.created_at + 2.0 - anyio.current_time())
        with anyio.move_on_after(patience):
            while not pane.process.foreground_is_shell():
                if pane.closed:
                    return False
                await anyio.sleep(0.02)
            return True
        return False

    async def _wait_status(
        self,
        pane: Pane,
        until: Sequence[str],
        deadline: float | None,
        *,
        after_seq: int | None = None,
    ) -> None:
        wanted = set(until or ("idle", "done", "blocked"))
        while True:
            if pane.closed or pane.agent is None:
                raise AnswerError(
                    E.AGENT_NOT_RUNNING, f"agent in pane {pane.id} is no longer running"
                )
            moved = after_seq is None or pane.state_change_seq > after_seq
            if moved and pane.agent_status in wanted:
                return
            _probe()
            remaining = None if deadline is None else deadline - anyio.current_time()
            if remaining is not None and remaining <= 0:
                raise AnswerError(E.TIMEOUT, "timed out waiting for agent status")
            with anyio.move_on_after(remaining if remaining is not None else float("inf")):
                await pane.output.wait()

    async def _agent_wait(self, id: str, params: t.AgentWaitParams) -> t.AgentInfoReply:
        pane = self._find_agent(params.target)
        deadline = (
            None if params.timeout_ms is None else anyio.current_time() + params.timeout_ms / 1000
        )
        await self._wait_status(pane, params.until, deadline)
        return t.AgentInfoReply(agent=self._agent_reply(pane))

    async def _agent_prompt(self, id: str, params: t.AgentPromptParams) -> t.AgentPromptedReply:
        pane = self._find_agent(params.target)
        if not params.text.strip():
            raise AnswerError(E.EMPTY_AGENT_PROMPT, "prompt text is empty")
        if pane.launch is not None and pane.launch.launch_pending:
            raise AnswerError(
                E.AGENT_NOT_READY, f"agent {params.target} is not an active named agent"
            )
        seq = pane.state_change_seq
        try:
            await pane.process.write(_paste(pane, params.text))
            await anyio.sleep(PROMPT_ENTER_DELAY)
            await pane.process.write(b"\r")
        except OSError as exc:
            raise AnswerError(E.AGENT_PROMPT_FAILED, f"pane {pane.id}: {exc}") from exc
        if params.wait is not None:
            _probe()
            timeout = params.wait.timeout_ms
            deadline = None if timeout is None else anyio.current_time() + timeout / 1000
            with anyio.move_on_after(PROMPT_STALL_SECONDS):
                while pane.state_change_seq == seq and not pane.closed:
                    await pane.output.wait()
            if pane.state_change_seq == seq and not pane.closed:
                raise AnswerError(
                    E.AGENT_PROMPT_STALLED, f"agent {params.target} did not react to the prompt"
                )
            await self._wait_status(pane, params.wait.until, deadline, after_seq=seq)
        return t.AgentPromptedReply(agent=self._agent_reply(pane))

    # ------------------------------------------------------------------ events
    def _status_event(self, pane: Pane) -> t.PaneAgentStatusChangedEventData:
        return t.PaneAgentStatusChangedEventData(
            pane_id=pane.id,
            workspace_id=pane.workspace.id,
            agent_status=pane.agent_status,
            agent=pane.agent,
        )

    async def _events_wait(self, id: str, params: t.EventsWaitParams) -> t.WaitMatchedReply:
        match = params.match_event
        if not isinstance(match, t.PaneAgentStatusChangedEventMatch):
            raise AnswerError(
                E.UNSUPPORTED_EVENT_WAIT_MATCH,
                f"events.wait does not support {match.__struct_config__.tag}",
            )
        try:
            pane = self._find_pane(match.pane_id)
        except AnswerError as failure:
            raise AnswerError(failure.code, failure.message, id=f"{id}:sub:0:probe") from None
        deadline = (
            None if params.timeout_ms is None else anyio.current_time() + params.timeout_ms / 1000
        )
        while True:
            if pane.closed:
                raise AnswerError(E.PANE_NOT_FOUND, f"pane {match.pane_id} not found")
            if pane.agent_status == match.agent_status:
                data = self._status_event(pane)
                return t.WaitMatchedReply(
                    event=LifecycleEvent(event="pane_agent_status_changed", data=data)
                )
            _probe()
            remaining = None if deadline is None else deadline - anyio.current_time()
            if remaining is not None and remaining <= 0:
                raise AnswerError(E.TIMEOUT, "timed out waiting for event match")
            with anyio.move_on_after(remaining if remaining is not None else float("inf")):
                await pane.output.wait()

    # ------------------------------------------------------------------ handlers: 22 and the rest
    def _pane_or_focused(self, pane_id: str | None) -> Pane:
        return self._focused_pane() if pane_id is None else self._find_pane(pane_id)

    def _tab_of(self, tab_id: str | None, pane_id: str | None) -> Tab:
        """Return the tab named, else the named pane's tab, else the focused pane's."""
        return self._find_tab(tab_id) if tab_id is not None else self._pane_or_focused(pane_id).tab

    def _check_source(self, source: str) -> None:
        if not source.strip():
            raise AnswerError(E.INVALID_METADATA_SOURCE, "metadata source must not be empty")

    async def _pane_process_info(
        self, id: str, params: t.PaneProcessInfoParams
    ) -> t.PaneProcessInfoReply:
        pane = self._pane_or_focused(params.pane_id)
        info = process_info(pane.id, pane.process.pid, pane.process.master)
        return t.PaneProcessInfoReply(process_info=info)

    async def _agent_read(self, id: str, params: t.AgentReadParams) -> t.PaneReadReply:
        pane = self._find_agent(params.target)
        return t.PaneReadReply(read=self._read(pane, params.source, params.lines, params.format))

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

    async def _notification_show(
        self, id: str, params: t.NotificationShowParams
    ) -> t.NotificationShowReply:
        title = " ".join(params.title.split())
        if not title:
            raise AnswerError(E.INVALID_PARAMS, "notification title must not be empty")
        self.notifications.append(params)
        # no TUI client is attached to a reference server: herdr's answer then
        return t.NotificationShowReply(shown=False, reason="no_foreground_client")

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
        _apply_tokens(pane.tokens, params.tokens)
        self._pane_updated(pane)
        return t.OkReply()

    async def _workspace_report_metadata(
        self, id: str, params: t.WorkspaceReportMetadataParams
    ) -> t.OkReply:
        ws = self._find_workspace(params.workspace_id)
        self._check_source(params.source)
        _apply_tokens(ws.tokens, params.tokens)
        self.hub.emit(t.WorkspaceMetadataUpdatedEventData(workspace=self._ws_info(ws)))
        return t.OkReply()

    async def _pane_report_agent_session(
        self, id: str, params: t.PaneReportAgentSessionParams
    ) -> t.OkReply:
        pane = self._find_pane(params.pane_id)
        if params.agent_session_id is not None:
            ref = t.AgentSessionInfo(
                source=params.source, agent=params.agent, kind="id", value=params.agent_session_id
            )
        elif params.agent_session_path is not None:
            ref = t.AgentSessionInfo(
                source=params.source, agent=params.agent, kind="path",
                value=params.agent_session_path,
            )  # fmt: skip
        else:
            raise AnswerError(
                E.INVALID_METADATA_REQUEST, "agent_session_id or agent_session_path is required"
            )
        pane.agent_session = ref
        self._pane_updated(pane)
        return t.OkReply()

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

    async def _integration_list(self, id: str, params: Any) -> t.IntegrationListReply:
        integrations = [
            t.IntegrationInfo(
                target=target,
                label=target,
                command=target,
                available=shutil.which(target, path=self.environ.get("PATH")) is not None,
                state="not_installed",
            )
            for target in typing.get_args(t.IntegrationTarget)
        ]
        return t.IntegrationListReply(integrations=integrations)

    async def _pane_scroll(self, id: str, params: t.PaneScrollParams) -> t.OkReply:
        self._find_pane(params.pane_id)  # the viewport stays at the bottom (decision notes)
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

    async def _dismiss(self, id: str, params: Any) -> t.OkReply:
        self.dismissed.append(msgspec.to_builtins(params))
        return t.OkReply()

    async def _reload_config(self, id: str, params: Any) -> t.ConfigReloadReply:
        return t.ConfigReloadReply(status="applied", diagnostics=[])

    # ------------------------------------------------------------------ handlers: agents, state
    async def _agent_send_keys(self, id: str, params: t.AgentSendKeysParams) -> t.OkReply:
        pane = self._find_agent(params.target)
        await self._write_pane(pane, self._keys(params.keys))
        return t.OkReply()

    async def _agent_rename(self, id: str, params: t.AgentRenameParams) -> t.AgentInfoReply:
        pane = self._find_agent(params.target)
        if pane.launch is not None and pane.launch.launch_pending:
            raise AnswerError(
                E.AGENT_LAUNCH_PENDING, "agent name cannot change while startup is pending"
            )
        if params.name is not None:
            failure = agent_name_error(params.name)
            if failure is not None:
                raise AnswerError(*failure)
            if any(p.agent_name == params.name and p is not pane for p in self._agent_panes()):
                raise AnswerError(E.AGENT_NAME_TAKEN, f"agent name {params.name} is taken")
        pane.agent_name = params.name
        return t.AgentInfoReply(agent=self._agent_reply(pane))

    async def _agent_focus(self, id: str, params: t.AgentTarget) -> t.AgentInfoReply:
        pane = self._find_agent(params.target)
        self._focus_pane(pane)
        return t.AgentInfoReply(agent=self._agent_reply(pane))

    async def _agent_explain(self, id: str, params: t.AgentTarget) -> t.AgentExplainReply:
        pane = self._find_agent(params.target)
        explain = {
            "pane_id": pane.id,
            "agent": pane.agent,
            "agent_status": pane.agent_status,
            "status_source": pane.agent_source or "none",
            "screen_detection": "not modelled: status comes only from pane.report_agent",
        }
        return t.AgentExplainReply(explain=explain)

    async def _pane_clear_agent_authority(
        self, id: str, params: t.PaneClearAgentAuthorityParams
    ) -> t.OkReply:
        pane = self._find_pane(params.pane_id)
        if params.source is None or params.source == pane.agent_source:
            pane.agent_source = None
        return t.OkReply()

    async def _pane_release_agent(self, id: str, params: t.PaneReleaseAgentParams) -> t.OkReply:
        pane = self._find_pane(params.pane_id)
        if pane.agent == params.agent:
            final = pane.agent_status
            pane.agent, pane.agent_name, pane.agent_source = None, None, None
            pane.agent_status = "unknown"
            self.hub.emit(
                t.PaneAgentDetectedEventData(
                    pane_id=pane.id, workspace_id=pane.workspace.id, released=True,
                    final_status=final,
                )
            )  # fmt: skip
        return t.OkReply()

    def _manifests(self) -> list[t.AgentManifestInfo]:
        return [
            t.AgentManifestInfo(
                agent=kind,
                source="builtin",
                source_kind="builtin",
                local_override_shadowing_remote=False,
            )
            for kind in sorted(self.agent_commands)
        ]

    async def _agent_manifests(self, id: str, params: Any) -> t.AgentManifestStatusReply:
        return t.AgentManifestStatusReply(manifests=self._manifests())

    async def _reload_agent_manifests(self, id: str, params: Any) -> t.AgentManifestReloadReply:
        return t.AgentManifestReloadReply(manifests=self._manifests())

    async def _live_handoff(self, id: str, params: t.ServerLiveHandoffParams) -> t.OkReply:
        raise AnswerError(
            E.HANDOFF_FAILED, "live handoff needs a herdr server to hand off to (decision notes)"
        )

    async def _window_title(self, id: str, params: Any) -> t.ClientWindowTitleReply:
        self.window_title = getattr(params, "title", None)
        return t.ClientWindowTitleReply(changed=False, reason="no_foreground_client")

    async def _client_shell_surface(
        self, id: str, params: t.ClientShellSurfaceSetParams
    ) -> t.ClientShellSurfaceSetReply:
        if params.active != self.surface_active:
            self.surface_active = params.active
            self.surface_revision += 1
        return t.ClientShellSurfaceSetReply(
            active=self.surface_active, projection_revision=self.surface_revision
        )

    async def _pane_input_set(self, id: str, params: t.PaneInputSetParams) -> t.OkReply:
        self._find_pane(params.pane_id).right_click = params.right_click
        return t.OkReply()

    async def _pane_current(self, id: str, params: t.PaneCurrentParams) -> t.PaneCurrentReply:
        pane = self._pane_or_focused(params.caller_pane_id)
        return t.PaneCurrentReply(pane=self._pane_info(pane))

    async def _popup_close(self, id: str, params: Any) -> t.OkReply:
        raise AnswerError(E.POPUP_NOT_OPEN, "no popup is open")

    async def _agent_view_set(self, id: str, params: t.AgentViewSetParams) -> t.AgentViewReply:
        self.agent_view = params
        return t.AgentViewReply(active=True, source=params.source, label=params.label)

    async def _agent_view_clear(self, id: str, params: t.AgentViewClearParams) -> t.AgentViewReply:
        view = self.agent_view
        if view is not None and params.source in (None, view.source):
            self.agent_view = None
        return t.AgentViewReply(active=self.agent_view is not None)

    async def _integration_refused(self, id: str, params: Any) -> Any:
        raise AnswerError(
            E.INTEGRATION_INSTALL_FAILED
            if isinstance(params, t.IntegrationInstallParams)
            else E.INTEGRATION_UNINSTALL_FAILED,
            f"the reference server never edits {params.target}'s configuration (decision notes)",
        )

    async def _command_invoke(self, id: str, params: t.CommandInvokeParams) -> t.OkReply:
        raise AnswerError(E.INVALID_PARAMS, f"unknown command {params.command_id}")

    async def _edit_scrollback(self, id: str, params: t.PaneTarget) -> t.OkReply:
        self._find_pane(params.pane_id)  # needs an interactive editor: decision notes
        return t.OkReply()

    # ------------------------------------------------------------------ handlers: geometry
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
            found = _beside(own, rects[other.id], direction)
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
        changed = _resize(pane.tab.root, pane, params.direction, amount)
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
            _swap(source.tab, source, target)
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

    # ------------------------------------------------------------------ handlers: moves, layouts
    def _detach(self, pane: Pane) -> tuple[str | None, str | None]:
        """Take ``pane`` out of its tab (the process keeps running); return closed tab/ws ids."""
        tab, ws = pane.tab, pane.workspace
        tab.root = _remove(tab.root, pane) if tab.root is not None else None
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
            tab.root = _replace(tab.root, target, split)
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
        self, node: t.LayoutNode, tab: Tab, spawned: list[tuple[Pane, list[str] | None]]
    ) -> Split | Pane:
        if isinstance(node, t.SplitLayoutNode):
            return Split(
                id=f"s{next(tab.split_ids)}", direction=node.direction, ratio=node.ratio,
                first=self._layout_build(node.first, tab, spawned),
                second=self._layout_build(node.second, tab, spawned),
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
            pane = self._spawn(ws, tab, node.cwd, node.env)
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
        tab = ws.new_tab(params.tab_label)
        spawned: list[tuple[Pane, list[str] | None]] = []
        tab.root = self._layout_build(params.root, tab, spawned)
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

    # ------------------------------------------------------------------ handlers: worktrees
    async def _git(self, directory: str, *args: str, code: str, check: bool = True) -> str | None:
        """Run ``git -C directory args``; its stdout, or ``code`` with git's message.

        With ``check=False`` a non-zero exit returns None instead of answering ``code``.
        """
        try:
            done = await anyio.run_process(
                ["git", "-C", directory, *args], check=False, env=self.environ
            )
        except OSError as exc:
            raise AnswerError(code, f"cannot run git: {exc}") from None
        if done.returncode != 0:
            if not check:
                return None
            message = done.stderr.decode(errors="replace").strip() or f"git {args[0]} failed"
            raise AnswerError(code, message)
        return done.stdout.decode(errors="replace").strip()

    async def _git_out(self, directory: str, *args: str, code: str) -> str:
        """Run git as :meth:`_git` does and return its stdout (a failure answers ``code``)."""
        out = await self._git(directory, *args, code=code)
        assert out is not None  # checked: a failure raised
        return out

    async def _repo(
        self, workspace_id: str | None, cwd: str | None
    ) -> tuple[t.WorktreeSourceInfo, Workspace | None]:
        ws = None if workspace_id is None else self._find_workspace(workspace_id)
        root_pane = ws.panes()[0] if ws is not None and ws.panes() else None
        directory = (root_pane.cwd if root_pane else None) or cwd or self.cwd
        top = await self._git_out(
            directory, "rev-parse", "--show-toplevel", code="worktree_not_found"
        )
        common = await self._git_out(
            directory, "rev-parse", "--path-format=absolute", "--git-common-dir",
            code="worktree_not_found",
        )  # fmt: skip
        return worktree_source(top, common, ws.id if ws else None), ws

    def _open_workspace(self, path: str) -> Workspace | None:
        for ws in self.workspaces:
            if ws.worktree is not None and ws.worktree.checkout_path == path:
                return ws
        return None

    async def _worktrees(self, source: t.WorktreeSourceInfo) -> list[t.WorktreeInfo]:
        text = await self._git_out(
            source.repo_root, "worktree", "list", "--porcelain", code="worktree_not_found"
        )
        out = []
        for entry in parse_worktree_list(text):
            ws = self._open_workspace(entry.path)
            out.append(worktree_info(entry, source.repo_root, ws.id if ws else None))
        return out

    async def _worktree_list(self, id: str, params: t.WorktreeListParams) -> t.WorktreeListReply:
        source, _ = await self._repo(params.workspace_id, params.cwd)
        return t.WorktreeListReply(source=source, worktrees=await self._worktrees(source))

    async def _open_as_workspace(
        self, source: t.WorktreeSourceInfo, info: t.WorktreeInfo, label: str | None, focus: bool
    ) -> t.WorkspaceCreatedReply:
        created = await self._workspace_create(
            "", t.WorkspaceCreateParams(cwd=info.path, label=label or info.label, focus=focus)
        )
        ws = self._find_workspace(created.workspace.workspace_id)
        ws.worktree = t.WorkspaceWorktreeInfo(
            repo_key=source.repo_key, repo_name=source.repo_name, repo_root=source.repo_root,
            checkout_path=info.path, is_linked_worktree=info.is_linked_worktree,
        )  # fmt: skip
        return t.WorkspaceCreatedReply(
            workspace=self._ws_info(ws), tab=created.tab, root_pane=created.root_pane
        )

    async def _worktree_create(
        self, id: str, params: t.WorktreeCreateParams
    ) -> t.WorktreeCreatedReply:
        source, _ = await self._repo(params.workspace_id, params.cwd)
        branch = params.branch or generated_branch(next(self._worktree_seeds))
        refused = option_shaped(branch, params.base)
        if refused is not None:
            raise AnswerError(E.INVALID_PARAMS, f"not a branch or commit: {refused}")
        path = checkout_path(
            source.repo_root, params.path, self.worktrees_dir, source.repo_name, branch
        )
        exists = await self._git(
            source.repo_root, *branch_exists_args(branch),
            code="worktree_create_failed", check=False,
        )  # fmt: skip
        args = worktree_add_args(path, branch, params.base, branch_exists=exists is not None)
        await self._git(source.repo_root, *args, code="worktree_create_failed")
        real = await anyio.Path(path).resolve()
        entries = await self._worktrees(source)
        matching = [w for w in entries if await anyio.Path(w.path).resolve() == real]
        if not matching:
            raise AnswerError("worktree_create_failed", f"git did not list {path}")
        info = matching[0]
        created = await self._open_as_workspace(source, info, params.label, params.focus)
        info = msgspec.structs.replace(info, open_workspace_id=created.workspace.workspace_id)
        self.hub.emit(t.WorktreeCreatedEventData(workspace=created.workspace, worktree=info))
        return t.WorktreeCreatedReply(
            workspace=created.workspace, tab=created.tab, root_pane=created.root_pane,
            worktree=info,
        )  # fmt: skip

    async def _worktree_open(self, id: str, params: t.WorktreeOpenParams) -> t.WorktreeOpenedReply:
        source, _ = await self._repo(params.workspace_id, params.cwd)
        entries = await self._worktrees(source)
        wanted = await anyio.Path(params.path).resolve() if params.path else None
        info = None
        for entry in entries:
            if wanted is not None:
                if await anyio.Path(entry.path).resolve() == wanted:
                    info = entry
            elif params.branch is not None and entry.branch == params.branch:
                info = entry
        if info is None:
            raise AnswerError("worktree_not_found", "worktree cannot be opened")
        open_ws = self._open_workspace(info.path)
        if open_ws is not None:
            if params.focus:
                await self._workspace_focus(id, t.WorkspaceTarget(workspace_id=open_ws.id))
            tab = open_ws.active_tab or open_ws.tabs[0]
            pane = tab.focused_pane or tab.panes()[0]
            reply = t.WorktreeOpenedReply(
                workspace=self._ws_info(open_ws), tab=self._tab_info(tab),
                root_pane=self._pane_info(pane), worktree=info, already_open=True,
            )  # fmt: skip
        else:
            created = await self._open_as_workspace(source, info, params.label, params.focus)
            info = msgspec.structs.replace(info, open_workspace_id=created.workspace.workspace_id)
            reply = t.WorktreeOpenedReply(
                workspace=created.workspace, tab=created.tab, root_pane=created.root_pane,
                worktree=info, already_open=False,
            )  # fmt: skip
        self.hub.emit(
            t.WorktreeOpenedEventData(
                workspace=reply.workspace, worktree=info, already_open=reply.already_open
            )
        )
        return reply

    async def _worktree_remove(
        self, id: str, params: t.WorktreeRemoveParams
    ) -> t.WorktreeRemovedReply:
        ws = self._find_workspace(params.workspace_id)
        tree = ws.worktree
        if tree is None or not tree.is_linked_worktree:
            raise AnswerError("not_linked_worktree", f"workspace {ws.id} is not a linked worktree")
        args = worktree_remove_args(tree.checkout_path, params.force)
        try:
            await self._git(tree.repo_root, *args, code="worktree_remove_failed")
        except AnswerError as failure:
            if is_dirty_remove_error(failure.message):
                raise AnswerError("dirty_worktree_requires_force", failure.message) from None
            raise
        info = self._ws_info(ws)
        worktree = removed_worktree(tree.checkout_path)
        await self._close_all(ws.panes())
        self.hub.emit(
            t.WorktreeRemovedEventData(
                workspace_id=ws.id, workspace=info, worktree=worktree, forced=params.force
            )
        )
        return t.WorktreeRemovedReply(
            workspace_id=ws.id, path=tree.checkout_path, forced=params.force
        )

    # ------------------------------------------------------------------ handlers: copy mode, links
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
        # opening a URL needs a desktop opener: reported, never opened (decision notes)
        return t.PaneLinkActivatedReply(handled=False, url=None if hit is None else hit[2])

    # ------------------------------------------------------------------ handlers: graphics, plugins
    async def _graphics_set(self, id: str, params: t.PaneGraphicsSetParams) -> t.OkReply:
        pane = self._find_pane(params.pane_id)
        try:
            data = base64.b64decode(params.data_base64, validate=True)
        except ValueError:
            raise AnswerError(E.INVALID_IMAGE, "data_base64 is not base64") from None
        channels = {"rgb": 3, "rgba": 4, "bgra": 4}.get(params.format)
        pixels = params.image_width * params.image_height
        if channels is not None and len(data) != pixels * channels:
            raise AnswerError(E.INVALID_IMAGE, "pixel data does not match the image size")
        self.graphics.setdefault(pane.id, {})[params.layer_id or ""] = params
        return t.OkReply()

    async def _graphics_clear(self, id: str, params: t.PaneGraphicsClearParams) -> t.OkReply:
        pane = self._find_pane(params.pane_id)
        layers = self.graphics.get(pane.id, {})
        if params.layer_id is None:
            layers.clear()
        else:
            layers.pop(params.layer_id, None)
        return t.OkReply()

    async def _graphics_info(self, id: str, params: t.PaneTarget) -> t.PaneGraphicsInfoReply:
        pane = self._find_pane(params.pane_id)
        # no terminal client: no cell size in pixels, no file frames
        return t.PaneGraphicsInfoReply(
            cell_width_px=0, cell_height_px=0, pane_visible=self._pane_focused(pane)
        )

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

    async def _subscribe(
        self,
        stream: anyio.abc.SocketStream,
        conn: ServerConnection,
        request: t.Request,
        *,
        gone: bool = False,
    ) -> None:
        params: t.EventsSubscribeParams = request.params  # type: ignore[attr-defined]
        entries: list[_Entry] = []
        try:
            for index, sub in enumerate(params.subscriptions):
                entries.append(self._entry(request.id, index, sub))
        except AnswerError as failure:
            answer = ErrorResponse.of(failure.id or request.id, failure.code, failure.message)
            await self._write(stream, conn.send(answer))
            return
        await self._write(
            stream, conn.send(SuccessResponse(id=request.id, result=t.SubscriptionStartedReply()))
        )
        if gone:
            return  # herdr probes the socket before its first round: the stream ends here
        async with anyio.create_task_group() as tg:

            async def pump() -> None:
                try:
                    # herdr probes the socket before every round and before
                    # every event line; a probe that sees data or EOF ends it
                    while not _peer_gone(stream):
                        sent = await self._round(stream, conn, entries)
                        if sent is None:
                            break
                        if not (sent and self.replay.drain_bursts):
                            await anyio.sleep(self.poll_interval)
                except _EventsLostError:
                    lost = ErrorResponse.of(
                        request.id, EVENTS_LOST, "subscription fell behind the event history"
                    )
                    with contextlib.suppress(anyio.BrokenResourceError, TimeoutError):
                        with anyio.fail_after(WRITE_TIMEOUT):
                            await stream.send(conn.send(lost))
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, TimeoutError):
                    pass
                tg.cancel_scope.cancel()

            tg.start_soon(pump)
            await self._watch_client(stream, conn)
            tg.cancel_scope.cancel()

    async def _round(
        self, stream: anyio.abc.SocketStream, conn: ServerConnection, entries: list[_Entry]
    ) -> bool | None:
        """Poll every entry once and send its line; True if any was sent, None if the peer left.

        Raises:
            _EventsLostError: an entry's cursor fell out of the hub (protocol 22).

        """
        sent = False
        for entry in entries:
            line = entry.poll(self)
            if line is not None:
                if _peer_gone(stream):
                    return None
                with anyio.fail_after(WRITE_TIMEOUT):
                    await stream.send(conn.send(line))
                sent = True
        return sent

    def _entry(self, id: str, index: int, sub: Any) -> _Entry:
        probe = probe_id(id, index)
        if isinstance(sub, t.PaneOutputMatchedSubscription):
            test = self._matcher(sub.match, probe)
            try:
                pane = self._find_pane(sub.pane_id)
            except AnswerError as failure:
                raise AnswerError(failure.code, failure.message, id=probe) from None
            return _OutputEntry(pane, sub, test)
        if isinstance(sub, (t.PaneAgentStatusChangedSubscription, t.PaneScrollChangedSubscription)):
            try:
                pane = self._find_pane(sub.pane_id)
            except AnswerError as failure:
                raise AnswerError(failure.code, failure.message, id=probe) from None
            if isinstance(sub, t.PaneScrollChangedSubscription):
                return _ScrollEntry(pane)
            return _StatusEntry(pane, sub.agent_status)
        return _LifecycleEntry(event_kind(sub), self.replay, self.replay.start(self.hub.seq))


class _Entry:
    def poll(self, server: HerdrServer) -> LifecycleEvent | SubscriptionEvent | None:
        raise NotImplementedError


class _EventsLostError(Exception):
    """A protocol-22 subscription's cursor fell out of the event hub."""


class _LifecycleEntry(_Entry):
    """A plain subscription: a cursor into the hub, started and checked by the protocol's rule."""

    def __init__(self, kind: str, rule: ReplayRule, start: int) -> None:
        self.kind = kind
        self.rule = rule
        self.seq = start

    def poll(self, server: HerdrServer) -> LifecycleEvent | None:
        if self.rule.lost(self.seq, server.hub.oldest()):
            raise _EventsLostError
        found = server.hub.after(self.seq, self.kind)
        if found is None:
            self.seq = server.hub.seq  # nothing of this kind up to here
            return None
        self.seq, event = found
        return event


class _StatusEntry(_Entry):
    def __init__(self, pane: Pane, wanted: str | None) -> None:
        self.pane = pane
        self.wanted = wanted
        self.last: tuple[str, str | None] | None = (
            None if wanted is not None else (pane.agent_status, pane.agent)
        )

    def poll(self, server: HerdrServer) -> SubscriptionEvent | None:
        pane = self.pane
        current = (pane.agent_status, pane.agent)
        if current == self.last or pane.closed:
            return None
        self.last = current
        if self.wanted is not None and pane.agent_status != self.wanted:
            return None
        data = t.PaneAgentStatusChangedEvent(
            pane_id=pane.id,
            workspace_id=pane.workspace.id,
            agent_status=pane.agent_status,
            agent=pane.agent,
        )
        return SubscriptionEvent(event="pane.agent_status_changed", data=data)


class _ScrollEntry(_Entry):
    """Fires when the pane's scroll metrics differ from the last ones seen (no initial event).

    The viewport never scrolls here, so changes come from scrollback growing,
    resizes and alternate-screen switches.
    """

    def __init__(self, pane: Pane) -> None:
        self.pane = pane
        self.last = pane.scroll()

    def poll(self, server: HerdrServer) -> SubscriptionEvent | None:
        if self.pane.closed:
            return None
        scroll = self.pane.scroll()
        if scroll == self.last:
            return None
        self.last = scroll
        data = t.PaneScrollChangedEvent(
            pane_id=self.pane.id, workspace_id=self.pane.workspace.id, scroll=scroll
        )
        return SubscriptionEvent(event="pane.scroll_changed", data=data)


class _OutputEntry(_Entry):
    """Edge-triggered: fires when a match appears, re-arms after a poll without one."""

    def __init__(
        self, pane: Pane, sub: t.PaneOutputMatchedSubscription, test: Callable[[str], bool]
    ) -> None:
        self.pane = pane
        self.sub = sub
        self.test = test
        self.armed = True

    def poll(self, server: HerdrServer) -> SubscriptionEvent | None:
        if self.pane.closed:
            return None
        matched, read = server._match_read(self.pane, self.sub.source, self.sub.lines, self.test)
        if matched is None:
            self.armed = True
            return None
        if not self.armed:
            return None
        self.armed = False
        data = t.PaneOutputMatchedEvent(pane_id=self.pane.id, matched_line=matched, read=read)
        return SubscriptionEvent(event="pane.output_matched", data=data)


def _beside(
    own: t.PaneLayoutRect, other: t.PaneLayoutRect, direction: str
) -> tuple[int, int] | None:
    """``(overlap, -gap)`` when ``other`` lies in ``direction`` of ``own``, else None."""
    if direction in ("left", "right"):
        overlap = min(own.y + own.height, other.y + other.height) - max(own.y, other.y)
        after, before = other.x - (own.x + own.width), own.x - (other.x + other.width)
        gap = after if direction == "right" else before
    else:
        overlap = min(own.x + own.width, other.x + other.width) - max(own.x, other.x)
        after, before = other.y - (own.y + own.height), own.y - (other.y + other.height)
        gap = after if direction == "down" else before
    if overlap <= 0 or gap < 0:
        return None
    return overlap, -gap


def _resize(node: Split | Pane | None, pane: Pane, direction: str, amount: float) -> bool:
    """Move the nearest enclosing split edge of ``pane`` towards ``direction``; True if moved."""
    axis = "right" if direction in ("left", "right") else "down"
    path: list[tuple[Split, bool]] = []

    def find(current: Split | Pane | None) -> bool:
        if current is pane:
            return True
        if isinstance(current, Split):
            for second, child in ((False, current.first), (True, current.second)):
                path.append((current, second))
                if find(child):
                    return True
                path.pop()
        return False

    if not find(node):
        return False
    for split, _ in reversed(path):
        if split.direction != axis:
            continue
        grow = direction in ("right", "down")
        delta = amount if grow else -amount
        ratio = min(0.95, max(0.05, split.ratio + delta))
        if ratio == split.ratio:
            return False
        split.ratio = ratio
        return True
    return False


def _swap(tab: Tab, a: Pane, b: Pane) -> None:
    """Exchange two panes' places in ``tab``'s layout tree."""

    def replace(node: Split | Pane | None) -> Split | Pane | None:
        if node is a:
            return b
        if node is b:
            return a
        if isinstance(node, Split):
            node.first = replace(node.first)  # type: ignore[assignment]
            node.second = replace(node.second)  # type: ignore[assignment]
        return node

    tab.root = replace(tab.root)


def _apply_tokens(tokens: dict[str, str], update: Mapping[str, str | None]) -> None:
    """Merge reported metadata tokens: a ``null`` value removes its key."""
    for key, value in update.items():
        if value is None:
            tokens.pop(key, None)
        else:
            tokens[key] = value


def _peer_gone(stream: anyio.abc.SocketStream) -> bool:
    """Peek one byte without blocking, as herdr's probe reads one: data or EOF mean gone."""
    sock = raw_socket_of(stream)
    if sock is None:
        return False
    try:
        sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except BlockingIOError:
        return False
    except OSError:
        return True
    return True  # a byte to read, or b"" at end of stream


def _paste(pane: Pane, text: str) -> bytes:
    """``text`` as herdr types it: in bracketed paste when the pane's program enabled it."""
    if text and pane.screen.bracketed_paste:
        return b"\x1b[200~" + text.encode() + b"\x1b[201~"
    return text.encode()


def _is_closed(pane: Pane) -> bool:
    """Read ``pane.closed`` afresh (another task may have closed it across an await)."""
    return pane.closed


def _divide(
    rect: t.PaneLayoutRect, direction: str, ratio: float
) -> tuple[t.PaneLayoutRect, t.PaneLayoutRect]:
    if direction == "right":
        first = max(1, min(rect.width - 1, round(rect.width * ratio)))
        return (
            t.PaneLayoutRect(x=rect.x, y=rect.y, width=first, height=rect.height),
            t.PaneLayoutRect(
                x=rect.x + first, y=rect.y, width=rect.width - first, height=rect.height
            ),
        )
    first = max(1, min(rect.height - 1, round(rect.height * ratio)))
    return (
        t.PaneLayoutRect(x=rect.x, y=rect.y, width=rect.width, height=first),
        t.PaneLayoutRect(x=rect.x, y=rect.y + first, width=rect.width, height=rect.height - first),
    )


def _replace(node: Split | Pane | None, old: Pane, new: Split | Pane) -> Split | Pane:
    if node is old or node is None:
        return new
    if isinstance(node, Split):
        node.first = _replace(node.first, old, new)
        node.second = _replace(node.second, old, new)
    return node


def _remove(node: Split | Pane, pane: Pane) -> Split | Pane | None:
    if node is pane:
        return None
    if isinstance(node, Split):
        first = _remove(node.first, pane)
        second = _remove(node.second, pane)
        if first is None:
            return second
        if second is None:
            return first
        node.first, node.second = first, second
    return node
