"""The newer Tauri app's ops as its own code answers them, op by op.

Each test cites ``charliek/shed desktop/tauri/src-tauri/src/<file>:<line>@<commit>``;
``ipc.rs`` is read at commit ``2cd01ef`` (2cd01ef27a854bc3d48180802f9c657bc2328d93, the
largest stored version, the one the catalogue follows), ``broker.rs`` at ``51bd544``,
``updater.rs`` at ``c38944d``. The line numbers were counted on the stored text of
those versions (the git mirror of charliek/shed holds no ``desktop/``).
"""

from __future__ import annotations

from typing import Any

import pytest

from shedproto.desktop import Dialect
from shedproto.servers.desktop import DesktopModel

from ._helpers import answer

MAC, TAURI = Dialect.MAC, Dialect.TAURI
LANE = {"machine": "mini", "kind": "opencode", "session_id": "s1"}


def _ok(reply: dict[str, Any]) -> Any:
    assert reply["ok"] is True, reply
    return reply["result"]


def _error(reply: dict[str, Any]) -> tuple[str, str]:
    assert reply["ok"] is False, reply
    return reply["error"]["code"], reply["error"]["message"]


def _tauri(op: str, params: Any = None, *, model: DesktopModel | None = None, **kw: Any) -> Any:
    return answer(TAURI, DesktopModel() if model is None else model, op, params, **kw)


# --- removed or never there ------------------------------------------------------------


@pytest.mark.parametrize("op", ["ui.report_history", "ui.close_launch"])
def test_ops_the_newer_dispatch_lacks_are_unknown(op: str) -> None:
    """ipc.rs:679-964@2cd01ef: the dispatch has no such arm, so ``unknown op: <op>``."""
    assert _error(_tauri(op)) == ("unknown_op", f"unknown op: {op}")


# --- UI truth reads ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "key"),
    [
        ("ui.computed_style", "style"),
        ("ui.modal", "modal"),
        ("shed_roost.dump", "sheds"),
        ("roost_consent.dump", "consent"),
        ("launch.dump", "launch"),
        ("toast.dump", "toast"),
        ("lane.dump", "lane"),
        ("lane_settings.dump", "lane_settings"),
        ("craze_create.dump", "craze_create"),
        ("egress.profiles", "egress"),
        ("machines.dump", "machines"),
    ],
)
def test_unreported_ui_truth_is_null_under_its_key(op: str, key: str) -> None:
    """ipc.rs:693,696,847,857,859-862,889-890,894@2cd01ef: ``{<key>: null}`` before a report
    (or off the pane that reports it)."""
    assert _ok(_tauri(op)) == {key: None}


def test_ui_truth_reports_what_was_rendered() -> None:
    """ipc.rs:693,696@2cd01ef: the frontend's report is relayed verbatim."""
    model = DesktopModel()
    model.set_dump("ui.modal", "launch")
    model.set_dump("ui.computed_style", {"theme": "dark"})
    assert _ok(_tauri("ui.modal", model=model)) == {"modal": "launch"}
    assert _ok(_tauri("ui.computed_style", model=model)) == {"style": {"theme": "dark"}}


def test_agents_dump_off_the_agents_pane_is_empty_list_and_null() -> None:
    """ipc.rs:895@2cd01ef (agents_dump): off the Agents pane ``{sessions: [], empty: null}``."""
    model = DesktopModel()
    model.set_dump("agents.dump", {"sessions": [{"slug": "1"}], "empty": None})
    assert _ok(_tauri("agents.dump", model=model)) == {"sessions": [], "empty": None}
    model.ui["pane"] = "agents"
    assert _ok(_tauri("agents.dump", model=model)) == {"sessions": [{"slug": "1"}], "empty": None}


def test_egress_profiles_only_while_the_egress_pane_is_mounted() -> None:
    """ipc.rs:847@2cd01ef (egress_dump): ``null`` off the Egress pane, the report on it."""
    model = DesktopModel()
    model.ui["pane"] = "egress"
    egress = _ok(_tauri("egress.profiles", model=model))["egress"]
    assert set(egress) == {"tab", "profiles", "errors", "selected", "activity_count"}


# --- appearance, egress ------------------------------------------------------------------


@pytest.mark.parametrize("params", [{}, {"mode": 3}, {"mode": "sepia"}])
def test_set_appearance_reads_a_missing_or_mistyped_mode_as_empty(params: Any) -> None:
    """ipc.rs:1085-1089@2cd01ef: ``unwrap_or("")`` then ``unknown mode: {mode:?}``."""
    shown = params.get("mode") if isinstance(params.get("mode"), str) else ""
    assert _error(_tauri("ui.set_appearance", params)) == (
        "bad_request",
        f'unknown mode: "{shown}"',
    )


def test_egress_show_checks_the_tab_then_readiness() -> None:
    """ipc.rs:848@2cd01ef (egress_show): a bad tab first, then ``frontend_not_ready`` until
    the Egress pane has reported; then ``{}``."""
    model = DesktopModel()
    assert _error(_tauri("egress.show", {"tab": "x"}, model=model)) == (
        "bad_request",
        'unknown tab: "x"',
    )
    assert _error(_tauri("egress.show", {"tab": "profiles"}, model=model)) == (
        "frontend_not_ready",
        "egress pane has not reported yet; retry",
    )
    model.ui["pane"] = "egress"
    assert _ok(_tauri("egress.show", {"tab": "profiles", "profile": "default"}, model=model)) == {}
    assert _ok(_tauri("egress.profiles", model=model))["egress"]["tab"] == "profiles"


# --- the dialog doors --------------------------------------------------------------------


@pytest.mark.parametrize("op", ["ui.show_create", "ui.show_launch"])
def test_show_dialogs_answer_empty(op: str) -> None:
    """ipc.rs:712-721@2cd01ef: raise the window, emit, ``{}``."""
    assert _ok(_tauri(op)) == {}


@pytest.mark.parametrize(
    "op",
    [
        "ui.fill_launch",
        "ui.submit_launch",
        "ui.confirm_roost_consent",
        "ui.close_roost_consent",
        "ui.fill_craze_create",
        "ui.submit_craze_create",
    ],
)
def test_doors_with_nothing_open_still_answer_empty(op: str) -> None:
    """ipc.rs:725-729,732-741,785-789@2cd01ef: a door only emits an event; with no dialog
    mounted nobody hears it and the op still answers ``{}``."""
    assert _ok(_tauri(op, {})) == {}


@pytest.mark.parametrize(
    "op",
    ["ui.fill_launch", "ui.confirm_roost_consent", "ui.fill_craze_create", "ui.hold_lane_view"],
)
def test_doors_outside_test_mode_are_not_enabled(op: str) -> None:
    """ipc.rs:252-254,328-330,378-380,457-459@2cd01ef: ``<op> requires test mode``."""
    assert _error(_tauri(op, {}, test_mode=False)) == ("not_enabled", f"{op} requires test mode")


def test_fill_launch_words_a_bad_mode_and_a_mistyped_field() -> None:
    """ipc.rs:334-346@2cd01ef: ``unknown launch mode: "x" (agent | command)`` and
    ``'<key>' must be a string``; ``name`` is not one of its keys (ignored)."""
    assert _error(_tauri("ui.fill_launch", {"mode": "x"})) == (
        "bad_request",
        'unknown launch mode: "x" (agent | command)',
    )
    assert _error(_tauri("ui.fill_launch", {"workdir": 3})) == (
        "bad_request",
        "'workdir' must be a string",
    )
    assert _ok(_tauri("ui.fill_launch", {"name": 3, "mode": None})) == {}


def test_fill_launch_fills_an_open_dialog() -> None:
    """ipc.rs:332-349@2cd01ef: the four keys fill the mounted dialog."""
    model = DesktopModel()
    _ok(_tauri("ui.show_launch", model=model))
    _ok(_tauri("ui.fill_launch", {"mode": "command", "command": "ls"}, model=model))
    launch = _ok(_tauri("launch.dump", model=model))["launch"]
    assert (launch["mode"], launch["command"]) == ("command", "ls")


def test_submit_launch_failure_is_shown_not_answered() -> None:
    """ipc.rs:351,725-729@2cd01ef: submit answers ``{}``; what it leads to is the UI's."""
    model = DesktopModel()
    _ok(_tauri("ui.show_launch", model=model))
    _ok(_tauri("ui.fill_launch", {"mode": "command", "target": "nowhere"}, model=model))
    assert _ok(_tauri("ui.submit_launch", model=model)) == {}
    assert _ok(_tauri("toast.dump", model=model))["toast"]["kind"] == "error"


def test_submit_launch_in_agent_mode_launches_an_rc_kind() -> None:
    """The stand-in dialog's agent pick is ``claude-rc``: the launch it submits is
    ``roost.launch``'s (ipc.rs:1427-1445@2cd01ef), which takes ``RcKind`` values only."""
    model = DesktopModel()
    model.add_machine("mini")
    _ok(_tauri("ui.show_launch", model=model))
    _ok(_tauri("ui.fill_launch", {"target": "machine:mini"}, model=model))
    assert _ok(_tauri("ui.submit_launch", model=model)) == {}
    assert _ok(_tauri("toast.dump", model=model))["toast"] is None
    assert [s.kind for s in model.sessions] == ["claude-rc"]


def test_show_roost_consent_needs_a_target() -> None:
    """ipc.rs:259-262@2cd01ef: ``req_str(target)``."""
    assert _error(_tauri("ui.show_roost_consent", {})) == ("bad_request", "missing 'target'")


@pytest.mark.parametrize("op", ["ui.show_lane", "ui.show_lane_settings"])
def test_show_lane_needs_the_address_but_not_a_known_session(op: str) -> None:
    """ipc.rs:69-75,752-760,796-804@2cd01ef: machine, kind, session_id in that order; the op
    emits without looking the session up."""
    assert _error(_tauri(op, {"machine": "mini"})) == ("bad_request", "missing 'kind'")
    assert _error(_tauri(op, {"machine": "mini", "kind": "k"})) == (
        "bad_request",
        "missing 'session_id'",
    )
    assert _ok(_tauri(op, LANE)) == {}


@pytest.mark.parametrize("op", ["ui.close_lane", "ui.close_craze_create", "ui.close_lane_settings"])
def test_close_doors_answer_empty(op: str) -> None:
    """ipc.rs:761-764,779-782,805-808@2cd01ef."""
    assert _ok(_tauri(op)) == {}


def test_show_craze_create_opens_for_any_machine() -> None:
    """ipc.rs:771-778@2cd01ef: ``req_str(machine)``, emit, ``{}``; the sheet reads its
    options itself."""
    assert _error(_tauri("ui.show_craze_create", {})) == ("bad_request", "missing 'machine'")
    assert _ok(_tauri("ui.show_craze_create", {"machine": "nowhere"})) == {}


@pytest.mark.parametrize("recent", [-1, 1.5, "2"])
def test_fill_craze_create_recent_is_a_non_negative_index(recent: Any) -> None:
    """ipc.rs:393-403@2cd01ef: ``as_u64`` or ``'recent' must be a non-negative index``."""
    assert _error(_tauri("ui.fill_craze_create", {"recent": recent})) == (
        "bad_request",
        "'recent' must be a non-negative index",
    )


def test_pick_lane_setting_refuses_an_empty_row() -> None:
    """ipc.rs:438-442@2cd01ef: row, value required; an empty row names no settings row."""
    assert _error(_tauri("ui.pick_lane_setting", {"value": "v"})) == (
        "bad_request",
        "missing 'row'",
    )
    assert _error(_tauri("ui.pick_lane_setting", {"row": "", "value": "v"})) == (
        "bad_request",
        "'row' names a settings row",
    )
    assert _ok(_tauri("ui.pick_lane_setting", {"row": "model", "value": "v"})) == {}


@pytest.mark.parametrize("hold", [None, 1, "true"])
def test_hold_lane_view_needs_a_boolean(hold: Any) -> None:
    """ipc.rs:460-463@2cd01ef: ``'hold' must be true or false``."""
    params = {} if hold is None else {"hold": hold}
    assert _error(_tauri("ui.hold_lane_view", params)) == (
        "bad_request",
        "'hold' must be true or false",
    )


# --- sessions: addressing order, the machine terminal refusal -------------------------


@pytest.mark.parametrize("op", ["roost.launch", "machine.launch"])
def test_launch_reads_the_address_before_the_kind(op: str) -> None:
    """ipc.rs:868@2cd01ef (roost_launch): ``target`` if a string, else ``req_str(machine)``,
    and only then ``rc_kind`` (ipc.rs:286-294)."""
    assert _error(_tauri(op, {})) == ("bad_request", "missing 'machine'")
    assert _error(_tauri(op, {"target": 5, "kind": "claude"})) == (
        "bad_request",
        "missing 'machine'",
    )
    assert _error(_tauri(op, {"machine": "mini"})) == (
        "bad_request",
        "missing or invalid 'kind'",
    )
    assert _error(_tauri(op, {"machine": "mini", "kind": "bogus"})) == (
        "bad_request",
        "unknown rc kind 'bogus'",
    )


def test_run_reads_the_address_before_the_command() -> None:
    """ipc.rs:871@2cd01ef (roost_run): the address first, then ``run_command`` (301-304)."""
    assert _error(_tauri("roost.run", {})) == ("bad_request", "missing 'machine'")
    code, _ = _error(_tauri("roost.run", {"machine": "mini"}))
    assert code == "bad_request"


@pytest.mark.parametrize("machine", ["mini", 3, {"name": "mini"}])
@pytest.mark.parametrize(
    ("op", "test_mode"), [("terminal.preview", True), ("terminal.open", False)]
)
def test_terminal_refuses_any_machine_first(op: str, test_mode: bool, machine: Any) -> None:
    """ipc.rs:92-94,849-850@2cd01ef: any non-null ``machine`` is refused with NO_TERMINAL,
    before ``shed`` is read and (terminal.open) before the test-mode refusal."""
    assert _error(_tauri(op, {"machine": machine}, test_mode=test_mode)) == (
        "not_enabled",
        "terminal unavailable: attach is native-remote",
    )


# --- prefs window ----------------------------------------------------------------------


def test_prefs_dump_before_the_window_opens() -> None:
    """ipc.rs:1018-1035@2cd01ef: ``visible`` false, ``title`` and ``prefs`` null."""
    assert _ok(_tauri("prefs.dump")) == {"visible": False, "title": None, "prefs": None}


def test_prefs_remove_shed_rule_reads_server_then_shed() -> None:
    """ipc.rs:1040-1047@2cd01ef: ``req_str(server)``, ``req_str(shed)``, ``{}``."""
    assert _error(_tauri("prefs.remove_shed_rule", {"shed": "web"})) == (
        "bad_request",
        "missing 'server'",
    )
    assert _error(_tauri("prefs.remove_shed_rule", {"server": ""})) == (
        "bad_request",
        "missing 'shed'",
    )
    assert _ok(_tauri("prefs.remove_shed_rule", {"server": "", "shed": "web"})) == {}


# --- notification.invoke decides the approval -------------------------------------------


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (None, "action: invalid type: unit value, expected string or map"),
        (3, "action: invalid type: integer `3`, expected string or map"),
        ("maybe", "action: unknown variant `maybe`, expected `approve` or `deny`"),
    ],
)
def test_notification_invoke_tauri_words_the_action_as_serde(action: Any, message: str) -> None:
    """ipc.rs:930@2cd01ef (notification_invoke): ``serde_json::from_value(action or null)``,
    prefixed ``action: ``, before the notification is looked up."""
    params: dict[str, Any] = {"id": "n1"}
    if action is not None:
        params["action"] = action
    assert _error(_tauri("notification.invoke", params)) == ("bad_request", message)


@pytest.mark.parametrize("dialect", [TAURI, MAC])
@pytest.mark.parametrize("action", ["approve", "deny"])
def test_notification_invoke_decides_the_approval(dialect: Dialect, action: str) -> None:
    """charliek/shed-desktop core/shed-app/src/coordinator.rs:400-422@5a762e8 and
    Sources/ShedDesktopApp/AppModel.swift:1156-1159@5a762e8: a posted note's action runs
    the decide path with the default choice (no scope, ttl or persist); deciding
    withdraws the note and ends the approval."""
    model = DesktopModel()
    model.add_approval("r1", "prod", "web")
    assert _ok(answer(dialect, model, "notification.invoke", {"id": "r1", "action": action})) == {}
    assert model.decisions[-1] == {
        "id": "r1",
        "decision": action,
        "scope": "per-request",
        "ttl": None,
        "persist": False,
    }
    assert _ok(answer(dialect, model, "approvals.list"))["approvals"] == []
    assert _ok(answer(dialect, model, "notifications.list"))["notifications"] == []
    assert _error(answer(dialect, model, "notification.invoke", {"id": "r1", "action": action}))[
        1
    ] == ("no posted notification r1")


# --- broker --------------------------------------------------------------------------------


def test_broker_status_is_the_runtime_snapshot() -> None:
    """ipc.rs:939@2cd01ef and broker.rs:154-185@51bd544 (``BrokerRuntime::status``): mode, pref,
    restart flag, launch probe, config provenance, the embedded broker's ssh mode, gate
    namespaces and server health, and the startup error."""
    status = _ok(_tauri("broker.status"))
    assert set(status) == {
        "effective_mode",
        "pref",
        "restart_required",
        "probe",
        "config",
        "resolved_ssh_mode",
        "gate_namespaces",
        "servers",
        "broker_error",
    }
    assert (status["effective_mode"], status["pref"]) == ("embedded", "auto")
    assert status["probe"] == {"desktop_socket_live": False, "status_socket_live": False}
    assert status["config"] == {"source": "synthesized", "message": None}


def test_broker_set_mode_takes_the_three_prefs_and_defers() -> None:
    """ipc.rs:941@2cd01ef (broker_set_mode) and broker.rs:361-368@51bd544 (``parse_mode_pref``):
    ``auto|embedded|external``; the effective mode stays until a relaunch."""
    model = DesktopModel()
    assert _error(_tauri("broker.set_mode", {"mode": "on"}, model=model)) == (
        "bad_request",
        'unknown broker mode: "on"',
    )
    assert _ok(_tauri("broker.set_mode", {"mode": "external"}, model=model)) == {
        "pref": "external",
        "effective": "embedded",
        "restart_required": True,
    }
    assert _ok(_tauri("broker.mode", model=model))["restart_required"] is True
    back = _ok(_tauri("broker.set_mode", {"mode": "auto"}, model=model))
    assert back["restart_required"] is False


# --- updater -------------------------------------------------------------------------------


@pytest.mark.parametrize("test_mode", [True, False])
def test_updater_on_linux_is_apt_even_in_test_mode(test_mode: bool) -> None:
    """updater.rs:60-73,115-125@c38944d (``updater_reason``: Linux wins even in test mode;
    ``status``)
    and ipc.rs:960-961,1003-1010@2cd01ef: ``updater_disabled:linux_apt``."""
    assert _ok(_tauri("updater.status", test_mode=test_mode)) == {
        "os": "linux",
        "enabled": False,
        "reason": "linux_apt",
        "instantiated": False,
    }
    assert _error(_tauri("updater.check", test_mode=test_mode)) == (
        "updater_disabled",
        "updater_disabled:linux_apt",
    )


@pytest.mark.parametrize(
    ("test_mode", "bundle", "reason"),
    [(True, True, "test_mode"), (False, False, "no_bundle"), (False, True, "ok")],
)
def test_updater_on_macos_by_precedence(test_mode: bool, bundle: bool, reason: str) -> None:
    """updater.rs:60-73@c38944d (``updater_reason``): test mode, then a missing bundle, else
    ok; only ok checks (``{}``: ``check`` 154-161)."""
    model = DesktopModel()
    model.platform.update(os="macos", bundle=bundle)
    status = _ok(_tauri("updater.status", model=model, test_mode=test_mode))
    assert (status["reason"], status["enabled"]) == (reason, reason == "ok")
    assert status["instantiated"] is (bundle and not test_mode)
    reply = _tauri("updater.check", model=model, test_mode=test_mode)
    if reason == "ok":
        assert _ok(reply) == {}
    else:
        assert _error(reply) == ("updater_disabled", f"updater_disabled:{reason}")
