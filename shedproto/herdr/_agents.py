"""herdr's agent rules: names, ``agent.start`` timeouts and arguments.

A name matches ``^[a-z][a-z0-9_-]{0,31}$``; ``agent.start``'s ``timeout_ms``
is above 3000 and at most 300000 (default 30000); an argument may not hold
NUL, CR or LF. Each check returns herdr's error as ``(code, message)``, or
None when the value is fine.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from ._codes import HerdrErrorCode

__all__ = [
    "AGENT_NAME_PATTERN",
    "AGENT_TIMEOUT_MAX_MS",
    "AGENT_TIMEOUT_MIN_MS",
    "agent_name_error",
    "agent_start_error",
]

AGENT_NAME_PATTERN = re.compile(r"[a-z][a-z0-9_-]{0,31}")
"""herdr's agent name rule: ``^[a-z][a-z0-9_-]{0,31}$``."""
AGENT_TIMEOUT_MIN_MS = 3000
AGENT_TIMEOUT_MAX_MS = 300_000

Failure = tuple[HerdrErrorCode, str]


def agent_name_error(name: str) -> Failure | None:
    """Return herdr's ``invalid_agent_name`` error for ``name``, or None."""
    if AGENT_NAME_PATTERN.fullmatch(name) is None:
        return (
            HerdrErrorCode.INVALID_AGENT_NAME,
            f"invalid agent name {name}; use ^[a-z][a-z0-9_-]{{0,31}}$",
        )
    return None


def agent_start_error(
    name: str, kind: str, kinds: Collection[str], timeout_ms: int | None, args: Sequence[str]
) -> Failure | None:
    """Return the first error herdr answers for these ``agent.start`` params, or None."""
    failure = agent_name_error(name)
    if failure is not None:
        return failure
    if kind not in kinds:
        return HerdrErrorCode.UNSUPPORTED_AGENT_KIND, f"unsupported agent kind {kind}"
    if timeout_ms is not None and not AGENT_TIMEOUT_MIN_MS < timeout_ms <= AGENT_TIMEOUT_MAX_MS:
        return (
            HerdrErrorCode.INVALID_AGENT_TIMEOUT,
            f"timeout_ms must be greater than {AGENT_TIMEOUT_MIN_MS} "
            f"and at most {AGENT_TIMEOUT_MAX_MS}",
        )
    for arg in args:
        if "\0" in arg or "\n" in arg or "\r" in arg:
            return HerdrErrorCode.INVALID_AGENT_ARGUMENT, f"invalid agent argument {arg!r}"
    return None
