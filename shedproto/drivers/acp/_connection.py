"""The client side of the Agent Client Protocol (ACP) as a sans-IO connection.

:class:`AcpConnection` turns calls into bytes (``initialize``,
``new_session``, ``prompt``, ``cancel``, ...) and bytes from the agent's
stdout into events (:data:`AcpEvent`). It answers the agent's own requests
itself and queues those answers for :meth:`AcpConnection.data_to_send`:

* ``session/request_permission`` is answered by the :class:`PermissionPolicy`
  (default :attr:`PermissionPolicy.REJECT_ONCE`: select the agent's
  ``reject_once`` option; ``cancelled`` only when no option fits, since ACP
  v1 reserves that outcome for a cancelled turn);
* any other agent-to-client method (``fs/*``, ``terminal/*``, ...) is
  refused with JSON-RPC ``-32601`` because the client advertises none of
  those capabilities.

Version negotiation: the client offers :data:`PROTOCOL_VERSION`; the agent
answers the version it will speak. A version this library does not speak
closes the connection with ``VERSION_UNSUPPORTED`` (ACP: "the client should
disconnect").

Capabilities are learned at runtime: the ``initialize`` answer gives
:class:`AgentFeatures` (``loadSession``, ``sessionCapabilities.list`` /
``resume`` / ``close``, ``authMethods``; :func:`choose_auth_method` picks the
method to ``authenticate`` with); session answers and ``current_mode_update`` /
``config_option_update`` notifications give each session's modes and
configuration options (:class:`SessionControls`).

The connection is built on the connection contract (:class:`shedproto.Contract`,
table :data:`~shedproto.agents_host.TRANSITIONS`): the answers it sends by
itself wait in its outbox (:meth:`~shedproto.Contract.data_to_send`). Good
before bad: when the agent breaks ACP, :meth:`AcpConnection.receive_data`
returns every event completed before the bad line and raises the error on
the next call (at once when nothing preceded it); either way the connection
is ``CLOSED`` from then on with the error in
:attr:`~shedproto.Contract.error`, and the agent's later output is dropped.

Deadlines are inputs: :meth:`AcpConnection.prompt` takes the turn's
``deadline`` (a time on the caller's clock) and ``cancel_grace``;
:meth:`~AcpConnection.next_deadline` says when the earliest is due and
:meth:`~AcpConnection.handle_timeout` ``(now)`` acts on the ones that passed: at
the deadline it queues ``session/cancel`` in the outbox
(:class:`PromptDeadlinePassed`); when the agent has not answered ``cancel_grace``
later, it abandons the prompt (:class:`PromptAbandoned`, as
:meth:`~AcpConnection.abandon_prompt`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import msgspec

from shedproto._codec import encode_line
from shedproto._contract import ConnectionClosed as _Closed
from shedproto._contract import Contract
from shedproto._errors import ErrorCode, LocalProtocolError, RemoteProtocolError
from shedproto._framing import FramingPolicy, LineBuffer

from ._jsonrpc import (
    METHOD_NOT_FOUND,
    MessageKind,
    RequestId,
    RpcMessage,
    classify,
    decode_message,
    error_response,
    notification,
    request,
    result_response,
)
from ._state import TABLE, AcpInput, AcpState
from ._transcript import SessionTranscript

__all__ = [
    "ACP_FRAMING",
    "AuthMethod",
    "CLOSED_CODE",
    "MAX_ERROR_DETAIL",
    "CLIENT_NAME",
    "PROTOCOL_VERSION",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "AcpConnection",
    "AcpEvent",
    "AgentFeatures",
    "ConnectionClosed",
    "PermissionAnswered",
    "PermissionPolicy",
    "PeerRequestRefused",
    "PromptAbandoned",
    "PromptDeadlinePassed",
    "RequestFailed",
    "RequestSucceeded",
    "SessionControls",
    "SessionUpdated",
    "choose_auth_method",
    "describe_rpc_error",
    "is_standard_rpc_code",
]

PROTOCOL_VERSION = 1
"""The ACP protocol version this client offers (the SDKs' current ``PROTOCOL_VERSION``)."""
SUPPORTED_PROTOCOL_VERSIONS = frozenset({1})
"""Versions an agent may answer with; anything else ends the connection."""
CLIENT_NAME = "commonfabric-agents-connector"
"""``clientInfo.name``, as the connector's ACP driver sends it."""
ACP_FRAMING = FramingPolicy(max_frame_bytes=64 << 20)
"""Agent output framing: 64 MiB lines (session loads can be large); over-cap is fatal."""


class PermissionPolicy(Enum):
    """How ``session/request_permission`` is answered."""

    CANCELLED = "cancelled"
    """Answer ``{"outcome": {"outcome": "cancelled"}}`` (the connector's ACP driver)."""
    ALLOW_ONCE = "allow-once"
    """Select the first ``allow_once`` option, else ``allow_always``, else cancel."""
    REJECT_ONCE = "reject-once"
    """Select the first ``reject_once`` option, else ``reject_always``, else cancel."""


_PREFERRED_KINDS: dict[PermissionPolicy, tuple[str, ...]] = {
    PermissionPolicy.CANCELLED: (),
    PermissionPolicy.ALLOW_ONCE: ("allow_once", "allow_always"),
    PermissionPolicy.REJECT_ONCE: ("reject_once", "reject_always"),
}


def _permission_outcome(policy: PermissionPolicy, options: Any) -> dict[str, Any]:
    if isinstance(options, list):
        for kind in _PREFERRED_KINDS[policy]:
            for option in options:
                if (
                    isinstance(option, dict)
                    and option.get("kind") == kind
                    and isinstance(option.get("optionId"), str)
                ):
                    return {"outcome": "selected", "optionId": option["optionId"]}
    return {"outcome": "cancelled"}


class AuthMethod(msgspec.Struct, frozen=True, kw_only=True):
    """One of the agent's ``authMethods``; ``env_vars``: what a ``type: env_var`` method needs."""

    id: str
    env_vars: tuple[str, ...] = ()


class AgentFeatures(msgspec.Struct, frozen=True, kw_only=True):
    """What the agent advertised in its ``initialize`` answer."""

    protocol_version: int
    load_session: bool = False
    list_sessions: bool = False
    resume_session: bool = False
    close_session: bool = False
    agent_name: str | None = None
    agent_version: str | None = None
    auth_methods: tuple[AuthMethod, ...] = ()


def _auth_methods(value: Any) -> tuple[AuthMethod, ...]:
    methods: list[AuthMethod] = []
    for entry in value if isinstance(value, list) else ():
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            continue
        raw_vars = entry.get("vars")
        env_vars = tuple(
            var["name"]
            for var in (raw_vars if isinstance(raw_vars, list) else ())
            if isinstance(var, dict) and isinstance(var.get("name"), str)
        )
        methods.append(AuthMethod(id=entry["id"], env_vars=env_vars))
    return tuple(methods)


def choose_auth_method(
    methods: tuple[AuthMethod, ...], configured: str | None, env: Mapping[str, str]
) -> str | None:
    """Return the ``methodId`` to ``authenticate`` with, or ``None`` to skip ``authenticate``.

    A configured method wins; otherwise the one method (if exactly one) whose
    environment variables are all set and non-empty in ``env``.

    Raises:
        LocalProtocolError: ``INVALID_ARGUMENT`` when ``configured`` is not
            one of the agent's methods.

    """
    if configured is not None:
        if configured not in {m.id for m in methods}:
            offered = ", ".join(m.id for m in methods) or "none"
            raise LocalProtocolError(
                ErrorCode.INVALID_ARGUMENT,
                f"the agent offers no auth method {configured} (it offers: {offered})",
            )
        return configured
    present = [m.id for m in methods if m.env_vars and all(env.get(v) for v in m.env_vars)]
    return present[0] if len(present) == 1 else None


MAX_ERROR_DETAIL = 500
"""Characters of an agent's ``error.data`` kept in a message."""
_SECRET_KEY = ("key", "token", "secret", "password", "authorization", "cookie", "credential")


def _redact(value: Any, depth: int = 0) -> Any:
    if depth > 8:
        return "…"
    if isinstance(value, dict):
        return {
            str(k): "[redacted]"
            if any(word in str(k).lower() for word in _SECRET_KEY)
            else _redact(v, depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_redact(v, depth + 1) for v in value]
    return value


def is_standard_rpc_code(code: int) -> bool:
    """Return whether ``code`` lies in JSON-RPC 2.0's reserved range (-32768 to -32000)."""
    return -32768 <= code <= -32000


def describe_rpc_error(code: int, message: str, data: Any) -> str:
    """Return ``message (code)`` plus the agent's ``data``, bounded and without secrets.

    Values under keys that name a secret (``key``, ``token``, ``password``...)
    are replaced by ``[redacted]``; the data is cut to :data:`MAX_ERROR_DETAIL`
    characters. A code outside JSON-RPC's reserved range is flagged
    ``nonstandard``. Never raises.
    """
    flag = "" if is_standard_rpc_code(code) else ", nonstandard"
    text = f"{message} ({code}{flag})"
    if data is None:
        return text
    if isinstance(data, dict) and set(data) <= {"message", "details"} and len(data) == 1:
        detail = next(iter(data.values()))
        detail = detail if isinstance(detail, str) else msgspec.json.encode(detail).decode()
    else:
        try:
            detail = msgspec.json.encode(_redact(data)).decode()
        except (TypeError, ValueError, OverflowError):
            detail = repr(data)
    if len(detail) > MAX_ERROR_DETAIL:
        detail = detail[: MAX_ERROR_DETAIL - 1] + "…"
    return f"{text}: {detail}"


@dataclass
class SessionControls:
    """A session's modes and configuration options, as last advertised by the agent.

    ``modes`` holds the mode ids; ``config_options`` maps option id to the
    option object (``type``, ``currentValue``, ``options``...) as sent.
    """

    modes: tuple[str, ...] = ()
    current_mode: str | None = None
    config_options: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class RequestSucceeded:
    """A request this side sent was answered with ``result``."""

    request_id: RequestId
    method: str
    result: Any
    session_id: str | None


@dataclass(frozen=True)
class RequestFailed:
    """A request this side sent was answered with a JSON-RPC error.

    ``closed`` is true when no answer came: the agent's output ended first
    (``code`` is then :data:`CLOSED_CODE`, not a code the agent sent).
    """

    request_id: RequestId
    method: str
    code: int
    message: str
    data: Any
    session_id: str | None
    closed: bool = False


@dataclass(frozen=True)
class SessionUpdated:
    """A ``session/update`` notification; ``update`` is the object as sent."""

    session_id: str
    kind: str
    update: dict[str, Any]


@dataclass(frozen=True)
class PermissionAnswered:
    """The agent asked for permission; ``outcome`` was queued as the answer."""

    request_id: RequestId
    session_id: str | None
    tool_call: Any
    outcome: dict[str, Any]


@dataclass(frozen=True)
class PeerRequestRefused:
    """The agent called a client method this side does not offer; ``-32601`` was queued."""

    request_id: RequestId
    method: str


@dataclass(frozen=True)
class ConnectionClosed(_Closed):
    """The agent's output ended; every pending request is failed before this event.

    ``reason`` is ``"eof"`` with ``error`` ``None`` after a clean end, or
    ``"protocol_error"`` with the agent's fatal error when it broke ACP first.
    """

    reason: str = "eof"


@dataclass(frozen=True)
class PromptDeadlinePassed:
    """A prompt outlived its deadline; its ``session/cancel`` was queued in the outbox."""

    request_id: RequestId
    session_id: str


@dataclass(frozen=True)
class PromptAbandoned:
    """The agent did not answer a deadline's cancel in time: the prompt was abandoned.

    As after :meth:`AcpConnection.abandon_prompt`, a late answer is still
    accepted and reported; a new prompt may be sent at once.
    """

    request_id: RequestId
    session_id: str


AcpEvent = (
    RequestSucceeded
    | RequestFailed
    | SessionUpdated
    | PermissionAnswered
    | PeerRequestRefused
    | PromptDeadlinePassed
    | PromptAbandoned
    | ConnectionClosed
)
"""Everything :meth:`AcpConnection.receive_data` and ``handle_timeout`` can return."""

CLOSED_CODE = -32099
"""Code of the :class:`RequestFailed` synthesised for requests pending at EOF.

Not ``-32000``: ACP uses that for ``auth_required``.
"""


@dataclass(frozen=True)
class _Pending:
    method: str
    session_id: str | None


@dataclass
class _Deadline:
    """A running prompt's deadline; ``grace`` is the cancel's, ``cancelled`` once it is sent."""

    request_id: RequestId
    at: float
    grace: float
    cancelled: bool = False


class AcpConnection(Contract[AcpState]):
    """Client side of one ACP connection; see the module docstring.

    Every ``send``-style method returns the bytes to write to the agent's
    stdin and registers the request; the answer comes back from
    :meth:`receive_data` as :class:`RequestSucceeded` or
    :class:`RequestFailed` with the same ``request_id``.
    """

    def __init__(
        self,
        *,
        client_name: str = CLIENT_NAME,
        client_version: str = "0",
        permission_policy: PermissionPolicy = PermissionPolicy.REJECT_ONCE,
        framing: FramingPolicy = ACP_FRAMING,
    ) -> None:
        super().__init__(TABLE, AcpState.IDLE)
        self.client_name = client_name
        self.client_version = client_version
        self.permission_policy = permission_policy
        self.features: AgentFeatures | None = None
        self.sessions: dict[str, SessionControls] = {}
        self.transcripts: dict[str, SessionTranscript] = {}
        self._lines = LineBuffer(framing)
        self._pending: dict[RequestId, _Pending] = {}
        self._prompting: dict[str, RequestId] = {}
        self._deadlines: dict[str, _Deadline] = {}
        self._next_id = 0

    # ------------------------------------------------------------------ sending

    def _request(
        self, method: str, params: dict[str, Any], session_id: str | None
    ) -> tuple[int, bytes]:
        request_id = self._next_id
        self._next_id += 1
        self._pending[request_id] = _Pending(method, session_id)
        return request_id, encode_line(request(request_id, method, params))

    def initialize(self) -> tuple[int, bytes]:
        """Start the handshake; returns ``(request_id, bytes)``.

        Raises:
            LocalProtocolError: ``UNEXPECTED_EVENT`` unless the connection is new.

        """
        self._local(AcpInput.SEND_INITIALIZE)
        return self._request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "clientCapabilities": {
                    "fs": {"readTextFile": False, "writeTextFile": False},
                    "terminal": False,
                },
                "clientInfo": {"name": self.client_name, "version": self.client_version},
            },
            None,
        )

    def send_request(
        self, method: str, params: dict[str, Any], *, session_id: str | None = None
    ) -> tuple[int, bytes]:
        """Send any request once ready; returns ``(request_id, bytes)``.

        Raises:
            LocalProtocolError: ``UNEXPECTED_EVENT`` before the handshake
                completed or after the connection closed.

        """
        self._local(AcpInput.SEND_REQUEST)
        return self._request(method, params, session_id)

    def authenticate(self, method_id: str) -> tuple[int, bytes]:
        """Request ``authenticate`` with one of the agent's ``authMethods``.

        Raises:
            LocalProtocolError: ``UNEXPECTED_EVENT`` when not ready.

        """
        return self.send_request("authenticate", {"methodId": method_id})

    def new_session(self, cwd: str) -> tuple[int, bytes]:
        """Request ``session/new`` in ``cwd`` (no MCP servers)."""
        return self.send_request("session/new", {"cwd": cwd, "mcpServers": []})

    def load_session(self, session_id: str, cwd: str) -> tuple[int, bytes]:
        """Request ``session/load``; the replayed updates arrive as :class:`SessionUpdated`.

        Raises:
            LocalProtocolError: ``INVALID_ARGUMENT`` when the agent did not
                advertise ``loadSession``; ``UNEXPECTED_EVENT`` when not ready.

        """
        self._require("load_session", "session/load")
        self.transcripts[session_id] = SessionTranscript(session_id)
        return self.send_request(
            "session/load",
            {"sessionId": session_id, "cwd": cwd, "mcpServers": []},
            session_id=session_id,
        )

    def resume_session(self, session_id: str, cwd: str) -> tuple[int, bytes]:
        """Request ``session/resume`` (no history replay).

        Raises:
            LocalProtocolError: ``INVALID_ARGUMENT`` when not advertised.

        """
        self._require("resume_session", "session/resume")
        return self.send_request(
            "session/resume",
            {"sessionId": session_id, "cwd": cwd, "mcpServers": []},
            session_id=session_id,
        )

    def list_sessions(self, cursor: str | None = None, cwd: str | None = None) -> tuple[int, bytes]:
        """Request one page of ``session/list``.

        Raises:
            LocalProtocolError: ``INVALID_ARGUMENT`` when the agent did not
                advertise ``sessionCapabilities.list``.

        """
        self._require("list_sessions", "session/list")
        params: dict[str, Any] = {}
        if cursor is not None:
            params["cursor"] = cursor
        if cwd is not None:
            params["cwd"] = cwd
        return self.send_request("session/list", params)

    def prompt(
        self,
        session_id: str,
        text: str,
        *,
        deadline: float | None = None,
        cancel_grace: float = 0.0,
    ) -> tuple[int, bytes]:
        """Send ``session/prompt`` with one text block.

        With ``deadline`` the turn is cancelled at that time and abandoned
        ``cancel_grace`` later (see :meth:`handle_timeout`).

        Raises:
            LocalProtocolError: ``UNEXPECTED_EVENT`` when a prompt of this
                connection is already running in the session (ACP allows one
                turn at a time) or the connection is not ready.

        """
        if session_id in self._prompting:
            raise LocalProtocolError(
                ErrorCode.UNEXPECTED_EVENT, f"a prompt is already running in session {session_id}"
            )
        request_id, data = self.send_request(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]},
            session_id=session_id,
        )
        self._prompting[session_id] = request_id
        if deadline is not None:
            self._deadlines[session_id] = _Deadline(request_id, deadline, cancel_grace)
        self.transcripts.setdefault(session_id, SessionTranscript(session_id)).record_prompt(text)
        return request_id, data

    def abandon_prompt(self, session_id: str) -> None:
        """Stop tracking the running prompt of ``session_id`` (its deadline passed).

        A later answer to it is still accepted (and reported) but no longer
        marks the session idle; a new prompt may be sent at once.
        """
        self._deadlines.pop(session_id, None)
        if self._prompting.pop(session_id, None) is not None:
            transcript = self.transcripts.get(session_id)
            if transcript is not None:
                transcript.close_turn()

    def next_deadline(self) -> float | None:
        """When the earliest running prompt's deadline (or its cancel's grace) ends, if any."""
        if self.state is AcpState.CLOSED or not self._deadlines:
            return None
        return min(d.at for d in self._deadlines.values())

    def handle_timeout(self, now: float) -> list[AcpEvent]:
        """Act on the deadlines due at ``now``; never raises.

        A prompt past its deadline gets ``session/cancel`` queued in the
        outbox (:class:`PromptDeadlinePassed`) and ``cancel_grace`` more; past
        that it is abandoned (:class:`PromptAbandoned`). Nothing happens once
        the connection is ``CLOSED``.
        """
        events: list[AcpEvent] = []
        if self.state is AcpState.CLOSED:
            return events
        for session_id, due in list(self._deadlines.items()):
            if now < due.at:
                continue
            if not due.cancelled:
                due.cancelled = True
                due.at = now + due.grace
                self.outbox.put(self.cancel(session_id))
                events.append(PromptDeadlinePassed(due.request_id, session_id))
                if now < due.at:
                    continue
            self.abandon_prompt(session_id)
            events.append(PromptAbandoned(due.request_id, session_id))
        return events

    def prompting(self, session_id: str) -> bool:
        """Return whether a prompt sent by this connection is running in ``session_id``."""
        return session_id in self._prompting

    def cancel(self, session_id: str) -> bytes:
        """Send the ``session/cancel`` notification for this connection's running prompt.

        Raises:
            LocalProtocolError: ``UNEXPECTED_EVENT`` when no prompt of this
                connection runs in ``session_id`` (the connector cancels only
                its own turns).

        """
        if session_id not in self._prompting:
            raise LocalProtocolError(
                ErrorCode.UNEXPECTED_EVENT, f"no prompt of this client runs in session {session_id}"
            )
        return encode_line(notification("session/cancel", {"sessionId": session_id}))

    def set_mode(self, session_id: str, mode_id: str) -> tuple[int, bytes]:
        """Request ``session/set_mode``."""
        return self.send_request(
            "session/set_mode", {"sessionId": session_id, "modeId": mode_id}, session_id=session_id
        )

    def set_config_option(self, session_id: str, key: str, value: Any) -> tuple[int, bytes]:
        """Request ``session/set_config_option``."""
        return self.send_request(
            "session/set_config_option",
            {"sessionId": session_id, "configId": key, "value": value},
            session_id=session_id,
        )

    def _require(self, feature: str, method: str) -> None:
        if self.features is None or not getattr(self.features, feature):
            raise LocalProtocolError(
                ErrorCode.INVALID_ARGUMENT, f"the agent does not support {method}"
            )

    # ---------------------------------------------------------------- receiving

    def receive_data(self, data: bytes) -> list[AcpEvent]:
        """Feed bytes from the agent's stdout (``b""`` = EOF) and return the events.

        Once the connection is ``CLOSED`` the agent's further output is
        dropped; ``b""`` then returns another :class:`ConnectionClosed`.

        Raises:
            RemoteProtocolError: the agent sent a line that is not JSON-RPC
                2.0, a response to no pending request, a message its state
                does not allow, an unsupported protocol version, or an
                over-cap line. The events completed before the bad line are
                returned first and the error is raised by the next call (at
                once when none preceded it). From the bad line on the
                connection is ``CLOSED`` with the error in ``error``;
                ``receive_data(b"")`` then fails every pending request and
                returns :class:`ConnectionClosed` carrying the error.

        """
        self._raise_deferred()
        if data and self.state is AcpState.CLOSED:
            return []
        lines, error = self._split(self._lines, data)
        events: list[AcpEvent] = []
        try:
            for line in lines:
                events.extend(self._receive_line(line))
            if error is not None:
                raise error
        except RemoteProtocolError as exc:
            return self._deliver(events, exc)
        if not data:
            events.extend(self._close())
        return events

    def _close(self) -> list[AcpEvent]:
        self._remote(AcpInput.EOF)
        events: list[AcpEvent] = [
            RequestFailed(
                request_id=request_id,
                method=pending.method,
                code=CLOSED_CODE,
                message="the agent closed the connection before answering",
                data=None,
                session_id=pending.session_id,
                closed=True,
            )
            for request_id, pending in self._pending.items()
        ]
        self._pending.clear()
        self._prompting.clear()
        self._deadlines.clear()
        if self.error is None:
            events.append(ConnectionClosed())
        else:
            events.append(ConnectionClosed("protocol_error", self.error))
        return events

    def _receive_line(self, line: bytes) -> list[AcpEvent]:
        if self.state is AcpState.CLOSED:
            return []  # the rest of a chunk after a rejected initialize
        message = decode_message(line)
        kind = classify(message)
        self._remote(_PEER_INPUT[kind])
        if kind is MessageKind.RESPONSE:
            return [self._on_response(message)]
        if kind is MessageKind.NOTIFICATION:
            return self._on_notification(message)
        return [self._on_request(message)]

    def _on_response(self, message: RpcMessage) -> AcpEvent:
        request_id = message.id
        if request_id is None or isinstance(request_id, msgspec.UnsetType):
            raise RemoteProtocolError(ErrorCode.SCHEMA_VIOLATION, "a response with a null id")
        pending = self._pending.pop(request_id, None)
        if pending is None:
            raise RemoteProtocolError(
                ErrorCode.UNEXPECTED_EVENT, f"response to unknown request id {request_id!r}"
            )
        if pending.method == "session/prompt" and pending.session_id is not None:
            self._end_turn(pending.session_id, request_id)
        if not isinstance(message.error, msgspec.UnsetType):
            error = message.error
            if pending.method == "initialize":
                self._remote(AcpInput.INITIALIZE_REJECTED)
            return RequestFailed(
                request_id=request_id,
                method=pending.method,
                code=error.code,
                message=error.message,
                data=error.data,
                session_id=pending.session_id,
            )
        result = message.result
        if pending.method == "initialize":
            self._on_initialized(result)
        elif isinstance(result, dict):
            self._learn_controls(pending, result)
        return RequestSucceeded(
            request_id=request_id,
            method=pending.method,
            result=result,
            session_id=pending.session_id,
        )

    def _end_turn(self, session_id: str, request_id: RequestId) -> None:
        if self._prompting.get(session_id) == request_id:
            del self._prompting[session_id]
            self._deadlines.pop(session_id, None)
        transcript = self.transcripts.get(session_id)
        if transcript is not None:
            transcript.close_turn()

    def _on_initialized(self, result: Any) -> None:
        if not isinstance(result, dict) or not isinstance(result.get("protocolVersion"), int):
            raise RemoteProtocolError(
                ErrorCode.SCHEMA_VIOLATION,
                "initialize result needs an integer protocolVersion",
                path="$.result.protocolVersion",
            )
        version = result["protocolVersion"]
        if version not in SUPPORTED_PROTOCOL_VERSIONS:
            raise RemoteProtocolError(
                ErrorCode.VERSION_UNSUPPORTED,
                f"the agent speaks ACP protocol version {version}; this client supports "
                + ", ".join(str(v) for v in sorted(SUPPORTED_PROTOCOL_VERSIONS)),
            )
        caps = _mapping(result.get("agentCapabilities"))
        session_caps = _mapping(caps.get("sessionCapabilities"))
        info = _mapping(result.get("agentInfo"))
        self.features = AgentFeatures(
            protocol_version=version,
            load_session=caps.get("loadSession") is True,
            list_sessions=isinstance(session_caps.get("list"), dict),
            resume_session=isinstance(session_caps.get("resume"), dict),
            close_session=isinstance(session_caps.get("close"), dict),
            agent_name=info.get("name") if isinstance(info.get("name"), str) else None,
            agent_version=info.get("version") if isinstance(info.get("version"), str) else None,
            auth_methods=_auth_methods(result.get("authMethods")),
        )
        self._remote(AcpInput.INITIALIZE_ACCEPTED)

    def _learn_controls(self, pending: _Pending, result: dict[str, Any]) -> None:
        session_id = pending.session_id
        if pending.method == "session/new":
            new_id = result.get("sessionId")
            if not isinstance(new_id, str):
                return
            session_id = new_id
            self.transcripts.setdefault(session_id, SessionTranscript(session_id))
        if session_id is None or pending.method not in (
            "session/new",
            "session/load",
            "session/resume",
        ):
            return
        controls = self.sessions.setdefault(session_id, SessionControls())
        modes = result.get("modes")
        if isinstance(modes, dict):
            _apply_modes(controls, modes)
        options = result.get("configOptions")
        if isinstance(options, list):
            _apply_config_options(controls, options)

    def _on_notification(self, message: RpcMessage) -> list[AcpEvent]:
        if message.method != "session/update":
            return []
        params = _mapping(message.params)
        session_id = params.get("sessionId")
        update = params.get("update")
        if not isinstance(session_id, str) or not isinstance(update, dict):
            raise RemoteProtocolError(
                ErrorCode.SCHEMA_VIOLATION,
                "session/update needs a string sessionId and an update object",
                path="$.params",
            )
        kind = update.get("sessionUpdate")
        if not isinstance(kind, str):
            raise RemoteProtocolError(
                ErrorCode.SCHEMA_VIOLATION,
                "session/update needs a string sessionUpdate",
                path="$.params.update.sessionUpdate",
            )
        if not (kind == "user_message_chunk" and session_id in self._prompting):
            # A live echo of the prompt is already recorded by prompt().
            self.transcripts.setdefault(session_id, SessionTranscript(session_id)).record(update)
        controls = self.sessions.get(session_id)
        if controls is not None:
            if kind == "current_mode_update" and isinstance(update.get("currentModeId"), str):
                controls.current_mode = update["currentModeId"]
            elif kind == "config_option_update" and isinstance(update.get("configOptions"), list):
                _apply_config_options(controls, update["configOptions"])
        return [SessionUpdated(session_id=session_id, kind=kind, update=update)]

    def _on_request(self, message: RpcMessage) -> AcpEvent:
        request_id = message.id
        assert not isinstance(request_id, msgspec.UnsetType)
        if request_id is None:
            raise RemoteProtocolError(ErrorCode.SCHEMA_VIOLATION, "a request with a null id")
        if message.method == "session/request_permission":
            params = _mapping(message.params)
            outcome = _permission_outcome(self.permission_policy, params.get("options"))
            self.outbox.put(encode_line(result_response(request_id, {"outcome": outcome})))
            session_id = params.get("sessionId")
            return PermissionAnswered(
                request_id=request_id,
                session_id=session_id if isinstance(session_id, str) else None,
                tool_call=params.get("toolCall"),
                outcome=outcome,
            )
        method = str(message.method)
        self.outbox.put(
            encode_line(error_response(request_id, METHOD_NOT_FOUND, f"Method not found: {method}"))
        )
        return PeerRequestRefused(request_id=request_id, method=method)


_PEER_INPUT = {
    MessageKind.REQUEST: AcpInput.PEER_REQUEST,
    MessageKind.NOTIFICATION: AcpInput.PEER_NOTIFICATION,
    MessageKind.RESPONSE: AcpInput.PEER_RESPONSE,
}


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _apply_modes(controls: SessionControls, modes: dict[str, Any]) -> None:
    available = modes.get("availableModes")
    if isinstance(available, list):
        controls.modes = tuple(
            m["id"] for m in available if isinstance(m, dict) and isinstance(m.get("id"), str)
        )
    current = modes.get("currentModeId")
    if isinstance(current, str):
        controls.current_mode = current


def _apply_config_options(controls: SessionControls, options: list[Any]) -> None:
    controls.config_options = {
        option["id"]: option
        for option in options
        if isinstance(option, dict) and isinstance(option.get("id"), str)
    }
