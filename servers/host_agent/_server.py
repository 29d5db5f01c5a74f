"""The reference shed-host-agent: both sockets, driven by the sans-IO core.

This is a thin anyio shell. The core decides everything (framing, the
handshake, who the consumer is, how approvals end); the shell owns the
sockets, tasks, clocks and ids:

* the status socket writes one compact LiveStatus line per connection
  (5 s write deadline) and closes, reading nothing;
* the approval channel gives each connection 2 s for its hello, closes
  silently on anything else, acks, promotes (superseding the previous
  consumer, which gets its notice and is closed within about 6 s), replays
  ``replay_events`` and pings every 10 s;
* frames go straight to the non-blocking socket when nothing is waiting
  (no task hop, no timer); events are corked and written in batches (at the
  end of the loop pass, or inline every 128). What the socket does not take
  waits in a bounded queue (256 frames) for the writer task, which writes it
  under the 5 s write deadline. A full queue or a failed or late write drops
  the connection and fails its approvals closed;
* one expiry task ends every approval at its deadline (fail closed,
  ``TIMEOUT``) instead of a timer per request.

Speed notes (``python -m benchmarks host_agent``, ``servers``): an approval
costs two socket crossings and one task wake-up (the connection's reader
wakes the caller), like the raw anyio exchange it is measured against; what
remains is per-frame Python work (ids, timestamps, two encodes and two
decodes, the registry) on both ends. The registry's per-approval objects are
slotted (``PendingApproval`` a msgspec Struct), ``ts``/``expires_at`` are
formatted once a second, an active connection's ``send`` skips its checks
and the reader hands each decision to its waiter inline; the consumer
connection is read through :class:`WatchedReads` (one reader registration for
the connection's life on asyncio, no add/remove per wait). With a raw
consumer the agent's round trip is ~0.95 of the raw exchange on asyncio;
the rest of the gap is the typed consumer's (``benchmarks/host_agent.py``).
While serving, time comes from the loop's own clock and waiters' events
from the backend's Event class, both looked up once (anyio's module
functions find the backend on every call).
Per fan-out event the agent makes one line with a fresh id
(:class:`~shedproto.host_agent.EventLines`: ids made in blocks of 512 and
kept as ASCII bytes, the ``ts`` part cached for the second, the record
encoded into a reused buffer and spliced after it) and appends it to the
ring and, while a burst is open, to the consumer's queue: nothing else. The
burst's first event takes the full path (the consumer lookup, the core's
``forward`` state check, a corked enqueue); the next ones only append until
``CORK_FRAMES`` (128, one ``send``) are queued, the queue was written, or
the consumer changes or hangs up (each ends the burst). On asyncio the
corked rest is written by a ``call_soon`` callback at the end of the loop
pass, not by waking the writer task. Measured in CPU time per event (the
server-side fan-out case, same-run medians on this shared 2-core machine):
``emit_audit`` went from ~1.07 to ~0.83 µs; the ratio from 0.53 to 0.63 on
asyncio and from 0.45 to 0.52 on uvloop, where the raw reader it is
compared with is cheaper and the agent's per-event Python work is not (what
is left: the uuid, ~0.17 µs; the encode and splice, ~0.35 µs; three appends).
The status line is cached per second and compared by value.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import socket
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Hashable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.from_thread
import anyio.lowlevel

from shedproto import LocalProtocolError, __version__
from shedproto.host_agent import (
    GATED_NAMESPACES,
    HELLO_TIMEOUT,
    MAX_LINE_BYTES,
    NS_AWS,
    NS_SSH,
    PING_INTERVAL,
    POLICIES,
    WRITE_TIMEOUT,
    AgentConfig,
    AgentConnection,
    AgentState,
    ApprovalRegistry,
    ApprovalResponse,
    AuditRecord,
    ConnectionClosed,
    CredentialGet,
    Decision,
    EventLines,
    EventRing,
    Hello,
    HelloAck,
    IdSource,
    LiveStatus,
    MintedCredential,
    Outcome,
    Ping,
    PingDue,
    RcHubStatus,
    ServerHealth,
    TokenGet,
    approval_socket_path,
    build_live_status,
    credential_reply,
    decide_by_policy,
    denial_audit,
    effective_policy,
    encode_audit_line,
    encode_frame,
    encode_live_status,
    format_timestamp,
    frame_too_large,
    gate_namespaces,
    no_minter_error,
    status_socket_path,
)
from shedproto.servers import BindError, UnixServer
from shedproto.servers._idle import loop_clock
from shedproto.servers._loop import running_asyncio_loop
from shedproto.servers._receive import SocketPump, WatchedReads

__all__ = [
    "DEFAULT_DETAILS",
    "CredentialMinter",
    "HostAgentServer",
    "MintError",
    "MintedCredential",
    "POLICIES",
]

log = logging.getLogger("shedproto.servers.host_agent")

DEFAULT_DETAILS: Mapping[str, str] = {
    NS_SSH: "SSH sign request",
    NS_AWS: "AWS credentials request",
}
"""The agent's fixed ``approval_request.detail`` texts (docker's names the registry URL)."""

WRITE_QUEUE = 256
"""Frames a consumer may have queued before it counts as a dead transport."""
CORK_FRAMES = WRITE_QUEUE // 2
"""Corked events are written inline once this many have gathered (a burst's syscall budget).

Half the queue: a burst takes one ``send`` per 128 events (64 cost ~50 ns an event
more in system time), and a consumer whose socket is full still has half the queue
before it counts as dead."""
SUPERSEDE_FLUSH = 6.0
"""Seconds a superseded consumer gets to receive its notice before it is closed."""
_ACTIVE = AgentState.ACTIVE
"""Bound once for the fan-out path: an enum member read through its class costs ~0.1 µs."""


_TOO_LARGE = f"the credential reply would exceed the consumers' {MAX_LINE_BYTES}-byte line cap"
"""The ``error`` of a reply whose credential made it too long for the consumers (ours, not the
real agent's: it writes the long line)."""


class MintError(Exception):
    """Raised by a :data:`CredentialMinter`; its message becomes the reply's ``error``."""


CredentialMinter = Callable[[str, str], Awaitable[MintedCredential]]
"""``await minter(server, csr)``: mint a control credential (``csr`` ``""`` when absent)."""


_new_id = IdSource(os.urandom)


def _now_ts() -> str:
    return format_timestamp(time.time())


def _only_bind_error(exc: BaseException) -> BindError | None:
    """Unwrap anyio's exception groups around a lone bind refusal."""
    while not isinstance(exc, BindError):
        inner: Sequence[BaseException] = getattr(exc, "exceptions", ())
        if len(inner) != 1:
            return None
        exc = inner[0]
    return exc


class _Waiter:
    __slots__ = ("decision", "event")

    def __init__(self, event: anyio.Event) -> None:
        self.event = event
        self.decision: Decision | None = None


class _Consumer:
    """One handshaken approval connection and its outbound queue.

    Frames go straight to the (non-blocking) socket while nothing is queued
    behind a full socket: no task hop and no timer per frame. Events may be
    *corked* instead (queued, then written in one go at the end of the loop
    pass, or inline once ``CORK_FRAMES`` have gathered), which saves a syscall
    per event in a burst. On asyncio (uvloop too) the end-of-pass write is a
    ``call_soon`` callback of :meth:`flush`, not a wake-up of the writer task
    (no task step, no new event per burst); on trio the writer task does it.
    When the socket does not take everything, the remainder waits in the
    bounded queue (``WRITE_QUEUE`` frames) for
    :meth:`HostAgentServer._writer`, which writes it under the write deadline;
    order is always kept and a stuck consumer is still cut off.
    """

    def __init__(
        self,
        key: int,
        conn: AgentConnection,
        hello: Hello,
        stream: anyio.abc.SocketStream,
        pump: SocketPump,
        *,
        on_hangup: Callable[[], None],
    ) -> None:
        self.key = key
        self.conn = conn
        self.hello = hello
        self.stream = stream
        self.pump = pump
        self.reads = WatchedReads(pump)
        """Reads for :meth:`HostAgentServer._reader` (one reader registration for the
        connection's life on asyncio); closed before the socket is."""
        self.scope = anyio.CancelScope()
        self.hung_up = False
        self.closing = False
        """No more frames are accepted; the writer closes once the queue is written."""
        self.blocked = False
        """The socket did not take everything: only the writer task writes until it drained."""
        self.queue: deque[bytes] = deque()
        self.wakeup = anyio.Event()
        self.raw = pump.raw
        """The socket for direct writes; ``None`` for a test double (queue only)."""
        self.on_hangup = on_hangup
        """Called once by :meth:`hangup` (the server ends its open burst there)."""
        loop = running_asyncio_loop() if self.raw is not None else None
        self.call_soon = None if loop is None else loop.call_soon
        """asyncio's (uvloop's) ``call_soon``: corked frames are written by a callback at
        the end of the loop pass; ``None`` (trio, a test double): the writer task does it."""

    def enqueue(self, data: bytes, *, cork: bool = False) -> bool:
        """Write ``data`` now (or, with ``cork``, soon); a failed write or full queue drops it.

        Returns False when the connection is (now) being dropped.
        """
        if self.hung_up or self.closing:
            return False
        queue = self.queue
        if len(queue) >= WRITE_QUEUE:
            self.hangup()
            return False
        queue.append(data)
        if self.raw is not None and not self.blocked and (not cork or len(queue) >= CORK_FRAMES):
            return self.flush()
        if len(queue) == 1:  # the writer (or the callback) was woken already for a longer queue
            if self.call_soon is not None and not self.blocked:
                self.call_soon(self.flush)
            else:
                self.wakeup.set()
        return True

    def flush(self) -> bool:
        """Write the queue to the socket without waiting; what it does not take stays queued.

        Returns False when the write failed and the connection is being dropped.
        """
        queue = self.queue
        raw = self.raw
        if raw is None or self.blocked or self.hung_up or not queue:
            return not self.hung_up
        data = queue[0] if len(queue) == 1 else b"".join(queue)
        queue.clear()
        try:
            sent = raw.send(data)
        except BlockingIOError:
            sent = 0
        except OSError:  # the peer is gone: the reader sees EOF and drops it
            self.hangup()
            return False
        if sent < len(data):
            queue.append(data[sent:])
            self.blocked = True
            self.wakeup.set()
        return True

    def hangup(self) -> None:
        """End the connection by shutting the socket down; the reader then sees EOF.

        Shutting down instead of cancelling the reader avoids cancelling a
        receive at the moment data arrives (an asyncio-backend race in anyio).
        """
        if self.hung_up:
            return
        self.hung_up = True
        self.on_hangup()
        self.wakeup.set()
        if self.raw is None:  # not a socket (a test double): cancel instead
            self.scope.cancel()
            return
        with contextlib.suppress(OSError):  # already disconnected: the reader sees EOF anyway
            self.raw.shutdown(socket.SHUT_RDWR)

    def finish(self, flush: float) -> None:
        """Close after what is queued is written, at the latest ``flush`` seconds from now."""
        self.scope.deadline = min(self.scope.deadline, anyio.current_time() + flush)
        self.closing = True
        self.wakeup.set()


class HostAgentServer:
    """A stand-in for shed-host-agent serving both sockets in ``socket_dir``.

    Start it with ``await task_group.start(server.serve)`` (it returns the
    server once both sockets listen) and stop it with :meth:`shutdown`;
    both socket files are removed. Drive it from tests with
    :meth:`set_policy`, :attr:`approval_timeout`, :meth:`set_servers`,
    :meth:`emit_audit`/:meth:`audit` and :meth:`request_approval`.
    """

    def __init__(
        self,
        socket_dir: str | os.PathLike[str],
        *,
        config: AgentConfig | None = None,
        config_path: str = "",
        version: str = __version__,
        hello_timeout: float = HELLO_TIMEOUT,
        ping_interval: float = PING_INTERVAL,
        write_timeout: float = WRITE_TIMEOUT,
        audit_log: str | os.PathLike[str] | None = None,
        minter: CredentialMinter | None = None,
        grace: float = 1.0,
        ack_null_when_empty: bool = False,
    ) -> None:
        config = config or AgentConfig()
        self.socket_dir = Path(socket_dir)
        self.status_path = Path(status_socket_path(os.fspath(self.socket_dir)))
        self.approval_path = Path(approval_socket_path(os.fspath(self.socket_dir)))
        self.config_path = config_path
        self.version = version
        self.hello_timeout = hello_timeout
        self.ping_interval = ping_interval
        self.write_timeout = write_timeout
        self.audit_log = Path(audit_log) if audit_log is not None else None
        self.minter = minter
        self.ack_null_when_empty = ack_null_when_empty
        """Write an empty ``gate_namespaces`` as the real agent's ``null`` (default ``[]``,
        which the real consumers can decode; see
        :meth:`~shedproto.host_agent.HelloAck.accepted_ack`)."""
        self.policies: dict[str, str] = {ns: config.policies.get(ns, "") for ns in GATED_NAMESPACES}
        self.registry = ApprovalRegistry(timeout=config.approval_timeout)
        self.ring = EventRing()
        self.audit_records: deque[AuditRecord] = deque(maxlen=1000)
        """The most recent audit records (newest last), for tests to inspect."""
        self.rc_hub = RcHubStatus(state="disabled")
        self.servers: tuple[ServerHealth, ...] = ()
        self.started_at = ""
        self._consumers: dict[Hashable, _Consumer] = {}
        self._waiters: dict[str, _Waiter] = {}
        self._next_key = 0
        self._consumer_changed = anyio.Event()
        self._lines = EventLines(os.urandom, block=512)
        """Fan-out lines with fresh ids; one per server (its scratch buffer is not shared).
        Ids are made 512 at a time: ~15 ns an id less than 128 (one entropy call and
        a few C calls per block), for ~35 KB kept ready."""
        self._burst: deque[bytes] | None = None
        """The active consumer's queue while a burst of corked events is open (see
        :meth:`_fan_out`); ``None`` sends the next event through the full path."""
        # The socket directory is the agent's own: re-chmodded 0700 like the real agent does.
        self._status_server = UnixServer(
            self.status_path, self._serve_status, grace=grace, dedicated_dir=True
        )
        self._approval_server = UnixServer(
            self.approval_path, self._serve_approval, grace=grace, dedicated_dir=True
        )
        self._stopping = False
        self._status_key: tuple[object, ...] = ()
        self._status_bytes = b""
        self._expiry_scope: anyio.CancelScope | None = None
        """The expiry task's current sleep (``None`` when the task is not running)."""
        self._expiry_at = math.inf
        """When the expiry task wakes next; no pending approval may be due before it."""
        self._loop: tuple[anyio.lowlevel.EventLoopToken, int] | None = None
        """The serving event loop and its thread while :meth:`serve` runs (for :meth:`shutdown`)."""
        self._clock: Callable[[], float] = anyio.current_time
        """The loop's own clock while serving (:func:`loop_clock`): ~0.1 µs, not anyio's ~1 µs."""
        self._new_event: Callable[[], anyio.Event] = anyio.Event
        """While serving, the backend's own Event class: ``anyio.Event()`` finds the
        backend on every call (~1 µs, once per approval); the class it returns makes
        the same events directly."""

    # ------------------------------------------------------------------ lifecycle

    async def serve(
        self, *, task_status: anyio.abc.TaskStatus[HostAgentServer] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Bind the status socket, then the approval socket, and serve until shut down.

        Raises:
            BindError: a socket path was refused (a live agent, a non-socket
                file, a path too long); nothing is left bound.

        """
        self.started_at = _now_ts()
        self._loop = (anyio.lowlevel.current_token(), threading.get_ident())
        self._clock = loop_clock()
        self._new_event = type(anyio.Event())
        try:
            async with anyio.create_task_group() as expiry:
                expiry.start_soon(self._expire_approvals)
                try:
                    async with anyio.create_task_group() as tg:
                        await tg.start(self._status_server.serve)
                        try:
                            await tg.start(self._approval_server.serve)
                        except BaseException:
                            self._status_server.shutdown()
                            raise
                        task_status.started(self)
                finally:
                    expiry.cancel_scope.cancel()
        except Exception as exc:
            bind_error = _only_bind_error(exc)
            if bind_error is None:
                raise
            raise bind_error from None
        finally:
            self._loop = None
            self._clock = anyio.current_time
            self._new_event = anyio.Event

    def shutdown(self) -> None:
        """Stop both sockets, close every consumer and fail pending approvals closed.

        Safe to call more than once, before :meth:`serve` started, and from any
        thread: called outside the serving event loop's thread (plain code
        beside a blocking portal, a test thread), it runs on that loop and
        returns once done.
        """
        loop = self._loop
        if loop is not None and loop[1] != threading.get_ident():
            try:
                anyio.from_thread.run_sync(self._shutdown_in_loop, token=loop[0])
            except anyio.RunFinishedError:  # the loop ended meanwhile: nothing left to wake
                self._shutdown_in_loop()
            return
        self._shutdown_in_loop()

    def _shutdown_in_loop(self) -> None:
        self._stopping = True
        for consumer in list(self._consumers.values()):
            consumer.hangup()
        self._status_server.shutdown()
        self._approval_server.shutdown()

    # ------------------------------------------------------------------ policy API

    @property
    def approval_timeout(self) -> float:
        """Seconds an approval may wait for the consumer (advertised in ``request_timeout_ms``)."""
        return self.registry.timeout

    @approval_timeout.setter
    def approval_timeout(self, seconds: float) -> None:
        if not seconds > 0:
            raise ValueError(f"approval timeout must be positive, got {seconds}")
        self.registry.timeout = seconds

    def set_policy(self, namespace: str, policy: str) -> None:
        """Set the approval policy of ``namespace`` (one of :data:`POLICIES`).

        Raises:
            ValueError: an unknown namespace or policy.

        """
        if namespace not in GATED_NAMESPACES:
            raise ValueError(f"unknown namespace {namespace!r}; expected one of {GATED_NAMESPACES}")
        if policy not in POLICIES:
            raise ValueError(f"unknown policy {policy!r}; expected one of {POLICIES}")
        self.policies[namespace] = policy

    def set_servers(self, servers: Iterable[ServerHealth]) -> None:
        """Replace the watched servers that status reports (sorted on output)."""
        self.servers = tuple(servers)

    @property
    def consumer(self) -> Hello | None:
        """The active consumer's hello, or ``None`` when no consumer is connected."""
        key = self.registry.consumer
        if key is None:
            return None
        consumer = self._consumers.get(key)
        return consumer.hello if consumer is not None else None

    async def wait_for_consumer(self, *, client_name: str | None = None) -> Hello:
        """Wait until a consumer (named ``client_name``, if given) is active; return its hello."""
        while True:
            hello = self.consumer
            if hello is not None and (client_name is None or hello.client.name == client_name):
                return hello
            changed = self._consumer_changed
            await changed.wait()

    def status(self) -> LiveStatus:
        """Take a LiveStatus snapshot now (what the status socket writes)."""
        return build_live_status(**self._status_fields(_now_ts()))

    def _status_fields(self, now: str) -> dict[str, Any]:
        """Return the arguments of ``build_live_status`` at ``now`` (the one list of inputs)."""
        hello = self.consumer
        return {
            "version": self.version,
            "pid": os.getpid(),
            "started_at": self.started_at or now,
            "written_at": now,
            "config_path": self.config_path,
            "policies": self.policies,
            "socket_path": os.fspath(self.approval_path),
            "consumer_name": hello.client.name if hello is not None else None,
            "consumer_version": hello.client.version if hello is not None else "",
            "rc_hub": self.rc_hub,
            "servers": self.servers,
        }

    # ------------------------------------------------------------------ events and audit

    def emit_audit(self, record: AuditRecord) -> bytes:
        """Record ``record``: append it to the audit log, ring it and fan it out as an ``event``.

        The JSONL audit line (when ``audit_log`` is set) is appended
        synchronously: one small local write, as the real agent does first.

        Returns the serialized event frame (what the ring replays). Never raises
        for a dead consumer (it is dropped instead), nor for a full writer queue
        (256 frames: the consumer counts as dead and is dropped, as in the real
        agent).

        Raises:
            LocalProtocolError: ``FRAME_TOO_LARGE``, the event line would exceed
                the consumers' 1 MiB cap (the real agent sends it, and the real
                consumer then disconnects, reconnects and gets it again in the
                replay); nothing is recorded, logged, ringed or sent.
            OSError: the audit log (``audit_log``) could not be written; the
                event is then neither ringed nor sent.

        """
        line = self._lines.line(record)
        if len(line) > MAX_LINE_BYTES:
            raise frame_too_large("event", len(line))
        self.audit_records.append(record)
        if self.audit_log is not None:
            with self.audit_log.open("ab") as handle:
                handle.write(encode_audit_line(record))
        self.ring.append(line)
        burst = self._burst
        if burst is not None and 0 < len(burst) < CORK_FRAMES - 1:
            burst.append(line)  # the burst's first event checked the consumer, the write is due
        else:
            self._fan_out(line)
        return line

    def _fan_out(self, line: bytes) -> None:
        """Give ``line`` to the active consumer through the core's ``forward`` and open a burst.

        The first event of a burst takes this path: the consumer lookup, the
        core's state check (``forward``) and a corked :meth:`_Consumer.enqueue`
        (which has the queue written at the end of the loop pass, or inline
        every ``CORK_FRAMES``).
        Afterwards :attr:`_burst` is that consumer's queue, so that the next
        events of the burst are one append each (:meth:`emit_audit`), until
        ``CORK_FRAMES`` are queued, the queue was written (it is empty again)
        or anything changes the consumer (:meth:`_drop`, :meth:`_promote`, a
        hang-up: each ends the burst). Never raises for a dead consumer.
        """
        self._burst = None
        consumer = self._consumers.get(self.registry.consumer)  # _active(), inlined
        if (
            consumer is not None
            and consumer.conn.state is _ACTIVE
            and consumer.enqueue(consumer.conn.forward((line,)), cork=True)
            and not consumer.closing
        ):
            self._burst = consumer.queue

    def _end_burst(self) -> None:
        self._burst = None

    def audit(
        self,
        namespace: str,
        op: str,
        shed: str,
        result: str,
        *,
        detail: str = "",
        code: str = "",
        reason: str = "",
        server: str = "",
        decision: Decision | None = None,
    ) -> bytes:
        """Emit the audit record of an operation; ``decision`` fills ``approval``/``decided_by``.

        Without a decision, ``approval`` is the namespace's effective policy
        (``none`` for an ungated namespace such as ``egress``).
        """
        if decision is not None:
            approval = decision.policy
        elif namespace in GATED_NAMESPACES:
            approval = effective_policy(self.policies[namespace])
        else:
            approval = ""
        return self.emit_audit(
            AuditRecord(
                ts=_now_ts(),
                server=server,
                shed=shed,
                ns=namespace,
                op=op,
                result=result,
                detail=detail,
                code=code,
                reason=reason,
                approval=approval,
                decided_by=(decision.decided_by or "") if decision else "",
                scope=decision.scope if decision else "",
                ttl=decision.ttl if decision else "",
            )
        )

    # ------------------------------------------------------------------ approvals

    async def request_approval(
        self,
        namespace: str,
        op: str,
        shed: str,
        *,
        server: str = "",
        detail: str | None = None,
        audit_denial: bool = True,
    ) -> Decision:
        """Gate one credential operation the way the real agent does; always fails closed.

        ``approve-all``/``deny-all`` decide at once; ``shed-desktop`` asks the
        active consumer (denied at once without one) and waits up to
        :attr:`approval_timeout`. A denial is audited as the real agent
        audits it (``result: denied``) unless ``audit_denial`` is false; an
        approval is left for the caller to audit with the operation's result
        (:meth:`audit` with ``decision=``). If the caller is cancelled, the
        request is withdrawn. Never raises for consumer misbehaviour.

        Raises:
            ValueError: ``namespace`` has no approval policy (``egress``, a typo).
            LocalProtocolError: ``FRAME_TOO_LARGE``, the ``approval_request`` would
                exceed the consumers' 1 MiB line cap (a huge ``shed`` or ``server``);
                nothing is left pending.
            OSError: the audit log (``audit_log``) could not be written.

        """
        if namespace not in GATED_NAMESPACES:
            raise ValueError(f"{namespace!r} has no approval policy")
        decision = decide_by_policy(self.policies[namespace])
        if decision is None:
            decision = await self._ask_consumer(
                namespace,
                op,
                shed,
                server,
                DEFAULT_DETAILS.get(namespace, "") if detail is None else detail,
            )
        if not decision.approved and audit_denial:
            self.emit_audit(
                denial_audit(
                    decision, ts=_now_ts(), namespace=namespace, op=op, shed=shed, server=server
                )
            )
        return decision

    async def _ask_consumer(
        self, namespace: str, op: str, shed: str, server: str, detail: str
    ) -> Decision:
        request_id = _new_id()
        opened = self.registry.open(
            request_id=request_id,
            namespace=namespace,
            op=op,
            shed=shed,
            detail=detail,
            server=server,
            now=self._clock(),
            wall=time.time(),
        )
        if isinstance(opened, Decision):
            return opened
        waiter = _Waiter(self._new_event())
        self._waiters[request_id] = waiter
        try:
            consumer = self._consumers.get(opened.connection)
            if consumer is None or consumer.conn.state is not _ACTIVE:
                self._drop(opened.connection)  # it is going away: fail closed now
            elif not consumer.enqueue(consumer.conn.send(opened.frame)):
                self._drop(consumer.key)
            if waiter.decision is None:
                if self._expiry_scope is not None:  # the expiry task ends it in time
                    if opened.deadline < self._expiry_at:  # the timeout was shortened
                        self._expiry_scope.cancel()
                    await waiter.event.wait()
                else:  # not serving (a test double driving the API): a timer of its own
                    with anyio.move_on_after(max(0.0, opened.deadline - anyio.current_time())):
                        await waiter.event.wait()
                    if waiter.decision is None:
                        now = max(anyio.current_time(), opened.deadline)
                        self._deliver_all(self.registry.expire(now))
        finally:
            self._waiters.pop(request_id, None)
            if waiter.decision is None:
                self.registry.cancel(request_id)  # withdrawn: the caller went away
        if waiter.decision is None:  # pragma: no cover - expire() above always settles it
            return Decision(approved=False, outcome=Outcome.TIMEOUT, policy="shed-desktop")
        return waiter.decision

    async def _expire_approvals(self) -> None:
        """Fail approvals closed at their deadlines: one timer for all of them.

        A per-request cancel scope costs a timer per approval; this task
        sleeps until the earliest pending deadline instead (or one timeout
        ahead when nothing is pending, which no new request can undercut
        unless the timeout shrinks; :meth:`_ask_consumer` then wakes it).
        """
        try:
            while True:
                now = anyio.current_time()
                self._deliver_all(self.registry.expire(now))
                upcoming = self.registry.next_deadline()
                self._expiry_at = now + self.registry.timeout if upcoming is None else upcoming
                with anyio.CancelScope() as self._expiry_scope:
                    await anyio.sleep_until(self._expiry_at)
                if not self._expiry_scope.cancelled_caught:  # a timer may fire a hair early
                    due = max(anyio.current_time(), self._expiry_at)
                    self._deliver_all(self.registry.expire(due))
        finally:
            self._expiry_scope = None
            self._expiry_at = math.inf

    def _deliver_all(self, decisions: Iterable[Decision]) -> None:
        for decision in decisions:
            waiter = self._waiters.get(decision.request_id or "")
            if waiter is not None and waiter.decision is None:
                waiter.decision = decision
                waiter.event.set()

    @property
    def pending_approvals(self) -> int:
        """How many approvals await the consumer right now."""
        return self.registry.pending

    def _active(self) -> _Consumer | None:
        key = self.registry.consumer
        return None if key is None else self._consumers.get(key)

    def _notify_consumer_change(self) -> None:
        self._consumer_changed.set()
        self._consumer_changed = anyio.Event()

    # ------------------------------------------------------------------ status socket

    async def _serve_status(self, stream: anyio.abc.SocketStream) -> None:
        """Write one LiveStatus line; what the socket does not take at once gets the deadline.

        The line nearly always fits the socket buffer, so the common path is
        one direct write of the cached line (:meth:`_status_line`): no
        encode, no timer, no event-loop pass.
        """
        pump = SocketPump(stream)
        try:
            rest = pump.send_now(self._status_line())
        except anyio.BrokenResourceError:  # the reader already left
            return
        if rest:
            with anyio.move_on_after(self.write_timeout):
                await pump.send(rest)

    def _status_line(self) -> bytes:
        """Return :meth:`status` encoded, encoding again only when one of its inputs changed.

        ``written_at`` has whole seconds, so every connection within one second
        with the same policies, consumer and servers gets the same bytes.
        """
        fields = self._status_fields(_now_ts())
        key = tuple(fields.values())  # compared by value: the live policies dict included
        if key != self._status_key:
            # Kept with a copy of every dict, so that a later change in place still differs.
            self._status_key = tuple(
                dict(value) if isinstance(value, dict) else value for value in key
            )
            self._status_bytes = encode_live_status(build_live_status(**fields))
        return self._status_bytes

    # ------------------------------------------------------------------ approval socket

    async def _serve_approval(self, stream: anyio.abc.SocketStream) -> None:
        conn = AgentConnection(
            accepted_at=self._clock(),
            hello_timeout=self.hello_timeout,
            ping_interval=self.ping_interval,
        )
        hello: Hello | None = None
        backlog: list[object] = []
        pump = SocketPump(stream)
        with anyio.move_on_after(self.hello_timeout):
            while hello is None and not conn.closed:
                data = await pump.receive()
                for event in conn.receive_data(data):
                    if isinstance(event, Hello):
                        hello = event
                    elif hello is not None:
                        backlog.append(event)
        if hello is None or conn.closed or self._stopping:
            conn.handle_timeout(anyio.current_time())
            return  # silent close: no frame, no consumer change
        ack = HelloAck.accepted_ack(
            id=_new_id(),
            ts=_now_ts(),
            version=self.version,
            gate_namespaces=gate_namespaces(self.policies),
            request_timeout_ms=self.registry.request_timeout_ms,
            null_when_empty=self.ack_null_when_empty,
        )
        try:
            with anyio.fail_after(self.write_timeout):
                await pump.send(conn.accept(ack, now=self._clock()))
        except (TimeoutError, OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            return  # never promoted
        self._next_key += 1
        consumer = _Consumer(self._next_key, conn, hello, stream, pump, on_hangup=self._end_burst)
        self._consumers[consumer.key] = consumer
        try:
            self._promote(consumer)
            consumer.enqueue(conn.forward(self.ring.replay(hello.replay_events)))
            with consumer.scope:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._writer, consumer)
                    tg.start_soon(self._pinger, consumer)
                    await self._reader(consumer, tg, backlog)
                    tg.cancel_scope.cancel()
        finally:
            consumer.reads.close()
            self._drop(consumer.key)
            del self._consumers[consumer.key]
            consumer.closing = True
            conn.close()

    def _drop(self, key: Hashable) -> None:
        """Demote ``key`` now: no longer the consumer, its approvals denied. Idempotent."""
        self._burst = None
        was_consumer = self.registry.consumer == key
        self._deliver_all(self.registry.demote(key))
        if was_consumer:
            self._notify_consumer_change()

    def _promote(self, consumer: _Consumer) -> None:
        self._burst = None
        promotion = self.registry.promote(consumer.key)
        self._deliver_all(promotion.failed)
        if promotion.superseded is not None:
            old = self._consumers.get(promotion.superseded)
            if old is not None and old.conn.state is AgentState.ACTIVE:
                old.enqueue(old.conn.supersede(HelloAck.superseded_ack(id=_new_id(), ts=_now_ts())))
                old.finish(SUPERSEDE_FLUSH)
        self._notify_consumer_change()

    async def _reader(
        self, consumer: _Consumer, tg: anyio.abc.TaskGroup, backlog: list[object]
    ) -> None:
        events: Sequence[object] = backlog
        while True:
            for event in events:
                if isinstance(event, ConnectionClosed):
                    self._drop(consumer.key)
                    return
                if isinstance(event, ApprovalResponse):
                    decision = self.registry.resolve(consumer.key, event)
                    if decision is not None:  # _deliver_all((decision,)), inlined
                        waiter = self._waiters.get(event.request_id)
                        if waiter is not None and waiter.decision is None:
                            waiter.decision = decision
                            waiter.event.set()
                elif isinstance(event, (TokenGet, CredentialGet)):
                    tg.start_soon(self._answer_credential, consumer, event)
                # pong: liveness only; skipped lines: nothing to do
            data = await consumer.reads.receive()
            events = consumer.conn.receive_data(data)
            if not data and not events:
                self._drop(consumer.key)
                return

    async def _writer(self, consumer: _Consumer) -> None:
        """Write corked frames and what the socket did not take, in order, under the deadline."""
        queue = consumer.queue
        try:
            while not consumer.hung_up:
                if not queue:
                    consumer.blocked = False
                    if consumer.closing:
                        break
                    await consumer.wakeup.wait()
                    consumer.wakeup = self._new_event()
                    continue
                if consumer.raw is not None and not consumer.blocked:
                    if not consumer.flush():
                        break  # the write failed: the connection is being dropped
                    if not consumer.blocked:
                        continue  # the socket took it all
                # Everything queued meanwhile goes out in one write, under one deadline.
                data = b"".join(queue)
                queue.clear()
                with anyio.fail_after(self.write_timeout):
                    await consumer.pump.send(data)
        except (TimeoutError, OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # a failed write drops the consumer
        consumer.hangup()

    async def _pinger(self, consumer: _Consumer) -> None:
        conn = consumer.conn
        while (deadline := conn.next_deadline()) is not None:
            await anyio.sleep_until(deadline)
            for event in conn.handle_timeout(anyio.current_time()):
                if isinstance(event, PingDue) and conn.state is AgentState.ACTIVE:
                    consumer.enqueue(conn.send(Ping(id=_new_id(), ts=_now_ts())))

    async def _answer_credential(
        self, consumer: _Consumer, request: TokenGet | CredentialGet
    ) -> None:
        """Mint for ``request`` and answer it; never writes a reply over the consumers' cap.

        A request whose reply cannot fit even without a credential (an ``id``
        or ``server`` near the 1 MiB inbound cap, echoed back) is not minted
        for and not answered: the consumer's own request timeout fails it
        closed (the real agent writes the oversized reply, and the real
        consumer disconnects). A credential that makes the reply too long is
        replaced by an error reply.
        """
        refusal = credential_reply(request, None, _TOO_LARGE, id=_new_id(), ts=_now_ts())
        if len(encode_frame(refusal)) > MAX_LINE_BYTES:
            log.warning(
                "not answering %s %r...: the reply would exceed the %d-byte line cap",
                type(request).__name__,
                request.id[:40],
                MAX_LINE_BYTES,
            )
            return
        minted: MintedCredential | None = None
        error = ""
        if self.minter is None:
            error = no_minter_error(request)
        else:
            try:
                csr = request.csr if isinstance(request, CredentialGet) else ""
                minted = await self.minter(request.server, csr)
            except MintError as exc:
                error = str(exc)
            except Exception as exc:  # a broken minter must not take the channel down
                log.exception("credential minter failed for %r", request.server)
                error = f"minting failed: {exc}"
        reply = credential_reply(request, minted, error, id=_new_id(), ts=_now_ts())
        # delivered only if this connection is still the active consumer
        if self.registry.consumer == consumer.key and consumer.conn.state is AgentState.ACTIVE:
            try:
                data = consumer.conn.send(reply)
            except LocalProtocolError:  # FRAME_TOO_LARGE: the minted credential made it too long
                refusal = credential_reply(request, None, _TOO_LARGE, id=_new_id(), ts=_now_ts())
                data = consumer.conn.send(refusal)  # as long as the one measured above: it fits
            consumer.enqueue(data)
