"""The agents-host API server connection on the contract (issue 13)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shedproto import LineSkipped, LocalProtocolError
from shedproto.agents_host import (
    API_MAX_FRAME_BYTES,
    ApiConnectionClosed,
    ApiServerConnection,
    ApiState,
    HealthRequest,
    SubmitRequest,
    encode_result,
)
from tests._hypothesis import examples


def test_requests_are_frames_and_bad_lines_queue_their_reply() -> None:
    conn = ApiServerConnection()
    events = conn.receive_data(b'{"id":1,"op":"health"}\nnope\n{"id":2,"op":"health"}\n')
    assert [type(e) for e in events] == [HealthRequest, LineSkipped, HealthRequest]
    assert conn.owed == 2
    assert conn.data_to_send() == b""  # the error line waits behind the reply to id 1
    assert conn.send(b"one\n") == b"one\n"
    assert json.loads(conn.data_to_send())["error"]["code"] == "parse-error"
    conn.send(b"two\n")
    assert conn.owed == 0
    with pytest.raises(LocalProtocolError):
        conn.send(b"three\n")


def test_a_detached_wait_submit_does_not_hold_later_error_lines() -> None:
    conn = ApiServerConnection()
    events = conn.receive_data(
        b'{"id":"s","op":"submit","command":{},"wait":true}\n{"id":3,"op":"nope"}\n'
    )
    assert isinstance(events[0], SubmitRequest)
    assert conn.detach() == "s"
    reply = json.loads(conn.data_to_send())
    assert (reply["id"], reply["error"]["code"]) == (3, "unknown-op")


def test_over_cap_line_after_good_requests_closes_with_its_reply_last() -> None:
    conn = ApiServerConnection()
    data = b'{"id":1,"op":"health"}\n' + b"x" * (API_MAX_FRAME_BYTES + 1)
    events = conn.receive_data(data)
    assert isinstance(events[0], HealthRequest)
    closed = events[-1]
    assert isinstance(closed, ApiConnectionClosed)
    assert closed.reason == "frame_too_large"
    assert closed.error is conn.error is not None
    assert conn.state is ApiState.CLOSED
    assert conn.data_to_send() == b""
    conn.send(encode_result(1, {}))  # the owed reply still goes out, then the error line
    assert json.loads(conn.data_to_send())["error"]["code"] == "frame-too-large"
    with pytest.raises(LocalProtocolError):
        conn.receive_data(b"more")


def test_eof_closes_the_read_side() -> None:
    conn = ApiServerConnection()
    assert conn.receive_data(b'{"id":1,"op":"health"}') == []
    events = conn.receive_data(b"")
    assert [type(e) for e in events] == [HealthRequest, ApiConnectionClosed]
    assert conn.state is ApiState.PEER_CLOSED


@settings(max_examples=examples(200), deadline=None)
@given(data=st.binary(max_size=300), cut=st.integers(min_value=1, max_value=17))
def test_fuzz_every_line_gets_exactly_one_answer_in_order(data: bytes, cut: int) -> None:
    whole = _serve(data, len(data) or 1)
    assert whole == _serve(data, cut)
    lines = [line[:-1] if line.endswith(b"\r") else line for line in data.split(b"\n")]
    assert whole.count(b"\n") == len([line for line in lines if line])


def _serve(data: bytes, chunk: int) -> bytes:
    conn = ApiServerConnection()
    out = bytearray()
    for piece in [data[i : i + chunk] for i in range(0, len(data), chunk)] + [b""]:
        for event in conn.receive_data(piece):
            out += conn.data_to_send()
            if isinstance(event, ApiConnectionClosed):
                break
            if not isinstance(event, LineSkipped):
                out += conn.send(encode_result(event.id, {}))
        out += conn.data_to_send()
    return bytes(out)
