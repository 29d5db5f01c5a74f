"""The ``AgentsHost`` lifecycle (spec sections 2, 5 and 6; host ``README``).

Startup (:meth:`AgentsHost.start`): drivers (a failed source stays visible
in health, the others continue; a source whose failed start cannot be
cleaned up fails startup; no started source fails startup with ``no
configured agent source started successfully``), receipt recovery, the
first complete collection, then command admission (one pump per bound
queue: the owner's and each configured producer's). With
``defer_health_until_ready`` nothing is published until startup owns a
``ready`` or ``degraded`` host; the first write carries the whole startup
activity. The locks, target and ledger are opened by the caller
(:func:`shedproto.servers.agents_host.run_host` does it in the real order).

Collections are serialised; :meth:`AgentsHost.request_collection` keeps at
most one pending request (SIGHUP, the socket's ``collect``, the periodic
timer). Shutdown (:meth:`AgentsHost.stop`, idempotent): stop admission,
publish ``stopping``, wait for an active collection, drain admitted
commands, flush pending receipts, stop drivers, publish ``stopped``.
It returns the failures it met (the CLI exits 1 when there are any).

A remote target (PostgreSQL) reports its connection as ``("target", state)``
changes, kept in :attr:`AgentsHost.availability`: ``disconnected`` makes the
host ``degraded`` and is recorded in activity (``target-disconnected``);
``reconnected`` records ``target-reconnected`` and re-reads every command
queue from the start (the ledger drops what it already holds, so a command
whose admission failed during the outage is admitted now); ``lock-lost``
(another host took the key) makes the host ``failed``. A queue read that
fails waits for the next change instead of ending the host. While the
target is down commands wait to be claimed (the worker, bounded by
``target_wait``), and everything left unpublished (receipts, refreshed
rows, a collection, health) belongs to the one publication loop
(:meth:`AgentsHost._publication_loop`), which retries it until it is
published or the host stops.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import anyio.abc
import anyio.lowlevel
import msgspec

from shedproto.agents_host import (
    MAX_LISTED_SESSIONS,
    InventoryWalk,
    SessionSummary,
    SourceCollection,
    build_indexes,
    merge_full_collection,
    merge_refresh,
    row_for,
    session_manifest,
    should_retain,
    updated_ms,
    with_checkout,
)
from shedproto.connector import (
    HEALTH_SCHEMA,
    ActivityLog,
    AgentsHostConfig,
    AgentSourceConfig,
    Checkout,
    CommandProcessingHealth,
    Health,
    HealthTarget,
    HostStatus,
    IndexEntry,
    IndexSource,
    InvalidCommand,
    ProducerTarget,
    Receipt,
    SourceError,
    SourceHealth,
    SourceStatus,
    SyncHealth,
    TargetCells,
    command_identity,
    host_status_after_collection,
    iso_from_epoch_ms,
    receipt_activity_details,
    session_key,
    source_health,
)
from shedproto.servers.connector import CommandLedger

from .availability import DEFAULT_TARGET_WAIT, RETRY_BACKOFF, TargetAvailability
from .batching import GroupCommit
from .driver import AgentDriver, DriverFactory, SupervisedDriver
from .target import AgentsHostTarget, TargetUnavailableError
from .worker import (
    BATCH_PASSES,
    CommandTaskError,
    CommandWorker,
    CommandWorkerError,
    WorkerHooks,
)

__all__ = ["AgentsHost", "CollectOutcome", "HostStartError", "MAX_LISTED_SESSIONS"]

CollectOutcome = Literal["started", "pending", "covered"]
"""What a collection request did: ran now, queued the one pending, or was already covered."""

CheckoutFinder = Callable[[tuple[str, ...]], Awaitable[list[Checkout]]]


class HostStartError(Exception):
    """Startup failed; the host is ``failed`` and every started driver was stopped."""


@dataclass
class _Source:
    config: AgentSourceConfig
    status: SourceStatus
    driver: AgentDriver | None = None
    session_count: int | None = None
    complete: bool | None = None
    errors: list[SourceError] = field(default_factory=list)
    last_error: str | None = None
    started_at: str | None = None
    completed_at: str | None = None
    read: set[str] = field(default_factory=set)
    target_degraded: bool = False
    """Degraded only because a refresh could not be published (cleared on reconnect)."""

    def health(self) -> SourceHealth:
        return source_health(
            self.config,
            status=self.status,
            capabilities=self.driver.capabilities if self.driver is not None else None,
            session_count=self.session_count,
            complete=self.complete,
            errors=self.errors,
            last_error=self.last_error,
            last_collection_started_at=self.started_at,
            last_collection_completed_at=self.completed_at,
        )


class AgentsHost:
    """One host lifetime; see the module docstring."""

    def __init__(
        self,
        *,
        config: AgentsHostConfig,
        target: AgentsHostTarget,
        ledger: CommandLedger,
        driver_factory: DriverFactory,
        clock_ms: Callable[[], int],
        cells: TargetCells,
        space_did: str,
        accept_commands: bool = True,
        defer_health_until_ready: bool = False,
        activity_limit: int = 200,
        find_checkouts: CheckoutFinder | None = None,
        health_interval: float = 0.0,
        target_wait: float = DEFAULT_TARGET_WAIT,
    ) -> None:
        self.config = config
        self.target = target
        self.ledger = ledger
        self.driver_factory = driver_factory
        self.clock_ms = clock_ms
        self.cells = cells
        self.space_did = space_did
        self.accept_commands = accept_commands
        self.find_checkouts = find_checkouts
        self.started_at = self.now()
        self.activity = ActivityLog(self.started_at, activity_limit)
        self.status: HostStatus = "created"
        self.sources = {
            source.id: _Source(source, "pending" if source.enabled else "disabled")
            for source in config.sources
        }
        self.sync: SyncHealth | None = None
        self.worker: CommandWorker | None = None
        self.command_failures: dict[str, str] = {}
        self._task_failure_listeners: list[Callable[[CommandTaskError], None]] = []
        self.last_command_error: str | None = None
        self._defer_health = defer_health_until_ready
        self._health_interval = health_interval
        self._health_owned = not defer_health_until_ready
        self._health_dirty = anyio.Event()
        self._health_lock = anyio.Lock()
        self._sync_lock = anyio.Lock()
        self._collecting = False
        self._pending_collection: str | None = None
        self._collections_closed = False
        self._idle_collection = anyio.Event()
        self._idle_collection.set()
        self._pumps: anyio.CancelScope | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._stopped = False
        self._stop_result: list[str] | None = None
        self._stop_done = anyio.Event()
        self._publication_failed = False
        self._checkouts: list[Checkout] = []
        self.on_collection_done: Callable[[], None] | None = None
        self.target_state: str = "connected"
        self.availability = TargetAvailability(target_wait)
        self._health_unpublished = False
        self._unpublished_refreshes: dict[tuple[str, str], None] = {}
        self._collection_unpublished = False
        self._backlog_wake = anyio.Event()
        self._refreshes: GroupCommit[tuple[str, str], None] = GroupCommit(
            self._refresh_batch, passes=BATCH_PASSES
        )

    # -- small helpers ---------------------------------------------------------------------

    def now(self) -> str:
        """Return the current time in ``Date.toISOString()`` form."""
        return iso_from_epoch_ms(self.clock_ms())

    def record(
        self,
        type_: str,
        message: str,
        *,
        source_id: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        """Append an activity entry and schedule a health publication."""
        self.activity.record(type_, message, at=self.now(), source_id=source_id, details=details)
        self._health_dirty.set()

    def health(self) -> Health:
        """Return a detached snapshot of the health value."""
        producers = self.config.commandProducers
        return Health(
            schema=HEALTH_SCHEMA,
            ownerDid=self.config.ownerDid,
            service="agents-host",
            status=self.status,
            startedAt=self.started_at,
            updatedAt=self.now(),
            target=HealthTarget(
                spaceDid=self.space_did,
                ownerDid=self.config.ownerDid,
                commandProducers=None
                if not producers
                else tuple(
                    ProducerTarget(
                        id=producer.id,
                        piece=producer.piece,
                        commandCellId=f"commands/{producer.id}",
                    )
                    for producer in producers
                ),
                cells=self.cells,
            ),
            commandProcessing=CommandProcessingHealth(
                accepting=self.worker is not None and self.worker.accepting and not self._stopped,
                pendingReceiptPublications=self.ledger.pending_publication_count(),
                failedCommands=len(self.command_failures),
                lastError=self.last_command_error,
            ),
            sync=self.sync,
            sources=tuple(source.health() for source in self.sources.values()),
            activity=self.activity.entries,
        )

    def publish_health_now(self) -> None:
        """Publish the health value (when publication is owned); failures are recorded.

        Raises:
            Exception: whatever the target raised (also recorded).

        """
        if not self._health_owned:
            return
        self.target.publish_health(self.health())
        self._health_unpublished = False

    async def _health_publisher(self) -> None:
        """Publish health after changes, coalesced.

        Every change marks health dirty; the publisher writes the whole value
        once for all changes made before it runs (health is a snapshot, so
        intermediate values need not be written; spec section 5 only asks
        that publications stay in order). With ``health_interval`` it then
        rests that many seconds, so a burst of commands (two receipts and a
        refresh each, every one an activity entry) costs one publication per
        interval instead of one per change; the latest state is always
        written at the end of the interval. Shutdown publishes ``stopping``
        and ``stopped`` directly, never delayed.
        """
        while True:
            await self._health_dirty.wait()
            self._health_dirty = anyio.Event()
            await anyio.lowlevel.checkpoint()
            if self._stopped:
                continue
            try:
                self.publish_health_now()
            except Exception as exc:
                if not self._health_unpublished:
                    self.activity.record(
                        "health-publication-failed",
                        f"Health publication failed: {exc}",
                        at=self.now(),
                    )
                self._health_unpublished = True
                self._wake_publication()
            if self._health_interval > 0:
                await anyio.sleep(self._health_interval)

    def _enabled_statuses(self) -> list[SourceStatus]:
        return [s.status for s in self.sources.values() if s.config.enabled]

    def _settle_status(self) -> None:
        if self.status in ("stopping", "stopped", "failed"):
            return
        if self.target_state != "connected":
            self.status = "degraded"
            return
        self.status = host_status_after_collection(
            self._enabled_statuses(),
            pending_receipt_publications=self.ledger.pending_publication_count(),
            outstanding_command_failures=len(self.command_failures),
        )

    # -- startup ---------------------------------------------------------------------------

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Start drivers, recover receipts, collect once, then admit commands.

        Raises:
            HostStartError: no source started, or a failed source could not
                be cleaned up; a failed first publication of the collection.

        """
        self._tg = task_group
        self.status = "starting"
        self.target.subscribe(self._on_target_change)
        self.record("host-starting", "Host startup began")
        task_group.start_soon(self._health_publisher)
        task_group.start_soon(self._publication_loop)
        for source in self.sources.values():
            if source.config.enabled:
                await self._start_source(source, task_group)
        if not any(s.status == "ready" for s in self.sources.values()):
            self.status = "failed"
            self.record("host-failed", "no configured agent source started successfully")
            raise HostStartError("no configured agent source started successfully")
        drivers = {sid: s.driver for sid, s in self.sources.items() if s.driver is not None}
        self.worker = CommandWorker(
            owner_did=self.config.ownerDid,
            ledger=self.ledger,
            target=self.target,
            drivers=drivers,
            clock=self.now,
            task_group=task_group,
            hooks=WorkerHooks(
                on_receipt=self._on_receipt,
                on_invalid=self._on_invalid,
                on_task_failure=self._on_task_failure,
                on_refresh=self._on_refresh,
                refresh=self.refresh_session,
                on_unpublished=self._wake_publication,
            ),
            availability=self.availability,
        )
        try:
            await self.worker.recover_unpublished_receipts()
        except CommandWorkerError as exc:
            self.last_command_error = f"{exc}: {exc.errors[0]}"
            self.record("receipt-publication-failed", self.last_command_error)
        try:
            await self.synchronize("startup")
        except Exception as exc:
            raise HostStartError(f"startup collection failed: {exc}") from exc
        if self.accept_commands:
            self._start_pumps(task_group)
        self._settle_status()
        self.record("host-started", "Host startup completed", details={"status": self.status})
        self._health_owned = True
        self.publish_health_now()
        self._wake_publication()  # receipts recovery could not publish, if any

    async def _start_source(self, source: _Source, task_group: anyio.abc.TaskGroup) -> None:
        source.status = "starting"
        self.record("source-starting", "Source startup began", source_id=source.config.id)
        driver = self.driver_factory(source.config)
        try:
            await driver.start(task_group)
        except Exception as exc:
            source.status = "failed"
            source.last_error = str(exc) or type(exc).__name__
            self.record("source-start-failed", source.last_error, source_id=source.config.id)
            try:
                await driver.stop()
            except Exception as cleanup:
                self.record("source-start-cleanup-failed", str(cleanup), source_id=source.config.id)
                self.status = "failed"
                raise HostStartError(
                    f"source {source.config.id} failed to start and could not be stopped: {cleanup}"
                ) from cleanup
            return
        source.driver = driver
        source.status = "ready"
        self.record("source-started", "Source started", source_id=source.config.id)
        if isinstance(driver, SupervisedDriver):
            driver.set_lifecycle_listener(
                lambda kind, message, healthy: self._on_provider_lifecycle(
                    source, kind, message, healthy
                )
            )

    def _on_provider_lifecycle(self, source: _Source, kind: str, message: str, up: bool) -> None:
        """Record that a supervised provider died (``up`` false) or was restarted."""
        if source.status in ("stopped", "failed") or self._stopped:
            return
        source.status = "ready" if up else "degraded"
        source.target_degraded = False
        if not up:
            source.last_error = message
        self.record(kind, message, source_id=source.config.id)
        self._settle_status()

    # -- command admission -----------------------------------------------------------------

    def _queues(self) -> list[str | None]:
        return [None, *(producer.id for producer in self.config.commandProducers or ())]

    def _start_pumps(self, task_group: anyio.abc.TaskGroup) -> None:
        dirty = {queue: anyio.Event() for queue in self._queues()}

        restart = dict.fromkeys(dirty, False)

        def on_change(kind: str, value: Any) -> None:
            if kind == "command":
                event = dirty.get(value[0])
                if event is not None:
                    event.set()
            elif kind == "target" and value.state == "reconnected":
                for queue, event in dirty.items():
                    restart[queue] = True
                    event.set()

        unsubscribe = self.target.subscribe(on_change)
        scope = anyio.CancelScope()
        self._pumps = scope

        async def pump(queue: str | None) -> None:
            offset = 0
            while True:
                dirty[queue] = anyio.Event()
                if restart[queue]:
                    offset, restart[queue] = 0, False
                try:
                    values = self.target.read_commands(queue, offset)
                except Exception as exc:
                    self.record("command-read-failed", f"Command queue read failed: {exc}")
                    await dirty[queue].wait()
                    continue
                if values:
                    offset = values[-1][0]
                    assert self.worker is not None
                    await self.worker.handle([v for _, v in values], queue)
                await dirty[queue].wait()

        async def pumps() -> None:
            with scope:
                try:
                    async with anyio.create_task_group() as group:
                        for queue in self._queues():
                            group.start_soon(pump, queue)
                finally:
                    unsubscribe()

        task_group.start_soon(pumps)
        self.record(
            "commands-subscribed",
            "Command queues subscribed",
            details={"queues": [q or "owner" for q in self._queues()]},
        )

    def _on_target_change(self, kind: str, value: Any) -> None:
        if kind != "target":
            return
        self.target_state = "connected" if value.state == "reconnected" else value.state
        self.availability.set_state(self.target_state)
        if value.state == "disconnected":
            self.record("target-disconnected", f"Target connection lost: {value.error}")
        elif value.state == "lock-lost":
            if self.status not in ("stopping", "stopped"):
                self.status = "failed"
            self.record(
                "target-lock-lost", f"another agent host holds the process lock: {value.error}"
            )
        elif value.state == "reconnected":
            self.record(
                "target-reconnected",
                "Target connection restored",
                details={"attempts": value.attempts},
            )
            self._health_unpublished = True  # what happened during the outage
            self._wake_publication()
        self._settle_status()

    # -- the publication loop --------------------------------------------------------------

    def _wake_publication(self) -> None:
        self._backlog_wake.set()

    def _has_backlog(self) -> bool:
        return bool(
            self._health_unpublished
            or self._unpublished_refreshes
            or self._collection_unpublished
            or (self.worker is not None and self.ledger.pending_publication_count())
        )

    async def _publication_loop(self) -> None:
        """Publish what is not yet published until it is or the host stops (the one retry loop).

        Woken by every publication left undone (a receipt, a refresh's index
        rows, a collection, health) and by the target's reconnection. While
        the target is known down it waits for it; while it is up but writes
        still fail it retries with :data:`~.availability.RETRY_BACKOFF`.
        Health counts the pending receipts all along (``pendingReceiptPublications``).
        """
        delay = RETRY_BACKOFF[0]
        failing = False
        while True:
            await self._backlog_wake.wait()
            self._backlog_wake = anyio.Event()
            while not self._stopped and self._has_backlog():
                if self.availability.state == "lock-lost":
                    return
                if not self.availability.up:
                    await self.availability.until_up(float("inf"))
                    continue
                error = await self._publish_backlog()
                if error is None:
                    if failing:
                        self.record("publication-caught-up", "Pending publications published")
                    failing, delay = False, RETRY_BACKOFF[0]
                    break
                if not failing:
                    self.last_command_error = error
                    self.record("publication-retrying", f"Publication will be retried: {error}")
                failing = True
                await self.availability.changed(delay)
                delay = min(delay * 2, RETRY_BACKOFF[1])

    async def _publish_backlog(self) -> str | None:
        """Publish every pending item once; return the first failure (``None``: all done)."""
        errors: list[str] = []
        if self.worker is not None and self.ledger.pending_publication_count():
            try:
                await self.worker.republish_pending()
            except CommandWorkerError as exc:
                errors.append(f"{exc}: {exc.errors[0]}")
        for request in list(self._unpublished_refreshes):
            try:
                await self.refresh_session(*request)
            except TargetUnavailableError as exc:
                errors.append(f"session refresh failed: {exc}")
                continue
            except Exception as exc:  # the provider's read, not the target: not ours to retry
                self.record(
                    "session-refresh-failed",
                    str(exc),
                    source_id=request[0],
                    details={"nativeSessionId": request[1]},
                )
            self._unpublished_refreshes.pop(request, None)  # a command may have refreshed it
        self._restore_target_degraded()
        if self._collection_unpublished and not self._collections_closed:
            try:
                await self.synchronize("target-reconnected")
            except Exception as exc:
                errors.append(f"collection failed: {exc}")
        self._settle_status()
        try:
            self.publish_health_now()
        except Exception as exc:
            self._health_unpublished = True
            errors.append(f"health publication failed: {exc}")
        return errors[0] if errors else None

    def _restore_target_degraded(self) -> None:
        """Make sources degraded only by the target's outage ``ready`` again once republished."""
        waiting = {source_id for source_id, _ in self._unpublished_refreshes}
        for source_id, source in self.sources.items():
            if source.target_degraded and source_id not in waiting:
                source.target_degraded = False
                if source.status == "degraded":
                    source.status = "ready"
                    source.last_error = None
                    self.record(
                        "source-recovered",
                        "Source republished after the target came back",
                        source_id=source_id,
                    )

    def _on_receipt(self, receipt: Receipt) -> None:
        identity = command_identity(receipt.commandId, receipt.producer)
        self.command_failures.pop(identity, None)
        self.record(
            "command-receipt",
            f"Command {receipt.commandId} is {receipt.status}",
            source_id=receipt.sourceId,
            details=receipt_activity_details(receipt),
        )
        self._settle_status()

    def _on_invalid(self, invalid: InvalidCommand, producer: str | None) -> None:
        self.record(
            "command-rejected",
            f"invalid command: {invalid.message}",
            details={"producer": producer} if producer else None,
        )

    def on_task_failure(self, listener: Callable[[CommandTaskError], None]) -> Callable[[], None]:
        """Call ``listener`` for every command task failure (no receipt); returns its remover.

        A task failure ends a command without a receipt (e.g. its id already
        belongs to another session), so anything waiting for that receipt
        needs this signal instead. Listeners must not raise.
        """
        self._task_failure_listeners.append(listener)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._task_failure_listeners.remove(listener)

        return remove

    def _on_task_failure(self, error: CommandTaskError) -> None:
        for listener in list(self._task_failure_listeners):
            listener(error)
        self.command_failures[error.identity] = str(error)
        self.last_command_error = str(error)
        details: dict[str, Any] = {"commandId": error.command_id}
        if error.producer is not None:
            details["producer"] = error.producer
        self.record("command-task-failed", str(error), details=details)
        self._settle_status()

    def _on_refresh(self, source_id: str, session: str, error: BaseException | None) -> None:
        source = self.sources.get(source_id)
        if error is None:
            self.record(
                "session-refresh-completed",
                "Session refreshed",
                source_id=source_id,
                details={"nativeSessionId": session},
            )
            if self._unpublished_refreshes.pop((source_id, session), 0) is None:
                self._restore_target_degraded()
                self._settle_status()
            return
        if isinstance(error, TargetUnavailableError):
            self._unpublished_refreshes[(source_id, session)] = None
            self._wake_publication()
            if source is not None and source.status == "ready":
                source.target_degraded = True
        elif source is not None:
            source.target_degraded = False
        if source is not None and source.status == "ready":
            source.status = "degraded"
            source.last_error = str(error)
        self.record(
            "session-refresh-failed",
            str(error),
            source_id=source_id,
            details={"nativeSessionId": session},
        )
        self._settle_status()

    # -- collection ------------------------------------------------------------------------

    def request_collection(self, reason: str) -> CollectOutcome:
        """Request a complete collection; at most one request stays pending.

        Returns ``started`` (ran now), ``pending`` (queued behind the
        running one) or ``covered`` (a pending one already covers it).
        Requests after shutdown began are ``covered`` and dropped.
        """
        if self._collections_closed or self._tg is None:
            return "covered"
        if self._collecting:
            if self._pending_collection is not None:
                return "covered"
            self._pending_collection = reason
            return "pending"
        self._collecting = True
        self._idle_collection = anyio.Event()
        self._tg.start_soon(self._collection_loop, reason)
        return "started"

    async def _collection_loop(self, reason: str) -> None:
        try:
            while True:
                with contextlib.suppress(Exception):  # recorded in health by synchronize
                    await self.synchronize(reason)
                if self._pending_collection is None or self._collections_closed:
                    break
                reason, self._pending_collection = self._pending_collection, None
        finally:
            self._collecting = False
            self._pending_collection = None
            self._idle_collection.set()
            if self.on_collection_done is not None:
                self.on_collection_done()

    async def synchronize(self, reason: str) -> SyncHealth:
        """Run one complete collection and publish it (serialised).

        Raises:
            Exception: the publication failed (the host is ``failed`` until
                a later collection succeeds).

        """
        async with self._sync_lock:
            return await self._synchronize(reason)

    async def _synchronize(self, reason: str) -> SyncHealth:
        started = self.now()
        if self.status not in ("stopping", "stopped", "starting"):
            self.status = "syncing"
        self.sync = SyncHealth(reason=reason, status="running", startedAt=started)
        self.record("sync-started", f"Collection started ({reason})", details={"reason": reason})
        try:
            prior = self.target.published_sessions()
            prior_observations = self.target.read_observations()
        except Exception as exc:
            self.record("published-sessions-unavailable", str(exc))
            prior, prior_observations = {}, {}
        observation = self.target.next_observation()
        checkouts = await self._discover_checkouts()
        results: list[SourceCollection] = []
        manifests: dict[str, bytes] = {}
        for source in self.sources.values():
            if source.driver is None:
                continue
            results.append(await self._collect_source(source, prior, manifests))
        try:
            rows, observations = merge_full_collection(
                prior, prior_observations, results, observation=observation, now=self.now()
            )
            rows = {key: with_checkout(row, checkouts) for key, row in rows.items()}
            self._publish_rows(rows, observations, manifests, checkouts)
        except Exception as exc:
            self.sync = SyncHealth(
                reason=reason,
                status="failed",
                startedAt=started,
                completedAt=self.now(),
                error=str(exc),
            )
            if self.status not in ("stopping", "stopped"):
                self.status = "failed"
            self._publication_failed = True
            self.record("sync-failed", f"Collection failed: {exc}", details={"reason": reason})
            self._collection_unpublished = isinstance(exc, TargetUnavailableError)
            if self._health_owned and self._collection_unpublished:
                self._wake_publication()  # after startup: the publication loop collects again
            raise
        self._publication_failed = False
        self._collection_unpublished = False
        count = sum(1 for row in rows.values() if row.syncStatus != "deleted")
        self.sync = SyncHealth(
            reason=reason,
            status="complete",
            startedAt=started,
            completedAt=self.now(),
            sessionCount=count,
        )
        self._settle_status()
        self.record(
            "sync-completed",
            f"Collection completed with {count} sessions",
            details={"reason": reason, "sessionCount": count},
        )
        return self.sync

    async def _discover_checkouts(self) -> list[Checkout]:
        roots = tuple(self.config.checkoutRoots or ())
        if not roots or self.find_checkouts is None:
            return self._checkouts
        self._checkouts = await self.find_checkouts(roots)
        return self._checkouts

    async def _collect_source(
        self, source: _Source, prior: Mapping[str, IndexEntry], manifests: dict[str, bytes]
    ) -> SourceCollection:
        assert source.driver is not None
        driver = source.driver
        source_id = source.config.id
        previous_status = source.status
        source.status = "collecting"
        source.started_at = self.now()
        self.record("source-collection-started", "Source collection started", source_id=source_id)
        result = SourceCollection(
            source_id=source_id, driver=source.config.driver, capabilities=driver.capabilities
        )
        summaries: list[SessionSummary] = []
        try:
            summaries = await self._inventory(driver)
        except Exception as exc:
            result.complete = False
            result.errors.append(SourceError(message=f"inventory failed: {exc}"))
        retained = 0
        for summary in summaries:
            key = session_key(source_id, summary.nativeSessionId)
            old = prior.get(key)
            if should_retain(
                old,
                summary,
                driver=source.config.driver,
                read_since_start=summary.nativeSessionId in source.read,
            ):
                assert old is not None
                result.rows[key] = msgspec.structs.replace(
                    old, capabilities=driver.capabilities, syncStatus="complete"
                )
                retained += 1
                continue
            row = await self._read_row(source, summary, manifests)
            if isinstance(row, SourceError):
                result.complete = False
                result.errors.append(row)
                if old is not None:
                    result.rows[key] = msgspec.structs.replace(old, syncStatus="partial")
                continue
            result.rows[key] = row
        source.completed_at = self.now()
        source.complete = result.complete
        source.errors = result.errors
        source.session_count = len(result.rows)
        source.status = "ready" if result.complete else "degraded"
        source.target_degraded = False
        if previous_status == "degraded" and result.complete:
            source.last_error = None
        self.record(
            "source-collection-completed",
            "Source collection completed",
            source_id=source_id,
            details={
                "complete": result.complete,
                "errorCount": len(result.errors),
                "sessionCount": len(result.rows),
                "retainedCount": retained,
            },
        )
        return result

    async def _inventory(self, driver: AgentDriver) -> list[SessionSummary]:
        walk = InventoryWalk()
        while walk.add(await driver.list_sessions(walk.cursor)):
            pass
        return walk.sessions

    async def _read_row(
        self, source: _Source, summary: SessionSummary, manifests: dict[str, bytes]
    ) -> IndexEntry | SourceError:
        assert source.driver is not None
        try:
            snapshot = await source.driver.read_session(summary.nativeSessionId)
        except Exception as exc:
            return SourceError(nativeSessionId=summary.nativeSessionId, message=str(exc))
        source.read.add(summary.nativeSessionId)
        body, manifest_hash, content_hash = session_manifest(
            owner_did=self.config.ownerDid,
            source_id=source.config.id,
            driver=source.config.driver,
            snapshot=snapshot,
            observed_at=self.now(),
        )
        key = session_key(source.config.id, summary.nativeSessionId)
        manifests[key] = body
        merged = snapshot.summary
        if merged.updatedAt is None and summary.updatedAt is not None:
            merged = msgspec.structs.replace(merged, updatedAt=summary.updatedAt)
        return row_for(
            owner_did=self.config.ownerDid,
            source_id=source.config.id,
            driver=source.config.driver,
            summary=merged,
            capabilities=source.driver.capabilities,
            messages=snapshot.normalizedMessages,
            manifest_hash=manifest_hash,
            content_hash=content_hash,
            sync_status="complete" if snapshot.complete else "partial",
        )

    def _publish_rows(
        self,
        rows: Mapping[str, IndexEntry],
        observations: dict[str, int],
        manifests: dict[str, bytes],
        checkouts: list[Checkout],
    ) -> None:
        previous = self.target.read_index("all")
        recent_previous = self.target.read_index("recent")
        generation = max(
            previous.generation if previous is not None else 0,
            recent_previous.generation if recent_previous is not None else 0,
        )
        sources = []
        for source in self.sources.values():
            if source.driver is None:
                continue
            sources.append(
                IndexSource(
                    id=source.config.id,
                    driver=source.config.driver,
                    capabilities=source.driver.capabilities,
                    complete=bool(source.complete),
                    sessionCount=sum(
                        1
                        for row in rows.values()
                        if row.sourceId == source.config.id and row.syncStatus != "deleted"
                    ),
                    errors=tuple(source.errors),
                )
            )
        recent, everything = build_indexes(
            rows,
            owner_did=self.config.ownerDid,
            sources=sources,
            checkouts=checkouts,
            generated_at=self.now(),
            now_ms=self.clock_ms(),
            previous_generation=generation,
            updated_ms={key: updated_ms(row.updatedAt) for key, row in rows.items()},
        )
        self.target.publish_sessions(recent, everything, manifests, observations)

    async def refresh_session(self, source_id: str, native_session_id: str) -> None:
        """Read one session and publish its row (targeted refresh; other rows untouched).

        Refreshes that concurrent commands ask for at the same moment share
        one publication (``batching.GroupCommit``): every session is
        read, then the rows are merged onto the published index in request
        order and both indexes are written once, instead of once per
        session. Each caller still gets its own session's outcome.

        Raises:
            Exception: the read or the publication failed.

        """
        await self._refreshes.submit((source_id, native_session_id))

    async def _refresh_batch(self, requests: list[tuple[str, str]]) -> list[Exception | None]:
        """Refresh every requested session (each once) and publish the rows in one write."""
        observation = self.target.next_observation()
        manifests: dict[str, bytes] = {}
        outcomes: dict[tuple[str, str], Exception | None] = {}
        rows: dict[tuple[str, str], IndexEntry] = {}

        async def read(request: tuple[str, str]) -> None:
            source_id, native_session_id = request
            source = self.sources.get(source_id)
            if source is None or source.driver is None:
                outcomes[request] = ValueError(f"source is not available: {source_id}")
                return
            row = await self._read_row(
                source, SessionSummary(nativeSessionId=native_session_id), manifests
            )
            if isinstance(row, SourceError):
                outcomes[request] = RuntimeError(row.message)
                return
            outcomes[request] = None
            rows[request] = row

        unique = list(dict.fromkeys(requests))
        if len(unique) == 1:
            await read(unique[0])
        else:
            async with anyio.create_task_group() as reads:
                for request in unique:
                    reads.start_soon(read, request)
        if rows:
            async with self._health_lock:
                published: tuple[dict[str, IndexEntry], dict[str, int]] | None = None
                current = self.target.published_sessions()
                observations = self.target.read_observations()
                for request in unique:
                    row = rows.get(request)
                    if row is None:
                        continue
                    merged = merge_refresh(
                        current,
                        observations,
                        with_checkout(row, self._checkouts),
                        observation=observation,
                    )
                    if merged is None:
                        manifests.pop(row.key, None)
                        self.record(
                            "source-collection-superseded",
                            "A newer observation already published this session",
                            source_id=request[0],
                        )
                        continue
                    current, observations = published = merged
                if published is not None:
                    try:
                        self._publish_rows(current, observations, manifests, self._checkouts)
                    except Exception as exc:
                        for request in rows:
                            outcomes[request] = exc
        return [outcomes[request] for request in requests]

    # -- shutdown --------------------------------------------------------------------------

    @property
    def health_owned(self) -> bool:
        """Whether health publication belongs to this host (deferred health ended)."""
        return self._health_owned

    async def stop(
        self,
        reason: str = "stop",
        *,
        flush_pending_receipts: bool = True,
        interrupt_in_flight: bool = False,
        publish_health: bool = True,
    ) -> list[str]:
        """Shut down gracefully (idempotent); return the failures met (empty when clean).

        The options are the startup-cancellation path: ``flush_pending_receipts=False``
        leaves the durable receipt outbox for the next host,
        ``interrupt_in_flight=True`` stops the drivers before waiting for an
        active collection, ``publish_health=False`` writes no health.
        """
        if self._stopped:
            await self._stop_done.wait()
            return list(self._stop_result or [])
        self._stopped = True
        if not publish_health:
            self._health_owned = False
        failures: list[str] = []
        self.status = "stopping"
        self.activity.record("host-stopping", f"Host shutdown began ({reason})", at=self.now())
        if self.worker is not None:
            self.worker.close()
        if self._pumps is not None:
            self._pumps.cancel()
        self._collections_closed = True
        try:
            self.publish_health_now()
        except Exception as exc:
            failures.append(f"stopping health publication failed: {exc}")
        if interrupt_in_flight:
            failures += await self._stop_drivers()
        await self._idle_collection.wait()
        async with self._sync_lock:
            pass
        failures += await self._drain_and_flush(flush=flush_pending_receipts)
        if not interrupt_in_flight:
            failures += await self._stop_drivers()
        self.status = "stopped"
        self.activity.record("host-stopped", "Host stopped", at=self.now())
        try:
            self.publish_health_now()
        except Exception as exc:
            failures.append(f"stopped health publication failed: {exc}")
        self._stop_result = failures
        self._stop_done.set()
        return failures

    async def _drain_and_flush(self, *, flush: bool) -> list[str]:
        failures: list[str] = []
        if self.worker is not None:
            try:
                await self.worker.drain()
            except CommandWorkerError as exc:
                message = f"{exc}: " + "; ".join(str(e) for e in exc.errors)
                failures.append(message)
                self.activity.record("command-drain-failed", message, at=self.now())
            if not flush:
                return failures
            try:
                flushed = await self.worker.recover_unpublished_receipts()
                self.activity.record(
                    "receipt-flush-completed",
                    f"Flushed {len(flushed)} pending receipts",
                    at=self.now(),
                )
            except CommandWorkerError as exc:
                failures.append(str(exc))
                self.activity.record("receipt-flush-failed", str(exc), at=self.now())
        return failures

    async def _stop_drivers(self) -> list[str]:
        """Stop every source's driver at once (each may take its grace periods)."""
        failures: list[str] = []
        async with anyio.create_task_group() as stops:
            for source in self.sources.values():
                if source.driver is not None:
                    stops.start_soon(self._stop_driver, source, source.driver, failures)
        return failures

    async def _stop_driver(self, source: _Source, driver: AgentDriver, failures: list[str]) -> None:
        try:
            await driver.stop()
        except Exception as exc:
            source.status = "failed"
            source.last_error = str(exc)
            failures.append(f"source {source.config.id} failed to stop: {exc}")
            self.activity.record(
                "source-stop-failed", str(exc), at=self.now(), source_id=source.config.id
            )
        else:
            source.status = "stopped"
            self.activity.record(
                "source-stopped", "Source stopped", at=self.now(), source_id=source.config.id
            )
