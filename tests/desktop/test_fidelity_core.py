"""The newer Tauri app's Rust-core answers: machines, auth modes, provider modes, lanes, craze.

Read against charliek/shed, at these stored versions (lines counted on the stored text):

- ``desktop/tauri/src-tauri/src/machines.rs:76-166,54-62@9a84ddf`` (``add_from_json``,
  ``reject_reserved_name``); ``crates/shed-core/src/config_edit.rs:75-123,29-59@156fbed``
  (``insert_machine``, ``EditError`` and its ``Display``);
- ``crates/shed-app/src/auth_modes.rs:220-231@c7d4c85`` (``AuthModeRegistry::snapshot``);
- ``crates/shed-app/src/coordinator.rs:965-973,270-290@861fedae`` (``set_provider_mode``,
  ``provider_modes``);
- ``desktop/tauri/src-tauri/src/lane.rs@9a84ddf``: ``LaneFailure`` 321-413, ``Lanes::open``
  836-963, ``open_entry`` 1303-1324, ``lane_stamp`` 1332-1359, ``parse_answer`` 1711-1841,
  ``parse_setting`` 1853-1877, ``parse_mode`` 1880-1888;
- ``desktop/tauri/src-tauri/src/roost_hosts.rs@9668981``: ``craze_ask`` 1476-1522,
  ``craze_open_terminal`` 1618-1683, ``RunCommand::parse`` 3292-3307;
  ``crates/shed-core/src/craze.rs:212-224,193-195@9a84ddf`` (``attach_argv``, ``BadHostId``);
- ``crates/shed-core/src/roost/bootstrap/copy.rs:340-345@0041e17`` (``fingerprint_changed``).

The ipc.rs handlers that call them, at ``desktop/tauri/src-tauri/src/ipc.rs@2cd01ef``:
``machine_add`` 1308-1312, ``hosts_auth`` 2189-2207, ``set_provider`` 2149-2164,
``lane_send`` 1635-1644, ``lane_set`` 1686-1696, ``lane_answer`` 1706-1717,
``craze_create_options`` 1756-1762, ``craze_create`` 1771-1778, ``craze_open_terminal``
1784-1791, ``roost_run`` 1461-1475, ``run_command`` 301-304.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shedproto.desktop import (
    LANE_KINDS,
    DesktopCode,
    DesktopError,
    Dialect,
    check_craze_host_id,
    fingerprint_changed,
    lane_error,
    parse_lane_answer,
    parse_lane_setting,
    parse_send_mode,
    read_machine_add,
    run_command,
)
from shedproto.servers.desktop import CrazeSource, DesktopModel
from tests._hypothesis import examples

from ._helpers import answer

TAURI = Dialect.TAURI
CRAZE_LANE = {"machine": "mini", "kind": "craze", "session_id": "000000000001"}


def _ok(reply: dict[str, Any]) -> Any:
    assert reply["ok"] is True, reply
    return reply["result"]


def _error(reply: dict[str, Any]) -> tuple[str, str]:
    assert reply["ok"] is False, reply
    return reply["error"]["code"], reply["error"]["message"]


def _refusal(call: Any) -> tuple[str, str]:
    with pytest.raises(DesktopError) as info:
        call()
    return info.value.code, info.value.message


# --- machine.add ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "message"),
    [
        # reject_reserved_name, before anything else (the name trimmed first)
        (
            {"name": " localhost ", "ssh_port": "x"},
            '"localhost" is this machine\'s own roost-session and is always present \u2014 '
            "it cannot be added as a machine",
        ),
        # the port: {v} is serde_json's Display of the value (JSON)
        ({"name": "mini3", "ssh_port": "22x"}, '"22x" is not a usable SSH port (1-65535)'),
        ({"name": "mini3", "ssh_port": 0}, "0 is not a usable SSH port (1-65535)"),
        ({"name": "mini3", "ssh_port": 70000}, "70000 is not a usable SSH port (1-65535)"),
        ({"name": "mini3", "ssh_port": -1}, "-1 is not a usable SSH port (1-65535)"),
        ({"name": "mini3", "ssh_port": 22.5}, "22.5 is not a usable SSH port (1-65535)"),
        ({"name": "mini3", "ssh_port": True}, "true is not a usable SSH port (1-65535)"),
        ({"name": "", "ssh_port": [1]}, "[1] is not a usable SSH port (1-65535)"),
        # insert_machine: BadName (a missing or non-string name reads as "")
        ({}, '"" is not a usable machine name (letters, digits, dot, dash, underscore)'),
        (
            {"name": 7},
            '"" is not a usable machine name (letters, digits, dot, dash, underscore)',
        ),
        (
            {"name": "has space"},
            '"has space" is not a usable machine name (letters, digits, dot, dash, underscore)',
        ),
        # then Duplicate against the configured machines
        ({"name": "mini"}, 'a machine named "mini" is already configured'),
        # then the round trip through the reader (a '#' is cut off by it)
        (
            {"name": "mini3", "host": "box#1"},
            '"mini3" does not read back as written \u2014 a value is not representable here '
            "(a '#' or a quote in a value is the usual cause)",
        ),
    ],
)
def test_machine_add_refusals_are_add_from_json_s(params: dict[str, Any], message: str) -> None:
    """machines.rs:76-166@9a84ddf (``add_from_json``) -> config_edit.rs:75-123@156fbed
    (``insert_machine``);
    ipc.rs:1308-1312@2cd01ef (``machine_add``) answers every refusal ``bad_request``."""
    model = DesktopModel()
    model.add_machine("mini")
    before = list(model.machines)
    assert _error(answer(TAURI, model, "machine.add", params)) == ("bad_request", message)
    assert list(model.machines) == before  # nothing was added


def test_machine_add_reads_strings_trimmed_and_a_port_string() -> None:
    """add_from_json: ``host``/``user`` trimmed, blank absent (``host`` defaults to the
    name); ``ssh_port`` a number or a string holding one; then the machine is watched."""
    model = DesktopModel()
    params = {"name": " mini3 ", "host": "  ", "user": " me ", "ssh_port": " 2200 "}
    assert _ok(answer(TAURI, model, "machine.add", params)) == {}
    added = model.machines["mini3"]
    assert (added.host, added.user, added.ssh_port) == ("mini3", "me", 2200)
    names = [row["name"] for row in _ok(answer(TAURI, model, "machines.list"))["machines"]]
    assert "mini3" in names
    entry = read_machine_add("m4", 5, None, None, configured=())
    assert (entry.host, entry.user, entry.ssh_port) == ("m4", None, 22)  # non-strings absent


# --- hosts.auth -----------------------------------------------------------------------


def test_hosts_auth_is_the_registry_snapshot_sorted_token_or_mtls() -> None:
    """auth_modes.rs:220-231@c7d4c85 (``snapshot``: sorted by name; ``AuthMode::as_str``
    is ``token`` or ``mtls``, an absent or unknown config mode reads ``token``;
    ``learned`` only once a mint proved it this session); ipc.rs:2189-2207@2cd01ef
    (``hosts_auth``)."""
    model = DesktopModel()
    model.add_host("zeta", auth_mode="mtls")
    model.add_host("alpha", auth_mode="weird", auth_learned=True)
    rows = _ok(answer(TAURI, model, "hosts.auth"))["hosts"]
    assert rows == [
        {"name": "alpha", "auth_mode": "token", "learned": True},
        {"name": "zeta", "auth_mode": "mtls", "learned": False},
    ]


# --- prefs.provider_modes / prefs.set_provider ----------------------------------------


def test_provider_modes_start_empty_and_only_provider_namespaces_take_a_mode() -> None:
    """coordinator.rs@861fedae: ``provider_modes`` (286-290) is the map as kept (empty
    until set; an absent namespace is deny), ``set_provider_mode`` (965-973) refuses any
    namespace but ``aws-credentials``/``docker-credentials``; ipc.rs:2149-2164@2cd01ef
    (``set_provider``) reads
    ``{namespace, decision}`` by serde first, then answers the refusal ``bad_request``."""
    model = DesktopModel()
    assert _ok(answer(TAURI, model, "prefs.provider_modes")) == {}
    ssh = {"namespace": "ssh-agent", "decision": "approve"}
    assert _error(answer(TAURI, model, "prefs.set_provider", ssh)) == (
        "bad_request",
        'provider mode not settable for namespace "ssh-agent"',
    )
    maybe = {"namespace": "ssh-agent", "decision": "maybe"}
    assert _error(answer(TAURI, model, "prefs.set_provider", maybe)) == (
        "bad_request",
        "unknown variant `maybe`, expected `approve` or `deny`",
    )
    docker = {"namespace": "docker-credentials", "decision": "approve"}
    assert _ok(answer(TAURI, model, "prefs.set_provider", docker)) == {}
    assert _ok(answer(TAURI, model, "prefs.provider_modes")) == {"docker-credentials": "approve"}


# --- lane.* ---------------------------------------------------------------------------


def _lane_model() -> DesktopModel:
    model = DesktopModel()
    model.add_machine("mini", craze=CrazeSource())
    assert _ok(answer(TAURI, model, "craze.create", {"machine": "mini", "cwd": "/"}))
    return model


@pytest.mark.parametrize(
    ("op", "extra"),
    [
        ("lane.messages", {}),
        ("lane.approvals", {}),
        ("lane.settings", {}),
        ("lane.send", {"text": "hi"}),
        ("lane.cancel", {}),
        ("lane.stop", {}),
        ("lane.set", {"change": {"kind": "mode", "id": "plan"}}),
        ("lane.answer", {"approval_id": "a1", "answer": {"reject": True}}),
    ],
)
def test_a_lane_op_before_lane_open_says_call_lane_open_first(
    op: str, extra: dict[str, Any]
) -> None:
    """lane.rs:1303-1324@9a84ddf (``open_entry``): a row that carries a lane but has none open is
    ``no_lane`` ``no lane is open for session "<id>" on machine "<m>" — call lane.open
    first``; after ``lane.open`` the op reaches the lane, after ``lane.close`` it is refused
    again."""
    model = _lane_model()
    refused = (
        "no_lane",
        'no lane is open for session "000000000001" on machine "mini" \u2014 call lane.open '
        "first",
    )
    assert _error(answer(TAURI, model, op, {**CRAZE_LANE, **extra})) == refused
    assert _ok(answer(TAURI, model, "lane.open", CRAZE_LANE))["session"]["slug"] == (
        "000000000001"
    )
    assert _ok(answer(TAURI, model, "lane.messages", CRAZE_LANE))["generation"] == 1
    assert _ok(answer(TAURI, model, "lane.close", CRAZE_LANE)) == {}
    assert _error(answer(TAURI, model, op, {**CRAZE_LANE, **extra})) == refused


def test_a_stamp_of_a_kind_no_adapter_speaks_is_unsupported_lane() -> None:
    """lane.rs:836-963@9a84ddf (``Lanes::open``): a roost stamp whose kind is not in ``LANE_KINDS``
    (``opencode``, ``craze``) is ``unsupported_lane``, named: ``this build has no adapter
    for agent lanes of kind "<k>" (it speaks opencode and craze)``; a kind no row is
    stamped with stays ``no_lane``."""
    assert LANE_KINDS == ("opencode", "craze")
    model = DesktopModel()
    model.add_machine("mini")
    model.add_roost_session(
        "machine:mini", "4", extra={"agent_lane": {"kind": "claude", "session_id": "ses_1"}}
    )
    lane = {"machine": "mini", "kind": "claude", "session_id": "ses_1"}
    assert _error(answer(TAURI, model, "lane.open", lane)) == (
        "unsupported_lane",
        'this build has no adapter for agent lanes of kind "claude" (it speaks opencode and '
        "craze)",
    )
    opencode = {**lane, "kind": "opencode"}
    code, message = _error(answer(TAURI, model, "lane.open", opencode))
    assert code == "no_lane"
    assert "carries no opencode agent_lane" in message


def test_lane_verb_payloads_are_read_before_the_lane() -> None:
    """ipc.rs:1635-1644,1686-1696,1706-1717@2cd01ef (``lane_send``, ``lane_set``,
    ``lane_answer``) read ``mode``, ``change``
    and ``answer`` (lane.rs ``parse_mode``/``parse_setting``/``parse_answer``) before
    ``Lanes`` is asked, so a bad payload on a lane that is not open is ``bad_request``."""
    model = DesktopModel()
    model.add_machine("mini")
    send = {**CRAZE_LANE, "text": "hi", "mode": "shout"}
    assert _error(answer(TAURI, model, "lane.send", send)) == (
        "bad_request",
        'unknown send mode "shout" (want queue or interject)',
    )
    change = {**CRAZE_LANE, "change": {"kind": "model", "id": ""}}
    assert _error(answer(TAURI, model, "lane.set", change)) == (
        "bad_request",
        "a setting change names a model, mode or option the session offers by its id",
    )
    reply = answer(TAURI, model, "lane.answer", {**CRAZE_LANE, "approval_id": "a", "answer": 3})
    assert _error(reply)[0] == "bad_request"


def test_parse_mode_trims_and_defaults_to_queue() -> None:
    """lane.rs:1880-1888@9a84ddf (``parse_mode``): trimmed; absent or blank is queue."""
    assert [parse_send_mode(m) for m in (None, "", " queue ", "interject")] == [
        "queue", "queue", "queue", "interject"
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            {},
            'answer must be {choice: "<option id>"}, {permission: \u2026}, {question: [[\u2026]]} '
            "or {reject: true}",
        ),
        (
            {"permission": "reject", "question": [["yes"]]},
            "an answer names exactly one of choice, permission, question or reject; this one "
            "names permission and question",
        ),
        (
            {"permission": "allow-always", "option_id": "reject"},
            "an answer carries its one form and nothing else; `option_id` is not part of a "
            "`permission` answer",
        ),
        (
            {"choice": "p-1", "custom_text": ["x"]},
            "`custom_text` answers a question's free-text field; it has no meaning beside "
            "`choice`",
        ),
        ({"choice": 3}, "`choice` must be a string"),
        ({"choice": ""}, "`choice` must name an option id offered by the approval"),
        (
            {"permission": " maybe "},
            'unknown permission decision "maybe" (want allow-once, allow-always or reject)',
        ),
        (
            {"question": "yes"},
            '`question` must be a list of lists of option ids: invalid type: string "yes", '
            "expected a sequence",
        ),
        ({"reject": False}, "`reject` must be the literal true"),
    ],
)
def test_parse_answer_refusals(value: Any, message: str) -> None:
    """lane.rs:1711-1841@9a84ddf (``parse_answer``): exactly one form, nothing beside it but
    ``question``'s ``custom_text``, each form strict (serde's tail on ``question``)."""
    assert _refusal(lambda: parse_lane_answer(value)) == ("bad_request", message)


def test_parse_answer_keeps_an_opaque_choice_and_a_question_with_free_text() -> None:
    """lane.rs:1711-1841@9a84ddf (``parse_answer``): a choice id is never trimmed; ``custom_text``
    rides beside ``question``."""
    assert parse_lane_answer({"choice": "  p 2  "}) == {"choice": "  p 2  "}
    both = {"question": [["yes"], []], "custom_text": [None, " typed "]}
    assert parse_lane_answer(both) == both


@pytest.mark.parametrize(
    ("value", "tail"),
    [
        ({"id": "m"}, "missing field `kind`"),
        (
            {"kind": "effort", "id": "high"},
            "unknown variant `effort`, expected one of `model`, `mode`, `config`",
        ),
        ({"kind": "model", "id": "m", "value": "x"}, "unknown field `value`, expected `id`"),
        ({"kind": "config", "id": "fast"}, "missing field `value`"),
    ],
)
def test_parse_setting_is_strict(value: Any, tail: str) -> None:
    """lane.rs:1853-1877@9a84ddf (``parse_setting``): the app's prefix ``a setting change is {kind:
    "model"|"mode", id} or {kind: "config", id, value}:`` and serde's reason (its wording
    modelled on serde's, not read)."""
    prefix = 'a setting change is {kind: "model"|"mode", id} or {kind: "config", id, value}: '
    assert _refusal(lambda: parse_lane_setting(value)) == ("bad_request", prefix + tail)
    empty = {"kind": "config", "id": "fast", "value": "true", "for_model": ""}
    assert _refusal(lambda: parse_lane_setting(empty))[1].startswith("`for_model` names")
    kept = {"kind": "config", "id": "fast", "value": " true ", "for_model": "m"}
    assert parse_lane_setting(kept) == kept  # opaque, never trimmed


# --- craze ----------------------------------------------------------------------------


def test_open_terminal_checks_the_host_id_then_the_row_with_no_source_gate() -> None:
    """roost_hosts.rs:1618-1683@9668981 (``craze_open_terminal``): ``HostId::parse``
    (``bad_request``), then shed-core craze.rs:212-224@9a84ddf ``attach_argv``'s
    ``BadHostId`` (193-195; ``bad_request``
    ``not a craze host id (twelve lowercase hex digits): "<id>"``), then the host's craze
    rows: a session it does not hold -- an unwatched host too -- is ``unknown_session``
    ``<token> lists no craze session "<id>"``. (craze.rs's ``CrazeFailure`` doc lists "a
    session this machine does not list" under ``bad_request``; the code in the same
    commit answers ``unknown_session``, and the code is what a caller gets.) No
    ``craze_ask``: a host whose craze is not installed still opens a held session."""
    model = _lane_model()
    model.machines["mini"].craze = CrazeSource(installed=False)
    bad_id = {"machine": "mini", "session_id": "ABC"}
    assert _error(answer(TAURI, model, "craze.open_terminal", bad_id)) == (
        "bad_request",
        'not a craze host id (twelve lowercase hex digits): "ABC"',
    )
    unheld = {"machine": "mini", "session_id": "00000000000f"}
    assert _error(answer(TAURI, model, "craze.open_terminal", unheld)) == (
        "unknown_session",
        'machine:mini lists no craze session "00000000000f"',
    )
    nowhere = {"machine": "nowhere", "session_id": "000000000001"}
    assert _error(answer(TAURI, model, "craze.open_terminal", nowhere)) == (
        "unknown_session",
        'machine:nowhere lists no craze session "000000000001"',
    )
    held = {"machine": "mini", "session_id": "000000000001"}
    opened = _ok(answer(TAURI, model, "craze.open_terminal", held))
    assert (opened["origin"], opened["machine"], opened["cwd"]) == ("machine:mini", "mini", "/")
    assert check_craze_host_id("0123456789ab") == "0123456789ab"


def test_create_sheet_refusals_are_craze_ask_s() -> None:
    """roost_hosts.rs:1476-1522@9668981 (``craze_ask``): an unwatched host is ``bad_request`` with
    ``unknown_host``'s words; ``no_craze`` ``<token> has no craze source``; too old
    ``too_old`` ``craze on this machine is too old for shed; update it``; a live hub
    without the capability ``too_old`` ``update craze on this machine: its hub cannot
    list what a create can start`` (the options) / ``create sessions`` (the create)."""
    model = DesktopModel()
    model.add_machine("mini")
    options = {"machine": "nowhere"}
    assert _error(answer(TAURI, model, "craze.create_options", options)) == (
        "bad_request",
        "no host machine:nowhere is being watched (have: machine:mini, machine:localhost)",
    )
    assert _error(answer(TAURI, model, "craze.create_options", {"machine": "mini"})) == (
        "no_craze",
        "machine:mini has no craze source",
    )
    model.machines["mini"].craze = CrazeSource(too_old=True)
    assert _error(answer(TAURI, model, "craze.create_options", {"machine": "mini"})) == (
        "too_old",
        "craze on this machine is too old for shed; update it",
    )
    model.machines["mini"].craze = CrazeSource(can_create=False)
    assert _error(answer(TAURI, model, "craze.create_options", {"machine": "mini"})) == (
        "too_old",
        "update craze on this machine: its hub cannot list what a create can start",
    )
    create = {"machine": "mini", "cwd": "/"}
    assert _error(answer(TAURI, model, "craze.create", create)) == (
        "too_old",
        "update craze on this machine: its hub cannot create sessions",
    )


# --- roost.run, roost.bootstrap --------------------------------------------------------

RUN_REFUSAL = (
    "missing 'command': name the program to run (a blank command is not a plain shell \u2014 "
    "roost's own UI opens those)"
)


@pytest.mark.parametrize("command", [None, 7, "", "   ", "\u00a0", "\t\n"])
def test_run_command_refusal_is_run_command_parse_s(command: Any) -> None:
    """roost_hosts.rs:3292-3307@9668981 (``RunCommand::parse``): absent (a non-string reads absent,
    ipc.rs:301-304@2cd01ef, ``run_command``) or blank by Rust's ``trim`` -- a lone no-break space
    included -- is ``bad_request`` in its one sentence."""
    model = DesktopModel()
    model.add_machine("mini")
    params = {"machine": "mini"} if command is None else {"machine": "mini", "command": command}
    assert _error(answer(TAURI, model, "roost.run", params)) == ("bad_request", RUN_REFUSAL)
    if isinstance(command, str) or command is None:
        assert _refusal(lambda: run_command(command))[1] == RUN_REFUSAL
    assert run_command("\u00a0x  y") == ["\u00a0x", "y"]  # split on ASCII whitespace only


def test_bootstrap_fingerprint_failure_is_shed_cores_sentence() -> None:
    """roost_hosts.rs:2535-2537@9668981 (``bootstrap``): a stale fingerprint is
    ``bootstrap::copy::fingerprint_changed(&token)`` (copy.rs:340-345@0041e17): ``<token> changed
    since you were asked — nothing was changed; look again.``, ``restored`` null."""
    model = DesktopModel()
    model.add_machine("mini")
    params = {"target": "mini", "fingerprint": "stale", "consent": True}
    assert _ok(answer(TAURI, model, "roost.bootstrap", params)) == {
        "ok": False,
        "error": {
            "stage": "fingerprint",
            "message": "machine:mini changed since you were asked \u2014 nothing was changed; "
            "look again.",
            "restored": None,
        },
    }
    assert fingerprint_changed("roost:prod/web").startswith("roost:prod/web changed since")


@pytest.mark.parametrize(
    ("source", "craze"),
    [
        (None, ("absent", None, False)),
        (CrazeSource(), ("live", None, True)),
        (CrazeSource(can_create=False), ("live", None, False)),
        (CrazeSource(state="dormant"), ("dormant", None, False)),
        (CrazeSource(state="offline", cause="unreachable"), ("offline", "unreachable", False)),
        (CrazeSource(installed=False, cause="exit 127"), ("absent", "not_installed", False)),
        (CrazeSource(too_old=True), ("offline", "too_old", False)),
    ],
)
def test_machines_list_rows_carry_the_craze_status(
    source: CrazeSource | None, craze: tuple[str, str | None, bool]
) -> None:
    """roost_hosts.rs:2020-2076@9668981 (``status_locked``): every row carries ``craze``,
    craze.rs:570-590@9a84ddf (``CrazeState::status``): ``{state, cause, create,
    create_options}``, every key present; no source (or never reached) ``absent``, not
    installed ``absent`` with cause ``not_installed``, too old ``offline`` ``too_old``; the
    capabilities only while live."""
    model = DesktopModel()
    model.add_machine("mini", craze=source)
    rows = _ok(answer(TAURI, model, "machines.list"))["machines"]
    (row,) = [r for r in rows if r["name"] == "mini"]
    state, cause, create = craze
    assert row["craze"] == {
        "state": state, "cause": cause, "create": create, "create_options": create
    }  # fmt: skip


def test_adapter_refusals_carry_lane_errors_display() -> None:
    """shed-core lane.rs:1084-1121@6c5536a (``LaneError``'s ``Display``), carried whole by
    lane.rs:390-400@9a84ddf (``LaneFailure::message``): an answer to an approval the lane
    does not hold is ``unknown_approval`` ``no such approval``."""
    model = _lane_model()
    _ok(answer(TAURI, model, "lane.open", CRAZE_LANE))
    params = {**CRAZE_LANE, "approval_id": "gone", "answer": {"reject": True}}
    assert _error(answer(TAURI, model, "lane.answer", params)) == (
        "unknown_approval",
        "no such approval",
    )
    codes = (DesktopCode.NOT_ACCEPTING, DesktopCode.UNKNOWN_SESSION)
    assert [lane_error(code).message for code in codes] == [
        "the session is not accepting that right now",
        "no such session",
    ]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(
        st.sampled_from(["kind", "id", "value", "for_model", "choice", "permission", "question",
                         "reject", "custom_text", "x"]),
        inner,
        max_size=4,
    ),
    max_leaves=10,
)


@settings(max_examples=examples(300), deadline=None)
@given(_JSON, _JSON)
def test_the_payload_readers_answer_or_refuse_bad_request(answer_value: Any, change: Any) -> None:
    """Any JSON value: ``parse_answer``/``parse_setting``/``read_machine_add`` return, or
    refuse with ``bad_request`` -- never another exception."""
    for call in (
        lambda: parse_lane_answer(answer_value),
        lambda: parse_lane_setting(change),
        lambda: read_machine_add(answer_value, change, change, answer_value, configured=()),
    ):
        try:
            call()
        except DesktopError as exc:
            assert exc.code == "bad_request"


def test_a_host_without_a_craze_source_lists_no_craze_lane() -> None:
    """roost_hosts.rs:1785-1813@9668981 (``craze_lanes``): the craze rows a host lists are
    its craze source's, so a host whose source is gone lists none, and lane.rs:1332-1359@9a84ddf
    (``lane_stamp``)
    answers ``no_lane`` for them."""
    model = _lane_model()
    model.machines["mini"].craze = None
    assert _error(answer(TAURI, model, "lane.open", CRAZE_LANE)) == (
        "no_lane",
        'machine "mini"\'s craze source lists no session "000000000001"',
    )
