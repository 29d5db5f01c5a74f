"""The sans-IO ACP client connection: handshake, requests, updates, permissions, fuzz."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shedproto import ErrorCode, LocalProtocolError, RemoteProtocolError
from shedproto.drivers.acp import (
    AcpConnection,
    AcpState,
    ConnectionClosed,
    PeerRequestRefused,
    PermissionAnswered,
    PermissionPolicy,
    RequestFailed,
    RequestSucceeded,
    SessionUpdated,
    normalize_updates,
)
from tests._hypothesis import examples


def line(obj: Any) -> bytes:
    return json.dumps(obj).encode() + b"\n"


INIT_RESULT = {
    "protocolVersion": 1,
    "agentCapabilities": {"loadSession": True, "sessionCapabilities": {"list": {}}},
    "agentInfo": {"name": "fake", "version": "2.0"},
}


def state_of(conn: AcpConnection) -> AcpState:
    return conn.state


def ready() -> AcpConnection:
    conn = AcpConnection()
    request_id, _ = conn.initialize()
    conn.receive_data(line({"jsonrpc": "2.0", "id": request_id, "result": INIT_RESULT}))
    return conn


def test_initialize_bytes_and_negotiation() -> None:
    conn = AcpConnection(client_version="9")
    request_id, data = conn.initialize()
    assert json.loads(data) == {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": 1,
            "clientCapabilities": {
                "fs": {"readTextFile": False, "writeTextFile": False},
                "terminal": False,
            },
            "clientInfo": {"name": "commonfabric-agents-connector", "version": "9"},
        },
    }
    assert data.endswith(b"\n")
    assert data.count(b"\n") == 1
    assert conn.state is AcpState.INITIALIZING
    events = conn.receive_data(line({"jsonrpc": "2.0", "id": request_id, "result": INIT_RESULT}))
    assert isinstance(events[0], RequestSucceeded)
    assert state_of(conn) is AcpState.READY
    assert conn.features is not None
    assert conn.features.load_session
    assert conn.features.list_sessions
    assert not conn.features.resume_session
    assert conn.features.agent_version == "2.0"


def test_unsupported_version_closes() -> None:
    conn = AcpConnection()
    request_id, _ = conn.initialize()
    with pytest.raises(RemoteProtocolError) as info:
        conn.receive_data(
            line({"jsonrpc": "2.0", "id": request_id, "result": {"protocolVersion": 7}})
        )
    assert info.value.code is ErrorCode.VERSION_UNSUPPORTED
    assert conn.state is AcpState.CLOSED
    with pytest.raises(LocalProtocolError):
        conn.new_session("/tmp")


def test_requests_before_ready_are_local_errors() -> None:
    conn = AcpConnection()
    with pytest.raises(LocalProtocolError) as info:
        conn.new_session("/tmp")
    assert info.value.code is ErrorCode.UNEXPECTED_EVENT
    conn.initialize()
    with pytest.raises(LocalProtocolError):
        conn.initialize()
    with pytest.raises(LocalProtocolError):
        conn.new_session("/tmp")


def test_initialize_error_closes() -> None:
    conn = AcpConnection()
    request_id, _ = conn.initialize()
    events = conn.receive_data(
        line({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": "no"}})
    )
    assert isinstance(events[0], RequestFailed)
    assert events[0].code == -32603
    assert conn.state is AcpState.CLOSED


def test_session_new_learns_modes_and_prompt_records_updates() -> None:
    conn = ready()
    request_id, data = conn.new_session("/w")
    assert json.loads(data)["params"] == {"cwd": "/w", "mcpServers": []}
    conn.receive_data(
        line(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "result": {
                    "sessionId": "s1",
                    "modes": {
                        "currentModeId": "a",
                        "availableModes": [{"id": "a", "name": "A"}, {"id": "b", "name": "B"}],
                    },
                    "configOptions": [{"id": "model", "type": "select", "options": []}],
                },
            }
        )
    )
    assert conn.sessions["s1"].modes == ("a", "b")
    assert set(conn.sessions["s1"].config_options) == {"model"}
    prompt_id, data = conn.prompt("s1", "hi")
    assert json.loads(data)["params"] == {
        "sessionId": "s1",
        "prompt": [{"type": "text", "text": "hi"}],
    }
    assert conn.prompting("s1")
    with pytest.raises(LocalProtocolError):
        conn.prompt("s1", "again")
    stream = b"".join(
        line(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": "s1", "update": update},
            }
        )
        for update in (
            {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "hi"}},
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "ec"}},
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "ho"}},
            {"sessionUpdate": "current_mode_update", "currentModeId": "b"},
        )
    ) + line({"jsonrpc": "2.0", "id": prompt_id, "result": {"stopReason": "end_turn"}})
    # fed one byte at a time, the events come out the same
    events = [event for i in range(len(stream)) for event in conn.receive_data(stream[i : i + 1])]
    kinds = [e.kind for e in events if isinstance(e, SessionUpdated)]
    assert kinds == [
        "user_message_chunk",
        "agent_message_chunk",
        "agent_message_chunk",
        "current_mode_update",
    ]
    assert isinstance(events[-1], RequestSucceeded)
    assert events[-1].result == {"stopReason": "end_turn"}
    assert not conn.prompting("s1")
    assert conn.sessions["s1"].current_mode == "b"
    messages = conn.transcripts["s1"].messages()
    assert [(m.role, m.textPreview) for m in messages] == [("user", "hi"), ("assistant", "echo")]


def test_cancel_only_for_own_prompt() -> None:
    conn = ready()
    with pytest.raises(LocalProtocolError):
        conn.cancel("s1")
    conn.prompt("s1", "x")
    assert json.loads(conn.cancel("s1")) == {
        "jsonrpc": "2.0",
        "method": "session/cancel",
        "params": {"sessionId": "s1"},
    }


@pytest.mark.parametrize(
    ("policy", "outcome"),
    [
        (PermissionPolicy.CANCELLED, {"outcome": "cancelled"}),
        (PermissionPolicy.ALLOW_ONCE, {"outcome": "selected", "optionId": "y"}),
        (PermissionPolicy.REJECT_ONCE, {"outcome": "selected", "optionId": "n"}),
    ],
)
def test_permission_answered_by_policy(policy: PermissionPolicy, outcome: dict[str, Any]) -> None:
    conn = AcpConnection(permission_policy=policy)
    request_id, _ = conn.initialize()
    conn.receive_data(line({"jsonrpc": "2.0", "id": request_id, "result": INIT_RESULT}))
    events = conn.receive_data(
        line(
            {
                "jsonrpc": "2.0",
                "id": "p1",
                "method": "session/request_permission",
                "params": {
                    "sessionId": "s1",
                    "toolCall": {"toolCallId": "c"},
                    "options": [
                        {"optionId": "y", "name": "Y", "kind": "allow_once"},
                        {"optionId": "n", "name": "N", "kind": "reject_once"},
                    ],
                },
            }
        )
    )
    assert isinstance(events[0], PermissionAnswered)
    assert events[0].outcome == outcome
    assert json.loads(conn.data_to_send()) == {
        "jsonrpc": "2.0",
        "id": "p1",
        "result": {"outcome": outcome},
    }
    assert conn.data_to_send() == b""


def test_unknown_client_methods_are_refused() -> None:
    conn = ready()
    events = conn.receive_data(
        line({"jsonrpc": "2.0", "id": 5, "method": "fs/read_text_file", "params": {}})
    )
    assert events == [PeerRequestRefused(request_id=5, method="fs/read_text_file")]
    assert json.loads(conn.data_to_send()) == {
        "jsonrpc": "2.0",
        "id": 5,
        "error": {"code": -32601, "message": "Method not found: fs/read_text_file"},
    }


def test_eof_fails_pending_requests() -> None:
    conn = ready()
    request_id, _ = conn.list_sessions()
    events = conn.receive_data(b"")
    assert isinstance(events[0], RequestFailed)
    assert events[0].request_id == request_id
    assert isinstance(events[-1], ConnectionClosed)
    assert conn.state is AcpState.CLOSED


def test_optional_methods_need_capabilities() -> None:
    conn = ready()
    with pytest.raises(LocalProtocolError) as info:
        conn.resume_session("s", "/")
    assert info.value.code is ErrorCode.INVALID_ARGUMENT


@pytest.mark.parametrize(
    "bad",
    [
        b"{nope}\n",
        b'{"jsonrpc":"1.0","id":1,"result":{}}\n',
        b'{"jsonrpc":"2.0","id":99,"result":{}}\n',
        b'{"jsonrpc":"2.0","id":1}\n',
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":1}}\n',
    ],
)
def test_bad_agent_lines_are_remote_errors(bad: bytes) -> None:
    conn = ready()
    with pytest.raises(RemoteProtocolError):
        conn.receive_data(bad)
    assert conn.state is AcpState.CLOSED


def test_events_before_a_bad_line_are_kept() -> None:
    conn = ready()
    good = line(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s", "update": {"sessionUpdate": "plan", "entries": []}},
        }
    )
    pending, _ = conn.list_sessions()
    events = conn.receive_data(good + b"garbage\n" + good)
    assert [type(e) for e in events] == [SessionUpdated]  # the good line before, not after
    assert conn.state is AcpState.CLOSED
    assert conn.error is not None
    with pytest.raises(RemoteProtocolError) as info:
        conn.receive_data(good)  # the error comes on the next call, once
    assert info.value.code is ErrorCode.MALFORMED_FRAME
    assert info.value is conn.error
    closing = conn.receive_data(b"")
    assert [(type(e), getattr(e, "request_id", None)) for e in closing] == [
        (RequestFailed, pending),
        (ConnectionClosed, None),
    ]
    closed = closing[-1]
    assert isinstance(closed, ConnectionClosed)
    assert (closed.reason, closed.error) == ("protocol_error", conn.error)


def test_a_bad_line_alone_raises_at_once_and_later_output_is_dropped() -> None:
    conn = ready()
    with pytest.raises(RemoteProtocolError):
        conn.receive_data(b"garbage\n")
    assert conn.receive_data(b"more garbage\n") == []
    with pytest.raises(LocalProtocolError, match="failed earlier"):
        conn.new_session("/w")
    assert conn.receive_data(b"")[-1] == ConnectionClosed("protocol_error", conn.error)


def test_a_clean_eof_closes_with_reason_eof_and_no_error() -> None:
    conn = ready()
    assert conn.receive_data(b"") == [ConnectionClosed()]
    assert (ConnectionClosed().reason, ConnectionClosed().error) == ("eof", None)
    assert conn.error is None


def test_an_agent_message_before_initialize_is_the_agents_fault() -> None:
    # Regression: a notification before initialize raised LocalProtocolError (the
    # state machine's "not allowed" was reported as this side's misuse).
    conn = AcpConnection()
    notify = {"jsonrpc": "2.0", "method": "session/update", "params": {}}
    with pytest.raises(RemoteProtocolError) as info:
        conn.receive_data(line(notify))
    assert info.value.code is ErrorCode.UNEXPECTED_EVENT
    assert conn.state is AcpState.CLOSED


def test_answers_to_agent_requests_wait_in_the_outbox_in_order() -> None:
    conn = ready()
    conn.receive_data(
        line({"jsonrpc": "2.0", "id": 1, "method": "terminal/create", "params": {}})
        + line({"jsonrpc": "2.0", "id": 2, "method": "fs/read_text_file", "params": {}})
    )
    assert [json.loads(x)["id"] for x in conn.data_to_send().splitlines()] == [1, 2]
    assert conn.data_to_send() == b""


def test_the_acp_table_is_the_contract_table() -> None:
    from shedproto import Contract
    from shedproto.drivers.acp import TRANSITIONS, AcpInput

    conn = AcpConnection()
    assert isinstance(conn, Contract)
    assert conn.table.transitions == TRANSITIONS
    assert conn.table.error is AcpState.CLOSED
    assert not any(
        state is AcpState.CLOSED and new is not AcpState.CLOSED
        for (state, _), new in TRANSITIONS.items()
    )
    assert (AcpState.IDLE, AcpInput.PEER_NOTIFICATION) not in TRANSITIONS
    assert conn.next_deadline() is None


def test_normalize_merges_chunks_by_kind_and_message_id() -> None:
    updates: list[dict[str, Any]] = [
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "a"}},
        {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "t"}},
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "b"}},
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "m2",
            "content": {"type": "text", "text": "c"},
        },
        {"sessionUpdate": "tool_call", "toolCallId": "x", "title": "Run"},
        {"sessionUpdate": "usage_update"},
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "image", "data": ""}},
    ]
    messages = normalize_updates("s", updates)
    assert [(m.kind, m.textPreview, m.rawIndex) for m in messages] == [
        ("message", "a", 0),
        ("thought", "t", 1),
        ("message", "b", 2),
        ("message", "c", 3),
        ("tool-call", "Run", 4),
        ("message", None, 6),
    ]
    assert messages[0].id == "s#0"
    long = normalize_updates(
        "s",
        [{"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "x" * 900}}],
    )
    assert long[0].textPreview == "x" * 500


@settings(max_examples=examples(200), deadline=None)
@given(data=st.binary(max_size=300), cuts=st.lists(st.integers(0, 300), max_size=5))
def test_fuzz_receive_data(data: bytes, cuts: list[int]) -> None:
    conn = ready()
    conn.prompt("s", "x")
    points = sorted({c for c in cuts if c <= len(data)})
    pieces = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    try:
        for piece in pieces:
            if piece:
                conn.receive_data(piece)
        conn.receive_data(b"")
    except RemoteProtocolError:
        assert conn.state is AcpState.CLOSED


def agent_chunk(session: str, text: str) -> bytes:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    return line(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session, "update": update},
        }
    )


def test_live_turns_record_the_prompt_and_do_not_merge() -> None:
    # Regression (issue 17 item 2): real agents stream only their own output during
    # session/prompt; two turns came out as one assistant message and no user message.
    conn = ready()
    for text in ("first", "second"):
        prompt_id, _ = conn.prompt("s1", text)
        conn.receive_data(
            agent_chunk("s1", "hi from ")
            + agent_chunk("s1", "fake model")
            + line({"jsonrpc": "2.0", "id": prompt_id, "result": {"stopReason": "end_turn"}})
        )
    messages = conn.transcripts["s1"].messages()
    assert [(m.role, m.textPreview) for m in messages] == [
        ("user", "first"),
        ("assistant", "hi from fake model"),
        ("user", "second"),
        ("assistant", "hi from fake model"),
    ]


def test_a_live_echo_of_the_prompt_is_not_recorded_twice() -> None:
    conn = ready()
    prompt_id, _ = conn.prompt("s1", "hi")
    echo = {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "hi"}}
    events = conn.receive_data(
        line(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": "s1", "update": echo},
            }
        )
        + agent_chunk("s1", "yo")
        + line({"jsonrpc": "2.0", "id": prompt_id, "result": {"stopReason": "end_turn"}})
    )
    assert [e.kind for e in events if isinstance(e, SessionUpdated)] == [
        "user_message_chunk",
        "agent_message_chunk",
    ]
    messages = conn.transcripts["s1"].messages()
    assert [(m.role, m.textPreview) for m in messages] == [("user", "hi"), ("assistant", "yo")]


def test_a_turn_ends_its_assistant_message_even_without_a_next_prompt() -> None:
    conn = ready()
    prompt_id, _ = conn.prompt("s1", "go")
    conn.receive_data(
        agent_chunk("s1", "a")
        + line({"jsonrpc": "2.0", "id": prompt_id, "result": {"stopReason": "end_turn"}})
        + agent_chunk("s1", "b")
    )
    messages = conn.transcripts["s1"].messages()
    assert [(m.role, m.textPreview) for m in messages] == [
        ("user", "go"),
        ("assistant", "a"),
        ("assistant", "b"),
    ]


def test_agent_error_detail_is_bounded_redacted_and_flags_nonstandard_codes() -> None:
    from shedproto.drivers.acp import MAX_ERROR_DETAIL, describe_rpc_error

    assert describe_rpc_error(-32603, "Internal error", None) == "Internal error (-32603)"
    assert (
        describe_rpc_error(-32603, "Internal error", {"message": "stream disconnected"})
        == "Internal error (-32603): stream disconnected"
    )
    redacted = describe_rpc_error(
        -32603, "x", {"apiKey": "sk-live", "nested": [{"Authorization": "Bearer t"}], "n": 1}
    )
    assert "sk-live" not in redacted
    assert "Bearer" not in redacted
    assert '"n":1' in redacted
    long = describe_rpc_error(-32603, "x", {"details": "y" * 5000})
    assert len(long) <= len("x (-32603): ") + MAX_ERROR_DETAIL
    assert describe_rpc_error(500, "oops", None) == "oops (500, nonstandard)"


def test_auth_method_choice() -> None:
    from shedproto.drivers.acp import AuthMethod, choose_auth_method

    methods = (
        AuthMethod(id="chatgpt"),
        AuthMethod(id="codex-api-key", env_vars=("CODEX_API_KEY",)),
        AuthMethod(id="openai-api-key", env_vars=("OPENAI_API_KEY",)),
    )
    assert choose_auth_method(methods, None, {"OPENAI_API_KEY": "k"}) == "openai-api-key"
    assert choose_auth_method(methods, None, {}) is None
    both = {"OPENAI_API_KEY": "k", "CODEX_API_KEY": "c"}
    assert choose_auth_method(methods, None, both) is None  # ambiguous: configure authMethod
    assert choose_auth_method(methods, "chatgpt", both) == "chatgpt"
    assert choose_auth_method(methods, None, {"OPENAI_API_KEY": ""}) is None
    with pytest.raises(LocalProtocolError, match="offers no auth method nope"):
        choose_auth_method(methods, "nope", {})


def test_initialize_learns_env_var_auth_methods() -> None:
    conn = AcpConnection()
    request_id, _ = conn.initialize()
    result = {
        **INIT_RESULT,
        "authMethods": [
            {"id": "chatgpt", "name": "ChatGPT"},
            {"type": "env_var", "id": "k", "name": "K", "vars": [{"name": "OPENAI_API_KEY"}]},
            {"name": "no id"},
        ],
    }
    conn.receive_data(line({"jsonrpc": "2.0", "id": request_id, "result": result}))
    assert conn.features is not None
    assert [(m.id, m.env_vars) for m in conn.features.auth_methods] == [
        ("chatgpt", ()),
        ("k", ("OPENAI_API_KEY",)),
    ]
    _, data = conn.authenticate("k")
    assert json.loads(data)["params"] == {"methodId": "k"}


def test_requests_pending_at_eof_fail_as_closed_not_auth_required() -> None:
    conn = ready()
    prompt_id, _ = conn.prompt("s1", "hi")
    events = conn.receive_data(b"")
    failed = [e for e in events if isinstance(e, RequestFailed)]
    assert [(e.request_id, e.closed) for e in failed] == [(prompt_id, True)]
    assert failed[0].code != -32000  # ACP's auth_required


def test_an_abandoned_prompt_frees_the_session_and_its_late_answer_is_harmless() -> None:
    conn = ready()
    first, _ = conn.prompt("s1", "one")
    conn.abandon_prompt("s1")
    assert not conn.prompting("s1")
    second, _ = conn.prompt("s1", "two")
    late = conn.receive_data(
        line({"jsonrpc": "2.0", "id": first, "result": {"stopReason": "cancelled"}})
    )
    assert isinstance(late[0], RequestSucceeded)
    assert conn.prompting("s1")  # the late answer does not end the second turn
    conn.receive_data(line({"jsonrpc": "2.0", "id": second, "result": {"stopReason": "end_turn"}}))
    assert not conn.prompting("s1")


def test_a_prompt_deadline_cancels_then_abandons_the_turn() -> None:
    from shedproto.drivers.acp import PromptAbandoned, PromptDeadlinePassed

    conn = ready()
    other, _ = conn.prompt("s2", "no deadline")
    prompt_id, _ = conn.prompt("s1", "slow", deadline=10.0, cancel_grace=2.0)
    assert conn.next_deadline() == 10.0
    assert conn.handle_timeout(9.9) == []
    assert conn.data_to_send() == b""
    assert conn.handle_timeout(10.5) == [PromptDeadlinePassed(prompt_id, "s1")]
    assert json.loads(conn.data_to_send()) == {
        "jsonrpc": "2.0",
        "method": "session/cancel",
        "params": {"sessionId": "s1"},
    }
    assert conn.next_deadline() == 12.5  # the grace runs from the cancel
    assert conn.prompting("s1")
    assert conn.handle_timeout(12.5) == [PromptAbandoned(prompt_id, "s1")]
    assert not conn.prompting("s1")
    assert conn.prompting("s2")
    assert conn.next_deadline() is None
    assert conn.data_to_send() == b""
    late = conn.receive_data(
        line({"jsonrpc": "2.0", "id": prompt_id, "result": {"stopReason": "cancelled"}})
    )
    assert isinstance(late[0], RequestSucceeded)  # a late answer is still reported
    assert other != prompt_id


def test_a_turn_that_answers_the_deadlines_cancel_is_not_abandoned() -> None:
    from shedproto.drivers.acp import PromptDeadlinePassed

    conn = ready()
    prompt_id, _ = conn.prompt("s1", "slow", deadline=1.0, cancel_grace=5.0)
    assert [type(e) for e in conn.handle_timeout(1.0)] == [PromptDeadlinePassed]
    conn.receive_data(
        line({"jsonrpc": "2.0", "id": prompt_id, "result": {"stopReason": "cancelled"}})
    )
    assert conn.next_deadline() is None
    assert conn.handle_timeout(100.0) == []


def test_a_late_timer_cancels_and_abandons_in_one_call() -> None:
    from shedproto.drivers.acp import PromptAbandoned, PromptDeadlinePassed

    conn = ready()
    prompt_id, _ = conn.prompt("s1", "x", deadline=1.0)  # no grace
    assert conn.handle_timeout(50.0) == [
        PromptDeadlinePassed(prompt_id, "s1"),
        PromptAbandoned(prompt_id, "s1"),
    ]
    assert b"session/cancel" in conn.data_to_send()


def test_deadlines_end_with_the_connection() -> None:
    conn = ready()
    conn.prompt("s1", "x", deadline=1.0)
    conn.receive_data(b"")
    assert conn.next_deadline() is None
    assert conn.handle_timeout(5.0) == []
    broken = ready()
    broken.prompt("s1", "x", deadline=1.0)
    with pytest.raises(RemoteProtocolError):
        broken.receive_data(b"garbage\n")
    assert broken.next_deadline() is None  # a timer loop never spins on a dead connection
    assert broken.handle_timeout(5.0) == []


def test_good_before_bad_whole_bytewise_and_with_trailing_bytes_agree() -> None:
    stream = (
        agent_chunk("s1", "a")
        + line({"jsonrpc": "2.0", "id": 9, "method": "terminal/create", "params": {}})
        + agent_chunk("s1", "b")
    )

    def feed(pieces: list[bytes]) -> tuple[list[Any], bytes, ErrorCode | None]:
        conn = ready()
        events: list[Any] = []
        code = None
        try:
            for piece in pieces:
                events.extend(conn.receive_data(piece))
        except RemoteProtocolError as exc:
            code = exc.code
        return events, conn.data_to_send(), code

    bad = b"not json\n"
    whole = feed([stream + bad + agent_chunk("s1", "after"), b""])
    bytewise = feed([bytes([b]) for b in stream + bad] + [b""])
    assert whole == bytewise
    events, answers, code = whole
    assert [getattr(e, "kind", type(e).__name__) for e in events] == [
        "agent_message_chunk",
        "PeerRequestRefused",
        "agent_message_chunk",
    ]
    assert json.loads(answers)["id"] == 9  # the answer owed before the bad line is kept
    assert code is ErrorCode.MALFORMED_FRAME
