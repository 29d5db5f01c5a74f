"""Codex answers read in the core (moved out of the driver shell): turn ids, threads, full turns."""

from __future__ import annotations

from typing import Any

import pytest

from shedproto import ErrorCode, RemoteProtocolError
from shedproto.drivers.codex import full_turn, thread_of, turn_id_of


@pytest.mark.parametrize(
    ("holder", "turn_id"),
    [
        ({"turn": {"id": "t1", "status": "inProgress"}}, "t1"),
        ({"turn": {"id": 7}}, None),
        ({"turn": "t1"}, None),
        ({}, None),
        (None, None),
        (["turn"], None),
    ],
)
def test_turn_id_of_a_turn_start_answer_or_turn_notification(holder: Any, turn_id: Any) -> None:
    assert turn_id_of(holder) == turn_id


def test_thread_of_a_thread_read_answer() -> None:
    thread = {"id": "th", "turns": []}
    assert thread_of({"thread": thread}) is thread


@pytest.mark.parametrize("result", [None, {}, {"thread": "th"}, {"thread": {"id": 1}}])
def test_a_thread_read_answer_without_a_thread_is_the_servers_fault(result: Any) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        thread_of(result)
    assert info.value.code is ErrorCode.SCHEMA_VIOLATION
    assert info.value.path == "$.result.thread"
    assert info.value.message == "thread/read answered without a thread"


def test_full_turn_unwraps_item_entries_and_marks_the_view_full() -> None:
    item = {"type": "agentMessage", "id": "i", "text": "hi"}
    turn = {"id": "t", "items": [], "itemsView": "summary", "status": "completed"}
    full = full_turn(turn, [{"item": item, "turnId": "t"}, {"type": "userMessage"}])
    assert full == {
        "id": "t",
        "items": [item, {"type": "userMessage"}],
        "itemsView": "full",
        "status": "completed",
    }
    assert turn["items"] == []  # the listed turn is not changed
