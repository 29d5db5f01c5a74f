"""The agents-host Unix-socket API: newline-delimited JSON requests, replies and events.

This protocol is this library's own (the real host has no socket): one
compact JSON object per line, at most :data:`API_MAX_FRAME_BYTES` per line;
every request gets exactly one reply, and ``subscribe`` adds events. The ops,
replies, events and error codes are described in the documentation:
``docs/protocols/agents-host.md`` (*The socket API*).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from shedproto._codec import LenientFrame, StrictFrame, decoder_for, encode_line
from shedproto._errors import ErrorCode, RemoteProtocolError, remote_error_from_msgspec
from shedproto._framing import FramingPolicy, OverCap
from shedproto.connector import Health, IndexEntry, Receipt, SessionIndex

__all__ = [
    "API_FRAMING",
    "API_MAX_FRAME_BYTES",
    "ApiError",
    "ApiErrorCode",
    "ApiEvent",
    "ApiReply",
    "ApiRequest",
    "CollectRequest",
    "CollectResult",
    "HealthRequest",
    "HealthResult",
    "ReceiptRequest",
    "ReceiptResult",
    "ReceiptsRequest",
    "ReceiptsResult",
    "SessionRequest",
    "SessionResult",
    "SessionsRequest",
    "SessionsResult",
    "SubmitRequest",
    "SubmitResult",
    "SubscribeRequest",
    "SubscribeResult",
    "Topic",
    "api_schemas",
    "decode_reply",
    "decode_request",
    "encode_error",
    "encode_event",
    "encode_result",
]

API_MAX_FRAME_BYTES = 1 << 20
"""The longest request or reply line (1 MiB; a prompt is at most 128 Ki characters)."""
API_FRAMING = FramingPolicy(max_frame_bytes=API_MAX_FRAME_BYTES, over_cap=OverCap.RAISE)
"""Framing on both sides: blank lines skipped, an over-cap line is fatal."""
MAX_RECEIPTS_LIMIT = 1000
"""The largest ``limit`` of a ``receipts`` request."""

ApiErrorCode = Literal[
    "parse-error",
    "invalid-request",
    "unknown-op",
    "frame-too-large",
    "invalid-command",
    "unknown-producer",
    "not-accepting",
    "command-task-failed",
    "unavailable",
]
"""The wire error codes of this API."""

Topic = Literal["receipts", "health", "sessions"]
"""What a subscription can follow."""

RequestId = int | str


class SubmitRequest(StrictFrame, frozen=True, tag_field="op", tag="submit"):
    """Queue one command (an object or a JSON string) on the owner's or a producer's queue.

    ``wait`` holds the reply until the command's terminal receipt is published.
    """

    id: RequestId
    command: dict[str, Any] | str
    producer: str | None = None
    wait: bool = False


class ReceiptRequest(StrictFrame, frozen=True, tag_field="op", tag="receipt"):
    """Read one published receipt."""

    id: RequestId
    commandId: str  # noqa: N815 - wire name
    producer: str | None = None


class ReceiptsRequest(StrictFrame, frozen=True, tag_field="op", tag="receipts"):
    """List published receipts, most recent first; ``producer: ""`` is the owner's queue."""

    id: RequestId
    producer: str | None = None
    limit: int = msgspec.field(default=50)


class HealthRequest(StrictFrame, frozen=True, tag_field="op", tag="health"):
    """Read the published health document (``null`` before the first publication)."""

    id: RequestId


class SessionsRequest(StrictFrame, frozen=True, tag_field="op", tag="sessions"):
    """Read the ``recent`` (default) or ``all`` session index."""

    id: RequestId
    bucket: Literal["recent", "all"] = "recent"


class SessionRequest(StrictFrame, frozen=True, tag_field="op", tag="session"):
    """Read one session row and its manifest by index key."""

    id: RequestId
    key: str


class CollectRequest(StrictFrame, frozen=True, tag_field="op", tag="collect"):
    """Request a complete collection, as SIGHUP does (at most one stays pending)."""

    id: RequestId


class SubscribeRequest(StrictFrame, frozen=True, tag_field="op", tag="subscribe"):
    """Follow changes; events are written on this connection until it closes."""

    id: RequestId
    topics: tuple[Topic, ...] = ("receipts", "health", "sessions")


ApiRequest = (
    SubmitRequest
    | ReceiptRequest
    | ReceiptsRequest
    | HealthRequest
    | SessionsRequest
    | SessionRequest
    | CollectRequest
    | SubscribeRequest
)
"""Every request, tagged by ``op``."""


class SubmitResult(LenientFrame, frozen=True, kw_only=True, omit_defaults=True):
    """Where the command's receipt will be, and (with ``wait``) the terminal receipt."""

    commandId: str  # noqa: N815 - wire name
    producer: str | None = None
    queued: bool
    receiptPath: str  # noqa: N815 - wire name
    receipt: Receipt | None = None


class ReceiptResult(LenientFrame, frozen=True):
    """One receipt, or ``null``."""

    receipt: Receipt | None


class ReceiptsResult(LenientFrame, frozen=True):
    """Receipts, most recently published first."""

    receipts: tuple[Receipt, ...]


class HealthResult(LenientFrame, frozen=True):
    """The published health document, or ``null``."""

    health: Health | None


class SessionsResult(LenientFrame, frozen=True):
    """A session index, or ``null`` before the first collection."""

    index: SessionIndex | None


class SessionResult(LenientFrame, frozen=True):
    """One index row and its manifest document, each ``null`` when absent."""

    session: IndexEntry | None
    manifest: dict[str, Any] | None


class CollectResult(LenientFrame, frozen=True):
    """``started`` when idle; ``pending`` when one was running (at most one kept)."""

    outcome: Literal["started", "pending", "covered"]


class SubscribeResult(LenientFrame, frozen=True):
    """The topics now followed."""

    topics: tuple[Topic, ...]


class ApiError(LenientFrame, frozen=True):
    """A failed request's error."""

    code: str
    message: str


class ApiReply(LenientFrame, frozen=True, omit_defaults=True):
    """Any line from the host: a reply (``id``, ``ok``) or an event (``event``, ``data``).

    ``result`` is left raw; convert it with ``msgspec.convert`` into the
    op's result type.
    """

    id: RequestId | None = None
    ok: bool | None = None
    result: Any = None
    error: ApiError | None = None
    event: Literal["receipt", "health", "sessions"] | None = None
    data: Any = None


class ApiEvent(LenientFrame, frozen=True):
    """An event line written to subscribers."""

    event: Literal["receipt", "health", "sessions"]
    data: Any


class _Envelope(LenientFrame, frozen=True):
    id: RequestId | None = None
    op: Any = None


_OPS = frozenset(
    {"submit", "receipt", "receipts", "health", "sessions", "session", "collect", "subscribe"}
)


def encode_error(request_id: RequestId | None, code: ApiErrorCode, message: str) -> bytes:
    """Return the error reply line."""
    return encode_line({"id": request_id, "ok": False, "error": {"code": code, "message": message}})


def encode_result(request_id: RequestId, result: Any) -> bytes:
    """Return the success reply line for ``result`` (a result Struct)."""
    return encode_line({"id": request_id, "ok": True, "result": result})


def encode_event(event: Literal["receipt", "health", "sessions"], data: Any) -> bytes:
    """Return an event line."""
    return encode_line(ApiEvent(event=event, data=data))


def decode_request(line: bytes) -> ApiRequest:
    """Decode one request line.

    Raises:
        RemoteProtocolError: ``MALFORMED_FRAME`` (not JSON), ``UNKNOWN_TYPE``
            (an ``op`` this API lacks) or ``SCHEMA_VIOLATION``; ``reply_hint``
            is the exact error reply to send (with the request's ``id`` when
            it could be read). The connection stays usable.

    """
    try:
        request: ApiRequest = decoder_for(ApiRequest).decode(line)
    except msgspec.DecodeError as exc:
        raise _request_error(line, exc) from None
    if isinstance(request, ReceiptsRequest) and not 1 <= request.limit <= MAX_RECEIPTS_LIMIT:
        hint = encode_error(
            request.id, "invalid-request", f"limit must be from 1 through {MAX_RECEIPTS_LIMIT}"
        )
        raise RemoteProtocolError(
            ErrorCode.SCHEMA_VIOLATION, "limit out of range", path="$.limit", reply_hint=hint
        )
    return request


def _request_error(line: bytes, exc: msgspec.DecodeError) -> RemoteProtocolError:
    try:
        envelope = decoder_for(_Envelope).decode(line)
    except msgspec.DecodeError:
        hint = encode_error(None, "parse-error", "request is not a JSON object")
        if not isinstance(exc, msgspec.ValidationError):
            return RemoteProtocolError(ErrorCode.MALFORMED_FRAME, str(exc), reply_hint=hint)
        hint = encode_error(None, "invalid-request", str(exc))
        return RemoteProtocolError(ErrorCode.SCHEMA_VIOLATION, str(exc), reply_hint=hint)
    if isinstance(envelope.op, str) and envelope.op not in _OPS:
        message = f"unknown op: {envelope.op}"
        hint = encode_error(envelope.id, "unknown-op", message)
        return RemoteProtocolError(ErrorCode.UNKNOWN_TYPE, message, reply_hint=hint)
    text = str(exc)
    hint = encode_error(envelope.id, "invalid-request", text)
    return RemoteProtocolError(ErrorCode.SCHEMA_VIOLATION, text, reply_hint=hint)


def decode_reply(line: bytes) -> ApiReply:
    """Decode one line from the host (a reply or an event).

    Raises:
        RemoteProtocolError: ``MALFORMED_FRAME`` or ``SCHEMA_VIOLATION``.

    """
    try:
        reply: ApiReply = decoder_for(ApiReply).decode(line)
    except msgspec.DecodeError as exc:
        raise remote_error_from_msgspec(exc) from None
    if reply.event is None and reply.ok is None:
        raise RemoteProtocolError(
            ErrorCode.SCHEMA_VIOLATION, "a host line needs ok (a reply) or event (an event)"
        )
    return reply


def api_schemas() -> dict[str, Any]:
    """Return the API's JSON Schemas (requests and replies) for ``schemas/``."""
    return {
        "agents-host-api-request.json": msgspec.json.schema(ApiRequest),
        "agents-host-api-reply.json": msgspec.json.schema(ApiReply),
        "agents-host-api-results.json": _results_schema(),
    }


def _results_schema() -> dict[str, Any]:
    results = (
        SubmitResult,
        ReceiptResult,
        ReceiptsResult,
        HealthResult,
        SessionsResult,
        SessionResult,
        CollectResult,
        SubscribeResult,
    )
    refs, components = msgspec.json.schema_components(results, ref_template="#/$defs/{name}")
    return {
        "title": "agents-host API reply results, one per op",
        "anyOf": list(refs),
        "$defs": components,
    }
