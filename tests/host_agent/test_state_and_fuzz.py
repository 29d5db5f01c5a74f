from __future__ import annotations

import itertools
from enum import Enum
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shedproto import LocalProtocolError, RemoteProtocolError, Role, TransitionTable
from shedproto.host_agent import (
    AGENT_TABLE,
    AGENT_TRANSITIONS,
    CONSUMER_TABLE,
    CONSUMER_TRANSITIONS,
    AgentConnection,
    AgentInput,
    AgentState,
    ApprovalRequest,
    ApprovalResponse,
    ConnectionClosed,
    ConsumerConnection,
    ConsumerInput,
    ConsumerState,
    CredentialGet,
    CredentialResponse,
    Event,
    Hello,
    HelloAck,
    LineSkipped,
    Ping,
    Pong,
    TokenGet,
    TokenResponse,
    decode_agent_frame,
    decode_consumer_frame,
    encode_frame,
)
from tests._hypothesis import examples

CONSUMER_FRAMES = (Hello, ApprovalResponse, Pong, TokenGet, CredentialGet)
AGENT_FRAMES = (ApprovalRequest, Event, Ping, TokenResponse, CredentialResponse)
AGENT_KEYS = (*CONSUMER_FRAMES, *AGENT_FRAMES, *AgentInput)
CONSUMER_KEYS = (*CONSUMER_FRAMES, *AGENT_FRAMES, *ConsumerInput)


def test_ends_are_legal_in_every_state() -> None:
    for state in AgentState:
        for end in (AgentInput.EOF, AgentInput.OVERSIZE, AgentInput.CLOSE):
            assert AGENT_TRANSITIONS[state, end] is AgentState.CLOSED
    for cstate in ConsumerState:
        for cend in (ConsumerInput.EOF, ConsumerInput.OVERSIZE, ConsumerInput.CLOSE):
            assert CONSUMER_TRANSITIONS[cstate, cend] is ConsumerState.CLOSED


def test_every_pair_either_transitions_or_raises_by_who_caused_it() -> None:
    cases: list[tuple[TransitionTable[Any], type[Enum], tuple[object, ...]]] = [
        (AGENT_TABLE, AgentState, AGENT_KEYS),
        (CONSUMER_TABLE, ConsumerState, CONSUMER_KEYS),
    ]
    for table, states, keys in cases:
        allowed = 0
        for state, key in itertools.product(states, keys):
            if table.allows(state, key):
                allowed += 1
                assert table.next_state(state, key, Role.LOCAL) is table.transitions[state, key]
                continue
            with pytest.raises(LocalProtocolError):
                table.next_state(state, key, Role.LOCAL)
            with pytest.raises(RemoteProtocolError):
                table.next_state(state, key, Role.REMOTE)
        assert allowed == len(table.transitions)


def test_closed_is_terminal() -> None:
    for (state, _), target in AGENT_TRANSITIONS.items():
        if state is AgentState.CLOSED:
            assert target is AgentState.CLOSED
    for (cstate, _), ctarget in CONSUMER_TRANSITIONS.items():
        if cstate is ConsumerState.CLOSED:
            assert ctarget is ConsumerState.CLOSED


FRAGMENTS = st.sampled_from(
    [
        b'{"type":"hello"}\n',
        b'{"type":"pong"}\n',
        b'{"type":"approval_response","request_id":"r","decision":"approve"}\n',
        b"\n",
        b"\r\n",
        b"{",
        b"}",
        b'"',
        b"\xff",
        b'{"type":"token.get","id":1}\n',
        b'{"v":2,"type":"hello_ack","accepted":true}\n',
        b'{"type":"ping"}\n',
        b'{"type":"hello_ack","accepted":false,"reason":"superseded"}\n',
        b'{"type":"approval_request","id":"r"}\n',
    ]
)
STREAMS = st.one_of(st.binary(max_size=600), st.lists(FRAGMENTS, max_size=12).map(b"".join))


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    pieces, last = [], 0
    for point in points:
        pieces.append(data[last:point])
        last = point
    pieces.append(data[last:])
    return [p for p in pieces if p]


@settings(max_examples=examples(300), deadline=None)
@given(STREAMS, st.lists(st.integers(0, 1000), max_size=8), st.booleans())
def test_agent_connection_never_raises_for_peer_bytes(
    data: bytes, cuts: list[int], eof: bool
) -> None:
    conn = AgentConnection(accepted_at=0.0)
    events: list[object] = []
    for chunk in split(data, cuts):
        events += conn.receive_data(chunk)
        if conn.state is AgentState.HELLO_RECEIVED:
            conn.accept(
                HelloAck.accepted_ack(
                    id="a", ts="t", version="v", gate_namespaces=(), request_timeout_ms=1
                ),
                now=0,
            )
    if eof:
        events += conn.receive_data(b"")
        assert conn.state is AgentState.CLOSED
    closes = [e for e in events if isinstance(e, ConnectionClosed)]
    assert len(closes) <= 1
    if closes:
        assert events[-1] is closes[0]
    if events and not isinstance(events[0], Hello):
        assert isinstance(events[0], ConnectionClosed)  # nothing else before the hello


@settings(max_examples=examples(300), deadline=None)
@given(STREAMS, st.lists(st.integers(0, 1000), max_size=8))
def test_chunking_does_not_change_the_events(data: bytes, cuts: list[int]) -> None:
    whole = AgentConnection(accepted_at=0.0)
    pieces = AgentConnection(accepted_at=0.0)
    a = whole.receive_data(data) + whole.receive_data(b"")
    b: list[object] = []
    for chunk in split(data, cuts):
        b += pieces.receive_data(chunk)
    b += pieces.receive_data(b"")
    assert [normal(e) for e in a] == [normal(e) for e in b]


def normal(event: object) -> object:
    if isinstance(event, ConnectionClosed):
        return ("closed", event.reason, event.error.code if event.error else None)
    if isinstance(event, LineSkipped):
        return ("skipped", event.error.code)
    return event


@settings(max_examples=examples(300), deadline=None)
@given(STREAMS, st.lists(st.integers(0, 1000), max_size=8))
def test_consumer_connection_never_raises_for_peer_bytes(data: bytes, cuts: list[int]) -> None:
    conn = ConsumerConnection()
    conn.send(Hello())
    for chunk in split(data, cuts):
        for event in conn.receive_data(chunk):
            assert not isinstance(event, (bytes, str))
    conn.receive_data(b"")
    assert conn.state is ConsumerState.CLOSED


@settings(max_examples=examples(500), deadline=None)
@given(st.binary(max_size=300))
def test_decoders_return_frames_or_remote_errors(line: bytes) -> None:
    for decode in (decode_consumer_frame, decode_agent_frame):
        try:
            frame = decode(line)
        except RemoteProtocolError:
            continue
        assert encode_frame(frame).endswith(b"\n")


def test_skipped_lines_carry_remote_errors() -> None:
    conn = AgentConnection(accepted_at=0.0)
    conn.receive_data(b'{"type":"hello"}\n')
    conn.accept(
        HelloAck.accepted_ack(
            id="a", ts="t", version="v", gate_namespaces=(), request_timeout_ms=1
        ),
        now=0,
    )
    (event,) = conn.receive_data(b"\x00\n")
    assert isinstance(event, LineSkipped)
    assert isinstance(event.error, RemoteProtocolError)


TEXT = st.text(max_size=12)


@settings(max_examples=examples(200), deadline=None)
@given(
    st.fixed_dictionaries(
        dict.fromkeys(
            (
                "id",
                "ts",
                "server",
                "shed",
                "ns",
                "op",
                "result",
                "detail",
                "code",
                "reason",
                "approval",
                "decided_by",
                "scope",
                "ttl",
            ),
            TEXT,
        )
    )
)
def test_event_omit_rules_and_round_trip(fields: dict[str, str]) -> None:
    import json

    from shedproto.host_agent import Event

    event = Event(**fields)
    wire = encode_frame(event)
    decoded = json.loads(wire)
    assert list(decoded)[:4] == ["v", "type", "id", "ts"]
    always = {"v", "type", "id", "ts", "kind", "result"}
    for name, value in fields.items():
        assert (name in decoded) is (name in always or value != ""), name
    assert decode_agent_frame(wire[:-1]) == event


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(TEXT, TEXT), max_size=4), TEXT, st.booleans())
def test_live_status_round_trip(pairs: list[tuple[str, str]], name: str, connected: bool) -> None:
    from shedproto.host_agent import (
        NamespaceHealth,
        ServerHealth,
        build_live_status,
        decode_live_status,
        encode_live_status,
    )

    status = build_live_status(
        version="v",
        pid=1,
        started_at="s",
        written_at="w",
        config_path=name,
        policies=dict(pairs),
        socket_path="/s",
        consumer_name=name if connected else None,
        servers=[
            ServerHealth(name=a, url=b, namespaces=(NamespaceHealth(namespace=b),))
            for a, b in pairs
        ],
    )
    assert decode_live_status(encode_live_status(status)) == status
