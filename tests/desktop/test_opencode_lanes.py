"""An opencode lane's verbs fail in shed-opencode's words, not craze's.

charliek/shed ``crates/shed-opencode/src/client.rs@15e7aae`` (``send`` 885-897,
``cancel`` 899-908, ``answer_inner`` 996-1050, ``dial_error`` 483-485,
``encode_segment`` 467-478; lines counted on the stored text) is an HTTP client of the
opencode server a row's ``agent_lane`` names. It keeps no reconnect wait and no unknown
outcome: each verb is one request (``send``, ``cancel`` and ``answer_inner`` choose the
route), and a request that could not be sent or was not answered is
``LaneError::Unavailable`` ``opencode <path>: <the HTTP client's error>``
(``dial_error``), the route's id escaped by ``encode_segment``. ``send`` refuses
``interject`` before anything is sent (``NotAccepting``: opencode has no interject). The
HTTP client's wording and the server's address (an ssh forward's local port, for a
remote machine) are the stand-in's: ``error sending request for url (<url>)`` on the
stamp's ``server_url``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from shedproto.clients.desktop import AsyncDesktopClient, DesktopError
from shedproto.desktop import (
    DesktopCode,
    Dialect,
    opencode_segment,
    opencode_unreachable,
    opencode_verb_path,
)
from shedproto.servers.desktop import DesktopModel, Lane

from ._helpers import answer
from .test_server import running

LANE = {"machine": "mini", "kind": "opencode", "session_id": "ses_1"}
URL = "http://10.1.2.3:4096/"


def _model() -> DesktopModel:
    model = DesktopModel()
    model.add_machine("mini")
    stamp = {"kind": "opencode", "session_id": "ses_1", "server_url": URL}
    model.add_roost_session("machine:mini", "4", "opencode", extra={"agent_lane": stamp})
    reply = answer(Dialect.TAURI, model, "lane.open", LANE)
    assert reply["ok"], reply
    return model


def _refusal(model: DesktopModel, op: str, extra: dict[str, Any]) -> tuple[str, str]:
    reply = answer(Dialect.TAURI, model, op, {**LANE, **extra})
    assert not reply["ok"], reply
    return reply["error"]["code"], reply["error"]["message"]


VERBS = [
    ("lane.send", {"text": "hi"}, "/session/ses_1/prompt_async"),
    ("lane.cancel", {}, "/session/ses_1/abort"),
    (
        "lane.answer",
        {"approval_id": "per_1", "answer": {"permission": "allow-once"}},
        "/permission/per_1/reply",
    ),
    (
        "lane.answer",
        {"approval_id": "que_1", "answer": {"question": [["yes"]]}},
        "/question/que_1/reply",
    ),
    ("lane.answer", {"approval_id": "que_1", "answer": {"reject": True}}, "/question/que_1/reject"),
]


def _lane_with_approvals() -> tuple[DesktopModel, Lane]:
    model = _model()
    lane = model.lane("mini", "ses_1")
    lane.approvals.extend([{"id": "per_1"}, {"id": "que_1"}])
    return model, lane


@pytest.mark.parametrize(("op", "extra", "path"), VERBS)
def test_a_verb_on_a_dropped_opencode_lane_fails_at_once_as_dial_error(
    op: str, extra: dict[str, Any], path: str
) -> None:
    """A lane back within craze's 10 s wait is no help: opencode does not wait."""
    model, lane = _lane_with_approvals()
    lane.drop(reconnect_in=1.0)
    assert _refusal(model, op, extra) == (
        "unavailable",
        f"opencode {path}: error sending request for url (http://10.1.2.3:4096{path})",
    )
    assert lane.messages == []  # nothing was sent


@pytest.mark.parametrize(("op", "extra", "path"), VERBS)
def test_a_lost_opencode_answer_is_unavailable_not_outcome_unknown(
    op: str, extra: dict[str, Any], path: str
) -> None:
    model, lane = _lane_with_approvals()
    lane.lost_answers = 1
    code, message = _refusal(model, op, extra)
    assert (code, message.split(":")[0]) == ("unavailable", f"opencode {path}")


def test_opencode_has_no_interject() -> None:
    """client.rs:885-897@15e7aae (``send``): ``SendMode::Interject`` is ``NotAccepting``
    (886-888), nothing sent."""
    model = _model()
    assert _refusal(model, "lane.send", {"text": "hi", "mode": "interject"}) == (
        "not_accepting",
        "the session is not accepting that right now",
    )
    assert model.lane("mini", "ses_1").messages == []


def test_a_route_s_id_is_escaped_as_encode_segment_does() -> None:
    assert opencode_segment("a/b c~é") == "a%2Fb%20c~%C3%A9"
    assert opencode_verb_path("lane.cancel", "a/b") == "/session/a%2Fb/abort"
    error = opencode_unreachable("/session/x/abort", "http://10.0.0.2:4096")
    assert error.code == DesktopCode.UNAVAILABLE
    assert error.message == (
        "opencode /session/x/abort: error sending request for url "
        "(http://10.0.0.2:4096/session/x/abort)"
    )


async def test_the_served_verb_fails_without_waiting(short_socket_dir: Path) -> None:
    """The served form waits out a craze lane's reconnect; an opencode verb does not."""
    model = _model()
    model.lane_reconnect_wait = 5.0
    model.lane("mini", "ses_1").drop(reconnect_in=4.0)
    async with (
        running(short_socket_dir, Dialect.TAURI, model=model) as server,
        await AsyncDesktopClient.connect(server.path) as client,
    ):
        start = anyio.current_time()
        with pytest.raises(DesktopError) as info:
            await client.call("lane.cancel", LANE)
        assert info.value.code == "unavailable"
        assert anyio.current_time() - start < 2.0
