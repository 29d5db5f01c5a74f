"""Ops whose shape differs by release: v0.0.14's RC session model against the newer roost one.

v0.0.14 (charliek/shed-desktop tag v0.0.14, 5a762e8): ``rc.launch`` answers an
``RcSession`` and ``rc.list`` an ``RcSessionList`` (shed-core ``rc.rs:121-147@5a762e8``);
the newer Tauri app answers the opened roost row and ``{sessions, capabilities,
machines}`` (charliek/shed ``desktop/tauri/src-tauri/src/ipc.rs:123-178,852-855@2cd01ef``).
"""

from __future__ import annotations

import msgspec
import pytest

from shedproto.desktop import Dialect, Release, catalogue_schemas
from shedproto.desktop import types as o
from shedproto.desktop._catalogue import lookup
from shedproto.servers.desktop import DesktopModel

from ._helpers import answer

MAC, TAURI = Dialect.MAC, Dialect.TAURI
OLD = Release.V0_0_14


def test_rc_shapes_are_per_release() -> None:
    """Tauri: rc.launch / rc.list resolve per release (v0.0.14's RcSession model, the newer
    roost rows); mac keeps the RcSession model in both (IPCHandlerImpl.swift@3fecd8a)."""
    launch_old, launch_new = lookup("rc.launch", TAURI, OLD), lookup("rc.launch", TAURI)
    assert launch_old is not None
    assert launch_new is not None
    assert (launch_old.result, launch_new.result) == (o.RcSession, o.SessionRow)
    list_old = lookup("rc.list", TAURI, OLD)
    assert list_old is not None
    assert list_old.result is o.RcSessionList
    assert lookup("rc.list", TAURI) is not list_old
    for release in Release:
        mac_launch, mac_list = lookup("rc.launch", MAC, release), lookup("rc.list", MAC, release)
        assert mac_launch is not None
        assert mac_list is not None
        assert (mac_launch.result, mac_list.result) == (o.RcSession, o.RcSessionList)


def test_tauri_v0_0_14_launch_has_no_permission_mode() -> None:
    """charliek/shed-desktop tauri/src-tauri/src/ipc.rs:481-504@5a762e8: no permission_mode
    (the newer ``roost_launch`` reads one: ipc.rs:868@2cd01ef)."""
    old = lookup("rc.launch", TAURI, OLD)
    assert old is not None
    assert "permission_mode" not in {f.name for f in msgspec.structs.fields(old.params)}
    new = lookup("rc.launch", TAURI)
    assert new is not None
    assert "permission_mode" in {f.name for f in msgspec.structs.fields(new.params)}


@pytest.mark.parametrize("dialect", [MAC, TAURI])
def test_v0_0_14_rc_answers_decode_as_their_release_shape(dialect: Dialect) -> None:
    """What the v0.0.14 stand-in answers fits the v0.0.14 shapes (RcSession/RcSessionList)."""
    model = DesktopModel()
    model.add_shed("prod", "web")
    params = {"shed": "web", "kind": "shell"}
    launched = answer(dialect, model, "rc.launch", params, release=OLD)["result"]
    session = msgspec.convert(launched, o.RcSession)
    listed = msgspec.convert(
        answer(dialect, model, "rc.list", release=OLD)["result"], o.RcSessionList
    )
    assert [s.slug for s in listed.sessions] == [session.slug]


def test_mac_v0_0_14_launch_reports_a_bad_kind_before_a_later_field() -> None:
    """Sources/ShedDesktopApp/IPCHandlerImpl.swift:413-436@5a762e8 (RcLaunchParams): Swift
    decodes in declaration order, so an invalid RcKind is reported before a mistyped workdir."""
    reply = answer(
        MAC,
        DesktopModel(),
        "rc.launch",
        {"shed": "web", "kind": "bogus", "workdir": 3},
        release=OLD,
    )
    assert reply["ok"] is False
    assert reply["error"]["code"] == "invalid-param"
    assert "Cannot initialize RcKind from invalid String value bogus" in reply["error"]["message"]


def test_schemas_carry_the_older_release_shape() -> None:
    """schemas/desktop-tauri.json: ``x-ops[op].by_release["0.0.14"]`` names v0.0.14's types."""
    schema = catalogue_schemas()["desktop-tauri.json"]
    entry = schema["x-ops"]["rc.launch"]
    assert entry["by_release"]["0.0.14"]["result"] == {"$ref": "#/$defs/RcSession"}
    assert entry["result"] == {"$ref": "#/$defs/SessionRow"}
    assert "by_release" not in schema["x-ops"]["identify"]
    mac = catalogue_schemas()["desktop-mac.json"]["x-ops"]["rc.launch"]
    assert mac["result"] == {"$ref": "#/$defs/RcSession"}
    # v0.0.14's closed RcKind (charliek/shed desktop/Sources/ShedKit/RC/RemoteControl.swift
    # @1545191 opened it): only the params differ
    assert mac["by_release"]["0.0.14"] == {
        "params": {"$ref": "#/$defs/Rc14MacLaunchParams"},
        "result": {"$ref": "#/$defs/RcSession"},
        "test_mode": "none",
    }


NEWER_MAC_OPS = {
    "identify", "app.screenshot", "app.window_metrics", "ui.window_state", "ui.state",
    "ui.navigate", "ui.set_ssh_approval", "ui.show_window", "ui.hide_window",
    "ui.show_create", "ui.show_launch", "ui.open_preferences", "ui.open_menu", "host.list",
    "sheds.list", "sheds.refresh", "system.df", "images.list", "shed.start", "shed.stop",
    "shed.reset", "shed.delete", "create.start", "create.status", "create.cancel",
    "terminal.preview", "terminal.open", "rc.list", "rc.launch", "rc.kill", "rc.inject_test",
    "approvals.list", "approval.decide", "activity.list", "activity.log_path", "policy.set",
    "policy.list", "notifications.list", "notification.invoke", "notification.open",
}  # fmt: skip
"""charliek/shed desktop/Sources/ShedDesktopApp/IPCHandlerImpl.swift@3fecd8a, ``handle``'s
switch: v0.0.14's 41 ops without ``rc.classify``."""


def test_mac_newer_ops_are_the_newer_dispatch() -> None:
    """The mac catalogue under the newest release is exactly the newer mac switch."""
    from shedproto.desktop._catalogue import ops_for
    from shedproto.desktop._release import release_has_op

    latest = {op for op in ops_for(MAC) if release_has_op(Release.LATEST, MAC, op)}
    assert latest == NEWER_MAC_OPS
