"""The ACP driver: spawns the configured command and speaks ACP over its stdio.

:class:`AcpProcess` is the I/O shell around :class:`~shedproto.drivers.acp.AcpConnection`:
it owns the child process, one reader task (stdout -> events, answers queued
by the core written back at once) and one stderr task (the last 64 KiB kept
for error messages). :class:`AcpDriver` maps the connector driver interface
onto it (spec section 7.4):

* start: spawn (in its own process group), ``initialize`` (within
  ``handshake_timeout``), then ``authenticate`` when the source names an
  ``authMethod`` or exactly one of the agent's ``env_var`` methods has its
  variables set;
* stop: close stdin, ``SIGTERM`` the group after a grace, ``SIGKILL`` after
  another (:mod:`.process_group`);
* supervision: an agent that dies is restarted with exponential backoff
  (reported through the lifecycle listener, hence in health), initialised
  and authenticated again, and the sessions open on the dead process are
  loaded (or resumed) again; the running turn's receipt is ``unknown`` /
  ``acp-agent-exited``; commands meanwhile wait for the restart (bounded);
* deadlines: every turn is bounded by the source's ``promptTimeoutMs``
  (default :data:`DEFAULT_PROMPT_TIMEOUT_MS`); past it the turn is cancelled
  and fails ``acp-prompt-deadline`` (abandoned if the agent does not answer
  the cancel within ``cancel_grace``); the core keeps the deadlines
  (``next_deadline`` / ``handle_timeout``), one timer task per process feeds
  it the time;
* inventory: ``session/list`` pages when advertised, else the sessions this
  process created; read: ``session/load`` (serialised), or this
  connection's own complete transcript for a session it created or loaded;
* prompt: ``session/resume`` when advertised, else ``session/load``, unless
  the session is already open on this connection, then ``session/prompt``;
* start: ``session/new`` in the payload's ``cwd`` (else the source's, else
  the host's), optional ``session/set_mode``, then the first prompt. ACP
  agents mint session ids, so the receipt's ``result`` carries both the id
  the command named (``requestedSessionId``) and the agent's
  (``nativeSessionId``), and the refresh targets the agent's id;
* cancel: ``session/cancel``, only for a prompt this driver runs; a start's
  turn may be addressed by the command's requested id (a cancel that comes
  before ``session/new`` answered stops the start before its prompt);
* permission requests select ``reject_once`` (``allow_once`` when the source
  has ``allowDangerFullAccess``), ``cancelled`` only when no option fits;
* rename: ``unsupported``; set-mode / set-config-option: validated against
  the modes and options the agent advertised for the session.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc

from shedproto import LocalProtocolError, RemoteProtocolError
from shedproto.agents_host import (
    ACP_AGENT_EXITED,
    ACP_AGENT_UNAVAILABLE,
    ACP_PROMPT_DEADLINE,
    ACP_PROMPT_FAILED,
    ACP_START_FAILED,
    CommandExecutionResult,
    SessionPage,
    SessionSnapshot,
    SessionSummary,
    execution_error,
    unsupported,
)
from shedproto.connector import (
    AgentSourceConfig,
    Capabilities,
    PromptPayload,
    ReceiptErrorInfo,
    StartPayload,
)
from shedproto.drivers.acp import (
    MAX_ERROR_DETAIL,
    AcpConnection,
    AcpEvent,
    AgentFeatures,
    ConnectionClosed,
    PermissionPolicy,
    PromptAbandoned,
    PromptDeadlinePassed,
    RequestFailed,
    RequestSucceeded,
    advertised_controls,
    check_config_option,
    check_mode,
    choose_auth_method,
    describe_rpc_error,
    parse_session_page,
    prompt_receipt,
    rpc_failure,
)
from shedproto.servers._receive import RECEIVE_CHUNK
from shedproto.servers.agents_host.driver import LifecycleListener, OperationOptions
from shedproto.servers.agents_host.process_group import STOP_GRACE, stop_process_group

__all__ = [
    "DEFAULT_PROMPT_TIMEOUT_MS",
    "AcpAgentExitedError",
    "AcpDriver",
    "AcpDriverError",
    "AcpProcess",
    "AcpRequestError",
    "AcpTurnAbandonedError",
]

DEFAULT_PROMPT_TIMEOUT_MS = 1_800_000
"""A turn's deadline when the source sets no ``promptTimeoutMs``: 30 minutes."""
CANCEL_GRACE = 10.0
"""Seconds an agent gets to answer the cancel sent at a turn's deadline."""
RESTART_BACKOFF = 0.5
"""Seconds before the first restart of a dead agent; doubled per failed attempt."""
RESTART_BACKOFF_MAX = 30.0
"""The longest wait between two restart attempts."""
RESTART_WAIT = 30.0
"""Seconds a command waits for a dead agent's restart before failing."""

STDERR_TAIL = 64 * 1024

EXIT_STATUS_WAIT = 1.0
"""Seconds a request whose agent closed its output waits for the exit status (its message)."""


class AcpDriverError(Exception):
    """The agent process failed: it exited, broke the protocol, or never answered."""


class AcpAgentExitedError(AcpDriverError):
    """The agent process ended (or broke the protocol) before answering a request."""


class AcpRequestError(AcpDriverError):
    """The agent answered a request with a JSON-RPC error (``code``, ``data`` kept)."""

    def __init__(self, method: str, code: int, message: str, data: Any) -> None:
        super().__init__(f"{method} failed: {describe_rpc_error(code, message, data)}")
        self.method = method
        self.code = code
        self.rpc_message = message
        self.data = data


class AcpTurnAbandonedError(AcpDriverError):
    """A prompt's deadline passed and the agent did not answer its cancel in time."""


@dataclass
class _Waiter:
    event: anyio.Event
    outcome: RequestSucceeded | RequestFailed | None = None
    abandoned: bool = False


class AcpProcess:
    """One spawned agent and its :class:`~shedproto.drivers.acp.AcpConnection`.

    Start it with ``task_group.start(run)``. ``env`` is added to this process's environment, or with
    ``inherit_env=False`` is the agent's whole environment.
    """

    def __init__(
        self,
        command: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        permission_policy: PermissionPolicy = PermissionPolicy.REJECT_ONCE,
        handshake_timeout: float = 60.0,
        stop_grace: float = STOP_GRACE,
        inherit_env: bool = True,
    ) -> None:
        self.command = list(command)
        self.stop_grace = stop_grace
        self.inherit_env = inherit_env
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self.handshake_timeout = handshake_timeout
        self.connection = AcpConnection(permission_policy=permission_policy)
        self.features: AgentFeatures | None = None
        self.failure: str | None = None
        self.stderr_tail = bytearray()
        self._process: anyio.abc.Process | None = None
        self._waiters: dict[int | str, _Waiter] = {}
        self._send_lock = anyio.Lock()
        self._closed = anyio.Event()
        self._stop = anyio.Event()
        self._exited = anyio.Event()
        self._running = False
        self._handshaking = False
        self._deadlines_changed = anyio.Event()
        self._overdue: set[int | str] = set()

    async def run(self, *, task_status: anyio.abc.TaskStatus[AgentFeatures]) -> None:
        """Spawn, handshake, report the agent's features, and run until :meth:`stop`.

        Raises:
            AcpDriverError: the command could not be executed, or the
                handshake failed (readiness is never signalled; the process
                is killed).

        """
        env = self.env
        if env is not None and self.inherit_env:
            env = {**os.environ, **env}
        self._running = True
        try:
            process = await anyio.open_process(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.cwd,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            # Nothing was spawned: release every waiter (stop() included) now.
            self._fail_all(f"cannot run {self.command[0]}: {exc.strerror or exc}")
            self._exited.set()
            raise AcpDriverError(self.failure or "the agent could not be started") from exc
        self._process = process
        failure: AcpDriverError | None = None
        grace = 0.0
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self._read_stdout)
                tasks.start_soon(self._read_stderr)
                tasks.start_soon(self._run_deadlines)
                try:
                    self._handshaking = True
                    try:
                        features = await self._handshake()
                    finally:
                        self._handshaking = False
                except AcpDriverError as exc:
                    failure = exc
                    tasks.cancel_scope.cancel()
                else:
                    task_status.started(features)
                    await self._wait_stop_or_exit()
                    if self._stop.is_set():
                        # Let the agent exit on its own after stdin closes (and its
                        # streams drain) before its group is signalled.
                        grace = self.stop_grace
                        await stop_process_group(process, grace=grace)
                    tasks.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await self._reap(process, grace)
        if failure is not None:
            raise failure

    async def _handshake(self) -> AgentFeatures:
        failure: AcpDriverError | None = None
        async with anyio.create_task_group() as watch:

            async def stop_requested() -> None:
                await self._stop.wait()  # a stop never waits for a slow initialize
                watch.cancel_scope.cancel()

            async def exited() -> None:
                # an agent that exits while something else holds its output open
                # (a child it left behind) never sends the EOF that ends the wait
                nonlocal failure
                process = self._process
                assert process is not None
                await process.wait()
                failure = AcpAgentExitedError(self._exit_message(process.returncode))
                watch.cancel_scope.cancel()

            watch.start_soon(stop_requested)
            watch.start_soon(exited)
            try:
                with anyio.fail_after(self.handshake_timeout):
                    await self.request(self.connection.initialize(), "initialize")
            except TimeoutError:
                failure = AcpDriverError(
                    f"the agent did not answer initialize within {self.handshake_timeout}s"
                )
            except AcpDriverError as exc:
                failure = exc  # raised below, not wrapped in the task group's ExceptionGroup
            watch.cancel_scope.cancel()
        if failure is not None:
            raise failure
        if self._stop.is_set() and self.connection.features is None:
            raise AcpDriverError("the agent was stopped before it answered initialize")
        features = self.connection.features
        if features is None:
            raise AcpDriverError(self.failure or "the agent did not complete initialize")
        self.features = features
        return features

    async def _wait_stop_or_exit(self) -> None:
        async with anyio.create_task_group() as waiters:

            async def stop_requested() -> None:
                await self._stop.wait()
                waiters.cancel_scope.cancel()

            async def closed() -> None:
                await self._closed.wait()
                waiters.cancel_scope.cancel()

            waiters.start_soon(stop_requested)
            waiters.start_soon(closed)

    async def _reap(self, process: anyio.abc.Process, grace: float) -> None:
        await stop_process_group(process, grace=grace)
        with contextlib.suppress(OSError):
            await process.aclose()
        if self.failure is None and not self._stop.is_set():
            self.failure = self._exit_message(process.returncode)
        self._fail_all("the agent process ended")
        self._exited.set()

    def stop(self) -> None:
        """Ask :meth:`run` to close the agent's stdin and let it exit; idempotent."""
        self._stop.set()
        if not self._running:
            self._exited.set()  # never started: nothing to wait for

    async def wait_exited(self) -> None:
        """Wait until the agent process has been reaped."""
        await self._exited.wait()

    @property
    def pid(self) -> int | None:
        """The agent's process id (its process group's id), once spawned."""
        return None if self._process is None else self._process.pid

    @property
    def returncode(self) -> int | None:
        """The agent's exit status once it ended, else ``None``."""
        return None if self._process is None else self._process.returncode

    async def send(self, data: bytes) -> None:
        """Write bytes to the agent's stdin under the send lock.

        Raises:
            AcpDriverError: the agent's stdin is closed.

        """
        process = self._process
        if process is None or process.stdin is None or self._closed.is_set():
            raise AcpDriverError(self.failure or "the agent process is not running")
        async with self._send_lock:
            try:
                await process.stdin.send(data)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                raise AcpDriverError(f"could not write to the agent: {exc}") from exc

    async def _call(
        self,
        request_id: int,
        data: bytes,
        method: str,
        on_sent: Callable[[], Awaitable[None]] | None = None,
    ) -> Any:
        waiter = _Waiter(anyio.Event())
        self._waiters[request_id] = waiter
        try:
            await self.send(data)
            if on_sent is not None:
                await on_sent()
            await waiter.event.wait()
        finally:
            self._waiters.pop(request_id, None)
        if waiter.abandoned:
            raise AcpTurnAbandonedError(f"{method}: the agent did not answer the cancel")
        outcome = waiter.outcome
        if isinstance(outcome, RequestSucceeded):
            return outcome.result
        if outcome is None or outcome.closed:
            raise AcpAgentExitedError(self.failure or await self._ended_message())
        raise AcpRequestError(method, outcome.code, outcome.message, outcome.data)

    def prompt(
        self, session_id: str, text: str, *, timeout: float, cancel_grace: float
    ) -> tuple[int, bytes]:
        """Build a ``session/prompt`` whose deadline is ``timeout`` seconds from now.

        Past the deadline the turn is cancelled; ``cancel_grace`` later it is
        abandoned (its :meth:`request` raises :class:`AcpTurnAbandonedError`).

        Raises:
            LocalProtocolError: as :meth:`~shedproto.drivers.acp.AcpConnection.prompt`.

        """
        sent = self.connection.prompt(
            session_id, text, deadline=anyio.current_time() + timeout, cancel_grace=cancel_grace
        )
        self._deadlines_changed.set()
        return sent

    def deadline_passed(self, request_id: int | str) -> bool:
        """Return (and forget) whether the deadline of prompt ``request_id`` passed."""
        if request_id in self._overdue:
            self._overdue.discard(request_id)
            return True
        return False

    async def _run_deadlines(self) -> None:
        connection = self.connection
        while True:
            changed = self._deadlines_changed = anyio.Event()
            deadline = connection.next_deadline()
            delay = None if deadline is None else deadline - anyio.current_time()
            if delay is None or delay > 0:
                with anyio.move_on_after(delay):
                    await changed.wait()
            events = connection.handle_timeout(anyio.current_time())
            reply = connection.data_to_send()
            if reply:
                with contextlib.suppress(AcpDriverError):
                    await self.send(reply)
            self._dispatch(events)

    async def request(
        self,
        sent: tuple[int, bytes],
        method: str,
        *,
        on_sent: Callable[[], Awaitable[None]] | None = None,
    ) -> Any:
        """Send a request built by the connection and return its ``result``.

        ``on_sent`` is awaited once the request is written, before the answer.

        Raises:
            AcpRequestError: the agent answered with an error.
            AcpTurnAbandonedError: a prompt's deadline and its cancel's grace passed.
            AcpDriverError: the agent ended or broke the protocol first.

        """
        request_id, data = sent
        return await self._call(request_id, data, method, on_sent)

    async def _read_stdout(self) -> None:
        process = self._process
        assert process is not None
        assert process.stdout is not None
        while True:
            try:
                data = await process.stdout.receive(RECEIVE_CHUNK)
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                data = b""
            connection = self.connection
            try:
                events = connection.receive_data(data)
            except RemoteProtocolError:
                events = []  # the connection keeps the error (sticky), checked below
            reply = connection.data_to_send()
            if reply:
                with contextlib.suppress(AcpDriverError):
                    await self.send(reply)
            self._dispatch(events)
            if connection.error is not None:
                # The events before the bad line are delivered; the error ends the agent.
                self.failure = f"the agent broke the ACP protocol: {connection.error.message}"
                self._fail_all(self.failure)
                return
            if not data:
                self._closed.set()  # _reap fails what is left, with the exit status
                return

    async def _ended_message(self) -> str:
        """Say how the agent ended: its exit status, awaited briefly, else its closed output.

        During ``initialize`` it waits on the process itself: :meth:`_reap`
        runs only after the handshake, i.e. after this very request. Later it
        also waits for :meth:`_reap` (bounded), so whoever sees the failure
        sees the process reaped (a supervisor already restarting it).
        """
        process = self._process
        if process is None:
            return "the agent process ended"
        if process.returncode is None:
            with anyio.move_on_after(EXIT_STATUS_WAIT):
                await process.wait()
        if not self._handshaking:
            with anyio.move_on_after(3 * self.stop_grace):
                await self._exited.wait()
        return self.failure or self._exit_message(process.returncode)

    def _exit_message(self, returncode: int | None = None) -> str:
        tail = bytes(self.stderr_tail).decode("utf-8", "replace").strip().splitlines()
        detail = f": {tail[-1][:MAX_ERROR_DETAIL]}" if tail else ""
        if returncode is None:
            return f"the agent process closed its output{detail}"
        if returncode < 0:
            return f"the agent process was killed by signal {-returncode}{detail}"
        return f"the agent process exited with status {returncode}{detail}"

    async def _read_stderr(self) -> None:
        process = self._process
        assert process is not None
        assert process.stderr is not None
        while True:
            try:
                data = await process.stderr.receive(RECEIVE_CHUNK)
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                return
            self.stderr_tail += data
            if len(self.stderr_tail) > STDERR_TAIL:
                del self.stderr_tail[: len(self.stderr_tail) - STDERR_TAIL]

    def _dispatch(self, events: list[AcpEvent]) -> None:
        for event in events:
            if isinstance(event, RequestSucceeded | RequestFailed):
                waiter = self._waiters.get(event.request_id)
                if waiter is not None:
                    waiter.outcome = event
                    waiter.event.set()
            elif isinstance(event, PromptDeadlinePassed):
                self._overdue.add(event.request_id)
            elif isinstance(event, PromptAbandoned):
                waiter = self._waiters.get(event.request_id)
                if waiter is not None:
                    waiter.abandoned = True
                    waiter.event.set()
            elif isinstance(event, ConnectionClosed):
                self._closed.set()

    def _fail_all(self, message: str) -> None:
        if self.failure is None:
            self.failure = message
        self._closed.set()
        for waiter in self._waiters.values():
            waiter.event.set()


@dataclass
class _StartTurn:
    """A running ``start``: the agent's session id once known, and an early cancel."""

    agent_id: str | None = None
    cancelled: bool = False


def _failed(
    code: str,
    message: str,
    *,
    status: Any = "failed",
    retryable: bool = False,
    operation: str | None = None,
    result: dict[str, Any] | None = None,
) -> CommandExecutionResult:
    return CommandExecutionResult(
        status=status,
        providerOperationId=operation,
        result=result,
        error=ReceiptErrorInfo(code=code, message=message, retryable=retryable),
    )


def _request_failure(exc: AcpRequestError, default_code: str) -> CommandExecutionResult:
    return rpc_failure(exc.code, str(exc), default_code)


def _driver_failure(exc: AcpDriverError) -> CommandExecutionResult:
    """Map a request that got no (good) answer to its receipt error."""
    if isinstance(exc, AcpRequestError):
        return _request_failure(exc, ACP_PROMPT_FAILED)
    if isinstance(exc, AcpAgentExitedError):
        return _failed(ACP_AGENT_EXITED, f"the agent died: {exc}", status="unknown")
    return _failed(ACP_AGENT_UNAVAILABLE, f"the agent is not running: {exc}", retryable=True)


@dataclass
class _Supervision:
    """Restart bookkeeping, shown in health while the agent is down."""

    restarts: int = 0
    down_since_attempt: int = 0
    error: str | None = None
    up: anyio.Event = field(default_factory=anyio.Event)


class AcpDriver:
    """The connector's ``acp`` driver over :class:`AcpProcess`; see the module docstring."""

    def __init__(
        self,
        source: AgentSourceConfig,
        *,
        permission_policy: PermissionPolicy | None = None,
        handshake_timeout: float = 60.0,
        default_cwd: str | None = None,
        base_env: Mapping[str, str] | None = None,
        stop_grace: float = STOP_GRACE,
        cancel_grace: float = CANCEL_GRACE,
        restart_backoff: float = RESTART_BACKOFF,
        restart_wait: float = RESTART_WAIT,
    ) -> None:
        if not source.command:
            raise ValueError(f"sources {source.id}: command is required for an enabled ACP source")
        self.source = source
        self.version: str | None = None
        self.capabilities = Capabilities(
            inventory=False,
            read=False,
            prompt=False,
            cancel=False,
            rename=False,
            setMode=False,
            setConfigOption=False,
        )
        if permission_policy is None:
            permission_policy = (
                PermissionPolicy.ALLOW_ONCE
                if source.allowDangerFullAccess
                else PermissionPolicy.REJECT_ONCE
            )
        self.permission_policy = permission_policy
        self.handshake_timeout = handshake_timeout
        self.stop_grace = stop_grace
        self.cancel_grace = cancel_grace
        self.restart_backoff = restart_backoff
        self.restart_wait = restart_wait
        self.prompt_timeout = (source.promptTimeoutMs or DEFAULT_PROMPT_TIMEOUT_MS) / 1000
        self.auth_method: str | None = None
        self._agent_env = {**(os.environ if base_env is None else base_env), **(source.env or {})}
        self.process = self._new_process()
        self.supervision = _Supervision()
        self._listener: LifecycleListener | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        self._stopping = anyio.Event()
        self._default_cwd = default_cwd or source.cwd or os.getcwd()
        self._replayed: set[str] = set()
        self._open: set[str] = set()
        self._listed: dict[str, SessionSummary] = {}
        self._created: dict[str, SessionSummary] = {}
        self._starts: dict[str, _StartTurn] = {}
        self._load_lock = anyio.Lock()

    def _new_process(self) -> AcpProcess:
        assert self.source.command
        return AcpProcess(
            self.source.command,
            cwd=self.source.cwd,
            env=self._agent_env,
            permission_policy=self.permission_policy,
            handshake_timeout=self.handshake_timeout,
            stop_grace=self.stop_grace,
            inherit_env=False,
        )

    # -- lifecycle -------------------------------------------------------------------------

    def set_lifecycle_listener(self, listener: LifecycleListener) -> None:
        """Call ``listener(kind, message, healthy)`` when the agent dies or is restarted."""
        self._listener = listener

    @property
    def supervision_error(self) -> str | None:
        """Why the agent is down and when it restarts, or ``None`` while it runs."""
        return self.supervision.error

    def _notify(self, kind: str, message: str, healthy: bool) -> None:
        if self._listener is not None:
            self._listener(kind, message, healthy)

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Spawn the agent, initialise (and authenticate) it; then supervise it.

        Raises:
            AcpDriverError: the command cannot run, the handshake failed, or
                ``authenticate`` failed (the process is stopped).

        """
        self._task_group = task_group
        await self._launch()
        self.supervision.up.set()
        task_group.start_soon(self._supervise)

    async def _launch(self) -> None:
        assert self._task_group is not None
        process = self._new_process()
        self.process = process
        features: AgentFeatures = await self._task_group.start(process.run)
        try:
            await self._authenticate(process, features)
        except BaseException:
            process.stop()
            with anyio.CancelScope(shield=True):
                await process.wait_exited()
            raise
        self.version = features.agent_version
        self._replayed.clear()
        self._open.clear()
        self._refresh_capabilities()

    async def _authenticate(self, process: AcpProcess, features: AgentFeatures) -> None:
        try:
            method = choose_auth_method(
                features.auth_methods, self.source.authMethod, self._agent_env
            )
        except LocalProtocolError as exc:
            raise AcpDriverError(exc.message) from None
        if method is None:
            return
        try:
            await process.request(process.connection.authenticate(method), "authenticate")
        except AcpRequestError as exc:
            raise AcpDriverError(f"authentication with {method} failed: {exc}") from None
        self.auth_method = method

    async def _supervise(self) -> None:
        while True:
            await self.process.wait_exited()
            if self._stopping.is_set():
                return
            reopen = sorted(self._open)
            self.supervision.up = anyio.Event()
            reason = self.process.failure or "the agent process ended"
            delay = self.restart_backoff
            attempt = 1
            while True:
                self.supervision.error = f"{reason}; restart attempt {attempt} in {delay:g}s"
                self._notify("source-agent-exited", self.supervision.error, False)
                with anyio.move_on_after(delay):
                    await self._stopping.wait()
                if self._stopping.is_set():
                    return
                try:
                    await self._launch()
                except Exception as exc:
                    reason = str(exc) or type(exc).__name__
                    delay = min(delay * 2, RESTART_BACKOFF_MAX)
                    attempt += 1
                    continue
                break
            self.supervision.restarts += 1
            failures = await self._reopen(reopen)
            self.supervision.error = None
            self.supervision.up.set()  # commands resume once the sessions are open again
            detail = f"; could not reopen: {'; '.join(failures)}" if failures else ""
            self._notify(
                "source-agent-restarted",
                f"agent restarted (restart {self.supervision.restarts}){detail}",
                True,
            )

    async def _reopen(self, sessions: list[str]) -> list[str]:
        failures: list[str] = []
        for session_id in sessions:
            try:
                await self._open_session(session_id)
            except (AcpDriverError, LocalProtocolError) as exc:
                failures.append(f"{session_id}: {exc}")
        return failures

    async def _wait_up(self) -> bool:
        """Wait (bounded) for a dead agent's restart; ``False`` when it is still down."""
        if self.supervision.up.is_set():
            return True
        with anyio.move_on_after(self.restart_wait):
            await self.supervision.up.wait()
        return self.supervision.up.is_set()

    async def _require_up(self) -> None:
        if not await self._wait_up():
            raise AcpDriverError(f"the agent is not running: {self.supervision.error or 'stopped'}")

    def _refresh_capabilities(self) -> None:
        features = self.process.features
        if features is None:
            return
        modes, options = advertised_controls(self.process.connection.sessions.values())
        self.capabilities = Capabilities(
            inventory=True,
            read=features.load_session,
            prompt=True,
            cancel=True,
            rename=False,
            setMode=bool(modes),
            setConfigOption=bool(options),
            startSession=True,
            modes=modes or None,
            configOptions=options or None,
        )

    async def stop(self) -> None:
        """Stop the agent and its process group (stdin, SIGTERM, SIGKILL); idempotent."""
        self._stopping.set()
        self.process.stop()
        await self.process.wait_exited()

    # -- inventory and reads ---------------------------------------------------------------

    def _summary(self, session_id: str) -> SessionSummary:
        known = self._listed.get(session_id) or self._created.get(session_id)
        active = True if self.process.connection.prompting(session_id) else None
        if known is None:
            return SessionSummary(nativeSessionId=session_id, active=active)
        return SessionSummary(
            nativeSessionId=known.nativeSessionId,
            title=known.title,
            cwd=known.cwd,
            createdAt=known.createdAt,
            updatedAt=known.updatedAt,
            archived=known.archived,
            active=active,
            raw=known.raw,
        )

    async def list_sessions(self, cursor: str | None = None) -> SessionPage:
        """One ``session/list`` page, or this driver's own sessions when not advertised.

        Raises:
            AcpRequestError: the agent failed the listing.
            AcpDriverError: the agent is down, or its page is malformed.

        """
        await self._require_up()
        features = self.process.features
        if features is None or not features.list_sessions:
            return SessionPage(sessions=tuple(self._summary(k) for k in self._created))
        result = await self.process.request(
            self.process.connection.list_sessions(cursor), "session/list"
        )
        try:
            page = parse_session_page(result)
        except RemoteProtocolError as exc:
            raise AcpDriverError(exc.message) from None
        for summary in page.sessions:
            self._listed[summary.nativeSessionId] = summary
        return SessionPage(
            sessions=tuple(self._summary(s.nativeSessionId) for s in page.sessions),
            nextCursor=page.nextCursor,
        )

    async def read_session(self, native_session_id: str) -> SessionSnapshot:
        """Read a session: its transcript here, else ``session/load`` (loads serialised).

        Raises:
            AcpRequestError: the agent failed the load.
            AcpDriverError: the agent is down or does not support ``session/load``.

        """
        await self._require_up()
        process = self.process
        connection = process.connection
        if native_session_id not in self._replayed:
            features = process.features
            if features is None or not features.load_session:
                raise AcpDriverError("the agent does not support session/load")
            async with self._load_lock:
                cwd = self._summary(native_session_id).cwd or self._default_cwd
                await process.request(
                    connection.load_session(native_session_id, cwd), "session/load"
                )
                self._replayed.add(native_session_id)
                self._open.add(native_session_id)
                self._refresh_capabilities()
        transcript = connection.transcripts[native_session_id]
        return SessionSnapshot(
            summary=self._summary(native_session_id),
            events=tuple(transcript.events),
            normalizedMessages=tuple(transcript.messages()),
            complete=True,
        )

    async def _open_session(self, session_id: str) -> None:
        async with self._load_lock:  # one open per session, never two at once
            if session_id in self._open:
                return
            process = self.process
            features = process.features
            connection = process.connection
            cwd = self._summary(session_id).cwd or self._default_cwd
            if features is not None and features.resume_session:
                await process.request(connection.resume_session(session_id, cwd), "session/resume")
            else:
                await process.request(connection.load_session(session_id, cwd), "session/load")
                self._replayed.add(session_id)
            self._open.add(session_id)
            self._refresh_capabilities()

    # -- turns -----------------------------------------------------------------------------

    async def _run_prompt(
        self, session_id: str, text: str, options: OperationOptions
    ) -> CommandExecutionResult:
        process = self.process
        try:
            sent = process.prompt(
                session_id, text, timeout=self.prompt_timeout, cancel_grace=self.cancel_grace
            )
        except LocalProtocolError as exc:
            return _failed(ACP_AGENT_UNAVAILABLE, exc.message, retryable=True)
        operation = f"{session_id}:{sent[0]}"

        async def started() -> None:
            if options.on_cancellation_ready is not None:
                options.on_cancellation_ready()
            if options.on_session_active is not None:
                await options.on_session_active()

        answer: Any = None
        failure: AcpDriverError | None = None
        abandoned = False
        try:
            answer = await process.request(sent, "session/prompt", on_sent=started)
        except AcpTurnAbandonedError:
            abandoned = True
        except AcpDriverError as exc:
            failure = exc
        finally:
            deadline_hit = process.deadline_passed(sent[0])
        if deadline_hit:
            detail = "; the agent did not answer the cancel" if abandoned else ""
            return _failed(
                ACP_PROMPT_DEADLINE,
                f"the turn ran past the source's prompt deadline of "
                f"{int(self.prompt_timeout * 1000)} ms and was cancelled{detail}",
                operation=operation,
            )
        if failure is not None:
            outcome = _driver_failure(failure)
            return CommandExecutionResult(
                status=outcome.status, providerOperationId=operation, error=outcome.error
            )
        return prompt_receipt(answer, operation)

    async def prompt(
        self, native_session_id: str, payload: PromptPayload, options: OperationOptions
    ) -> CommandExecutionResult:
        """Run one prompt turn; see the module docstring."""
        if not await self._wait_up():
            return _failed(
                ACP_AGENT_UNAVAILABLE,
                f"the agent is not running: {self.supervision.error or 'stopped'}",
                retryable=True,
            )
        if self.process.connection.prompting(native_session_id):
            return execution_error(
                "needs-confirmation",
                "already-active",
                f"a prompt is already running in session {native_session_id}",
                retryable=True,
            )
        try:
            await self._open_session(native_session_id)
        except AcpDriverError as exc:
            return _driver_failure(exc)
        return await self._run_prompt(native_session_id, payload.text, options)

    async def start_session(
        self, native_session_id: str, payload: StartPayload, options: OperationOptions
    ) -> CommandExecutionResult:
        """``session/new`` plus the first prompt; see the module docstring.

        A failure before the agent assigned a session names no session to
        refresh (the requested id never exists at the agent).
        """
        if payload.surface != "headless":
            return execution_error(
                "unsupported", "unsupported", f"surface {payload.surface} is not supported"
            )
        turn_entry = self._starts[native_session_id] = _StartTurn()
        try:
            return await self._start(native_session_id, payload, options, turn_entry)
        finally:
            if self._starts.get(native_session_id) is turn_entry:
                del self._starts[native_session_id]

    async def _start(
        self,
        native_session_id: str,
        payload: StartPayload,
        options: OperationOptions,
        entry: _StartTurn,
    ) -> CommandExecutionResult:
        no_session: dict[str, Any] = {"affectedSession": None, "affected_session_set": True}
        cwd = payload.cwd or self._default_cwd
        if not await self._wait_up():
            failed = _failed(
                ACP_AGENT_UNAVAILABLE,
                f"the agent is not running: {self.supervision.error or 'stopped'}",
                retryable=True,
            )
            return CommandExecutionResult(status=failed.status, error=failed.error, **no_session)
        process = self.process
        try:
            result = await process.request(process.connection.new_session(cwd), "session/new")
        except AcpRequestError as exc:
            failed = _request_failure(exc, ACP_START_FAILED)
            return CommandExecutionResult(status=failed.status, error=failed.error, **no_session)
        except AcpDriverError as exc:
            failed = _driver_failure(exc)
            return CommandExecutionResult(status="failed", error=failed.error, **no_session)
        agent_id = result.get("sessionId") if isinstance(result, dict) else None
        if not isinstance(agent_id, str):
            return CommandExecutionResult(
                status="failed",
                error=ReceiptErrorInfo(
                    code=ACP_START_FAILED,
                    message="session/new answered without a sessionId",
                    retryable=False,
                ),
                **no_session,
            )
        entry.agent_id = agent_id
        ids = {"nativeSessionId": agent_id, "requestedSessionId": native_session_id}
        self._created[agent_id] = SessionSummary(
            nativeSessionId=agent_id, title=payload.title, cwd=cwd, raw={"sessionId": agent_id}
        )
        self._replayed.add(agent_id)
        self._open.add(agent_id)
        self._refresh_capabilities()
        if entry.cancelled:
            return CommandExecutionResult(
                status="failed",
                result={**ids, "stopReason": "cancelled"},
                error=ReceiptErrorInfo(
                    code="cancelled",
                    message="the start was cancelled before its first prompt",
                    retryable=False,
                ),
                affectedSession=agent_id,
                affected_session_set=True,
            )
        if payload.mode is not None:
            mode_result = await self.set_mode(agent_id, payload.mode)
            if mode_result.status != "succeeded":
                return CommandExecutionResult(
                    status=mode_result.status,
                    error=mode_result.error,
                    result=ids,
                    affectedSession=agent_id,
                    affected_session_set=True,
                )
        # The id the command named never exists at the agent, so the worker's
        # "session active" refresh (of that id) would fail: only the
        # cancellation hook is passed; the terminal refresh reads the agent's id.
        turn = await self._run_prompt(
            agent_id,
            payload.text,
            OperationOptions(
                force=options.force, on_cancellation_ready=options.on_cancellation_ready
            ),
        )
        return CommandExecutionResult(
            status=turn.status,
            providerOperationId=turn.providerOperationId,
            error=turn.error,
            result={**(turn.result or {}), **ids, "cwd": cwd, "surface": "headless"},
            affectedSession=agent_id,
            affected_session_set=True,
        )

    async def cancel(self, native_session_id: str) -> CommandExecutionResult:
        """``session/cancel`` for this driver's running prompt, else a ``failed`` result.

        ``native_session_id`` may be a running start's requested id.
        """
        entry = self._starts.get(native_session_id)
        if entry is not None:
            if entry.agent_id is None:
                entry.cancelled = True
                return CommandExecutionResult(status="succeeded", result={"cancelled": True})
            native_session_id = entry.agent_id
        connection = self.process.connection
        if not connection.prompting(native_session_id):
            return execution_error(
                "failed", "not-active", f"no prompt of this host runs in {native_session_id}"
            )
        try:
            await self.process.send(connection.cancel(native_session_id))
        except AcpDriverError as exc:
            return _driver_failure(exc)
        return CommandExecutionResult(status="succeeded")

    async def rename_session(self, native_session_id: str, title: str) -> CommandExecutionResult:
        """ACP has no rename: always ``unsupported``."""
        return unsupported("rename", self.source.id)

    async def set_mode(self, native_session_id: str, mode: str) -> CommandExecutionResult:
        """``session/set_mode`` after checking the mode against the advertised ones."""
        await self._require_up()
        await self._open_session(native_session_id)
        controls = self.process.connection.sessions.get(native_session_id)
        refused = check_mode(controls, mode)
        if refused is not None:
            return refused
        assert controls is not None  # check_mode refuses a session without controls
        await self.process.request(
            self.process.connection.set_mode(native_session_id, mode), "session/set_mode"
        )
        controls.current_mode = mode
        return CommandExecutionResult(status="succeeded", result={"mode": mode})

    async def set_config_option(
        self, native_session_id: str, key: str, value: Any
    ) -> CommandExecutionResult:
        """``session/set_config_option`` once key and value match the advertised option."""
        await self._require_up()
        await self._open_session(native_session_id)
        refused = check_config_option(
            self.process.connection.sessions.get(native_session_id), key, value
        )
        if refused is not None:
            return refused
        await self.process.request(
            self.process.connection.set_config_option(native_session_id, key, value),
            "session/set_config_option",
        )
        return CommandExecutionResult(status="succeeded", result={"key": key})
