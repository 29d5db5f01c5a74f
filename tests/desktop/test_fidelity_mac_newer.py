"""The mac dialect op by op as the newer mac app answers, and where v0.0.14 differs.

"Newer" is the mac app in charliek/shed ``desktop/``, read through the stored index:
``Sources/ShedDesktopApp/IPCHandlerImpl.swift@3fecd8a`` (the dispatch, ``handle`` at
:25-163: the same ops and allow-lists as v0.0.14, less ``rc.classify``),
``AppModel.swift@5339dc4``, ``Sources/ShedKit/IPC/IPCServer.swift@1cea187``,
``IPCMessages.swift@b317de7``, ``Models/Models.swift@1cea187``,
``Models/HostFailure.swift@1cea187``, ``RC/RemoteControl.swift@1545191`` and
``Terminal/TerminalLauncher.swift@94585e5``. The git snapshot of charliek/shed has no
``desktop/``: the line numbers (``file:N-M@commit symbol``) were counted on the stored
text of those versions, read to the end. v0.0.14 is charliek/shed-desktop tag v0.0.14
(``@5a762e8``). Each test pins one op's answer.
"""

from __future__ import annotations

import msgspec
import pytest

from shedproto.desktop import (
    Dialect,
    Release,
    RequestReceived,
    RequestRejected,
    ServerConnection,
    is_safe_rc_value,
    normalize_rc_prompt,
)
from shedproto.servers.desktop import DesktopModel

from ._helpers import answer
from ._helpers import failed as _error
from ._helpers import succeeded as _ok
from ._helpers import web_model as _model

MAC = Dialect.MAC
OLD = Release.V0_0_14


def _swift_enum(key: str, enum: str, value: str, *path: str) -> str:
    keys = ", ".join(
        f'CodingKeys(stringValue: "{k}", intValue: nil)' for k in (*path, key)
    )
    return (
        f"dataCorrupted(Swift.DecodingError.Context(codingPath: [{keys}], debugDescription: "
        f'"Cannot initialize {enum} from invalid String value {value}", underlyingError: nil))'
    )


# --- envelope -------------------------------------------------------------------


@pytest.mark.parametrize("release", list(Release))
def test_mac_unknown_envelope_key_is_refused_only_by_the_newer_app(release: Release) -> None:
    """charliek/shed desktop/Sources/ShedKit/IPC/IPCMessages.swift:29-46@b317de7 (IPCRequest
    init(from:): an AnyJSONKey container, :211-216, lists every key) refuses an extra key;
    charliek/shed-desktop Sources/ShedKit/IPC/IPCMessages.swift:29-45@5a762e8 runs the
    same check over a CodingKeys container, whose allKeys holds declared keys only."""
    conn = ServerConnection(MAC, release=release)
    (event,) = conn.receive_data(b'{"id":"5","op":"identify","extra":true}\n')
    if release is OLD:
        assert isinstance(event, RequestReceived)
        assert (event.id, event.op) == ("5", "identify")
        return
    assert isinstance(event, RequestRejected)
    reply = msgspec.json.decode(event.reply)
    assert reply["id"] == "0"
    assert reply["error"]["code"] == "parse-error"
    assert "unknown request fields: extra" in reply["error"]["message"]


def test_mac_null_envelope_names_the_release_container() -> None:
    """A JSON null: valueNotFound of the first container asked for, AnyJSONKey in the newer
    IPCRequest (IPCMessages.swift:32@b317de7), CodingKeys in v0.0.14 (IPCMessages.swift:30)."""
    for release, keys in ((Release.LATEST, "AnyJSONKey"), (OLD, "IPCRequest.CodingKeys")):
        (event,) = ServerConnection(MAC, release=release).receive_data(b"null\n")
        assert isinstance(event, RequestRejected)
        assert f"KeyedDecodingContainer<ShedKit.{keys}>" in event.message


# --- identify, window, UI ---------------------------------------------------------


@pytest.mark.parametrize(("release", "version"), [(Release.LATEST, "0.8.1"), (OLD, "0.0.14")])
def test_identify_mac_ui_version_is_the_release_bundle_version(
    release: Release, version: str
) -> None:
    """``ui_version`` and ``rc.launch``'s ``created_by`` read the bundle's
    CFBundleShortVersionString (IPCHandlerImpl.swift:176-187@3fecd8a identify,
    AppModel.swift:1176@5339dc4 uiVersion, used by rcLaunch at :1014), which the bundle
    takes from desktop/VERSION. That file is not stored; it moves in lockstep with the Tauri
    crate's version (desktop/RELEASING.md@13cf461 "Version surfaces"), which is 0.8.1 at the
    dispatch's own commit (desktop/tauri/src-tauri/Cargo.toml:9@3fecd8a), and 0.8.1 is the
    last Swift DMG the appcast lists (docs/appcast.xml@1ae8146). v0.0.14: VERSION:1@5a762e8."""
    model = _model()
    assert _ok(answer(MAC, model, "identify", release=release))["ui_version"] == version
    session = _ok(answer(MAC, model, "rc.launch", {"shed": "web"}, release=release))
    assert session["created_by"] == f"shed-desktop/{version}"


def test_identify_mac_newer_keeps_the_v0_0_14_keys() -> None:
    """IPCHandlerImpl.swift:176-187,523-544@3fecd8a identify()/IdentifyResult: the same nine keys,
    mock_base_url omitted when nil (synthesized Encodable)."""
    result = _ok(answer(MAC, DesktopModel(), "identify"))
    assert list(result) == [
        "socket_path", "pid", "app_label", "app_id", "ui_version", "protocol_version",
        "test_mode", "core",
    ]  # fmt: skip


def test_window_state_mac_starts_hidden() -> None:
    """AppModel.swift:616-639@5a762e8 (buildMainWindow: built, not shown), ShedDesktopApp.swift:
    40-50@5a762e8 (only a user launch outside the harness shows it); AppModel.swift:626-649,
    850-854@5339dc4 (buildMainWindow, windowState)."""
    assert _ok(answer(MAC, DesktopModel(), "ui.window_state")) == {
        "visible": False,
        "activation_policy": "accessory",
    }


def test_window_metrics_mac_is_the_built_content_size() -> None:
    """AppModel.swift:620@5a762e8 and :630@5339dc4 (buildMainWindow :626-649):
    setContentSize(860, 660)."""
    metrics = _ok(answer(MAC, DesktopModel(), "app.window_metrics"))
    assert (metrics["window_width"], metrics["window_height"]) == (860, 660)


@pytest.mark.parametrize(
    ("op", "pane"), [("ui.show_create", "sheds"), ("ui.show_launch", "agents")]
)
def test_show_sheets_mac_open_the_dashboard_on_their_pane(op: str, pane: str) -> None:
    """AppModel.swift:755-765@5a762e8, :765-775@5339dc4 showCreateSheet/showLaunchSheet:
    showWindow, then the pane."""
    model = DesktopModel()
    model.ui["pane"] = "system"
    assert _ok(answer(MAC, model, op)) == {}
    assert _ok(answer(MAC, model, "ui.window_state"))["visible"] is True
    assert _ok(answer(MAC, model, "ui.state"))["pane"] == pane


def test_hide_window_mac_keeps_regular_while_preferences_is_open() -> None:
    """AppModel.swift:1440-1452@5339dc4 windowWillClose (and :1385-1395@5a762e8): the policy reverts
    to accessory only when no other managed window stays open."""
    model = DesktopModel()
    answer(MAC, model, "ui.show_window", test_mode=False)
    answer(MAC, model, "ui.open_preferences", test_mode=False)
    answer(MAC, model, "ui.hide_window", test_mode=False)
    state = _ok(answer(MAC, model, "ui.window_state", test_mode=False))
    assert state == {"visible": False, "activation_policy": "regular"}


def test_notification_open_mac_shows_the_approvals_pane() -> None:
    """AppModel.swift:1179-1213@5339dc4 startApprovals (notifier.onOpen :1191-1194: showWindow,
    navigate to approvals), invokeNotificationOpen :1431-1436 (test presenter only)."""
    model = DesktopModel()
    assert _ok(answer(MAC, model, "notification.open")) == {}
    assert _ok(answer(MAC, model, "ui.state"))["pane"] == "approvals"
    assert _error(answer(MAC, model, "notification.open", test_mode=False)) == (
        "not-enabled",
        "notification.open requires the test presenter",
    )


@pytest.mark.parametrize(
    ("hosts", "expected"),
    [
        ([("prod", None)], "No sheds across the reachable hosts."),
        ([], "No reachable hosts. Check ~/.shed/config.yaml and that shed-server is running."),
        (
            [("prod", ("other", "prod: connection refused"))],
            "No reachable hosts. Check ~/.shed/config.yaml and that shed-server is running.",
        ),
        (
            [
                ("lab", ("other", "lab: connection refused")),
                ("prod", ("agent_upgrade_required", "Upgrade shed-host-agent — it can't ...")),
            ],
            "Upgrade shed-host-agent — it can't ...",
        ),
    ],
)
def test_ui_state_mac_sheds_empty_state_is_decided_by_the_hosts(
    hosts: list[tuple[str, tuple[str, str] | None]], expected: str
) -> None:
    """charliek/shed desktop/Sources/ShedKit/Models/HostFailure.swift:119-127@1cea187
    shedsEmptyState, Models.swift:383-391@1cea187 UIState.init: a reachable host, else the
    first known-kind failure's summary, else the generic advice; sent with or without sheds
    listed."""
    model = DesktopModel()
    for name, failure in hosts:
        model.add_shed(name, "web")
        if failure is not None:
            model.make_host_unreachable(name, kind=failure[0], summary=failure[1])
    assert _ok(answer(MAC, model, "ui.state"))["sheds_empty_state"] == expected
    assert "sheds_empty_state" not in _ok(answer(MAC, model, "ui.state", release=OLD))


def test_host_list_mac_newer_last_error_is_the_failure_summary() -> None:
    """Models.swift:87-96@1cea187 ShedHost.applyingProbe(info:failure:): last_error carries the
    typed failure's summary; v0.0.14 the probe's error text (Models.swift:61-79@5a762e8)."""
    model = _model()
    model.make_host_unreachable("prod", summary="prod: transport error: refused", detail="refused")
    (row,) = _ok(answer(MAC, model, "host.list"))["hosts"]
    assert row["last_error"] == "prod: transport error: refused"
    assert row["failure"]["detail"] == "refused"
    (old,) = _ok(answer(MAC, model, "host.list", release=OLD))["hosts"]
    assert (old["last_error"], "failure" in old) == ('prod: Transport(message: "refused")', False)


@pytest.mark.parametrize(
    ("core", "text"),
    [("rust", 'lab: Transport(message: "refused")'), ("swift", "lab: transport error: refused")],
)
def test_host_list_mac_v0_0_14_last_error_is_the_polls_server_prefixed_error(
    core: str, text: str
) -> None:
    """charliek/shed-desktop AppModel.swift:472-519@5a762e8 doRefresh: a failed probe's error
    is "\\(client.serverName): \\(error)" (:491), Swift's rendering of the thrown error (the
    UniFFI case under the default Rust core), kept by applyingProbe(info:error:)
    (Models.swift:66-73@5a762e8, redacted only)."""
    model = _model()
    model.add_shed("lab", "gpu")
    model.core = core
    model.make_host_unreachable("lab", detail="refused")
    rows = _ok(answer(MAC, model, "host.list", release=OLD))["hosts"]
    assert [r.get("last_error") for r in rows] == [None, text]


@pytest.mark.parametrize("release", list(Release))
def test_sheds_list_mac_rows_are_sorted_by_host_then_name(release: Release) -> None:
    """doRefresh sorts what the poll gathered by (host, name) before it publishes it
    (AppModel.swift:523@5339dc4, :513@5a762e8); sheds.list and ui.state read that list
    (IPCHandlerImpl.swift:326-330@3fecd8a)."""
    model = DesktopModel()
    for host, name in (("zeta", "b"), ("zeta", "a"), ("alpha", "z")):
        model.add_shed(host, name)
    expected = [("alpha", "z"), ("zeta", "a"), ("zeta", "b")]
    for op in ("sheds.list", "ui.state"):
        rows = _ok(answer(MAC, model, op, release=release))["sheds"]
        assert [(r["host"], r["name"]) for r in rows] == expected


@pytest.mark.parametrize("release", list(Release))
def test_ui_state_mac_last_error_is_the_polls_rollup(release: Release) -> None:
    """doRefresh ends with lastError = nil, the one failure's text, or "<n> hosts
    unreachable" (AppModel.swift:516-517@5a762e8, :526-527@5339dc4); ui.state snapshots it
    (AppState.swift:109-111@5a762e8). The one failure's text is its host row's last_error:
    the newer app's HostFailure summary, which the banner rollup and the row share
    (HostFailure.swift:72-73@1cea187); v0.0.14's prefixed error."""
    model = _model()
    model.ui["last_error"] = "launch web: boom"
    assert _ok(answer(MAC, model, "ui.state", release=release))["last_error"] == "launch web: boom"
    model.add_shed("lab", "gpu")
    model.make_host_unreachable("lab", summary="lab: transport error: refused", detail="refused")
    state = _ok(answer(MAC, model, "ui.state", release=release))
    (lab,) = [h for h in state["hosts"] if h["name"] == "lab"]
    assert state["last_error"] == lab["last_error"]
    model.make_host_unreachable("prod")
    state = _ok(answer(MAC, model, "ui.state", release=release))
    assert state["last_error"] == "2 hosts unreachable"


@pytest.mark.parametrize(
    ("params", "key", "enum", "value"),
    [
        ({"method": "touch"}, "method", "ApprovalMethod", "touch"),
        ({"policy": "sometimes"}, "policy", "SSHApprovalPolicy", "sometimes"),
    ],
)
def test_set_ssh_approval_mac_words_an_unknown_value_as_swift(
    params: dict[str, str], key: str, enum: str, value: str
) -> None:
    """IPCHandlerImpl.swift:463-474@3fecd8a SetSshApprovalParams (ApprovalMethod?,
    SSHApprovalPolicy?; ApprovalModels.swift:158-200@5a762e8): decodeParams' invalid-param
    "\\(error)" (:553-570)."""
    reply = answer(MAC, DesktopModel(), "ui.set_ssh_approval", params)
    assert _error(reply) == ("invalid-param", _swift_enum(key, enum, value))


# --- screenshot --------------------------------------------------------------------


def test_screenshot_mac_preferences_surface_needs_the_window() -> None:
    """ScreenshotSurface has window|menu|preferences (Models.swift:643-647@5a762e8, Models.swift
    :673-677@1cea187); AppModel window(for: .preferences) (:736-746@5339dc4) is nil until
    Preferences was opened: internal "no window to capture" (IPCHandlerImpl.swift:333-354@3fecd8a
    screenshot)."""
    model = DesktopModel()
    params = {"surface": "preferences"}
    assert _error(answer(MAC, model, "app.screenshot", params)) == (
        "internal",
        "no window to capture",
    )
    answer(MAC, model, "ui.open_preferences")
    shot = _ok(answer(MAC, model, "app.screenshot", {**params, "scale": 2}))
    assert (shot["surface"], shot["scale"]) == ("preferences", 2)


def test_screenshot_mac_decodes_the_surface_before_the_scale_range() -> None:
    """IPCHandlerImpl.swift:512-521@3fecd8a ScreenshotParams decodes scale then surface; the 1...2
    range check runs after the decode."""
    reply = answer(MAC, DesktopModel(), "app.screenshot", {"scale": 3, "surface": "dock"})
    assert _error(reply) == (
        "invalid-param",
        _swift_enum("surface", "ScreenshotSurface", "dock"),
    )
    reply = answer(MAC, DesktopModel(), "app.screenshot", {"scale": 3})
    assert _error(reply) == ("invalid-param", "scale must be 1 or 2, got 3")


# --- sheds, hosts, disk, images, create ----------------------------------------------


@pytest.mark.parametrize("core", ["rust", "swift"])
def test_shed_action_mac_newer_prints_display_message_under_either_core(core: str) -> None:
    """charliek/shed desktop/Sources/ShedKit/IPC/IPCServer.swift:153-173@1cea187 dispatch: a
    non-IPC error is internal with HostFailure.displayMessage (Models/HostFailure.swift:90-112,93
    @1cea187):
    ShedError.BadStatus reads "shed-server returned HTTP <n>" (v0.0.14 printed
    "BadStatus(status: 404)" under the Rust core: test_fidelity.py)."""
    model = _model()
    model.core = core
    reply = answer(MAC, model, "shed.stop", {"name": "nope"})
    assert _error(reply) == ("internal", "shed-server returned HTTP 404")


def test_shed_action_mac_unreachable_host_is_the_transport_sentence() -> None:
    """HostFailure.swift:94@1cea187 displayMessage: ShedError.Transport(m) -> "transport error: m";
    v0.0.14 under the Rust core printed the case, Transport(message: ...)."""
    model = _model()
    model.make_host_unreachable("prod", detail="connection refused")
    reply = answer(MAC, model, "shed.start", {"name": "web"})
    assert _error(reply) == ("internal", "transport error: connection refused")
    old = answer(MAC, model, "shed.start", {"name": "web"}, release=OLD)
    assert _error(old) == ("internal", 'Transport(message: "connection refused")')


@pytest.mark.parametrize("op", ["system.df", "images.list"])
def test_per_host_error_rows_mac_newer_use_display_message(op: str) -> None:
    """HostFailure.swift:83-86@1cea187 displayMessage ("every user-visible rendering of a caught
    error ... per-host pane rows"); rows sorted by host (AppModel.swift:549,581@5a762e8)."""
    model = _model()
    model.add_shed("lab", "gpu")
    model.make_host_unreachable("lab", detail="connection refused")
    rows = _ok(answer(MAC, model, op))["usage" if op == "system.df" else "images"]
    assert [r["host"] for r in rows] == ["lab", "prod"]
    assert rows[0] == {"host": "lab", "error": "transport error: connection refused"}


def test_create_start_mac_id_is_an_upper_case_uuid() -> None:
    """AppModel.swift:859-861@5a762e8, :869-901@5339dc4 startCreate: UUID().uuidString
    (upper-case); create.status answers it, not-found after create.cancel
    (IPCHandlerImpl.swift:224-233@3fecd8a, AppModel.swift:911-919@5339dc4)."""
    model = _model()
    create_id = _ok(answer(MAC, model, "create.start", {"name": "new"}))["create_id"]
    assert create_id == create_id.upper()
    assert len(create_id) == 36
    assert create_id.count("-") == 4
    status = _ok(answer(MAC, model, "create.status", {"create_id": create_id}))
    assert status["state"] == "complete"
    answer(MAC, model, "create.cancel", {"create_id": create_id})
    assert _error(answer(MAC, model, "create.status", {"create_id": create_id})) == (
        "not-found",
        f"no create with id {create_id}",
    )


# --- terminal ------------------------------------------------------------------------


def test_terminal_preview_mac_is_the_terminal_app_preset_and_its_invocation() -> None:
    """IPCHandlerImpl.swift:235-242,398-403@3fecd8a terminalPreviewOp/TerminalPreviewResult
    (argv, command, preset, invocation: a LaunchInvocation object); TerminalLauncher.swift:124-130
    @94585e5 sshCommand
    (ssh -t, the host-key options, <shed>@<host> -p <port>), resolveLaunch (terminal-app:
    osascript); SSHOptions.swift:17-22, Shell.swift:8-12@5a762e8."""
    model = _model()
    model.ui["home"] = "/Users/me"
    result = _ok(answer(MAC, model, "terminal.preview", {"shed": "web", "session": "rc-ab"}))
    assert result["argv"] == [
        "ssh", "-t", "-o", "StrictHostKeyChecking=yes",
        "-o", "UserKnownHostsFile=/Users/me/.shed/known_hosts",
        "web@127.0.0.1", "-p", "2222", "tmux", "attach", "-t", "rc-ab",
    ]  # fmt: skip
    assert result["command"] == (
        "ssh -t -o 'StrictHostKeyChecking=yes' -o 'UserKnownHostsFile=/Users/me/.shed/"
        "known_hosts' web@127.0.0.1 -p 2222 tmux attach -t rc-ab"
    )
    assert result["preset"] == "terminal-app"
    script = (
        f'tell application "Terminal"\n    activate\n    do script "{result["command"]}"\nend tell'
    )
    assert result["invocation"] == {
        "executable": "/usr/bin/osascript",
        "arguments": ["-e", script],
    }


def test_terminal_preview_mac_custom_template_quotes_the_shed_in_the_newer_app() -> None:
    """TerminalLauncher.swift:186-209@94585e5 expandCustomTemplate: one pass, {cmd} raw, {shed}
    shell-quoted; v0.0.14 replaced both verbatim (TerminalLauncher.swift:160-163@5a762e8)."""
    model = DesktopModel()
    model.add_shed("prod", "my shed")
    model.ui["terminal_preset"] = "custom"
    model.prefs["terminal"]["template"] = "kitty {shed}"
    params = {"shed": "my shed"}
    new = _ok(answer(MAC, model, "terminal.preview", params))["invocation"]
    old = _ok(answer(MAC, model, "terminal.preview", params, release=OLD))["invocation"]
    assert new == {"executable": "/bin/sh", "arguments": ["-c", "kitty 'my shed'"]}
    assert old == {"executable": "/bin/sh", "arguments": ["-c", "kitty my shed"]}


def test_terminal_open_mac_answers_the_terminal_command() -> None:
    """IPCHandlerImpl.swift:308-314@3fecd8a terminalOpenOp: the TerminalCommand {argv, command}, and
    not-enabled under test mode (checked before the launch)."""
    model = _model()
    opened = _ok(answer(MAC, model, "terminal.open", {"shed": "web"}, test_mode=False))
    preview = _ok(answer(MAC, model, "terminal.preview", {"shed": "web"}))
    assert opened == {"argv": preview["argv"], "command": preview["command"]}
    assert _error(answer(MAC, model, "terminal.open", {"shed": "web"}))[0] == "not-enabled"


# --- rc --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["codex", "opencode", "cursor"])
def test_rc_launch_mac_newer_takes_the_new_agent_kinds_with_a_prompt(kind: str) -> None:
    """RemoteControl.swift:19-111@1545191 RcKind (codex, opencode, cursor accept typed input,
    :75-80; no claude URL: AppModel.swift:1138-1146@5339dc4 syntheticURL); v0.0.14's RcKind
    has three cases (RemoteControl.swift:13-16@5a762e8): dataCorrupted."""
    model = _model()
    params = {"shed": "web", "kind": kind, "initial_prompt": "run the tests"}
    session = _ok(answer(MAC, model, "rc.launch", params))
    assert (session["kind"], "url" in session, session["managed"]) == (kind, False, True)
    old = answer(MAC, model, "rc.launch", params, release=OLD)
    assert _error(old) == ("invalid-param", _swift_enum("kind", "RcKind", kind))


def test_rc_launch_mac_newer_keeps_an_unknown_kind_without_affordances() -> None:
    """RemoteControl.swift:44-54@1545191 RcKind.init(wire:) keeps "borg" as .other: launched with
    no URL, a prompt refused ("kind borg does not accept an initial prompt": acceptsTypedInput
    false, normalizeRcPrompt :539-555), invalid-param with the bare reason
    (AppModel.swift:1022-1024@5339dc4)."""
    model = _model()
    session = _ok(answer(MAC, model, "rc.launch", {"shed": "web", "kind": "borg"}))
    assert (session["kind"], "url" in session) == ("borg", False)
    reply = answer(MAC, model, "rc.launch", {"shed": "web", "kind": "borg", "initial_prompt": "x"})
    assert _error(reply) == ("invalid-param", "kind borg does not accept an initial prompt")


def test_rc_launch_mac_refuses_format_characters_as_control() -> None:
    """RemoteControl.isSafeRCValue (RemoteControl.swift:527-529@1545191, :166-168@5a762e8) tests
    CharacterSet.controlCharacters, Cc and Cf: a zero-width space is refused on mac; shed-core
    (Tauri) refuses Cc only."""
    reply = answer(MAC, _model(), "rc.launch", {"shed": "web", "display_name": "a\u200bb"})
    assert _error(reply) == (
        "invalid-param",
        "display name and workdir must not contain newlines or control characters",
    )
    assert is_safe_rc_value("a\u200bb")
    assert not is_safe_rc_value("a\u200bb", swift=True)
    with pytest.raises(ValueError, match="control characters"):
        normalize_rc_prompt("go\u202e", "claude-rc", swift=True)
    assert normalize_rc_prompt("go\u202e", "claude-rc") == "go\u202e"


def test_rc_inject_test_mac_newer_keeps_any_kind_but_checks_the_state() -> None:
    """IPCHandlerImpl.swift:438-461@3fecd8a RcInjectTestParams: kind an open RcKind?, state an
    RcState? (dataCorrupted); test mode checked after the decode (AppModel.swift:1084-1090@5339dc4
    rcInjectTest); rc.list sorted by host/shed/slug."""
    model = _model()
    params = {"host": "prod", "shed": "web", "slug": "s1", "kind": "borg"}
    assert _ok(answer(MAC, model, "rc.inject_test", params)) == {}
    (row,) = _ok(answer(MAC, model, "rc.list"))["sessions"]
    assert (row["kind"], row["state"], row["display_name"]) == ("borg", "ready", "web/s1")
    bad = answer(MAC, model, "rc.inject_test", {**params, "state": "asleep"}, test_mode=False)
    assert _error(bad) == ("invalid-param", _swift_enum("state", "RcState", "asleep"))
    refused = answer(MAC, model, "rc.inject_test", params, test_mode=False)
    assert _error(refused) == ("not-enabled", "rc.inject_test requires test mode")
    old = answer(MAC, model, "rc.inject_test", params, release=OLD)
    assert _error(old) == ("invalid-param", _swift_enum("kind", "RcKind", "borg"))


def test_rc_kill_mac_resolves_the_host_then_drops_the_row() -> None:
    """AppModel.swift:1065-1080@5339dc4 rcKill: resolveName (not-found), then the table entry goes,
    idempotently."""
    model = _model()
    answer(MAC, model, "rc.inject_test", {"host": "prod", "shed": "web", "slug": "s1"})
    kill = {"host": "prod", "shed": "web", "slug": "s1"}
    assert _ok(answer(MAC, model, "rc.kill", kill)) == {}
    assert _ok(answer(MAC, model, "rc.kill", kill)) == {}
    assert _ok(answer(MAC, model, "rc.list"))["sessions"] == []
    assert _error(answer(MAC, model, "rc.kill", {**kill, "host": "x"})) == (
        "not-found",
        "no configured host named x",
    )


# --- approvals, policy, notifications ----------------------------------------------------


@pytest.mark.parametrize(
    ("op", "params", "key", "enum", "value"),
    [
        (
            "approval.decide",
            {"id": "a", "decision": "maybe"},
            "decision",
            "ApprovalDecision",
            "maybe",
        ),
        (
            "approval.decide",
            {"id": "a", "decision": "approve", "scope": "forever"},
            "scope",
            "ApprovalScope",
            "forever",
        ),
        (
            "notification.invoke",
            {"id": "a", "action": "maybe"},
            "action",
            "ApprovalDecision",
            "maybe",
        ),
    ],
)
def test_approval_params_mac_word_an_unknown_value_as_swift(
    op: str, params: dict[str, str], key: str, enum: str, value: str
) -> None:
    """IPCHandlerImpl.swift:476-491,505@3fecd8a ApprovalDecideParams / NotificationInvokeParams
    (ApprovalDecision, ApprovalScope: ApprovalModels.swift:56-57,182-187@5a762e8)."""
    assert _error(answer(MAC, DesktopModel(), op, params)) == (
        "invalid-param",
        _swift_enum(key, enum, value),
    )


def test_policy_set_mac_decodes_the_rules_before_test_mode() -> None:
    """IPCHandlerImpl.swift:142-145,285-290@3fecd8a policy.set: decodeParams, then
    policySetOp's test-mode guard ("policy.set requires SHED_DESKTOP_TEST_MODE=1"); a
    PolicyRule's synthesized decoder needs gate too (ApprovalModels.swift:252-268@5a762e8: the
    init default is not a decoding default)."""
    model = DesktopModel()
    rule = {"scope": "shed", "shed": "web", "action": "deny"}
    code, message = _error(answer(MAC, model, "policy.set", {"rules": [rule]}, test_mode=False))
    assert code == "invalid-param"
    assert message.startswith('keyNotFound(CodingKeys(stringValue: "gate", intValue: nil)')
    assert '_CodingKey(stringValue: "Index 0", intValue: 0)' in message
    bad = {**rule, "gate": "none", "action": "nope"}
    code, message = _error(answer(MAC, model, "policy.set", {"rules": [bad]}))
    assert "Cannot initialize PolicyAction from invalid String value nope" in message
    good = {**rule, "gate": "none", "note": "ignored"}
    assert _error(answer(MAC, model, "policy.set", {"rules": [good]}, test_mode=False)) == (
        "not-enabled",
        "policy.set requires SHED_DESKTOP_TEST_MODE=1",
    )
    assert _ok(answer(MAC, model, "policy.set", {"rules": [good]})) == {}
    assert _ok(answer(MAC, model, "policy.list"))["rules"] == [
        {"scope": "shed", "shed": "web", "action": "deny", "gate": "none"}
    ]
