"""The ``claude-agent-sdk`` driver: transcripts read from disk, turns run by the ``claude`` CLI.

:class:`ClaudeAgentSdkDriver` implements the host's
:class:`~shedproto.servers.agents_host.AgentDriver` natively in Python:
inventory and reads parse Claude Code's transcripts
(:mod:`shedproto.drivers.claude`), prompts and starts spawn ``claude -p``
with the stream-json protocol, one child per query. The CLI is
``source.command`` when given (an argv prefix), else ``claude`` on ``PATH``.
Without it, inventory and reads still work and prompt-type commands are
``unsupported`` / ``source-unavailable``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from shedproto.agents_host import (
    CommandExecutionResult,
    SessionPage,
    SessionSnapshot,
    unsupported,
)
from shedproto.connector import AgentSourceConfig, PromptPayload, StartPayload
from shedproto.drivers import failed, needs_confirmation, succeeded, unsupported_result
from shedproto.drivers.claude import (
    DESKTOP_APP,
    ClaudeSessionInfo,
    ClaudeStreamConnection,
    DesktopPairing,
    DesktopStart,
    StartPlan,
    StreamClosed,
    StreamMessage,
    build_argv,
    build_env,
    claude_capabilities,
    claude_config_dir,
    custom_title_record,
    desktop_start_problem,
    desktop_url,
    inventory_page,
    is_session_id,
    match_project_dir,
    match_worktree_dirs,
    parse_records,
    parse_worktree_list,
    plan_start,
    session_info,
    session_messages,
    session_read,
)
from shedproto.servers.agents_host import OperationOptions

from ._child import STOP_GRACE, ChildError, ChildProcess

__all__ = ["ClaudeAgentSdkDriver", "ClaudeDriverError", "Opener"]

Opener = Callable[[str], Awaitable[bool]]
"""Opens a ``claude://`` URL (macOS ``open``); returns whether it succeeded."""


class ClaudeDriverError(Exception):
    """A read or lookup failed; ``code`` is stable (``claude-session-not-found``, ...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class _Pending:
    cancelled: bool = False


@dataclass
class _Query:
    child: ChildProcess
    connection: ClaudeStreamConnection
    controls: list[str] = field(default_factory=list)
    done: anyio.Event = field(default_factory=anyio.Event)

    async def control(self, sent: tuple[str, bytes]) -> None:
        request_id, data = sent
        self.controls.append(request_id)
        try:
            await self.child.send(data)
        except ChildError:
            return


async def _macos_open(url: str) -> bool:
    try:
        result = await anyio.run_process(["open", url], check=False)
    except OSError:
        return False
    return result.returncode == 0


def _read_project(folder: Path, project_path: str | None) -> list[ClaudeSessionInfo]:
    infos: list[ClaudeSessionInfo] = []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return infos
    for entry in entries:
        if entry.suffix != ".jsonl" or not is_session_id(entry.stem):
            continue
        info = _read_info(entry, project_path)
        if info is not None:
            infos.append(info)
    return infos


def _read_info(path: Path, project_path: str | None) -> ClaudeSessionInfo | None:
    try:
        data = path.read_bytes()
        status = path.stat()
    except OSError:
        return None
    if not data:
        return None
    return session_info(
        path.stem,
        parse_records(data),
        last_modified_ms=int(status.st_mtime * 1000),
        file_size=status.st_size,
        project_path=project_path,
    )


def _git_worktrees(cwd: str) -> list[str]:
    """Return the worktrees of the repository holding ``cwd`` (none without git or a repo)."""
    try:
        done = subprocess.run(
            ["git", "worktree", "list", "--porcelain"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    return parse_worktree_list(done.stdout) if done.returncode == 0 else []


class ClaudeAgentSdkDriver:
    """The connector's ``claude-agent-sdk`` driver: Claude Code's sessions and its CLI.

    Injected facts keep it testable off macOS: ``platform`` (``sys.platform``),
    ``home`` (``~``), ``clock`` (``time.time``), ``opener`` (runs ``open``),
    ``app_installed`` (``/Applications/Claude.app`` exists), and ``base_env``
    (this process's environment, copied once).
    """

    driver = "claude-agent-sdk"

    def __init__(
        self,
        source: AgentSourceConfig,
        *,
        base_env: Mapping[str, str] | None = None,
        home: str | None = None,
        platform: str = sys.platform,
        clock: Callable[[], float] = time.time,
        opener: Opener = _macos_open,
        app_installed: Callable[[], bool] | None = None,
    ) -> None:
        self.source = source
        self.version: str | None = None
        self.platform = platform
        self.capabilities = claude_capabilities(
            allow_danger_full_access=bool(source.allowDangerFullAccess), platform=platform
        )
        self.cli: tuple[str, ...] = tuple(source.command) if source.command else ("claude",)
        self._base_env = dict(os.environ if base_env is None else base_env)
        self._home = home or os.path.expanduser("~")
        self._clock = clock
        self._opener = opener
        self._app_installed = app_installed or (lambda: os.path.isdir(DESKTOP_APP))
        self._stopped = False
        self._pending: dict[str, _Pending] = {}
        self._queries: dict[str, _Query] = {}
        self._cwds: dict[str, str] = {}
        self._modes: dict[str, str] = {}
        self._models: dict[str, str] = {}
        self._listed: set[str] = set()
        self.pairing = DesktopPairing()

    # -- paths -----------------------------------------------------------------------------------

    @property
    def config_dir(self) -> str:
        """``configDir``, else ``CLAUDE_CONFIG_DIR`` from the env, else ``~/.claude``."""
        if self.source.configDir:
            return self.source.configDir
        env = {**self._base_env, **(self.source.env or {})}
        return claude_config_dir(env, self._home)

    def _child_env(self) -> dict[str, str]:
        return build_env(self._base_env, self.source.env, self.source.configDir)

    def _projects(self) -> Path:
        return Path(self.config_dir) / "projects"

    def _project_folder(self, cwd: str) -> Path | None:
        projects = self._projects()
        try:
            names = [entry.name for entry in projects.iterdir() if entry.is_dir()]
        except OSError:
            return None
        name = match_project_dir(cwd, names)
        return projects / name if name is not None else None

    def _scope(self) -> str | None:
        return os.path.realpath(self.source.cwd) if self.source.cwd else None

    def _find(self, session_id: str) -> tuple[Path, str | None] | None:
        if not is_session_id(session_id):
            return None
        for cwd in (self._cwds.get(session_id), self._scope()):
            if cwd is None:
                continue
            folder = self._project_folder(cwd)
            if folder is not None and (folder / f"{session_id}.jsonl").is_file():
                return folder / f"{session_id}.jsonl", cwd
        if self._scope() is not None:
            return None
        try:
            folders = sorted(p for p in self._projects().iterdir() if p.is_dir())
        except OSError:
            return None
        for folder in folders:
            if (folder / f"{session_id}.jsonl").is_file():
                return folder / f"{session_id}.jsonl", None
        return None

    def _lookup(self, session_id: str) -> tuple[ClaudeSessionInfo, Path] | None:
        found = self._find(session_id)
        if found is None:
            return None
        path, project_path = found
        info = _read_info(path, project_path)
        return (info, path) if info is not None else None

    def _remember(self, info: ClaudeSessionInfo) -> None:
        if info.cwd:
            self._cwds[info.sessionId] = info.cwd

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Reset the stopped flag; the driver keeps no child between queries."""
        del task_group
        self._stopped = False

    async def stop(self, grace: float = STOP_GRACE) -> None:
        """Refuse new prompts, mark pending ones stopped, end every running query; idempotent.

        Each running query gets an ``interrupt`` and its stdin closed; a child
        still running after ``grace`` seconds is killed (its prompt then ends
        ``unknown`` unless a ``result`` already arrived).
        """
        self._stopped = True
        for pending in self._pending.values():
            pending.cancelled = True
        queries = list(self._queries.values())
        for query in queries:
            await query.control(query.connection.interrupt())
            await query.child.close_stdin()
        async with anyio.create_task_group() as stops:
            for query in queries:
                stops.start_soon(self._end_query, query, grace)

    @staticmethod
    async def _end_query(query: _Query, grace: float) -> None:
        """Give a query ``grace`` seconds, then stop its child's process group."""
        with anyio.move_on_after(grace):
            await query.done.wait()
        if not query.done.is_set():
            await query.child.aclose(grace=0.0)

    @property
    def cli_available(self) -> bool:
        """Whether the CLI's program can be found (an absolute path or on ``PATH``)."""
        program = self.cli[0]
        path = self._child_env().get("PATH")
        return shutil.which(program, path=path) is not None

    # -- inventory and reads ---------------------------------------------------------------------

    def _scan(self) -> list[ClaudeSessionInfo]:
        scope = self._scope()
        if scope is not None:
            folder = self._project_folder(scope)
            infos = _read_project(folder, scope) if folder is not None else []
            worktrees = [w for w in _git_worktrees(scope) if w != scope]
            if not worktrees:
                return infos
            try:
                names = [p.name for p in self._projects().iterdir() if p.is_dir()]
            except OSError:
                return infos
            seen = {folder.name} if folder is not None else set()
            for name, path in match_worktree_dirs(worktrees, names):
                if name not in seen:
                    seen.add(name)
                    infos += _read_project(self._projects() / name, path)
            return infos
        try:
            folders = [p for p in self._projects().iterdir() if p.is_dir()]
        except OSError:
            return []
        return [info for folder in folders for info in _read_project(folder, None)]

    async def list_sessions(self, cursor: str | None = None) -> SessionPage:
        """Return one page of 100 sessions, newest first, scoped to the source ``cwd`` if set.

        Raises:
            LocalProtocolError: an invalid cursor (``invalid Claude cursor``).

        """
        infos = await anyio.to_thread.run_sync(self._scan)
        for info in infos:
            self._remember(info)
        page = inventory_page(infos, cursor, active=frozenset(self._queries))
        self._listed.update(s.nativeSessionId for s in page.sessions)
        sessions = self.pairing.apply(page.sessions, now_ms=self._now_ms())
        return SessionPage(sessions=tuple(sessions), nextCursor=page.nextCursor)

    async def read_session(self, native_session_id: str) -> SessionSnapshot:
        """Read a session's main conversation from its transcript.

        Raises:
            ClaudeDriverError: ``claude-session-not-found``.

        """

        def load() -> tuple[ClaudeSessionInfo, list[dict[str, Any]]] | None:
            found = self._find(native_session_id)
            if found is None:
                return None
            path, project_path = found
            try:
                data = path.read_bytes()
                status = path.stat()
            except OSError:
                return None
            records = parse_records(data)
            info = session_info(
                native_session_id,
                records,
                last_modified_ms=int(status.st_mtime * 1000),
                file_size=status.st_size,
                project_path=project_path,
            )
            return (info, session_messages(records)) if info is not None else None

        loaded = await anyio.to_thread.run_sync(load)
        if loaded is None:
            raise ClaudeDriverError(
                "claude-session-not-found", f"Claude session not found: {native_session_id}"
            )
        info, messages = loaded
        self._remember(info)
        active = True if native_session_id in self._queries else None
        snapshot = session_read(info, messages, active=active)
        paired = self.pairing.apply([snapshot.summary], now_ms=self._now_ms())[0]
        return SessionSnapshot(
            summary=paired,
            events=snapshot.events,
            normalizedMessages=snapshot.normalizedMessages,
            complete=snapshot.complete,
            revision=snapshot.revision,
        )

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    # -- queries ---------------------------------------------------------------------------------

    def _busy(self, session_id: str) -> CommandExecutionResult | None:
        if self._stopped:
            return failed("claude-driver-stopped", "the Claude driver is stopped", retryable=True)
        if session_id in self._queries or session_id in self._pending:
            return needs_confirmation(
                "already-active", f"a connector query is already running: {session_id}"
            )
        return None

    async def _run_query(
        self,
        session_id: str,
        argv: Sequence[str],
        cwd: str,
        text: str,
        on_session_active: Callable[[], Awaitable[None]] | None,
        *,
        pending: _Pending,
        active_after_first_message: bool,
    ) -> CommandExecutionResult:
        """Run one CLI query; ``pending`` (already registered) becomes the running query."""
        try:
            return await self._query(
                session_id,
                argv,
                cwd,
                text,
                on_session_active,
                pending=pending,
                active_after_first_message=active_after_first_message,
            )
        finally:
            self._drop_pending(session_id, pending)

    async def _query(
        self,
        session_id: str,
        argv: Sequence[str],
        cwd: str,
        text: str,
        on_session_active: Callable[[], Awaitable[None]] | None,
        *,
        pending: _Pending,
        active_after_first_message: bool,
    ) -> CommandExecutionResult:
        if not self.cli_available:
            return unsupported_result(
                f"the claude CLI is not installed: {argv[0]}",
                code="source-unavailable",
                retryable=True,
            )
        try:
            child = await ChildProcess.spawn(argv, env=self._child_env(), cwd=cwd)
        except OSError as exc:
            return failed("claude-query-failed", f"cannot run {argv[0]}: {exc}")
        connection = ClaudeStreamConnection(
            session_id=session_id, request_token=secrets.token_hex(4)
        )
        query = _Query(child=child, connection=connection)
        self._queries[session_id] = query
        self._drop_pending(session_id, pending)
        if pending.cancelled:  # cancelled (or stopped) while the child was spawning
            await query.control(connection.interrupt())
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(child.drain_stderr)
                # A child that exited early fails the send; the stream tells what happened.
                with contextlib.suppress(ChildError):
                    await child.send(connection.user_message(text))
                if on_session_active is not None and not active_after_first_message:
                    await on_session_active()
                await self._consume(
                    query, on_session_active if active_after_first_message else None
                )
                tasks.cancel_scope.cancel()
            return connection.outcome()
        finally:
            self._queries.pop(session_id, None)
            await child.aclose()
            query.done.set()

    async def _consume(
        self, query: _Query, on_first_message: Callable[[], Awaitable[None]] | None
    ) -> None:
        child, connection = query.child, query.connection
        while True:
            data = await child.receive()
            events = connection.receive_data(data)
            replies = connection.data_to_send()  # the core's answers to control requests
            if replies:
                with contextlib.suppress(ChildError):
                    await child.send(replies)
            for event in events:
                if isinstance(event, StreamMessage):
                    if event.subtype == "init":
                        version = event.raw.get("claude_code_version")
                        if isinstance(version, str):
                            self.version = version
                    if on_first_message is not None:
                        await on_first_message()
                        on_first_message = None
                    if event.type == "result":
                        await child.close_stdin()
                elif isinstance(event, StreamClosed):
                    return
            if not data:
                return

    # -- commands --------------------------------------------------------------------------------

    async def prompt(
        self,
        native_session_id: str,
        payload: PromptPayload,
        options: OperationOptions | None = None,
    ) -> CommandExecutionResult:
        """Resume the session in its recorded cwd and run one turn (``--resume=<id>``)."""
        options = options or OperationOptions()
        busy = self._busy(native_session_id)
        if busy is not None:
            return busy
        pending = _Pending()
        self._pending[native_session_id] = pending
        handed_off = False
        try:
            if options.on_cancellation_ready is not None:
                options.on_cancellation_ready()
            try:
                cwd = self._cwds.get(native_session_id)
                if cwd is None:
                    found = await anyio.to_thread.run_sync(self._lookup, native_session_id)
                    if found is not None:
                        self._remember(found[0])
                        cwd = found[0].cwd or self.source.cwd
                    elif not pending.cancelled and not self._stopped:
                        return failed(
                            "claude-session-not-found",
                            f"Claude session not found: {native_session_id}",
                        )
            except OSError as exc:
                return failed("claude-session-lookup-failed", str(exc), retryable=True)
            if pending.cancelled and not self._stopped:
                return failed("cancelled", "the prompt was cancelled before it started")
            if self._stopped:
                return failed(
                    "claude-driver-stopped", "the Claude driver is stopped", retryable=True
                )
            argv = build_argv(
                self.cli[0],
                resume=native_session_id,
                permission_mode=self._modes.get(native_session_id),
                model=self._models.get(native_session_id),
            )
            handed_off = True
        finally:
            if not handed_off:
                self._drop_pending(native_session_id, pending)
        return await self._run_query(
            native_session_id,
            (*self.cli, *argv[1:]),
            cwd or self.source.cwd or os.getcwd(),
            payload.text,
            options.on_session_active,
            pending=pending,
            active_after_first_message=False,
        )

    def _drop_pending(self, session_id: str, pending: _Pending) -> None:
        if self._pending.get(session_id) is pending:
            del self._pending[session_id]

    async def start_session(
        self,
        native_session_id: str,
        payload: StartPayload,
        options: OperationOptions | None = None,
    ) -> CommandExecutionResult:
        """Start a session with a chosen UUID (headless) or open the desktop app (macOS)."""
        options = options or OperationOptions()
        if self._stopped:
            return failed("claude-driver-stopped", "the Claude driver is stopped", retryable=True)
        plan = plan_start(
            native_session_id,
            cwd=payload.cwd,
            mode=payload.mode,
            surface=payload.surface,
            title=payload.title,
            source_cwd=self.source.cwd,
            process_cwd=os.getcwd(),
            modes=self.capabilities.modes or (),
            surfaces=self.capabilities.surfaces or ("headless",),
        )
        if not isinstance(plan, StartPlan):
            return plan
        if plan.surface == "desktop":
            return await self._desktop_start(plan, payload.text)
        busy = self._busy(native_session_id)
        if busy is not None:
            return busy
        pending = _Pending()
        self._pending[native_session_id] = pending
        try:
            existing = await anyio.to_thread.run_sync(self._find, native_session_id)
        except BaseException:
            self._drop_pending(native_session_id, pending)
            raise
        if existing is not None or pending.cancelled:
            self._drop_pending(native_session_id, pending)
            if existing is None:
                return failed("cancelled", "the start was cancelled before it began")
            return failed(
                "claude-session-exists", f"Claude session already exists: {native_session_id}"
            )
        previous_mode = self._modes.get(native_session_id)
        if plan.mode is not None:
            self._modes[native_session_id] = plan.mode
        argv = build_argv(
            self.cli[0],
            session_id=native_session_id,
            title=plan.title,
            permission_mode=self._modes.get(native_session_id),
            model=self._models.get(native_session_id),
        )
        result = await self._run_query(
            native_session_id,
            (*self.cli, *argv[1:]),
            plan.cwd,
            payload.text,
            options.on_session_active,
            pending=pending,
            active_after_first_message=True,
        )
        if result.status != "succeeded":
            if previous_mode is None:
                self._modes.pop(native_session_id, None)
            else:
                self._modes[native_session_id] = previous_mode
            return result
        self._cwds[native_session_id] = plan.cwd
        return succeeded(
            {"nativeSessionId": native_session_id, "cwd": plan.cwd, "title": plan.title},
            affected_session=native_session_id,
        )

    async def _desktop_start(self, plan: StartPlan, text: str) -> CommandExecutionResult:
        problem = desktop_start_problem(
            text=text,
            mode=plan.mode,
            cwd_is_directory=await anyio.Path(plan.cwd).is_dir(),
            app_installed=self._app_installed(),
        )
        if problem is not None:
            return problem
        if not await self._opener(desktop_url(plan.cwd, text)):
            return failed(
                "claude-desktop-open-failed", "could not open the Claude app", retryable=True
            )
        self.pairing.record(
            DesktopStart(
                session_id=plan.session_id,
                text=text,
                cwd=plan.cwd,
                title=plan.title,
                sent_at_ms=self._now_ms(),
                known_ids=frozenset(self._listed),
            )
        )
        return succeeded(
            {
                "nativeSessionId": plan.session_id,
                "cwd": plan.cwd,
                "title": plan.title,
                "surface": "desktop",
            },
            affected_session=None,
            affected_session_set=True,
        )

    async def cancel(self, native_session_id: str) -> CommandExecutionResult:
        """Cancel a pending prompt, or interrupt this driver's running query on the session."""
        pending = self._pending.get(native_session_id)
        if pending is not None:
            pending.cancelled = True
            return succeeded()
        query = self._queries.get(native_session_id)
        if query is None:
            return unsupported("cancel (only for a connector-owned query)", self.source.id)
        await query.control(query.connection.interrupt())
        return succeeded()

    async def rename_session(self, native_session_id: str, title: str) -> CommandExecutionResult:
        """Append a ``custom-title`` record to the session's transcript."""
        found = await anyio.to_thread.run_sync(self._find, native_session_id)
        if found is None:
            return failed(
                "claude-session-not-found", f"Claude session not found: {native_session_id}"
            )
        path = found[0]
        record = custom_title_record(native_session_id, title)

        def append() -> None:
            with path.open("rb+") as handle:
                handle.seek(0, os.SEEK_END)
                if handle.tell() > 0:
                    handle.seek(-1, os.SEEK_END)
                    if handle.read(1) != b"\n":
                        handle.write(b"\n")
                handle.write(record)

        await anyio.to_thread.run_sync(append)
        return succeeded({"title": title})

    async def set_mode(self, native_session_id: str, mode: str) -> CommandExecutionResult:
        """Remember an advertised mode for later connector prompts; apply it to a live query."""
        if mode not in (self.capabilities.modes or ()):
            return unsupported_result(f"mode is not supported: {mode}")
        self._modes[native_session_id] = mode
        query = self._queries.get(native_session_id)
        if query is not None:
            await query.control(query.connection.set_permission_mode(mode))
        return succeeded({"mode": mode, "appliesTo": "connector-prompts"})

    async def set_config_option(
        self, native_session_id: str, key: str, value: Any
    ) -> CommandExecutionResult:
        """Accept only ``model`` with a string value, kept for later connector prompts."""
        if key != "model" or not isinstance(value, str):
            return unsupported_result(f"config option is not supported: {key}")
        self._models[native_session_id] = value
        query = self._queries.get(native_session_id)
        if query is not None:
            await query.control(query.connection.set_model(value))
        return succeeded({"key": key, "value": value, "appliesTo": "connector-prompts"})
