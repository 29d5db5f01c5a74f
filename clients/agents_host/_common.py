"""What the async and blocking agents-host clients share: the error, request lines, results."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from shedproto._codec import encode_line
from shedproto.agents_host import ApiReply

__all__ = ["DEFAULT_TIMEOUT", "AgentsHostApiError", "request_line", "result_of"]

DEFAULT_TIMEOUT = 30.0
"""Seconds a request waits for its reply (``submit`` with ``wait`` takes its own)."""

T = TypeVar("T")


class AgentsHostApiError(Exception):
    """The host answered a request with an error; ``code`` is the wire code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def request_line(request_id: int, op: str, fields: dict[str, Any]) -> bytes:
    """Encode one request, leaving fields that are ``None`` out."""
    return encode_line(
        {"id": request_id, "op": op, **{k: v for k, v in fields.items() if v is not None}}
    )


def result_of(reply: ApiReply, type_: type[T]) -> T:
    """Return the reply's result as ``type_``.

    Raises:
        AgentsHostApiError: the reply is an error (its wire ``code``).

    """
    if not reply.ok:
        error = reply.error
        raise AgentsHostApiError(
            error.code if error else "unknown", error.message if error else "request failed"
        )
    return msgspec.convert(reply.result, type_)
