"""The sans-IO envelope and connections: pair tests, edge cases, chunkings, fuzz."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from syrupy.assertion import SnapshotAssertion

from shedproto import Contract, ErrorCode, LocalProtocolError, RemoteProtocolError, Role, herdr
from shedproto.herdr import types as t
from shedproto.herdr._state import CLIENT_TABLE, SERVER_TABLE, Input, State
from tests._hypothesis import examples

PING = b'{"id":"1","method":"ping","params":{}}\n'
PONG = herdr.SuccessResponse(id="1", result=t.PongReply(version="0.8.0", protocol=21))
PONG_LINE = msgspec.json.encode(PONG) + b"\n"


def _feed(conn: Any, data: bytes, mode: str) -> list[Any]:
    if mode == "whole":
        return list(conn.receive_data(data))
    events: list[Any] = []
    for i in range(len(data)):
        events += conn.receive_data(data[i : i + 1])
    return events


@pytest.mark.parametrize("mode", ["whole", "bytewise"])
def test_pair_ping_round_trip(mode: str) -> None:
    client = herdr.ClientConnection()
    server = herdr.ServerConnection()
    wire = client.send(herdr.make_request("ping", id="1"))
    assert wire == PING
    events = _feed(server, wire, mode)
    assert events == [t.PingRequest(id="1", params=t.PingParams())]
    answer = server.send(PONG)
    assert server.state is State.DONE
    got = _feed(client, answer, mode)
    assert got == [PONG]
    assert client.receive_data(b"") == [herdr.ConnectionClosed()]
    assert client.state is State.CLOSED


def test_request_wire_bytes_match_herdr_key_order(snapshot: SnapshotAssertion) -> None:
    request = herdr.make_request("workspace.create", {"cwd": "/tmp/p", "focus": True}, id="req_l1")
    assert herdr.encode_request(request) == (
        b'{"id":"req_l1","method":"workspace.create","params":{"cwd":"/tmp/p","focus":true}}\n'
    )
    assert herdr.encode_request(herdr.make_request("ping", id="1")) == PING
    assert herdr.encode_request(request) == snapshot


def test_pong_wire_bytes_write_null_capabilities() -> None:
    line = msgspec.json.encode(PONG)
    assert line == (
        b'{"id":"1","result":{"type":"pong","version":"0.8.0","protocol":21,"capabilities":null}}'
    )


def test_output_matched_writes_null_matched_line() -> None:
    read = t.PaneReadResult(
        pane_id="w1:p1", workspace_id="w1", tab_id="w1:t1", source="recent", format="text",
        text="", revision=0, truncated=False,
    )  # fmt: skip
    encoded = msgspec.json.encode(t.OutputMatchedReply(pane_id="w1:p1", revision=0, read=read))
    assert b'"matched_line":null' in encoded


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b'{"id":"1","method":"ping"}', ErrorCode.SCHEMA_VIOLATION),  # params is required
        (
            b'{"id":1,"method":"ping","params":{}}',
            ErrorCode.SCHEMA_VIOLATION,
        ),  # id must be a string
        (b'{"id":null,"method":"ping","params":{}}', ErrorCode.SCHEMA_VIOLATION),
        (b'{"id":"1","method":"ping","params":null}', ErrorCode.SCHEMA_VIOLATION),
        (b'{"id":"1","method":"no.such","params":{}}', ErrorCode.UNKNOWN_TYPE),
        (b'{"id":"1","method":"ping","method":"server.stop","params":{}}', ErrorCode.UNKNOWN_TYPE),
        (
            b'{"id":"1","method":"pane.send_text","params":{"pane_id":"w1:p1"}}',
            ErrorCode.SCHEMA_VIOLATION,
        ),
        (b"{not json", ErrorCode.MALFORMED_FRAME),
        (b"[]", ErrorCode.SCHEMA_VIOLATION),
    ],
)
def test_bad_requests_answer_invalid_request_with_empty_id(line: bytes, code: ErrorCode) -> None:
    server = herdr.ServerConnection()
    with pytest.raises(RemoteProtocolError) as info:
        server.receive_data(line + b"\n")
    assert info.value.code is code
    hint = info.value.reply_hint
    assert hint is not None
    assert hint.endswith(b"\n")
    reply = json.loads(hint)
    assert reply["id"] == ""
    assert reply["error"]["code"] == "invalid_request"
    assert reply["error"]["message"].startswith("invalid request: ")
    assert server.state is State.ERROR


def test_invalid_request_reply_bytes(snapshot: SnapshotAssertion) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        herdr.ServerConnection().receive_data(b'{"id":"1","method":"nope","params":{}}\n')
    assert info.value.reply_hint == snapshot


def test_unknown_fields_are_ignored_everywhere() -> None:
    server = herdr.ServerConnection()
    events = server.receive_data(
        b'{"extra":1,"id":"a","method":"pane.get","params":{"pane_id":"w1:p1","x":[1]}}\r\n'
    )
    assert events == [t.PaneGetRequest(id="a", params=t.PaneTarget(pane_id="w1:p1"))]
    answer = b'{"id":"a","result":{"type":"ok","new":true},"trace":"x"}\n'
    client = herdr.ClientConnection()
    client.send(herdr.make_request("pane.close", {"pane_id": "w1:p1"}, id="a"))
    assert client.receive_data(answer) == [herdr.SuccessResponse(id="a", result=t.OkReply())]


@pytest.mark.parametrize(
    "data",
    [b"\xff\xfe\n", b"   \n", b"\n"],
    ids=["invalid-utf8", "whitespace", "empty"],
)
def test_silent_closes_have_no_reply(data: bytes) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        herdr.ServerConnection().receive_data(data)
    assert info.value.reply_hint is None


def test_over_long_request_line_closes_silently() -> None:
    server = herdr.ServerConnection()
    with pytest.raises(RemoteProtocolError) as info:
        server.receive_data(b'{"id":"' + b"x" * (2 << 20))
    assert info.value.code is ErrorCode.FRAME_TOO_LARGE
    assert info.value.reply_hint is None


def test_eof_before_newline_is_dropped_quietly() -> None:
    server = herdr.ServerConnection()
    assert server.receive_data(PING[:-1]) == []
    assert server.receive_data(b"") == [herdr.ConnectionClosed()]
    assert server.state is State.CLOSED


def test_deadline_is_an_input() -> None:
    server = herdr.ServerConnection(accepted_at=100.0)
    assert server.deadline == 100.0 + herdr.REQUEST_TIMEOUT == 105.0
    assert not server.expired(104.9)
    assert server.expired(105.0)
    server.receive_data(PING)
    assert not server.expired(1000.0)


def test_trailing_bytes_end_a_subscription_but_not_an_ordinary_request() -> None:
    sub = (
        b'{"id":"s","method":"events.subscribe",'
        b'"params":{"subscriptions":[{"type":"tab.created"}]}}\n'
    )
    server = herdr.ServerConnection()
    events = server.receive_data(sub + b"x")
    assert isinstance(events[0], t.EventsSubscribeRequest)
    assert events[1] == herdr.ClientGone()
    # herdr has not looked yet: it still writes the acknowledgement, then its
    # first probe ends the stream, so no event may follow
    assert server.state is State.LEAVING
    ack = server.send(herdr.SuccessResponse(id="s", result=t.SubscriptionStartedReply()))
    assert ack == b'{"id":"s","result":{"type":"subscription_started"}}\n'
    assert server.state.value == "closed"
    event = herdr.LifecycleEvent(
        event="tab_closed", data=t.TabClosedEventData(tab_id="w1:t1", workspace_id="w1")
    )
    with pytest.raises(LocalProtocolError):
        server.send(event)

    # a wait that is answered before the first probe (a validation error)
    waiting = herdr.ServerConnection()
    wait = b'{"id":"w","method":"agent.wait","params":{"target":"nope"}}\n'
    assert waiting.receive_data(wait)[1:] == []
    assert waiting.receive_data(b"") == [herdr.ClientGone()]
    assert waiting.state is State.LEAVING
    waiting.send(herdr.ErrorResponse.of("w", "agent_not_found", "agent nope not found"))
    assert waiting.state.value == "closed"

    plain = herdr.ServerConnection()
    assert plain.receive_data(PING + PING) == [t.PingRequest(id="1", params=t.PingParams())]
    assert plain.receive_data(b"more") == []
    plain.send(PONG)


def test_streaming_pair() -> None:
    client = herdr.ClientConnection()
    server = herdr.ServerConnection()
    request = herdr.make_request(
        "events.subscribe", {"subscriptions": [{"type": "workspace.created"}]}, id="s"
    )
    server.receive_data(client.send(request))
    assert server.holds_connection
    wire = server.send(herdr.SuccessResponse(id="s", result=t.SubscriptionStartedReply()))
    assert server.state is State.STREAMING
    ws = t.WorkspaceInfo(
        workspace_id="w1", number=1, label="p", focused=True, pane_count=1, tab_count=1,
        active_tab_id="w1:t1", agent_status="unknown",
    )  # fmt: skip
    event = herdr.LifecycleEvent(
        event="workspace_created", data=t.WorkspaceCreatedEventData(workspace=ws)
    )
    sub_event = herdr.SubscriptionEvent(
        event="pane.agent_status_changed",
        data=t.PaneAgentStatusChangedEvent(pane_id="w1:p1", workspace_id="w1", agent_status="idle"),
    )
    wire += server.send(event) + server.send(sub_event)
    assert b'"event":"workspace_created","data":{"type":"workspace_created"' in wire
    for mode in ("whole", "bytewise"):
        fresh = herdr.ClientConnection()
        fresh.send(request)
        got = _feed(fresh, wire, mode)
        assert got == [
            herdr.SuccessResponse(id="s", result=t.SubscriptionStartedReply()),
            event,
            sub_event,
        ]
        assert fresh.state is State.STREAMING
        assert fresh.receive_data(b"") == [herdr.ConnectionClosed()]
    # the server may not send events outside a stream, nor a second answer
    with pytest.raises(LocalProtocolError):
        server.send(PONG)


def test_client_errors() -> None:
    client = herdr.ClientConnection()
    client.send(herdr.make_request("ping", id="1"))
    with pytest.raises(LocalProtocolError):
        client.send(herdr.make_request("ping", id="2"))
    with pytest.raises(RemoteProtocolError) as info:
        client.receive_data(b"")
    assert info.value.code is ErrorCode.CONNECTION_CLOSED
    done = herdr.ClientConnection()
    done.send(herdr.make_request("ping", id="1"))
    # a good answer followed by an unexpected second line: the answer is kept, then the error
    events = done.receive_data(PONG_LINE + PONG_LINE)
    assert events == [PONG]
    with pytest.raises(RemoteProtocolError):
        done.receive_data(b"")


def test_error_answers_decode() -> None:
    client = herdr.ClientConnection()
    client.send(herdr.make_request("pane.get", {"pane_id": "w9:p9"}, id="7"))
    got = client.receive_data(
        b'{"id":"7","error":{"code":"pane_not_found","message":"pane w9:p9 not found"}}\n'
    )
    assert got == [
        herdr.ErrorResponse.of("7", herdr.HerdrErrorCode.PANE_NOT_FOUND, "pane w9:p9 not found")
    ]


def test_make_request_validates() -> None:
    with pytest.raises(LocalProtocolError) as info:
        herdr.make_request("no.such", id="1")
    assert info.value.code is ErrorCode.UNKNOWN_TYPE
    with pytest.raises(LocalProtocolError) as bad:
        herdr.make_request("pane.read", {"pane_id": "w1:p1", "source": "nowhere"}, id="1")
    assert bad.value.code is ErrorCode.INVALID_ARGUMENT
    assert bad.value.path == "$.source"
    with pytest.raises(herdr.VersionMismatchError):
        herdr.make_request("ping", id="1", protocol=23)


def test_protocol20_decodes_its_own_shapes() -> None:
    line = (
        b'{"id":"1","method":"workspace.close","params":{"workspace_id":"w1","close_group":true}}'
    )
    old: Any = herdr.decode_request(line, 20)
    new: Any = herdr.decode_request(line, 21)
    assert isinstance(old.params, t.WorkspaceTarget)
    assert new.params == t.WorkspaceCloseParams(workspace_id="w1", close_group=True)


def test_transition_table_rejects_everything_else() -> None:
    keys = [*Input, herdr.SuccessResponse, herdr.ErrorResponse, t.EventEnvelope]
    keys.append(herdr.SubscriptionEvent)
    for table in (CLIENT_TABLE, SERVER_TABLE):
        for state in State:
            for key in keys:
                if table.allows(state, key):
                    assert table.next_state(state, key, Role.REMOTE) is not State.ERROR
                else:
                    with pytest.raises(RemoteProtocolError):
                        table.next_state(state, key, Role.REMOTE)
    assert not CLIENT_TABLE.allows(State.DONE, t.EventEnvelope)
    assert SERVER_TABLE.error is CLIENT_TABLE.error is State.ERROR


def test_both_connections_are_built_on_the_contract() -> None:
    assert issubclass(herdr.ClientConnection, Contract)
    assert issubclass(herdr.ServerConnection, Contract)
    assert herdr.ConnectionClosed() == herdr.ConnectionClosed(reason="eof", error=None)


def test_invalid_request_reply_waits_in_the_outbox() -> None:
    server = herdr.ServerConnection()
    with pytest.raises(RemoteProtocolError) as info:
        server.receive_data(b'{"id":"1","method":"nope","params":{}}\n')
    assert server.data_to_send() == info.value.reply_hint
    assert server.data_to_send() == b""
    assert server.error is info.value
    silent = herdr.ServerConnection()
    with pytest.raises(RemoteProtocolError):
        silent.receive_data(b"\n")
    assert silent.data_to_send() == b""


def test_request_deadline_through_next_deadline_and_handle_timeout() -> None:
    server = herdr.ServerConnection(accepted_at=10.0, request_timeout=2.0)
    assert server.next_deadline() == 12.0
    assert server.handle_timeout(11.9) == []
    assert server.handle_timeout(12.0) == [herdr.ConnectionClosed(reason="timeout")]
    assert server.state is State.CLOSED
    assert server.next_deadline() is None
    answered = herdr.ServerConnection(accepted_at=10.0, request_timeout=2.0)
    answered.receive_data(PING)
    assert answered.next_deadline() is None
    assert answered.handle_timeout(99.0) == []


def test_request_line_before_an_over_long_tail_is_not_lost() -> None:
    """Good before bad: herdr reads the first line; an over-cap tail is the client's later data."""
    wait = b'{"id":"w","method":"agent.wait","params":{"target":"nope"}}\n'
    server = herdr.ServerConnection(max_request_bytes=len(wait) + 10)
    events = server.receive_data(wait + b"x" * 100)
    assert isinstance(events[0], t.AgentWaitRequest)
    assert events[1:] == [herdr.ClientGone()]
    plain = herdr.ServerConnection(max_request_bytes=len(PING) + 10)
    assert plain.receive_data(PING + b"x" * 100) == [t.PingRequest(id="1", params=t.PingParams())]


def test_client_failure_is_sticky_and_named_after_the_deferred_error() -> None:
    client = herdr.ClientConnection()
    client.send(herdr.make_request("ping", id="1"))
    assert client.receive_data(PONG_LINE + b"{bad\n") == [PONG]
    with pytest.raises(RemoteProtocolError):
        client.receive_data(b"")
    assert client.state is State.ERROR
    with pytest.raises(LocalProtocolError, match="failed earlier"):
        client.receive_data(b"")


@settings(max_examples=examples(300), deadline=None)
@given(data=st.binary(max_size=300), cut=st.integers(min_value=0, max_value=300))
def test_fuzz_server_connection(data: bytes, cut: int) -> None:
    server = herdr.ServerConnection()
    try:
        events = server.receive_data(data[:cut]) + server.receive_data(data[cut:])
        events += server.receive_data(b"")
    except RemoteProtocolError:
        return
    for event in events:
        assert isinstance(event, (t.Request, herdr.ClientGone, herdr.ConnectionClosed))


@settings(max_examples=examples(300), deadline=None)
@given(data=st.binary(max_size=300), subscribe=st.booleans())
def test_fuzz_client_connection(data: bytes, subscribe: bool) -> None:
    client = herdr.ClientConnection()
    method = "events.subscribe" if subscribe else "ping"
    params: dict[str, Any] = {"subscriptions": []} if subscribe else {}
    client.send(herdr.make_request(method, params, id="1"))
    if subscribe:
        client.receive_data(b'{"id":"1","result":{"type":"subscription_started"}}\n')
    try:
        for chunk in (data, b""):
            for event in client.receive_data(chunk):
                assert isinstance(
                    event,
                    (
                        herdr.SuccessResponse,
                        herdr.ErrorResponse,
                        herdr.ConnectionClosed,
                        msgspec.Struct,
                    ),
                )
    except RemoteProtocolError:
        pass


@settings(max_examples=examples(200), deadline=None)
@given(st.sampled_from(sorted(t.PROTOCOL_TABLES[21][0])), st.text(max_size=5))
def test_every_method_round_trips_with_default_params(method: str, request_id: str) -> None:
    params_type = t.PROTOCOL_TABLES[21][1][method]
    try:
        params = msgspec.convert({}, params_type)
    except msgspec.ValidationError:
        return  # the method has required params
    request = herdr.make_request(method, params, id=request_id, protocol=21)
    wire = herdr.encode_request(request)
    assert herdr.decode_request(wire[:-1], 21) == request


def test_an_error_line_ends_a_stream_on_both_sides() -> None:
    """Protocol 22's ``events_lost``: one error line with the request id ends the stream."""
    request = herdr.make_request(
        "events.subscribe", {"subscriptions": [{"type": "workspace.renamed"}]}, id="s"
    )
    client, server = herdr.ClientConnection(), herdr.ServerConnection()
    server.receive_data(client.send(request))
    wire = server.send(herdr.SuccessResponse(id="s", result=t.SubscriptionStartedReply()))
    lost = herdr.ErrorResponse.of("s", herdr.EVENTS_LOST, "fell behind")
    wire += server.send(lost)
    assert server.state is State.DONE
    with pytest.raises(LocalProtocolError):
        server.send(lost)  # nothing may follow it
    got = client.receive_data(wire)
    assert got[-1] == lost
    assert client.state is State.DONE
