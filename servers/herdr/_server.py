"""The herdr reference server: herdr's connection model over a real workspace model.

One request per connection, read within 5 s and at most 1 MiB, answered with
one line, then closed; ``events.subscribe`` and the waits hold the connection.
Every pane runs a real program on a PTY. Every method of protocols 20, 21 and
22 has a handler (:data:`MODELLED_METHODS`); a method without one would answer
``not_implemented``, and a handler that fails unexpectedly answers
``internal_error``. What each method does here and where this server knowingly
differs from herdr are in the documentation:
``docs/architecture/decisions/herdr.rst`` (*The reference server*).

This module is the core: construction, serving, the connection model and
the handler table. The handlers live in one module per domain, each a
class over :class:`~shedproto.servers.herdr._state.ServerState` (the shared state and lookups)
with its own ``HANDLERS`` table; :class:`HerdrServer` is composed of them
and :data:`_HANDLERS` merges their tables once, at import.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import logging
import os
import socket
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import msgspec

from shedproto import ProtocolError, RemoteProtocolError
from shedproto._codec import encode_line
from shedproto.herdr import (
    AGENT_NAME_PATTERN,
    AGENT_START_SETTLE_SECONDS,
    DEFAULT_PROTOCOL,
    EVENTS_LOST,
    EVENTS_LOST_MESSAGE,
    NOT_MODELLED,
    ClientGone,
    ConnectionClosed,
    ErrorResponse,
    GraphicsStreamReader,
    HerdrRelease,
    ReplayRule,
    ServerConnection,
    SuccessResponse,
    derive_client_socket_path,
    release_for,
    replay_rule,
)
from shedproto.herdr import config_dir as herdr_config_dir
from shedproto.herdr import types as t
from shedproto.herdr._detect_state import DETECTION_TICK_SECONDS
from shedproto.herdr._versions import require_supported
from shedproto.servers._idle import loop_clock
from shedproto.servers._receive import SocketPump
from shedproto.servers._unix import UnixServer

from . import (
    _agents,
    _commands,
    _events,
    _graphics,
    _integrations,
    _layout,
    _pane_io,
    _panes,
    _plugins,
    _session,
    _tabs,
    _terminal_host,
    _workspaces,
    _worktrees,
)
from ._agents import DEFAULT_AGENT_KINDS, AgentHandlers
from ._commands import CommandHandlers, load_commands
from ._detection import ManifestSet, PaneDetector
from ._events import Entry, EventHandlers, EventsLostError
from ._graphics import GraphicsHandlers
from ._integrations import IntegrationHandlers
from ._layout import LayoutHandlers
from ._model import EventHub, Pane, Workspace
from ._pane_io import PaneIOHandlers
from ._panes import PaneHandlers
from ._plugins import PluginHandlers
from ._pty import PtyProcess
from ._session import SessionHandlers
from ._state import CLIENT_GONE, AnswerError, Area, ClientLeftError, E
from ._tabs import TabHandlers
from ._terminal import TerminalStreams
from ._terminal_host import TerminalHostHandlers
from ._workspaces import WorkspaceHandlers
from ._worktrees import WorktreeHandlers

__all__ = [
    "AGENT_NAME_PATTERN",
    "DEFAULT_AGENT_KINDS",
    "HerdrServer",
    "MODELLED_METHODS",
]

log = logging.getLogger("shedproto.servers.herdr")

POLL_INTERVAL = 0.1
"""herdr's subscription and output-wait polling period (seconds)."""
WRITE_TIMEOUT = 5.0


def _assemble(*tables: Mapping[str, str]) -> dict[str, str]:
    """Merge the domain modules' handler tables; a method claimed twice raises ValueError."""
    merged: dict[str, str] = {}
    for table in tables:
        for method, name in table.items():
            if method in merged:
                raise ValueError(f"{method} has two handlers: {merged[method]} and {name}")
            merged[method] = name
    return merged


_HANDLERS: dict[str, str] = _assemble(
    _session.HANDLERS,
    _workspaces.HANDLERS,
    _tabs.HANDLERS,
    _panes.HANDLERS,
    _pane_io.HANDLERS,
    _layout.HANDLERS,
    _graphics.HANDLERS,
    _agents.HANDLERS,
    _events.HANDLERS,
    _integrations.HANDLERS,
    _worktrees.HANDLERS,
    _plugins.HANDLERS,
    _commands.HANDLERS,
    _terminal_host.HANDLERS,
)
"""Method -> the name of the ``HerdrServer`` coroutine that answers it (every domain's table)."""

MODELLED_METHODS: frozenset[str] = frozenset(
    {*_HANDLERS, "events.subscribe", "pane.graphics.stream"}
)
"""The methods the reference server implements; the rest answer ``not_implemented``."""

Handler = Callable[[str, Any], Awaitable[Any]]


def _herdr_state_dir(env: Mapping[str, str], config: str, given: str | None) -> str:
    """Return herdr's state directory: ``$XDG_STATE_HOME/herdr`` or ``~/.local/state/herdr``.

    With a configured ``config_dir`` it is ``<config_dir>/state``, so a
    sandboxed server never writes beside the user's real herdr.
    """
    if given is not None:
        return os.path.join(config, "state")
    if env.get("XDG_STATE_HOME"):
        return os.path.join(env["XDG_STATE_HOME"], "herdr")
    return os.path.join(env.get("HOME") or "/tmp", ".local", "state", "herdr")


class HerdrServer(
    SessionHandlers,
    WorktreeHandlers,
    WorkspaceHandlers,
    TabHandlers,
    PaneHandlers,
    PaneIOHandlers,
    LayoutHandlers,
    GraphicsHandlers,
    AgentHandlers,
    EventHandlers,
    IntegrationHandlers,
    CommandHandlers,
    PluginHandlers,
    TerminalHostHandlers,
):
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
    ``detect_interval`` is how often each pane is looked at for the agent in
    front and its screen state (herdr's 0.3 s; None: no detection).
    ``config_dir`` is herdr's config directory, where user agent manifests
    (``agent-detection/<agent>.toml``) are read (default: herdr's, from
    ``environ``); ``state_dir`` is herdr's state directory (plugin state
    folders; default ``<config_dir>/state`` when ``config_dir`` is given, else
    herdr's). ``home`` is the home directory ``integration.install`` may
    edit agent configuration under (default None: it refuses).

    ``client_socket`` is where the live terminal streams are served
    (``terminal session control|observe``, ``terminal attach``); by default
    herdr's client socket beside ``path`` (``<stem>-client.sock``).

    Use ``await task_group.start(server.serve)``; ``shutdown()`` (or
    ``server.stop``) stops it and terminates every pane process.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        protocol: int = DEFAULT_PROTOCOL,
        version: str | None = None,
        herdr_version: str | None = None,
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
        client_socket: str | os.PathLike[str] | None = None,
        detect_interval: float | None = DETECTION_TICK_SECONDS,
        config_dir: str | None = None,
        state_dir: str | None = None,
        home: str | None = None,
    ) -> None:
        require_supported(protocol)
        self.path = Path(path)
        self.protocol = protocol
        self.release = release_for(protocol, herdr_version)
        self.version = self.release.version if version is None else version
        self._conn_release, self.replay = _release_rules(self.release)
        self.ssh_agents: list[str] = []
        """The agent sockets ``server.ssh_agent.register`` holds now (one per open connection)."""
        self._stopping = False
        base_env = dict(os.environ if environ is None else environ)
        self.shell = list(shell) if shell else [base_env.get("SHELL") or "/bin/sh"]
        self.agent_commands = {kind: kind for kind in DEFAULT_AGENT_KINDS}
        self.agent_commands.update(agent_commands or {})
        self.environ = base_env
        self.cwd = cwd or base_env.get("HOME") or os.getcwd()
        self.area = Area(cols=size[0], rows=size[1])
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
        self.agent_view: t.AgentViewSetParams | None = None
        self.graphics: dict[str, dict[str, t.PaneGraphicsSetParams]] = {}
        """Pane id -> layer id -> the image last set there (no terminal draws them)."""
        self.graphics_streams: set[tuple[str, str]] = set()
        """(pane id, layer id) of every open ``pane.graphics.stream``."""
        self._init_sandbox(base_env, config_dir, state_dir, home, detect_interval)
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
        streams_path = client_socket or derive_client_socket_path(str(self.path))
        self.streams = TerminalStreams(streams_path, self)
        """The live terminal streams, on the client socket."""
        self._clock: Callable[[], float] = anyio.current_time
        """The running loop's clock while serving (:func:`loop_clock`: found once, not per read)."""
        self._handlers: dict[str, Handler] = self._handler_table()
        self.retired_listeners: list[UnixServer] = []
        """Listeners whose socket files a failed handoff gave up (shut down with the server)."""

    def _init_sandbox(
        self,
        env: Mapping[str, str],
        config_dir: str | None,
        state_dir: str | None,
        home: str | None,
        detect_interval: float | None,
    ) -> None:
        """Set the config, state and home directories, the plugin records and detection."""
        self.plugins: dict[str, t.InstalledPluginInfo] = {}
        self.config_dir = config_dir or herdr_config_dir(env)
        self.state_dir = state_dir or _herdr_state_dir(env, self.config_dir, config_dir)
        self.plugin_logs: list[t.PluginCommandLogInfo] = []
        self.plugin_panes: dict[str, tuple[str, str]] = {}
        self.plugin_log_seq = 0
        self.plugin_in_flight = 0
        self.registry_writable = config_dir is not None
        """The plugin registry is read and written only in a config dir the embedder chose
        (on herdr's own dir the server would run the user's real plugins' startup hooks)."""
        self.home = home
        self.detect_interval = detect_interval
        self.manifests = ManifestSet(self.config_dir)
        self.detectors: dict[Pane, PaneDetector] = {}
        self.popup_pane: Pane | None = None
        if self.registry_writable:
            self._load_registry()
        self.hub.listener = self._plugin_event_hook
        self.commands, self.config_diagnostics = load_commands(self.config_dir)

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
                self.run_plugin_startup_hooks()
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
        await self._tasks.start(self.streams.serve)  # type: ignore[union-attr]
        if self.detect_interval is not None:
            self._tasks.start_soon(self._detect_loop, self.detect_interval)  # type: ignore[union-attr]
        task_status.started()
        outer.started(path)
        await anyio.sleep_forever()

    def shutdown(self) -> None:
        """Stop accepting, end open streams and terminate every pane; safe to call twice.

        An open subscription stream ends with a bare EOF, as in herdr (its
        loop sees ``running`` false and returns).
        """
        self._stopping = True
        self.streams.shutdown()
        self._unix.shutdown()
        for listener in self.retired_listeners:
            listener.shutdown()
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
            release=self._conn_release,
        )
        pump = SocketPump(stream)
        received = await self._read_request(pump, conn)
        if received is None:
            return
        request, gone = received
        if self.handoff_gate is not None:
            await self.handoff_gate.wait()  # herdr's app loop is busy with the handoff
        if self.handed_off:
            return  # the successor serves now: the client retries there
        method = str(request.__struct_config__.tag)
        if method == "events.subscribe":
            await self._subscribe(pump, conn, request, gone=gone)
            return
        if conn.raw_stream:
            await self._graphics_stream(pump, conn, request)
            return
        if method == "server.ssh_agent.register":
            await self._ssh_agent_register(pump, conn, request, gone=gone)
            return
        if conn.holds_connection:
            answer = await self._answer_unless_gone(pump, conn, request, gone)
            if answer is None:
                return
        else:
            answer = await self._answer(request)
        await self._write_pumped(pump, conn.send(answer))
        if method == "server.stop" or self.handed_off:
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
        pump: SocketPump,
        conn: ServerConnection,
        request: t.Request,
        gone: bool,
    ) -> SuccessResponse[Any] | ErrorResponse | None:
        if gone:
            # herdr already has the bytes that end the wait: it still answers
            # whatever it decides before its first probe of the socket
            # (validation errors, a status that already matches) and drops
            # the rest; the handlers call probe_client() where herdr probes.
            token = CLIENT_GONE.set(True)
            try:
                return await self._answer(request)
            except ClientLeftError:
                return None
            finally:
                CLIENT_GONE.reset(token)
        result: list[SuccessResponse[Any] | ErrorResponse] = []
        async with anyio.create_task_group() as tg:

            async def work() -> None:
                result.append(await self._answer(request))
                tg.cancel_scope.cancel()

            tg.start_soon(work)
            await self._watch_client(pump, conn)
            tg.cancel_scope.cancel()  # the client left: drop the answer
        return result[0] if result else None

    async def _watch_client(self, pump: SocketPump, conn: ServerConnection) -> None:
        """Return once the client sends bytes that end the wait (herdr's probe) or leaves."""
        while True:
            data = await pump.receive()
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
            await self._write(pump, rest)

    async def _write(self, pump: SocketPump, data: bytes) -> None:
        """Write ``data`` within :data:`WRITE_TIMEOUT`; a client that is gone loses it silently.

        Through the pump's guarded wait for room, never anyio's ``stream.send``
        (see :func:`shedproto.servers._receive.send_all`).
        """
        with (
            anyio.move_on_after(WRITE_TIMEOUT),
            contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError),
        ):
            await pump.send(data)

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
        except ClientLeftError:
            raise
        except Exception as exc:  # a bug here must not cost the client its answer
            log.exception("%s failed", method)
            return ErrorResponse.of(request.id, E.INTERNAL_ERROR, f"{method} failed: {exc}")
        return SuccessResponse(id=request.id, result=result)

    def _handler_table(self) -> dict[str, Handler]:
        return {method: getattr(self, name) for method, name in _HANDLERS.items()}

    async def _graphics_stream(
        self, pump: SocketPump, conn: ServerConnection, request: t.Request
    ) -> None:
        """Serve a ``pane.graphics.stream``: ``ok``, then frames until the client closes.

        The frame rules are :class:`~shedproto.herdr.GraphicsStreamReader`'s; the
        layer is claimed on open and cleared when the stream ends, however it ends.
        """
        params: t.PaneGraphicsStreamParams = request.params  # type: ignore[attr-defined]
        try:
            key = self._graphics_stream_open(params)
        except AnswerError as failure:
            refusal = ErrorResponse.of(request.id, failure.code, failure.message)
            await self._write_pumped(pump, conn.send(refusal))
            return
        try:
            opened = SuccessResponse(id=request.id, result=t.OkReply())
            await self._write_pumped(pump, conn.send(opened))
            reader = GraphicsStreamReader(request.id)
            data = conn.trailing or await pump.receive()  # b"" from the pump: the client left
            while not reader.finished:
                try:
                    frames = reader.feed(data)
                except RemoteProtocolError as refused:
                    if refused.reply_hint is not None:
                        await self._write_pumped(pump, refused.reply_hint)
                    return
                for frame in frames:
                    try:
                        ack = self._graphics_stream_frame(key, params.z_index, frame)
                    except AnswerError as failure:
                        error = ErrorResponse.of(
                            failure.id or frame.answer_id, failure.code, failure.message
                        )
                        await self._write_pumped(pump, encode_line(error))
                        return
                    if ack is not None:
                        answer = SuccessResponse(id=frame.answer_id, result=ack)
                        await self._write_pumped(pump, encode_line(answer))
                if not reader.finished:
                    data = await pump.receive()
        finally:
            self._graphics_stream_close(key)

    async def _ssh_agent_register(
        self, pump: SocketPump, conn: ServerConnection, request: t.Request, *, gone: bool
    ) -> None:
        """Serve ``server.ssh_agent.register``: ``ok``, then hold it until the client leaves.

        herdr keeps a registration for as long as its API connection is open
        (``ServerSshAgentRegisterParams``: "Registration lasts until this API
        connection closes"); :attr:`ssh_agents` lists the open ones.
        """
        answer = await self._answer(request)
        await self._write_pumped(pump, conn.send(answer))
        if isinstance(answer, ErrorResponse) or gone:
            return
        socket_path: str = request.params.socket_path  # type: ignore[attr-defined]
        self.ssh_agents.append(socket_path)
        try:
            while await pump.receive():
                pass  # any bytes are the client's; the registration ends at EOF
        finally:
            self.ssh_agents.remove(socket_path)

    async def _subscribe(
        self,
        pump: SocketPump,
        conn: ServerConnection,
        request: t.Request,
        *,
        gone: bool = False,
    ) -> None:
        params: t.EventsSubscribeParams = request.params  # type: ignore[attr-defined]
        entries: list[Entry] = []
        try:
            for index, sub in enumerate(params.subscriptions):
                entries.append(self._entry(request.id, index, sub))
        except AnswerError as failure:
            answer = ErrorResponse.of(failure.id or request.id, failure.code, failure.message)
            await self._write(pump, conn.send(answer))
            return
        await self._write(
            pump, conn.send(SuccessResponse(id=request.id, result=t.SubscriptionStartedReply()))
        )
        if gone:
            return  # herdr probes the socket before its first round: the stream ends here
        async with anyio.create_task_group() as tg:

            async def rounds() -> None:
                try:
                    # herdr probes the socket before every round and before
                    # every event line; a probe that sees data or EOF ends it
                    while not _peer_gone(pump.raw):
                        sent = await self._round(pump, conn, entries)
                        if sent is None:
                            break
                        if not (sent and self.replay.drain_bursts):
                            await anyio.sleep(self.poll_interval)
                except StreamEncodeError as failure:
                    # herdr src/api/subscriptions.rs:342-347@3f32b738
                    message = f"failed to encode subscription event: {failure}"
                    await self._end_stream(pump, conn, request.id, E.INTERNAL_ERROR, message)
                except EventsLostError:
                    await self._end_stream(
                        pump, conn, request.id, EVENTS_LOST, EVENTS_LOST_MESSAGE
                    )
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, TimeoutError):
                    pass
                tg.cancel_scope.cancel()

            tg.start_soon(rounds)
            # the server stopping ends the stream with a bare EOF in every release
            # (src/api/server.rs:726,779@v0.8.2; stream_subscriptions@3f32b738: `running` false, Ok)
            await self._watch_client(pump, conn)
            tg.cancel_scope.cancel()

    async def _end_stream(
        self,
        pump: SocketPump,
        conn: ServerConnection,
        id: str,
        code: str,
        message: str,
    ) -> None:
        """Write the one error line that ends a stream, shielded, if it can.

        Nothing is written before 0.9.2 (herdr skipped the event, or the lost
        ones, silently): the stream ends with a bare EOF.
        """
        if not self.release.stream_end_errors:
            return
        line = ErrorResponse.of(id, code, message)
        with (
            anyio.CancelScope(shield=True),
            anyio.move_on_after(WRITE_TIMEOUT),
            contextlib.suppress(*_WRITE_FAILURES),
        ):
            await pump.send(conn.send(line))

    async def _round(
        self, pump: SocketPump, conn: ServerConnection, entries: list[Entry]
    ) -> bool | None:
        """Poll every entry once and send its line; True if any was sent, None if the peer left.

        An event that cannot be encoded is skipped before 0.9.2.

        Raises:
            EventsLostError: an entry's cursor fell out of the hub (protocol 22).
            StreamEncodeError: an event cannot be encoded (0.9.2 on).

        """
        sent = False
        for entry in entries:
            line = entry.poll(self)
            if line is not None:
                if _peer_gone(pump.raw):
                    return None
                try:
                    encoded = conn.send(line)
                except (msgspec.EncodeError, TypeError, ValueError, OverflowError) as exc:
                    if not self.release.stream_end_errors:
                        continue  # skipped: src/api/subscriptions.rs:337@v0.8.2
                    raise StreamEncodeError(str(exc)) from exc
                with anyio.fail_after(WRITE_TIMEOUT):
                    await pump.send(encoded)
                sent = True
        return sent


def _release_rules(release: HerdrRelease) -> tuple[HerdrRelease | None, ReplayRule]:
    """Return what a release changes: the connections' release and the replay rule.

    The release is ``None`` when it changes nothing in the connection (the
    fast path). 0.9.0 and 0.9.1 skip lost events silently (no ``events_lost``).
    """
    full = release.methods == frozenset(t.PROTOCOL_TABLES[release.protocol][0])
    conn_release = None if full and not release.echoes_invalid_id else release
    replay = replay_rule(release.protocol)
    if replay.reports_loss and not release.reports_events_lost:
        replay = dataclasses.replace(replay, reports_loss=False)
    return conn_release, replay


_WRITE_FAILURES = (anyio.BrokenResourceError, anyio.ClosedResourceError, ProtocolError)
"""What writing a stream's last line may raise when the client or the state is gone."""


class StreamEncodeError(Exception):
    """An event of a subscription could not be encoded (herdr: ``internal_error``)."""


def _peer_gone(sock: socket.socket | None) -> bool:
    """Peek one byte without blocking, as herdr's probe reads one: data or EOF mean gone.

    ``sock`` is the connection's socket (``None``, a stream that is no socket: never gone).
    """
    if sock is None:
        return False
    try:
        sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except BlockingIOError:
        return False
    except OSError:
        return True
    return True  # a byte to read, or b"" at end of stream
