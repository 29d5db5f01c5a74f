"""Result helpers over the host's driver value types (:mod:`shedproto.agents_host`).

The shapes themselves (``CommandExecutionResult``, ``SessionSummary``,
``SessionPage``, ``SessionSnapshot``) belong to the
agents-host core; these helpers build them the way both drivers need.
"""

from __future__ import annotations

from typing import Any

from shedproto.agents_host import CommandExecutionResult
from shedproto.connector import ReceiptErrorInfo

__all__ = [
    "PREVIEW_LIMIT",
    "succeeded",
    "failed",
    "unsupported_result",
    "unknown",
    "needs_confirmation",
    "text_preview",
]

PREVIEW_LIMIT = 500
"""A normalised message's ``textPreview`` holds at most this many characters."""


def succeeded(
    result: dict[str, Any] | None = None,
    *,
    provider_operation_id: str | None = None,
    affected_session: str | None = None,
    affected_session_set: bool = False,
) -> CommandExecutionResult:
    """Return a ``succeeded`` result; ``affected_session_set`` makes ``None`` mean "no refresh"."""
    return CommandExecutionResult(
        status="succeeded",
        providerOperationId=provider_operation_id,
        result=result,
        affectedSession=affected_session,
        affected_session_set=affected_session_set or affected_session is not None,
    )


def failed(
    code: str,
    message: str,
    *,
    retryable: bool = False,
    provider_operation_id: str | None = None,
    result: dict[str, Any] | None = None,
) -> CommandExecutionResult:
    """Return a ``failed`` result with a structured error; never raises."""
    return CommandExecutionResult(
        status="failed",
        providerOperationId=provider_operation_id,
        result=result,
        error=ReceiptErrorInfo(code=code, message=message, retryable=retryable),
    )


def unsupported_result(
    message: str, *, code: str = "unsupported", retryable: bool = False
) -> CommandExecutionResult:
    """Return an ``unsupported`` result with ``message``; never raises."""
    return CommandExecutionResult(
        status="unsupported",
        error=ReceiptErrorInfo(code=code, message=message, retryable=retryable),
    )


def unknown(
    code: str, message: str, *, provider_operation_id: str | None = None
) -> CommandExecutionResult:
    """Return ``unknown``: the outcome cannot be known and is never retried; never raises."""
    return CommandExecutionResult(
        status="unknown",
        providerOperationId=provider_operation_id,
        error=ReceiptErrorInfo(code=code, message=message, retryable=False),
    )


def needs_confirmation(code: str, message: str) -> CommandExecutionResult:
    """Return ``needs-confirmation`` (for example ``already-active``); never raises."""
    return CommandExecutionResult(
        status="needs-confirmation",
        error=ReceiptErrorInfo(code=code, message=message, retryable=False),
    )


def text_preview(text: str | None) -> str | None:
    """Return ``text`` cut to :data:`PREVIEW_LIMIT` characters, or ``None`` when empty."""
    if not text:
        return None
    return text[:PREVIEW_LIMIT]
