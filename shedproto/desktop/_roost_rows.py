"""The newer Tauri app's roost session rows and the capabilities ``rc.list`` files per host.

A roost row is shed-core's ``RcSessionDto`` mapped from a roost tab
(``RoostSession::to_rc_dto``, crates/shed-core/src/roost/model.rs:357-387@0041e17), serialised with
the DTO's serde rules (crates/shed-core/src/rc.rs:313-391@44e50e1: ``slug``, ``tmux_session``,
``kind``, ``state``, ``managed`` always; every other field absent, never ``null``),
then stamped by the app's ``host_row`` (desktop/tauri/src-tauri/src/roost_hosts.rs:3550-3585
@9668981) with ``origin``, ``origin_kind``, ``machine``, ``source``, ``host``,
``shed``, ``stale``, ``attention`` and ``tab_id`` (3553-3582). The capabilities are
shed-core's ``roost_capabilities`` (model.rs:508-549@0041e17), a constant. Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

__all__ = [
    "ROOST_CAPABILITY_KINDS",
    "RoostTab",
    "roost_activity",
    "roost_capabilities",
    "roost_row",
    "rfc3339_z",
]

ROOST_CAPABILITY_KINDS: tuple[str, ...] = ("claude-rc", "opencode")
"""The ``kinds`` of ``roost_capabilities``: the stored versions list ``claude-rc``,
``codex``, ``opencode``, ``cursor`` (``@0041e17`` also ``gx``, ``grok``: model.rs:509-516);
``codex``, ``cursor``,
``gx`` and ``grok`` left shed's ``RcKind`` in plan 025 (``roost_hosts.rs:3417-3434
@9668981``), so the app at that commit can list only the two that remain."""

_TOOLS = {"claude-rc": "claude", "opencode": "opencode"}
"""``RcKind::tool``: the agent a kind's ``agents`` entry is filed under."""

_APPROVAL_DETAILS = ("permission_prompt", "permission_asked")
"""roost ``ownership.detail`` values that are a pending approval (``APPROVAL_DETAILS``)."""


def _kind_features() -> dict[str, Any]:
    # roost_kind_features (model.rs:578-588@0041e17; feed "activity" at 584, the
    # "none" of @9c2c53a being, its doc says at 554-562, wrong), serialised by
    # RcKindFeatures' serde (rc.rs:482-511@44e50e1): watch (false) and input ("") are skipped
    return {
        "post_input": False,
        "approvals": "none",
        "feed": "activity",
        "interrupt": False,
        "attach": "native-remote",
    }


def roost_capabilities() -> dict[str, Any]:
    """Return the ``RcCapabilities`` the app synthesizes for every roost host.

    ``{rc_version: 2, kinds, agents, features: ["contract-v2"], kind_features}``
    (``RcCapabilities``, rc.rs:556-566@44e50e1): each kind's agent ``{installed: true}``
    (``RcAgentInfo``'s ``version`` skipped when none, 446-450), each
    kind the one feature set ``roost_kind_features`` gives.
    """
    kinds = list(ROOST_CAPABILITY_KINDS)
    return {
        "rc_version": 2,
        "kinds": kinds,
        "agents": {_TOOLS[kind]: {"installed": True} for kind in kinds},
        "features": ["contract-v2"],
        "kind_features": {kind: _kind_features() for kind in kinds},
    }


def roost_activity(lifecycle: str | None, detail: str = "", at_prompt: bool = False) -> str | None:
    """Return the row's ``activity`` from roost's agent axes.

    ``RoostSession::activity`` (model.rs:314-334@0041e17):

    ``working`` -> ``working``; ``waiting`` -> ``needs_approval`` for an approval
    detail, else ``needs_input``; ``finished`` -> ``idle``; ``failed`` ->
    ``needs_input``; ``inactive`` (``None`` too, the wire's default) -> ``idle`` at a
    shell prompt, else no activity.
    """
    if lifecycle == "working":
        return "working"
    if lifecycle == "waiting":
        return "needs_approval" if detail in _APPROVAL_DETAILS else "needs_input"
    if lifecycle == "finished":
        return "idle"
    if lifecycle == "failed":
        return "needs_input"
    return "idle" if at_prompt else None


def rfc3339_z(unix: int) -> str:
    """Format unix seconds as shed-core's ``rfc3339_z``: UTC, ``Z``, no fraction.

    Years 0001-9999 only, where the app's hand-rolled formatter agrees with the
    standard one.
    """
    t = datetime.fromtimestamp(unix, tz=timezone.utc)
    return f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}Z"


@dataclass(frozen=True)
class RoostTab:
    """What a roost row is built from: the host, the tab and its owner.

    ``origin`` is the host's token (``machine:<n>``, ``roost:<server>/<shed>``),
    ``address`` the name ops take (a machine's bare name, a shed's token),
    ``server``/``shed`` a shed host's (``None`` for a machine). ``title`` and
    ``cwd`` are roost's tab title and directory; ``session_id`` the agent's own id
    (``""``: none reported).
    """

    origin: str
    address: str
    server: str | None
    shed: str
    tab_id: str
    kind: str
    title: str
    cwd: str
    lifecycle: str | None = None
    attention: bool = False
    created_at: int = 0
    session_id: str = ""


def roost_row(tab: RoostTab, *, stale: bool) -> dict[str, Any]:
    """Return ``host_row``'s JSON for ``tab``: the DTO's fields, then the app's stamps."""
    row: dict[str, Any] = {
        "slug": tab.tab_id,
        "tmux_session": "",
        "kind": tab.kind,
        "state": "ready",
        "managed": True,
        "display_name": tab.title,
        "workdir": tab.cwd,
        "created_at": rfc3339_z(tab.created_at),
    }
    if tab.session_id:
        row["id"] = tab.session_id
    activity = roost_activity(tab.lifecycle)
    if activity is not None:
        row["activity"] = activity
    row.update(
        origin=tab.origin,
        origin_kind="machine" if tab.server is None else "shed",
        machine=tab.address,
        source="roost",
        host=tab.origin if tab.server is None else tab.server,
        shed=tab.shed,
        stale=stale,
        attention=tab.attention,
        tab_id=tab.tab_id,
    )
    return row
