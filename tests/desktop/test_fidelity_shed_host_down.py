"""A listed shed host whose roost watcher reports it down, as the newer Tauri app lists it.

charliek/shed ``desktop/tauri/src-tauri/src/roost_hosts.rs@9668981`` (lines counted on
the stored text): ``status_locked`` 2020-2076 sends ``reachable`` (2053),
``connected_once`` (``seen``, 2054), ``detail`` (2065) and ``down_kind`` (2069) from the
host's state; ``consume``'s ``Down`` arm (3483-3489) clears ``reachable`` and sets the
detail and kind, keeping the rows and ``seen``; ``inject_test`` (1733-1737) and the
snapshot arm (3470-3476) set them back. A shed nothing answered on is no row (2043-2045).
"""

from __future__ import annotations

from typing import Any

import pytest

from shedproto.desktop import Dialect

from ._helpers import answer, web_model

TAURI = Dialect.TAURI
WEB = {"shed": "web", "slug": "4"}
ORIGIN = "roost:prod/web"


def _row(model: Any) -> dict[str, Any]:
    reply = answer(TAURI, model, "machines.list", {})
    assert reply["ok"] is True, reply
    rows: list[dict[str, Any]] = reply["result"]["machines"]
    (row,) = [m for m in rows if m["origin"] == ORIGIN]
    return row


def test_a_shed_host_that_went_down_is_an_unreachable_seen_row() -> None:
    """``Down`` (roost_hosts.rs:3483-3489@9668981): unreachable, the reason and its kind;
    ``seen`` stays, and so do the rows (``sessions`` 2058-2064)."""
    model = web_model()
    assert answer(TAURI, model, "rc.inject_test", WEB)["result"] == {}
    model.make_shed_host_unreachable(ORIGIN, "ssh: connection refused", down_kind="unreachable")
    row = _row(model)
    assert (row["reachable"], row["connected_once"], row["sessions"]) == (False, True, 1)
    assert (row["detail"], row["down_kind"]) == ("ssh: connection refused", "unreachable")


def test_an_inject_is_an_answer_again() -> None:
    """``inject_test`` sets ``listed``, ``reachable``, ``seen`` and clears the detail and
    kind (roost_hosts.rs:1733-1737@9668981)."""
    model = web_model()
    answer(TAURI, model, "rc.inject_test", WEB)
    model.make_shed_host_unreachable(ORIGIN, "gone", down_kind="no-session")
    answer(TAURI, model, "rc.inject_test", {**WEB, "slug": "5"})
    row = _row(model)
    assert (row["reachable"], row["detail"], row["down_kind"], row["sessions"]) == (
        True,
        None,
        None,
        2,
    )


def test_a_shed_nothing_answered_on_cannot_be_marked_down() -> None:
    """An unlisted shed has no watcher to report ``Down`` and no row (2043-2045)."""
    model = web_model()
    with pytest.raises(ValueError, match="no listed shed host"):
        model.make_shed_host_unreachable(ORIGIN, "gone")
