"""The command worker (connector ``CommandWorker``, spec section 3.5).

:meth:`CommandWorker.handle` takes one snapshot of a command queue (the
whole array, re-delivered) and, for each element in order:

1. decodes and validates it (invalid: reported to ``on_invalid``, skipped,
   no receipt);
2. checks the owner; skips identities already in the ledger or scheduled;
3. reads the shared claim (the deterministic receipt on the target): a
   receipt for another session is a task failure, another host's
   ``in-flight`` claim becomes ``unknown`` / ``orphaned-shared-claim``, any
   existing receipt is stored and republished and the provider is not called;
4. schedules it on its session's queue. Non-cancel commands run strictly in
   admission order per session; ``prompt`` and headless ``start`` register an
   admission whose ``ready`` is set by the driver's ``on_cancellation_ready``
   (or when the command finishes). A ``cancel`` does not join the queue: it
   waits only for the first pending admission's ``ready``, then runs.

Execution: wait while the target is known unreachable (at most the
availability's ``wait``), durable claim (``ledger.put`` of the ``in-flight``
receipt), publish it, retried within the same bound (failure: ``failed`` /
``claim-publish-failed``, provider never called), driver call (no driver:
``unsupported`` / ``source-unavailable``; raised: ``failed`` /
``provider-call-failed``), terminal receipt (ledger,
publish, mark published), refresh of the affected session (also when the
terminal publication failed), then a task failure if that publication failed
for any reason but an unreachable target (the ledger keeps the receipt
pending; with an unreachable target ``on_unpublished`` hands it to the
host's publication loop).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc

from shedproto.agents_host import CommandExecutionResult
from shedproto.connector import (
    Command,
    InvalidCommand,
    PromptPayload,
    Receipt,
    SetConfigOptionPayload,
    SetModePayload,
    StartPayload,
    check_command_owner,
    claim_publish_failed,
    command_identity,
    decode_command,
    in_flight_receipt,
    orphaned_shared_claim,
    parse_command_payload,
    provider_call_failed,
    session_key,
    source_unavailable,
    terminal_receipt,
)
from shedproto.servers.connector import CommandLedger

from .availability import TargetAvailability
from .batching import GroupCommit
from .driver import AgentDriver, OperationOptions
from .target import AgentsHostTarget, TargetUnavailableError

__all__ = ["BATCH_PASSES", "CommandTaskError", "CommandWorker", "CommandWorkerError", "WorkerHooks"]

BATCH_PASSES = 16
"""Event-loop passes a receipt or refresh batch gathers for (see :mod:`.batching`)."""


class CommandTaskError(Exception):
    """One command's task failed (``identity`` names it); recorded, never fatal to the host."""

    def __init__(self, identity: str, command_id: str, producer: str | None, message: str) -> None:
        super().__init__(message)
        self.identity = identity
        self.command_id = command_id
        self.producer = producer


class CommandWorkerError(Exception):
    """``drain`` or recovery found failures: ``command worker operations failed`` et al."""

    def __init__(self, message: str, errors: list[BaseException]) -> None:
        super().__init__(message)
        self.errors = errors


@dataclass
class WorkerHooks:
    """Callbacks from the worker to its host; every one is optional.

    ``refresh(source_id, native_session_id)`` refreshes one session on the
    target and raises on failure; the rest are synchronous observers.
    ``on_unpublished`` is called when a receipt stays pending because the
    target is unreachable (the host's publication loop takes it over).
    """

    on_receipt: Callable[[Receipt], None] | None = None
    on_invalid: Callable[[InvalidCommand, str | None], None] | None = None
    on_task_failure: Callable[[CommandTaskError], None] | None = None
    on_refresh: Callable[[str, str, BaseException | None], None] | None = None
    refresh: Callable[[str, str], Awaitable[None]] | None = None
    on_unpublished: Callable[[], None] | None = None


@dataclass
class _Admission:
    ready: anyio.Event = field(default_factory=anyio.Event)
    finished: bool = False


@dataclass
class _SessionQueue:
    tail: anyio.Event | None = None
    admissions: deque[_Admission] = field(default_factory=deque)
    pending: int = 0


class CommandWorker:
    """See the module docstring. Tasks run in the ``task_group`` given to the constructor."""

    def __init__(
        self,
        *,
        owner_did: str,
        ledger: CommandLedger,
        target: AgentsHostTarget,
        drivers: Mapping[str, AgentDriver],
        clock: Callable[[], str],
        task_group: anyio.abc.TaskGroup,
        hooks: WorkerHooks | None = None,
        availability: TargetAvailability | None = None,
    ) -> None:
        self.owner_did = owner_did
        self.availability = availability or TargetAvailability()
        self.ledger = ledger
        self.target = target
        self.drivers = drivers
        self.clock = clock
        self.hooks = hooks or WorkerHooks()
        self._tasks = task_group
        self._handle_lock = anyio.Lock()
        self._scheduled: set[str] = set()
        self._sessions: dict[str, _SessionQueue] = {}
        self._running = 0
        self._idle = anyio.Event()
        self._idle.set()
        self._failures: list[BaseException] = []
        self._publisher: GroupCommit[Receipt, None] = GroupCommit(
            self._publish_batch, shield=True, passes=BATCH_PASSES
        )
        self.accepting = True

    # -- admission -------------------------------------------------------------------------

    async def handle(self, values: Iterable[Any], producer: str | None = None) -> int:
        """Admit the new commands of one queue snapshot; return how many were scheduled.

        Calls are serialised. Nothing is admitted once :meth:`close` ran.
        """
        scheduled = 0
        async with self._handle_lock:
            for value in values:
                if not self.accepting:
                    break
                if await self._admit(value, producer):
                    scheduled += 1
        return scheduled

    def close(self) -> None:
        """Stop admitting commands (already scheduled ones still run)."""
        self.accepting = False

    def _invalid(self, invalid: InvalidCommand, producer: str | None) -> None:
        if self.hooks.on_invalid is not None:
            self.hooks.on_invalid(invalid, producer)

    def _task_failure(self, error: CommandTaskError) -> None:
        self._failures.append(error)
        if self.hooks.on_task_failure is not None:
            self.hooks.on_task_failure(error)

    async def _admit(self, value: Any, producer: str | None) -> bool:
        command = decode_command(value)
        if isinstance(command, InvalidCommand):
            self._invalid(command, producer)
            return False
        wrong_owner = check_command_owner(command, self.owner_did)
        if wrong_owner is not None:
            self._invalid(wrong_owner, producer)
            return False
        identity = command_identity(command.id, producer)
        if identity in self._scheduled or self.ledger.get(command.id, producer) is not None:
            return False

        async def read_shared() -> Receipt | None:
            return self.target.read_receipt(command.id, producer)

        try:
            shared = await self.availability.retry(read_shared)
        except Exception as exc:
            self._task_failure(
                CommandTaskError(
                    identity, command.id, producer, f"command ownership check failed: {exc}"
                )
            )
            return False
        if shared is not None:
            await self._adopt_shared(command, shared, identity, producer)
            return False
        self._scheduled.add(identity)
        self._schedule(command, producer)
        return True

    async def _adopt_shared(
        self, command: Command, shared: Receipt, identity: str, producer: str | None
    ) -> None:
        if (shared.sourceId, shared.nativeSessionId) != (command.sourceId, command.nativeSessionId):
            self._task_failure(
                CommandTaskError(
                    identity,
                    command.id,
                    producer,
                    f"command ID belongs to another session: {command.id}",
                )
            )
            return
        if shared.status == "in-flight":
            shared = orphaned_shared_claim(shared, completed_at=self.clock())
        await anyio.to_thread.run_sync(self.ledger.put, shared)
        try:
            await self._publish(shared)
        except Exception as exc:
            self._task_failure(
                CommandTaskError(
                    identity, command.id, producer, f"receipt publication failed: {exc}"
                )
            )

    def _schedule(self, command: Command, producer: str | None) -> None:
        key = session_key(command.sourceId, command.nativeSessionId)
        queue = self._sessions.setdefault(key, _SessionQueue())
        self._running += 1
        self._idle = anyio.Event() if self._idle.is_set() else self._idle
        if command.type == "cancel":
            gate = next((a for a in queue.admissions if not a.finished), None)
            self._tasks.start_soon(self._run_cancel, command, producer, gate)
            return
        admission: _Admission | None = None
        if command.type == "prompt" or (
            command.type == "start" and command.payload.get("surface", "headless") != "desktop"
        ):
            admission = _Admission()
            queue.admissions.append(admission)
        previous = queue.tail
        done = anyio.Event()
        queue.tail = done
        queue.pending += 1
        self._tasks.start_soon(self._run_queued, command, producer, key, previous, done, admission)

    async def _run_cancel(
        self, command: Command, producer: str | None, gate: _Admission | None
    ) -> None:
        try:
            if gate is not None:
                await gate.ready.wait()
            await self._execute(command, producer, None)
        finally:
            self._finished()

    async def _run_queued(  # noqa: PLR0917 - start_soon passes positionals
        self,
        command: Command,
        producer: str | None,
        key: str,
        previous: anyio.Event | None,
        done: anyio.Event,
        admission: _Admission | None,
    ) -> None:
        queue = self._sessions[key]
        try:
            if previous is not None:
                await previous.wait()
            await self._execute(command, producer, admission)
        finally:
            if admission is not None:
                admission.finished = True
                admission.ready.set()
                queue.admissions.remove(admission)
            done.set()
            queue.pending -= 1
            if queue.pending == 0 and queue.tail is done:
                del self._sessions[key]
            self._finished()

    def _finished(self) -> None:
        self._running -= 1
        if self._running == 0:
            self._tasks.start_soon(self._flush_when_idle, self._idle)

    async def _flush_when_idle(self, idle: anyio.Event) -> None:
        """Write the deferred published marks once no command runs, then report idle.

        So whenever the worker is idle the ledger file says what was
        published; under load the marks ride on the claims' writes instead.
        """
        await self._flush_ledger(self._failures)
        if self._running == 0:
            idle.set()

    # -- execution -------------------------------------------------------------------------

    async def _publish(self, receipt: Receipt) -> None:
        """Publish ``receipt`` (batched with concurrent ones), mark it published, tell the host.

        The published mark is deferred (:meth:`CommandLedger.mark_published_later`):
        it rides on the ledger's next durable write, and :meth:`recover_unpublished_receipts`
        and :meth:`republish_pending` flush it.

        Raises:
            Exception: what the target raised for this receipt (it stays pending).

        """
        await self._publisher.submit(receipt)
        self.ledger.mark_published_later(receipt.commandId, receipt.producer)
        if self.hooks.on_receipt is not None:
            self.hooks.on_receipt(receipt)

    async def _publish_batch(self, receipts: list[Receipt]) -> list[Exception | None]:
        """Publish the receipts concurrent sessions produced together, in one target write.

        When the batch fails, each receipt is published again on its own, so
        every caller gets exactly its own outcome (one bad receipt never
        fails the others).
        """
        now = self.clock()
        try:
            self.target.publish_receipts(receipts, now=now)
        except Exception as exc:
            if len(receipts) == 1:
                return [exc]
        else:
            return [None] * len(receipts)
        outcomes: list[Exception | None] = []
        for receipt in receipts:
            try:
                self.target.publish_receipt(receipt, now=now)
            except Exception as exc:
                outcomes.append(exc)
            else:
                outcomes.append(None)
        return outcomes

    async def _execute(
        self, command: Command, producer: str | None, admission: _Admission | None
    ) -> None:
        identity = command_identity(command.id, producer)
        try:
            await self._execute_steps(command, producer, admission)
        except CommandTaskError as exc:
            self._task_failure(exc)
        except Exception as exc:
            self._task_failure(CommandTaskError(identity, command.id, producer, str(exc)))
        finally:
            self._scheduled.discard(identity)

    async def _execute_steps(
        self, command: Command, producer: str | None, admission: _Admission | None
    ) -> None:
        identity = command_identity(command.id, producer)
        claim = in_flight_receipt(
            owner_did=self.owner_did,
            command_id=command.id,
            source_id=command.sourceId,
            native_session_id=command.nativeSessionId,
            claimed_at=self.clock(),
            producer=producer,
        )
        claim_error = await self._claim(claim)
        if claim_error is not None:
            failed = claim_publish_failed(claim, message=claim_error, completed_at=self.clock())
            await anyio.to_thread.run_sync(self.ledger.put, failed)
            try:
                await self._publish(failed)
            except TargetUnavailableError:
                self._left_pending()
            except Exception as again:
                raise CommandTaskError(
                    identity,
                    command.id,
                    producer,
                    f"claim publication failed: {claim_error};"
                    f" failure receipt publication failed: {again}",
                ) from again
            return
        driver = self.drivers.get(command.sourceId)
        outcome: CommandExecutionResult | None = None
        if driver is None:
            terminal = source_unavailable(claim, completed_at=self.clock())
        else:
            try:
                outcome = await self._call_driver(driver, command, admission)
            except Exception as exc:
                terminal = provider_call_failed(claim, error=exc, completed_at=self.clock())
            else:
                terminal = terminal_receipt(
                    claim,
                    status=outcome.status,
                    completed_at=self.clock(),
                    provider_operation_id=outcome.providerOperationId,
                    error=outcome.error,
                    result=outcome.result,
                )
        await anyio.to_thread.run_sync(self.ledger.put, terminal)
        publish_error: BaseException | None = None
        try:
            await self._publish(terminal)
        except TargetUnavailableError:
            self._left_pending()  # published by the host's loop once the target is back
        except Exception as exc:
            publish_error = exc
        if driver is not None and (
            terminal.status == "succeeded" or command.type in ("prompt", "start")
        ):
            session: str | None = command.nativeSessionId
            if outcome is not None and outcome.affected_session_set:
                session = outcome.affectedSession
            if session is not None:
                await self._refresh(command.sourceId, session)
        if publish_error is not None:
            raise CommandTaskError(
                identity,
                command.id,
                producer,
                f"terminal receipt publication failed: {publish_error}",
            )

    async def _claim(self, claim: Receipt) -> str | None:
        """Store and publish the ``in-flight`` claim; return why it failed, or ``None``.

        While the target is known unreachable nothing is claimed: the command
        waits (its session's later commands behind it) up to the target wait,
        and a claim whose publication meets a blip is retried within that
        bound; only then does the command fail (``claim-publish-failed``).
        """
        availability = self.availability
        deadline = availability.deadline()
        if not await availability.until_up(deadline):
            return f"target database unreachable for {availability.wait:g}s"
        await anyio.to_thread.run_sync(self.ledger.put, claim)
        try:
            await availability.retry(lambda: self._publish(claim), deadline=deadline)
        except Exception as exc:
            return str(exc)
        return None

    def _left_pending(self) -> None:
        if self.hooks.on_unpublished is not None:
            self.hooks.on_unpublished()

    async def _refresh(self, source_id: str, session_id: str) -> None:
        if self.hooks.refresh is None:
            return
        error: BaseException | None = None
        try:
            await self.hooks.refresh(source_id, session_id)
        except Exception as exc:
            error = exc
        if self.hooks.on_refresh is not None:
            self.hooks.on_refresh(source_id, session_id, error)

    async def _call_driver(
        self, driver: AgentDriver, command: Command, admission: _Admission | None
    ) -> CommandExecutionResult:
        payload = parse_command_payload(command)
        session = command.nativeSessionId

        def cancellation_ready() -> None:
            if admission is not None:
                admission.ready.set()

        async def session_active() -> None:
            cancellation_ready()
            await self._refresh(command.sourceId, session)

        options = OperationOptions(
            force=command.force,
            on_cancellation_ready=cancellation_ready,
            on_session_active=session_active,
        )
        if isinstance(payload, PromptPayload):
            return await driver.prompt(session, payload, options)
        if isinstance(payload, StartPayload):
            return await driver.start_session(session, payload, options)
        if command.type == "cancel":
            return await driver.cancel(session)
        if command.type == "rename":
            return await driver.rename_session(session, str(getattr(payload, "title", "")))
        if isinstance(payload, SetModePayload):
            return await driver.set_mode(session, payload.mode)
        if isinstance(payload, SetConfigOptionPayload):
            return await driver.set_config_option(session, payload.key, payload.value)
        raise ValueError(f"unsupported command type: {command.type}")

    # -- drain and recovery ----------------------------------------------------------------

    @property
    def running(self) -> int:
        """Commands admitted and not yet finished."""
        return self._running

    async def drain(self) -> None:
        """Wait for every admitted command; raise if any task failed since the last drain.

        Raises:
            CommandWorkerError: ``command worker operations failed`` with the
                failures in ``errors`` (they are cleared).

        """
        await self._idle.wait()
        if self._failures:
            errors, self._failures = self._failures, []
            raise CommandWorkerError("command worker operations failed", errors)

    async def republish_pending(self) -> list[Receipt]:
        """Publish the ledger's pending receipts of commands not running now (after reconnect).

        A running command publishes its own receipts, so it is left alone.
        A task failure of a command whose receipt is now published is
        resolved: :meth:`drain` no longer reports it. Returns the receipts
        published.

        Raises:
            CommandWorkerError: ``could not publish recovered command receipts``
                (the failed ones stay pending).

        """
        errors: list[BaseException] = []
        published: list[Receipt] = []
        for receipt in self.ledger.pending():
            identity = command_identity(receipt.commandId, receipt.producer)
            current = self.ledger.get(receipt.commandId, receipt.producer)
            if identity in self._scheduled or current is None:
                continue
            try:
                await self._publish(current)
            except Exception as exc:
                errors.append(exc)
            else:
                published.append(current)
                self._failures = [
                    f
                    for f in self._failures
                    if not (isinstance(f, CommandTaskError) and f.identity == identity)
                ]
        await self._flush_ledger(errors)
        if errors:
            raise CommandWorkerError("could not publish recovered command receipts", errors)
        return published

    async def recover_unpublished_receipts(self) -> list[Receipt]:
        """Make ledger ``in-flight`` claims ``orphaned-in-flight``; publish every pending receipt.

        Returns the receipts published.

        Raises:
            CommandWorkerError: ``could not publish recovered command receipts``
                (the failed ones stay pending).

        """
        pending = await anyio.to_thread.run_sync(lambda: self.ledger.recover(now=self.clock()))
        errors: list[BaseException] = []
        published: list[Receipt] = []
        for receipt in pending:
            try:
                await self._publish(receipt)
            except Exception as exc:
                errors.append(exc)
            else:
                published.append(receipt)
        await self._flush_ledger(errors)
        if errors:
            raise CommandWorkerError("could not publish recovered command receipts", errors)
        return published

    async def _flush_ledger(self, errors: list[BaseException]) -> None:
        """Write the deferred published marks now; a failure joins ``errors``."""
        try:
            await anyio.to_thread.run_sync(self.ledger.flush)
        except Exception as exc:
            errors.append(exc)
