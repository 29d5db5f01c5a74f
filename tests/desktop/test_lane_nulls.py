"""``lane.*`` payload keys: an explicit JSON ``null`` against an absent key.

charliek/shed ``desktop/tauri/src-tauri/src/ipc.rs@2cd01ef`` reads the lane
payloads two ways (``lane_send`` 1635-1644, ``lane_set`` 1686-1696, ``lane_answer``
1706-1717). ``text`` and ``approval_id`` go through ``req_str``
(``params.get(key).and_then(Value::as_str)``): a ``null`` is the same as an
absent key, ``missing '<key>'``. ``mode`` is ``params.get("mode").and_then(as_str)``:
a ``null`` (or any non-string) reads as absent, so the mode is ``queue``.
``answer`` (``lane_answer``) and ``change`` (``lane_set``) are taken with
``params.get(key)`` alone: only an absent key is ``missing '<key>'``; a ``null``
is present and reaches ``lane.rs:1711-1841@9a84ddf`` ``parse_answer`` /
``lane.rs:1853-1877@9a84ddf`` ``parse_setting``,
which refuse it in their own words.
"""

from __future__ import annotations

from typing import Any

import pytest

from shedproto.desktop import DesktopError, Dialect, validate_request
from shedproto.servers.desktop import DesktopModel

from ._helpers import answer

LANE = {"machine": "mini", "kind": "craze", "session_id": "000000000001"}
ANSWER_FORMS = (
    'answer must be {choice: "<option id>"}, {permission: \u2026}, {question: [[\u2026]]} '
    "or {reject: true}"
)
SETTING_PREFIX = 'a setting change is {kind: "model"|"mode", id} or {kind: "config", id, value}'


def _error(op: str, params: dict[str, Any]) -> tuple[str, str]:
    model = DesktopModel()
    model.add_machine("mini")
    reply = answer(Dialect.TAURI, model, op, params)
    assert reply["ok"] is False, reply
    return reply["error"]["code"], reply["error"]["message"]


def test_a_null_answer_reaches_parse_answer() -> None:
    params = {**LANE, "approval_id": "a"}
    assert _error("lane.answer", params) == ("bad_request", "missing 'answer'")
    assert _error("lane.answer", {**params, "answer": None}) == ("bad_request", ANSWER_FORMS)


def test_a_null_change_reaches_parse_setting() -> None:
    assert _error("lane.set", dict(LANE)) == ("bad_request", "missing 'change'")
    assert _error("lane.set", {**LANE, "change": None}) == (
        "bad_request",
        f"{SETTING_PREFIX}: invalid type: null, expected internally tagged enum "
        "LaneSettingChange",
    )


@pytest.mark.parametrize(
    ("value", "word"),
    [("model", 'string "model"'), (3, "integer `3`"), (True, "boolean `true`")],
)
def test_a_change_that_is_no_object_is_named_as_serde_names_it(value: Any, word: str) -> None:
    """serde_json's ``invalid type`` names the value (``null`` for a JSON null)."""
    assert _error("lane.set", {**LANE, "change": value}) == (
        "bad_request",
        f"{SETTING_PREFIX}: invalid type: {word}, expected internally tagged enum "
        "LaneSettingChange",
    )


@pytest.mark.parametrize("key", ["text", "approval_id"])
def test_a_null_req_str_key_is_missing(key: str) -> None:
    """``req_str``: a ``null`` is not a string, so it is missing like an absent key."""
    op = "lane.send" if key == "text" else "lane.answer"
    params: dict[str, Any] = {**LANE, "text": "hi", "approval_id": "a", "answer": {"reject": True}}
    params[key] = None
    assert _error(op, params) == ("bad_request", f"missing '{key}'")


def test_a_null_mode_is_queue() -> None:
    """``mode`` is read with ``as_str``: a ``null`` is absent, so the send passes
    ``parse_mode`` and the lane is what refuses (the machine lists no such session)."""
    assert _error("lane.send", {**LANE, "text": "hi", "mode": None}) == (
        "no_lane",
        'machine "mini"\'s craze source lists no session "000000000001"',
    )


@pytest.mark.parametrize(("op", "key"), [("lane.answer", "answer"), ("lane.set", "change")])
def test_the_params_decoder_keeps_a_raw_null(op: str, key: str) -> None:
    """Both decode paths agree: the general one (``validate_request``) keeps the ``null``
    for the op to read, as the one-pass decoder already did."""
    params = {**LANE, "approval_id": "a", key: None}
    _, decoded = validate_request(Dialect.TAURI, op, params, test_mode=True)
    assert getattr(decoded, key) is None
    with pytest.raises(DesktopError) as info:
        validate_request(Dialect.TAURI, op, dict(LANE, approval_id="a"), test_mode=True)
    assert info.value.message == f"missing '{key}'"
