"""Regression tests for bugs found while building the connector core, named for what broke."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shedproto.clients.cli._agents_host import demo_step
from shedproto.connector import (
    ConfigFileError,
    InvalidCommand,
    InvalidCommandReason,
    JsoncSyntaxError,
    LedgerError,
    ReceiptError,
    decode_command,
    in_flight_receipt,
    load_agents_host_config_text,
    parse_command_receipt,
    parse_jsonc,
    parse_ledger,
    terminal_receipt,
)

from ._helpers import OWNER, receipt

DEEP_ARRAY = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a":' * 100_000 + "1" + "}" * 100_000


@pytest.mark.parametrize("text", [DEEP_ARRAY, DEEP_OBJECT])
def test_deeply_nested_json_is_a_typed_error_not_a_recursion_crash(text: str) -> None:
    with pytest.raises(JsoncSyntaxError):
        parse_jsonc(text)
    with pytest.raises(ConfigFileError):
        load_agents_host_config_text(text, "agents.jsonc")
    with pytest.raises(LedgerError):
        parse_ledger(text.encode())
    assert decode_command(text) == InvalidCommand(
        InvalidCommandReason.INVALID_JSON,
        "command JSON is invalid: SyntaxError: JSON is nested too deeply",
    )


def test_deep_receipt_result_is_refused_before_it_can_break_encoding() -> None:
    deep: dict[str, Any] = {}
    cursor = deep
    for _ in range(300):
        cursor["a"] = {}
        cursor = cursor["a"]
    with pytest.raises(
        ReceiptError, match=r"^command receipt result is nested too deeply: cmd-01$"
    ):
        parse_command_receipt("cmd-01", receipt(result=deep))
    claim = in_flight_receipt(
        owner_did=OWNER,
        command_id="c",
        source_id="codex",
        native_session_id="s",
        claimed_at="2026-07-20T00:00:00.000Z",
    )
    with pytest.raises(ValueError, match="nested too deeply"):
        terminal_receipt(
            claim, status="succeeded", completed_at="2026-07-20T00:00:00.000Z", result=deep
        )


def test_escaped_lone_surrogate_is_accepted_like_json_parse() -> None:
    text = '{"a": "\\ud800", "b": [1,],}'
    assert parse_jsonc(text) == {"a": "\ud800", "b": [1]}
    element = (
        '{"schema":"commonfabric.agent-connector.command","ownerDid":"d","id":"x",'
        '"createdAt":"t","sourceId":"codex","nativeSessionId":"a\\udc00","type":"prompt",'
        '"payload":{}}'
    )
    assert decode_command(element) == InvalidCommand(
        InvalidCommandReason.INVALID_NATIVE_SESSION_ID, "URI malformed"
    )
    assert decode_command(element.replace("a\\\\udc00", "ok").replace("a\\udc00", "ok")).id == "x"  # type: ignore[union-attr]


def test_nan_and_infinity_stay_invalid_in_the_fallback_parser() -> None:
    # the stdlib fallback (for lone surrogates) would accept these; JSON.parse does not
    for text in ('{"a": NaN, "b": "\\u0041"}', '[Infinity, "\\u0041"]'):
        result = decode_command(text)
        assert isinstance(result, InvalidCommand)
        assert result.reason is InvalidCommandReason.INVALID_JSON
        with pytest.raises(JsoncSyntaxError):
            parse_jsonc(text)


async def test_demo_step(tmp_path: Path) -> None:
    step = await demo_step(tmp_path / "demo")
    assert step.ok, step.lines
    assert any("another agent host holds the process lock" in line for line in step.lines)
    assert any("provider-call-failed" in line for line in step.lines)
