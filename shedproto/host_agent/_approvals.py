"""The approval registry, policy gate, audit records and the event replay ring, as pure logic.

The registry is the agent's multi-connection brain. It does no I/O: callers
pass connection handles (any hashable), ids and times, and get back the
frames to write and the decisions to deliver.

``decided_by`` follows the real code, not its doc comments:

======================  =========  ===============================
case                    approved   ``decided_by``
======================  =========  ===============================
approve                 yes        the app's value, ``"user"`` if empty
explicit deny           no         the app's value, ``"user"`` if empty
no consumer             no         absent (``None``), immediately
timeout                 no         absent (``None``)
consumer disconnected   no         ``"user"``, immediately
consumer superseded     no         ``"user"``, immediately
approve-all / deny-all  yes / no   absent (``None``)
======================  =========  ===============================
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from enum import Enum

import msgspec

from shedproto import ErrorCode, LocalProtocolError

from ._constants import (
    DEFAULT_APPROVAL_TIMEOUT,
    NS_DOCKER,
    POLICY_APPROVE_ALL,
    POLICY_SHED_DESKTOP,
    PROTOCOL_VERSION,
    REPLAY_RING_SIZE,
)
from ._ids import IdBlocks
from ._status import effective_policy
from ._time import format_timestamp
from .types import ApprovalRequest, ApprovalResponse, Event, _always, encode_frame

__all__ = [
    "ApprovalRegistry",
    "AuditRecord",
    "Decision",
    "EventLines",
    "EventRing",
    "Outcome",
    "PendingApproval",
    "Promotion",
    "decide_by_policy",
    "denial_audit",
    "encode_audit_line",
]

ConnectionKey = Hashable


class Outcome(str, Enum):
    """How a decision was reached; the value is a stable spelling for logs and JSON."""

    APPROVED = "approved"
    DENIED = "denied"
    NO_CONSUMER = "no_consumer"
    TIMEOUT = "timeout"
    DISCONNECTED = "disconnected"
    SUPERSEDED = "superseded"
    POLICY = "policy"


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    """The result of one approval; anything but ``approved=True`` is a denial (fail closed).

    ``decided_by`` is ``None`` where the real agent leaves it out of the audit
    record; ``scope``/``ttl`` are the app's values (``""`` when not sent).
    ``policy`` is the effective policy that applied (the audit ``approval``).
    """

    approved: bool
    outcome: Outcome
    policy: str
    request_id: str | None = None
    decided_by: str | None = None
    scope: str = ""
    ttl: str = ""


def decide_by_policy(policy: str) -> Decision | None:
    """Decide without a consumer when the policy allows it; ``None`` means ask the consumer.

    ``approve-all`` approves, ``deny-all`` (and an empty policy) denies,
    ``shed-desktop`` returns ``None``. Any other policy (``biometrics`` needs
    Touch ID, which a reference server cannot show) denies: fail closed.
    """
    effective = effective_policy(policy)
    if effective == POLICY_SHED_DESKTOP:
        return None
    return Decision(
        approved=effective == POLICY_APPROVE_ALL, outcome=Outcome.POLICY, policy=effective
    )


class PendingApproval(msgspec.Struct, frozen=True):
    """A registered request: write ``frame`` to ``connection``; it resolves by ``deadline``.

    Immutable, compared and hashed by value. A frozen ``msgspec.Struct``, not a
    frozen dataclass: one is made per approval, ~4x cheaper (a frozen dataclass
    sets each field through ``object.__setattr__``).
    """

    request_id: str
    connection: ConnectionKey
    frame: ApprovalRequest
    deadline: float


@dataclass(frozen=True)
class Promotion:
    """What promoting a consumer did: the connection it superseded (if any) and the denials."""

    superseded: ConnectionKey | None
    failed: tuple[Decision, ...] = ()


class _Entry:
    """A pending request's owner and deadline (slotted: one per approval)."""

    __slots__ = ("connection", "deadline")

    def __init__(self, connection: ConnectionKey, deadline: float) -> None:
        self.connection = connection
        self.deadline = deadline


@dataclass
class ApprovalRegistry:
    """Pending approvals bound to the connection they were sent on, and the active consumer.

    ``timeout`` is the approval budget in seconds (``approval_timeout``);
    times passed to methods are monotonic seconds, ``wall`` is Unix time for
    the frame's ``ts``/``expires_at``.
    """

    timeout: float = DEFAULT_APPROVAL_TIMEOUT
    consumer: ConnectionKey | None = None
    _pending: dict[str, _Entry] = field(default_factory=dict, init=False, repr=False)
    _stamps: tuple[float, float, float, str, str] = field(
        default=(math.inf, -math.inf, 0.0, "", ""), init=False, repr=False
    )
    """``[first, end)`` of the whole second :meth:`open` last stamped, the timeout then,
    and its ``ts`` and ``expires_at`` texts (an empty range until the first request)."""

    def __post_init__(self) -> None:
        if not self.timeout > 0:
            raise LocalProtocolError(
                ErrorCode.INVALID_ARGUMENT, f"approval timeout must be positive, got {self.timeout}"
            )

    @property
    def request_timeout_ms(self) -> int:
        """The timeout as ``hello_ack.request_timeout_ms`` advertises it."""
        return round(self.timeout * 1000)

    @property
    def pending(self) -> int:
        """How many approvals await a decision."""
        return len(self._pending)

    def pending_for(self, connection: ConnectionKey) -> tuple[str, ...]:
        """Return the ids of the requests owned by ``connection``, oldest first."""
        return tuple(rid for rid, entry in self._pending.items() if entry.connection == connection)

    def promote(self, connection: ConnectionKey) -> Promotion:
        """Make ``connection`` the single active consumer (last writer wins).

        The previous consumer, if any, is demoted: its pending approvals fail
        closed (``SUPERSEDED``, ``decided_by`` ``"user"``). Promoting the
        current consumer again changes nothing.
        """
        old = self.consumer
        if old == connection:
            return Promotion(superseded=None)
        self.consumer = connection
        if old is None:
            return Promotion(superseded=None)
        return Promotion(superseded=old, failed=self._fail_owned(old, Outcome.SUPERSEDED))

    def demote(self, connection: ConnectionKey) -> tuple[Decision, ...]:
        """Drop ``connection`` (EOF, error, write failure) and fail its approvals closed.

        Clears the active consumer if it is ``connection``. The denials carry
        ``DISCONNECTED`` and ``decided_by`` ``"user"``. Idempotent.
        """
        if self.consumer == connection:
            self.consumer = None
        return self._fail_owned(connection, Outcome.DISCONNECTED)

    def open(
        self,
        *,
        request_id: str,
        namespace: str,
        op: str,
        shed: str,
        detail: str,
        server: str = "",
        now: float,
        wall: float,
    ) -> PendingApproval | Decision:
        """Register a ``shed-desktop`` request, or deny it at once when no consumer is active.

        Returns the :class:`PendingApproval` (write its frame to its
        connection) or a ``NO_CONSUMER`` denial.

        Raises:
            LocalProtocolError: ``request_id`` is already pending (nothing changes).

        """
        if self.consumer is None:
            return Decision(
                approved=False,
                outcome=Outcome.NO_CONSUMER,
                policy=POLICY_SHED_DESKTOP,
                request_id=request_id,
            )
        if request_id in self._pending:
            raise LocalProtocolError(
                ErrorCode.INVALID_ARGUMENT, f"approval {request_id!r} is already pending"
            )
        stamps = self._stamps
        if not (stamps[0] <= wall < stamps[1] and stamps[2] == self.timeout):
            stamps = self._stamp(wall)
        frame = ApprovalRequest(
            id=request_id,
            ts=stamps[3],
            namespace=namespace,
            op=op,
            server=server,
            shed=shed,
            detail=detail,
            expires_at=stamps[4],
        )
        deadline = now + self.timeout
        self._pending[request_id] = _Entry(self.consumer, deadline)
        return PendingApproval(request_id, self.consumer, frame, deadline)

    def _stamp(self, wall: float) -> tuple[float, float, float, str, str]:
        """Format ``ts`` and ``expires_at`` for ``wall``; kept for the rest of its second.

        Both change once a second at the frame's resolution, so :meth:`open`
        reuses them while ``wall`` stays in the same whole second (and the
        timeout is unchanged). Raises like :func:`format_timestamp`.
        """
        ts = format_timestamp(wall)
        expires_at = format_timestamp(int(wall) + self.timeout)
        second = float(math.floor(wall))
        if wall >= 0:  # int() above truncated like floor: the second is one cache entry
            self._stamps = (second, second + 1.0, self.timeout, ts, expires_at)
        return (second, second + 1.0, self.timeout, ts, expires_at)

    def resolve(self, connection: ConnectionKey, response: ApprovalResponse) -> Decision | None:
        """Settle a request with ``response`` read from ``connection``.

        Returns ``None`` (and changes nothing) for an unknown, duplicate, late
        or foreign ``request_id``: only the owning connection can resolve.
        """
        entry = self._pending.get(response.request_id)
        if entry is None or entry.connection != connection:
            return None
        del self._pending[response.request_id]
        approved = response.decision == "approve"
        return Decision(
            approved=approved,
            outcome=Outcome.APPROVED if approved else Outcome.DENIED,
            policy=POLICY_SHED_DESKTOP,
            request_id=response.request_id,
            decided_by=response.decided_by or "user",
            scope=response.scope,
            ttl=response.ttl,
        )

    def cancel(self, request_id: str) -> bool:
        """Forget a pending request without a decision; return whether it was pending."""
        return self._pending.pop(request_id, None) is not None

    def expire(self, now: float) -> tuple[Decision, ...]:
        """Deny every request due at or before ``now`` (``TIMEOUT``, no ``decided_by``)."""
        due = [rid for rid, entry in self._pending.items() if entry.deadline <= now]
        for rid in due:
            del self._pending[rid]
        return tuple(
            Decision(
                approved=False, outcome=Outcome.TIMEOUT, policy=POLICY_SHED_DESKTOP, request_id=rid
            )
            for rid in due
        )

    def next_deadline(self) -> float | None:
        """Return the earliest pending deadline, or ``None`` when nothing is pending."""
        return min((entry.deadline for entry in self._pending.values()), default=None)

    def _fail_owned(self, connection: ConnectionKey, outcome: Outcome) -> tuple[Decision, ...]:
        owned = self.pending_for(connection)
        for rid in owned:
            del self._pending[rid]
        return tuple(
            Decision(
                approved=False,
                outcome=outcome,
                policy=POLICY_SHED_DESKTOP,
                request_id=rid,
                decided_by="user",
            )
            for rid in owned
        )


class EventRing:
    """The last ``capacity`` serialized ``event`` frames, replayed byte-identical."""

    __slots__ = ("_frames", "append")

    def __init__(self, capacity: int = REPLAY_RING_SIZE) -> None:
        if capacity <= 0:
            raise LocalProtocolError(ErrorCode.INVALID_ARGUMENT, "ring capacity must be positive")
        self._frames: deque[bytes] = deque(maxlen=capacity)
        self.append: Callable[[bytes], None] = self._frames.append
        """``append(frame)``: keep ``frame`` (an encoded line); the oldest is dropped when full.

        The deque's own bound method (once per fanned-out event: no Python frame).
        """

    def __len__(self) -> int:
        return len(self._frames)

    def replay(self, count: int) -> list[bytes]:
        """Return the last ``min(count, len)`` frames, oldest first; ``count <= 0`` gives none.

        Replay does not empty the ring.
        """
        if count <= 0:
            return []
        frames = list(self._frames)
        return frames[-count:]


class AuditRecord(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One durable audit line (JSONL): ``shed``/``ns``/``op``/``approval`` are always written.

    :meth:`to_event` gives the ``event`` frame fanned out to the consumer,
    where those four are omitempty instead.
    """

    ts: str = _always("")
    server: str = ""
    shed: str = _always("")
    ns: str = _always("")
    op: str = _always("")
    result: str = _always("")
    detail: str = ""
    code: str = ""
    reason: str = ""
    approval: str = _always("")
    decided_by: str = ""
    scope: str = ""
    ttl: str = ""

    def event_line(self, id: str) -> bytes:
        """Return ``encode_frame(self.to_event(id))``, spliced from the record's own encoding.

        An event repeats the record's fields in the record's order after
        ``id``, ``ts`` and ``kind``; only ``shed``, ``ns``, ``op`` and
        ``approval`` are omitempty in the event and always written in the
        record. So when those four are set, the event is a fixed head, the
        encoded ``id``, a ``"ts"``/``"kind"`` part and the record's encoding
        after its ``{"ts":<ts>,``: two C encodes and no intermediate
        :class:`Event`. The ``ts`` part is kept for the last ``ts`` seen
        (whole seconds: it changes at most once a second), which saves an
        encode and a concatenation per event. Any other record takes the
        general path; the bytes are the same either way. Never raises for a
        well-typed record.
        """
        if self.shed and self.ns and self.op and self.approval:
            encode = _RECORD_ENCODER.encode
            cached = _LAST_TS[0]
            if self.ts != cached.ts:
                cached = _LAST_TS[0] = _TsPart(self.ts)
            body = encode(self)[cached.cut :]  # after {"ts":<ts>,
            return b"".join((_EVENT_HEAD, encode(id), cached.part, body, b"\n"))
        return encode_frame(self.to_event(id))

    def to_event(self, id: str) -> Event:
        """Build the ``event`` frame for this record: a fresh ``id``, the record's own ``ts``."""
        return Event(
            id=id,
            ts=self.ts,
            server=self.server,
            shed=self.shed,
            ns=self.ns,
            op=self.op,
            result=self.result,
            detail=self.detail,
            code=self.code,
            reason=self.reason,
            approval=self.approval,
            decided_by=self.decided_by,
            scope=self.scope,
            ttl=self.ttl,
        )


_RECORD_ENCODER = msgspec.json.Encoder()
_encode_into = _RECORD_ENCODER.encode_into
_EVENT_HEAD = b'{"v":%d,"type":"event","id":' % PROTOCOL_VERSION
_EVENT_KIND = b',"kind":"audit",'
_EVENT_HEAD_ID = _EVENT_HEAD + b'"'


class _TsPart:
    """The last ``ts`` spliced by :meth:`AuditRecord.event_line` (or one :class:`EventLines`).

    Its text, its event part (``,"ts":<ts>,"kind":"audit",``), that part after
    the closing quote of a raw id, and where the record's encoding continues
    after its ``{"ts":<ts>,`` (``cut``). Never
    changed once made: a new ``ts`` gets a new one, swapped in with one store,
    so a thread that read the old one splices consistent bytes.
    """

    __slots__ = ("cut", "part", "quoted", "ts")

    def __init__(self, ts: str) -> None:
        encoded = _RECORD_ENCODER.encode(ts)
        self.ts = ts
        self.part = b',"ts":' + encoded + _EVENT_KIND
        self.quoted = b'"' + self.part
        self.cut = 7 + len(encoded)  # len('{"ts":') + the encoded ts + len(',')


_LAST_TS = [_TsPart("")]
"""The :class:`_TsPart` of the last ``ts`` spliced (a one-item list, replaced whole)."""


class EventLines(IdBlocks):
    """Make each audit record's ``event`` line with a fresh id: the fan-out fast path.

    ``lines.line(record)`` returns the bytes ``record.event_line(IdSource(entropy)())``
    returns (``entropy`` and ``block`` as for :class:`IdSource`, ids in the same
    order). The ids stay the ASCII bytes ``uuid_block()`` makes and are spliced
    in as they are (a uuid needs no JSON escaping): no ``str`` per id and no encode
    of it, one call per event instead of two. The record is encoded into a
    buffer kept for the next one (``encode_into``: no output allocation, which
    msgspec otherwise grows in steps, ~70 ns an event) and the event's last
    ``ts`` part is kept on the instance. One instance serves one thread (the
    buffer is reused); after a record larger than 1 KiB it stays that large.

    Raises:
        ValueError: ``block`` is not positive, or ``entropy`` returned the wrong
            number of bytes (on the call that refills).

    """

    __slots__ = ("_ids", "_scratch", "_ts")

    def __init__(self, entropy: Callable[[int], bytes], *, block: int = 128) -> None:
        super().__init__(entropy, block=block)
        self._ids: list[bytes] = []
        self._scratch = bytearray(1024)
        self._ts = _TsPart("")

    def line(self, record: AuditRecord) -> bytes:
        """Return the encoded ``event`` frame of ``record`` with the next id, newline included."""
        ids = self._ids
        if not ids:
            self._refill()
        if record.shed and record.ns and record.op and record.approval:  # event_line's splice
            cached = self._ts
            if record.ts != cached.ts:
                cached = self._ts = _TsPart(record.ts)
            scratch = self._scratch
            _encode_into(record, scratch)
            body = scratch[cached.cut :]
            return b"".join((_EVENT_HEAD_ID, ids.pop(), cached.quoted, body, b"\n"))
        return encode_frame(record.to_event(ids.pop().decode("ascii")))

    def _refill(self) -> None:
        ids = self._ids
        ids[:] = self._next_block().split()
        ids.reverse()  # popped from the end: the first id made is used first


def encode_audit_line(record: AuditRecord) -> bytes:
    """Encode ``record`` as one JSONL audit line with its newline."""
    return _RECORD_ENCODER.encode(record) + b"\n"


def denial_audit(
    decision: Decision, *, ts: str, namespace: str, op: str, shed: str, server: str = ""
) -> AuditRecord:
    """Build the audit record the agent writes when the gate denies (``denied``, no detail).

    Docker's denial carries the audit code ``APPROVAL_DENIED``; ssh and aws carry none.
    """
    return AuditRecord(
        ts=ts,
        server=server,
        shed=shed,
        ns=namespace,
        op=op,
        result="denied",
        code="APPROVAL_DENIED" if namespace == NS_DOCKER else "",
        approval=decision.policy,
        decided_by=decision.decided_by or "",
        scope=decision.scope,
        ttl=decision.ttl,
    )
