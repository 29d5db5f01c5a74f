"""The socket API's frames: exact bytes, error replies, and fuzzed decoders."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shedproto import RemoteProtocolError
from shedproto.agents_host import (
    HealthRequest,
    SubmitRequest,
    SubscribeRequest,
    decode_reply,
    decode_request,
    encode_error,
    encode_event,
)
from tests._hypothesis import examples


def test_requests_decode() -> None:
    assert decode_request(b'{"id":1,"op":"health"}') == HealthRequest(id=1)
    submit = decode_request(b'{"id":"a","op":"submit","command":"{}","wait":true}')
    assert submit == SubmitRequest(id="a", command="{}", wait=True)
    assert decode_request(b'{"id":2,"op":"subscribe"}') == SubscribeRequest(id=2)


@pytest.mark.parametrize(
    ("line", "reply"),
    [
        (
            b"nope",
            b'{"id":null,"ok":false,"error":{"code":"parse-error",'
            b'"message":"request is not a JSON object"}}\n',
        ),
        (
            b'{"id":3,"op":"fly"}',
            b'{"id":3,"ok":false,"error":{"code":"unknown-op","message":"unknown op: fly"}}\n',
        ),
        (
            b'{"id":4,"op":"health","x":1}',
            b'{"id":4,"ok":false,"error":{"code":"invalid-request",'
            b'"message":"Object contains unknown field `x`"}}\n',
        ),
        (
            b'{"id":5,"op":"receipts","limit":5000}',
            b'{"id":5,"ok":false,"error":{"code":"invalid-request",'
            b'"message":"limit must be from 1 through 1000"}}\n',
        ),
    ],
)
def test_error_replies_are_exact(line: bytes, reply: bytes) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        decode_request(line)
    assert info.value.reply_hint == reply


def test_replies_and_events() -> None:
    error = decode_reply(encode_error(1, "not-accepting", "stopping"))
    assert (error.ok, error.error and error.error.code) == (False, "not-accepting")
    event = decode_reply(encode_event("health", {"status": "ready"}))
    assert (event.event, event.data) == ("health", {"status": "ready"})
    with pytest.raises(RemoteProtocolError):
        decode_reply(b'{"id":1}')


@settings(max_examples=examples(300), deadline=None)
@given(st.binary(max_size=200))
def test_fuzz_request_decoder(data: bytes) -> None:
    try:
        decode_request(data)
    except RemoteProtocolError as exc:
        assert exc.reply_hint is not None
        assert exc.reply_hint.endswith(b"\n")
        decode_reply(exc.reply_hint)


@settings(max_examples=examples(300), deadline=None)
@given(st.binary(max_size=200))
def test_fuzz_reply_decoder(data: bytes) -> None:
    try:
        reply = decode_reply(data)
    except RemoteProtocolError as exc:
        assert exc.code.value in ("malformed_frame", "schema_violation")
    else:
        assert reply.ok is not None or reply.event is not None
