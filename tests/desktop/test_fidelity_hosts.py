"""The newer Tauri app's roost-host layer as its own code answers it, op by op.

``roost_hosts.rs`` is read at commit ``0041e17`` (0041e171d4be8db41acb07e8ae4120e41b26ed10,
the largest stored version, 169k chars; the index holds no version at ``2cd01ef``).
Its lines were counted on the stored text (1-based) and each citation names the
function too. The ipc.rs handlers that call it are at
``desktop/tauri/src-tauri/src/ipc.rs@2cd01ef``: ``machines_list`` 1298-1300,
``machine_kill`` 1402-1410, ``roost_launch`` 1427-1445, ``roost_probe`` 1479-1485,
``roost_preview`` 1492-1498, ``machine_capabilities`` 1577-1584.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from shedproto.desktop import Dialect
from shedproto.desktop import types as o
from shedproto.servers.desktop import DesktopModel

from ._helpers import answer

TAURI = Dialect.TAURI
ABSENT = {"state": "absent", "cause": None, "create": False, "create_options": False}
UNWATCHED = (
    "no host machine:nowhere is being watched (have: machine:mini, machine:maxi, machine:localhost)"
)


def _ok(reply: dict[str, Any]) -> Any:
    assert reply["ok"] is True, reply
    return reply["result"]


def _error(reply: dict[str, Any]) -> tuple[str, str]:
    assert reply["ok"] is False, reply
    return reply["error"]["code"], reply["error"]["message"]


def _model() -> DesktopModel:
    model = DesktopModel()
    model.add_machine("mini")
    model.add_machine("maxi")
    model.add_shed("prod", "web")
    return model


def _tauri(op: str, params: Any = None, model: DesktopModel | None = None) -> Any:
    return answer(TAURI, _model() if model is None else model, op, params)


def test_machines_list_rows_are_the_status_rows() -> None:
    """roost_hosts.rs:1033-1077@0041e17 (``status_locked``); ipc.rs:1298-1300@2cd01ef
    (``machines_list``).

    ``{name, label, origin, kind, server, reachable, connected_once, sessions, detail,
    down_kind}``: every key present, ``server`` ``null`` for a machine, ``detail`` and
    ``down_kind`` only while unreachable. No ``roost_watched`` (no version has it). The
    craze-era version (roost_hosts.rs:2020-2076@9668981) adds ``craze`` (2070-2072), a
    host with no craze source ``absent`` (test_fidelity_core.py has its states).
    """
    model = _model()
    model.add_roost_session("machine:mini", "4")
    model.make_machine_unreachable("maxi", "no route to host", down_kind="unreachable")
    rows = _ok(_tauri("machines.list", {}, model))["machines"]
    # the implicit localhost is no row before its session answers (roost_hosts.rs:2043-2045
    # @9668981; test_fidelity_localhost.py has its rows)
    assert [row["name"] for row in rows] == ["mini", "maxi"]
    assert rows[:2] == [
        {
            "name": "mini",
            "label": "mini",
            "origin": "machine:mini",
            "kind": "machine",
            "server": None,
            "reachable": True,
            "connected_once": True,
            "sessions": 1,
            "detail": None,
            "down_kind": None,
            "craze": ABSENT,
        },
        {
            "name": "maxi",
            "label": "maxi",
            "origin": "machine:maxi",
            "kind": "machine",
            "server": None,
            "reachable": False,
            "connected_once": True,
            "sessions": 0,
            "detail": "no route to host",
            "down_kind": "unreachable",
            "craze": ABSENT,
        },
    ]
    for row in rows:
        msgspec.convert(row, o.MachineRow)  # the type takes exactly these keys


def test_capabilities_of_an_unwatched_host_names_the_watched_ones() -> None:
    """roost_hosts.rs@0041e17 ``capabilities`` (857-860) -> ``known`` (961-967) ->
    ``unknown_host`` (1963-1968); ipc.rs:1577-1584@2cd01ef (``machine_capabilities``) answers it
    ``action_failed``."""
    assert _error(_tauri("machine.capabilities", {"machine": "nowhere"})) == (
        "action_failed",
        UNWATCHED,
    )
    assert "capabilities" in _ok(_tauri("machine.capabilities", {"machine": "mini"}))


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"machine": "nowhere", "slug": "4"},
            UNWATCHED,
        ),
        ({"machine": "mini", "slug": "abc"}, '"abc" is not a roost tab id'),
        ({"machine": "roost:prod", "slug": "4"}, '"roost:prod" names no server'),
    ],
)
def test_machine_kill_checks_the_host_then_the_tab_id(
    params: dict[str, str], message: str
) -> None:
    """roost_hosts.rs:820-844@0041e17 (``kill``): ``HostId::parse``, ``reach``, then
    ``parse_tab_id``; ipc.rs:1402-1410@2cd01ef (``machine_kill``) answers all ``action_failed``."""
    code, text = _error(_tauri("machine.kill", params))
    assert code == "action_failed"
    assert text.startswith(message)


def test_machine_kill_takes_a_trimmed_integer_slug() -> None:
    """roost_hosts.rs:1971-1975@0041e17 (``parse_tab_id``): ``slug.trim().parse::<i64>()``."""
    model = _model()
    model.add_roost_session("machine:mini", "4")
    assert _ok(_tauri("machine.kill", {"machine": "mini", "slug": "4"}, model)) == {}


@pytest.mark.parametrize("slug", ["4", " 4 ", "+04"])
def test_machine_kill_closes_the_tab_the_slug_parses_to(slug: str) -> None:
    """roost_hosts.rs:1277-1317@9668981 (``kill``): the slug is the tab id it parses to
    (``parse_tab_id``, 3153-3157), so a padded or signed spelling closes the same tab."""
    model = _model()
    model.add_roost_session("machine:mini", "4")
    assert _ok(_tauri("machine.kill", {"machine": "mini", "slug": slug}, model)) == {}
    assert not model.sessions


@pytest.mark.parametrize("slug", ["1" * 5000, " +" + "0" * 30 + "4" * 30])
def test_machine_kill_of_a_slug_past_i64_is_no_tab_id(slug: str) -> None:
    """roost_hosts.rs:1971-1975@0041e17 (``parse_tab_id``): ``trim().parse::<i64>()``
    overflows past 19 digits, so the slug is no tab id (leading zeros do not count)."""
    model = _model()
    code, text = _error(_tauri("machine.kill", {"machine": "mini", "slug": slug}, model))
    assert code == "action_failed"
    assert text.endswith("is not a roost tab id")


@pytest.mark.parametrize("slug", ["9", " 09 "])
def test_machine_kill_of_a_tab_the_host_does_not_list_says_where_ids_close(slug: str) -> None:
    """roost_hosts.rs:1233-1245@9668981 (``listed_row``, called by ``kill`` at 1281): a tab
    id this host's rows do not carry is refused with the parsed id and why."""
    model = _model()
    model.add_roost_session("machine:mini", "4")
    assert _error(_tauri("machine.kill", {"machine": "mini", "slug": slug}, model)) == (
        "action_failed",
        "machine:mini lists no agent session 9: a tab id is only closable on the host whose"
        " rows carry it",
    )


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("nowhere", 'no machine "nowhere" in ~/.shed/config.yaml'),
        ("roost:staging/web", 'no server "staging" in ~/.shed/config.yaml'),
        (
            "roost:prod/api",
            'no shed "api" on server "prod": "prod" has not listed a running shed by '
            "that name, so nothing was contacted",
        ),
        ("roost:prod", '"roost:prod" names no server (want roost:<server>/<shed>)'),
    ],
)
@pytest.mark.parametrize("op", ["roost.probe", "roost.preview"])
def test_probe_failures_answer_their_stage_as_the_code(
    op: str, target: str, message: str
) -> None:
    """ipc.rs:1479-1485,1492-1498@2cd01ef (``roost_probe``, ``roost_preview``): the
    failure's stage is the code, its message the message; ``err(failure.stage.as_str(),
    failure.message)``; ``run_probe`` fails every resolution at ``Stage::Probe`` with
    ``HostId::parse``'s or ``ssh_entry``'s sentence (roost_hosts.rs:1561-1576,236-262,
    1608-1642@0041e17)."""
    assert _error(_tauri(op, {"target": target})) == ("probe", message)


def test_probe_answers_probe_json_and_plan_json() -> None:
    """roost_hosts.rs:1338-1346,1797-1831,1846-1877@0041e17 (``probe``, ``probe_json``,
    ``plan_json``): ``{target, probe:
    {outcome{kind}, arch, home, session{state}, candidates, dest, fingerprint}, plan{kind,
    needs_source, ...}}``; the stand-in's host has no binary (``missing``/``not-installed``,
    the ``install`` plan row)."""
    result = _ok(_tauri("roost.probe", {"target": "mini"}))
    assert set(result) == {"target", "probe", "plan"}
    assert result["target"] == "machine:mini"
    probe = result["probe"]
    assert set(probe) == {
        "outcome",
        "arch",
        "home",
        "session",
        "candidates",
        "dest",
        "fingerprint",
    }
    assert probe["outcome"] == {"kind": "missing"}
    assert probe["session"] == {"state": "not-installed"}
    assert result["plan"] == {"kind": "install", "needs_source": True, "dest": probe["dest"]}


def test_preview_adds_source_actionable_and_the_client_label() -> None:
    """roost_hosts.rs:1354-1377@0041e17 (``preview``): the probe's keys plus
    ``source{rung, sentence, available, skipped}``, ``actionable`` and ``client_label``
    ``shed-desktop`` (``CLIENT_LABEL``)."""
    result = _ok(_tauri("roost.preview", {"target": "roost:prod/web"}))
    assert result["target"] == "roost:prod/web"
    assert set(result["source"]) == {"rung", "sentence", "available", "skipped"}
    assert (result["actionable"], result["client_label"]) == (True, "shed-desktop")


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("", "an empty host id names nothing"),
        ("machine:", '"machine:" names no machine'),
    ],
)
def test_bootstrap_of_an_unaddressable_target_is_bad_request(target: str, message: str) -> None:
    """roost_hosts.rs:1406-1539@0041e17 (``bootstrap``): after consent, ``HostId::parse`` fails as
    ``Refusal::BadTarget``, whose code is ``bad_request``; an error envelope, not a
    stage."""
    params = {"target": target, "fingerprint": "x", "consent": True}
    assert _error(_tauri("roost.bootstrap", params)) == ("bad_request", message)


def test_bootstrap_consent_comes_before_the_target() -> None:
    """roost_hosts.rs:1406-1539@0041e17 (``bootstrap``): ``!consent`` is refused before the
    parse."""
    code, _ = _error(_tauri("roost.bootstrap", {"target": "", "fingerprint": "x"}))
    assert code == "consent_required"


def test_bootstrap_of_an_unknown_host_is_a_probe_stage_failure() -> None:
    """roost_hosts.rs:1406-1539@0041e17 (``bootstrap``): the re-probe's failure is
    ``Ok(Err(failure))``, answered by ``failure_json`` (1919-1928) as ``{ok: false, error:
    {stage: probe, message, restored}}`` in an ok envelope; ``restored`` is ``null``
    (``BootstrapFailure::new``, crates/shed-core/src/roost/bootstrap/copy.rs:111-117@0041e17)."""
    params = {"target": "nowhere", "fingerprint": "x", "consent": True}
    assert _ok(_tauri("roost.bootstrap", params)) == {
        "ok": False,
        "error": {
            "stage": "probe",
            "message": 'no machine "nowhere" in ~/.shed/config.yaml',
            "restored": None,
        },
    }


def test_launch_of_a_kind_without_a_recipe_names_the_kind() -> None:
    """roost_hosts.rs:1988-2010@0041e17 (``open_params``): ``unknown kind "<k>": roost has no launch
    recipe for it``; ipc.rs:1427-1445@2cd01ef (``roost_launch``) answers it ``action_failed``."""
    model = _model()
    model.machines["mini"].kinds = frozenset({"codex"})
    reply = _tauri("roost.launch", {"target": "mini", "kind": "opencode"}, model)
    assert _error(reply) == (
        "action_failed",
        'unknown kind "opencode": roost has no launch recipe for it',
    )


# --- lane.rs ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "op", ["lane.open", "lane.messages", "lane.approvals", "lane.settings", "lane.close"]
)
@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("craze", 'machine "mini"\'s craze source lists no session "s9"'),
        (
            "opencode",
            'session "s9" on machine "mini" carries no opencode agent_lane (its tab reported '
            "no agent server)",
        ),
    ],
)
def test_a_row_without_an_agent_lane_is_no_lane(op: str, kind: str, message: str) -> None:
    """charliek/shed desktop/tauri/src-tauri/src/lane.rs:1332-1359@9a84ddf (``lane_stamp``): the
    row is looked up in the namespace ``kind`` names -- a craze session among the craze
    source's rows, any other kind among roost's stamps of that kind -- and a miss is
    ``no_lane`` in its words, the machine as the caller sent it. The older 150k version
    (id 66594410956, no ``kind``) said ``carries no agent_lane``."""
    model = DesktopModel()
    model.add_machine("mini")
    params = {"machine": "mini", "kind": kind, "session_id": "s9"}
    if op == "lane.close":
        # closing a lane that is not open is success (``Lanes::close`` is idempotent)
        assert _ok(_tauri(op, params, model)) == {}
        return
    assert _error(_tauri(op, params, model)) == ("no_lane", message)
