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


@pytest.mark.parametrize("dialect", [MAC, TAURI])
def test_rc_shapes_are_per_release(dialect: Dialect) -> None:
    """The catalogue resolves rc.launch / rc.list per release (v0.0.14 RcSession model)."""
    launch_old, launch_new = lookup("rc.launch", dialect, OLD), lookup("rc.launch", dialect)
    assert launch_old is not None
    assert launch_new is not None
    assert (launch_old.result, launch_new.result) == (o.RcSession, o.SessionRow)
    list_old = lookup("rc.list", dialect, OLD)
    assert list_old is not None
    assert list_old.result is o.RcSessionList
    assert lookup("rc.list", dialect) is not list_old


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
    """Sources/ShedDesktopApp/IPCHandlerImpl.swift RcLaunchParams@5a762e8: Swift decodes in
    declaration order, so an invalid RcKind is reported before a mistyped workdir."""
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


@pytest.mark.parametrize("dialect", [MAC, TAURI])
def test_schemas_carry_the_older_release_shape(dialect: Dialect) -> None:
    """schemas/desktop-*.json: ``x-ops[op].by_release["0.0.14"]`` names v0.0.14's types."""
    schema = catalogue_schemas()[f"desktop-{dialect.value}.json"]
    entry = schema["x-ops"]["rc.launch"]
    assert entry["by_release"]["0.0.14"]["result"] == {"$ref": "#/$defs/RcSession"}
    assert entry["result"] == {"$ref": "#/$defs/SessionRow"}
    assert "by_release" not in schema["x-ops"]["identify"]
