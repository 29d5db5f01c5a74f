"""The host's health value (``commonfabric.agent-connector.health``) and its activity log.

Health is written whole on every change. It never holds a secret: prompt
text and other command payloads, configured provider ``command`` arrays,
``env`` values and identity bytes are never copied in. The builders here
(:func:`source_health`, :func:`receipt_activity_details`) take only the
fields that may appear, so a caller cannot copy the rest by accident.
Provider error messages are copied verbatim.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any, Literal

import msgspec

from shedproto import ErrorCode, LocalProtocolError

from ._config import AgentSourceConfig
from ._receipts import Receipt

__all__ = [
    "ACTIVITY_LIMIT",
    "HEALTH_SCHEMA",
    "ActivityEntry",
    "ActivityLog",
    "Capabilities",
    "CommandProcessingHealth",
    "Health",
    "HealthTarget",
    "HostStatus",
    "NO_CAPABILITIES",
    "ProducerTarget",
    "SourceError",
    "SourceHealth",
    "SourceStatus",
    "SyncHealth",
    "SyncStatus",
    "TargetCells",
    "host_status_after_collection",
    "receipt_activity_details",
    "source_health",
]

HEALTH_SCHEMA = "commonfabric.agent-connector.health"
"""The health value's schema string."""
ACTIVITY_LIMIT = 200
"""Health keeps the 200 most recent activity entries."""

HostStatus = Literal[
    "created", "starting", "syncing", "ready", "degraded", "failed", "stopping", "stopped"
]
"""The host's overall status."""
SourceStatus = Literal[
    "disabled", "pending", "starting", "collecting", "ready", "degraded", "failed", "stopped"
]
"""One source's lifecycle status."""
SyncStatus = Literal["running", "complete", "failed"]
"""A collection's status (cancellation shows ``failed`` with the abort reason)."""


class Capabilities(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What a source's driver can do; the seven booleans are always written, the rest when set."""

    inventory: bool
    read: bool
    prompt: bool
    cancel: bool
    rename: bool
    setMode: bool  # noqa: N815 - wire name
    setConfigOption: bool  # noqa: N815 - wire name
    startSession: bool | None = None  # noqa: N815 - wire name
    modes: tuple[str, ...] | None = None
    surfaces: tuple[str, ...] | None = None
    configOptions: dict[str, Any] | None = None  # noqa: N815 - wire name


NO_CAPABILITIES = Capabilities(
    inventory=False,
    read=False,
    prompt=False,
    cancel=False,
    rename=False,
    setMode=False,
    setConfigOption=False,
)
"""A source that can do nothing yet (not started, disabled)."""


class SourceError(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One error a source reported during a collection."""

    nativeSessionId: str | None = None  # noqa: N815 - wire name
    message: str


class SourceHealth(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One configured source's health entry (``errors`` is always written)."""

    id: str
    driver: str
    enabled: bool
    status: SourceStatus
    capabilities: Capabilities
    sessionCount: int | None = None  # noqa: N815 - wire name
    complete: bool | None = None
    lastCollectionStartedAt: str | None = None  # noqa: N815 - wire name
    lastCollectionCompletedAt: str | None = None  # noqa: N815 - wire name
    errors: tuple[SourceError, ...]
    lastError: str | None = None  # noqa: N815 - wire name


class ProducerTarget(msgspec.Struct, frozen=True, kw_only=True):
    """A command producer as health shows it: its id, piece and queue cell."""

    id: str
    piece: str
    commandCellId: str  # noqa: N815 - wire name


class TargetCells(msgspec.Struct, frozen=True, kw_only=True):
    """The five top-level cell ids (bare, without ``of:``)."""

    recentIndex: str  # noqa: N815 - wire name
    allIndex: str  # noqa: N815 - wire name
    health: str
    commands: str
    receipts: str


class HealthTarget(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Where the host publishes."""

    spaceDid: str  # noqa: N815 - wire name
    ownerDid: str  # noqa: N815 - wire name
    debugPieceId: str | None = None  # noqa: N815 - wire name
    commandProducers: tuple[ProducerTarget, ...] | None = None  # noqa: N815 - wire name
    cells: TargetCells


class CommandProcessingHealth(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Command admission and outstanding work."""

    accepting: bool
    pendingReceiptPublications: int  # noqa: N815 - wire name
    failedCommands: int  # noqa: N815 - wire name
    lastError: str | None = None  # noqa: N815 - wire name


class SyncHealth(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The latest collection."""

    reason: str
    status: SyncStatus
    startedAt: str | None = None  # noqa: N815 - wire name
    completedAt: str | None = None  # noqa: N815 - wire name
    sessionCount: int | None = None  # noqa: N815 - wire name
    error: str | None = None


class ActivityEntry(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One lifecycle or receipt event; ``id`` is ``<startedAt>:<sequence>``."""

    id: str
    at: str
    type: str
    message: str
    sourceId: str | None = None  # noqa: N815 - wire name
    details: dict[str, Any] | None = None


class Health(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The whole health value (``schema`` :data:`HEALTH_SCHEMA`, ``service`` ``agents-host``)."""

    schema: str
    ownerDid: str  # noqa: N815 - wire name
    service: str
    status: HostStatus
    startedAt: str  # noqa: N815 - wire name
    updatedAt: str  # noqa: N815 - wire name
    target: HealthTarget
    commandProcessing: CommandProcessingHealth  # noqa: N815 - wire name
    sync: SyncHealth | None = None
    sources: tuple[SourceHealth, ...]
    activity: tuple[ActivityEntry, ...]


class ActivityLog:
    """The bounded activity history: the last ``limit`` entries, ids unique per host lifetime.

    Raises (on construction):
        LocalProtocolError: ``limit`` is not a positive safe integer
            (``activityLimit must be a positive safe integer``).
    """

    __slots__ = ("_entries", "_sequence", "limit", "started_at")

    def __init__(self, started_at: str, limit: int = ACTIVITY_LIMIT) -> None:
        if type(limit) is not int or not 0 < limit <= 2**53 - 1:
            raise LocalProtocolError(
                ErrorCode.INVALID_ARGUMENT, "activityLimit must be a positive safe integer"
            )
        self.started_at = started_at
        self.limit = limit
        self._sequence = 0
        self._entries: deque[ActivityEntry] = deque(maxlen=min(limit, 1 << 20))

    def record(
        self,
        type_: str,
        message: str,
        *,
        at: str,
        source_id: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> ActivityEntry:
        """Append an entry (dropping the oldest beyond the limit) and return it."""
        self._sequence += 1
        entry = ActivityEntry(
            id=f"{self.started_at}:{self._sequence}",
            at=at,
            type=type_,
            message=message,
            sourceId=source_id,
            details=details,
        )
        self._entries.append(entry)
        return entry

    @property
    def entries(self) -> tuple[ActivityEntry, ...]:
        """The retained entries, oldest first."""
        return tuple(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


def source_health(
    config: AgentSourceConfig,
    *,
    status: SourceStatus,
    capabilities: Capabilities | None = None,
    session_count: int | None = None,
    complete: bool | None = None,
    errors: Iterable[SourceError] = (),
    last_error: str | None = None,
    last_collection_started_at: str | None = None,
    last_collection_completed_at: str | None = None,
) -> SourceHealth:
    """Build a source's health entry from its configuration.

    Only ``id``, ``driver`` and ``enabled`` are taken from the configuration:
    ``command``, ``env`` and every other configured value stay out of health.
    """
    return SourceHealth(
        id=config.id,
        driver=config.driver,
        enabled=config.enabled,
        status=status,
        capabilities=capabilities or NO_CAPABILITIES,
        sessionCount=session_count,
        complete=complete,
        lastCollectionStartedAt=last_collection_started_at,
        lastCollectionCompletedAt=last_collection_completed_at,
        errors=tuple(errors),
        lastError=last_error,
    )


def receipt_activity_details(receipt: Receipt) -> dict[str, Any]:
    """Return the ``command-receipt`` activity details: ids, status, error; never payload."""
    details: dict[str, Any] = {"commandId": receipt.commandId}
    if receipt.producer is not None:
        details["producer"] = receipt.producer
    details["nativeSessionId"] = receipt.nativeSessionId
    details["status"] = receipt.status
    if receipt.error is not None:
        details["error"] = msgspec.to_builtins(receipt.error)
    return details


def host_status_after_collection(
    enabled_source_statuses: Iterable[SourceStatus],
    *,
    pending_receipt_publications: int,
    outstanding_command_failures: int,
) -> HostStatus:
    """Return the host status after a collection: ``ready`` or ``degraded``.

    ``degraded`` if an enabled source is not ``ready``, receipts wait for
    publication or a command failure is outstanding.
    """
    if (
        any(status != "ready" for status in enabled_source_statuses)
        or pending_receipt_publications > 0
        or outstanding_command_failures > 0
    ):
        return "degraded"
    return "ready"
