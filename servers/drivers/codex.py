"""The ``codex-app-server`` driver: a ``codex app-server`` child spoken to over stdio.

:class:`CodexAppServerDriver` implements the host's
:class:`~shedproto.servers.agents_host.AgentDriver`. Protocol logic lives in
:mod:`shedproto.drivers.codex`; this shell spawns the child, moves bytes,
answers server requests at once, pairs answers with waiting callers and waits
for turn completions.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import msgspec

from shedproto import RemoteProtocolError
from shedproto._version import __version__
from shedproto.agents_host import (
    CommandExecutionResult,
    SessionPage,
    SessionSnapshot,
    SessionSummary,
    unsupported,
)
from shedproto.connector import AgentSourceConfig, Capabilities, PromptPayload, StartPayload
from shedproto.drivers import failed, needs_confirmation, succeeded, unknown
from shedproto.drivers.codex import (
    CODEX_CAPABILITIES,
    ApprovalPolicy,
    CodexClientConnection,
    CodexConfigError,
    CodexEvent,
    ConnectionClosed,
    ErrorResponse,
    HandshakeComplete,
    Notification,
    PageWalk,
    Response,
    full_turn,
    inventory_page,
    launch_plan,
    parse_inventory_cursor,
    thread_list_params,
    thread_messages,
    thread_of,
    thread_summary,
    turn_id_of,
    turn_outcome,
    turn_start_params,
)
from shedproto.servers.agents_host import OperationOptions

from ._child import STOP_GRACE, ChildError, ChildProcess

__all__ = ["CLIENT_NAME", "CodexAppServerDriver", "CodexDriverError", "CodexRpcError"]

CLIENT_NAME = "commonfabric-agents-connector"
"""``clientInfo.name`` in ``initialize`` (it becomes part of codex's user agent)."""


class CodexDriverError(Exception):
    """The app-server cannot be used: bad configuration, failed spawn or handshake, or it ended.

    ``code`` is a stable string (``codex-transport-unsupported``,
    ``codex-app-server-unavailable``, ``codex-app-server-exited``, ...).
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class CodexRpcError(CodexDriverError):
    """The app-server answered a request with a JSON-RPC error."""

    def __init__(self, method: str, rpc_code: int, message: str, data: Any) -> None:
        super().__init__("codex-request-failed", f"{method} failed ({rpc_code}): {message}")
        self.method = method
        self.rpc_code = rpc_code
        self.rpc_message = message
        self.data = data


@dataclass
class _Waiter:
    event: anyio.Event = field(default_factory=anyio.Event)
    outcome: Response | ErrorResponse | None = None


class CodexAppServerDriver:
    """The connector's ``codex-app-server`` driver: a ``codex app-server`` child over JSON-RPC.

    ``base_env`` is the environment the child inherits before the source's own
    ``env`` and ``CODEX_HOME`` (default: this process's environment, copied
    once). Requests time out after ``request_timeout`` seconds with
    ``TimeoutError``; a turn waits for its completion without a deadline
    (turns may legitimately run for hours; ``cancel`` or ``stop`` end them).
    ``cancel`` waits up to ``interrupt_wait`` seconds for the turn's
    ``turn/started`` before sending ``turn/interrupt``.
    """

    driver = "codex-app-server"

    def __init__(
        self,
        source: AgentSourceConfig,
        *,
        base_env: Mapping[str, str] | None = None,
        approval_policy: ApprovalPolicy | None = None,
        handshake_timeout: float = 60.0,
        request_timeout: float = 120.0,
        interrupt_wait: float = 5.0,
        client_version: str = __version__,
    ) -> None:
        self.source = source
        self.version: str | None = None
        self.capabilities = Capabilities(**CODEX_CAPABILITIES)
        self.connection = CodexClientConnection(approval_policy=approval_policy)
        self.handshake_timeout = handshake_timeout
        self.request_timeout = request_timeout
        self.interrupt_wait = interrupt_wait
        self.client_version = client_version
        self.failure: str | None = None
        self._base_env = dict(os.environ if base_env is None else base_env)
        self._child: ChildProcess | None = None
        self._waiters: dict[int, _Waiter] = {}
        self._turn_changed = anyio.Event()
        self._closed = anyio.Event()
        self._stop = anyio.Event()
        self._exited = anyio.Event()
        self._own_turns: dict[str, str | None] = {}

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Spawn the app-server and complete the handshake; its tasks live in ``task_group``.

        Raises:
            CodexDriverError: ``codex-transport-unsupported`` (``managed``/``proxy``),
                ``codex-app-server-unavailable`` (the program cannot run), or the
                handshake failed or timed out (the child is killed).

        """
        try:
            plan = launch_plan(self.source, self._base_env)
        except CodexConfigError as exc:
            raise CodexDriverError(exc.code, str(exc)) from None
        try:
            child = await ChildProcess.spawn(plan.argv, env=plan.env, cwd=plan.cwd)
        except OSError as exc:
            raise CodexDriverError(
                "codex-app-server-unavailable", f"cannot run {plan.argv[0]}: {exc}"
            ) from exc
        self._child = child
        await task_group.start(self._run, child)

    async def _run(self, child: ChildProcess, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        failure: CodexDriverError | None = None
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(child.drain_stderr)
                tasks.start_soon(self._read_stdout, child)
                try:
                    with anyio.fail_after(self.handshake_timeout):
                        await self._handshake()
                except TimeoutError:
                    failure = CodexDriverError(
                        "codex-handshake-timeout",
                        f"the app-server did not answer initialize within "
                        f"{self.handshake_timeout}s",
                    )
                except CodexDriverError as exc:
                    failure = exc
                if failure is None:
                    task_status.started()
                    await self._wait_stop_or_exit()
                    await child.close_stdin()
                    with anyio.move_on_after(STOP_GRACE):
                        await child.process.wait()
                tasks.cancel_scope.cancel()
        finally:
            await child.aclose(grace=0.0 if failure is not None else STOP_GRACE)
            self._fail_all(self.failure or "the app-server stopped")
            self._exited.set()
        if failure is not None:
            raise failure

    async def _handshake(self) -> None:
        request_id, data = self.connection.initialize(
            name=CLIENT_NAME, version=self.client_version, title="Common Fabric agents connector"
        )
        outcome = await self._exchange(request_id, data)
        if isinstance(outcome, ErrorResponse):
            raise CodexDriverError(
                "codex-handshake-failed", f"initialize failed ({outcome.code}): {outcome.message}"
            )

    async def _wait_stop_or_exit(self) -> None:
        async with anyio.create_task_group() as waiters:

            async def until(event: anyio.Event) -> None:
                await event.wait()
                waiters.cancel_scope.cancel()

            waiters.start_soon(until, self._stop)
            waiters.start_soon(until, self._closed)

    async def stop(self) -> None:
        """Close the child's stdin, let it exit (killed after a grace period); idempotent.

        Running prompts end ``unknown``: their turns' outcomes can no longer be observed.
        """
        self._stop.set()
        if self._child is not None:
            await self._exited.wait()

    # -- plumbing --------------------------------------------------------------------------------

    async def _read_stdout(self, child: ChildProcess) -> None:
        while True:
            data = await child.receive()
            events = self.connection.receive_data(data)
            await self._dispatch(child, events)
            if not data or self._closed.is_set():
                return

    async def _dispatch(self, child: ChildProcess, events: list[CodexEvent]) -> None:
        # the core's own replies (``initialized``, answers to server requests) go out
        # first: a waiter woken below may send its next request at once
        replies = self.connection.data_to_send()
        if replies:
            try:
                await child.send(replies)
            except ChildError:
                self._fail_all("the app-server stopped reading its input")
        for event in events:
            if isinstance(event, (Response, ErrorResponse)):
                waiter = self._waiters.get(event.id) if isinstance(event.id, int) else None
                if waiter is not None:
                    waiter.outcome = event
                    waiter.event.set()
            elif isinstance(event, HandshakeComplete):
                self.version = event.version
                waiter = self._waiters.get(event.id)
                if waiter is not None:
                    waiter.outcome = Response(id=event.id, method="initialize", result=event.result)
                    waiter.event.set()
            elif isinstance(event, Notification):
                if event.method in ("turn/started", "turn/completed"):  # the core remembers them
                    self._wake_turns()
            elif isinstance(event, ConnectionClosed):
                detail = child.stderr_last_line()
                reason = event.error.message if event.error is not None else None
                self._fail_all(
                    reason
                    or f"the app-server exited (status {child.returncode})"
                    + (f": {detail}" if detail else "")
                )

    def _wake_turns(self) -> None:
        self._turn_changed.set()
        self._turn_changed = anyio.Event()

    def _fail_all(self, message: str) -> None:
        if self.failure is None:
            self.failure = message
        self._closed.set()
        self._wake_turns()
        for waiter in self._waiters.values():
            waiter.event.set()

    async def _exchange(self, request_id: int, data: bytes) -> Response | ErrorResponse:
        child = self._child
        if child is None or self._closed.is_set():
            raise CodexDriverError(
                "codex-app-server-unavailable", self.failure or "the app-server is not running"
            )
        waiter = _Waiter()
        self._waiters[request_id] = waiter
        try:
            try:
                await child.send(data)
            except ChildError as exc:
                raise CodexDriverError("codex-app-server-exited", str(exc)) from exc
            await waiter.event.wait()
        finally:
            self._waiters.pop(request_id, None)
            self.connection.forget(request_id)
        if waiter.outcome is None:
            raise CodexDriverError(
                "codex-app-server-exited", self.failure or "the app-server exited"
            )
        return waiter.outcome

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send one request and return its ``result``.

        Raises:
            CodexRpcError: the server answered with an error.
            CodexDriverError: the app-server is not running or exited first.
            TimeoutError: no answer within ``request_timeout``.

        """
        if self._closed.is_set() or self._child is None:
            raise CodexDriverError(
                "codex-app-server-unavailable", self.failure or "the app-server is not running"
            )
        request_id, data = self.connection.send_request(method, params)
        with anyio.fail_after(self.request_timeout):
            outcome = await self._exchange(request_id, data)
        if isinstance(outcome, ErrorResponse):
            raise CodexRpcError(method, outcome.code, outcome.message, outcome.data)
        return outcome.result

    # -- inventory and reads ---------------------------------------------------------------------

    async def list_sessions(self, cursor: str | None = None) -> SessionPage:
        """Return one inventory page (active threads first, then archived ones).

        Raises:
            LocalProtocolError: the cursor is not one this driver issued.
            CodexRpcError, CodexDriverError, TimeoutError: see :meth:`request`.

        """
        position = parse_inventory_cursor(cursor)
        result = await self.request("thread/list", thread_list_params(position))
        page = inventory_page(position, result)
        return SessionPage(
            sessions=tuple(self._with_activity(s) for s in page.sessions),
            nextCursor=page.nextCursor,
        )

    def _with_activity(self, summary: SessionSummary) -> SessionSummary:
        if summary.nativeSessionId in self._own_turns and not summary.active:
            return msgspec.structs.replace(summary, active=True)
        return summary

    async def read_session(self, native_session_id: str) -> SessionSnapshot:
        """Read a thread with all its turns (paged fallback when ``includeTurns`` is refused).

        Raises:
            CodexRpcError: the thread cannot be read (``thread not loaded``).
            CodexDriverError, TimeoutError: see :meth:`request`.

        """
        try:
            result = await self.request(
                "thread/read", {"threadId": native_session_id, "includeTurns": True}
            )
            thread = _thread_of(result)
            turns = thread.get("turns")
        except CodexRpcError:
            result = await self.request("thread/read", {"threadId": native_session_id})
            thread = _thread_of(result)
            turns = await self._paged_turns(native_session_id)
        events, messages = thread_messages(turns)
        updated = thread.get("updatedAt")
        return SessionSnapshot(
            summary=self._with_activity(thread_summary(thread, archived=None)),
            events=events,
            normalizedMessages=messages,
            complete=True,
            revision=str(updated) if isinstance(updated, (int, float)) else None,
        )

    async def _pages(self, method: str, params: dict[str, Any]) -> list[Any]:
        walk = PageWalk(params)
        while walk.add(await self.request(method, walk.query())):
            pass
        return walk.items

    async def _paged_turns(self, thread_id: str) -> list[Any]:
        turns = await self._pages(
            "thread/turns/list", {"threadId": thread_id, "sortDirection": "asc"}
        )
        full: list[Any] = []
        for turn in turns:
            if not isinstance(turn, dict) or not isinstance(turn.get("id"), str):
                continue
            entries = await self._pages(
                "thread/items/list",
                {"threadId": thread_id, "turnId": turn["id"], "sortDirection": "asc"},
            )
            full.append(full_turn(turn, entries))
        return full

    # -- commands --------------------------------------------------------------------------------

    async def prompt(
        self,
        native_session_id: str,
        payload: PromptPayload,
        options: OperationOptions | None = None,
    ) -> CommandExecutionResult:
        """Resume the thread, start a turn and wait for its ``turn/completed``.

        ``already-active`` while this driver runs a turn on the thread; a failed
        resume or ``turn/start`` is ``failed``; a child that ends after
        ``turn/start`` was sent is ``unknown``.
        """
        options = options or OperationOptions()
        if native_session_id in self._own_turns:
            return needs_confirmation(
                "already-active", f"a connector prompt is already running: {native_session_id}"
            )
        if self._closed.is_set() or self._child is None:
            return failed(
                "codex-app-server-unavailable",
                self.failure or "the app-server is not running",
                retryable=True,
            )
        self._own_turns[native_session_id] = None
        try:
            return await self._prompt(native_session_id, payload.text, options)
        finally:
            turn_id = self._own_turns.pop(native_session_id, None)
            self.connection.forget_turn(turn_id or "")

    async def _prompt(
        self, thread_id: str, text: str, options: OperationOptions
    ) -> CommandExecutionResult:
        try:
            await self.request("thread/resume", {"threadId": thread_id})
        except CodexRpcError as exc:
            return failed("codex-resume-failed", exc.rpc_message)
        except CodexDriverError as exc:
            return failed(exc.code, exc.message, retryable=True)
        params = turn_start_params(
            thread_id, text, allow_danger_full_access=bool(self.source.allowDangerFullAccess)
        )
        try:
            result = await self.request("turn/start", params)
        except CodexRpcError as exc:
            return failed("codex-turn-start-failed", exc.rpc_message)
        except CodexDriverError as exc:
            return unknown(exc.code, f"the app-server ended during turn/start: {exc.message}")
        turn_id = turn_id_of(result)
        if turn_id is None:
            return unknown("codex-turn-id-missing", "turn/start answered without a turn id")
        self._own_turns[thread_id] = turn_id
        if options.on_cancellation_ready is not None:
            options.on_cancellation_ready()
        if options.on_session_active is not None:
            await options.on_session_active()
        while True:
            final = self.connection.completed_turn(turn_id)
            if final is not None:
                return turn_outcome(final)
            if self._closed.is_set():
                return unknown(
                    "codex-app-server-exited",
                    f"the app-server ended before turn {turn_id} completed: {self.failure}",
                    provider_operation_id=turn_id,
                )
            changed = self._turn_changed
            await changed.wait()

    async def start_session(
        self,
        native_session_id: str,
        payload: StartPayload,
        options: OperationOptions | None = None,
    ) -> CommandExecutionResult:
        """``unsupported``: codex mints thread ids itself, so a chosen id cannot be honoured."""
        del payload, options
        return unsupported("startSession", self.source.id)

    async def cancel(self, native_session_id: str) -> CommandExecutionResult:
        """Interrupt this driver's own running turn on the thread; anything else is unsupported."""
        turn_id = self._own_turns.get(native_session_id)
        if turn_id is None:
            return unsupported("cancel (only for a connector-owned turn)", self.source.id)
        # codex refuses to interrupt a turn it has not started yet ("no active turn"):
        # wait (briefly) for its turn/started, or its end, first.
        with anyio.move_on_after(self.interrupt_wait):
            while not (
                self.connection.started_turn(turn_id)
                or self.connection.completed_turn(turn_id) is not None
                or self._closed.is_set()
            ):
                changed = self._turn_changed
                await changed.wait()
        if self.connection.completed_turn(turn_id) is not None:
            return succeeded({"turnId": turn_id}, provider_operation_id=turn_id)
        try:
            await self.request("turn/interrupt", {"threadId": native_session_id, "turnId": turn_id})
        except CodexRpcError as exc:
            return failed("codex-interrupt-failed", exc.rpc_message, retryable=True)
        except CodexDriverError as exc:
            return failed(exc.code, exc.message, retryable=True)
        return succeeded({"turnId": turn_id}, provider_operation_id=turn_id)

    async def rename_session(self, native_session_id: str, title: str) -> CommandExecutionResult:
        """Set the thread's name with ``thread/name/set``."""
        try:
            await self.request("thread/name/set", {"threadId": native_session_id, "name": title})
        except CodexRpcError as exc:
            return failed("codex-rename-failed", exc.rpc_message)
        except CodexDriverError as exc:
            return failed(exc.code, exc.message, retryable=True)
        return succeeded({"title": title})

    async def set_mode(self, native_session_id: str, mode: str) -> CommandExecutionResult:
        """``unsupported``: the app-server's stable surface has no per-thread mode."""
        del native_session_id, mode
        return unsupported("setMode", self.source.id)

    async def set_config_option(
        self, native_session_id: str, key: str, value: Any
    ) -> CommandExecutionResult:
        """``unsupported``: no per-thread configuration option is advertised."""
        del native_session_id, key, value
        return unsupported("setConfigOption", self.source.id)


def _thread_of(result: Any) -> dict[str, Any]:
    try:
        return thread_of(result)
    except RemoteProtocolError as exc:
        raise CodexDriverError("codex-bad-response", exc.message) from None
