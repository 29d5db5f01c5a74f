"""The core's fast paths (ids, timestamps, consumer) agree with the general code they skip."""

from __future__ import annotations

import os
import time
import uuid

import pytest

from shedproto import ErrorCode, LocalProtocolError
from shedproto.host_agent import (
    ApprovalRequest,
    ApprovalResponse,
    AuditRecord,
    ConsumerConnection,
    ConsumerState,
    Event,
    EventLines,
    Hello,
    HelloAck,
    IdSource,
    LineSkipped,
    Ping,
    decode_consumer_frame,
    encode_frame,
    format_timestamp,
)
from shedproto.host_agent.types import encode_approval_response


def test_id_source_makes_uuid4_strings() -> None:
    ids = IdSource(bytes, block=3)
    first = [ids() for _ in range(7)]  # crosses two refills
    assert first[0] == "00000000-0000-4000-8000-000000000000"
    real = IdSource(os.urandom)
    seen = {real() for _ in range(1000)}
    assert len(seen) == 1000
    for text in seen:
        parsed = uuid.UUID(text)
        assert (parsed.version, parsed.variant, str(parsed)) == (4, uuid.RFC_4122, text)


def test_id_source_errors() -> None:
    with pytest.raises(ValueError, match="block"):
        IdSource(bytes, block=0)
    short = IdSource(lambda n: b"\x00" * (n - 1))
    with pytest.raises(ValueError, match="expected"):
        short()


def test_id_source_variant_bits() -> None:
    ids = IdSource(lambda n: b"\xff" * n, block=1)
    assert ids() == "ffffffff-ffff-4fff-bfff-ffffffffffff"


def test_format_timestamp_cache_is_exact() -> None:
    assert [format_timestamp(t) for t in (0.0, 0.999, 1.0, -0.5, 1783641600.7)] == [
        "1970-01-01T00:00:00Z",
        "1970-01-01T00:00:00Z",
        "1970-01-01T00:00:01Z",
        "1969-12-31T23:59:59Z",
        "2026-07-10T00:00:00Z",
    ]
    for bad in (float("nan"), float("inf"), 1e20):
        with pytest.raises(ValueError, match="time"):
            format_timestamp(bad)


class _Recorded:
    """``os.urandom`` that keeps what it handed out, to replay or check against."""

    def __init__(self) -> None:
        self.drawn: list[bytes] = []

    def __call__(self, n: int) -> bytes:
        self.drawn.append(os.urandom(n))
        return self.drawn[-1]


def test_id_source_matches_uuid_version_4_of_the_same_entropy() -> None:
    entropy = _Recorded()
    ids = IdSource(entropy, block=5)
    made = [ids() for _ in range(12)]  # three refills, the last one partly used
    raw = b"".join(entropy.drawn)
    expected = [str(uuid.UUID(bytes=raw[i : i + 16], version=4)) for i in range(0, 16 * 12, 16)]
    assert made == expected


_RECORDS = [
    AuditRecord(ts="2026-07-10T00:00:00Z", shed="w", ns="n", op="o", result="ok", approval="a"),
    AuditRecord(ts="2026-07-10T00:00:01Z", shed="w", ns="n", op="o", result="ok", approval="a"),
    AuditRecord(ts="t", ns="egress", op="tcp", result="allow"),  # general path: no shed
    AuditRecord(ts='q"', server="s", shed="w", ns="n", op="o", result="r", approval="a", ttl="1h"),
    # larger than EventLines' scratch buffer, then a small one: the buffer grows and shrinks back
    AuditRecord(ts="t", shed="w", ns="n", op="o", result="r", approval="a", detail="\u00e9" * 3000),
    AuditRecord(ts="2026-07-10T00:00:00Z", shed="w", ns="n", op="o", result="ok", approval="a"),
]


def test_event_lines_match_event_line_with_id_source_ids() -> None:
    entropy = _Recorded()
    lines = EventLines(entropy, block=3)
    made = [lines.line(record) for record in _RECORDS * 2]  # four refills; ts back and forth
    replayed = iter(entropy.drawn)
    ids = IdSource(lambda n: next(replayed), block=3)
    for record, line in zip(_RECORDS * 2, made, strict=True):
        assert line == encode_frame(record.to_event(ids())), record


def test_event_lines_errors() -> None:
    with pytest.raises(ValueError, match="block"):
        EventLines(bytes, block=0)
    short = EventLines(lambda n: b"\x00" * (n - 1))
    with pytest.raises(ValueError, match="expected"):
        short.line(_RECORDS[0])


# --------------------------------------------------------------------------- consumer fast paths

_RESPONSE_FIELDS = [
    {"decision": "approve"},
    {"decision": "deny"},
    {"decision": "maybe"},
    {"decision": ""},
    {"decision": "approve", "decided_by": "alice", "scope": "session", "ttl": "5m"},
    {"decision": "deny", "ttl": "1h"},
    {"decision": 'qu"ote\\', "decided_by": "\u00e9\u2028\x00\x1f", "scope": "\ud7ff"},
]


@pytest.mark.parametrize("fields", _RESPONSE_FIELDS)
@pytest.mark.parametrize("request_id", ["r-1", 'a"b\\c\n', "\u00fc\U0001f600", ""])
def test_encode_approval_response_matches_encode_frame(
    fields: dict[str, str], request_id: str
) -> None:
    expected = encode_frame(ApprovalResponse(id="i\t", ts="t", request_id=request_id, **fields))
    decision = fields["decision"]
    rest = {key: value for key, value in fields.items() if key != "decision"}
    got = encode_approval_response("i\t", "t", request_id, decision, **rest)
    assert got == expected
    assert decode_consumer_frame(got) == ApprovalResponse(
        id="i\t", ts="t", request_id=request_id, **fields
    )


def _active_consumer() -> ConsumerConnection:
    conn = ConsumerConnection()
    conn.send(Hello(id="h"))
    conn.receive_data(
        encode_frame(
            HelloAck.accepted_ack(
                id="a", ts="t", version="v", gate_namespaces=(), request_timeout_ms=1
            )
        )
    )
    return conn


def test_consumer_respond_is_send_byte_for_byte() -> None:
    fast, general = _active_consumer(), _active_consumer()
    requests = encode_frame(ApprovalRequest(id="r1")) + encode_frame(ApprovalRequest(id="r2"))
    assert fast.receive_data(requests) == general.receive_data(requests)
    assert set(fast.outstanding) == {"r1", "r2"}
    line = fast.respond("r1", "approve", id="i", ts="t", decided_by="bob", ttl="1m")
    assert line == general.send(
        ApprovalResponse(
            id="i", ts="t", request_id="r1", decision="approve", decided_by="bob", ttl="1m"
        )
    )
    assert set(fast.outstanding) == set(general.outstanding) == {"r2"}


def test_consumer_respond_refuses_what_send_refuses() -> None:
    conn = _active_consumer()
    with pytest.raises(LocalProtocolError) as info:
        conn.respond("nope", "deny", id="i", ts="t")
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    conn.receive_data(encode_frame(ApprovalRequest(id="r")))
    conn.respond("r", "deny", id="i", ts="t")
    with pytest.raises(LocalProtocolError):
        conn.respond("r", "deny", id="i", ts="t")  # answered already
    conn.receive_data(encode_frame(ApprovalRequest(id="s")))
    conn.receive_data(encode_frame(HelloAck.superseded_ack(id="x", ts="t")))
    with pytest.raises(LocalProtocolError) as info:
        conn.respond("s", "approve", id="i", ts="t")
    assert info.value.code is ErrorCode.UNEXPECTED_EVENT
    idle = ConsumerConnection()
    with pytest.raises(LocalProtocolError):
        idle.respond("s", "approve", id="i", ts="t")


def test_consumer_fast_receive_keeps_order_skips_and_state() -> None:
    conn = _active_consumer()
    request = ApprovalRequest(id="r", namespace="ssh-agent")
    event = Event(id="e", result="ok")
    data = (
        encode_frame(request)
        + b"nope\n \n"
        + b'{"v":2,"type":"zzz"}\n'
        + encode_frame(Ping(id="p"))
        + encode_frame(event)
        + encode_frame(HelloAck.superseded_ack(id="s", ts="t"))
        + encode_frame(Event(id="late"))
    )
    events = conn.receive_data(data, wall=0.0)
    assert [type(e) for e in events] == [
        ApprovalRequest,
        LineSkipped,
        LineSkipped,
        Ping,
        Event,
        HelloAck,
        LineSkipped,  # nothing is expected once superseded
    ]
    assert events[0] == request
    assert events[4] == event
    skipped = events[2]
    assert isinstance(skipped, LineSkipped)
    assert skipped.error.code is ErrorCode.UNKNOWN_TYPE
    assert conn.outstanding == {}  # the notice failed the request closed
    assert conn.state is ConsumerState.SUPERSEDED
    assert conn.data_to_send().startswith(b'{"v":2,"type":"pong","id":"p"')


def test_consumer_timestamps_are_kept_per_second_only(monkeypatch: pytest.MonkeyPatch) -> None:
    from shedproto.clients.host_agent import _common

    stamps = _common._Timestamps()
    times = iter([1783641600.2, 1783641600.9, 1783641601.0, 1783641599.5, 1783641599.99])
    monkeypatch.setattr(time, "time", lambda: next(times))
    got = [stamps() for _ in range(5)]
    assert got == [
        "2026-07-10T00:00:00Z",
        "2026-07-10T00:00:00Z",
        "2026-07-10T00:00:01Z",
        "2026-07-09T23:59:59Z",  # the clock stepped back: formatted anew
        "2026-07-09T23:59:59Z",
    ]
