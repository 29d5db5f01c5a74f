"""Sans-IO approval-channel connections for both roles (h11 style).

``receive_data(bytes)`` (``b""`` = EOF) returns events; ``send``/``accept``/
``supersede`` return the bytes to write; deadlines are inputs
(``handle_timeout(now)``, ``next_deadline()``). Neither class ever raises for
the peer's bytes: everything the peer can do maps to an event, as the real
programs map it to a skip or a silent close. Both are built on the connection
contract (:class:`shedproto.Contract`, tables in ``_state``): frames before a
fatal line are delivered, then :class:`ConnectionClosed` with the error. The
consumer answers each ``ping`` by itself when it is told the wall time
(``receive_data(data, wall=...)``): the ``pong`` waits in its outbox
(:meth:`ConsumerConnection.data_to_send`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TypeAlias

import msgspec

from shedproto import (
    Contract,
    ErrorCode,
    FramingPolicy,
    LineBuffer,
    LineSkipped,
    LocalProtocolError,
    RemoteProtocolError,
    decoder_for,
)
from shedproto._contract import ConnectionClosed as _Closed
from shedproto._framing import BlankLines, EofTail, OverCap

from ._constants import HELLO_TIMEOUT, MAX_LINE_BYTES, PING_INTERVAL
from ._state import (
    AGENT_SENDS,
    AGENT_TABLE,
    CONSUMER_SENDS,
    CONSUMER_TABLE,
    AgentInput,
    AgentState,
    ConsumerInput,
    ConsumerState,
)
from ._time import format_timestamp
from .types import (
    AgentFrame,
    ApprovalRequest,
    ApprovalResponse,
    ConsumerFrame,
    CredentialGet,
    CredentialResponse,
    Event,
    Hello,
    HelloAck,
    Ping,
    Pong,
    TokenGet,
    TokenResponse,
    decode_agent_frame,
    decode_consumer_frame,
    encode_approval_response,
    encode_frame,
)

__all__ = [
    "AGENT_FRAMING",
    "AgentConnection",
    "AgentConnectionEvent",
    "CloseReason",
    "ConnectionClosed",
    "ConsumerConnection",
    "ConsumerConnectionEvent",
    "LineSkipped",
    "MAX_CSR_BYTES",
    "PingDue",
    "frame_too_large",
    "validate_csr",
]

AGENT_FRAMING = FramingPolicy(
    max_frame_bytes=MAX_LINE_BYTES - 1,  # the real cap counts the newline; ours does not
    strip_cr=True,
    blank_lines=BlankLines.KEEP,  # an empty *first* line is "not hello"; later ones are skipped
    eof_tail=EofTail.DROP,
    over_cap=OverCap.RAISE,
)
"""Inbound framing of the approval channel (both directions use the same rules)."""


_ACTIVE = AgentState.ACTIVE
_CLOSED = AgentState.CLOSED
_ACTIVE_SENDS = frozenset(
    frame for frame in AGENT_SENDS if AGENT_TABLE.transitions.get((_ACTIVE, frame)) is _ACTIVE
)
"""Frame classes an active agent connection sends without changing state (all of them)."""
_CONSUMER_CLOSED = ConsumerState.CLOSED
"""Bound once (these three): an enum member read through its class costs ~0.1 µs on 3.11."""
_CONSUMER_ACTIVE = ConsumerState.ACTIVE
_CONSUMER_FAST = frozenset(
    frame
    for frame in (ApprovalRequest, Event, TokenResponse, CredentialResponse)
    if CONSUMER_TABLE.transitions.get((_CONSUMER_ACTIVE, frame)) is _CONSUMER_ACTIVE
)
"""Frames an active consumer receives without changing state and without an answer of its own
(a ``ping``, answered with a ``pong``, and a ``hello_ack`` take the general path)."""
_decode_agent = decoder_for(AgentFrame).decode
"""The one typed decoder of agent frames (:func:`decode_agent_frame` without its error
classification, which only the general path needs)."""


class CloseReason(Enum):
    """Why a connection ended."""

    EOF = "eof"
    """The peer closed its side."""
    NOT_HELLO = "not_hello"
    """The first line was not a ``hello`` (malformed, another type, empty)."""
    HELLO_TIMEOUT = "hello_timeout"
    """No complete first line within the hello deadline."""
    LINE_TOO_LONG = "line_too_long"
    """A line exceeded 1 MiB."""
    LOCAL = "local"
    """This side called ``close()``."""


@dataclass(frozen=True)
class ConnectionClosed(_Closed):
    """The connection is over; close the socket without writing anything more.

    ``error`` explains a protocol-violation close (``None`` for EOF, timeouts, local close).
    """

    reason: CloseReason


@dataclass(frozen=True)
class PingDue:
    """Time to send a keepalive ``ping`` (agent side); the next one is due ``interval`` later."""

    at: float


AgentConnectionEvent: TypeAlias = (
    Hello
    | ApprovalResponse
    | Pong
    | TokenGet
    | CredentialGet
    | LineSkipped
    | ConnectionClosed
    | PingDue
)
"""What :meth:`AgentConnection.receive_data` / ``handle_timeout`` return."""

ConsumerConnectionEvent: TypeAlias = (
    HelloAck
    | ApprovalRequest
    | Event
    | Ping
    | TokenResponse
    | CredentialResponse
    | LineSkipped
    | ConnectionClosed
)
"""What :meth:`ConsumerConnection.receive_data` returns."""


class AgentConnection(Contract[AgentState]):
    """The agent side of one accepted approval-channel connection.

    Create it at accept time with ``accepted_at`` (monotonic seconds). The
    first complete line must be a ``hello`` within ``hello_timeout``; any
    other first line, EOF, an oversized line or the deadline yields
    :class:`ConnectionClosed` and nothing is ever written (the real agent's
    silent close). After :meth:`accept`, malformed lines, unknown types and
    a second ``hello`` yield :class:`LineSkipped`; a line over 1 MiB closes.
    """

    def __init__(
        self,
        *,
        accepted_at: float,
        hello_timeout: float = HELLO_TIMEOUT,
        ping_interval: float = PING_INTERVAL,
        framing: FramingPolicy = AGENT_FRAMING,
    ) -> None:
        super().__init__(AGENT_TABLE, AgentState.AWAITING_HELLO)
        self.hello: Hello | None = None
        """The consumer's hello, once received."""
        self.hello_deadline = accepted_at + hello_timeout
        self.ping_interval = ping_interval
        self._next_ping: float | None = None
        self._lines = LineBuffer(framing)

    @property
    def closed(self) -> bool:
        """True once the connection is over (state ``CLOSED``)."""
        return self.state is _CLOSED

    def receive_data(self, data: bytes) -> list[AgentConnectionEvent]:
        """Feed bytes from the socket (``b""`` at EOF); return the resulting events in order.

        Never raises for the peer's data. After a :class:`ConnectionClosed`
        (or in state ``CLOSED``) further data is ignored.
        """
        if self.state is _CLOSED:
            return []
        events: list[AgentConnectionEvent] = []
        lines, error = self._split(self._lines, data)
        self._handle_lines(lines, events)
        if error is not None:
            if not self.closed:
                self._remote(AgentInput.OVERSIZE)
                events.append(ConnectionClosed(CloseReason.LINE_TOO_LONG, self._fail(error)))
            return events
        if not data and not self.closed:
            self._remote(AgentInput.EOF)
            events.append(ConnectionClosed(CloseReason.EOF))
        return events

    def _handle_lines(self, lines: list[bytes], events: list[AgentConnectionEvent]) -> None:
        for line in lines:
            state = self.state
            if state is _CLOSED:
                return
            try:
                if not line or line.isspace():
                    raise RemoteProtocolError(ErrorCode.MALFORMED_FRAME, "empty line")
                frame = decode_consumer_frame(line)
                if not self._remote(type(frame)):
                    continue  # a superseded connection is quiet
            except RemoteProtocolError as exc:
                if state is AgentState.AWAITING_HELLO:  # the real agent's silent close
                    events.append(ConnectionClosed(CloseReason.NOT_HELLO, self._fail(exc)))
                elif state not in self.table.quiet:
                    events.append(LineSkipped(exc))
                continue
            if isinstance(frame, Hello):
                self.hello = frame
            events.append(frame)

    def accept(self, ack: HelloAck, *, now: float) -> bytes:
        """Write the accepted ``ack`` and start the keepalive (first ping at ``now + interval``).

        Write these bytes *before* promoting the connection in the registry.

        Raises:
            LocalProtocolError: no hello yet, already accepted, or ``ack`` is not accepted.

        """
        if not ack.accepted:
            raise LocalProtocolError(ErrorCode.INVALID_ARGUMENT, "accept() needs an accepted ack")
        self._local(AgentInput.ACCEPT)
        self._next_ping = now + self.ping_interval
        return encode_frame(ack)

    def supersede(self, ack: HelloAck) -> bytes:
        """Write the superseded ``ack``; afterwards the connection only waits to be closed.

        Raises:
            LocalProtocolError: the connection is not active, or ``ack`` is accepted.

        """
        if ack.accepted:
            raise LocalProtocolError(
                ErrorCode.INVALID_ARGUMENT, "supersede() needs a superseded ack"
            )
        self._local(AgentInput.SUPERSEDE)
        self._next_ping = None
        return encode_frame(ack)

    def send(
        self, frame: ApprovalRequest | Event | Ping | TokenResponse | CredentialResponse
    ) -> bytes:
        """Encode a frame for the active consumer.

        Raises:
            LocalProtocolError: the connection is not active (before the ack,
                superseded or closed: the real agent never writes there), or
                ``frame`` is a ``hello_ack`` (use :meth:`accept`/:meth:`supersede`);
                ``FRAME_TOO_LARGE`` when the line would exceed the consumers' cap
                (:data:`MAX_LINE_BYTES` with its newline: the real Rust consumer
                disconnects on a longer one). The state is unchanged.

        """
        if self.state is _ACTIVE and type(frame) in _ACTIVE_SENDS:
            data = encode_frame(frame)  # (ACTIVE, frame) stays ACTIVE: skip the checks below
            if len(data) > MAX_LINE_BYTES:
                raise frame_too_large(type(frame).__name__, len(data))
            return data
        if isinstance(frame, HelloAck):
            raise LocalProtocolError(
                ErrorCode.INVALID_ARGUMENT, "send hello_ack with accept() or supersede()"
            )
        if not isinstance(frame, AGENT_SENDS):
            raise LocalProtocolError(
                ErrorCode.INVALID_ARGUMENT, f"the agent does not send {type(frame).__name__}"
            )
        data = encode_frame(frame)
        if len(data) > MAX_LINE_BYTES:
            raise frame_too_large(type(frame).__name__, len(data))
        self._local(type(frame))
        return data

    def forward(self, lines: Sequence[bytes]) -> bytes:
        """Pass already-encoded ``event`` lines (the replay ring, fan-out) to the active consumer.

        The lines are written byte-identical; only the state is checked.

        Raises:
            LocalProtocolError: the connection is not active.

        """
        if self.state is not _ACTIVE:  # (ACTIVE, Event) stays ACTIVE: skip the lookup
            self._local(Event)  # raises
        return lines[0] if len(lines) == 1 else b"".join(lines)

    def next_deadline(self) -> float | None:
        """When :meth:`handle_timeout` next has something to do (``None``: nothing scheduled)."""
        if self.state is AgentState.AWAITING_HELLO:
            return self.hello_deadline
        if self.state is AgentState.ACTIVE:
            return self._next_ping
        return None

    def handle_timeout(self, now: float) -> list[AgentConnectionEvent]:
        """Advance time to ``now``: the hello deadline closes, a due ping yields :class:`PingDue`.

        Several missed intervals yield a single :class:`PingDue`.
        """
        if self.state is AgentState.AWAITING_HELLO and now >= self.hello_deadline:
            self._remote(AgentInput.HELLO_TIMEOUT)
            return [ConnectionClosed(CloseReason.HELLO_TIMEOUT)]
        if (
            self.state is AgentState.ACTIVE
            and self._next_ping is not None
            and now >= self._next_ping
        ):
            due = self._next_ping
            while self._next_ping <= now:
                self._next_ping += self.ping_interval
            return [PingDue(due)]
        return []

    def close(self) -> None:
        """Mark the connection closed locally; later data is ignored and sends raise."""
        self._local(AgentInput.CLOSE)


MAX_CSR_BYTES = 16384
"""The largest CSR a client may relay in ``credential.get``."""

_FORBIDDEN_CSR_MARKERS = (
    "private key",
    "begin rsa private",
    "begin ec private",
    "begin private key",
    "begin encrypted private key",
    "pkcs#8",
    "pkcs8",
    "mighageambmgbyqgsm49",
    "mbmgbyqgsm49agegccqgsm49aweh",
    "mhccaqee",
    "bgkqhkig9w0baqefaasc",
)


def frame_too_large(kind: str, size: int) -> LocalProtocolError:
    """Return the error for an agent frame of ``size`` bytes (newline included) over the cap."""
    return LocalProtocolError(
        ErrorCode.FRAME_TOO_LARGE,
        f"{kind} frame of {size} bytes exceeds the consumers' {MAX_LINE_BYTES}-byte line cap",
    )


def validate_csr(csr: str) -> None:
    """Check that ``csr`` is safe to relay: at most 16384 bytes, no private-key markers.

    Markers (PEM armour and the base64 prefixes of PKCS#8/SEC1 keys) match
    case-insensitively, as the shed fixtures require.

    Raises:
        LocalProtocolError: ``INVALID_ARGUMENT`` naming the problem.

    """
    if len(csr.encode()) > MAX_CSR_BYTES:
        raise LocalProtocolError(
            ErrorCode.INVALID_ARGUMENT, f"CSR is larger than {MAX_CSR_BYTES} bytes"
        )
    folded = csr.lower()
    for marker in _FORBIDDEN_CSR_MARKERS:
        if marker in folded:
            raise LocalProtocolError(
                ErrorCode.INVALID_ARGUMENT,
                "the CSR carries private-key material; only the public CSR may be sent",
            )


class ConsumerConnection(Contract[ConsumerState]):
    """The consumer (app) side of the approval channel.

    Send :class:`Hello` first; the accepted ``hello_ack`` makes the
    connection active. Approval requests are remembered until answered, so
    :meth:`send` refuses a response to a request this connection never got
    (or already answered). A superseded ``hello_ack`` is delivered as an
    event and moves the connection to ``SUPERSEDED``: nothing may be sent
    after it. Frames the state does not expect are :class:`LineSkipped`.
    """

    def __init__(self, *, framing: FramingPolicy = AGENT_FRAMING) -> None:
        super().__init__(CONSUMER_TABLE, ConsumerState.IDLE)
        self.ack: HelloAck | None = None
        """The accepted ack, once received (``supports_credential_get`` etc.)."""
        self.outstanding: dict[str, ApprovalRequest] = {}
        """Approval requests received and not yet answered, by id."""
        self._lines = LineBuffer(framing)

    @property
    def closed(self) -> bool:
        """True once the connection is over (state ``CLOSED``)."""
        return self.state is _CONSUMER_CLOSED

    def receive_data(
        self, data: bytes, *, wall: float | None = None
    ) -> list[ConsumerConnectionEvent]:
        """Feed bytes from the agent (``b""`` at EOF); return the resulting events.

        ``wall`` is the time of the read (Unix seconds): when given, each
        ``ping`` is answered with a ``pong`` stamped with it, queued for
        :meth:`data_to_send` (the ping is still returned). Never raises for
        the peer's data.

        Raises:
            ValueError: ``wall`` is not a finite time in the years 1..9999.

        """
        if self.state is _CONSUMER_CLOSED:
            return []
        events: list[ConsumerConnectionEvent] = []
        lines, error = self._split(self._lines, data)
        self._handle_lines(lines, events, wall)
        if error is not None:
            if not self.closed:
                self._remote(ConsumerInput.OVERSIZE)
                events.append(ConnectionClosed(CloseReason.LINE_TOO_LONG, self._fail(error)))
            return events
        if not data:
            self._remote(ConsumerInput.EOF)
            events.append(ConnectionClosed(CloseReason.EOF))
        return events

    def _handle_lines(
        self, lines: list[bytes], events: list[ConsumerConnectionEvent], wall: float | None
    ) -> None:
        """Turn ``lines`` into events.

        Fast path: a line that decodes to a frame in
        ``_CONSUMER_FAST`` while the connection is active keeps it active, so
        the table lookup is skipped; only a request is remembered. Anything
        else (a bad line, a ping, an ack, another state) goes through
        :meth:`_handle_line`, which decodes it again and classifies errors.
        """
        outstanding = self.outstanding
        for line in lines:
            try:
                frame = _decode_agent(line)
            except msgspec.DecodeError:
                self._handle_line(line, events, wall)
                continue
            kind = type(frame)
            if kind in _CONSUMER_FAST and self.state is _CONSUMER_ACTIVE:
                if kind is ApprovalRequest:
                    outstanding[frame.id] = frame
                events.append(frame)
            else:
                self._handle_line(line, events, wall)

    def _handle_line(
        self, line: bytes, events: list[ConsumerConnectionEvent], wall: float | None
    ) -> None:
        """Handle one line by the general rules (skips, transitions, pongs)."""
        if not line or line.isspace():
            return
        try:
            frame = decode_agent_frame(line)
            if isinstance(frame, HelloAck):
                self._remote(ConsumerInput.ACCEPTED if frame.accepted else ConsumerInput.SUPERSEDED)
            else:
                self._remote(type(frame))
        except RemoteProtocolError as exc:
            events.append(LineSkipped(exc))
            return
        if isinstance(frame, HelloAck) and frame.accepted:
            self.ack = frame
        elif isinstance(frame, HelloAck):
            self.outstanding.clear()  # the agent failed them closed
        elif isinstance(frame, ApprovalRequest):
            self.outstanding[frame.id] = frame
        elif isinstance(frame, Ping) and wall is not None:
            self.outbox.put(encode_frame(Pong(id=frame.id, ts=format_timestamp(wall))))
        events.append(frame)

    def send(self, frame: ConsumerFrame) -> bytes:
        """Encode ``frame`` for the agent, checking it is allowed now.

        Raises:
            LocalProtocolError: ``UNEXPECTED_EVENT`` when the state does not
                allow it (hello twice, anything before the accepted ack or
                after being superseded); ``INVALID_ARGUMENT`` for a response
                to an unknown request or an unsafe CSR;
                ``VERSION_UNSUPPORTED`` for ``credential.get`` to an agent
                that does not advertise it. The state is unchanged on error.

        """
        if isinstance(frame, Hello):
            self._local(Hello)
            return encode_frame(frame)
        # check the state before side effects (a frame of the wrong role is refused below)
        self._check_local(type(frame) if type(frame) in CONSUMER_SENDS else ApprovalResponse)
        if isinstance(frame, ApprovalResponse):
            if frame.request_id not in self.outstanding:
                raise LocalProtocolError(
                    ErrorCode.INVALID_ARGUMENT,
                    f"no outstanding approval request {frame.request_id!r} on this connection",
                )
            del self.outstanding[frame.request_id]
        elif isinstance(frame, CredentialGet):
            if self.ack is None or not self.ack.supports_credential_get:
                raise LocalProtocolError(
                    ErrorCode.VERSION_UNSUPPORTED,
                    "the agent does not support `credential.get`; upgrade shed-host-agent",
                )
            if frame.csr:
                validate_csr(frame.csr)
        elif not isinstance(frame, (Pong, TokenGet)):
            raise LocalProtocolError(
                ErrorCode.INVALID_ARGUMENT, f"the consumer does not send {type(frame).__name__}"
            )
        self._local(type(frame))
        return encode_frame(frame)

    def respond(
        self,
        request_id: str,
        decision: str,
        *,
        id: str,
        ts: str,
        decided_by: str = "",
        scope: str = "",
        ttl: str = "",
    ) -> bytes:
        """Return what ``send(ApprovalResponse(...))`` returns for these fields, with its checks.

        The per-approval fast path: while the connection is active
        and ``request_id`` is outstanding (``(ACTIVE, ApprovalResponse)`` stays
        ``ACTIVE``) it forgets the request and encodes the line with
        ``shedproto.host_agent.types.encode_approval_response()``, no Struct
        built; otherwise it builds the frame and lets :meth:`send` refuse it.

        Raises:
            LocalProtocolError: as :meth:`send` (not active, unknown or answered request).

        """
        if self.state is _CONSUMER_ACTIVE and self.outstanding.pop(request_id, None) is not None:
            return encode_approval_response(
                id, ts, request_id, decision, decided_by=decided_by, scope=scope, ttl=ttl
            )
        return self.send(
            ApprovalResponse(
                id=id,
                ts=ts,
                request_id=request_id,
                decision=decision,
                decided_by=decided_by,
                scope=scope,
                ttl=ttl,
            )
        )

    def close(self) -> None:
        """Mark the connection closed locally."""
        self._local(ConsumerInput.CLOSE)
