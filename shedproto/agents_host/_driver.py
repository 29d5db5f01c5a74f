"""The values a connector driver hands the host (connector ``types.ts``, spec section 7.1).

Drivers are I/O shells (:mod:`shedproto.servers.agents_host`); what they
return is plain data defined here so that the worker and collection logic
stay pure.

Receipt error codes of the reference host's ACP driver. The spec's worker
codes (``provider-call-failed``, ``source-unavailable``...) are fixed; a
driver adds its own, as the connector's Claude driver adds ``claude-*``:

==========================  ===========  =========  ==========================================
code                        status       retryable  when
==========================  ===========  =========  ==========================================
``acp-prompt-failed``       failed       false      the agent answered the request with an error
``acp-auth-required``       failed       false      the agent answered ``auth_required`` (-32000)
``acp-start-failed``        failed       false      ``session/new`` failed: no session exists
``acp-agent-exited``        unknown      false      the agent died during the turn (it restarts)
``acp-agent-unavailable``   failed       true       the agent is down and not yet restarted
``acp-prompt-deadline``     failed       false      the turn outlived ``promptTimeoutMs``
==========================  ===========  =========  ==========================================

Messages carry the agent's ``error.data`` (bounded, secrets redacted) and
flag a code outside JSON-RPC's reserved range as ``nonstandard``.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from shedproto.connector import NormalizedMessage, ReceiptErrorInfo

__all__ = [
    "ACP_AGENT_EXITED",
    "ACP_AGENT_UNAVAILABLE",
    "ACP_AUTH_REQUIRED",
    "ACP_PROMPT_DEADLINE",
    "ACP_PROMPT_FAILED",
    "ACP_START_FAILED",
    "ExecutionStatus",
    "CommandExecutionResult",
    "SessionPage",
    "SessionSnapshot",
    "SessionSummary",
    "execution_error",
    "unsupported",
]

ACP_PROMPT_FAILED = "acp-prompt-failed"
"""The agent answered a request of the operation with a JSON-RPC error."""
ACP_AUTH_REQUIRED = "acp-auth-required"
"""The agent answered ``auth_required`` (-32000): configure the source's ``authMethod``."""
ACP_START_FAILED = "acp-start-failed"
"""``session/new`` failed; the agent assigned no session (nothing is refreshed)."""
ACP_AGENT_EXITED = "acp-agent-exited"
"""The agent process ended during the operation; the turn's outcome is unknown."""
ACP_AGENT_UNAVAILABLE = "acp-agent-unavailable"
"""The agent is down and its restart has not succeeded yet; retry later."""
ACP_PROMPT_DEADLINE = "acp-prompt-deadline"
"""The turn ran past the source's ``promptTimeoutMs``; it was cancelled."""

ExecutionStatus = Literal["succeeded", "failed", "unsupported", "needs-confirmation", "unknown"]
"""The terminal statuses a driver operation can report."""


class SessionSummary(msgspec.Struct, frozen=True, kw_only=True):
    """One listed session (``SessionSummary``); ``raw`` is the provider's own record."""

    nativeSessionId: str  # noqa: N815 - wire name
    title: str | None = None
    cwd: str | None = None
    createdAt: str | None = None  # noqa: N815 - wire name
    updatedAt: str | None = None  # noqa: N815 - wire name
    archived: bool | None = None
    active: bool | None = None
    startedAs: str | None = None  # noqa: N815 - wire name
    raw: dict[str, Any] = msgspec.field(default_factory=dict)


class SessionPage(msgspec.Struct, frozen=True, kw_only=True):
    """One page of ``listSessions``; ``nextCursor`` ``None`` ends the inventory."""

    sessions: tuple[SessionSummary, ...]
    nextCursor: str | None = None  # noqa: N815 - wire name


class SessionSnapshot(msgspec.Struct, frozen=True, kw_only=True):
    """``readSession``: the summary, raw events, normalised messages and completeness."""

    summary: SessionSummary
    events: tuple[Any, ...]
    normalizedMessages: tuple[NormalizedMessage, ...]  # noqa: N815 - wire name
    complete: bool
    revision: str | None = None


class CommandExecutionResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a driver operation reports; ``affectedSession`` ``None`` skips the refresh.

    ``affected_session_set`` distinguishes "not given" (refresh the command's
    own session) from an explicit ``None`` (no refresh, as a desktop start).
    """

    status: ExecutionStatus
    providerOperationId: str | None = None  # noqa: N815 - wire name
    result: dict[str, Any] | None = None
    error: ReceiptErrorInfo | None = None
    affectedSession: str | None = None  # noqa: N815 - wire name
    affected_session_set: bool = False


def unsupported(operation: str, source_id: str) -> CommandExecutionResult:
    """Return the ``unsupported`` result every driver gives for an operation it lacks."""
    return CommandExecutionResult(
        status="unsupported",
        error=ReceiptErrorInfo(
            code="unsupported",
            message=f"{operation} is not supported by source {source_id}",
            retryable=False,
        ),
    )


def execution_error(
    status: ExecutionStatus, code: str, message: str, *, retryable: bool = False
) -> CommandExecutionResult:
    """Return a result with ``status`` and one error."""
    return CommandExecutionResult(
        status=status, error=ReceiptErrorInfo(code=code, message=message, retryable=retryable)
    )
