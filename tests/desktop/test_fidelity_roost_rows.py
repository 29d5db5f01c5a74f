"""The newer Tauri app's roost rows and ``rc.list``'s capabilities (issue 24).

A row is ``host_row`` (charliek/shed ``desktop/tauri/src-tauri/src/roost_hosts.rs:3550-3585
@9668981``): ``serde_json::to_value(session.to_rc_dto())``, then the stamps (3553-3582)
``origin``, ``origin_kind``, ``machine``, ``source`` ``roost``, ``host`` (a shed's server, a
machine's token), ``shed``, ``stale``, ``attention``, ``tab_id`` (a string) and
``agent_lane`` when the tab has one. ``to_rc_dto`` is shed-core's
``crates/shed-core/src/roost/model.rs@9c2c53a`` (and ``@0041e17``): ``slug`` the tab id,
``tmux_session`` ``""``, ``state`` ``ready``, ``managed`` true, ``display_name`` the tab
title, ``workdir`` its cwd, ``created_at`` ``rfc3339_z``, ``activity`` from the agent axes;
``RcSessionDto``'s serde (``crates/shed-core/src/rc.rs:337-391@44e50e1``, its presence
rules at 322-335) skips every ``None``. ``rc.list``'s ``capabilities`` is ``rc_list_payload``'s
(``ipc.rs:123-178@2cd01ef``, the map at 163-172): ``roost_capabilities()`` under each
status row's origin, and any
``host``/``shed`` filter omits every machine (``RoostHosts::snapshot``,
``roost_hosts.rs:1163-1169@9668981``).
"""

from __future__ import annotations

from typing import Any

from shedproto.desktop import Dialect

from ._helpers import answer, web_model

TAURI = Dialect.TAURI
WEB = {"shed": "web", "slug": "4"}


def _list(model: Any, params: dict[str, Any] | None = None) -> dict[str, Any]:
    reply = answer(TAURI, model, "rc.list", params or {})
    assert reply["ok"] is True, reply
    result: dict[str, Any] = reply["result"]
    return result


def test_an_injected_row_is_host_row_of_the_dto() -> None:
    """``InjectedRow::into_session`` (roost_hosts.rs:3391-3414@9668981: ``created_at`` 0, no
    ownership session id, ``inactive``) through ``to_rc_dto`` and ``host_row``: every DTO
    field present or skipped, never ``null``; no ``lifecycle`` or ``title`` key."""
    model = web_model()
    assert answer(TAURI, model, "rc.inject_test", WEB)["result"] == {}
    (row,) = _list(model)["sessions"]
    assert row == {
        "slug": "4",
        "tmux_session": "",
        "kind": "claude-rc",
        "state": "ready",
        "managed": True,
        "display_name": "4",
        "workdir": "/home/shed",
        "created_at": "1970-01-01T00:00:00Z",
        "origin": "roost:prod/web",
        "origin_kind": "shed",
        "machine": "roost:prod/web",
        "source": "roost",
        "host": "prod",
        "shed": "web",
        "stale": False,
        "attention": False,
        "tab_id": "4",
    }


def test_a_machine_row_s_host_is_its_token() -> None:
    """``host_row``: a machine's ``host`` is ``id.token()``, its ``shed`` ``""``."""
    model = web_model()
    model.add_roost_session("machine:mini", "9", "opencode", display_name="OC", workdir="/w")
    row = next(r for r in _list(model)["sessions"] if r["origin"] == "machine:mini")
    assert (row["host"], row["shed"], row["machine"], row["tab_id"]) == (
        "machine:mini",
        "",
        "mini",
        "9",
    )


def test_the_title_defaults_to_the_slug_as_sent() -> None:
    """``build_inject_row`` (ipc.rs:1886,1902@2cd01ef): the title is ``slug`` as sent, while
    the row's ``slug`` is the tab id it parses to."""
    model = web_model()
    assert answer(TAURI, model, "rc.inject_test", {**WEB, "slug": "+7"})["result"] == {}
    (row,) = _list(model)["sessions"]
    assert (row["slug"], row["display_name"]) == ("7", "+7")


def test_waiting_is_needs_input_and_inactive_claims_no_activity() -> None:
    """``RoostSession::activity``: an injected tab has no detail, so ``waiting`` is
    ``needs_input``; ``inactive`` off a prompt is no activity (absent)."""
    model = web_model()
    answer(TAURI, model, "rc.inject_test", {**WEB, "lifecycle": "waiting"})
    answer(TAURI, model, "rc.inject_test", {**WEB, "slug": "5", "lifecycle": "inactive"})
    rows = {r["slug"]: r for r in _list(model)["sessions"]}
    assert rows["4"]["activity"] == "needs_input"
    assert "activity" not in rows["5"]


def test_capabilities_are_roost_capabilities_per_status_row() -> None:
    """``roost_capabilities`` (model.rs:508-549@0041e17): ``rc_version`` 2, ``contract-v2``,
    each agent installed, each kind ``roost_kind_features`` (578-588: ``feed`` ``activity``,
    584; ``@9c2c53a`` still said ``none``, which the newer doc at 554-562 calls wrong) with
    ``watch``/``input`` skipped (``RcKindFeatures``' serde); the kinds (509-516) the ones
    that are still ``RcKind`` at 9668981."""
    model = web_model()
    model.add_machine("mini")
    answer(TAURI, model, "rc.inject_test", WEB)
    listing = _list(model)
    origins = [m["origin"] for m in listing["machines"]]
    assert sorted(listing["capabilities"]) == sorted(origins)
    features = {
        "post_input": False,
        "approvals": "none",
        "feed": "activity",
        "interrupt": False,
        "attach": "native-remote",
    }
    assert listing["capabilities"]["machine:mini"] == {
        "rc_version": 2,
        "kinds": ["claude-rc", "opencode"],
        "agents": {"claude": {"installed": True}, "opencode": {"installed": True}},
        "features": ["contract-v2"],
        "kind_features": {"claude-rc": features, "opencode": features},
    }


def test_a_filtered_listing_omits_every_machine_and_keeps_its_shed_hosts() -> None:
    """``RoostHosts::snapshot``'s filter is a shed filter (roost_hosts.rs:1163-1169@9668981):
    a machine belongs to no server, so any filter omits every machine; a shed host is kept
    when its server and name match, and its capabilities with it."""
    model = web_model()
    model.add_machine("mini")
    answer(TAURI, model, "rc.inject_test", WEB)
    listing = _list(model, {"host": "prod"})
    assert [m["origin"] for m in listing["machines"]] == ["roost:prod/web"]
    assert list(listing["capabilities"]) == ["roost:prod/web"]
    assert [r["origin"] for r in listing["sessions"]] == ["roost:prod/web"]
    assert _list(model, {"shed": "other"})["machines"] == []


def test_a_shed_a_session_answered_on_is_a_status_row() -> None:
    """``status_locked`` (roost_hosts.rs:2020-2076@9668981) lists every listed host, sheds
    after the machines: an inject lists its shed (``inject_test``, 1709-1742, sets
    ``listed``, ``reachable``, ``seen``). ``name`` is the address (the token for a shed),
    ``label`` the shed's name, ``server`` its server (``HostId::address``, ``label``,
    ``server``: 207-212, 215-220, 223-228). The implicit ``localhost`` has no row before
    its session answers (2043-2045)."""
    model = web_model()
    assert answer(TAURI, model, "rc.inject_test", WEB)["result"] == {}
    machines = answer(TAURI, model, "machines.list", {})["result"]["machines"]
    assert [m["origin"] for m in machines] == ["roost:prod/web"]
    assert machines[-1] == {
        "name": "roost:prod/web",
        "label": "web",
        "origin": "roost:prod/web",
        "kind": "shed",
        "server": "prod",
        "reachable": True,
        "connected_once": True,
        "sessions": 1,
        "detail": None,
        "down_kind": None,
        "craze": {"state": "absent", "cause": None, "create": False, "create_options": False},
    }
