"""Typed results: exact answer bytes of the ops whose shapes the digest (or the app) fixes."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from shedproto.desktop import (
    CATALOGUE,
    Answer,
    DesktopError,
    Dialect,
    Failure,
    RequestReceived,
    RequestRejected,
    ServerConnection,
    request_line,
)
from shedproto.desktop import types as o
from shedproto.servers.desktop import DesktopApp, DesktopModel


def exchange(
    dialect: Dialect, model: DesktopModel, *requests: tuple[str, dict[str, Any]]
) -> list[bytes]:
    """Answer ``requests`` in order through a core connection and the stand-in app."""
    app = DesktopApp(model, dialect, test_mode=True, socket_path="/run/s.sock", pid=7)
    conn = ServerConnection(dialect, test_mode=True)
    out: list[bytes] = []
    for number, (op, params) in enumerate(requests, start=1):
        for event in conn.receive_data(request_line(str(number), op, params)):
            if isinstance(event, RequestReceived):
                try:
                    out.append(conn.send(Answer(id=event.id, result=app.handle(event))))
                except DesktopError as exc:
                    out.append(conn.send(Failure.from_error(event.id, exc)))
            elif isinstance(event, RequestRejected):
                out.append(event.reply)
    return out


def _model() -> DesktopModel:
    model = DesktopModel()
    model.add_shed("prod", "web")
    model.add_machine("mini")
    return model


def test_ui_state_bytes(snapshot: Any) -> None:
    (line,) = exchange(Dialect.MAC, _model(), ("ui.state", {}))
    assert line == snapshot
    state = msgspec.json.decode(line)["result"]
    assert "last_error" not in state  # omitted when nil
    msgspec.convert(state, o.UiState)


def test_ui_state_reports_last_error(snapshot: Any) -> None:
    model = _model()
    model.ui["last_error"] = "host-agent socket refused"
    (line,) = exchange(Dialect.MAC, model, ("ui.state", {}))
    assert msgspec.json.decode(line)["result"]["last_error"] == "host-agent socket refused"


def test_prefs_reads(snapshot: Any) -> None:
    lines = exchange(
        Dialect.TAURI,
        _model(),
        ("prefs.get", {}),
        ("prefs.set_terminal", {"preset": "custom", "template": "kitty -e {cmd}"}),
        ("prefs.get", {}),
        ("prefs.provider_modes", {}),
        ("prefs.set_provider", {"namespace": "aws-credentials", "decision": "approve"}),
        ("prefs.provider_modes", {}),
    )
    assert lines == snapshot
    modes = msgspec.json.decode(lines[-1])["result"]
    assert modes == {"aws-credentials": "approve"}  # the map itself, no wrapper key


def test_prefs_dump_tracks_the_window(snapshot: Any) -> None:
    model = _model()
    model.dumps["prefs.dump"] = {"sections": ["Terminal"], "values": {}, "mode": "light"}
    lines = exchange(
        Dialect.TAURI,
        model,
        ("prefs.dump", {}),
        ("ui.show_preferences", {}),
        ("prefs.dump", {}),
        ("prefs.close", {}),
        ("prefs.dump", {}),
    )
    assert lines == snapshot
    results = [msgspec.json.decode(line)["result"] for line in lines]
    assert (results[0]["visible"], results[0]["title"]) == (False, None)
    assert results[2]["visible"] is True
    assert results[4]["visible"] is False
    assert results[4]["title"] is not None


@pytest.mark.parametrize("dialect", [Dialect.TAURI])
def test_launch_rows_are_typed_and_omit_blanks(dialect: Dialect, snapshot: Any) -> None:
    op, params = ("roost.launch", {"target": "roost:prod/web", "kind": "opencode", "workdir": "  "})
    (line,) = exchange(dialect, _model(), (op, params))
    assert line == snapshot
    row = msgspec.json.decode(line)["result"]
    assert row["workdir"] == ""  # blank is absent: no cwd reaches roost
    assert msgspec.convert(row, o.SessionRow).origin == "roost:prod/web"


def test_mac_rc_launch_answers_an_rc_session() -> None:
    """charliek/shed desktop/Sources/ShedDesktopApp/IPCHandlerImpl.swift@3fecd8a (rcLaunchOp
    returns an ``RcSession``; there is no roost on mac)."""
    (line,) = exchange(Dialect.MAC, _model(), ("rc.launch", {"shed": "web", "kind": "shell"}))
    session = msgspec.convert(msgspec.json.decode(line)["result"], o.RcSession)
    assert (session.shed, session.kind, session.tmux_session) == (
        "web",
        "shell",
        f"rc-{session.slug}",
    )


def test_bootstrap_answers(snapshot: Any) -> None:
    lines = exchange(
        Dialect.TAURI,
        _model(),
        ("roost.bootstrap", {"target": "mini", "fingerprint": "fp-machine:mini"}),
        ("roost.bootstrap", {"target": "mini", "fingerprint": "stale", "consent": True}),
        ("roost.bootstrap", {"target": "mini", "fingerprint": "fp-machine:mini", "consent": True}),
    )
    assert lines == snapshot
    refusal, stale, installed = (msgspec.json.decode(line) for line in lines)
    assert refusal["error"]["code"] == "consent_required"
    assert stale["ok"] is True  # a stage failure rides an ok:true envelope
    assert stale["result"]["ok"] is False
    assert msgspec.convert(stale["result"], o.RoostBootstrapResult).error is not None
    # installed_json / failure_json (roost_hosts.rs:1880-1894,1919-1928@0041e17): a failure
    # carries only
    # {ok, error{stage, message, restored}}, an install every key of its own
    assert set(stale["result"]) == {"ok", "error"}
    assert stale["result"]["error"]["restored"] is None  # BootstrapFailure::new (copy.rs)
    done = msgspec.convert(installed["result"], o.RoostBootstrapResult)
    assert done.ok is True
    assert done.session_protocol == 6
    assert done.path_warning is None
    assert "path_warning" in installed["result"]


def test_open_results_are_only_where_the_app_is_open() -> None:
    """No result is left open: every op's answer has a typed shape."""
    open_ops = {
        name
        for name, spec in CATALOGUE.items()
        for dialect in Dialect
        if (shape := spec.shape(dialect)) is not None and shape.result is o.AnyObject
    }
    assert open_ops == set()
