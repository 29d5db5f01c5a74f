"""The newer Tauri app's implicit ``localhost`` host, as its own code lists it.

The host layer is charliek/shed ``desktop/tauri/src-tauri/src/roost_hosts.rs@9668981``
(9668981b5f04ceb5d36aace9211803bce7f34d1a), lines counted on the stored text (1-based):
``status_locked`` 2020-2076 skips an unlisted host (2043-2045); ``start_with`` registers
the configured machines, then the implicit ``localhost`` (1040-1048) through
``watch_localhost`` (1065-1073), which seeds it ``HostState::new(false)`` (560-572:
unreachable, unseen, no detail). ``HostState::listed`` (466-480) flips on the first
snapshot (``consume``'s snapshot arm, 3470-3476) or a craze ``Ready``
(``HostCrazeSink::fold``, 2889-2893), and stays flipped. ``rc.list``'s capabilities are
keyed from the same status rows (``rc_list_payload``, ipc.rs:163-172@2cd01ef).
"""

from __future__ import annotations

from typing import Any

from shedproto.desktop import Dialect, roost_capabilities
from shedproto.servers.desktop import DesktopModel
from shedproto.servers.desktop._model import CrazeSource

from ._helpers import answer

TAURI = Dialect.TAURI


def _ok(reply: dict[str, Any]) -> Any:
    assert reply["ok"] is True, reply
    return reply["result"]


def _model() -> DesktopModel:
    model = DesktopModel()
    model.add_machine("mini")
    return model


def _machines(model: DesktopModel) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = _ok(answer(TAURI, model, "machines.list", {}))["machines"]
    return rows


def _localhost(model: DesktopModel) -> dict[str, Any]:
    (row,) = [row for row in _machines(model) if row["origin"] == "machine:localhost"]
    return row


def test_the_implicit_localhost_is_no_row_until_its_session_answers() -> None:
    """roost_hosts.rs:2043-2045@9668981 (``status_locked``: an unlisted host is no row);
    1065-1073 (``watch_localhost`` registers it unlisted)."""
    model = _model()
    assert [row["origin"] for row in _machines(model)] == ["machine:mini"]
    listing = _ok(answer(TAURI, model, "rc.list", {}))
    assert [row["origin"] for row in listing["machines"]] == ["machine:mini"]
    # ipc.rs:163-172@2cd01ef: one capabilities entry per status row, so none for it
    assert set(listing["capabilities"]) == {"machine:mini"}


def test_once_its_session_answers_localhost_is_listed_after_the_configured_machines() -> None:
    """``consume``'s snapshot arm (roost_hosts.rs:3470-3476@9668981): listed, reachable,
    seen, no detail; registered after the configured machines (1040-1048, ``reg.ids``
    order in ``status_locked`` 2033-2036)."""
    model = _model()
    model.answer_machine("localhost")
    assert [row["origin"] for row in _machines(model)] == ["machine:mini", "machine:localhost"]
    row = _localhost(model)
    assert (row["reachable"], row["connected_once"], row["sessions"]) == (True, True, 0)
    assert (row["detail"], row["down_kind"]) == (None, None)
    listing = _ok(answer(TAURI, model, "rc.list", {}))
    assert set(listing["capabilities"]) == {"machine:mini", "machine:localhost"}


def test_a_later_disappearance_is_an_ordinary_unreachable_row() -> None:
    """``HostState::listed`` stays flipped (roost_hosts.rs:466-480@9668981); ``consume``'s
    ``Down`` arm keeps ``seen`` and sets the detail and kind (3483-3489)."""
    model = _model()
    model.answer_machine("localhost")
    model.make_machine_unreachable("localhost", "no roost-session", down_kind="no-session")
    row = _localhost(model)
    assert (row["reachable"], row["connected_once"]) == (False, True)
    assert (row["detail"], row["down_kind"]) == ("no roost-session", "no-session")


def test_a_roost_row_on_localhost_is_a_snapshot_that_answered() -> None:
    """A row is only ever in a snapshot, and the snapshot arm lists the host
    (roost_hosts.rs:3469-3476@9668981): the row counts in ``sessions`` (2058-2064)."""
    model = _model()
    model.add_roost_session("machine:localhost", "4")
    row = _localhost(model)
    assert (row["reachable"], row["connected_once"], row["sessions"]) == (True, True, 1)


def test_a_craze_ready_lists_localhost_before_roost_answers_and_for_good() -> None:
    """``HostCrazeSink::fold`` lists a host on a craze ``Ready`` (roost_hosts.rs:2889-2893
    @9668981); roost never answered, so it is unreachable and unseen (560-572)."""
    model = _model()
    source = CrazeSource()
    model.machines["localhost"].craze = source
    row = _localhost(model)
    assert (row["reachable"], row["connected_once"]) == (False, False)
    assert row["craze"]["state"] == "live"
    source.state = "dormant"  # the hub went away: the host stays listed
    assert _localhost(model)["craze"]["state"] == "dormant"


def test_a_craze_source_that_never_went_live_lists_nothing() -> None:
    """Only a ``Ready`` lists (``applied.ready``, roost_hosts.rs:2889@9668981)."""
    model = _model()
    model.machines["localhost"].craze = CrazeSource(state="dormant")
    assert [row["origin"] for row in _machines(model)] == ["machine:mini"]


def test_the_unlisted_localhost_is_still_registered() -> None:
    """``known`` and ``unknown_host`` read ``reg.ids`` (roost_hosts.rs:1760-1766,3145-3150
    @9668981), which ``watch_localhost`` fills before any answer (1070)."""
    model = _model()
    caps = answer(TAURI, model, "machine.capabilities", {"machine": "localhost"})
    assert _ok(caps)["capabilities"] == roost_capabilities()
    reply = answer(TAURI, model, "machine.capabilities", {"machine": "nowhere"})
    assert reply["error"]["message"] == (
        "no host machine:nowhere is being watched (have: machine:mini, machine:localhost)"
    )


def test_the_ui_dumps_count_only_the_listed_machines() -> None:
    """The panes render ``status_locked``'s rows (2043-2045@9668981): no unlisted host."""
    model = _model()
    model.ui["pane"] = "machines"
    dump = _ok(answer(TAURI, model, "machines.dump", {}))
    assert [row["name"] for row in dump["machines"]] == ["mini"]
    sidebar = _ok(answer(TAURI, model, "sidebar.dump", {}))
    assert [row["name"] for row in sidebar["machines"]] == ["mini"]


def test_a_machine_added_while_the_app_runs_is_registered_after_localhost() -> None:
    """``machine.add`` ends in ``RoostHosts::add`` (machines.rs:76-166@9a84ddf,
    ``add_from_json``), which pushes onto ``reg.ids`` (roost_hosts.rs:1127-1148@9668981)
    after ``start_with`` registered the implicit ``localhost`` (1046-1048)."""
    model = _model()
    model.answer_machine("localhost")
    assert _ok(answer(TAURI, model, "machine.add", {"name": "late"})) == {}
    origins = [row["origin"] for row in _machines(model)]
    assert origins == ["machine:mini", "machine:localhost", "machine:late"]
    reply = answer(TAURI, model, "machine.capabilities", {"machine": "nowhere"})
    assert reply["error"]["message"].endswith(
        "(have: machine:mini, machine:localhost, machine:late)"
    )
