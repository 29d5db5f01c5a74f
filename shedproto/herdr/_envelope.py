"""The JSON envelope around requests, answers and pushed stream lines.

=========  ===========================================================
request    ``{"id": str, "method": ..., "params": {...}}`` (params required)
success    ``{"id": ..., "result": {"type": ..., ...}}``
error      ``{"id": ..., "error": {"code": ..., "message": ...}}``
event      ``{"event": "<snake_case kind>", "data": {"type": ..., ...}}``
sub event  ``{"event": "pane.output_matched", "data": {...}}`` (data untagged)
=========  ===========================================================

Unknown fields are ignored everywhere, as herdr and its clients ignore them.
Decoders are built once per protocol (:func:`request_decoder`,
:func:`response_decoder`).
"""

from __future__ import annotations

import functools
from typing import Any, Generic, TypeVar, Union

import msgspec

from shedproto._codec import LenientFrame, decode_frame, decoder_for, encode, encode_line
from shedproto._errors import ErrorCode, RemoteProtocolError

from . import types as t
from ._codes import HerdrErrorCode
from ._releases import hidden_request_type
from ._versions import require_supported

__all__ = [
    "ErrorResponse",
    "LifecycleEvent",
    "Response",
    "SubscriptionEvent",
    "SuccessResponse",
    "decode_request",
    "decode_response",
    "decode_stream_line",
    "encode_request",
    "invalid_request_reply",
    "release_request_decoder",
    "retired_method_reply",
    "request_decoder",
    "request_id_of",
    "response_decoder",
]

R = TypeVar("R")

_UNSET = msgspec.UNSET
"""A field the answer left out (``is`` against the one instance: no type check per answer)."""


class SuccessResponse(LenientFrame, Generic[R], frozen=True, kw_only=True):
    """A success answer: ``{"id": ..., "result": {"type": ..., ...}}``."""

    id: str
    result: R


class ErrorResponse(LenientFrame, frozen=True, kw_only=True):
    """An error answer: ``{"id": ..., "error": {"code": ..., "message": ...}}``."""

    id: str
    error: t.ErrorBody

    @classmethod
    def of(cls, id: str, code: str | HerdrErrorCode, message: str) -> ErrorResponse:
        """Build an error answer; ``code`` may be a :class:`HerdrErrorCode` or any string."""
        wire = code.value if isinstance(code, HerdrErrorCode) else code
        return cls(id=id, error=t.ErrorBody(code=wire, message=message))


Response = SuccessResponse[Any] | ErrorResponse
"""Either answer to a request."""


LifecycleEvent = t.EventEnvelope
"""A pushed lifecycle event: ``{"event": "workspace_created", "data": {"type": ...}}``."""


class SubscriptionEvent(LenientFrame, frozen=True, kw_only=True):
    """A pushed subscription event (``pane.output_matched`` and siblings); data is untagged."""

    event: t.SubscriptionEventKind
    data: t.PaneOutputMatchedEvent | t.PaneAgentStatusChangedEvent | t.PaneScrollChangedEvent


class _ResponseEnvelope(LenientFrame, Generic[R], frozen=True, kw_only=True):
    id: str
    result: R | msgspec.UnsetType = msgspec.UNSET
    error: t.ErrorBody | msgspec.UnsetType = msgspec.UNSET


class _StreamLine(LenientFrame, frozen=True, kw_only=True):
    event: str
    data: msgspec.Raw


_SUBSCRIPTION_DATA: dict[str, Any] = {
    "pane.output_matched": t.PaneOutputMatchedEvent,
    "pane.agent_status_changed": t.PaneAgentStatusChangedEvent,
    "pane.scroll_changed": t.PaneScrollChangedEvent,
}


def _result_union(protocol: int) -> Any:
    require_supported(protocol)
    return t.RESULT_UNIONS[protocol]


def _request_union(protocol: int) -> Any:
    require_supported(protocol)
    return t.REQUEST_UNIONS[protocol]


@functools.cache
def request_decoder(protocol: int) -> msgspec.json.Decoder[Any]:
    """Return the cached decoder of one request line for ``protocol``.

    Raises:
        VersionMismatchError: ``protocol`` is not supported.

    """
    return decoder_for(_request_union(protocol))


@functools.cache
def response_decoder(protocol: int) -> msgspec.json.Decoder[Any]:
    """Return the cached decoder of one answer line for ``protocol``.

    Raises:
        VersionMismatchError: ``protocol`` is not supported.

    """
    return decoder_for(_ResponseEnvelope[_result_union(protocol)])  # type: ignore[misc]


def encode_request(request: t.Request) -> bytes:
    """Encode ``request`` as one line in herdr's key order: ``id``, ``method``, ``params``.

    (herdr's own client serializes ``Request { id, #[serde(flatten)] method }``,
    so ``id`` comes first; msgspec would put the tag first.)
    """
    method = request.__struct_config__.tag
    return b"".join(
        (
            b'{"id":',
            encode(request.id),
            b',"method":',
            encode(method),
            b',"params":',
            encode(request.params),  # type: ignore[attr-defined]
            b"}\n",
        )
    )


def invalid_request_reply(message: str, id: str = "") -> bytes:
    """Return herdr's answer to a request line it could not parse.

    ``id`` is ``""`` up to herdr 0.9.1; later releases echo the line's string
    ``id`` when it has one (see :func:`request_id_of`).
    """
    reply = ErrorResponse.of(id, HerdrErrorCode.INVALID_REQUEST, f"invalid request: {message}")
    return encode_line(reply)


class _IdProbe(LenientFrame, frozen=True, kw_only=True):
    id: Any = None


def request_id_of(line: bytes) -> str:
    """Return the string ``id`` of a request line that may be invalid, else ``""``.

    A line whose object names ``id`` twice gives ``""``: herdr's serde reading
    refuses the duplicate (src/api/server.rs:354-366@3f32b738,
    "ambiguous duplicate IDs stay uncorrelated").
    """
    try:
        probe = decoder_for(_IdProbe).decode(line)
    except msgspec.DecodeError:
        return ""
    if not isinstance(probe.id, str):
        return ""
    if line.count(b'"id"') > 1 and _has_duplicate_id(line):
        return ""
    return probe.id


class _MethodProbe(LenientFrame, frozen=True, kw_only=True):
    method: Any = None


def retired_method_reply(line: bytes, retired: frozenset[str], id: str) -> bytes | None:
    """Return herdr's ``unknown_method`` answer when ``line`` names a ``retired`` method.

    ``None`` when it names another method (or none): that line gets
    ``invalid_request``. herdrdev/herdr src/api/server.rs:272-294@3f32b738
    (``retired_pane_graphics_method_error``).
    """
    if not retired:
        return None
    try:
        probe = decoder_for(_MethodProbe).decode(line)
    except msgspec.DecodeError:
        return None
    if not isinstance(probe.method, str) or probe.method not in retired:
        return None
    reply = ErrorResponse.of(id, HerdrErrorCode.UNKNOWN_METHOD, f"unknown method: {probe.method}")
    return encode_line(reply)


def _has_duplicate_id(line: bytes) -> bool:
    """Return whether the top-level object of ``line`` names ``id`` more than once."""
    import json

    counts: list[int] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        counts.append(sum(key == "id" for key, _ in items))
        return dict(items)

    try:
        json.loads(line, object_pairs_hook=pairs)
    except ValueError:
        return False
    return bool(counts) and counts[-1] > 1  # the outermost object is closed last


@functools.cache
def release_request_decoder(protocol: int, methods: frozenset[str]) -> msgspec.json.Decoder[Any]:
    """Return the cached decoder of requests for ``methods`` of ``protocol`` (a release's set).

    A method of :data:`~shedproto.herdr.HIDDEN_METHODS` that ``protocol``'s
    table lacks is decoded with protocol 22's type.

    Raises:
        VersionMismatchError: ``protocol`` is not supported.
        KeyError: a method ``protocol`` does not have and that is not hidden.

    """
    require_supported(protocol)
    table = t.PROTOCOL_TABLES[protocol][0]
    members = [table[m] for m in table if m in methods]
    # a method the published schema skips is served all the same (src/api/schema.rs:182@v0.8.2)
    members += [hidden_request_type(m) for m in sorted(methods - set(table))]
    return decoder_for(Union[tuple(members)])  # noqa: UP007


def decode_request(
    line: bytes, protocol: int, methods: frozenset[str] | None = None
) -> t.Request:
    """Decode one request line (without its newline) for ``protocol``.

    ``methods`` narrows the protocol's table to one release's set: another
    method is an unknown variant, as in that release.

    Raises:
        RemoteProtocolError: ``MALFORMED_FRAME`` (not JSON), ``UNKNOWN_TYPE``
            (an unknown method) or ``SCHEMA_VIOLATION`` (missing ``params``, a
            non-string id, bad params); its ``reply_hint`` is herdr's
            ``invalid_request`` answer with id ``""``.

    """
    try:
        decoder = (
            request_decoder(protocol)
            if methods is None
            else release_request_decoder(protocol, methods)
        )
        request: t.Request = decoder.decode(line)
    except msgspec.DecodeError as exc:
        text = str(exc)
        message = text.split(" - at `", 1)[0]
        hint = invalid_request_reply(text)
        path = text.rsplit(" - at `", 1)[1].rstrip("`") if " - at `" in text else None
        if isinstance(exc, msgspec.ValidationError):
            code = ErrorCode.UNKNOWN_TYPE if path == "$.method" else ErrorCode.SCHEMA_VIOLATION
        else:
            code = ErrorCode.MALFORMED_FRAME
        raise RemoteProtocolError(code, message, path=path, reply_hint=hint) from None
    return request


def decode_response(line: bytes, protocol: int) -> SuccessResponse[Any] | ErrorResponse:
    """Decode one answer line for ``protocol``.

    Raises:
        RemoteProtocolError: not JSON, a wrong shape, or neither ``result`` nor ``error``.

    """
    envelope = decode_frame(response_decoder(protocol), line)
    if envelope.error is not _UNSET:
        return ErrorResponse(id=envelope.id, error=envelope.error)
    if envelope.result is _UNSET:
        raise RemoteProtocolError(
            ErrorCode.SCHEMA_VIOLATION, "answer has neither `result` nor `error`"
        )
    return SuccessResponse(id=envelope.id, result=envelope.result)


def decode_stream_line(line: bytes) -> LifecycleEvent | SubscriptionEvent:
    """Decode one pushed line of an ``events.subscribe`` stream.

    Raises:
        RemoteProtocolError: not JSON, an unknown event kind, or a wrong payload.

    """
    raw = decode_frame(decoder_for(_StreamLine), line)
    data_type = _SUBSCRIPTION_DATA.get(raw.event)
    if data_type is not None:
        data = decode_frame(decoder_for(data_type), raw.data)
        return SubscriptionEvent(event=raw.event, data=data)
    event: LifecycleEvent = decode_frame(decoder_for(LifecycleEvent), line)
    if event.event != event.data.__struct_config__.tag:
        raise RemoteProtocolError(
            ErrorCode.SCHEMA_VIOLATION,
            f"event {event.event!r} carries data of type {event.data.__struct_config__.tag!r}",
            path="$.data.type",
        )
    return event
