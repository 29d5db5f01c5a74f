"""What the real apps answer, op by op and dialect by dialect, for the real ``shedctl``'s commands.

Each test names the upstream source it was checked against (``repo path:line@commit``).
``5a762e8`` is charliek/shed-desktop tag v0.0.14 (``git rev-parse v0.0.14^{commit}``); facts of
the newer app come from charliek/shed ``desktop/tauri`` and ``crates/`` (see the
fidelity table in ``docs/protocols/desktop.md``). ``shedctl`` (charliek/shed-desktop
``core/shedctl/src/main.rs:122-179@5a762e8``) sends id ``"1"`` and a params object:
``identify {}``, ``sheds.list {}``, ``dashboard.dump {}``, ``app.screenshot {scale}``,
``shed.<action> {name, host?}`` and ``raw <op> {k: v...}``.
"""

from __future__ import annotations

from typing import Any

import pytest

from shedproto.desktop import Dialect, Release
from shedproto.servers.desktop import DesktopModel

from ._helpers import answer

MAC, TAURI = Dialect.MAC, Dialect.TAURI
OLD = Release.V0_0_14

TAURI_SHED_KEYS = {
    "host",
    "name",
    "status",
    "backend",
    "repo",
    "image",
    "image_digest",
    "local_dir",
    "ip_address",
    "cpus",
    "memory_mb",
    "created_at",
    "started_at",
    "active_namespaces",
}


def _model(**shed: Any) -> DesktopModel:
    model = DesktopModel()
    model.add_shed("prod", "web", **shed)
    model.add_shed("lab", "gpu", status="stopped", active_namespaces=["git"])
    return model


def _error(reply: dict[str, Any]) -> tuple[str, str]:
    assert reply["ok"] is False, reply
    return reply["error"]["code"], reply["error"]["message"]


# --- identify -------------------------------------------------------------------------


def test_identify_tauri_v0_0_14_sends_six_keys_mock_null() -> None:
    """charliek/shed-desktop tauri/src-tauri/src/ipc.rs:116-125@5a762e8."""
    result = answer(TAURI, DesktopModel(), "identify", release=OLD)["result"]
    assert result == {
        "socket_path": "/run/s.sock",
        "pid": 7,
        "core": "rust",
        "platform": "tauri",
        "test_mode": True,
        "mock_base_url": None,
    }


def test_identify_tauri_latest_adds_broker_mode() -> None:
    """charliek/shed desktop/tauri/src-tauri/src/ipc.rs:590-599,681-690@2cd01ef: the payload
    plus ``broker_mode``, the broker's ``{effective, pref, restart_required}`` fragment
    (desktop/tauri/src-tauri/src/broker.rs:143-149@51bd544, ``identify_fragment``)."""
    result = answer(TAURI, DesktopModel(), "identify")["result"]
    assert result["broker_mode"] == {
        "effective": "embedded",
        "pref": "auto",
        "restart_required": False,
    }
    assert result["mock_base_url"] is None  # null, never omitted
    assert set(result) == {
        "socket_path",
        "pid",
        "core",
        "platform",
        "test_mode",
        "mock_base_url",
        "broker_mode",
    }


@pytest.mark.parametrize("release", list(Release))
def test_identify_mac_fields_mock_omitted_when_nil(release: Release) -> None:
    """charliek/shed-desktop Sources/ShedDesktopApp/IPCHandlerImpl.swift:180-191,529-550@5a762e8."""
    result = answer(MAC, DesktopModel(), "identify", release=release)["result"]
    assert "mock_base_url" not in result  # Swift encodeIfPresent
    assert set(result) == {
        "socket_path",
        "pid",
        "app_label",
        "app_id",
        "ui_version",
        "protocol_version",
        "test_mode",
        "core",
    }
    assert result["core"] == "rust"


def test_identify_mac_refuses_unknown_params() -> None:
    """charliek/shed-desktop Sources/ShedDesktopApp/IPCHandlerImpl.swift:28,559-569@5a762e8."""
    reply = answer(MAC, DesktopModel(), "identify", {"client_name": "x", "verbose": True})
    assert _error(reply) == ("unknown-field", "unknown params: verbose")


# --- sheds list -----------------------------------------------------------------------


@pytest.mark.parametrize("release", list(Release))
def test_sheds_list_tauri_rows_carry_every_model_field_null_when_unknown(
    release: Release,
) -> None:
    """charliek/shed-desktop core/shed-core/src/models.rs:63-84@5a762e8 (serde, no skip)."""
    sheds = answer(TAURI, _model(repo="git@x:y"), "sheds.list", release=release)["result"]["sheds"]
    assert [set(row) for row in sheds] == [TAURI_SHED_KEYS, TAURI_SHED_KEYS]
    web, gpu = sheds
    assert (web["host"], web["name"], web["status"], web["repo"]) == (
        "prod",
        "web",
        "running",
        "git@x:y",
    )
    assert web["ip_address"] is None
    assert web["cpus"] is None
    assert web["active_namespaces"] == []
    assert (gpu["host"], gpu["status"], gpu["active_namespaces"]) == ("lab", "stopped", ["git"])


def test_sheds_list_tauri_v0_0_14_has_no_host_errors() -> None:
    """charliek/shed-desktop tauri/src-tauri/src/ipc.rs:210@5a762e8: ``{sheds}`` alone."""
    model = _model()
    model.make_host_unreachable("lab")
    result = answer(TAURI, model, "sheds.list", release=OLD)["result"]
    assert set(result) == {"sheds"}
    assert [row["name"] for row in result["sheds"]] == ["web"]  # a failed host is dropped


def test_sheds_list_tauri_latest_carries_host_errors() -> None:
    """charliek/shed desktop/tauri/src-tauri/src/ipc.rs:180-182,824-828@2cd01ef (sheds_payload)."""
    model = _model()
    model.make_host_unreachable("lab")
    result = answer(TAURI, model, "sheds.list")["result"]
    assert [e["server"] for e in result["host_errors"]] == ["lab"]
    assert answer(TAURI, _model(), "sheds.list")["result"]["host_errors"] == []


def test_sheds_list_tauri_ignores_host() -> None:
    """charliek/shed-desktop tauri/src-tauri/src/ipc.rs:210@5a762e8: params are not read."""
    sheds = answer(TAURI, _model(), "sheds.list", {"host": "lab"})["result"]["sheds"]
    assert [row["name"] for row in sheds] == ["web", "gpu"]


def test_sheds_list_mac_rows_omit_nil_optionals_keep_namespaces() -> None:
    """charliek/shed-desktop Sources/ShedKit/Models/Models.swift:82-110@5a762e8 (sorted by
    host, then name: AppModel.swift:513@5a762e8)."""
    sheds = answer(MAC, _model(cpus=2), "sheds.list")["result"]["sheds"]
    assert sheds == [
        {"host": "lab", "name": "gpu", "status": "stopped", "active_namespaces": ["git"]},
        {"host": "prod", "name": "web", "status": "running", "cpus": 2, "active_namespaces": []},
    ]


def test_sheds_list_mac_filters_by_host_unknown_host_is_empty() -> None:
    """charliek/shed-desktop Sources/ShedDesktopApp/IPCHandlerImpl.swift:329-334@5a762e8."""
    assert [r["name"] for r in answer(MAC, _model(), "sheds.list", {"host": "lab"})["result"][
        "sheds"
    ]] == ["gpu"]
    assert answer(MAC, _model(), "sheds.list", {"host": "nowhere"})["result"] == {"sheds": []}


def test_sheds_list_mac_unknown_param_refused() -> None:
    """charliek/shed-desktop Sources/ShedDesktopApp/IPCHandlerImpl.swift:76,564-567@5a762e8."""
    reply = answer(MAC, _model(), "sheds.list", {"server": "prod"})
    assert _error(reply) == ("unknown-field", "unknown params: server")


# --- dashboard dump -------------------------------------------------------------------


def test_dashboard_dump_tauri_v0_0_14_is_rows_alone() -> None:
    """charliek/shed-desktop tauri/src-tauri/src/ipc.rs:212-214@5a762e8."""
    result = answer(TAURI, _model(), "dashboard.dump", release=OLD)["result"]
    assert set(result) == {"rows"}
    assert [row["name"] for row in result["rows"]] == ["web", "gpu"]


def test_dashboard_dump_tauri_latest_rows_host_errors_empty() -> None:
    """charliek/shed desktop/tauri/src-tauri/src/ipc.rs:830-837@2cd01ef (dashboard.dump arm)."""
    result = answer(TAURI, _model(), "dashboard.dump")["result"]
    assert set(result) == {"rows", "host_errors", "empty"}
    assert result["empty"] is None  # rows render: no empty state
    assert set(result["rows"][0]) == TAURI_SHED_KEYS


@pytest.mark.parametrize("release", list(Release))
def test_dashboard_dump_mac_is_unknown_op(release: Release) -> None:
    """charliek/shed-desktop Sources/ShedDesktopApp/IPCHandlerImpl.swift:164-166@5a762e8."""
    reply = answer(MAC, _model(), "dashboard.dump", release=release)
    assert _error(reply) == ("unknown-op", "no such op: dashboard.dump")


# --- screenshot -----------------------------------------------------------------------


@pytest.mark.parametrize("release", list(Release))
def test_screenshot_tauri_ignores_scale(release: Release) -> None:
    """charliek/shed-desktop tauri/src-tauri/src/ipc.rs:209,743-755@5a762e8: params unread."""
    result = answer(TAURI, DesktopModel(), "app.screenshot", {"scale": 3}, release=release)
    assert set(result["result"]) == {"png", "width", "height"}


def test_screenshot_mac_echoes_scale_and_surface() -> None:
    """charliek/shed-desktop Sources/ShedDesktopApp/IPCHandlerImpl.swift:336-358@5a762e8."""
    result = answer(MAC, DesktopModel(), "app.screenshot", {"scale": 2})["result"]
    assert (result["scale"], result["surface"]) == (2, "window")
    assert set(result) == {"png", "width", "height", "scale", "surface"}


@pytest.mark.parametrize("scale", [0, 3, 100])
def test_screenshot_mac_scale_out_of_range(scale: int) -> None:
    """charliek/shed-desktop Sources/ShedDesktopApp/IPCHandlerImpl.swift:339-341@5a762e8."""
    reply = answer(MAC, DesktopModel(), "app.screenshot", {"scale": scale})
    assert _error(reply) == ("invalid-param", f"scale must be 1 or 2, got {scale}")


def test_screenshot_mac_menu_surface_closed() -> None:
    """charliek/shed-desktop Sources/ShedDesktopApp/IPCHandlerImpl.swift:342-345@5a762e8."""
    reply = answer(MAC, DesktopModel(), "app.screenshot", {"surface": "menu"})
    assert _error(reply) == ("internal", "menu is not open; call ui.open_menu {open:true} first")


# --- shed start|stop|reset|delete -----------------------------------------------------

ACTIONS = ["shed.start", "shed.stop", "shed.reset", "shed.delete"]


@pytest.mark.parametrize("dialect", list(Dialect))
@pytest.mark.parametrize("op", ACTIONS)
def test_shed_action_ok_is_empty_object(dialect: Dialect, op: str) -> None:
    """tauri ipc.rs:350-358@5a762e8; mac IPCHandlerImpl.swift:88-94@5a762e8: ``{}``."""
    assert answer(dialect, _model(), op, {"name": "web", "host": "prod"})["result"] == {}


@pytest.mark.parametrize("op", ACTIONS)
def test_shed_action_tauri_unknown_host_is_action_failed(op: str) -> None:
    """tauri ipc.rs:357@5a762e8 wraps core/shed-app/src/backend.rs:158-161,385-388@5a762e8."""
    reply = answer(TAURI, _model(), op, {"name": "web", "host": "nowhere"})
    assert _error(reply) == ("action_failed", "no configured host: nowhere")


@pytest.mark.parametrize("op", ACTIONS)
def test_shed_action_mac_unknown_host_is_not_found(op: str) -> None:
    """charliek/shed-desktop Sources/ShedDesktopApp/AppModel.swift:422-431,848-849@5a762e8."""
    reply = answer(MAC, _model(), op, {"name": "web", "host": "nowhere"})
    assert _error(reply) == ("not-found", "no configured host named nowhere")


@pytest.mark.parametrize(
    ("dialect", "expected"),
    [
        (TAURI, ("action_failed", "no configured host")),  # backend.rs:385-388@5a762e8
        (MAC, ("not-found", "no configured host")),  # AppModel.swift:422-425@5a762e8
    ],
)
def test_shed_action_no_configured_host(dialect: Dialect, expected: tuple[str, str]) -> None:
    """No server configured and no ``--host``: the backend has nothing to resolve."""
    assert _error(answer(dialect, DesktopModel(), "shed.stop", {"name": "web"})) == expected


@pytest.mark.parametrize(
    ("dialect", "core", "release", "expected"),
    [
        # shed-core http.rs:28-31@5a762e8 through ipc.rs:357@5a762e8
        (TAURI, "rust", None, ("action_failed", "shed-server returned HTTP 404")),
        # mac v0.0.14: IPCServer.swift:163-165@5a762e8, "\(error)" of the UniFFI ShedError
        # (core/shed-core-ffi/src/lib.rs:46-58@5a762e8) under the default Rust core
        (MAC, "rust", OLD, ("internal", "BadStatus(status: 404)")),
        # ... and of ShedClientError under the Swift core (ShedServerClient.swift:16-30@5a762e8)
        (MAC, "swift", OLD, ("internal", "shed-server returned HTTP 404")),
        # the newer mac app: HostFailure.displayMessage under either core (charliek/shed
        # desktop/Sources/ShedKit/IPC/IPCServer.swift@1cea187, test_fidelity_mac_newer.py)
        (MAC, "rust", None, ("internal", "shed-server returned HTTP 404")),
    ],
)
def test_shed_action_unknown_shed_passes_the_server_404_through(
    dialect: Dialect, core: str, release: Release | None, expected: tuple[str, str]
) -> None:
    """An unknown shed name is shed-server's 404, passed through by the app."""
    model = _model()
    model.core = core
    params = {"name": "nope", "host": "prod"}
    reply = answer(dialect, model, "shed.start", params, release=release)
    assert _error(reply) == expected


def test_shed_action_default_host_is_first_server() -> None:
    """backend.rs:364-374@5a762e8: a host-less op takes the default (else the first) server."""
    model = _model()
    assert answer(TAURI, model, "shed.stop", {"name": "web"})["result"] == {}
    assert model.hosts["prod"].sheds["web"].status == "stopped"
    assert _error(answer(TAURI, model, "shed.stop", {"name": "gpu"})) == (
        "action_failed",
        "shed-server returned HTTP 404",  # gpu is on lab, not on the default server
    )


@pytest.mark.parametrize("params", [{}, {"name": 7}, {"name": None}])
def test_shed_action_tauri_missing_name(params: dict[str, Any]) -> None:
    """charliek/shed-desktop tauri/src-tauri/src/ipc.rs:56-61,351@5a762e8 (req_str)."""
    reply = answer(TAURI, _model(), "shed.start", params)
    assert _error(reply) == ("bad_request", "missing 'name'")


def test_shed_action_mac_missing_name_is_invalid_param() -> None:
    """charliek/shed-desktop Sources/ShedDesktopApp/IPCHandlerImpl.swift:92,570-575@5a762e8."""
    code, message = _error(answer(MAC, _model(), "shed.start", {}))
    assert code == "invalid-param"
    assert "keyNotFound" in message
    assert '"name"' in message


def test_shed_action_mac_unknown_param() -> None:
    """charliek/shed-desktop Sources/ShedDesktopApp/IPCHandlerImpl.swift:92,564-567@5a762e8."""
    reply = answer(MAC, _model(), "shed.start", {"name": "web", "server": "prod"})
    assert _error(reply) == ("unknown-field", "unknown params: server")


def test_shed_action_unreachable_server_is_transport_error() -> None:
    """shed-core http.rs:31,126@5a762e8: a refused connection is ``transport error: ...``."""
    model = _model()
    model.make_host_unreachable("prod", detail="connection refused")
    code, message = _error(answer(TAURI, model, "shed.start", {"name": "web", "host": "prod"}))
    assert (code, message) == ("action_failed", "transport error: connection refused")


# --- the other ops a shed name or host reaches ----------------------------------------


@pytest.mark.parametrize(
    ("dialect", "expected"),
    [
        (TAURI, ("action_failed", "no configured host: nowhere")),  # ipc.rs:377-380@5a762e8
        (MAC, ("not-found", "no configured host named nowhere")),  # AppModel.swift:859-860@5a762e8
    ],
)
def test_create_start_unknown_host(dialect: Dialect, expected: tuple[str, str]) -> None:
    """create.start resolves its host through the same backend lookup."""
    assert _error(answer(dialect, _model(), "create.start", {"name": "n", "host": "nowhere"})) == (
        expected
    )


@pytest.mark.parametrize("dialect", list(Dialect))
def test_terminal_preview_unknown_shed_still_builds_the_command(dialect: Dialect) -> None:
    """Neither app checks the shed exists: tauri termctl.rs:77-98, backend.rs:301-315@5a762e8;
    mac AppModel.swift:911-914,929-939,958-964@5a762e8."""
    result = answer(dialect, _model(), "terminal.preview", {"shed": "nope"})["result"]
    assert "nope@" in result["command"]


def test_rc_kill_tauri_unknown_host_is_bad_request() -> None:
    """charliek/shed-desktop tauri/src-tauri/src/ipc.rs:510-513@5a762e8."""
    reply = answer(TAURI, _model(), "rc.kill", {"shed": "web", "slug": "1", "host": "nowhere"})
    assert _error(reply) == ("bad_request", "no configured host: nowhere")


# --- raw ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dialect", "expected"),
    [
        (TAURI, ("unknown_op", "unknown op: no.such")),  # ipc.rs:265@5a762e8
        (MAC, ("unknown-op", "no such op: no.such")),  # IPCServer.swift:188-190@5a762e8
    ],
)
def test_raw_unknown_op(dialect: Dialect, expected: tuple[str, str]) -> None:
    """``shedctl raw no.such``."""
    assert _error(answer(dialect, DesktopModel(), "no.such", {"k": 1})) == expected


@pytest.mark.parametrize("op", ["machines.list", "craze.create", "ui.show_launch", "hosts.auth"])
def test_raw_newer_ops_are_unknown_in_v0_0_14_tauri(op: str) -> None:
    """charliek/shed-desktop tauri/src-tauri/src/ipc.rs:188-266@5a762e8 has no such arm."""
    reply = answer(TAURI, DesktopModel(), op, {"machine": 7}, release=OLD)
    assert _error(reply) == ("unknown_op", f"unknown op: {op}")
    latest = answer(TAURI, DesktopModel(), op, {}, release=Release.LATEST)
    assert latest.get("error", {}).get("code") != "unknown_op"


def test_raw_ui_open_preferences_is_v0_0_14_unknown_but_show_preferences_works() -> None:
    """charliek/shed-desktop tauri/src-tauri/src/ipc.rs:199-203@5a762e8: show, not open."""
    assert _error(answer(TAURI, DesktopModel(), "ui.open_preferences", release=OLD))[0] == (
        "unknown_op"
    )
    assert answer(TAURI, DesktopModel(), "ui.show_preferences", release=OLD)["result"] == {}


# --- ui.navigate and sheds.refresh across releases --------------------------------------


def test_ui_navigate_tauri_v0_0_14_acks_empty_five_panes() -> None:
    """charliek/shed-desktop tauri/src-tauri/src/ipc.rs:302-321@5a762e8."""
    assert answer(TAURI, DesktopModel(), "ui.navigate", {"pane": "agents"}, release=OLD)[
        "result"
    ] == {}
    reply = answer(TAURI, DesktopModel(), "ui.navigate", {"pane": "egress"}, release=OLD)
    assert _error(reply) == ("bad_request", 'unknown pane: "egress"')


def test_ui_navigate_tauri_latest_echoes_pane() -> None:
    """charliek/shed desktop/tauri/src-tauri/src/ipc.rs:1059-1079@2cd01ef: ``{pane}`` echoed."""
    result = answer(TAURI, DesktopModel(), "ui.navigate", {"pane": "egress"})["result"]
    assert result == {"pane": "egress"}


def test_ui_navigate_mac_echoes_pane_unknown_lists_six() -> None:
    """charliek/shed-desktop IPCHandlerImpl.swift:320-327, Models.swift:453-460@5a762e8."""
    assert answer(MAC, DesktopModel(), "ui.navigate", {"pane": "egress"})["result"] == {
        "pane": "egress"
    }
    reply = answer(MAC, DesktopModel(), "ui.navigate", {"pane": "machines"})
    assert _error(reply) == (
        "invalid-param",
        "unknown pane: machines (want sheds|approvals|agents|activity|egress|system)",
    )


def test_sheds_refresh_tauri_v0_0_14_is_empty_latest_is_listing() -> None:
    """charliek/shed-desktop tauri/src-tauri/src/ipc.rs:329-346@5a762e8 answers ``{}``; the newer
    app answers the committed ``{sheds, host_errors}`` (ipc.rs:829@2cd01ef, sheds_refresh)."""
    assert answer(TAURI, _model(), "sheds.refresh", release=OLD)["result"] == {}
    assert set(answer(TAURI, _model(), "sheds.refresh")["result"]) == {"sheds", "host_errors"}


def test_host_list_mac_v0_0_14_has_no_failure() -> None:
    """charliek/shed-desktop Sources/ShedKit/Models/Models.swift:26-43,66-73,
    AppModel.swift:491@5a762e8 (last_error "<server>: <error>")."""
    model = _model()
    model.make_host_unreachable("lab")
    hosts = answer(MAC, model, "host.list", release=OLD)["result"]["hosts"]
    assert all("failure" not in h for h in hosts)
    assert hosts[1]["last_error"] == 'lab: Transport(message: "connection refused")'
    latest = answer(MAC, model, "host.list")["result"]["hosts"]
    assert latest[1]["failure"]["server"] == "lab"


# --- approvals and notifications ------------------------------------------------------


def test_approval_decide_tauri_unknown_id_is_ok_nothing_done() -> None:
    """charliek/shed-desktop core/shed-app/src/coordinator.rs:528-532@5a762e8 through
    tauri/src-tauri/src/ipc.rs:623-634@5a762e8: an unknown id is dropped, ``{}``."""
    model = DesktopModel()
    reply = answer(TAURI, model, "approval.decide", {"id": "nope", "decision": "approve"})
    assert reply["result"] == {}
    assert model.decisions == []


def test_approval_decide_mac_unknown_id_is_not_found() -> None:
    """charliek/shed-desktop Sources/ShedDesktopApp/AppModel.swift:1222-1223@5a762e8."""
    reply = answer(MAC, DesktopModel(), "approval.decide", {"id": "nope", "decision": "deny"})
    assert _error(reply) == ("not-found", "no pending approval nope")


@pytest.mark.parametrize(
    ("op", "params"),
    [("notification.invoke", {"id": "n1", "action": "approve"}), ("notification.open", {})],
)
def test_notification_doors_mac_need_the_test_presenter(op: str, params: dict[str, Any]) -> None:
    """charliek/shed-desktop Sources/ShedDesktopApp/AppModel.swift:1154-1155,1366-1379@5a762e8."""
    reply = answer(MAC, DesktopModel(), op, params, test_mode=False)
    assert _error(reply) == ("not-enabled", f"{op} requires the test presenter")


def test_notification_invoke_unknown_id_both_dialects() -> None:
    """tauri ipc.rs:677-691@5a762e8; mac AppModel.swift:1370-1372@5a762e8."""
    params = {"id": "n9", "action": "deny"}
    assert _error(answer(TAURI, DesktopModel(), "notification.invoke", params)) == (
        "not_found",
        "no posted notification n9",
    )
    assert _error(answer(MAC, DesktopModel(), "notification.invoke", params)) == (
        "not-found",
        "no posted notification n9",
    )
    # the Tauri door has no presenter gate: a non-test presenter simply lists none
    reply = answer(TAURI, DesktopModel(), "notification.invoke", params, test_mode=False)
    assert _error(reply)[0] == "not_found"


# --- system.df and agents.dump ----------------------------------------------------------


def test_system_df_tauri_rows_host_usage_error_null() -> None:
    """charliek/shed-desktop core/shed-app/src/backend.rs:272-293,410-417@5a762e8."""
    model = _model()
    model.make_host_unreachable("lab", detail="connection refused")
    usage = answer(TAURI, model, "system.df")["result"]["usage"]
    ok, bad = usage
    assert (ok["host"], ok["error"]) == ("prod", None)
    assert ok["usage"]["server_name"] == "prod"
    assert [s["name"] for s in ok["usage"]["sheds"]] == ["web"]
    assert ok["usage"]["sheds"][0]["docker_ref"] is None
    assert set(ok["usage"]["totals"]) == {"images", "sheds", "snapshots", "orphans", "all"}
    assert bad == {"host": "lab", "usage": None, "error": "transport error: connection refused"}


def test_system_df_mac_rows_omit_nil() -> None:
    """charliek/shed-desktop Sources/ShedKit/Models/Models.swift:548-558@5a762e8, AppModel.swift:
    535-544@5a762e8 (an unreachable host is an error row, never a failure)."""
    model = _model()
    model.make_host_unreachable("lab", detail="connection refused")
    bad, ok = answer(MAC, model, "system.df")["result"]["usage"]  # sorted by host (:549)
    assert set(ok) == {"host", "usage"}
    assert "docker_ref" not in ok["usage"]["sheds"][0]
    assert set(bad) == {"host", "error"}


def test_agents_dump_tauri_v0_0_14_sessions_alone() -> None:
    """charliek/shed-desktop tauri/src-tauri/src/ipc.rs:584-599@5a762e8: ``[]`` off the pane."""
    model = DesktopModel()
    model.set_dump("agents.dump", {"sessions": [{"slug": "a"}], "empty": None})
    assert answer(TAURI, model, "agents.dump", release=OLD)["result"] == {"sessions": []}
    model.ui["pane"] = "agents"
    assert answer(TAURI, model, "agents.dump", release=OLD)["result"] == {
        "sessions": [{"slug": "a"}]
    }
    assert "empty" in answer(TAURI, model, "agents.dump")["result"]  # the newer app adds it


# --- create.status / create.cancel ------------------------------------------------------


def test_create_status_tauri_is_the_store_snapshot_nulls_kept() -> None:
    """charliek/shed-desktop core/shed-core/src/create.rs:22-39, ipc.rs:386-392@5a762e8."""
    model = _model()
    started = answer(TAURI, model, "create.start", {"name": "new", "host": "prod"})["result"]
    status = answer(TAURI, model, "create.status", {"create_id": started["create_id"]})["result"]
    assert set(status) == {"id", "state", "messages", "shed", "error"}
    assert (status["id"], status["state"], status["error"]) == (
        started["create_id"],
        "complete",
        None,
    )
    assert set(status["shed"]) == TAURI_SHED_KEYS
    assert status["shed"]["host"] == "prod"


def test_create_status_mac_omits_nil_error() -> None:
    """charliek/shed-desktop Sources/ShedKit/Models/Models.swift:661-675@5a762e8."""
    model = _model()
    started = answer(MAC, model, "create.start", {"name": "new"})["result"]
    status = answer(MAC, model, "create.status", {"create_id": started["create_id"]})["result"]
    assert set(status) == {"id", "state", "messages", "shed"}
    assert status["shed"]["active_namespaces"] == []


@pytest.mark.parametrize(
    ("dialect", "expected"),
    [
        (TAURI, {"ok": True, "result": {"state": "unknown"}}),  # ipc.rs:386-392@5a762e8
        (
            MAC,  # IPCHandlerImpl.swift:228-233@5a762e8
            {"ok": False, "error": {"code": "not-found", "message": "no create with id c-1"}},
        ),
    ],
)
def test_create_status_unknown_and_after_cancel(dialect: Dialect, expected: dict[str, Any]) -> None:
    """An id the store does not hold, and one cancelled (the store drops it: tauri
    backend.rs:237-239, mac AppModel.swift:905-909@5a762e8)."""
    model = _model()
    reply = answer(dialect, model, "create.status", {"create_id": "c-1"})
    assert {k: v for k, v in reply.items() if k != "id"} == expected
    started = answer(dialect, model, "create.start", {"name": "new"})["result"]
    assert answer(dialect, model, "create.cancel", {"create_id": started["create_id"]})[
        "result"
    ] == {}
    after = answer(dialect, model, "create.status", {"create_id": started["create_id"]})
    assert after["ok"] is (dialect is TAURI)
    # cancel is idempotent
    assert answer(dialect, model, "create.cancel", {"create_id": "c-1"})["result"] == {}


def test_create_status_tauri_missing_id() -> None:
    """charliek/shed-desktop tauri/src-tauri/src/ipc.rs:387@5a762e8 (req_str)."""
    assert _error(answer(TAURI, _model(), "create.status", {})) == (
        "bad_request",
        "missing 'create_id'",
    )


def test_activity_list_tauri_negative_limit_is_the_default() -> None:
    """charliek/shed-desktop tauri/src-tauri/src/ipc.rs:638-641@5a762e8: ``as_u64`` or 200."""
    model = DesktopModel()
    model.activity.extend({"kind": "approval", "n": n} for n in range(3))
    assert len(answer(TAURI, model, "activity.list", {"limit": -1})["result"]["entries"]) == 3
    assert len(answer(TAURI, model, "activity.list", {"limit": "x"})["result"]["entries"]) == 3
    assert len(answer(TAURI, model, "activity.list", {"limit": 1})["result"]["entries"]) == 1


def test_ui_state_mac_v0_0_14_has_no_empty_state_sentence() -> None:
    """charliek/shed-desktop Sources/ShedKit/Models/Models.swift:342-353@5a762e8."""
    state = answer(MAC, _model(), "ui.state", release=OLD)["result"]
    assert set(state) == {"pane", "hosts", "sheds", "host_agent_connected"}
    # the newer app always sends it (test_fidelity_mac_newer.py)
    assert "sheds_empty_state" in answer(MAC, _model(), "ui.state")["result"]


def test_identify_mac_constants() -> None:
    """charliek/shed-desktop Sources/ShedKit/Backend/BundleProfile.swift:44-48,
    Sources/ShedKit/IPC/IPCMessages.swift:209, VERSION:1@5a762e8 (the newer bundle's version:
    test_fidelity_mac_newer.py)."""
    result = answer(MAC, DesktopModel(), "identify", release=OLD)["result"]
    assert (result["app_label"], result["app_id"]) == ("ShedDesktop", "ai.stridelabs.ShedDesktop")
    assert (result["ui_version"], result["protocol_version"]) == ("0.0.14", 1)


@pytest.mark.parametrize(
    ("op", "params"),
    [
        ("prefs.set_terminal", {"preset": "kitty"}),
        ("terminal.preview", {"shed": "web", "preset": "kitty"}),
    ],
)
def test_tauri_unknown_terminal_preset(op: str, params: dict[str, Any]) -> None:
    """charliek/shed-desktop tauri/src-tauri/src/termctl.rs:132-151@5a762e8."""
    assert _error(answer(TAURI, _model(), op, params)) == ("bad_request", "unknown preset: kitty")
    assert answer(TAURI, _model(), op, {**params, "preset": "roost"})["ok"] is True


def test_ssh_prefs_tauri_defaults_are_shed_apps() -> None:
    """charliek/shed-desktop core/shed-app/src/coordinator.rs:63-78@5a762e8."""
    assert answer(TAURI, DesktopModel(), "ui.ssh_prefs")["result"] == {
        "method": "biometrics-or-password",
        "policy": "time-based-allow",
        "ttl": "2h",
    }


def test_set_ssh_approval_refuses_unknown_variants() -> None:
    """Enums in both apps: tauri ipc.rs:703-711 (serde), mac IPCHandlerImpl.swift:469-480@5a762e8;
    shed-core approval/models.rs:174-243@5a762e8 names the variants."""
    code, message = _error(answer(TAURI, DesktopModel(), "ui.set_ssh_approval", {"method": "pin"}))
    assert code == "bad_request"
    assert message.startswith("unknown variant `pin`, expected one of `biometrics-or-password`")
    assert _error(answer(MAC, DesktopModel(), "ui.set_ssh_approval", {"policy": "ask"}))[0] == (
        "invalid-param"
    )
    model = DesktopModel()
    ok = answer(TAURI, model, "ui.set_ssh_approval", {"policy": "always-ask", "ttl": "1h"})
    assert ok["result"] == {}
    assert answer(TAURI, model, "ui.ssh_prefs")["result"]["policy"] == "always-ask"


def test_policy_rules_are_shed_cores_rule_shape() -> None:
    """charliek/shed-desktop core/shed-core/src/approval/models.rs:292-333@5a762e8:
    ``{scope, server?, namespace?, shed?, action, gate}``, ``gate`` defaulting."""
    model = DesktopModel()
    rules = [{"scope": "namespace", "namespace": "ssh-agent", "action": "prompt"}]
    assert answer(TAURI, model, "policy.set", {"rules": rules})["result"] == {}
    assert answer(TAURI, model, "policy.list")["result"] == {
        "rules": [
            {
                "scope": "namespace",
                "namespace": "ssh-agent",
                "action": "prompt",
                "gate": "biometrics-or-password",
            }
        ]
    }
    code, message = _error(answer(TAURI, model, "policy.set", {"rules": [{"action": "deny"}]}))
    assert (code, message) == ("bad_request", "missing field `scope`")
    code, message = _error(
        answer(TAURI, model, "policy.set", {"rules": [{"scope": "shed", "action": "always-allow"}]})
    )
    assert code == "bad_request"
    assert message.startswith("unknown variant `always-allow`")


def test_terminal_presets_and_default_preset() -> None:
    """charliek/shed-desktop core/shed-core/src/terminal.rs:79-115 (``#[default] Custom``),
    tauri/src-tauri/src/termctl.rs:42-68@5a762e8."""
    presets = answer(TAURI, DesktopModel(), "terminal.presets")["result"]["presets"]
    assert [(p["id"], p["label"]) for p in presets] == [
        ("ghostty", "Ghostty"),
        ("roost", "Roost"),
        ("custom", "Custom"),
    ]
    assert presets[2]["detail"] == ""
    assert answer(TAURI, DesktopModel(), "prefs.get")["result"] == {
        "terminal_preset": "custom",
        "terminal_template": "",
    }


def test_tray_dump_items_are_the_menu_ids() -> None:
    """charliek/shed-desktop tauri/src-tauri/src/tray.rs:40-48, ipc.rs:276-297@5a762e8."""
    result = answer(TAURI, DesktopModel(), "tray.dump")["result"]
    assert result["items"] == ["open", "approvals", "preferences", "quit"]
    assert set(result) == {"present", "items", "popover", "popover_visible", "popover_height"}


# --- rc.classify (v0.0.14 only) ---------------------------------------------------------

BROKER_URL = "https://claude.ai/code?environment=env_abc-1"
SESSION_URL = "https://claude.ai/code/session_x_9"
CLASSIFY_CASES = [
    # (kind, pane, expected result): core/shed-core/src/rc.rs:415-486@5a762e8,
    # Sources/ShedKit/RC/RemoteControl.swift:264-321@5a762e8
    ("claude-broker", f"Connected {BROKER_URL}", {"state": "ready", "url": BROKER_URL}),
    (
        "claude-broker",
        f"·|· Reconnecting · {BROKER_URL}",
        {"state": "reconnecting", "url": BROKER_URL},
    ),
    ("claude-broker", "·|· Reconnecting · retrying in 2.5s", {"state": "reconnecting"}),
    ("claude-broker", "Reconnectings", {"state": "starting"}),
    ("claude-broker", SESSION_URL, {"state": "starting"}),  # the other kind's URL form
    ("claude-rc", "Remote Control connecting…", {"state": "starting"}),
    ("claude-rc", f"Remote Control active {SESSION_URL}", {"state": "ready", "url": SESSION_URL}),
    ("claude-rc", "Error: WORKSPACE NOT TRUSTED", {"state": "needs-trust"}),
    (
        "claude-rc",
        f"Quick safety check {SESSION_URL}",
        {"state": "needs-trust", "url": SESSION_URL},
    ),
    ("claude-broker", "  yes,   i trust this folder ", {"state": "needs-trust"}),
    ("claude-rc", "Remote Control requires a claude.ai subscription.", {"state": "needs-auth"}),
    ("claude-broker", "You are Not Logged In.", {"state": "needs-auth"}),
    ("claude-rc", "run claude auth login", {"state": "needs-auth"}),
    ("shell", "Workspace not trusted", {"state": "ready"}),  # no claude heuristics
    ("shell", "charliek@shed:/workspace$ ", {"state": "ready"}),
    ("shell", "   \n\t\u3000 \n", {"state": "starting"}),
    ("shell", "\x1c", {"state": "ready"}),  # not Unicode White_Space: Rust's trim keeps it
]


@pytest.mark.parametrize("dialect", list(Dialect))
@pytest.mark.parametrize(("kind", "pane", "expected"), CLASSIFY_CASES)
def test_rc_classify_v0_0_14_pane_states(
    dialect: Dialect, kind: str, pane: str, expected: dict[str, Any]
) -> None:
    """ipc.rs:226,465-469 + rc.rs:65-71 (url skipped when none);
    IPCHandlerImpl.swift:112-115,439 (nil url omitted)@5a762e8."""
    params = {"kind": kind, "pane": pane}
    reply = answer(dialect, DesktopModel(), "rc.classify", params, release=OLD)
    assert reply["result"] == expected


@pytest.mark.parametrize(
    ("dialect", "expected"),
    [
        (TAURI, ("unknown_op", "unknown op: rc.classify")),
        (MAC, ("unknown-op", "no such op: rc.classify")),
    ],
)
def test_rc_classify_is_gone_in_the_newer_app(dialect: Dialect, expected: tuple[str, str]) -> None:
    """No rc.classify arm in the newer dispatch.

    charliek/shed desktop/tauri/src-tauri/src/ipc.rs:679-964@2cd01ef.
    """
    reply = answer(dialect, DesktopModel(), "rc.classify", {"kind": "shell", "pane": ""})
    assert _error(reply) == expected


@pytest.mark.parametrize(
    "params",
    [
        {"pane": ""},
        {"kind": "agent", "pane": ""},  # v1's name, renamed in Convention v2
        {"kind": 3, "pane": ""},
        {"kind": None, "pane": ""},
        {"kind": "bogus"},  # kind is read first
    ],
)
def test_rc_classify_tauri_bad_kind(params: dict[str, Any]) -> None:
    """tauri/src-tauri/src/ipc.rs:63-69,467@5a762e8."""
    reply = answer(TAURI, DesktopModel(), "rc.classify", params, release=OLD)
    assert _error(reply) == ("bad_request", "missing or invalid 'kind'")


@pytest.mark.parametrize("params", [{"kind": "shell"}, {"kind": "shell", "pane": 1}])
def test_rc_classify_tauri_missing_pane(params: dict[str, Any]) -> None:
    """tauri/src-tauri/src/ipc.rs:56-61,468@5a762e8; unknown keys are ignored."""
    reply = answer(TAURI, DesktopModel(), "rc.classify", {**params, "extra": 1}, release=OLD)
    assert _error(reply) == ("bad_request", "missing 'pane'")


def test_rc_classify_mac_decode_errors_in_declaration_order() -> None:
    """Sources/ShedDesktopApp/IPCHandlerImpl.swift:112-115,409,559-576@5a762e8: extras
    first, then JSONDecoder over `RcClassifyParams {kind: RcKind, pane}`."""
    params = {"kind": "shell", "pane": "", "x": 1}
    extra = answer(MAC, DesktopModel(), "rc.classify", params, release=OLD)
    assert _error(extra) == ("unknown-field", "unknown params: x")
    bad = answer(MAC, DesktopModel(), "rc.classify", {"kind": "agent"}, release=OLD)
    code, message = _error(bad)
    assert code == "invalid-param"
    assert message.startswith("dataCorrupted(Swift.DecodingError.Context(codingPath: [")
    assert 'debugDescription: "Cannot initialize RcKind from invalid String value agent"' in message
    missing = answer(MAC, DesktopModel(), "rc.classify", {"kind": "shell"}, release=OLD)
    code, message = _error(missing)
    assert code == "invalid-param"
    assert message.startswith('keyNotFound(CodingKeys(stringValue: "pane", intValue: nil)')
    mistyped = answer(MAC, DesktopModel(), "rc.classify", {"kind": 2, "pane": ""}, release=OLD)
    code, message = _error(mistyped)
    assert code == "invalid-param"
    assert message.startswith("typeMismatch(Swift.String,")


# --- policy.list: the built-in rules ----------------------------------------------------


def _builtins(
    ssh_action: str, ssh_gate: str, aws: str = "deny", docker: str = "deny"
) -> list[dict[str, str]]:
    return [
        {"scope": "namespace", "namespace": "ssh-agent", "action": ssh_action, "gate": ssh_gate},
        {"scope": "namespace", "namespace": "aws-credentials", "action": aws, "gate": "none"},
        {"scope": "namespace", "namespace": "docker-credentials", "action": docker, "gate": "none"},
    ]


@pytest.mark.parametrize("dialect", list(Dialect))
def test_policy_list_starts_with_the_three_built_in_namespace_rules(dialect: Dialect) -> None:
    """shed-app coordinator.rs:172,836-870 (default SshPrefs time-based-allow,
    biometrics-or-password; a provider with no mode denies);
    Sources/ShedDesktopApp/AppModel.swift:145-146,185-196@5a762e8."""
    reply = answer(dialect, DesktopModel(), "policy.list", release=OLD)
    assert reply["result"] == {"rules": _builtins("prompt", "biometrics-or-password")}


@pytest.mark.parametrize(
    ("ssh", "expected"),
    [
        ({"policy": "always-allow"}, ("approve", "none")),
        ({"policy": "always-deny"}, ("deny", "none")),
        ({"policy": "always-ask", "method": "biometrics"}, ("prompt", "biometrics")),
        ({"policy": "per-shed-allow", "method": "prompt"}, ("prompt", "none")),
    ],
)
def test_policy_list_ssh_rule_follows_the_ssh_prefs(
    ssh: dict[str, str], expected: tuple[str, str]
) -> None:
    """shed-core approval/models.rs:187-193,264-278; coordinator.rs:836-851@5a762e8."""
    model = DesktopModel()
    assert answer(TAURI, model, "ui.set_ssh_approval", ssh)["result"] == {}
    assert answer(TAURI, model, "policy.list")["result"]["rules"] == _builtins(*expected)


def test_policy_set_replaces_every_rule_until_the_next_rebuild() -> None:
    """coordinator.rs:384-387 (policy.set swaps the engine), 831 (a pref change
    rebuilds: built-ins + per-shed rules); AppModel.swift:232-239,1354-1356@5a762e8."""
    model = DesktopModel()
    rules = [{"scope": "default", "action": "approve", "gate": "none"}]
    assert answer(MAC, model, "policy.set", {"rules": rules})["result"] == {}
    assert answer(MAC, model, "policy.list")["result"]["rules"] == rules
    answer(MAC, model, "ui.set_ssh_approval", {"ttl": "1h"})
    assert answer(MAC, model, "policy.list")["result"]["rules"] == _builtins(
        "prompt", "biometrics-or-password"
    )


def test_policy_list_provider_mode_and_per_shed_rules_follow_the_built_ins() -> None:
    """coordinator.rs:852-870,886-901 (add_shed_rule rebuilds)@5a762e8; the newer
    prefs.set_provider drives the provider mode."""
    model = DesktopModel()
    answer(TAURI, model, "policy.set", {"rules": []})
    aws = {"namespace": "aws-credentials", "decision": "approve"}
    answer(TAURI, model, "prefs.set_provider", aws)
    model.policy_rules.append(
        {"scope": "shed", "server": "prod", "shed": "web", "action": "deny", "gate": "none"}
    )
    rules = answer(TAURI, model, "policy.list")["result"]["rules"]
    assert rules[:3] == _builtins("prompt", "biometrics-or-password", aws="approve")
    assert rules[3] == {
        "scope": "shed", "server": "prod", "shed": "web", "action": "deny", "gate": "none"
    }


# --- v0.0.14 rc.*: the RcSession table ----------------------------------------------------

RC_SESSION_KEYS = {
    "host", "shed", "slug", "tmux_session", "display_name", "workdir", "kind", "state",
    "url", "rc_id", "created_by", "created_at", "target_label", "managed",
}  # fmt: skip


@pytest.mark.parametrize("dialect", list(Dialect))
def test_rc_launch_v0_0_14_test_mode_synthesizes_a_ready_managed_session(
    dialect: Dialect,
) -> None:
    """core/shed-app/src/rc.rs:195-243,396-404 (6-char slug), shed-core rc.rs:121-147,
    186-199 (tmux name, synthetic URL); Sources/ShedDesktopApp/AppModel.swift:998-1030@5a762e8."""
    model = _model()
    params = {"shed": "web", "kind": "claude-broker", "host": "prod"}
    session = answer(dialect, model, "rc.launch", params, release=OLD)["result"]
    assert set(session) == RC_SESSION_KEYS
    slug = session["slug"]
    assert len(slug) == 6
    assert set(slug) <= set("abcdefghjkmnpqrstuvwxyz23456789")
    assert session["tmux_session"] == f"rc-{slug}"
    assert session["display_name"] == f"web/{slug}"
    assert session["url"] == f"https://claude.ai/code?environment=env_{slug}"
    assert session["created_by"] == "shed-desktop/0.0.14"
    assert session["target_label"] == "shed:web@prod"
    assert (session["workdir"], session["state"], session["managed"]) == (
        "/workspace",
        "ready",
        True,
    )
    listed = answer(dialect, model, "rc.list", {"host": "prod"}, release=OLD)["result"]
    assert listed == {"sessions": [session]}
    assert answer(dialect, model, "rc.list", {"shed": "gpu"}, release=OLD)["result"] == {
        "sessions": []
    }
    kill = {"shed": "web", "slug": slug}
    assert answer(dialect, model, "rc.kill", kill, release=OLD)["result"] == {}
    assert answer(dialect, model, "rc.kill", kill, release=OLD)["result"] == {}  # idempotent
    assert answer(dialect, model, "rc.list", release=OLD)["result"] == {"sessions": []}


def test_rc_launch_v0_0_14_shell_has_no_url_and_mac_kind_defaults_to_claude_rc() -> None:
    """shed-core rc.rs:193-199; IPCHandlerImpl.swift:431 (`kind ?? .default`),
    RemoteControl.swift:18@5a762e8."""
    shell = answer(TAURI, _model(), "rc.launch", {"shed": "web", "kind": "shell"}, release=OLD)
    assert "url" not in shell["result"]
    mac = answer(MAC, _model(), "rc.launch", {"shed": "web"}, release=OLD)["result"]
    assert mac["kind"] == "claude-rc"
    assert mac["url"].startswith("https://claude.ai/code/session_")


@pytest.mark.parametrize(
    ("dialect", "params", "expected"),
    [
        (TAURI, {"shed": "web"}, ("bad_request", "missing or invalid 'kind'")),
        (TAURI, {"shed": "web", "kind": "claude"}, ("bad_request", "missing or invalid 'kind'")),
        (TAURI, {"kind": "shell"}, ("bad_request", "missing 'shed'")),
        (
            TAURI,
            {"shed": "web", "kind": "shell", "host": "nope"},
            ("bad_request", "no configured host: nope"),
        ),
        (MAC, {"shed": "web", "host": "nope"}, ("not-found", "no configured host named nope")),
        (
            TAURI,
            {"shed": "web", "kind": "claude-broker", "initial_prompt": "hi"},
            (
                "invalid-param",
                "invalid rc request: kind claude-broker does not accept an initial prompt",
            ),
        ),
        (
            MAC,
            {"shed": "web", "kind": "claude-broker", "initial_prompt": "hi"},
            ("invalid-param", "kind claude-broker does not accept an initial prompt"),
        ),
        (
            TAURI,
            {"shed": "web", "kind": "shell", "initial_prompt": "a\x07b"},
            (
                "invalid-param",
                "invalid rc request: initial prompt must not contain control characters",
            ),
        ),
        (
            MAC,
            {"shed": "web", "kind": "shell", "initial_prompt": "x" * 2001},
            ("invalid-param", "initial prompt exceeds 2000 bytes"),
        ),
        (
            TAURI,
            {"shed": "web", "kind": "shell", "display_name": "a\nb"},
            (
                "invalid-param",
                "invalid rc request: display name and workdir must not contain newlines "
                "or control characters",
            ),
        ),
    ],
)
def test_rc_launch_v0_0_14_refusals(
    dialect: Dialect, params: dict[str, Any], expected: tuple[str, str]
) -> None:
    """tauri/src-tauri/src/ipc.rs:63-79,483-504, core/shed-app/src/rc.rs:206-217,
    core/shed-core/src/rc.rs:76-88,210-241; AppModel.swift:998-1014@5a762e8."""
    assert _error(answer(dialect, _model(), "rc.launch", params, release=OLD)) == expected


def test_rc_launch_v0_0_14_blank_prompt_is_none() -> None:
    """shed-core rc.rs:214-221@5a762e8: a blank prompt is dropped, even for a broker."""
    params = {"shed": "web", "kind": "claude-broker", "initial_prompt": " \n\u3000"}
    assert answer(TAURI, _model(), "rc.launch", params, release=OLD)["ok"] is True


@pytest.mark.parametrize("dialect", list(Dialect))
def test_rc_inject_test_v0_0_14_fills_the_defaults(dialect: Dialect) -> None:
    """tauri/src-tauri/src/ipc.rs:530-579; IPCHandlerImpl.swift:260-271@5a762e8: tmux
    name, `<shed>/<slug>` (legacy) or the bare slug (managed), `/workspace`, kind
    claude-rc, state ready; a missing host is the default server (Tauri) or "" (mac)."""
    model = _model()
    assert answer(dialect, model, "rc.inject_test", {"shed": "web", "slug": "abc"}, release=OLD)[
        "result"
    ] == {}
    managed = {"shed": "web", "slug": "m1", "managed": True, "host": "lab", "state": "dead"}
    answer(dialect, model, "rc.inject_test", managed, release=OLD)
    sessions = answer(dialect, model, "rc.list", release=OLD)["result"]["sessions"]
    host = "" if dialect is MAC else "prod"
    assert sessions == sorted(
        [
            {
                "host": host,
                "shed": "web",
                "slug": "abc",
                "tmux_session": "rc-abc",
                "display_name": "web/abc",
                "workdir": "/workspace",
                "kind": "claude-rc",
                "state": "ready",
                "managed": False,
            },
            {
                "host": "lab",
                "shed": "web",
                "slug": "m1",
                "tmux_session": "rc-m1",
                "display_name": "m1",
                "workdir": "/workspace",
                "kind": "claude-rc",
                "state": "dead",
                "managed": True,
            },
        ],
        key=lambda s: f"{s['host']}/{s['shed']}/{s['slug']}",
    )


def test_rc_inject_test_v0_0_14_kind_and_state_tauri_lenient_mac_strict() -> None:
    """ipc.rs:564-571 (an unknown kind/state is the default); IPCHandlerImpl.swift:448-449
    (RcKind?/RcState? decoded), AppModel.swift:1074-1077 (test mode after the decode)@5a762e8."""
    model = _model()
    bad = {"shed": "web", "slug": "z", "kind": "agent", "state": "gone"}
    assert answer(TAURI, model, "rc.inject_test", bad, release=OLD)["result"] == {}
    row = answer(TAURI, model, "rc.list", release=OLD)["result"]["sessions"][0]
    assert (row["kind"], row["state"]) == ("claude-rc", "ready")
    code, message = _error(answer(MAC, _model(), "rc.inject_test", bad, release=OLD))
    assert code == "invalid-param"
    assert "Cannot initialize RcKind from invalid String value agent" in message
    params = {"shed": "w", "slug": "z"}
    off = answer(MAC, _model(), "rc.inject_test", params, release=OLD, test_mode=False)
    assert _error(off) == ("not-enabled", "rc.inject_test requires test mode")


# --- approvals.list, activity.log_path ---------------------------------------------------


@pytest.mark.parametrize("dialect", list(Dialect))
def test_approvals_list_rows_are_pending_items_soonest_first(dialect: Dialect) -> None:
    """core/shed-core/src/approval/models.rs:29-48,337-346 (request flattened + gate,
    default_scope, default_ttl), core/shed-app/src/coordinator.rs:934-947;
    Sources/ShedKit/Approval/ApprovalModels.swift:273-319, AppModel.swift:1328-1334@5a762e8."""
    model = DesktopModel()
    model.add_approval("late", "prod", "web", expires_at="2026-01-01T00:09:00Z")
    model.add_approval("soon", "prod", "api", expires_at="2026-01-01T00:02:00Z", gate="none")
    rows = answer(dialect, model, "approvals.list")["result"]["approvals"]
    assert [r["id"] for r in rows] == ["soon", "late"]
    assert rows[0] == {
        "id": "soon",
        "ts": "2026-01-01T00:00:00Z",
        "server": "prod",
        "namespace": "ssh-agent",
        "op": "sign",
        "shed": "api",
        "detail": "",
        "expires_at": "2026-01-01T00:02:00Z",
        "gate": "none",
        "default_scope": "per-session",  # time-based-allow, the default SSH policy
        "default_ttl": "2h",
    }
    answer(dialect, model, "ui.set_ssh_approval", {"policy": "always-ask", "ttl": "5m"})
    row = answer(dialect, model, "approvals.list")["result"]["approvals"][0]
    assert (row["default_scope"], row["default_ttl"]) == ("per-request", "5m")
    answer(dialect, model, "ui.set_ssh_approval", {"policy": "always-deny"})
    assert answer(dialect, model, "approvals.list")["result"]["approvals"][0][
        "default_scope"
    ] == "per-request"  # a non-prompting policy has no scope: per-request


@pytest.mark.parametrize(
    ("dialect", "env", "expected"),
    [
        (MAC, {"HOME": "/Users/a"}, "/Users/a/Library/Application Support/ShedDesktop/audit.jsonl"),
        (MAC, {"HOME": "/Users/a", "SHED_DESKTOP_STATE_DIR": "/s"}, "/s/audit.jsonl"),
        (MAC, {"HOME": "rel", "SHED_DESKTOP_STATE_DIR": "rel"}, "/tmp/ShedDesktop/audit.jsonl"),
        (TAURI, {"HOME": "/h"}, "/h/.local/share/ai.stridelabs.shed-desktop/audit.jsonl"),
        (TAURI, {"HOME": "/h", "XDG_DATA_HOME": "/d"}, "/d/ai.stridelabs.shed-desktop/audit.jsonl"),
        (TAURI, {}, "./audit.jsonl"),
    ],
)
def test_activity_log_path_is_the_apps_audit_file(
    dialect: Dialect, env: dict[str, str], expected: str
) -> None:
    """Sources/ShedKit/Backend/BundleProfile.swift:50-87, AppModel.swift:1150,1352;
    tauri/src-tauri/src/lib.rs:661-666, tauri.conf.json:5, ipc.rs:643-646@5a762e8."""
    from shedproto.desktop import audit_log_path

    assert audit_log_path(dialect, env) == expected


@pytest.mark.parametrize("dialect", list(Dialect))
def test_activity_log_path_answers_the_configured_or_home_less_path(dialect: Dialect) -> None:
    """ipc.rs:643-646; IPCHandlerImpl.swift:285-287,515@5a762e8: `{path}`."""
    from shedproto.desktop import audit_log_path

    model = DesktopModel()
    result = answer(dialect, model, "activity.log_path")["result"]
    assert result == {"path": audit_log_path(dialect, {})}
    model.ui["audit_path"] = "/var/a.jsonl"
    assert answer(dialect, model, "activity.log_path")["result"] == {"path": "/var/a.jsonl"}


@pytest.mark.parametrize("dialect", list(Dialect))
def test_notifications_list_is_the_test_presenters_posts(dialect: Dialect) -> None:
    """shed-app traits.rs:79-94 (title/body), coordinator.rs:512,684 (post on prompt,
    withdraw on decide), fakes.rs:37-53; NotificationPresenter.swift:13-43,
    AppModel.swift:1217,1282,1362-1364@5a762e8."""
    model = DesktopModel()
    model.add_approval("a1", "prod", "web", detail="ed25519")
    model.add_approval("a2", "", "api", op="get_credentials", namespace="aws-credentials")
    notes = answer(dialect, model, "notifications.list")["result"]["notifications"]
    assert notes == [
        {"id": "a1", "title": "Approve ssh-agent?", "body": "sign · prod/web · ed25519"},
        {"id": "a2", "title": "Approve aws-credentials?", "body": "get_credentials · api · "},
    ]
    assert answer(dialect, model, "approval.decide", {"id": "a1", "decision": "deny"})["ok"]
    notes = answer(dialect, model, "notifications.list")["result"]["notifications"]
    assert [n["id"] for n in notes] == ["a2"]
    off = answer(dialect, model, "notifications.list", test_mode=False)["result"]
    assert off == {"notifications": []}  # the native notifiers record nothing


# --- terminal.open ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dialect", "keys"),
    [(TAURI, {"command"}), (MAC, {"argv", "command"})],
)
def test_terminal_open_outside_test_mode_reports_what_it_ran(
    dialect: Dialect, keys: set[str]
) -> None:
    """tauri/src-tauri/src/termctl.rs:102-126 (`{command}`), ipc.rs:423-441;
    Sources/ShedDesktopApp/AppModel.swift:916-925, IPCHandlerImpl.swift:312-318
    (a `TerminalCommand`: `argv`, `command`)@5a762e8."""
    params = {"shed": "web", "session": "main"}
    result = answer(dialect, _model(), "terminal.open", params, test_mode=False)["result"]
    assert set(result) == keys
    preview = answer(dialect, _model(), "terminal.preview", params)["result"]
    assert result["command"] == preview["command"]


@pytest.mark.parametrize("dialect", list(Dialect))
def test_terminal_open_in_test_mode_is_refused(dialect: Dialect) -> None:
    """ipc.rs:424-429; IPCHandlerImpl.swift:314-316@5a762e8."""
    code, message = _error(answer(dialect, _model(), "terminal.open", {"shed": "web"}))
    assert code == dialect.not_enabled
    assert message == "terminal.open is disabled in test mode (use terminal.preview)"


def test_terminal_open_tauri_v0_0_14_has_no_machine_refusal() -> None:
    """v0.0.14 checks test mode first and ignores `machine` (ipc.rs:423-441@5a762e8); the
    newer app refuses a machine attach first."""
    params = {"shed": "web", "machine": "mini"}
    old = answer(TAURI, _model(), "terminal.open", params, release=OLD)
    assert _error(old)[1] == "terminal.open is disabled in test mode (use terminal.preview)"
    new = answer(TAURI, _model(), "terminal.open", params)
    assert _error(new) == ("not_enabled", "terminal unavailable: attach is native-remote")
    opened = answer(TAURI, _model(), "terminal.open", params, release=OLD, test_mode=False)
    assert set(opened["result"]) == {"command"}


# --- mac window ops, images.list ------------------------------------------------------------


def test_window_state_mac_starts_accessory_and_the_harness_never_goes_regular() -> None:
    """Sources/ShedDesktopApp/ShedDesktopApp.swift:26 (launch as .accessory),
    AppModel.swift:738-753 (show: .regular unless test mode), 840-844, 1385-1395@5a762e8."""
    model = DesktopModel()
    state = answer(MAC, model, "ui.window_state")["result"]
    assert state["activation_policy"] == "accessory"
    answer(MAC, model, "ui.show_window")
    assert answer(MAC, model, "ui.window_state")["result"] == {
        "visible": True,
        "activation_policy": "accessory",
    }
    answer(MAC, model, "ui.show_window", test_mode=False)
    shown = answer(MAC, model, "ui.window_state", test_mode=False)["result"]
    assert shown["activation_policy"] == "regular"
    answer(MAC, model, "ui.hide_window", test_mode=False)
    assert answer(MAC, model, "ui.window_state", test_mode=False)["result"] == {
        "visible": False,
        "activation_policy": "accessory",
    }


def test_window_metrics_mac_sidebar_is_the_themes_200() -> None:
    """Sources/ShedDesktopApp/AppModel.swift:831-838, ShedDesktopUI/Theme.swift:51@5a762e8;
    the window size is whatever the window is (left to the stand-in)."""
    result = answer(MAC, DesktopModel(), "app.window_metrics")["result"]
    assert result["sidebar_width"] == 200
    assert result["visible_pane"] == "sheds"
    assert set(result) == {"window_width", "window_height", "sidebar_width", "visible_pane"}


def test_images_list_mac_one_row_per_host_sorted_error_rows() -> None:
    """Sources/ShedDesktopApp/AppModel.swift:556-583 (an unreachable host is an error row,
    rows sorted by host), Models.swift:565-638 (nil omitted)@5a762e8."""
    model = DesktopModel()
    model.add_shed("zeta", "a")
    model.add_shed("alpha", "b")
    image = {"name": "full", "is_default": True, "cached": True, "in_use": False, "size_bytes": 9}
    model.hosts["zeta"].images.append(image)
    model.hosts["alpha"].reachable = False
    model.hosts["alpha"].last_error = "connection refused"
    rows = answer(MAC, model, "images.list")["result"]["images"]
    assert [r["host"] for r in rows] == ["alpha", "zeta"]
    assert set(rows[0]) == {"host", "error"}
    assert rows[1] == {"host": "zeta", "images": [image]}


# --- Tauri loginitem.*, tray.show|toggle|hide ------------------------------------------------


@pytest.mark.parametrize("params", [{}, {"enabled": "yes"}, {"enabled": 1}, {"enabled": None}])
def test_loginitem_set_tauri_needs_a_bool(params: dict[str, Any]) -> None:
    """tauri/src-tauri/src/ipc.rs:732-739@5a762e8: `as_bool` or `missing 'enabled' (bool)`."""
    reply = answer(TAURI, DesktopModel(), "loginitem.set", params)
    assert _error(reply) == ("bad_request", "missing 'enabled' (bool)")


def test_loginitem_status_tauri_reads_back_the_cell_default_off() -> None:
    """ipc.rs:246-249, lib.rs:408-445@5a762e8 (the harness's in-memory cell, false at start)."""
    model = DesktopModel()
    assert answer(TAURI, model, "loginitem.status")["result"] == {"enabled": False}
    assert answer(TAURI, model, "loginitem.set", {"enabled": True})["result"] == {}
    assert answer(TAURI, model, "loginitem.status")["result"] == {"enabled": True}


def test_tray_show_toggle_hide_tauri_drive_the_popover() -> None:
    """ipc.rs:252-263 (each `{}`), tray.rs:167-206 (toggle hides a visible popover, else
    shows it), ipc.rs:276-297 (`popover_visible`)@5a762e8; modelled as on macOS (Linux
    has no popover and reports false)."""
    model = DesktopModel()

    def visible() -> bool:
        return bool(answer(TAURI, model, "tray.dump")["result"]["popover_visible"])

    assert not visible()
    assert answer(TAURI, model, "tray.show")["result"] == {}
    assert visible()
    assert answer(TAURI, model, "tray.toggle")["result"] == {}
    assert not visible()
    answer(TAURI, model, "tray.toggle")
    assert visible()
    assert answer(TAURI, model, "tray.hide")["result"] == {}
    assert not visible()


@pytest.mark.parametrize("op", ["loginitem.status", "tray.show", "tray.dump"])
def test_loginitem_and_tray_are_tauri_only(op: str) -> None:
    """Neither is in the mac dispatch (IPCHandlerImpl.swift:26-166@5a762e8)."""
    assert _error(answer(MAC, DesktopModel(), op)) == ("unknown-op", f"no such op: {op}")
