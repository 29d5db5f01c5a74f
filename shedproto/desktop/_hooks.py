"""``roost.bootstrap``'s ``hooks``: the agent-hooks raise and how the app reports it.

After an install starts a ``roost-session``, shed asks that session to wire the
host's agent hooks (``session.set_agent_hooks``), raising every agent in
:data:`ROOST_WIRED_AGENTS` under its client label. The host wires the agents
whose config directory exists and reports which of them it never announced
before (``wired``); an absent agent is skipped ``not installed``. The app
reports the call as ``hooks_json`` does, a refused call as its ``"<code>:
<message>"`` with every list empty.

Read in charliek/shed (``roost_hosts.rs:1898-1911@0041e17`` ``hooks_json``;
``crates/shed-core/src/roost/bootstrap/hooks.rs:89-105,163-178@3170191``
``HooksResult``, ``wire_agent_hooks``, and its protocol-6 version's
``ROOST_WIRED_AGENTS``) and charliek/roost
(``crates/roost-session/src/agent_hooks.rs:108-148@b6243df`` ``reply``;
``crates/roost-agent-install/src/error.rs:96-113,115-132@3de0a3f`` ``SkipReason``).
Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["HOOK_NOT_INSTALLED", "ROOST_WIRED_AGENTS", "agent_hooks_reply", "hooks_result"]

ROOST_WIRED_AGENTS = ("claude", "codex", "cursor", "grok", "opencode")
"""The agents shed raises a host's hooks for, in its order (roost's whole wireable set)."""
HOOK_NOT_INSTALLED = "not installed"
"""roost's skip reason for an agent whose config directory does not exist."""

_LISTS = ("wired", "refreshed", "removed", "skipped", "errors")


def agent_hooks_reply(present: Iterable[str], announced: Iterable[str]) -> dict[str, Any]:
    """Return a host's answer to shed's raise (roost's ``AgentHooksOutcome``).

    ``present``: the agents whose config directory exists there; ``announced``:
    those it already reported wired to a client. Nothing is outdated on the
    stand-in's host, so ``refreshed`` is empty; a raise never ``removed``.
    """
    have, told = set(present), set(announced)
    return {
        "wired": [a for a in ROOST_WIRED_AGENTS if a in have and a not in told],
        "refreshed": [],
        "removed": [],
        "skipped": [
            {"agent": a, "reason": HOOK_NOT_INSTALLED} for a in ROOST_WIRED_AGENTS if a not in have
        ],
        "errors": [],
    }


def hooks_result(
    client: str, outcome: Mapping[str, Any] | None = None, *, error: str | None = None
) -> dict[str, Any]:
    """Return ``hooks`` as the app answers it: the host's ``outcome``, or the call's ``error``.

    ``applied`` is whether the call ran (no ``error``); a failed call keeps only
    the client label and the error.
    """
    source: Mapping[str, Any] = outcome if error is None and outcome is not None else {}
    lists = {key: list(source.get(key, ())) for key in _LISTS}
    return {"client": client, "applied": error is None, **lists, "error": error}
