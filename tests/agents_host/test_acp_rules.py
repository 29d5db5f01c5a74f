"""The ACP driver's protocol rules in the core: session/list pages, stop reasons, controls."""

from __future__ import annotations

from typing import Any

import pytest

from shedproto import ErrorCode, RemoteProtocolError
from shedproto.agents_host import ACP_AUTH_REQUIRED, ACP_PROMPT_FAILED
from shedproto.drivers.acp import (
    AUTH_REQUIRED,
    SessionControls,
    advertised_controls,
    check_config_option,
    check_mode,
    parse_session_page,
    prompt_receipt,
    rpc_failure,
)


def code_of(result: Any) -> str | None:
    return None if result is None or result.error is None else result.error.code


def test_a_session_list_page_keeps_rows_raw_and_only_string_fields() -> None:
    row = {"sessionId": "a", "title": "T", "cwd": 3, "updatedAt": "2026-01-01T00:00:00Z", "x": 1}
    page = parse_session_page({"sessions": [row, {"sessionId": "b"}], "nextCursor": "c2"})
    assert [s.nativeSessionId for s in page.sessions] == ["a", "b"]
    first = page.sessions[0]
    assert (first.title, first.cwd, first.updatedAt) == ("T", None, "2026-01-01T00:00:00Z")
    assert first.raw == row
    assert page.nextCursor == "c2"
    assert parse_session_page({"sessions": [], "nextCursor": 7}).nextCursor is None


@pytest.mark.parametrize(
    ("result", "path"),
    [
        (None, "$.result.sessions"),
        ({"sessions": {}}, "$.result.sessions"),
        ({"sessions": [{"sessionId": "a"}, {"title": "no id"}]}, "$.result.sessions[1].sessionId"),
        ({"sessions": ["a"]}, "$.result.sessions[0].sessionId"),
    ],
)
def test_a_malformed_session_list_page_is_the_agents_fault(result: Any, path: str) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        parse_session_page(result)
    assert info.value.code is ErrorCode.SCHEMA_VIOLATION
    assert info.value.path == path


def test_stop_reasons_map_to_receipts() -> None:
    ended = prompt_receipt({"stopReason": "end_turn"}, "s:1")
    assert (ended.status, ended.result, ended.error) == (
        "succeeded",
        {"stopReason": "end_turn"},
        None,
    )
    assert ended.providerOperationId == "s:1"
    cancelled = prompt_receipt({"stopReason": "cancelled"}, "s:2")
    assert cancelled.status == "failed"
    assert code_of(cancelled) == "cancelled"
    assert cancelled.result == {"stopReason": "cancelled"}
    odd: Any
    for odd in (None, [], {"stopReason": 5}):
        receipt = prompt_receipt(odd, "s:3")
        assert (receipt.status, receipt.result) == ("succeeded", None)


def test_auth_required_has_its_own_receipt_code() -> None:
    assert code_of(rpc_failure(AUTH_REQUIRED, "m", ACP_PROMPT_FAILED)) == ACP_AUTH_REQUIRED
    other = rpc_failure(-32603, "boom", ACP_PROMPT_FAILED)
    assert (other.status, code_of(other)) == ("failed", ACP_PROMPT_FAILED)
    assert other.error is not None
    assert other.error.message == "boom"


def controls() -> SessionControls:
    return SessionControls(
        modes=("ask", "code"),
        config_options={
            "model": {"id": "model", "type": "select", "options": [{"value": "m1"}, "junk"]},
            "fast": {"id": "fast", "type": "boolean"},
            "odd": {"id": "odd", "options": "not a list"},
        },
    )


def test_modes_are_checked_against_the_advertised_ones() -> None:
    assert check_mode(controls(), "code") is None
    assert code_of(check_mode(controls(), "yolo")) == "acp-mode-unsupported"
    assert code_of(check_mode(None, "code")) == "acp-mode-unsupported"


@pytest.mark.parametrize(
    ("key", "value", "code"),
    [
        ("model", "m1", None),
        ("model", "m2", "acp-config-value-invalid"),
        ("model", 1, "acp-config-value-invalid"),
        ("fast", True, None),
        ("fast", "true", "acp-config-value-invalid"),
        ("odd", "x", "acp-config-value-invalid"),
        ("missing", "x", "acp-config-option-unsupported"),
    ],
)
def test_config_values_are_checked_against_the_advertised_option(
    key: str, value: Any, code: str | None
) -> None:
    assert code_of(check_config_option(controls(), key, value)) == code


def test_a_session_without_controls_offers_no_option() -> None:
    assert code_of(check_config_option(None, "model", "m1")) == "acp-config-option-unsupported"


def test_advertised_controls_merge_sessions_first_seen_first() -> None:
    other = SessionControls(
        modes=("code", "plan"), config_options={"model": {"type": "boolean"}, "t": {}}
    )
    modes, options = advertised_controls([controls(), other])
    assert modes == ("ask", "code", "plan")
    assert options == {
        "model": {"type": "select"},
        "fast": {"type": "boolean"},
        "odd": {"type": "select"},
        "t": {"type": "select"},
    }
    assert advertised_controls([]) == ((), {})
