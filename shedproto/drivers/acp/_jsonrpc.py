"""JSON-RPC 2.0 messages as ACP frames them: one compact JSON object per line.

JSON-RPC has no single discriminator field, so every inbound line decodes in
one pass into :class:`RpcMessage` (every member optional) and
:func:`classify` then names it: a request has ``method`` and ``id``, a
notification ``method`` and no ``id``, a response ``id`` and exactly one of
``result`` / ``error``. Unknown members are ignored (the ACP SDKs ignore
them too); ``jsonrpc`` must be ``"2.0"``.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

import msgspec

from shedproto._codec import LenientFrame, decode_frame, decoder_for
from shedproto._errors import ErrorCode, RemoteProtocolError

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "MessageKind",
    "RequestId",
    "RpcError",
    "RpcMessage",
    "classify",
    "decode_message",
    "error_response",
    "notification",
    "request",
    "result_response",
]

PARSE_ERROR = -32700
"""JSON-RPC: the line is not JSON."""
INVALID_REQUEST = -32600
"""JSON-RPC: the object is not a valid request."""
METHOD_NOT_FOUND = -32601
"""JSON-RPC: the method is not offered by this side."""
INVALID_PARAMS = -32602
"""JSON-RPC: the parameters are not valid for the method."""
INTERNAL_ERROR = -32603
"""JSON-RPC: the handler failed."""

RequestId = int | str
"""A JSON-RPC id; this library sends integers and accepts both from the peer."""

_UNSET: Any = msgspec.UNSET


class RpcError(LenientFrame, frozen=True, omit_defaults=True):
    """The ``error`` member of a JSON-RPC response."""

    code: int
    message: str
    data: Any = None


class RpcMessage(LenientFrame, frozen=True, omit_defaults=True):
    """Any JSON-RPC 2.0 message; members absent on the wire stay ``UNSET``."""

    jsonrpc: str
    id: msgspec.UnsetType | RequestId | None = _UNSET
    method: msgspec.UnsetType | str = _UNSET
    params: msgspec.UnsetType | Any = _UNSET
    result: msgspec.UnsetType | Any = _UNSET
    error: msgspec.UnsetType | RpcError = _UNSET


class MessageKind(Enum):
    """What :func:`classify` found a message to be."""

    REQUEST = "request"
    NOTIFICATION = "notification"
    RESPONSE = "response"


def decode_message(line: bytes) -> RpcMessage:
    """Decode one line into an :class:`RpcMessage` and check it is JSON-RPC 2.0.

    Raises:
        RemoteProtocolError: ``MALFORMED_FRAME`` for invalid JSON,
            ``SCHEMA_VIOLATION`` for a wrong shape or a ``jsonrpc`` other than
            ``"2.0"``; no state anywhere changes.

    """
    message: RpcMessage = decode_frame(decoder_for(RpcMessage), line)
    if message.jsonrpc != "2.0":
        raise RemoteProtocolError(
            ErrorCode.SCHEMA_VIOLATION,
            f"jsonrpc must be '2.0', got {message.jsonrpc!r}",
            path="$.jsonrpc",
        )
    classify(message)
    return message


def classify(message: RpcMessage) -> MessageKind:
    """Name the kind of ``message``.

    Raises:
        RemoteProtocolError: ``SCHEMA_VIOLATION`` when the members fit no kind
            (a response with both or neither of ``result`` and ``error``, a
            method together with a result).

    """
    has_id = message.id is not msgspec.UNSET
    if message.method is not msgspec.UNSET:
        if message.result is not msgspec.UNSET or message.error is not msgspec.UNSET:
            raise RemoteProtocolError(
                ErrorCode.SCHEMA_VIOLATION, "a JSON-RPC request cannot carry result or error"
            )
        return MessageKind.REQUEST if has_id else MessageKind.NOTIFICATION
    if not has_id:
        raise RemoteProtocolError(
            ErrorCode.SCHEMA_VIOLATION, "a JSON-RPC message needs a method or an id"
        )
    if (message.result is msgspec.UNSET) == (message.error is msgspec.UNSET):
        raise RemoteProtocolError(
            ErrorCode.SCHEMA_VIOLATION, "a JSON-RPC response needs exactly one of result and error"
        )
    return MessageKind.RESPONSE


def request(request_id: RequestId, method: str, params: Any) -> RpcMessage:
    """Build a request message (``params`` is sent as given)."""
    return RpcMessage(jsonrpc="2.0", id=request_id, method=method, params=params)


def notification(method: str, params: Any) -> RpcMessage:
    """Build a notification message (no id, no answer expected)."""
    return RpcMessage(jsonrpc="2.0", method=method, params=params)


def result_response(request_id: RequestId | None, result: Any) -> RpcMessage:
    """Build a success response; ``result`` ``None`` is sent as ``null``."""
    return RpcMessage(jsonrpc="2.0", id=request_id, result=result)


def error_response(
    request_id: RequestId | None, code: int, message: str, data: Any = None
) -> RpcMessage:
    """Build an error response; ``data`` is omitted when ``None``."""
    error = RpcError(code=code, message=message, data=data)
    return RpcMessage(jsonrpc="2.0", id=request_id, error=error)
