"""The codex app-server client connection: JSON-RPC without ``jsonrpc``, one object per line.

:class:`CodexClientConnection` is sans-IO: :meth:`~CodexClientConnection.send_request`
returns the bytes to write, :meth:`~CodexClientConnection.receive_data` turns the
child's stdout into events. It numbers requests with rising integers from 1,
pairs responses with their requests whatever order they arrive in, answers every
server-initiated request (the reply bytes ride on the event) and remembers the
last :data:`NOTIFICATION_MEMORY` notifications, started and completed turns, so a
caller that learns a turn id after its ``turn/started`` or ``turn/completed``
arrived still finds it.

It is built on the connection contract (:class:`shedproto.Contract`, table
:data:`~shedproto.drivers.codex._state.TABLE`): the replies it writes by
itself (``initialized``, answers to server requests) wait in its outbox
(:meth:`~shedproto.Contract.data_to_send`); an over-cap line ends the stream
after the lines before it, with :class:`ConnectionClosed` carrying the error.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any

import msgspec

from shedproto._codec import decoder_for, encode_line
from shedproto._contract import ConnectionClosed as _Closed
from shedproto._contract import Contract, LineSkipped
from shedproto._errors import (
    ErrorCode,
    LocalProtocolError,
    RemoteProtocolError,
    remote_error_from_msgspec,
)
from shedproto._framing import EofTail, FramingPolicy, LineBuffer, OverCap

from ._operations import turn_id_of
from ._state import TABLE, CodexInput, CodexState

__all__ = [
    "ApprovalPolicy",
    "CodexClientConnection",
    "CodexEvent",
    "ConnectionClosed",
    "ErrorResponse",
    "HandshakeComplete",
    "MalformedLine",
    "Notification",
    "Response",
    "ServerRequest",
    "CODEX_FRAMING",
    "NOTIFICATION_MEMORY",
    "JSONRPC_INVALID_REQUEST",
    "JSONRPC_METHOD_NOT_FOUND",
    "LEGACY_REJECTION",
    "parse_user_agent_version",
    "server_request_answer",
]

NOTIFICATION_MEMORY = 500
"""How many recent notifications (and completed turns) a connection keeps for late waiters."""

JSONRPC_INVALID_REQUEST = -32600
"""What codex answers for almost every bad request (unknown methods included)."""
LEGACY_REJECTION = "the connector has no approval surface"
"""The reason given with a declined legacy (v1) approval."""
JSONRPC_METHOD_NOT_FOUND = -32601
"""What this client answers for a server request it does not know."""

CODEX_FRAMING = FramingPolicy(
    max_frame_bytes=256 << 20, eof_tail=EofTail.DROP, over_cap=OverCap.RAISE
)
"""Full-history reads are large; a line cut off by the child's death is dropped."""


class _WireError(msgspec.Struct, gc=False):
    code: int
    message: str
    data: Any = None


class _Wire(msgspec.Struct, gc=False):
    """Every incoming message, leniently: ``jsonrpc`` and unknown members are ignored."""

    id: int | str | None = None
    method: str | None = None
    params: Any = None
    result: Any = msgspec.UNSET
    error: _WireError | None = None
    emittedAtMs: int | float | None = None  # noqa: N815 - wire name


_DECODER = decoder_for(_Wire)


# --- events -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HandshakeComplete:
    """The ``initialize`` answer arrived; ``reply`` (``initialized``) is queued in the outbox."""

    id: int
    user_agent: str | None
    version: str | None
    result: Any
    reply: bytes


@dataclass(frozen=True)
class Response:
    """A result for one of our requests; ``method`` is ``None`` for an id we never sent."""

    id: int | str
    method: str | None
    result: Any


@dataclass(frozen=True)
class ErrorResponse:
    """A JSON-RPC error for one of our requests (``id`` may be ``None`` for a parse error)."""

    id: int | str | None
    method: str | None
    code: int
    message: str
    data: Any


@dataclass(frozen=True)
class Notification:
    """A server notification; unknown methods are delivered too and may be ignored."""

    method: str
    params: Any
    emitted_at_ms: int | float | None


@dataclass(frozen=True)
class ServerRequest:
    """A server-initiated request; ``reply`` is its answer, queued in the outbox."""

    id: int | str
    method: str
    params: Any
    reply: bytes


@dataclass(frozen=True)
class MalformedLine(LineSkipped):
    """A stdout line that is not a message (kept in ``line``); skipped, the connection goes on."""


@dataclass(frozen=True)
class ConnectionClosed(_Closed):
    """The stream is over: ``pending`` are the request ids that will never be answered.

    ``reason`` is ``"eof"`` with ``error`` ``None`` at a clean EOF, or
    ``"frame_too_large"`` with the framing error (an over-cap line) that killed the stream.
    """

    reason: str = "eof"
    pending: tuple[int, ...] = ()


CodexEvent = (
    HandshakeComplete
    | Response
    | ErrorResponse
    | Notification
    | ServerRequest
    | MalformedLine
    | ConnectionClosed
)
"""Everything :meth:`CodexClientConnection.receive_data` returns."""


# --- approvals ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ApprovalPolicy:
    """How server requests are answered. The default declines everything.

    ``approve`` accepts command and file-change approvals (``accept``, legacy
    ``approved``) and grants requested permissions for the turn. Nothing ever
    answers ``cancel``, which would interrupt the turn.
    """

    approve: bool = False


def server_request_answer(
    method: str, params: Any, policy: ApprovalPolicy
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """Return ``(result, error)`` for a server request; exactly one is not ``None``.

    Unknown methods get a ``-32601`` error, so the server never waits on us.
    """
    approve = policy.approve
    if method in ("item/commandExecution/requestApproval", "item/fileChange/requestApproval"):
        return {"decision": "accept" if approve else "decline"}, None
    if method in ("execCommandApproval", "applyPatchApproval"):
        if approve:
            return {"decision": "approved"}, None
        return {"decision": {"denied": {"rejection": LEGACY_REJECTION}}}, None
    if method == "item/permissions/requestApproval":
        requested = params.get("permissions") if isinstance(params, dict) else None
        if approve and isinstance(requested, dict):
            return {"permissions": requested, "scope": "turn"}, None
        return {"permissions": {}}, None
    if method == "item/tool/requestUserInput":
        return {"answers": {}}, None
    if method == "mcpServer/elicitation/request":
        return {"action": "decline", "content": None}, None
    return None, {"code": JSONRPC_METHOD_NOT_FOUND, "message": f"unsupported request: {method}"}


def parse_user_agent_version(user_agent: object) -> str | None:
    """Return the Codex version inside ``<client>/<version> (...)``, or ``None``; never raises."""
    if not isinstance(user_agent, str):
        return None
    head = user_agent.split(" ", 1)[0]
    _, slash, version = head.partition("/")
    return version or None if slash else None


# --- the connection -----------------------------------------------------------------------------


class CodexClientConnection(Contract[CodexState]):
    """The client side of one app-server conversation (the driver's side).

    Raises from its methods are described per method; an over-cap line from
    the peer leaves the connection in ``ERROR`` (sticky).
    """

    def __init__(
        self,
        *,
        approval_policy: ApprovalPolicy | None = None,
        framing: FramingPolicy = CODEX_FRAMING,
    ) -> None:
        super().__init__(TABLE, CodexState.NEW)
        self.approval_policy = approval_policy or ApprovalPolicy()
        self.user_agent: str | None = None
        """``userAgent`` from the ``initialize`` answer."""
        self.version: str | None = None
        """The Codex version parsed from :attr:`user_agent`."""
        self.notifications: deque[Notification] = deque(maxlen=NOTIFICATION_MEMORY)
        """The most recent notifications, oldest first."""
        self._completed: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._started: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._pending: dict[int, str] = {}
        self._next_id = 1
        self._initialize_id: int | None = None
        self._lines = LineBuffer(framing)

    @property
    def pending(self) -> dict[int, str]:
        """A copy of the unanswered request ids and their methods."""
        return dict(self._pending)

    # -- sending ---------------------------------------------------------------------------------

    def initialize(
        self,
        *,
        name: str,
        version: str,
        title: str | None = None,
        opt_out_notification_methods: tuple[str, ...] = (),
    ) -> tuple[int, bytes]:
        """Return ``(id, bytes)`` of the ``initialize`` request; the state becomes ``INITIALIZING``.

        Raises:
            LocalProtocolError: ``UNEXPECTED_EVENT`` unless the connection is ``NEW``.

        """
        self._local(CodexInput.SEND_INITIALIZE)
        client_info: dict[str, Any] = {"name": name}
        if title is not None:
            client_info["title"] = title
        client_info["version"] = version
        params: dict[str, Any] = {"clientInfo": client_info}
        if opt_out_notification_methods:
            params["capabilities"] = {
                "optOutNotificationMethods": list(opt_out_notification_methods)
            }
        request_id, data = self._request("initialize", params)
        self._initialize_id = request_id
        return request_id, data

    def send_request(self, method: str, params: dict[str, Any] | None = None) -> tuple[int, bytes]:
        """Return ``(id, bytes)`` for a request; ids rise from 1 on each connection.

        Raises:
            LocalProtocolError: ``UNEXPECTED_EVENT`` before the handshake finished
                or after the stream closed; ``INVALID_ARGUMENT`` for ``initialize``.

        """
        if method == "initialize":
            raise LocalProtocolError(ErrorCode.INVALID_ARGUMENT, "use initialize() for initialize")
        self._local(CodexInput.SEND_REQUEST)
        return self._request(method, params)

    def _request(self, method: str, params: dict[str, Any] | None) -> tuple[int, bytes]:
        request_id = self._next_id
        self._next_id += 1
        self._pending[request_id] = method
        frame: dict[str, Any] = {"id": request_id, "method": method}
        if params is not None:
            frame["params"] = params
        return request_id, encode_line(frame)

    def forget(self, request_id: int) -> None:
        """Stop waiting for ``request_id`` (a late answer then arrives as ``method=None``)."""
        self._pending.pop(request_id, None)

    # -- receiving -------------------------------------------------------------------------------

    def receive_data(self, data: bytes) -> list[CodexEvent]:
        """Feed bytes from the child's stdout (``b""`` = EOF) and return the events.

        A line over the framing cap ends the stream: the lines before it are
        delivered, then :class:`ConnectionClosed` with the error, and the state
        is ``ERROR``. Malformed lines become :class:`MalformedLine` events.

        Raises:
            LocalProtocolError: data after EOF or after the stream was killed.

        """
        lines, error = self._split(self._lines, data)
        events = [event for line in lines for event in self._line(line)]
        if error is not None:
            self._fail(error)
            pending = self._drain_pending()
            events.append(ConnectionClosed("frame_too_large", error, pending=pending))
            return events
        if not data:
            self._remote(CodexInput.EOF)
            events.append(ConnectionClosed(pending=self._drain_pending()))
        return events

    def _drain_pending(self) -> tuple[int, ...]:
        pending = tuple(sorted(self._pending))
        self._pending.clear()
        return pending

    def _line(self, line: bytes) -> list[CodexEvent]:
        try:
            wire = _DECODER.decode(line)
        except msgspec.DecodeError as exc:
            return [MalformedLine(line=line, error=remote_error_from_msgspec(exc))]
        if wire.method is not None:
            if wire.id is None:
                note = Notification(
                    method=wire.method, params=wire.params, emitted_at_ms=wire.emittedAtMs
                )
                self._remember(note)
                return [note]
            result, error = server_request_answer(wire.method, wire.params, self.approval_policy)
            answer: dict[str, Any] = {"id": wire.id}
            if error is None:
                answer["result"] = result
            else:
                answer["error"] = error
            reply = encode_line(answer)
            self.outbox.put(reply)
            return [ServerRequest(id=wire.id, method=wire.method, params=wire.params, reply=reply)]
        if wire.error is not None:
            method = self._pending.pop(wire.id, None) if isinstance(wire.id, int) else None
            if method == "initialize" and wire.id == self._initialize_id:
                self._remote(CodexInput.INITIALIZE_ERROR)
            return [
                ErrorResponse(
                    id=wire.id,
                    method=method,
                    code=wire.error.code,
                    message=wire.error.message,
                    data=wire.error.data,
                )
            ]
        if wire.id is not None and wire.result is not msgspec.UNSET:
            method = self._pending.pop(wire.id, None) if isinstance(wire.id, int) else None
            if wire.id == self._initialize_id and method == "initialize":
                return [self._handshake(wire.id, wire.result)]
            return [Response(id=wire.id, method=method, result=wire.result)]
        problem = RemoteProtocolError(
            ErrorCode.SCHEMA_VIOLATION, "message is neither request, notification nor response"
        )
        return [MalformedLine(line=line, error=problem)]

    def _handshake(self, request_id: int, result: Any) -> HandshakeComplete:
        self._remote(CodexInput.INITIALIZE_RESULT)
        user_agent = result.get("userAgent") if isinstance(result, dict) else None
        self.user_agent = user_agent if isinstance(user_agent, str) else None
        self.version = parse_user_agent_version(self.user_agent)
        reply = encode_line({"method": "initialized"})
        self.outbox.put(reply)
        return HandshakeComplete(
            id=request_id,
            user_agent=self.user_agent,
            version=self.version,
            result=result,
            reply=reply,
        )

    def _remember(self, note: Notification) -> None:
        self.notifications.append(note)
        if note.method == "turn/completed":
            memory = self._completed
        elif note.method == "turn/started":
            memory = self._started
        else:
            return
        turn_id = turn_id_of(note.params)
        if turn_id is not None:
            memory[turn_id] = note.params["turn"]
            while len(memory) > NOTIFICATION_MEMORY:
                memory.popitem(last=False)

    def completed_turn(self, turn_id: str) -> dict[str, Any] | None:
        """Return the final turn object of ``turn/completed`` for ``turn_id``, if it arrived."""
        return self._completed.get(turn_id)

    def started_turn(self, turn_id: str) -> bool:
        """Return whether ``turn/started`` arrived for ``turn_id`` (and was not forgotten)."""
        return turn_id in self._started

    def forget_turn(self, turn_id: str) -> None:
        """Stop remembering that ``turn_id`` started (its prompt is over); never raises."""
        self._started.pop(turn_id, None)
