"""Receipts, the worker's receipt builders and the bounded receipt index."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shedproto.connector import (
    RECEIPT_INDEX_LIMIT,
    PayloadError,
    Receipt,
    ReceiptError,
    ReceiptErrorInfo,
    ReceiptIndexError,
    ReceiptLink,
    claim_publish_failed,
    extend_receipt_index,
    in_flight_receipt,
    orphaned_in_flight,
    orphaned_shared_claim,
    parse_command_receipt,
    parse_receipt_index,
    provider_call_failed,
    receipt_index_tail_valid,
    source_unavailable,
    terminal_receipt,
    update_receipt_index,
)
from tests._hypothesis import examples

from ._helpers import OWNER, SPACE, receipt

INVALID: list[tuple[Any, str]] = [
    (None, "command receipt must be an object: cmd-01"),
    ([], "command receipt must be an object: cmd-01"),
    (
        receipt(schema="x"),
        "command receipt schema must be commonfabric.agent-connector.command-receipt: cmd-01",
    ),
    (receipt(commandId="other"), "command receipt key does not match commandId: cmd-01"),
    (receipt(producer="wb"), "command receipt key does not match commandId: cmd-01"),
    (receipt(ownerDid=""), "command receipt ownerDid must be a string: cmd-01"),
    (receipt(sourceId=""), "command receipt sourceId must be a string: cmd-01"),
    (receipt(sourceId=5), "command receipt sourceId must be a string: cmd-01"),
    (receipt(nativeSessionId=None), "command receipt nativeSessionId must be a string: cmd-01"),
    (receipt(sourceId="Codex"), "command receipt sourceId is not normalized: cmd-01"),
    (receipt(sourceId=" codex"), "command receipt sourceId is not normalized: cmd-01"),
    (receipt(nativeSessionId="thr "), "command receipt nativeSessionId is not normalized: cmd-01"),
    (receipt(sourceId="co\x01dex"), "sourceId must not contain control characters"),
    (receipt(status="done"), "command receipt status is invalid: cmd-01"),
    (receipt(status=None), "command receipt status is invalid: cmd-01"),
    (receipt(claimedAt=""), "command receipt claimedAt must be a string"),
    (receipt(claimedAt=None), "command receipt claimedAt must be a string"),
    (
        receipt(claimedAt="2026-07-20T00:05:01Z"),
        "command receipt claimedAt must be an ISO timestamp",
    ),
    (
        receipt(completedAt="2026-02-30T00:00:00.000Z"),
        "command receipt completedAt must be an ISO timestamp",
    ),
    (
        receipt(completedAt="2026-07-20T00:05:09.000+00:00"),
        "command receipt completedAt must be an ISO timestamp",
    ),
    (receipt(providerOperationId=""), "command receipt providerOperationId must be a string"),
    (receipt(error={"code": "x", "message": "m"}), "command receipt error is invalid: cmd-01"),
    (
        receipt(error={"code": "", "message": "m", "retryable": True}),
        "command receipt error is invalid: cmd-01",
    ),
    (receipt(error="boom"), "command receipt error is invalid: cmd-01"),
    (receipt(result=[1]), "command receipt result must be an object: cmd-01"),
    (receipt(result=None), "command receipt result must be an object: cmd-01"),
]


@pytest.mark.parametrize(("value", "message"), INVALID)
def test_receipt_validation_messages(value: Any, message: str) -> None:
    with pytest.raises(ReceiptError) as caught:
        parse_command_receipt("cmd-01", value)
    assert str(caught.value) == message


def test_context_prefix_and_key_normalisation() -> None:
    with pytest.raises(ReceiptError, match=r"^command ledger receipt status is invalid: cmd-01$"):
        parse_command_receipt("cmd-01", receipt(status="x"), "command ledger receipt")
    with pytest.raises(ReceiptError) as caught:
        parse_command_receipt(" cmd-01", receipt(commandId=" cmd-01"))
    assert str(caught.value) == "command receipt commandId is not normalized:  cmd-01"
    with pytest.raises(ReceiptError) as caught:
        parse_command_receipt("", receipt(commandId=""))
    assert str(caught.value) == "commandId must not be empty"


def test_owner_check() -> None:
    parse_command_receipt("cmd-01", receipt(), owner_did=OWNER)
    with pytest.raises(ReceiptError) as caught:
        parse_command_receipt("cmd-01", receipt(), owner_did="did:key:other")
    assert str(caught.value) == "command receipt belongs to another owner: cmd-01"


def test_valid_receipt_round_trips_byte_for_byte() -> None:
    value = receipt(result={}, error={"code": "c", "message": "m", "retryable": False}, extra=1)
    parsed = parse_command_receipt("cmd-01", value)
    assert parsed.result == {}  # an empty object is truthy in JavaScript: kept
    expected = {k: v for k, v in value.items() if k != "extra"}
    assert msgspec.json.decode(msgspec.json.encode(parsed)) == expected
    assert list(msgspec.to_builtins(parsed)) == [
        "schema",
        "ownerDid",
        "commandId",
        "sourceId",
        "nativeSessionId",
        "status",
        "claimedAt",
        "completedAt",
        "providerOperationId",
        "error",
        "result",
    ]


def test_producer_receipt() -> None:
    parsed = parse_command_receipt("cmd-01", receipt(producer="workbench"), producer="workbench")
    assert parsed.identity == "workbench\x00cmd-01"
    with pytest.raises(ReceiptError, match="producer is invalid"):
        parse_command_receipt("cmd-01", receipt(producer="Bad"), producer="Bad")


def test_integral_floats_print_like_javascript() -> None:
    parsed = parse_command_receipt("cmd-01", receipt(result={"n": 100.0, "f": 1.5, "l": [2.0]}))
    assert msgspec.json.encode(parsed.result) == b'{"n":100,"f":1.5,"l":[2]}'


def _claim() -> Receipt:
    return in_flight_receipt(
        owner_did=OWNER,
        command_id="cmd-01",
        source_id="codex",
        native_session_id="thr_123",
        claimed_at="2026-07-20T00:05:01.000Z",
    )


def test_worker_receipts() -> None:
    claim = _claim()
    assert msgspec.to_builtins(claim) == {
        "schema": "commonfabric.agent-connector.command-receipt",
        "ownerDid": OWNER,
        "commandId": "cmd-01",
        "sourceId": "codex",
        "nativeSessionId": "thr_123",
        "status": "in-flight",
        "claimedAt": "2026-07-20T00:05:01.000Z",
    }
    now = "2026-07-20T00:05:09.000Z"
    assert claim_publish_failed(
        claim, message="Error: down", completed_at=now
    ).error == ReceiptErrorInfo(code="claim-publish-failed", message="Error: down", retryable=True)
    unavailable = source_unavailable(claim, completed_at=now)
    assert (unavailable.status, unavailable.error) == (
        "unsupported",
        ReceiptErrorInfo(
            code="source-unavailable", message="source is not available: codex", retryable=True
        ),
    )
    failed = provider_call_failed(
        claim, error=PayloadError("prompt text must be a non-empty string"), completed_at=now
    )
    assert failed.status == "failed"
    assert failed.error == ReceiptErrorInfo(
        code="provider-call-failed",
        message="Error: prompt text must be a non-empty string",
        retryable=False,
    )
    orphan = orphaned_in_flight(claim, completed_at=now)
    assert (orphan.status, orphan.completedAt) == ("unknown", now)
    assert orphan.error == ReceiptErrorInfo(
        code="orphaned-in-flight",
        message="process restarted after claiming the command; provider outcome is unknown",
        retryable=False,
    )
    shared = orphaned_shared_claim(claim, completed_at=now)
    assert shared.error == ReceiptErrorInfo(
        code="orphaned-shared-claim",
        message="another host published a command claim without a terminal outcome",
        retryable=False,
    )
    done = terminal_receipt(
        claim, status="succeeded", completed_at=now, provider_operation_id="turn_77"
    )
    assert done.terminal
    assert not claim.terminal
    with pytest.raises(ValueError, match="not a terminal status"):
        terminal_receipt(claim, status="in-flight", completed_at=now)
    for built in (unavailable, failed, orphan, shared, done):
        assert parse_command_receipt("cmd-01", msgspec.to_builtins(built)) == built


# --- the index ---------------------------------------------------------------------------------


def _link(command_id: str, producer: str | None) -> ReceiptLink:
    return ReceiptLink(id=f"receipts/{producer or '_owner'}/{command_id}.json", space=SPACE)


def _publish(
    existing: Any,
    command_id: str,
    *,
    now: str = "2026-07-20T01:00:00.000Z",
    producer: str | None = None,
) -> Any:
    claim = in_flight_receipt(
        owner_did=OWNER,
        command_id=command_id,
        source_id="codex",
        native_session_id="s",
        claimed_at="2026-07-20T00:00:00.000Z",
        producer=producer,
    )
    index = update_receipt_index(
        existing, claim, link=_link(command_id, producer), now=now, link_for=_link
    )
    return msgspec.json.decode(msgspec.json.encode(index))


def test_index_replace_then_append_and_bound() -> None:
    value: Any = None
    for i in range(RECEIPT_INDEX_LIMIT + 5):
        value = _publish(value, f"c{i}")
    assert len(value["receipts"]) == RECEIPT_INDEX_LIMIT
    assert value["receipts"][0]["commandId"] == "c5"
    value = _publish(value, "c10")
    ids = [row["commandId"] for row in value["receipts"]]
    assert ids[-1] == "c10"
    assert ids.count("c10") == 1
    assert len(ids) == RECEIPT_INDEX_LIMIT
    value = _publish(value, "c10", producer="wb")  # another queue: another identity
    assert [r.get("producer") for r in value["receipts"][-2:]] == [None, "wb"]
    row = value["receipts"][-1]
    assert row["updatedAt"] == "2026-07-20T00:00:00.000Z"  # completedAt ?? claimedAt ?? now
    assert row["receipt"] == {"id": "receipts/wb/c10.json", "space": SPACE, "path": []}


def test_index_validation() -> None:
    good = _publish(None, "c1")
    cases: list[tuple[Any, str]] = [
        ([], "command receipt index must be an object"),
        (
            {**good, "schema": "x"},
            "command receipt index schema must be commonfabric.agent-connector.command-receipts",
        ),
        ({**good, "ownerDid": "did:key:x"}, "command receipt index belongs to another owner"),
        (
            {**good, "updatedAt": "yesterday"},
            "command receipt index updatedAt must be an ISO timestamp",
        ),
        ({**good, "receipts": {}}, "command receipt index receipts must be an array"),
        (
            {**good, "receipts": good["receipts"] * 201},
            "command receipt index has more than 200 receipts",
        ),
        ({**good, "receipts": [{"commandId": "x"}]}, "command receipt index row 0 is invalid"),
        (
            {**good, "receipts": good["receipts"] * 2},
            "command receipt index has a duplicate row: c1",
        ),
        (
            {**good, "receipts": [{**good["receipts"][0], "ownerDid": "did:key:x"}]},
            "command receipt index row belongs to another owner: c1",
        ),
        (
            {
                **good,
                "receipts": [
                    {**good["receipts"][0], "receipt": {"id": "elsewhere", "space": SPACE}}
                ],
            },
            "command receipt index row links the wrong receipt: c1",
        ),
    ]
    for value, message in cases:
        with pytest.raises(ReceiptIndexError) as caught:
            parse_receipt_index(value, owner_did=OWNER, link_for=_link)
        assert str(caught.value) == message
        before = msgspec.json.encode(value)
        with pytest.raises(ReceiptIndexError):
            _publish(value, "c2")
        assert msgspec.json.encode(value) == before  # the malformed index is left untouched


@settings(max_examples=examples(200))
@given(
    st.dictionaries(
        st.sampled_from([*receipt(), "error", "result", "producer"]),
        st.none()
        | st.booleans()
        | st.integers()
        | st.text(max_size=30)
        | st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3),
    )
)
def test_fuzz_receipt_only_typed_errors(changes: dict[str, Any]) -> None:
    try:
        parsed = parse_command_receipt("cmd-01", receipt(**changes))
    except ReceiptError as exc:
        assert exc.message
    else:
        assert parse_command_receipt("cmd-01", msgspec.to_builtins(parsed)) == parsed


# --- extending a trusted index -----------------------------------------------------------------


def _trusted_claim(command_id: str, producer: str | None = None, **overrides: Any) -> Receipt:
    claim = in_flight_receipt(
        owner_did=OWNER,
        command_id=command_id,
        source_id="codex",
        native_session_id="s",
        claimed_at="2026-07-20T00:00:00.000Z",
        producer=producer,
    )
    return msgspec.structs.replace(claim, **overrides)


def test_extend_matches_update_step_by_step() -> None:
    value: Any = None
    trusted = None
    for i in range(RECEIPT_INDEX_LIMIT + 30):
        command_id = f"c{i % (RECEIPT_INDEX_LIMIT + 10)}"  # wraps: republishes old identities
        producer = "wb" if i % 7 == 0 else None
        claim = _trusted_claim(command_id, producer)
        now = f"2026-07-20T01:{i // 60 % 60:02d}:{i % 60:02d}.000Z"
        link = _link(command_id, producer)
        full = update_receipt_index(value, claim, link=link, now=now, link_for=_link)
        fast = extend_receipt_index(trusted, claim, link=link, now=now)
        assert fast == full
        assert receipt_index_tail_valid(fast, owner_did=OWNER, link_for=_link)
        value = msgspec.json.decode(msgspec.json.encode(full))
        assert parse_receipt_index(value, owner_did=OWNER, link_for=_link) == fast
        trusted = fast
    assert trusted is not None
    assert len(trusted.receipts) == RECEIPT_INDEX_LIMIT


TAIL_INVALID: list[tuple[str, Receipt, str, str]] = [
    ("bad now", _trusted_claim("c2"), "yesterday", "updatedAt must be an ISO timestamp"),
    (
        "bad claimedAt",
        _trusted_claim("c2", claimedAt="yesterday"),
        "2026-07-20T01:00:00.000Z",
        "row 1 is invalid",
    ),
    ("bad producer", _trusted_claim("c2", "Not A Producer"), "2026-07-20T01:00:00.000Z", "row 1"),
    (
        "bad status",
        _trusted_claim("c2", status="nope"),
        "2026-07-20T01:00:00.000Z",
        "row 1 is invalid",
    ),
    ("bad type", _trusted_claim("c2", sourceId=5), "2026-07-20T01:00:00.000Z", "row 1 is invalid"),
    (
        "other owner",
        _trusted_claim("c2", ownerDid="did:key:other"),
        "2026-07-20T01:00:00.000Z",
        "command receipt index belongs to another owner",
    ),
]


@pytest.mark.parametrize(("name", "claim", "now", "message"), TAIL_INVALID)
def test_tail_check_refuses_what_a_full_parse_refuses(
    name: str, claim: Receipt, now: str, message: str
) -> None:
    first = _trusted_claim("c1")
    base = extend_receipt_index(None, first, link=_link("c1", None), now="2026-07-20T00:00:00.000Z")
    grown = extend_receipt_index(base, claim, link=_link(claim.commandId, claim.producer), now=now)
    assert not receipt_index_tail_valid(grown, owner_did=OWNER, link_for=_link), name
    with pytest.raises(ReceiptIndexError, match=message):
        parse_receipt_index(
            msgspec.json.decode(msgspec.json.encode(grown)), owner_did=OWNER, link_for=_link
        )


def test_tail_check_refuses_a_wrong_link_and_checks_only_the_tail() -> None:
    base = extend_receipt_index(
        None,
        _trusted_claim("c1"),
        link=ReceiptLink(id="elsewhere", space=SPACE),
        now="2026-07-20T00:00:00.000Z",
    )
    assert not receipt_index_tail_valid(base, owner_did=OWNER, link_for=_link)
    grown = extend_receipt_index(
        base, _trusted_claim("c2"), link=_link("c2", None), now="2026-07-20T00:00:00.000Z"
    )
    # The first row is trusted, by contract: the check looks at the header and the new row only.
    assert receipt_index_tail_valid(grown, owner_did=OWNER, link_for=_link)
    assert not receipt_index_tail_valid(grown, owner_did="did:key:other", link_for=_link)
    assert receipt_index_tail_valid(
        msgspec.structs.replace(grown, receipts=()), owner_did=OWNER, link_for=_link
    )
    assert not receipt_index_tail_valid(
        msgspec.structs.replace(grown, schema="x"), owner_did=OWNER, link_for=_link
    )
