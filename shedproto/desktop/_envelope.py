"""The request/response envelope of both dialects: parsing, rendering, id rules.

Server side, :func:`parse_request` turns one request line into a
:class:`Request` or an :class:`EnvelopeRejection` carrying the exact reply
line; :func:`render_ok` / :func:`render_error` build response lines.
Client side, :func:`parse_response` reads a response line of either dialect.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from shedproto import ErrorCode, RemoteProtocolError, decoder_for, encode_line

from ._codes import DesktopCode
from ._dialect import Dialect, encode_response
from ._release import Release
from ._swift import swift_context, swift_mismatch, swift_missing, swift_null

__all__ = [
    "ANSWER_WITHOUT_ID",
    "ErrorBody",
    "ErrorResponse",
    "EnvelopeRejection",
    "OkResponse",
    "Request",
    "RequestFrame",
    "Response",
    "canonical_mac_id",
    "parse_request",
    "parse_response",
    "render_error",
    "render_ok",
    "request_line",
]

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
_INT64 = re.compile(rb"[+-]?[0-9]+\Z")
_ENVELOPE_KEYS = frozenset({"id", "op", "params"})
# Rust's char::is_whitespace (Unicode White_Space), which str::trim uses.
_RUST_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


class _NoId:
    """The marker for "this answer carries no ``id`` key" (Tauri bad JSON / over-cap)."""

    def __repr__(self) -> str:
        return "ANSWER_WITHOUT_ID"


ANSWER_WITHOUT_ID: Any = _NoId()
"""Pass as ``request_id`` to :func:`render_error` for an answer with no ``id`` key."""


class RequestFrame(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A request line as the client sends it (``params`` always an object here)."""

    id: str
    op: str
    params: dict[str, Any] = msgspec.field(default_factory=dict)


class ErrorBody(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """``error``: a wire code (either family) and a human message."""

    code: str
    message: str = ""


class OkResponse(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A success answer; ``id`` is a string on mac and any JSON value on Tauri."""

    id: Any = None
    ok: bool = True
    result: Any = None


class ErrorResponse(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A failure answer; Tauri omits ``id`` for bad JSON and ``frame_too_large``."""

    id: Any = None
    ok: bool = False
    error: ErrorBody


class Response(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A response line as read by a client of either dialect.

    ``has_id`` is false when the line carried no ``id`` key at all.
    """

    id: Any = None
    ok: bool
    result: Any = None
    error: ErrorBody | None = None
    has_id: bool = True


class Request(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A request whose envelope decoded; ``params`` is still the raw JSON value.

    ``id`` is the value the answer must echo: on mac the re-rendered int64
    string, on Tauri the JSON value verbatim (``None`` renders ``null``).
    """

    id: Any
    op: str
    params: Any


class EnvelopeRejection(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A request refused at the envelope: the code, message and the exact reply line."""

    code: str
    message: str
    reply: bytes


_ANY = decoder_for(Any)


def canonical_mac_id(raw: str) -> str | None:
    """Return the mac server's re-rendering of ``raw`` (Swift ``Int64(raw)``), or ``None``.

    ``"007"`` -> ``"7"``, ``"+5"`` -> ``"5"``; ``" 1"``, ``"1.0"``, ``""`` and
    values outside int64 are refused. Never raises.
    """
    if raw.isascii() and raw.isdigit() and len(raw) < 19 and raw[0] != "0":
        return raw  # the common case: already canonical and in range
    data = raw.encode("utf-8", "surrogatepass")
    if not _INT64.match(data):
        return None
    value = int(data)
    if not INT64_MIN <= value <= INT64_MAX:
        return None
    return str(value)


def _decode_any(line: bytes) -> Any:
    try:
        return _ANY.decode(line)
    except RecursionError:
        raise msgspec.DecodeError("JSON is nested too deeply") from None


def render_ok(dialect: Dialect, request_id: Any, result: Any) -> bytes:
    """Render a success line for ``dialect`` (mac: id, ok, result; Tauri: keys sorted).

    Raises:
        TypeError: ``result`` holds a value msgspec cannot encode.

    """
    return encode_response(dialect, {"id": request_id, "ok": True, "result": result})


def render_error(dialect: Dialect, request_id: Any, code: str, message: str) -> bytes:
    """Render a failure line; ``request_id`` :data:`ANSWER_WITHOUT_ID` omits the key."""
    error = {"code": code, "message": message}
    if request_id is ANSWER_WITHOUT_ID:
        return encode_response(dialect, {"ok": False, "error": error})
    return encode_response(dialect, {"id": request_id, "ok": False, "error": error})


def _mac_reject(message: str) -> EnvelopeRejection:
    text = f"envelope decode failed: {message}"
    code = DesktopCode.PARSE_ERROR.value
    return EnvelopeRejection(
        code=code, message=text, reply=render_error(Dialect.MAC, "0", code, text)
    )


def _swift_field(obj: dict[str, Any], key: str) -> str | EnvelopeRejection:
    """Decode ``key`` as a String the way ``KeyedDecodingContainer.decode`` does."""
    if key not in obj:
        return _mac_reject(swift_missing(key, []))
    value = obj[key]
    if value is None:
        return _mac_reject(swift_null("Swift.String", "String", [key]))
    if not isinstance(value, str):
        return _mac_reject(swift_mismatch("Swift.String", "String", value, [key]))
    return value


class _MacEnvelope(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """The fast path: a well-formed mac envelope decodes straight into this."""

    id: str
    op: str
    params: Any = None


class _Mac14Envelope(msgspec.Struct, gc=False):
    """v0.0.14's fast path: unknown envelope keys are ignored (see :func:`_parse_mac`)."""

    id: str
    op: str
    params: Any = None


class _TauriEnvelope(msgspec.Struct, gc=False):
    """The fast path: a Tauri envelope whose ``op`` is a string (others read as absent)."""

    id: Any = None
    op: Any = ""
    params: Any = msgspec.UNSET


_NO_ID: Any = msgspec.UNSET


class _WireResponse(msgspec.Struct, gc=False):
    """The fast path for :func:`parse_response`: any well-formed response of either dialect."""

    ok: bool
    id: Any = msgspec.UNSET
    result: Any = None
    error: ErrorBody | None = None


_RESPONSE = decoder_for(_WireResponse)
_MAC_ENVELOPE = decoder_for(_MacEnvelope)
_MAC14_ENVELOPE = decoder_for(_Mac14Envelope)
_TAURI_ENVELOPE = decoder_for(_TauriEnvelope)


def _parse_mac(line: bytes, strict: bool) -> Request | EnvelopeRejection:
    """Decode a mac envelope as ``IPCRequest.init(from:)`` does.

    ``strict`` (the newer app) refuses a key outside ``id``, ``op``, ``params``
    (charliek/shed ``desktop/Sources/ShedKit/IPC/IPCMessages.swift:29-46@b317de7``: an
    ``AnyJSONKey`` container lists every key). v0.0.14 runs the same check over a
    ``CodingKeys`` container, whose ``allKeys`` holds declared keys only, so an unknown
    key passes unseen (charliek/shed-desktop ``Sources/ShedKit/IPC/IPCMessages.swift:
    29-45@5a762e8``).
    """
    try:
        fast = (_MAC_ENVELOPE if strict else _MAC14_ENVELOPE).decode(line)
    except (msgspec.DecodeError, RecursionError):
        return _parse_mac_slowly(line, strict)
    request_id = canonical_mac_id(fast.id)
    if request_id is None:
        return _mac_reject(f"id: not a valid int64: {fast.id}")
    return Request(id=request_id, op=fast.op, params={} if fast.params is None else fast.params)


def _parse_mac_slowly(line: bytes, strict: bool) -> Request | EnvelopeRejection:
    # Foundation's JSONDecoder into IPCRequest: the message is "\(error)", a
    # Swift DecodingError description (or the id check's own sentence).
    try:
        obj = _decode_any(line)
    except msgspec.DecodeError:
        return _mac_reject(
            f"dataCorrupted({swift_context([], 'The given data was not valid JSON.')})"
        )
    if obj is None:
        description = "Cannot get keyed decoding container -- found null value instead."
        keys = "ShedKit.AnyJSONKey" if strict else "ShedKit.IPCRequest.CodingKeys"
        return _mac_reject(
            f"valueNotFound(Swift.KeyedDecodingContainer<{keys}>, "
            f"{swift_context([], description)})"
        )
    if not isinstance(obj, dict):
        dictionary = ("Swift.Dictionary<Swift.String, Any>", "Dictionary<String, Any>")
        return _mac_reject(swift_mismatch(*dictionary, obj, []))
    extra = [key for key in obj if key not in _ENVELOPE_KEYS] if strict else []
    if extra:
        description = f"unknown request fields: {', '.join(sorted(extra))}"
        return _mac_reject(f"dataCorrupted({swift_context([], description)})")
    raw_id = _swift_field(obj, "id")
    if isinstance(raw_id, EnvelopeRejection):
        return raw_id
    request_id = canonical_mac_id(raw_id)
    if request_id is None:
        return _mac_reject(f"id: not a valid int64: {raw_id}")
    op = _swift_field(obj, "op")
    if isinstance(op, EnvelopeRejection):
        return op
    params = obj.get("params")
    return Request(id=request_id, op=op, params={} if params is None else params)


def _parse_tauri(line: bytes) -> Request | EnvelopeRejection | None:
    # The Rust server reads a lossy String, trims it (str::trim), skips it if
    # empty, and parses what is left.
    if line.isascii():
        line = line.strip()
    else:
        line = line.decode("utf-8", "replace").strip(_RUST_WHITESPACE).encode("utf-8")
    if not line:
        return None
    try:
        fast = _TAURI_ENVELOPE.decode(line)
    except (msgspec.DecodeError, RecursionError):
        pass  # not an object, bad JSON, or an op that is not a string
    else:
        if isinstance(fast.op, str):
            params = {} if fast.params is msgspec.UNSET else fast.params
            return Request(id=fast.id, op=fast.op, params=params)
    try:
        obj = _decode_any(line)
    except msgspec.DecodeError as exc:
        message = str(exc)
        code = DesktopCode.BAD_REQUEST.value
        return EnvelopeRejection(
            code=code,
            message=message,
            reply=render_error(Dialect.TAURI, ANSWER_WITHOUT_ID, code, message),
        )
    if not isinstance(obj, dict):
        return Request(id=None, op="", params={})
    op = obj.get("op")
    return Request(
        id=obj.get("id"),
        op=op if isinstance(op, str) else "",
        params=obj.get("params", {}),
    )


def parse_request(
    dialect: Dialect, line: bytes, release: Release = Release.LATEST
) -> Request | EnvelopeRejection | None:
    """Parse one request line (without its LF) the way ``dialect``'s server does.

    Returns a :class:`Request`, an :class:`EnvelopeRejection` (mac
    ``parse-error`` with id ``"0"``; Tauri ``bad_request`` with no id), or
    ``None`` for a Tauri whitespace-only line, which is skipped. Under
    ``release`` v0.0.14 the mac server ignores unknown envelope keys (the newer one
    refuses them). Never raises.
    """
    if dialect is Dialect.MAC:
        return _parse_mac(line, strict=release is Release.LATEST)
    return _parse_tauri(line)


def request_line(request_id: str, op: str, params: Any) -> bytes:
    """Encode a client request line ``{"id", "op", "params"}`` with its LF.

    Raises:
        TypeError: ``params`` holds a value msgspec cannot encode.

    """
    return encode_line({"id": request_id, "op": op, "params": params})


def parse_response(line: bytes) -> Response:
    """Decode one response line of either dialect.

    Raises:
        RemoteProtocolError: ``MALFORMED_FRAME`` for bad JSON, ``SCHEMA_VIOLATION``
            for a line that is not a response object (``ok`` missing or not a
            bool, ``ok: false`` without an ``error`` object).

    """
    try:  # the fast path: one typed pass for every well-formed response
        wire = _RESPONSE.decode(line)
    except (msgspec.DecodeError, RecursionError):
        pass  # classify the failure (or accept a shape the typed pass is stricter on) below
    else:
        has_id = wire.id is not _NO_ID
        request_id = wire.id if has_id else None
        if wire.ok:
            return Response(id=request_id, ok=True, result=wire.result, has_id=has_id)
        if wire.error is not None:
            return Response(
                id=request_id, ok=False, result=wire.result, error=wire.error, has_id=has_id
            )
    return _parse_response_slowly(line)


def _parse_response_slowly(line: bytes) -> Response:
    try:
        obj = _decode_any(line)
    except msgspec.DecodeError as exc:
        raise RemoteProtocolError(
            ErrorCode.MALFORMED_FRAME, f"unparseable response: {exc}"
        ) from None
    if not isinstance(obj, dict) or not isinstance(obj.get("ok"), bool):
        raise RemoteProtocolError(
            ErrorCode.SCHEMA_VIOLATION, "response is not an object with a boolean 'ok'", path="$.ok"
        )
    error = None
    if not obj["ok"]:
        body = obj.get("error")
        if (
            not isinstance(body, dict)
            or not isinstance(body.get("code"), str)
            or not isinstance(body.get("message", ""), str)
        ):
            raise RemoteProtocolError(
                ErrorCode.SCHEMA_VIOLATION,
                "failure response without an error {code, message} object",
                path="$.error",
            )
        error = ErrorBody(code=body["code"], message=body.get("message", ""))
    return Response(
        id=obj.get("id"),
        ok=obj["ok"],
        result=obj.get("result"),
        error=error,
        has_id="id" in obj,
    )
