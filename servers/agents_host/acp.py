"""The ACP driver: spawns the configured command and speaks ACP over its stdio.

:class:`AcpProcess` is the I/O shell around :class:`~shedproto.agentshost.AcpConnection`:
it owns the child process, one reader task (stdout -> events, answers queued
by the core written back at once) and one stderr task (the last 64 KiB kept
for error messages). :class:`AcpDriver` maps the connector driver interface
onto it (spec section 7.4):

* start: spawn, ``initialize`` (within ``handshake_timeout``; the only
  deadline: a silent agent must not hang the host's startup forever);
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
* cancel: ``session/cancel``, only for a prompt this driver runs;
* rename: ``unsupported``; set-mode / set-config-option: validated against
  the modes and options the agent advertised for the session.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc

from shedproto.agentshost import (
    AcpConnection,
    AcpEvent,
    AcpProtocolError,
    AgentFeatures,
    CommandExecutionResult,
    ConnectionClosed,
    PermissionPolicy,
    RequestFailed,
    RequestSucceeded,
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

from .driver import OperationOptions

__all__ = ["AcpDriver", "AcpDriverError", "AcpProcess", "AcpRequestError"]

STDERR_TAIL = 64 * 1024
RECEIVE_CHUNK = 65536
STOP_GRACE = 5.0
"""Seconds the agent gets to exit after its stdin closes, before it is killed."""


class AcpDriverError(Exception):
    """The agent process failed: it exited, broke the protocol, or never answered."""


class AcpRequestError(AcpDriverError):
    """The agent answered a request with a JSON-RPC error (``code``, ``data`` kept)."""

    def __init__(self, method: str, code: int, message: str, data: Any) -> None:
        super().__init__(f"{method} failed ({code}): {message}")
        self.method = method
        self.code = code
        self.rpc_message = message
        self.data = data


@dataclass
class _Waiter:
    event: anyio.Event
    outcome: RequestSucceeded | RequestFailed | None = None


class AcpProcess:
    """One spawned agent and its :class:`AcpConnection`; start with ``task_group.start(run)``."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        permission_policy: PermissionPolicy = PermissionPolicy.CANCELLED,
        handshake_timeout: float = 60.0,
    ) -> None:
        self.command = list(command)
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

    async def run(self, *, task_status: anyio.abc.TaskStatus[AgentFeatures]) -> None:
        """Spawn, handshake, report the agent's features, and run until :meth:`stop`.

        Raises:
            AcpDriverError: the command could not be executed, or the
                handshake failed (readiness is never signalled; the process
                is killed).

        """
        env = {**os.environ, **self.env} if self.env is not None else None
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
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self._read_stdout)
                tasks.start_soon(self._read_stderr)
                try:
                    features = await self._handshake()
                except AcpDriverError as exc:
                    failure = exc
                    tasks.cancel_scope.cancel()
                else:
                    task_status.started(features)
                    await self._wait_stop_or_exit()
                    await self._shutdown(process)
                    tasks.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await self._reap(process)
        if failure is not None:
            raise failure

    async def _handshake(self) -> AgentFeatures:
        try:
            with anyio.fail_after(self.handshake_timeout):
                await self.request(self.connection.initialize(), "initialize")
        except TimeoutError:
            raise AcpDriverError(
                f"the agent did not answer initialize within {self.handshake_timeout}s"
            ) from None
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

    async def _shutdown(self, process: anyio.abc.Process) -> None:
        if process.stdin is not None:
            with anyio.CancelScope(shield=True):
                with contextlib.suppress(
                    anyio.BrokenResourceError, anyio.ClosedResourceError, OSError
                ):
                    await process.stdin.aclose()
        with anyio.move_on_after(STOP_GRACE, shield=True):
            await process.wait()

    async def _reap(self, process: anyio.abc.Process) -> None:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        with anyio.move_on_after(STOP_GRACE):
            await process.wait()
        await process.aclose()
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
        outcome = waiter.outcome
        if isinstance(outcome, RequestSucceeded):
            return outcome.result
        if outcome is None:
            raise AcpDriverError(self.failure or "the agent process ended")
        raise AcpRequestError(method, outcome.code, outcome.message, outcome.data)

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
            try:
                events = self.connection.receive_data(data)
            except AcpProtocolError as exc:
                self._dispatch(exc.events)
                self.failure = f"the agent broke the ACP protocol: {exc.message}"
                self._fail_all(self.failure)
                if process.returncode is None:
                    process.kill()
                return
            reply = self.connection.data_to_send()
            if reply:
                with contextlib.suppress(AcpDriverError):
                    await self.send(reply)
            self._dispatch(events)
            if not data:
                self._fail_all(self.failure or self._exit_message())
                return

    def _exit_message(self) -> str:
        tail = bytes(self.stderr_tail).decode("utf-8", "replace").strip().splitlines()
        detail = f": {tail[-1]}" if tail else ""
        return f"the agent process closed its output{detail}"

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
            elif isinstance(event, ConnectionClosed):
                self._closed.set()

    def _fail_all(self, message: str) -> None:
        if self.failure is None:
            self.failure = message
        self._closed.set()
        for waiter in self._waiters.values():
            waiter.event.set()


def _controls_capabilities(process: AcpProcess) -> tuple[tuple[str, ...], dict[str, Any]]:
    modes: list[str] = []
    options: dict[str, Any] = {}
    for controls in process.connection.sessions.values():
        for mode in controls.modes:
            if mode not in modes:
                modes.append(mode)
        for key, option in controls.config_options.items():
            options.setdefault(key, {"type": option.get("type", "select")})
    return tuple(modes), options


class AcpDriver:
    """The connector's ``acp`` driver over :class:`AcpProcess`; see the module docstring."""

    def __init__(
        self,
        source: AgentSourceConfig,
        *,
        permission_policy: PermissionPolicy = PermissionPolicy.CANCELLED,
        handshake_timeout: float = 60.0,
        default_cwd: str | None = None,
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
        self.process = AcpProcess(
            source.command,
            cwd=source.cwd,
            env=source.env,
            permission_policy=permission_policy,
            handshake_timeout=handshake_timeout,
        )
        self._default_cwd = default_cwd or source.cwd or os.getcwd()
        self._replayed: set[str] = set()
        self._open: set[str] = set()
        self._listed: dict[str, SessionSummary] = {}
        self._created: dict[str, SessionSummary] = {}
        self._load_lock = anyio.Lock()
        self._operations = 0

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Spawn the agent and learn its capabilities.

        Raises:
            AcpDriverError: the handshake failed. OSError: the command cannot run.

        """
        features: AgentFeatures = await task_group.start(self.process.run)
        self.version = features.agent_version
        self._refresh_capabilities()

    def _refresh_capabilities(self) -> None:
        features = self.process.features
        if features is None:
            return
        modes, options = _controls_capabilities(self.process)
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
        """Close the agent's stdin, wait for it to exit (killed after a grace period)."""
        self.process.stop()
        await self.process.wait_exited()

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
        """One ``session/list`` page, or this process's own sessions when not advertised.

        Raises:
            AcpRequestError / AcpDriverError: the agent failed the listing.

        """
        features = self.process.features
        if features is None or not features.list_sessions:
            return SessionPage(sessions=tuple(self._summary(k) for k in self._created))
        result = await self.process.request(
            self.process.connection.list_sessions(cursor), "session/list"
        )
        rows = result.get("sessions") if isinstance(result, dict) else None
        if not isinstance(rows, list):
            raise AcpDriverError("session/list answered without a sessions array")
        sessions = []
        for row in rows:
            if not isinstance(row, dict) or not isinstance(row.get("sessionId"), str):
                raise AcpDriverError("session/list answered a session without a sessionId")
            summary = SessionSummary(
                nativeSessionId=row["sessionId"],
                title=row.get("title") if isinstance(row.get("title"), str) else None,
                cwd=row.get("cwd") if isinstance(row.get("cwd"), str) else None,
                updatedAt=row.get("updatedAt") if isinstance(row.get("updatedAt"), str) else None,
                raw=row,
            )
            self._listed[summary.nativeSessionId] = summary
            sessions.append(self._summary(summary.nativeSessionId))
        next_cursor = result.get("nextCursor")
        return SessionPage(
            sessions=tuple(sessions),
            nextCursor=next_cursor if isinstance(next_cursor, str) else None,
        )

    async def read_session(self, native_session_id: str) -> SessionSnapshot:
        """Read a session: its transcript here, else ``session/load`` (loads serialised).

        Raises:
            AcpRequestError / AcpDriverError: the agent failed the load;
            AcpDriverError: the agent does not support ``session/load``.

        """
        connection = self.process.connection
        if native_session_id not in self._replayed:
            features = self.process.features
            if features is None or not features.load_session:
                raise AcpDriverError("the agent does not support session/load")
            async with self._load_lock:
                cwd = self._summary(native_session_id).cwd or self._default_cwd
                await self.process.request(
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
        if session_id in self._open:
            return
        features = self.process.features
        connection = self.process.connection
        cwd = self._summary(session_id).cwd or self._default_cwd
        if features is not None and features.resume_session:
            await self.process.request(connection.resume_session(session_id, cwd), "session/resume")
        else:
            async with self._load_lock:
                await self.process.request(connection.load_session(session_id, cwd), "session/load")
            self._replayed.add(session_id)
        self._open.add(session_id)
        self._refresh_capabilities()

    async def _run_prompt(
        self, session_id: str, text: str, options: OperationOptions
    ) -> CommandExecutionResult:
        sent = self.process.connection.prompt(session_id, text)
        operation = f"{session_id}:{sent[0]}"

        async def started() -> None:
            if options.on_cancellation_ready is not None:
                options.on_cancellation_ready()
            if options.on_session_active is not None:
                await options.on_session_active()

        try:
            answer = await self.process.request(sent, "session/prompt", on_sent=started)
        except AcpRequestError as exc:
            return CommandExecutionResult(
                status="failed",
                providerOperationId=operation,
                error=ReceiptErrorInfo(
                    code="acp-prompt-failed",
                    message=f"session/prompt failed ({exc.code}): {exc.rpc_message}",
                    retryable=False,
                ),
            )
        result = answer if isinstance(answer, dict) else {}
        stop_reason = result.get("stopReason")
        if stop_reason == "cancelled":
            return CommandExecutionResult(
                status="failed",
                providerOperationId=operation,
                result={"stopReason": stop_reason},
                error=ReceiptErrorInfo(
                    code="cancelled", message="the prompt was cancelled", retryable=False
                ),
            )
        return CommandExecutionResult(
            status="succeeded",
            providerOperationId=operation,
            result={"stopReason": stop_reason} if isinstance(stop_reason, str) else None,
        )

    async def prompt(
        self, native_session_id: str, payload: PromptPayload, options: OperationOptions
    ) -> CommandExecutionResult:
        """Run one prompt turn; see the module docstring."""
        if self.process.connection.prompting(native_session_id):
            return execution_error(
                "needs-confirmation",
                "already-active",
                f"a prompt is already running in session {native_session_id}",
                retryable=True,
            )
        await self._open_session(native_session_id)
        return await self._run_prompt(native_session_id, payload.text, options)

    async def start_session(
        self, native_session_id: str, payload: StartPayload, options: OperationOptions
    ) -> CommandExecutionResult:
        """``session/new`` plus the first prompt; see the module docstring."""
        if payload.surface != "headless":
            return execution_error(
                "unsupported", "unsupported", f"surface {payload.surface} is not supported"
            )
        cwd = payload.cwd or self._default_cwd
        connection = self.process.connection
        result = await self.process.request(connection.new_session(cwd), "session/new")
        agent_id = result.get("sessionId") if isinstance(result, dict) else None
        if not isinstance(agent_id, str):
            raise AcpDriverError("session/new answered without a sessionId")
        self._created[agent_id] = SessionSummary(
            nativeSessionId=agent_id, title=payload.title, cwd=cwd, raw={"sessionId": agent_id}
        )
        self._replayed.add(agent_id)
        self._open.add(agent_id)
        self._refresh_capabilities()
        if payload.mode is not None:
            mode_result = await self.set_mode(agent_id, payload.mode)
            if mode_result.status != "succeeded":
                return CommandExecutionResult(
                    status=mode_result.status,
                    error=mode_result.error,
                    result={"nativeSessionId": agent_id, "requestedSessionId": native_session_id},
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
            result={
                **(turn.result or {}),
                "nativeSessionId": agent_id,
                "requestedSessionId": native_session_id,
                "cwd": cwd,
                "surface": "headless",
            },
            affectedSession=agent_id,
            affected_session_set=True,
        )

    async def cancel(self, native_session_id: str) -> CommandExecutionResult:
        """``session/cancel`` for this driver's running prompt, else a ``failed`` result."""
        connection = self.process.connection
        if not connection.prompting(native_session_id):
            return execution_error(
                "failed", "not-active", f"no prompt of this host runs in {native_session_id}"
            )
        await self.process.send(connection.cancel(native_session_id))
        return CommandExecutionResult(status="succeeded")

    async def rename_session(self, native_session_id: str, title: str) -> CommandExecutionResult:
        """ACP has no rename: always ``unsupported``."""
        return unsupported("rename", self.source.id)

    async def set_mode(self, native_session_id: str, mode: str) -> CommandExecutionResult:
        """``session/set_mode`` after checking the mode against the advertised ones."""
        await self._open_session(native_session_id)
        controls = self.process.connection.sessions.get(native_session_id)
        if controls is None or mode not in controls.modes:
            return execution_error(
                "failed", "acp-mode-unsupported", f"mode is not offered by the agent: {mode}"
            )
        await self.process.request(
            self.process.connection.set_mode(native_session_id, mode), "session/set_mode"
        )
        controls.current_mode = mode
        return CommandExecutionResult(status="succeeded", result={"mode": mode})

    async def set_config_option(
        self, native_session_id: str, key: str, value: Any
    ) -> CommandExecutionResult:
        """``session/set_config_option`` once key and value match the advertised option."""
        await self._open_session(native_session_id)
        controls = self.process.connection.sessions.get(native_session_id)
        option = None if controls is None else controls.config_options.get(key)
        if option is None:
            return execution_error(
                "failed", "acp-config-option-unsupported", f"config option is not offered: {key}"
            )
        if option.get("type") == "boolean":
            valid = isinstance(value, bool)
        else:
            choices = option.get("options")
            values = (
                [c.get("value") for c in choices if isinstance(c, dict)]
                if isinstance(choices, list)
                else []
            )
            valid = isinstance(value, str) and value in values
        if not valid:
            return execution_error(
                "failed", "acp-config-value-invalid", f"value is not valid for config option {key}"
            )
        await self.process.request(
            self.process.connection.set_config_option(native_session_id, key, value),
            "session/set_config_option",
        )
        return CommandExecutionResult(status="succeeded", result={"key": key})
