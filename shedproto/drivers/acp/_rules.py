"""The ACP driver's protocol rules, pure: agent answers to driver results.

The I/O shell (:mod:`shedproto.servers.drivers.acp`) sends the requests
and waits for the answers; what an answer *means* for the connector is
decided here:

* :func:`parse_session_page` -- a ``session/list`` result to a
  :class:`~shedproto.agents_host.SessionPage` (a malformed page is the agent's
  fault: :class:`~shedproto.RemoteProtocolError`);
* :func:`prompt_receipt` -- a ``session/prompt`` result's ``stopReason`` to
  the turn's :class:`~shedproto.agents_host.CommandExecutionResult`
  (``cancelled`` fails with code ``cancelled``; any other reason succeeds);
* :func:`rpc_failure` -- an agent's JSON-RPC error to a failed result
  (``auth_required``, ``-32000``, becomes ``acp-auth-required``);
* :func:`check_mode` / :func:`check_config_option` -- a ``set-mode`` /
  ``set-config-option`` command against what the agent advertised for the
  session (a ``boolean`` option takes a bool, any other kind one of its
  ``options[].value`` strings);
* :func:`advertised_controls` -- the modes and option types the source
  advertises in its capabilities (every session's, first seen first).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from shedproto._errors import ErrorCode, RemoteProtocolError
from shedproto.agents_host import (
    ACP_AUTH_REQUIRED,
    CommandExecutionResult,
    SessionPage,
    SessionSummary,
    execution_error,
)
from shedproto.connector import ReceiptErrorInfo

from ._connection import SessionControls

__all__ = [
    "AUTH_REQUIRED",
    "advertised_controls",
    "check_config_option",
    "check_mode",
    "parse_session_page",
    "prompt_receipt",
    "rpc_failure",
]

AUTH_REQUIRED = -32000
"""ACP's ``auth_required`` error code."""


def _text(row: dict[str, Any], key: str) -> str | None:
    value = row.get(key)
    return value if isinstance(value, str) else None


def parse_session_page(result: Any) -> SessionPage:
    """Return the sessions and ``nextCursor`` of a ``session/list`` result.

    Each summary keeps the agent's row as ``raw``; ``title``, ``cwd`` and
    ``updatedAt`` are taken when they are strings, a non-string ``nextCursor``
    ends the listing.

    Raises:
        RemoteProtocolError: ``SCHEMA_VIOLATION`` when the result has no
            ``sessions`` array or a row has no string ``sessionId``.

    """
    rows = result.get("sessions") if isinstance(result, dict) else None
    if not isinstance(result, dict) or not isinstance(rows, list):
        raise RemoteProtocolError(
            ErrorCode.SCHEMA_VIOLATION,
            "session/list answered without a sessions array",
            path="$.result.sessions",
        )
    sessions: list[SessionSummary] = []
    for index, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("sessionId"), str):
            raise RemoteProtocolError(
                ErrorCode.SCHEMA_VIOLATION,
                "session/list answered a session without a sessionId",
                path=f"$.result.sessions[{index}].sessionId",
            )
        sessions.append(
            SessionSummary(
                nativeSessionId=row["sessionId"],
                title=_text(row, "title"),
                cwd=_text(row, "cwd"),
                updatedAt=_text(row, "updatedAt"),
                raw=row,
            )
        )
    next_cursor = result.get("nextCursor")
    return SessionPage(
        sessions=tuple(sessions),
        nextCursor=next_cursor if isinstance(next_cursor, str) else None,
    )


def prompt_receipt(result: Any, operation: str) -> CommandExecutionResult:
    """Return the turn's result for a ``session/prompt`` answer; never raises.

    ``stopReason`` ``cancelled`` fails with code ``cancelled``; any other
    answer succeeds, with ``{"stopReason": ...}`` when the reason is a string.
    """
    stop_reason = result.get("stopReason") if isinstance(result, dict) else None
    if stop_reason == "cancelled":
        return CommandExecutionResult(
            status="failed",
            providerOperationId=operation,
            result={"stopReason": stop_reason},
            error=ReceiptErrorInfo(
                code="cancelled", message="the prompt was cancelled", retryable=False
            ),
        )
    return CommandExecutionResult(
        status="succeeded",
        providerOperationId=operation,
        result={"stopReason": stop_reason} if isinstance(stop_reason, str) else None,
    )


def rpc_failure(rpc_code: int, message: str, default_code: str) -> CommandExecutionResult:
    """Return the failed result for an agent's JSON-RPC error; never raises.

    The receipt code is ``acp-auth-required`` for :data:`AUTH_REQUIRED`,
    otherwise ``default_code``; ``message`` is the receipt's message.
    """
    code = ACP_AUTH_REQUIRED if rpc_code == AUTH_REQUIRED else default_code
    return execution_error("failed", code, message)


def check_mode(controls: SessionControls | None, mode: str) -> CommandExecutionResult | None:
    """Return ``None`` when the session offers ``mode``, else the failed result to report."""
    if controls is None or mode not in controls.modes:
        return execution_error(
            "failed", "acp-mode-unsupported", f"mode is not offered by the agent: {mode}"
        )
    return None


def check_config_option(
    controls: SessionControls | None, key: str, value: Any
) -> CommandExecutionResult | None:
    """Return ``None`` when ``value`` is valid for option ``key``, else the failed result.

    Codes: ``acp-config-option-unsupported`` (the session has no option
    ``key``), ``acp-config-value-invalid`` (the value does not fit it).
    """
    option = None if controls is None else controls.config_options.get(key)
    if option is None:
        return execution_error(
            "failed", "acp-config-option-unsupported", f"config option is not offered: {key}"
        )
    if option.get("type") == "boolean":
        valid = isinstance(value, bool)
    else:
        choices = option.get("options")
        values = (
            [c.get("value") for c in choices if isinstance(c, dict)]
            if isinstance(choices, list)
            else []
        )
        valid = isinstance(value, str) and value in values
    if not valid:
        return execution_error(
            "failed", "acp-config-value-invalid", f"value is not valid for config option {key}"
        )
    return None


def advertised_controls(
    sessions: Iterable[SessionControls],
) -> tuple[tuple[str, ...], dict[str, Any]]:
    """Return every session's modes (first seen first) and ``{option id: {"type": ...}}``.

    An option without a ``type`` is a ``select``; the first session naming an
    option decides its type.
    """
    modes: list[str] = []
    options: dict[str, Any] = {}
    for controls in sessions:
        for mode in controls.modes:
            if mode not in modes:
                modes.append(mode)
        for key, option in controls.config_options.items():
            options.setdefault(key, {"type": option.get("type", "select")})
    return tuple(modes), options
