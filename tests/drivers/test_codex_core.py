"""The sans-IO codex app-server core: framing, ids, server requests, state, operations."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shedproto import LocalProtocolError, RemoteProtocolError
from shedproto.connector import AgentSourceConfig
from shedproto.drivers.codex import (
    TRANSITIONS,
    ApprovalPolicy,
    CodexClientConnection,
    CodexConfigError,
    CodexInput,
    CodexState,
    ConnectionClosed,
    ErrorResponse,
    HandshakeComplete,
    InventoryCursor,
    MalformedLine,
    Notification,
    PageWalk,
    Response,
    ServerRequest,
    inventory_page,
    item_of_entry,
    launch_plan,
    parse_inventory_cursor,
    parse_user_agent_version,
    server_request_answer,
    thread_list_params,
    thread_messages,
    thread_summary,
    transition,
    turn_outcome,
    turn_start_params,
)
from tests._hypothesis import examples


def line(obj: Any) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def state_of(connection: CodexClientConnection) -> CodexState:
    return connection.state


def ready() -> CodexClientConnection:
    connection = CodexClientConnection()
    request_id, _ = connection.initialize(name="t", version="1")
    events = connection.receive_data(
        line({"id": request_id, "result": {"userAgent": "t/0.171.0 (x)"}})
    )
    assert isinstance(events[0], HandshakeComplete)
    return connection


def test_initialize_bytes_and_handshake(snapshot: Any) -> None:
    connection = CodexClientConnection()
    request_id, data = connection.initialize(name="commonfabric-agents-connector", version="0.1.0")
    assert request_id == 1
    assert data == snapshot
    assert b"jsonrpc" not in data
    assert connection.state is CodexState.INITIALIZING
    events = connection.receive_data(
        line(
            {
                "id": 1,
                "result": {
                    "userAgent": "probe/0.171.0 (Debian 12.0.0; x86_64) xterm",
                    "codexHome": "/h",
                },
            }
        )
    )
    (done,) = events
    assert isinstance(done, HandshakeComplete)
    assert done.version == "0.171.0"
    assert done.reply == b'{"method":"initialized"}\n'
    assert state_of(connection) is CodexState.READY
    assert connection.user_agent is not None


def test_requests_before_the_handshake_are_a_local_error() -> None:
    connection = CodexClientConnection()
    with pytest.raises(LocalProtocolError):
        connection.send_request("thread/list", {})
    connection.initialize(name="t", version="1")
    with pytest.raises(LocalProtocolError):
        connection.initialize(name="t", version="1")
    with pytest.raises(LocalProtocolError):
        connection.send_request("thread/list", {})


def test_initialize_error_moves_to_error() -> None:
    connection = CodexClientConnection()
    connection.initialize(name="t", version="1")
    (event,) = connection.receive_data(
        line({"id": 1, "error": {"code": -32600, "message": "Already initialized"}})
    )
    assert isinstance(event, ErrorResponse)
    assert event.method == "initialize"
    assert connection.state is CodexState.ERROR


def test_ids_rise_and_out_of_order_answers_pair_by_id() -> None:
    connection = ready()
    first, _ = connection.send_request("thread/list", {"archived": False})
    second, data = connection.send_request("thread/read", {"threadId": "t"})
    assert (first, second) == (2, 3)
    assert json.loads(data) == {"id": 3, "method": "thread/read", "params": {"threadId": "t"}}
    events = connection.receive_data(
        line({"id": 3, "result": {"thread": {}}}) + line({"id": 2, "result": {"data": []}})
    )
    assert [(e.id, e.method) for e in events if isinstance(e, Response)] == [
        (3, "thread/read"),
        (2, "thread/list"),
    ]
    assert connection.pending == {}


def test_params_omitted_when_none() -> None:
    connection = ready()
    _, data = connection.send_request("account/read")
    assert data == b'{"id":2,"method":"account/read"}\n'


def test_notifications_keep_emitted_at_and_unknown_methods() -> None:
    connection = ready()
    events = connection.receive_data(
        line({"method": "configWarning", "params": {"x": 1}, "emittedAtMs": 17})
        + line({"method": "brand/new", "jsonrpc": "2.0"})
    )
    assert events == [
        Notification(method="configWarning", params={"x": 1}, emitted_at_ms=17),
        Notification(method="brand/new", params=None, emitted_at_ms=None),
    ]


def test_stray_response_has_no_method() -> None:
    connection = ready()
    (event,) = connection.receive_data(line({"id": 99, "result": {}}))
    assert isinstance(event, Response)
    assert event.method is None


def test_server_requests_are_answered_per_policy() -> None:
    connection = ready()
    params = {
        "threadId": "t",
        "turnId": "u",
        "itemId": "i",
        "startedAtMs": 1,
        "command": "rm -rf build",
        "cwd": "/w",
    }
    (event,) = connection.receive_data(
        line({"id": 0, "method": "item/commandExecution/requestApproval", "params": params})
    )
    assert isinstance(event, ServerRequest)
    assert event.reply == b'{"id":0,"result":{"decision":"decline"}}\n'
    (unknown,) = connection.receive_data(line({"id": "s-1", "method": "mystery/ask", "params": {}}))
    assert isinstance(unknown, ServerRequest)
    reply = json.loads(unknown.reply)
    assert reply["id"] == "s-1"
    assert reply["error"]["code"] == -32601


@pytest.mark.parametrize(
    ("method", "params", "declined", "approved"),
    [
        ("item/fileChange/requestApproval", {}, {"decision": "decline"}, {"decision": "accept"}),
        (
            "execCommandApproval",
            {},
            {"decision": {"denied": {"rejection": "the connector has no approval surface"}}},
            {"decision": "approved"},
        ),
        (
            "applyPatchApproval",
            {},
            {"decision": {"denied": {"rejection": "the connector has no approval surface"}}},
            {"decision": "approved"},
        ),
        (
            "item/permissions/requestApproval",
            {"permissions": {"network": True}},
            {"permissions": {}},
            {"permissions": {"network": True}, "scope": "turn"},
        ),
        ("item/tool/requestUserInput", {}, {"answers": {}}, {"answers": {}}),
        (
            "mcpServer/elicitation/request",
            {},
            {"action": "decline", "content": None},
            {"action": "decline", "content": None},
        ),
    ],
)
def test_answers_never_cancel(
    method: str, params: dict[str, Any], declined: Any, approved: Any
) -> None:
    assert server_request_answer(method, params, ApprovalPolicy()) == (declined, None)
    assert server_request_answer(method, params, ApprovalPolicy(approve=True)) == (approved, None)


def test_completed_turns_are_remembered_for_late_waiters() -> None:
    connection = ready()
    turn = {"id": "turn-9", "status": "completed", "items": []}
    connection.receive_data(
        line({"method": "turn/completed", "params": {"threadId": "t", "turn": turn}})
    )
    assert connection.completed_turn("turn-9") == turn
    assert connection.completed_turn("turn-8") is None
    for index in range(600):
        connection.receive_data(
            line(
                {
                    "method": "turn/completed",
                    "params": {"turn": {"id": f"x{index}", "status": "completed"}},
                }
            )
        )
    assert connection.completed_turn("turn-9") is None
    assert connection.completed_turn("x599") is not None
    assert len(connection.notifications) == 500


def test_eof_reports_pending_and_closes() -> None:
    connection = ready()
    connection.send_request("turn/start", {})
    events = connection.receive_data(b'{"id":2,"resu')
    assert events == []
    (closed,) = connection.receive_data(b"")
    assert closed == ConnectionClosed(pending=(2,))
    assert connection.state is CodexState.CLOSED
    with pytest.raises(LocalProtocolError):
        connection.receive_data(b"{}\n")


def test_malformed_lines_are_skipped_not_fatal() -> None:
    connection = ready()
    events = connection.receive_data(b"not json\n[1,2]\n{}\n" + line({"method": "ok"}))
    assert [type(e) for e in events] == [MalformedLine, MalformedLine, MalformedLine, Notification]
    assert connection.state is CodexState.READY


STREAM = (
    line({"id": 1, "result": {"userAgent": "a/0.1 (x)"}})
    + line({"method": "configWarning", "params": {}, "emittedAtMs": 1})
    + line({"id": 0, "method": "item/fileChange/requestApproval", "params": {}})
    + line({"method": "turn/completed", "params": {"turn": {"id": "z", "status": "completed"}}})
)


def feed(chunks: list[bytes]) -> list[Any]:
    connection = CodexClientConnection()
    connection.initialize(name="a", version="1")
    events: list[Any] = []
    for chunk in chunks:
        events += connection.receive_data(chunk)
    return events


def test_whole_bytewise_and_with_trailing_data_agree() -> None:
    whole = feed([STREAM])
    bytewise = feed([STREAM[i : i + 1] for i in range(len(STREAM))])
    trailing = feed([STREAM + b'{"method":"partial'])
    assert len(whole) == 4
    assert bytewise == whole
    assert trailing == whole


def test_over_cap_line_closes_after_earlier_lines() -> None:
    from shedproto._framing import FramingPolicy

    connection = CodexClientConnection(framing=FramingPolicy(max_frame_bytes=64))
    connection.initialize(name="a", version="1")
    events = connection.receive_data(line({"method": "a"}) + b"x" * 100)
    assert isinstance(events[0], Notification)
    assert isinstance(events[-1], ConnectionClosed)
    assert events[-1].pending == (1,)
    assert events[-1].error is not None
    assert connection.state is CodexState.ERROR


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.binary(max_size=64), max_size=8))
def test_fuzz_receive_data_yields_events_or_remote_errors(chunks: list[bytes]) -> None:
    connection = ready()
    try:
        for chunk in chunks:
            if chunk:
                connection.receive_data(chunk)
        connection.receive_data(b"")
    except RemoteProtocolError:
        pass


def test_transition_table_is_closed() -> None:
    for state in CodexState:
        for event in CodexInput:
            if (state, event) in TRANSITIONS:
                assert transition(state, event) is TRANSITIONS[state, event]
            else:
                with pytest.raises(LocalProtocolError):
                    transition(state, event)


@pytest.mark.parametrize(
    ("agent", "version"),
    [
        ("probe/0.171.0 (Debian; x86_64) xterm", "0.171.0"),
        ("noslash (x)", None),
        ("a/ (x)", None),
        (None, None),
    ],
)
def test_user_agent_version(agent: Any, version: str | None) -> None:
    assert parse_user_agent_version(agent) == version


@pytest.mark.parametrize(
    ("cursor", "parsed"),
    [
        (None, InventoryCursor(archived=False, cursor=None)),
        ("active:abc", InventoryCursor(archived=False, cursor="abc")),
        ("archived:", InventoryCursor(archived=True, cursor=None)),
        ("archived:a:b", InventoryCursor(archived=True, cursor="a:b")),
    ],
)
def test_cursor_forms(cursor: str | None, parsed: InventoryCursor) -> None:
    assert parse_inventory_cursor(cursor) == parsed


@pytest.mark.parametrize("cursor", ["", "active:", "active", "archived", "other:x"])
def test_invalid_cursors(cursor: str) -> None:
    with pytest.raises(LocalProtocolError, match="invalid Codex cursor"):
        parse_inventory_cursor(cursor)


def test_inventory_page_cursor_rules() -> None:
    active = InventoryCursor(archived=False, cursor=None)
    assert thread_list_params(active) == {"archived": False}
    assert inventory_page(active, {"data": [], "nextCursor": "n"}).nextCursor == "active:n"
    assert inventory_page(active, {"data": [], "nextCursor": None}).nextCursor == "archived:"
    assert inventory_page(active, {"data": []}).nextCursor == "archived:"
    repeat = InventoryCursor(archived=False, cursor="n")
    assert inventory_page(repeat, {"data": [], "nextCursor": "n"}).nextCursor == "archived:"
    archived = InventoryCursor(archived=True, cursor=None)
    assert inventory_page(archived, {"data": [], "nextCursor": "m"}).nextCursor == "archived:m"
    assert inventory_page(archived, {"data": [], "nextCursor": ""}).nextCursor is None
    page = inventory_page(archived, {"data": [{"id": "a"}, {"noid": 1}, "junk"]})
    assert [s.nativeSessionId for s in page.sessions] == ["a"]
    assert page.sessions[0].archived is True
    with pytest.raises(LocalProtocolError):
        inventory_page(active, {"nope": []})


@pytest.mark.parametrize(
    ("status", "active"),
    [
        ({"type": "active", "activeFlags": ["waitingOnApproval"]}, True),
        ({"type": "idle"}, False),
        ({"type": "notLoaded"}, False),
        ({"type": "systemError"}, False),
        (None, False),
    ],
)
def test_thread_status_mapping(status: Any, active: bool) -> None:
    summary = thread_summary(
        {"id": "t", "status": status, "name": "", "preview": ""}, archived=None
    )
    assert summary.active is active
    assert summary.title is None


def test_turn_start_policy_values() -> None:
    plain = turn_start_params("t", "hi", allow_danger_full_access=False)
    assert "approvalPolicy" not in plain
    assert "sandboxPolicy" not in plain
    danger = turn_start_params("t", "hi", allow_danger_full_access=True)
    assert danger["approvalPolicy"] == "never"
    assert danger["sandboxPolicy"] == {"type": "dangerFullAccess"}
    assert "sandbox" not in danger


def test_turn_outcomes() -> None:
    assert turn_outcome({"id": "u", "status": "completed"}).status == "succeeded"
    interrupted = turn_outcome({"id": "u", "status": "interrupted"})
    assert interrupted.error is not None
    assert interrupted.error.code == "cancelled"
    transient = turn_outcome(
        {
            "id": "u",
            "status": "failed",
            "error": {
                "message": "m",
                "codexErrorInfo": {"httpConnectionFailed": {"httpStatusCode": None}},
            },
        }
    )
    assert transient.error is not None
    assert (transient.error.code, transient.error.retryable) == ("codex-httpConnectionFailed", True)
    bare = turn_outcome({"id": "u", "status": "failed", "error": None})
    assert bare.error is not None
    assert bare.error.code == "codex-turn-failed"
    odd = turn_outcome({"id": "u", "status": "paused"})
    assert odd.error is not None
    assert odd.error.code == "codex-turn-status"
    assert odd.providerOperationId == "u"


def source(**fields: Any) -> AgentSourceConfig:
    return AgentSourceConfig(id="c", driver="codex-app-server", enabled=True, **fields)


def test_launch_plans() -> None:
    plain = launch_plan(
        source(codexHome="/h", env={"A": "1"}, cwd="/w"), {"PATH": "/bin", "A": "0"}
    )
    assert plain.argv == ("codex", "app-server", "--listen", "stdio://")
    assert plain.env == {"PATH": "/bin", "A": "1", "CODEX_HOME": "/h"}
    assert plain.cwd == "/w"
    assert plain.prepare is None
    custom = launch_plan(source(codexBin="/opt/codex", command=("my", "cmd")), {})
    assert custom.argv == ("my", "cmd")
    proxy = launch_plan(
        source(codexTransport="proxy", codexSocket="/s.sock", codexBin="/b"),
        {},
        allow_websocket=True,
    )
    assert proxy.argv == ("/b", "app-server", "proxy", "--sock", "/s.sock")
    managed = launch_plan(source(codexTransport="managed"), {}, allow_websocket=True)
    assert managed.prepare == ("codex", "app-server", "daemon", "start")
    assert managed.argv == ("codex", "app-server", "proxy")
    for transport in ("managed", "proxy"):
        with pytest.raises(CodexConfigError) as caught:
            launch_plan(source(codexTransport=transport), {})
        assert caught.value.code == "codex-transport-unsupported"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=6,
)
THREADS = st.dictionaries(
    st.sampled_from(["id", "name", "preview", "cwd", "createdAt", "updatedAt", "status", "turns"]),
    JSON,
    max_size=8,
)


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(THREADS, max_size=4), JSON)
def test_fuzz_thread_mapping_never_crashes(threads: list[dict[str, Any]], turns: Any) -> None:
    page = inventory_page(InventoryCursor(archived=False, cursor=None), {"data": threads})
    assert all(isinstance(s.nativeSessionId, str) for s in page.sessions)
    events, messages = thread_messages(turns)
    assert all(0 <= m.rawIndex < len(events) for m in messages)
    turn_outcome(turns if isinstance(turns, dict) else {"status": turns})


def test_automatic_replies_wait_in_the_outbox_in_order() -> None:
    connection = CodexClientConnection()
    connection.initialize(name="t", version="1")
    events = connection.receive_data(
        line({"id": 1, "result": {"userAgent": "a/0.1 (x)"}})
        + line({"id": 7, "method": "item/commandExecution/requestApproval", "params": {}})
    )
    done, request = events
    assert isinstance(done, HandshakeComplete)
    assert isinstance(request, ServerRequest)
    assert connection.data_to_send() == done.reply + request.reply
    assert connection.data_to_send() == b""


def test_page_walk_follows_cursors_and_stops_on_a_repeat() -> None:
    walk = PageWalk({"threadId": "t"})
    assert walk.query() == {"threadId": "t"}
    assert walk.add({"data": [1, 2], "nextCursor": "c1"})
    assert walk.query() == {"threadId": "t", "cursor": "c1"}
    assert walk.add({"data": [3], "nextCursor": "c2"})
    assert not walk.add({"data": [4], "nextCursor": "c1"})  # a server going round in circles
    assert walk.items == [1, 2, 3, 4]
    ended = PageWalk({})
    assert not ended.add({"data": "nope", "nextCursor": ""})
    assert not PageWalk({}).add(None)
    assert ended.items == []


def test_item_of_entry_unwraps_items_list_entries_only() -> None:
    item = {"type": "agentMessage", "id": "i"}
    assert item_of_entry({"item": item, "turnId": "t", "startedAtMs": 1}) is item
    assert item_of_entry(item) is item
    assert item_of_entry({"item": item}) == {"item": item}


def test_started_turns_are_remembered_until_forgotten() -> None:
    connection = ready()
    assert not connection.started_turn("z")
    connection.receive_data(line({"method": "turn/started", "params": {"turn": {"id": "z"}}}))
    connection.receive_data(line({"method": "turn/started", "params": {"turn": "bad"}}))
    assert connection.started_turn("z")
    connection.forget_turn("z")
    connection.forget_turn("never")
    assert not connection.started_turn("z")
