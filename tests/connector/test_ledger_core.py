"""The ledger's pure state: exact file bytes, validation messages, operations."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from syrupy.assertion import SnapshotAssertion

from shedproto import ErrorCode, LocalProtocolError
from shedproto.connector import (
    MAX_SAFE_INTEGER,
    LedgerError,
    LedgerExhaustedError,
    LedgerState,
    in_flight_receipt,
    locale_sorted,
    parse_command_receipt,
    parse_ledger,
    terminal_receipt,
)
from tests._hypothesis import examples

from ._helpers import OWNER, receipt

NOW = "2026-07-20T01:00:00.000Z"


def _claim(command_id: str, producer: str | None = None) -> Any:
    return in_flight_receipt(
        owner_did=OWNER,
        command_id=command_id,
        source_id="codex",
        native_session_id="thr_123",
        claimed_at="2026-07-20T00:05:01.000Z",
        producer=producer,
    )


def _file(**overrides: Any) -> bytes:
    value: dict[str, Any] = {
        "schema": "commonfabric.agent-connector.command-ledger",
        "generation": 3,
        "receipts": {"cmd-01": receipt()},
        "pendingPublicationCommandIds": ["cmd-01"],
    }
    value.update(overrides)
    return json.dumps(value).encode()


def test_exact_file_bytes(snapshot: SnapshotAssertion) -> None:
    state = LedgerState()
    for command_id in ["b", "A", "a", "10", "2", "cmd_1", "Cmd-1"]:
        state = state.put(_claim(command_id))
    state = state.mark_published("a") or state
    encoded = state.encode()
    assert encoded.endswith(b"}\n")
    # JSON.stringify(value, null, 2): two-space indent, ": " separators, "[]" / "{}" when empty
    assert encoded.startswith(
        b'{\n  "schema": "commonfabric.agent-connector.command-ledger",\n  "generation": 8,\n'
    )
    decoded = json.loads(encoded)
    # array-index keys first (numeric), then localeCompare order
    assert list(decoded["receipts"]) == ["2", "10", "a", "A", "b", "cmd_1", "Cmd-1"]
    assert decoded["pendingPublicationCommandIds"] == ["10", "2", "A", "b", "cmd_1", "Cmd-1"]
    assert encoded == snapshot
    assert LedgerState().encode() == (
        b'{\n  "schema": "commonfabric.agent-connector.command-ledger",\n  "generation": 0,\n'
        b'  "receipts": {},\n  "pendingPublicationCommandIds": []\n}\n'
    )


def test_localecompare_order() -> None:
    assert locale_sorted(["b", "B", "a", "A", "_", "-", "1", "é", "e", "f"]) == [
        "_",
        "-",
        "1",
        "a",
        "A",
        "b",
        "B",
        "e",
        "é",
        "f",
    ]


def test_round_trip() -> None:
    state = LedgerState().put(_claim("cmd-01")).put(_claim("cmd-01", producer="wb"))
    assert parse_ledger(state.encode()) == state
    assert state.get("cmd-01") != state.get("cmd-01", "wb")
    assert state.get("cmd-01", "wb").producer == "wb"  # type: ignore[union-attr]
    assert parse_ledger(LedgerState().encode()) == LedgerState()


INVALID: list[tuple[bytes, str]] = [
    (b"[]", "command ledger must contain an object"),
    (b"null", "command ledger must contain an object"),
    (
        _file(schema="commonfabric.agent-connector.command-ledger.v1"),
        "command ledger schema must be commonfabric.agent-connector.command-ledger",
    ),
    (_file(generation=-1), "command ledger generation must be a non-negative safe integer"),
    (_file(generation=1.5), "command ledger generation must be a non-negative safe integer"),
    (_file(generation="3"), "command ledger generation must be a non-negative safe integer"),
    (_file(generation=2**53), "command ledger generation must be a non-negative safe integer"),
    (_file(generation=True), "command ledger generation must be a non-negative safe integer"),
    (_file(receipts=[]), "command ledger receipts must be an object"),
    (
        _file(pendingPublicationCommandIds="cmd-01"),
        "command ledger pendingPublicationCommandIds must be a string array",
    ),
    (
        _file(pendingPublicationCommandIds=[1]),
        "command ledger pendingPublicationCommandIds must be a string array",
    ),
    (
        _file(pendingPublicationCommandIds=["cmd-01", "cmd-01"]),
        "command ledger pendingPublicationCommandIds must not contain duplicates",
    ),
    (
        _file(pendingPublicationCommandIds=["cmd-02"]),
        "command ledger pending receipt is missing: cmd-02",
    ),
    (
        _file(receipts={"stored-key": receipt()}),
        "command ledger receipt key does not match commandId: stored-key",
    ),
    (
        _file(receipts={"cmd-01": receipt(status="nope")}),
        "command ledger receipt status is invalid: cmd-01",
    ),
    (
        _file(receipts={"wb\x00cmd-01": receipt()}, pendingPublicationCommandIds=[]),
        "command ledger receipt key does not match commandId: cmd-01",
    ),
]


@pytest.mark.parametrize(("data", "message"), INVALID)
def test_validation_messages(data: bytes, message: str) -> None:
    with pytest.raises(LedgerError) as caught:
        parse_ledger(data)
    assert str(caught.value) == message
    assert caught.value.code is ErrorCode.SCHEMA_VIOLATION


def test_not_json() -> None:
    with pytest.raises(LedgerError) as caught:
        parse_ledger(b'{"schema": ')
    assert caught.value.code is ErrorCode.MALFORMED_FRAME


def test_operations() -> None:
    state = LedgerState()
    assert state.generation == 0
    assert state.pending_publication_count() == 0
    state = state.put(_claim("c1"))
    assert (state.generation, state.pending_publication_count()) == (1, 1)
    assert state.mark_published("nope") is None  # no write for a receipt that is not pending
    state = state.mark_published("c1")  # type: ignore[assignment]
    assert (state.generation, state.pending_publication_count()) == (2, 0)
    state = state.put(_claim("c2")).put(
        terminal_receipt(_claim("c3"), status="succeeded", completed_at=NOW)
    )
    recovered = state.recover(now=NOW)
    assert recovered.generation == state.generation + 1
    c2 = recovered.get("c2")
    assert c2 is not None
    assert c2.status == "unknown"
    assert c2.error is not None
    assert c2.error.code == "orphaned-in-flight"
    assert recovered.get("c3").status == "succeeded"  # type: ignore[union-attr]
    # c1 was published but still in flight: recovery orphans it and makes it pending again
    assert [r.commandId for r in recovered.pending_receipts()] == ["c1", "c2", "c3"]
    again = recovered.recover(now=NOW)
    assert again.generation == recovered.generation + 1
    assert again.receipts == recovered.receipts


def test_put_validates_and_exhaustion() -> None:
    bad = msgspec.structs.replace(_claim("c1"), sourceId="Codex")
    with pytest.raises(LocalProtocolError) as caught:
        LedgerState().put(bad)
    assert str(caught.value) == "command ledger receipt sourceId is not normalized: c1"
    full = LedgerState(MAX_SAFE_INTEGER)
    with pytest.raises(LedgerExhaustedError, match=r"^command ledger generation is exhausted$"):
        full.put(_claim("c1"))
    with pytest.raises(LedgerExhaustedError):
        full.recover(now=NOW)


ids = st.text(alphabet="abcAB-_.:/ 0123é", min_size=1, max_size=8).map(str.strip).filter(bool)


@settings(max_examples=examples(100))
@given(st.lists(st.tuples(ids, st.booleans()), max_size=12))
def test_random_operation_sequences_round_trip(ops: list[tuple[str, bool]]) -> None:
    state = LedgerState()
    for command_id, publish in ops:
        state = state.put(_claim(command_id))
        if publish:
            state = state.mark_published(command_id) or state
    reparsed = parse_ledger(state.encode())
    assert reparsed == state
    assert reparsed.encode() == state.encode()


@settings(max_examples=examples(300))
@given(st.binary(max_size=120))
def test_fuzz_ledger_bytes_only_typed_errors(data: bytes) -> None:
    with contextlib.suppress(LedgerError):
        parse_ledger(data)


def test_stored_receipt_is_validated_copy() -> None:
    state = LedgerState().put(_claim("c1"))
    stored = state.get("c1")
    assert stored == parse_command_receipt(
        "c1", msgspec.to_builtins(stored), "command ledger receipt"
    )


def whole_document(state: LedgerState) -> bytes:
    """Reference file bytes: the whole value formatted at once, its key order built here."""
    keys = locale_sorted(list(state.receipts))
    indexes = [
        k
        for k in keys
        if k.isascii() and k.isdigit() and (k == "0" or k[0] != "0") and int(k) < 2**32 - 1
    ]
    ordered = sorted(indexes, key=int) + [k for k in keys if k not in indexes]
    value = {
        "schema": "commonfabric.agent-connector.command-ledger",
        "generation": state.generation,
        "receipts": {k: state.receipts[k] for k in ordered},
        "pendingPublicationCommandIds": locale_sorted(state.pending_identities),
    }
    return msgspec.json.format(msgspec.json.encode(value), indent=2) + b"\n"


command_ids = st.one_of(
    ids,
    st.integers(min_value=0, max_value=2**32 + 5).map(str),
    st.sampled_from(["0", "00", "007", "4294967294", "4294967295", "1e3", "-1"]),
)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("put"), command_ids, st.sampled_from([None, "wb", "zz"]), st.booleans()),
        st.tuples(st.just("mark"), command_ids, st.sampled_from([None, "wb", "zz"])),
        st.tuples(st.just("recover")),
        st.tuples(st.just("stamp"), st.integers(min_value=0, max_value=MAX_SAFE_INTEGER - 30)),
        st.tuples(st.just("encode")),
        st.tuples(st.just("reparse")),
    ),
    max_size=25,
)


@settings(max_examples=examples(200), deadline=None)
@given(operations)
def test_incremental_encoding_is_byte_identical_to_whole_document(ops: list[Any]) -> None:
    """The cached key order and receipt fragments never change a byte, whatever came before."""
    state = LedgerState()
    for op in ops:
        if op[0] == "put":
            _, command_id, producer, done = op
            claim = _claim(command_id, producer)
            state = state.put(
                terminal_receipt(claim, status="succeeded", completed_at=NOW) if done else claim
            )
        elif op[0] == "mark":
            state = state.mark_published(f"{op[2]}\x00{op[1]}" if op[2] else op[1]) or state
        elif op[0] == "recover":
            state = state.recover(now=NOW)
        elif op[0] == "stamp":
            stamped = state.with_generation(op[1])
            assert stamped.generation == op[1]
            assert stamped.receipts == state.receipts
            assert stamped.pending_identities == state.pending_identities
            state = stamped
        elif op[0] == "encode":
            state.encode()  # fills the caches the next states inherit
        else:
            state = parse_ledger(state.encode())  # a cold state: no caches
        assert state.encode() == whole_document(state)
    assert parse_ledger(state.encode()) == state


def test_with_generation_bounds() -> None:
    state = LedgerState().put(_claim("c1"))
    assert state.with_generation(MAX_SAFE_INTEGER).generation == MAX_SAFE_INTEGER
    with pytest.raises(LedgerExhaustedError):
        state.with_generation(MAX_SAFE_INTEGER + 1)
    with pytest.raises(ValueError, match="non-negative"):
        state.with_generation(-1)
