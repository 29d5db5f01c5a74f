"""craze.create: params, the idempotency window, the attempt and the client id lifecycle."""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any

import pytest

from shedproto import LocalProtocolError
from shedproto.desktop import (
    AttemptState,
    CrazeAttempt,
    CreateTicket,
    DesktopError,
    IdempotencyLedger,
    TicketState,
    mint_request_id,
    valid_request_id,
    validate_craze_create,
)
from shedproto.desktop._state import (
    ATTEMPT_TRANSITIONS,
    SERVER_TRANSITIONS,
    TICKET_TRANSITIONS,
    AttemptInput,
    ConnInput,
    ConnState,
    TicketInput,
    transition,
)
from shedproto.desktop.types import CrazeCreateParams


def params(**kw: object) -> CrazeCreateParams:
    base: dict[str, object] = {"machine": "mini", "cwd": "/work"}
    base.update(kw)
    return CrazeCreateParams(**base)  # type: ignore[arg-type]


def test_valid_create_normalises() -> None:
    # craze.rs create_request (charliek/shed desktop/tauri/src-tauri/src/craze.rs, stored
    # version id 70373335472): cwd trimmed, blank provider absent, a prompt sent as typed
    req = validate_craze_create(
        params(cwd=" /work ", provider="  ", prompt=" hi ", request_id="abc.DEF-1_2")
    )
    assert (req.host.origin, req.cwd, req.provider, req.prompt, req.request_id) == (
        "machine:mini",
        "/work",
        None,
        " hi ",
        "abc.DEF-1_2",
    )


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"cwd": None}, 'the session\'s directory must be an absolute path, got ""'),
        ({"cwd": " w "}, 'the session\'s directory must be an absolute path, got "w"'),
        (
            {"request_id": "no spaces!"},
            'request id "no spaces!" is not craze\'s form (1\u201364 of [A-Za-z0-9._-])',
        ),
    ],
)
def test_create_refusals_are_create_requests_words(kw: dict[str, Any], message: str) -> None:
    """craze.rs create_request (stored version id 70373335472): both ``bad_request``."""
    with pytest.raises(DesktopError) as info:
        validate_craze_create(params(**kw))
    assert (info.value.code, info.value.message) == ("bad_request", message)


@pytest.mark.parametrize(
    "kw",
    [
        {"cwd": "relative/dir"},
        {"cwd": None},
        {"request_id": ""},
        {"request_id": "no spaces!"},
        {"request_id": "x" * 65},
        {"machine": "roost:srv"},
        {"machine": ""},
    ],
)
def test_create_refusals_are_bad_request(kw: dict[str, object]) -> None:
    with pytest.raises(DesktopError) as info:
        validate_craze_create(params(**kw))
    assert info.value.code == "bad_request"


def test_request_id_form_and_minting() -> None:
    assert valid_request_id("a" * 64)
    assert not valid_request_id("a" * 65)
    assert not valid_request_id(7)
    assert not valid_request_id(None)
    minted = mint_request_id(bytes(range(8)))
    assert minted == "shed-0001020304050607"
    assert valid_request_id(minted)
    with pytest.raises(ValueError, match="entropy"):
        mint_request_id(b"")


def test_replay_within_window_including_failures() -> None:
    ledger: IdempotencyLedger[object] = IdempotencyLedger(window=600)
    failure = DesktopError("failed", "provider crashed")
    ledger.record("r1", failure, now=0.0)
    ledger.record("r1", {"session": "second"}, now=1.0)  # the first answer sticks
    assert ledger.replay("r1", now=599.0) is failure
    assert ledger.replay("r1", now=600.0) is None  # forgotten after the window
    assert len(ledger) == 0
    ledger.record("r1", {"session": "new"}, now=601.0)
    assert ledger.replay("r1", now=602.0) == {"session": "new"}


def test_attempt_retries_once_then_outcome_unknown() -> None:
    attempt = CrazeAttempt("r1")
    assert attempt.on_lost() is AttemptState.RETRY
    assert attempt.request_id == "r1"
    assert attempt.on_lost() is AttemptState.OUTCOME_UNKNOWN
    assert attempt.done
    with pytest.raises(LocalProtocolError):
        attempt.on_session()


@pytest.mark.parametrize(
    ("steps", "final"),
    [
        (["session"], AttemptState.OK),
        (["refusal"], AttemptState.REFUSED),
        (["lost", "session"], AttemptState.OK),
        (["lost", "refusal"], AttemptState.REFUSED),
    ],
)
def test_attempt_paths(steps: list[str], final: AttemptState) -> None:
    attempt = CrazeAttempt("r")
    for step in steps:
        getattr(attempt, f"on_{step}")()
    assert attempt.state is final


def kept(ticket: CreateTicket) -> str | None:
    """Read the kept id through a call, so mypy does not narrow it between steps."""
    return ticket.request_id


def test_ticket_keeps_id_only_while_unknown() -> None:
    ticket = CreateTicket()
    first = ticket.submit(b"\x01" * 8)
    assert first == "shed-" + "01" * 8
    assert ticket.answered(DesktopError("outcome_unknown", "lost twice")) is TicketState.UNKNOWN
    assert ticket.held
    assert kept(ticket) == first
    assert ticket.submit(b"\x02" * 8) == first  # "Try again" reuses the id
    assert ticket.answered(None) is TicketState.CREATED
    assert kept(ticket) is None
    second = ticket.submit(b"\x03" * 8)
    assert second != first
    assert ticket.answered(DesktopError("bad_request", "no")) is TicketState.REFUSED
    assert kept(ticket) is None


def test_ticket_edit_discards_kept_id_and_guards_in_flight() -> None:
    ticket = CreateTicket()
    ticket.submit(b"\x01", request_id="mine")
    with pytest.raises(LocalProtocolError):
        ticket.submit(b"\x01")
    with pytest.raises(LocalProtocolError):
        ticket.edit()
    ticket.answered(DesktopError("outcome-unknown", "hyphen spelling still counts"))
    assert kept(ticket) == "mine"
    ticket.edit()
    assert kept(ticket) is None
    assert ticket.state.value == TicketState.FORM_CLEAN.value
    assert kept(ticket) is None
    with pytest.raises(ValueError, match="form"):
        ticket.submit(b"\x01", request_id="bad id")


@pytest.mark.parametrize(
    ("table", "states", "inputs"),
    [
        (ATTEMPT_TRANSITIONS, AttemptState, AttemptInput),
        (TICKET_TRANSITIONS, TicketState, TicketInput),
        (SERVER_TRANSITIONS, ConnState, ConnInput),
    ],
)
def test_every_state_input_pair_is_in_the_table_or_refused(
    table: Mapping[tuple[Any, Any], Any], states: type[Enum], inputs: type[Enum]
) -> None:
    allowed = 0
    for state in states:
        for event in inputs:
            if (state, event) in table:
                assert transition(table, state, event) is table[state, event]
                allowed += 1
            else:
                with pytest.raises(LocalProtocolError) as info:
                    transition(table, state, event)
                assert info.value.code.value == "unexpected_event"
    assert allowed == len(table)


def test_final_attempt_states_accept_nothing() -> None:
    for final in (AttemptState.OK, AttemptState.REFUSED, AttemptState.OUTCOME_UNKNOWN):
        assert not [e for e in AttemptInput if (final, e) in ATTEMPT_TRANSITIONS]
