"""Agent lanes: the reconnect wait, lost answers, and what lane.messages shows."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import anyio
import pytest

from shedproto.clients.desktop import AsyncDesktopClient, DesktopError
from shedproto.desktop import (
    LANE_RECONNECT_WAIT,
    LANE_VERB_DEADLINE,
    LANE_VERBS,
    DesktopCode,
    Dialect,
    lane_answer_lost,
    lane_verb_wait,
)
from shedproto.servers.desktop import CrazeSource, DesktopModel

from .test_server import running

LANE = {"machine": "mini", "kind": "craze", "session_id": "000000000001"}


def test_verbs_wait_for_a_lane_that_comes_back_in_time() -> None:
    assert (LANE_RECONNECT_WAIT, LANE_VERB_DEADLINE) == (10.0, 30.0)
    assert lane_verb_wait("lane.send", None) == 0.0
    assert lane_verb_wait("lane.send", 0.0) == 0.0
    assert lane_verb_wait("lane.send", 4.5) == 4.5
    assert lane_verb_wait("lane.send", 10.0) == 10.0
    for later in (10.5, math.inf):
        with pytest.raises(DesktopError) as info:
            lane_verb_wait("lane.send", later)
        assert info.value.code == DesktopCode.UNAVAILABLE
        assert "was not sent" in info.value.message
    with pytest.raises(DesktopError):
        lane_verb_wait("lane.stop", 2.0, wait=1.0)


def test_lost_answers_are_outcome_unknown() -> None:
    """A verb in flight when craze's connection dropped: shed-craze ``errors::outcome_unknown``
    (``"outcome unknown: "`` then why), from ``LaneShared::call_on``'s ``CallError::Ended``
    arm (charliek/shed crates/shed-craze/src/lane.rs:473-496@7639900;
    errors.rs:111-113@2cd01ef); the LaneFailure carries the text whole
    (lane.rs:390-400@9a84ddf)."""
    for verb in LANE_VERBS:
        error = lane_answer_lost(verb)
        assert error.code == DesktopCode.OUTCOME_UNKNOWN
        assert error.message == (
            "outcome unknown: the connection to craze dropped; check the transcript"
        )
    assert {"lane.send", "lane.cancel", "lane.stop", "lane.answer", "lane.set"} == LANE_VERBS


@pytest.mark.parametrize(
    ("verb", "noun"),
    [
        ("lane.send", "prompt"),
        ("lane.cancel", "cancel"),
        ("lane.stop", "stop"),
        ("lane.answer", "answer"),
        ("lane.set", "set"),
    ],
)
def test_a_verb_unsent_past_the_wait_says_craze_s_words(verb: str, noun: str) -> None:
    """shed-craze lane.rs:416-431@7639900 (``LaneShared::connected``; the wait
    ``WAIT_CONNECTED`` at 163, the nouns from ``command`` 436-445):
    ``LaneError::Unavailable`` (shed-core lane.rs:1084-1121@6c5536a: displayed as its text)
    naming the wait as Rust's
    ``Duration`` Debug does and the verb by the word each ``AgentLane`` method passes."""
    with pytest.raises(DesktopError) as info:
        lane_verb_wait(verb, math.inf)
    assert info.value.code == DesktopCode.UNAVAILABLE
    assert info.value.message == (
        f"not connected to craze within 10s; the {noun} was not sent \u2014 try again"
    )
    with pytest.raises(DesktopError) as info:
        lane_verb_wait(verb, 1.0, wait=0.25)
    assert info.value.message.startswith("not connected to craze within 250ms; ")


async def _open(client: AsyncDesktopClient) -> None:
    await client.call("craze.create", {"machine": "mini", "cwd": "/"})
    await client.call("lane.open", LANE)


def _model() -> DesktopModel:
    model = DesktopModel()
    model.add_machine("mini", craze=CrazeSource())
    model.lane_reconnect_wait = 0.3
    return model


async def test_a_verb_waits_for_a_reconnecting_lane(short_socket_dir: Path) -> None:
    model = _model()
    async with (
        running(short_socket_dir, Dialect.TAURI, model=model, send_timeout=0.05) as server,
        await AsyncDesktopClient.connect(server.path) as client,
    ):
        await _open(client)
        lane = model.lane("mini", LANE["session_id"])
        lane.drop(reconnect_in=0.2)
        messages: dict[str, Any] = await client.call("lane.messages", LANE)
        assert (messages["stale"], messages["generation"]) == ("reconnecting", 1)
        await client.call("lane.send", {**LANE, "text": "hi"})  # waited, then sent
        messages = await client.call("lane.messages", LANE)
        assert (messages["stale"], messages["generation"]) == (None, 2)
        assert [m["text"] for m in messages["messages"]] == ["hi"]


async def test_a_lane_that_stays_down_refuses_unsent(short_socket_dir: Path) -> None:
    model = _model()
    async with (
        running(short_socket_dir, Dialect.TAURI, model=model) as server,
        await AsyncDesktopClient.connect(server.path) as client,
    ):
        await _open(client)
        model.lane("mini", LANE["session_id"]).drop(reconnect_in=math.inf)
        start = anyio.current_time()
        with pytest.raises(DesktopError) as info:
            await client.call("lane.send", {**LANE, "text": "hi"})
        assert info.value.code == "unavailable"
        assert anyio.current_time() - start >= 0.25  # it waited its patience first
        assert model.lane("mini", LANE["session_id"]).messages == []  # never sent


async def test_a_lost_answer_is_outcome_unknown_but_applied(short_socket_dir: Path) -> None:
    model = _model()
    async with (
        running(short_socket_dir, Dialect.TAURI, model=model) as server,
        await AsyncDesktopClient.connect(server.path) as client,
    ):
        await _open(client)
        model.lane("mini", LANE["session_id"]).lost_answers = 1
        with pytest.raises(DesktopError) as info:
            await client.call("lane.send", {**LANE, "text": "maybe"})
        assert info.value.code == "outcome_unknown"
        # it ran (never resent): the transcript shows it; the next verb is answered
        await client.call("lane.send", {**LANE, "text": "again"})
        messages = await client.call("lane.messages", LANE)
        assert [m["text"] for m in messages["messages"]] == ["maybe", "again"]


def test_lane_messages_reports_seeded_state() -> None:
    from .test_results import exchange

    model = _model()
    lines = exchange(
        Dialect.TAURI,
        model,
        ("craze.create", {"machine": "mini", "cwd": "/"}),
        ("lane.open", LANE),
    )
    assert b'"ok":true' in lines[-1]
    lane = model.lane("mini", LANE["session_id"])
    lane.ended = True
    lane.capabilities = {"interject": True}
    (line,) = exchange(Dialect.TAURI, model, ("lane.messages", LANE))
    assert b'"capabilities":{"interject":true}' in line
    assert b'"ended":true' in line
