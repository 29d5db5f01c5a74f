"""The one connection contract (issue 13): the module itself, and every core connection on it."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from enum import Enum
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import shedproto
from shedproto import (
    ConnectionClosed,
    Contract,
    ErrorCode,
    LineSkipped,
    LocalProtocolError,
    Outbox,
    RemoteProtocolError,
    Role,
    TableEnum,
    TransitionTable,
)
from shedproto.desktop import Dialect
from tests._hypothesis import examples

# --- every connection class of the core is built on the contract ------------------------------

NOT_YET_ON_THE_CONTRACT: dict[str, str] = {
}
"""Connections not migrated yet, with the reason; remove an entry when it migrates."""

SHELLS = ("shedproto.servers", "shedproto.clients", "shedproto.testing")


def core_module_names() -> list[str]:
    """Every module of the core (shells excluded)."""
    return [
        info.name
        for info in pkgutil.walk_packages(shedproto.__path__, "shedproto.")
        if not info.name.startswith(SHELLS)
    ]


def core_connection_classes() -> dict[str, type]:
    """Every class of the core that has ``receive_data``: a connection."""
    found: dict[str, type] = {}
    for module_name in core_module_names():
        module = importlib.import_module(module_name)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module_name and callable(getattr(cls, "receive_data", None)):
                found[f"{module_name}.{name}"] = cls
    return found


def test_the_walk_finds_the_known_connections() -> None:
    found = core_connection_classes()
    for name in (
        "shedproto.desktop._connection.ServerConnection",
        "shedproto.desktop._connection.ClientConnection",
        "shedproto.host_agent._connection.AgentConnection",
        "shedproto.host_agent._connection.ConsumerConnection",
        "shedproto.agents_host._connection.ApiServerConnection",
        "shedproto.drivers.codex._connection.CodexClientConnection",
        "shedproto.drivers.claude._stream.ClaudeStreamConnection",
        "shedproto.drivers.acp._connection.AcpConnection",
        *NOT_YET_ON_THE_CONTRACT,
    ):
        assert name in found, name


def test_every_core_connection_is_built_on_the_contract() -> None:
    off_contract = {
        name
        for name, cls in core_connection_classes().items()
        if not issubclass(cls, Contract) and name not in NOT_YET_ON_THE_CONTRACT
    }
    assert not off_contract, f"connections not built on shedproto.Contract: {off_contract}"


def test_the_not_yet_list_is_current() -> None:
    found = core_connection_classes()
    migrated = {
        name
        for name in NOT_YET_ON_THE_CONTRACT
        if name in found and issubclass(found[name], Contract)
    }
    assert not migrated, f"migrated: remove them from NOT_YET_ON_THE_CONTRACT: {migrated}"
    gone = set(NOT_YET_ON_THE_CONTRACT) - set(found)
    assert not gone, f"no longer in the core: remove them from NOT_YET_ON_THE_CONTRACT: {gone}"


BUILD_WITH_ARGUMENTS: dict[str, Callable[[Any], Any]] = {
    "shedproto.desktop._connection.ServerConnection": lambda cls: cls(Dialect.TAURI),
    "shedproto.drivers.claude._stream.ClaudeStreamConnection": lambda cls: cls(session_id="s"),
    "shedproto.host_agent._connection.AgentConnection": lambda cls: cls(accepted_at=0.0),
}
"""How to build the contract connections whose constructors need arguments (others take none)."""


def test_contract_connections_initialise_the_contract() -> None:
    """A fresh connection has the contract's state: a table, a state in it, no error, an outbox."""
    checked = 0
    for name, cls in core_connection_classes().items():
        if not issubclass(cls, Contract):
            continue
        connection = BUILD_WITH_ARGUMENTS.get(name, lambda cls: cls())(cls)
        assert isinstance(connection.table, TransitionTable), name
        assert any(state is connection.state for state, _ in connection.table.transitions), name
        assert connection.error is None, name
        assert isinstance(connection.outbox, Outbox), name
        assert connection.data_to_send() == b"", name
        checked += 1
    assert checked >= len(BUILD_WITH_ARGUMENTS)


# --- the transition table ---------------------------------------------------------------------


class S(Enum):
    A = "a"
    B = "b"
    ERROR = "error"


class Go(Enum):
    NEXT = "next"
    BACK = "back"
    EOF = "eof"


class Frame:
    """A stand-in frame class: tables key by frame class too."""


TABLE = TransitionTable(
    "toy",
    {
        (S.A, Go.NEXT): S.B,
        (S.B, Go.BACK): S.A,
        (S.B, Frame): S.B,
        (S.ERROR, Go.EOF): S.ERROR,
    },
    error=S.ERROR,
    quiet=(S.A,),
)


def test_table_steps_and_refuses_by_who_caused_it() -> None:
    assert TABLE.next_state(S.A, Go.NEXT, Role.LOCAL) is S.B
    assert TABLE.next_state(S.B, Frame, Role.REMOTE) is S.B
    with pytest.raises(LocalProtocolError) as local:
        TABLE.next_state(S.A, Go.BACK, Role.LOCAL)
    assert local.value.code is ErrorCode.UNEXPECTED_EVENT
    assert "back" in local.value.message
    assert "toy state a" in local.value.message
    with pytest.raises(RemoteProtocolError) as remote:
        TABLE.next_state(S.A, Frame, Role.REMOTE)
    assert "Frame" in remote.value.message


def test_a_table_whose_error_state_can_be_left_is_refused() -> None:
    with pytest.raises(ValueError, match="sticky"):
        TransitionTable("bad", {(S.ERROR, Go.BACK): S.A}, error=S.ERROR)


@settings(max_examples=examples(200), deadline=None)
@given(st.sampled_from(list(S)), st.sampled_from([*Go, Frame]), st.sampled_from(list(Role)))
def test_every_pair_transitions_or_raises_the_right_family(
    state: S, key: object, role: Role
) -> None:
    family = LocalProtocolError if role is Role.LOCAL else RemoteProtocolError
    if TABLE.allows(state, key):
        assert TABLE.next_state(state, key, role) is TABLE.transitions[state, key]
    else:
        with pytest.raises(family):
            TABLE.next_state(state, key, role)


# --- a toy connection on the contract ---------------------------------------------------------


class Toy(Contract[S]):
    """Lines ``n`` (next), ``b`` (back), ``f`` (a frame); anything else is fatal."""

    def __init__(self) -> None:
        super().__init__(TABLE, S.A)

    def receive_data(self, data: bytes) -> list[object]:
        self._raise_deferred()
        events: list[object] = []
        try:
            for line in data.split():
                key = {b"n": Go.NEXT, b"b": Go.BACK, b"f": Frame}.get(line)
                if key is None:
                    raise RemoteProtocolError(ErrorCode.MALFORMED_FRAME, f"bad line {line!r}")
                if self._remote(key):
                    events.append(key)
        except RemoteProtocolError as exc:
            return self._deliver(events, exc)
        return events

    def local(self, key: object) -> S:
        return self._local(key)


def test_local_misuse_leaves_the_state_unchanged() -> None:
    toy = Toy()
    with pytest.raises(LocalProtocolError):
        toy.local(Go.BACK)
    assert toy.state is S.A
    assert toy.local(Go.NEXT) is S.B


def test_quiet_states_drop_illegal_peer_input() -> None:
    toy = Toy()
    assert toy.receive_data(b"f b") == []  # A is quiet: dropped, no error
    assert toy.state is S.A


def test_illegal_peer_input_in_a_loud_state_is_a_remote_error() -> None:
    toy = Toy()
    toy.local(Go.NEXT)
    with pytest.raises(RemoteProtocolError):
        toy.receive_data(b"n")
    assert toy.state is S.ERROR
    assert toy.error is not None


def test_fatal_error_is_sticky_and_named_by_later_local_steps() -> None:
    toy = Toy()
    with pytest.raises(RemoteProtocolError):
        toy.receive_data(b"zzz")
    assert toy.state is S.ERROR
    with pytest.raises(LocalProtocolError, match="failed earlier"):
        toy.local(Go.NEXT)
    assert toy.local(Go.EOF) is S.ERROR  # what the table allows in the error state still works


@settings(max_examples=examples(200), deadline=None)
@given(good=st.lists(st.sampled_from([b"n", b"f", b"b"]), max_size=10))
def test_good_before_bad_every_good_event_is_delivered_then_the_error(good: list[bytes]) -> None:
    reference = Toy()
    expected = reference.receive_data(b" ".join(good))
    toy = Toy()
    if expected:
        assert toy.receive_data(b" ".join([*good, b"zzz", b"n"])) == expected
        with pytest.raises(RemoteProtocolError):
            toy.receive_data(b"")  # the error comes after the good events, once
    else:
        with pytest.raises(RemoteProtocolError):
            toy.receive_data(b" ".join([*good, b"zzz"]))
    assert toy.state is S.ERROR
    with pytest.raises(LocalProtocolError):
        toy.local(Go.NEXT)


def test_deadlines_default_to_none() -> None:
    toy = Toy()
    assert toy.next_deadline() is None
    assert toy.handle_timeout(1e9) == []


def test_closed_and_skipped_events_carry_reason_and_error() -> None:
    error = RemoteProtocolError(ErrorCode.MALFORMED_FRAME, "x")
    assert ConnectionClosed("eof").error is None
    assert ConnectionClosed("frame_too_large", error).error is error
    assert LineSkipped(error).line == b""


# --- the outbox -------------------------------------------------------------------------------


def test_outbox_lines_wait_behind_owed_answers() -> None:
    box = Outbox()
    box.put(b"early\n")
    box.owe(1)
    box.put(b"after-1\n")
    box.owe(2)
    box.put(b"after-2\n")
    assert box.owed == 2
    assert box.data_to_send() == b"early\n"
    assert box.data_to_send() == b""
    assert box.oldest() == 1
    box.settle()
    assert box.data_to_send() == b"after-1\n"
    box.settle()
    assert box.data_to_send() == b"after-2\n"
    with pytest.raises(LocalProtocolError):
        box.settle()
    with pytest.raises(LocalProtocolError):
        box.oldest()


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.booleans(), max_size=30))
def test_outbox_keeps_wire_order_for_a_shell_that_drains_after_each_event(
    owes: list[bool],
) -> None:
    """``True`` is a request (answered in order), ``False`` an automatic line."""
    box = Outbox()
    for index, owe in enumerate(owes):
        if owe:
            box.owe(index)
        else:
            box.put(b"%d\n" % index)
    wire = bytearray()
    for index, owe in enumerate(owes):
        wire += box.data_to_send()
        if owe:
            assert box.oldest() == index
            wire += b"%d\n" % index
            box.settle()
    wire += box.data_to_send()
    assert wire == b"".join(b"%d\n" % index for index in range(len(owes)))
    assert box.owed == 0
    assert not box


def test_outbox_settle_with_a_key_refuses_answers_out_of_order() -> None:
    box = Outbox()
    box.owe("1")
    box.owe("2")
    with pytest.raises(LocalProtocolError, match="answers go in order"):
        box.settle("2")
    with pytest.raises(LocalProtocolError):
        box.settle(1)  # equal text is not enough: the type must match too
    assert box.owed == 2  # nothing changed
    box.settle("1")
    assert box.oldest() == "2"


def test_table_enums_hash_by_identity() -> None:
    class Phase(TableEnum):
        ON = "on"
        OFF = "off"

    assert hash(Phase.ON) == object.__hash__(Phase.ON)


def test_every_core_table_keys_by_table_enums() -> None:
    """Each state and input enum of a core transition table is a :class:`TableEnum`."""
    tables = {
        f"{module.__name__}.{name}": value
        for module in map(importlib.import_module, core_module_names())
        for name, value in vars(module).items()
        if isinstance(value, TransitionTable)
    }
    assert "shedproto.host_agent._state.AGENT_TABLE" in tables
    plain = {
        (name, type(part).__name__)
        for name, table in tables.items()
        for key in table.transitions
        for part in key
        if isinstance(part, Enum) and not isinstance(part, TableEnum)
    }
    assert not plain, f"plain Enum keys (they hash by name, slowly): {plain}"
