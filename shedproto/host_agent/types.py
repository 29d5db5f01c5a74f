"""Approval-channel v2 frames, both directions, with the real field order and presence rules.

Presence is expressed in the Struct definitions and enforced by msgspec at
encode time (``omit_defaults=True``):

* a field with a plain empty default (``""``, ``()``, ``0``) is **omitempty**:
  left out when empty, as Go's ``omitempty`` / serde's ``skip_serializing_if``;
* a field built with :func:`_always` is **required**: always written (even
  when empty) yet zero-filled when a peer leaves it out, so decoding stays as
  lenient as the real agent's;
* ``hello_ack``'s ``namespaces`` / ``gate_namespaces`` are **nullable lists**:
  always written; ``None`` is ``null`` (the superseded notice), a tuple is a
  list, ``[]`` when empty (see :meth:`HelloAck.accepted_ack` for why an
  accepted ack never carries ``null``).

``v`` is not a field: :func:`encode_frame` stamps ``"v":2`` in front of the
tag, which gives the real key order ``v, type, id, ts, ...``; inbound ``v``
is ignored like any unknown field. Unknown fields are ignored in both
directions (both real peers do).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias, TypeVar

import msgspec

from shedproto import ErrorCode, LenientFrame, RemoteProtocolError, decoder_for
from shedproto._errors import remote_error_from_msgspec

from ._constants import (
    AGENT_CAPABILITIES,
    APPROVAL_METHOD,
    NAMESPACES,
    PROTOCOL_VERSION,
)

__all__ = [
    "AgentFrame",
    "AgentInfo",
    "ApprovalRequest",
    "ApprovalResponse",
    "ClientInfo",
    "ConsumerFrame",
    "CredentialGet",
    "CredentialResponse",
    "Event",
    "Hello",
    "HelloAck",
    "Ping",
    "Pong",
    "TokenGet",
    "TokenResponse",
    "decode_agent_frame",
    "decode_consumer_frame",
    "encode_approval_response",
    "encode_frame",
]

_T = TypeVar("_T")


def _always(value: _T) -> Any:
    """Declare a field that is always encoded, and defaults to ``value`` when a peer omits it.

    msgspec omits a default only when the value *is* the default object or an
    empty container from a container factory; a plain function factory is
    never treated as a default, so the field is always written.
    """

    def factory() -> _T:
        return value

    return msgspec.field(default_factory=factory)


class _Frame(LenientFrame, frozen=True, kw_only=True, omit_defaults=True, tag_field="type"):
    """Base of every approval-channel frame: lenient decode, exact omit rules, ``type`` tag."""


# --------------------------------------------------------------------------- app -> agent


class ClientInfo(LenientFrame, frozen=True, kw_only=True, omit_defaults=True):
    """``hello.client``: who the consumer is; shown in status as client_name/client_version."""

    name: str = _always("")
    version: str = _always("")
    pid: int = _always(0)


class Hello(_Frame, frozen=True, kw_only=True, tag="hello"):
    """The consumer's first line. Every field is optional on the wire (``{"type":"hello"}``).

    ``replay_events`` asks for up to that many buffered events after the ack
    (``<= 0``: none). ``capabilities`` is stored by the agent but not acted on.
    """

    id: str = _always("")
    ts: str = _always("")
    client: ClientInfo = _always(ClientInfo())
    capabilities: tuple[str, ...] = _always(())
    replay_events: int = _always(0)


class ApprovalResponse(_Frame, frozen=True, kw_only=True, tag="approval_response"):
    """The consumer's answer to an ``approval_request``.

    Exactly ``decision == "approve"`` approves; anything else denies. An empty
    ``decided_by`` is recorded as ``"user"``. ``scope``/``ttl`` are recorded verbatim.
    """

    id: str = _always("")
    ts: str = _always("")
    request_id: str = _always("")
    decision: str = _always("")
    decided_by: str = ""
    scope: str = ""
    ttl: str = ""


class Pong(_Frame, frozen=True, kw_only=True, tag="pong"):
    """The answer to a ``ping``; the agent uses it for nothing but liveness."""

    id: str = _always("")
    ts: str = _always("")


class TokenGet(_Frame, frozen=True, kw_only=True, tag="token.get"):
    """Legacy bearer-token request for ``server``; ``id`` comes back as ``in_reply_to``."""

    id: str = _always("")
    server: str = _always("")


class CredentialGet(_Frame, frozen=True, kw_only=True, tag="credential.get"):
    """Mode-agnostic credential request; ``csr`` (base64 PKCS#10 DER) is omitted when empty."""

    id: str = _always("")
    server: str = _always("")
    csr: str = ""


# --------------------------------------------------------------------------- agent -> app


class AgentInfo(LenientFrame, frozen=True, kw_only=True, omit_defaults=True):
    """``hello_ack.agent``: zero-valued (both ``""``) on a superseded ack."""

    version: str = _always("")
    approval_method: str = _always("")


class HelloAck(_Frame, frozen=True, kw_only=True, tag="hello_ack"):
    """The agent's answer to ``hello``, or the notice sent to a superseded consumer.

    Build one with :meth:`accepted_ack` or :meth:`superseded_ack`.
    ``namespaces``/``gate_namespaces`` are written as ``null`` when ``None``
    and as a list (``[]`` when empty) otherwise; ``agent_capabilities`` is
    omitted when empty (an old agent); ``reason`` is omitted on an accepted ack.
    """

    id: str = _always("")
    ts: str = _always("")
    agent: AgentInfo = _always(AgentInfo())
    namespaces: tuple[str, ...] | None = _always(None)
    gate_namespaces: tuple[str, ...] | None = _always(None)
    agent_capabilities: tuple[str, ...] = ()
    request_timeout_ms: int = _always(0)
    accepted: bool = _always(False)
    reason: str = ""

    @classmethod
    def accepted_ack(
        cls,
        *,
        id: str,
        ts: str,
        version: str,
        gate_namespaces: tuple[str, ...],
        request_timeout_ms: int,
        namespaces: tuple[str, ...] = NAMESPACES,
        agent_capabilities: tuple[str, ...] = AGENT_CAPABILITIES,
        null_when_empty: bool = False,
    ) -> HelloAck:
        """Build the accepted ack a current agent writes (``approval_method`` ``shed-desktop``).

        An empty ``gate_namespaces`` (nothing delegated to the app) is written
        as ``[]``. The real agent writes ``null`` there, which neither real
        consumer can decode: the line is skipped and the app never sees itself
        connected (docs/protocols/host-agent.md, "Real consumers").
        ``null_when_empty=True`` writes the real agent's ``null`` instead (for
        testing a consumer against it); it applies to ``namespaces`` too.
        """
        empty = None if null_when_empty else ()
        return cls(
            id=id,
            ts=ts,
            agent=AgentInfo(version=version, approval_method=APPROVAL_METHOD),
            namespaces=namespaces or empty,
            gate_namespaces=gate_namespaces or empty,
            agent_capabilities=agent_capabilities,
            request_timeout_ms=request_timeout_ms,
            accepted=True,
        )

    @classmethod
    def superseded_ack(cls, *, id: str, ts: str) -> HelloAck:
        """Build the notice sent to a consumer that a new one supersedes, as the real agent does.

        Zero agent, ``null`` lists, timeout 0, ``accepted`` false, ``reason``
        ``superseded``, no capabilities. The real consumers cannot decode it
        (``null`` lists) and so only see the connection close; were it
        decodable, they would take it for a connect, as they never read
        ``accepted``.
        """
        return cls(id=id, ts=ts, namespaces=None, gate_namespaces=None, reason="superseded")

    @property
    def supersedes(self) -> bool:
        """True for the superseded notice: ``accepted`` false (its only real use)."""
        return not self.accepted

    @property
    def supports_credential_get(self) -> bool:
        """True only when ``agent_capabilities`` lists the literal ``credential.get``."""
        return "credential.get" in self.agent_capabilities


class ApprovalRequest(_Frame, frozen=True, kw_only=True, tag="approval_request"):
    """A request for a decision; ``id`` is the correlation key, ``server`` omitted when empty."""

    id: str = _always("")
    ts: str = _always("")
    namespace: str = _always("")
    op: str = _always("")
    server: str = ""
    shed: str = _always("")
    detail: str = _always("")
    expires_at: str = _always("")


class Event(_Frame, frozen=True, kw_only=True, tag="event"):
    """An audit record fanned out to the consumer; everything but ``kind``/``result`` is omitempty.

    ``ts`` is the audit entry's own timestamp, never re-stamped.
    """

    id: str = _always("")
    ts: str = _always("")
    kind: str = _always("audit")
    server: str = ""
    shed: str = ""
    ns: str = ""
    op: str = ""
    result: str = _always("")
    detail: str = ""
    code: str = ""
    reason: str = ""
    approval: str = ""
    decided_by: str = ""
    scope: str = ""
    ttl: str = ""


class Ping(_Frame, frozen=True, kw_only=True, tag="ping"):
    """The agent's keepalive, every 10 s after the handshake; the consumer answers ``pong``."""

    id: str = _always("")
    ts: str = _always("")


class TokenResponse(_Frame, frozen=True, kw_only=True, tag="token.response"):
    """The answer to ``token.get``; fail-closed: on error only ``error`` is set."""

    id: str = _always("")
    ts: str = _always("")
    in_reply_to: str = _always("")
    server: str = _always("")
    token: str = ""
    expires_at: str = ""
    error: str = ""


class CredentialResponse(_Frame, frozen=True, kw_only=True, tag="credential.response"):
    """The answer to ``credential.get``: a token, or a client certificate, or an error."""

    id: str = _always("")
    ts: str = _always("")
    in_reply_to: str = _always("")
    server: str = _always("")
    auth_mode: str = ""
    token: str = ""
    client_cert: str = ""
    cert_serial: str = ""
    expires_at: str = ""
    error: str = ""


ConsumerFrame: TypeAlias = Hello | ApprovalResponse | Pong | TokenGet | CredentialGet
"""Frames the consumer (app) sends and the agent reads."""

AgentFrame: TypeAlias = (
    HelloAck | ApprovalRequest | Event | Ping | TokenResponse | CredentialResponse
)
"""Frames the agent sends and the consumer (app) reads."""

_CONSUMER_TAGS = frozenset({"hello", "approval_response", "pong", "token.get", "credential.get"})
_AGENT_TAGS = frozenset(
    {"hello_ack", "approval_request", "event", "ping", "token.response", "credential.response"}
)

_ENCODER = msgspec.json.Encoder()
_V_PREFIX = b'{"v":%d,' % PROTOCOL_VERSION


def encode_frame(frame: ConsumerFrame | AgentFrame) -> bytes:
    """Encode ``frame`` as one NDJSON line with ``"v":2`` first (``{"v":2,"type":...}``).

    Raises:
        TypeError: ``frame`` is not an approval-channel frame.

    """
    if not isinstance(frame, _Frame):
        raise TypeError(f"not an approval-channel frame: {type(frame).__name__}")
    body = _ENCODER.encode(frame)
    return _V_PREFIX + body[1:] + b"\n"


_ENCODE_STR = _ENCODER.encode
_RESPONSE_HEAD = _V_PREFIX + b'"type":"approval_response","id":'
_DECISIONS = {decision: b',"decision":' + _ENCODE_STR(decision) for decision in ("approve", "deny")}
"""The ``decision`` part of the two decisions a consumer makes, encoded once."""


def encode_approval_response(
    id: str,
    ts: str,
    request_id: str,
    decision: str,
    *,
    decided_by: str = "",
    scope: str = "",
    ttl: str = "",
) -> bytes:
    """Return ``encode_frame(ApprovalResponse(...))`` for these fields, byte for byte.

    The consumer's per-approval encode, about twice as fast: no Struct is
    built; the fixed keys are pre-encoded around each string, which msgspec
    still escapes one by one (the ``decision`` of ``approve``/``deny`` is
    cached), and empty omitempty fields are left out as the Struct's rules say.
    """
    encode = _ENCODE_STR
    cached = _DECISIONS.get(decision)
    parts = [
        _RESPONSE_HEAD,
        encode(id),
        b',"ts":',
        encode(ts),
        b',"request_id":',
        encode(request_id),
        cached if cached is not None else b',"decision":' + encode(decision),
    ]
    if decided_by:
        parts += (b',"decided_by":', encode(decided_by))
    if scope:
        parts += (b',"scope":', encode(scope))
    if ttl:
        parts += (b',"ttl":', encode(ttl))
    parts.append(b"}\n")
    return b"".join(parts)


class _Envelope(LenientFrame, frozen=True, kw_only=True):
    type: Any = None


def _classify(line: bytes, exc: msgspec.DecodeError, known: frozenset[str]) -> RemoteProtocolError:
    """Turn a failed union decode into the right error; only runs on the error path."""
    error = remote_error_from_msgspec(exc)
    if error.code is not ErrorCode.SCHEMA_VIOLATION:
        return error
    try:
        envelope = decoder_for(_Envelope).decode(line)
    except msgspec.DecodeError:
        return error  # not an object at all
    tag = envelope.type
    if isinstance(tag, str) and tag not in known:
        return RemoteProtocolError(
            ErrorCode.UNKNOWN_TYPE, f"unknown frame type {tag!r}", path="$.type"
        )
    return error


def _decoder(decode: Callable[[bytes], _T], known: frozenset[str]) -> Callable[[bytes], _T]:
    def run(line: bytes) -> _T:
        try:
            return decode(line)
        except msgspec.DecodeError as exc:
            raise _classify(line, exc, known) from None

    return run


decode_consumer_frame: Callable[[bytes], ConsumerFrame] = _decoder(
    decoder_for(ConsumerFrame).decode, _CONSUMER_TAGS
)
"""Decode one app -> agent line (no newline needed).

Raises:
    RemoteProtocolError: ``MALFORMED_FRAME`` (not JSON), ``UNKNOWN_TYPE`` (a
        ``type`` this protocol does not have; the agent ignores those) or
        ``SCHEMA_VIOLATION`` (no ``type``, not an object, wrongly typed fields).
"""

decode_agent_frame: Callable[[bytes], AgentFrame] = _decoder(
    decoder_for(AgentFrame).decode, _AGENT_TAGS
)
"""Decode one agent -> app line; raises like :func:`decode_consumer_frame`."""
