"""Host-agent adapters: the approval channel (v2) and the status socket (schema 1).

Approval channel: the client's bytes go to an :class:`AgentConnection` (the
agent's view) and the agent's bytes to a :class:`ConsumerConnection` (the
app's view); each frame one side decodes is mirrored into the other side's
connection (``send``/``accept``/``supersede``), so the core's state tables
decide what is legal when. ``approval_response`` and ``token``/``credential``
answers are matched against the requests actually seen; the agent closing
while one is owed is ``truncated``. A ``credential.get`` to an agent whose
``hello.ack`` does not advertise it is a ``version_mismatch`` (the channel's
versioning is its capability list). The channel has no
error-code registry (``token.response``/``credential.response`` carry free
text in ``error``), so no ``unknown_error_code`` is ever reported for it.

Status socket: the agent writes one LiveStatus document and closes; the
client writes nothing. The document is checked at end of stream (none at
all is ``truncated``; another ``schema`` is a ``version_mismatch``).
"""

from __future__ import annotations

from shedproto._errors import ErrorCode, LocalProtocolError, RemoteProtocolError
from shedproto.host_agent import (
    AgentConnection,
    ApprovalRequest,
    CloseReason,
    ConnectionClosed,
    ConsumerConnection,
    CredentialGet,
    CredentialResponse,
    Event,
    HelloAck,
    LineSkipped,
    Ping,
    PingDue,
    TokenGet,
    TokenResponse,
    decode_live_status,
)

from ._base import Observer
from ._diagnostic import DiagnosticKind, Direction

__all__ = ["ApprovalObserver", "StatusObserver"]

MAX_STATUS_BYTES = 16 << 20
"""The largest status document the observer buffers (the status client's own cap)."""

_LOCAL_KINDS: dict[ErrorCode, DiagnosticKind] = {
    ErrorCode.INVALID_ARGUMENT: "unsolicited_answer",
    ErrorCode.UNEXPECTED_EVENT: "illegal_state",
    ErrorCode.VERSION_UNSUPPORTED: "version_mismatch",
}


class ApprovalObserver(Observer):
    """Observer of one approval-channel connection (consumer = client, agent = server)."""

    protocol = "host-agent"

    def __init__(self, connection: int) -> None:
        super().__init__(connection)
        self.agent = AgentConnection(accepted_at=0.0, hello_timeout=float("inf"))
        self.consumer = ConsumerConnection()
        self._asked: set[str] = set()

    def _client_bytes(self, data: bytes) -> None:
        for event in self.agent.receive_data(data):
            if isinstance(event, ConnectionClosed):
                self._closed("c2s", event)
                continue
            if isinstance(event, PingDue):
                continue
            index = self._frame("c2s")
            if isinstance(event, LineSkipped):
                self.report_error("c2s", event.error, frame=index)
                continue
            if isinstance(event, (TokenGet, CredentialGet)):
                self._asked.add(event.id)
            try:
                self.consumer.send(event)
            except LocalProtocolError as exc:
                kind = _LOCAL_KINDS.get(exc.code, "illegal_state")
                self.report(kind, "c2s", exc.message, frame=index)

    def _server_bytes(self, data: bytes) -> None:
        for event in self.consumer.receive_data(data):
            if isinstance(event, ConnectionClosed):
                self._closed("s2c", event)
                continue
            index = self._frame("s2c")
            if isinstance(event, LineSkipped):
                self.report_error("s2c", event.error, frame=index)
            elif isinstance(event, HelloAck):
                self._ack(event, index)
            elif isinstance(event, (TokenResponse, CredentialResponse)):
                if event.in_reply_to not in self._asked:
                    self.report(
                        "unsolicited_answer",
                        "s2c",
                        f"{event.__struct_config__.tag} answers {event.in_reply_to!r}, "
                        "a request never sent",
                        path="$.in_reply_to",
                        frame=index,
                    )
                self._asked.discard(event.in_reply_to)
                self._agent_sent(event, index)
            else:
                self._agent_sent(event, index)

    def _ack(self, ack: HelloAck, index: int) -> None:
        try:
            if ack.accepted:
                self.agent.accept(ack, now=0.0)
            else:
                self.agent.supersede(ack)
        except LocalProtocolError as exc:
            self.report("illegal_state", "s2c", exc.message, frame=index)

    def _agent_sent(
        self,
        frame: ApprovalRequest | Event | Ping | TokenResponse | CredentialResponse,
        index: int,
    ) -> None:
        if self.agent.closed:
            return
        try:
            self.agent.send(frame)
        except LocalProtocolError as exc:
            self.report("illegal_state", "s2c", exc.message, frame=index)

    def _closed(self, side: Direction, event: ConnectionClosed) -> None:
        if side == "s2c" and event.reason is CloseReason.EOF and self._asked:
            owed = ", ".join(sorted(self._asked))
            self.report("truncated", "s2c", f"the agent closed with answers owed to {owed}")
        if event.reason is CloseReason.EOF or event.error is None:
            return
        if event.reason is CloseReason.NOT_HELLO:
            self._frame(side)
        self.report_error(side, event.error)


class StatusObserver(Observer):
    """Observer of one status-socket connection: one LiveStatus document, then EOF."""

    protocol = "host-agent-status"

    def __init__(self, connection: int) -> None:
        super().__init__(connection)
        self._document = bytearray()
        self._over = False

    def _client_bytes(self, data: bytes) -> None:
        if data:
            self.report(
                "illegal_state", "c2s", f"the status socket reads nothing; got {len(data)} bytes"
            )

    def _server_bytes(self, data: bytes) -> None:
        if self._over:
            return
        if data:
            self._document += data
            if len(self._document) > MAX_STATUS_BYTES:
                self._over = True
                self.report("over_cap", "s2c", f"status report exceeds {MAX_STATUS_BYTES} bytes")
            return
        index = self._frame("s2c")
        if not self._document.strip():
            self.report("truncated", "s2c", "the agent closed without a status report", frame=index)
            return
        try:
            decode_live_status(bytes(self._document))
        except RemoteProtocolError as exc:
            self.report_error("s2c", exc, frame=index)
