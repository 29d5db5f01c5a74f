"""The sans-IO Claude core: paths, records, chains, paging, the stream protocol, the rules."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shedproto import LocalProtocolError
from shedproto.agents_host import SessionSummary
from shedproto.drivers.claude import (
    ClaudeSessionInfo,
    ClaudeStreamConnection,
    ControlRequest,
    ControlResponse,
    DesktopPairing,
    DesktopStart,
    StartPlan,
    StreamClosed,
    StreamMalformedLine,
    StreamMessage,
    build_argv,
    build_env,
    claude_capabilities,
    claude_config_dir,
    conversation_chain,
    custom_title_record,
    desktop_start_problem,
    desktop_url,
    encode_project_name,
    first_prompt,
    inventory_page,
    java_string_hash,
    match_project_dir,
    match_worktree_dirs,
    parse_records,
    parse_timestamp_ms,
    parse_worktree_list,
    plan_start,
    result_outcome,
    session_info,
    session_messages,
    session_summary,
    transcript_path,
)
from tests._hypothesis import examples

SID = "11111111-1111-4111-8111-111111111111"


def user(uid: str, parent: str | None, text: Any, **extra: Any) -> dict[str, Any]:
    return {
        "type": "user",
        "uuid": uid,
        "parentUuid": parent,
        "message": {"role": "user", "content": text},
        **extra,
    }


def assistant(uid: str, parent: str | None, text: str, **extra: Any) -> dict[str, Any]:
    content = [{"type": "text", "text": text}]
    return {
        "type": "assistant",
        "uuid": uid,
        "parentUuid": parent,
        "message": {"role": "assistant", "content": content},
        **extra,
    }


# --- paths --------------------------------------------------------------------------------------


def test_config_dir_rules() -> None:
    assert claude_config_dir({}, "/home/me") == "/home/me/.claude"
    assert claude_config_dir({"CLAUDE_CONFIG_DIR": "  "}, "/home/me") == "/home/me/.claude"
    assert claude_config_dir({"CLAUDE_CONFIG_DIR": "/alt"}, "/home/me") == "/alt"
    assert transcript_path(
        "/home/me/proj.dir", SID, {"CLAUDE_CONFIG_DIR": "/home/me/.claude-alt"}, "/x"
    ) == (f"/home/me/.claude-alt/projects/-home-me-proj-dir/{SID}.jsonl")


@pytest.mark.parametrize(
    ("cwd", "name"),
    [
        ("/home/me/proj.dir", "-home-me-proj-dir"),
        ("/a b/c_d", "-a-b-c-d"),
        ("/caf\u00e9", "-caf-"),
        ("/x\U0001f600", "-x--"),
    ],
)
def test_project_names(cwd: str, name: str) -> None:
    assert encode_project_name(cwd) == name


def test_java_string_hash_matches_known_values() -> None:
    assert int(java_string_hash("hello"), 36) == 99162322
    assert (
        int(java_string_hash("polygenelubricants"), 36) == 2**31
    )  # Integer.MIN_VALUE, made positive
    assert java_string_hash("") == "0"


def test_long_names_get_a_hash_suffix() -> None:
    cwd = "/" + "d" * 250
    name = encode_project_name(cwd)
    assert name.startswith("-" + "d" * 199 + "-")
    assert name == encode_project_name(cwd)[:200] + "-" + java_string_hash(cwd)
    assert len(encode_project_name("/" + "d" * 199)) == 200
    other_hash = name[:200] + "-zzz"
    assert match_project_dir(cwd, ["unrelated", other_hash]) == other_hash
    assert match_project_dir(cwd, [name, other_hash]) == name
    assert match_project_dir("/short", ["-short-x"]) is None


# --- records and info ---------------------------------------------------------------------------


def test_parse_records_skips_malformed_lines() -> None:
    data = b'{"type":"user"}\n\nnot json\n[1]\n\xff\xfe\n{"type":"assistant"}\n{"type":"cut'
    assert parse_records(data) == [{"type": "user"}, {"type": "assistant"}]


def test_first_prompt_rules() -> None:
    records = [
        user("m", None, "meta", isMeta=True),
        user("t", None, [{"type": "tool_result", "content": "x"}]),
        user("c", None, "<command-name>/clear</command-name> stuff"),
        user("i", None, "[Request interrupted by user]"),
        user("r", None, [{"type": "image"}, {"type": "text", "text": "line one\nline two"}]),
    ]
    assert first_prompt(records) == "line one line two"
    assert first_prompt(records[:3]) == "/clear"
    assert first_prompt([user("l", None, "y" * 201 + "   ")]) == "y" * 200 + "\u2026"
    assert first_prompt([]) is None


def test_session_info_precedence_and_fields() -> None:
    records = [
        {"type": "permission-mode", "permissionMode": "default"},
        user("u1", None, "hello", cwd="/w", timestamp="2026-11-29T20:06:05.818Z", gitBranch="main"),
        {"type": "ai-title", "aiTitle": "AI title"},
        {"type": "custom-title", "customTitle": "first"},
        {"type": "custom-title", "customTitle": "latest"},
        {"type": "tag", "tag": "t1"},
        {"type": "last-prompt", "lastPrompt": "recent"},
    ]
    info = session_info(SID, records, last_modified_ms=5, file_size=9)
    assert info == ClaudeSessionInfo(
        sessionId=SID,
        summary="latest",
        lastModified=5,
        fileSize=9,
        customTitle="latest",
        firstPrompt="hello",
        gitBranch="main",
        cwd="/w",
        tag="t1",
        createdAt=1795982765818,
    )
    no_custom = session_info(SID, records[:2] + records[-1:], last_modified_ms=1)
    assert no_custom is not None
    assert no_custom.summary == "recent"
    assert session_info(SID, [user("s", None, "x", isSidechain=True)], last_modified_ms=1) is None
    assert session_info(SID, [{"type": "file-history-snapshot"}], last_modified_ms=1) is None
    projected = session_info(SID, [user("u", None, "x")], last_modified_ms=1, project_path="/p")
    assert projected is not None
    assert projected.cwd == "/p"
    assert projected.createdAt is None


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("1970-01-01T00:00:01.500Z", 1500),
        ("1970-01-01T00:00:01", 1000),
        ("nope", None),
        (None, None),
    ],
)
def test_timestamps(text: Any, ms: int | None) -> None:
    assert parse_timestamp_ms(text) == ms


def test_chain_picks_the_newest_main_leaf_and_skips_sidechains() -> None:
    records = [
        user("u1", None, "root"),
        assistant("a1", "u1", "first answer"),
        user("u2", "a1", "branch one"),
        assistant("a2", "u2", "one"),
        {"type": "system", "uuid": "s0", "parentUuid": "a1", "subtype": "note"},
        user("u3", "s0", "branch two"),
        assistant("a3", "u3", "two"),
        {"type": "system", "uuid": "s1", "parentUuid": "a3", "subtype": "trailing"},
        user("x1", "a3", "side", isSidechain=True),
        user("m1", "a3", "meta", isMeta=True),
        {"type": "summary", "summary": "s", "leafUuid": "a3"},
    ]
    chain = conversation_chain(records)
    assert [r["uuid"] for r in chain] == ["u1", "a1", "s0", "u3", "a3"]
    messages = session_messages(records)
    assert [m["uuid"] for m in messages] == ["u1", "a1", "s0", "u3", "a3"]
    without = session_messages(records, include_system=False)
    assert [m["uuid"] for m in without] == ["u1", "a1", "u3", "a3"]


def test_only_sidechain_leaves_still_give_a_chain() -> None:
    records = [
        user("x1", None, "side", isSidechain=True),
        assistant("x2", "x1", "a", isSidechain=True),
    ]
    assert [r["uuid"] for r in conversation_chain(records)] == ["x1", "x2"]
    assert session_messages(records) == []


def test_chain_survives_cycles_and_missing_parents() -> None:
    records = [user("a", "b", "x"), assistant("b", "a", "y")]
    assert len(conversation_chain(records)) <= 2
    orphan = [assistant("z", "missing", "alone")]
    assert [r["uuid"] for r in conversation_chain(orphan)] == ["z"]
    assert conversation_chain([]) == []


def info(sid: str, modified: int, **extra: Any) -> ClaudeSessionInfo:
    return ClaudeSessionInfo(sessionId=sid, summary=f"s{sid}", lastModified=modified, **extra)


def test_inventory_page_offsets() -> None:
    infos = [info(str(i), i) for i in range(5)] + [info("3", 1)]
    first = inventory_page(infos, None, limit=2)
    assert [s.nativeSessionId for s in first.sessions] == ["4", "3"]
    assert first.nextCursor == "2"
    last = inventory_page(infos, "4", limit=2)
    assert [s.nativeSessionId for s in last.sessions] == ["0"]
    assert last.nextCursor is None
    for bad in ("-1", "01", "x", "1.5", " 1"):
        with pytest.raises(LocalProtocolError, match="invalid Claude cursor"):
            inventory_page(infos, bad)


def test_summary_title_and_times() -> None:
    summary = session_summary(
        info("a", 1_800_000_000_000, firstPrompt="p", createdAt=0), active=True
    )
    assert summary.title == "sa"
    assert summary.updatedAt == "2027-01-15T08:00:00.000Z"
    assert summary.createdAt == "1970-01-01T00:00:00.000Z"
    assert summary.active is True
    assert summary.archived is None
    assert summary.raw["firstPrompt"] == "p"


def test_custom_title_record() -> None:
    assert custom_title_record(SID, "New") == (
        b'{"type":"custom-title","customTitle":"New","sessionId":"' + SID.encode() + b'"}\n'
    )
    with pytest.raises(LocalProtocolError):
        custom_title_record("nope", "x")
    with pytest.raises(LocalProtocolError):
        custom_title_record(SID, "  ")


# --- the CLI ------------------------------------------------------------------------------------


def test_argv_forms() -> None:
    resume = build_argv("claude", resume="-weird")
    assert resume[-1] == "--resume=-weird"
    start = build_argv("claude", session_id=SID, title="T", permission_mode="plan", model="m")
    assert start[7:] == (
        "--session-id",
        SID,
        "-n",
        "T",
        "--permission-mode",
        "plan",
        "--model",
        "m",
    )
    with pytest.raises(LocalProtocolError):
        build_argv("claude")
    with pytest.raises(LocalProtocolError):
        build_argv("claude", resume=SID, session_id=SID)
    with pytest.raises(LocalProtocolError):
        build_argv("claude", resume=SID, title="T")
    assert build_env({"A": "1"}, {"A": "2"}, "/c") == {"A": "2", "CLAUDE_CONFIG_DIR": "/c"}


@pytest.mark.parametrize(
    ("last", "status", "code", "message"),
    [
        ({"type": "result", "subtype": "success", "is_error": False}, "succeeded", None, None),
        (
            {
                "type": "result",
                "subtype": "success",
                "is_error": True,
                "terminal_reason": "api_error",
            },
            "failed",
            "claude-success",
            "api_error",
        ),
        (
            {"type": "result", "subtype": "error_max_turns", "errors": ["a", "b"]},
            "failed",
            "claude-error_max_turns",
            "a; b",
        ),
        (
            {"type": "result", "subtype": "error_during_execution", "result": "boom"},
            "failed",
            "claude-error_during_execution",
            "boom",
        ),
        ({"type": "assistant"}, "unknown", "claude-query-outcome-unknown", None),
        (None, "unknown", "claude-query-outcome-unknown", None),
    ],
)
def test_result_mapping(last: Any, status: str, code: str | None, message: str | None) -> None:
    outcome = result_outcome(last)
    assert outcome.status == status
    if code is None:
        assert outcome.error is None
    else:
        assert outcome.error is not None
        assert outcome.error.code == code
        if message is not None:
            assert outcome.error.message == message


def test_stream_connection_events_and_replies(snapshot: Any) -> None:
    connection = ClaudeStreamConnection(session_id=SID, request_token="abcd1234")
    assert connection.user_message("hi") == snapshot
    request_id, data = connection.interrupt()
    assert request_id == "req_1_abcd1234"
    assert json.loads(data) == {
        "type": "control_request",
        "request_id": request_id,
        "request": {"subtype": "interrupt"},
    }
    assert json.loads(connection.set_permission_mode("plan")[1])["request"] == {
        "subtype": "set_permission_mode",
        "mode": "plan",
    }
    assert json.loads(connection.set_model(None)[1])["request"] == {
        "subtype": "set_model",
        "model": None,
    }
    stream = b"".join(
        json.dumps(obj).encode() + b"\n"
        for obj in (
            {"type": "system", "subtype": "init", "session_id": SID},
            {
                "type": "control_response",
                "response": {"subtype": "success", "request_id": request_id, "response": {}},
            },
            {
                "type": "control_request",
                "request_id": "c1",
                "request": {"subtype": "can_use_tool", "tool_name": "Bash"},
            },
            {
                "type": "control_request",
                "request_id": "c2",
                "request": {"subtype": "hook_callback"},
            },
            {"type": "control_cancel_request", "request_id": "c1"},
            {"type": "result", "subtype": "success", "is_error": False, "session_id": SID},
        )
    )
    events = connection.receive_data(stream + b"garbage\n")
    kinds = [type(e) for e in events]
    assert kinds == [
        StreamMessage,
        ControlResponse,
        ControlRequest,
        ControlRequest,
        StreamMessage,
        StreamMalformedLine,
    ]
    deny = events[2]
    assert isinstance(deny, ControlRequest)
    assert json.loads(deny.reply)["response"]["response"]["behavior"] == "deny"
    error = events[3]
    assert isinstance(error, ControlRequest)
    assert json.loads(error.reply)["response"]["subtype"] == "error"
    (closed,) = connection.receive_data(b"")
    assert isinstance(closed, StreamClosed)
    assert closed.outcome.status == "succeeded"


def test_stream_bytewise_equals_whole() -> None:
    stream = (
        b'{"type":"system","subtype":"init"}\n'
        b'{"type":"result","subtype":"success","is_error":false}\n'
    )

    def run(chunks: list[bytes]) -> list[Any]:
        connection = ClaudeStreamConnection(session_id=SID)
        out: list[Any] = []
        for chunk in chunks:
            out += connection.receive_data(chunk)
        return out

    whole = run([stream, b""])
    assert run([stream[i : i + 1] for i in range(len(stream))] + [b""]) == whole
    assert run([stream + b'{"type":"resu', b""]) == whole


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.binary(max_size=64), max_size=8))
def test_fuzz_stream_never_raises(chunks: list[bytes]) -> None:
    connection = ClaudeStreamConnection(session_id=SID)
    for chunk in chunks:
        if chunk:
            connection.receive_data(chunk)
    events = connection.receive_data(b"")
    assert isinstance(events[-1], StreamClosed)


# --- rules --------------------------------------------------------------------------------------


def test_capabilities_follow_platform_and_danger() -> None:
    linux = claude_capabilities(allow_danger_full_access=False, platform="linux")
    assert linux.modes == ("default", "acceptEdits", "plan", "dontAsk", "auto")
    assert linux.surfaces == ("headless",)
    assert linux.startSession is True
    assert linux.configOptions == {"model": {"type": "string"}}
    mac = claude_capabilities(allow_danger_full_access=True, platform="darwin")
    assert mac.modes is not None
    assert mac.modes[-1] == "bypassPermissions"
    assert mac.surfaces == ("headless", "desktop")


def plan(**overrides: Any) -> Any:
    arguments: dict[str, Any] = {
        "cwd": None,
        "mode": None,
        "surface": None,
        "title": None,
        "source_cwd": "/src",
        "process_cwd": "/proc",
        "modes": ("default", "plan"),
        "surfaces": ("headless",),
    }
    arguments.update(overrides)
    session = arguments.pop("session_id", SID)
    return plan_start(session, **arguments)


def test_plan_start_rules() -> None:
    assert plan() == StartPlan(
        session_id=SID, cwd="/src", surface="headless", mode=None, title=None
    )
    assert plan(cwd="../src").cwd == "/src"
    assert plan(cwd="/other").error.code == "claude-start-cwd-not-source"
    assert plan(source_cwd=None).error.code == "claude-start-cwd-required"
    assert plan(source_cwd=None, cwd="rel").cwd == "/proc/rel"
    assert plan(session_id="x").error.code == "claude-session-id-invalid"
    assert plan(mode="yolo").status == "unsupported"
    assert plan(surface="desktop").status == "unsupported"
    assert plan(surface="tablet").status == "unsupported"


def test_desktop_url_is_form_encoded() -> None:
    assert (
        desktop_url("/a b", "x&y=z~*é") == "claude://code/new?folder=%2Fa+b&q=x%26y%3Dz%7E*%C3%A9"
    )


def test_desktop_checks_in_order() -> None:
    def code(**kw: Any) -> str | None:
        base: dict[str, Any] = {
            "text": "t",
            "mode": None,
            "cwd_is_directory": True,
            "app_installed": True,
        }
        base.update(kw)
        problem = desktop_start_problem(**base)
        return None if problem is None or problem.error is None else problem.error.code

    assert code() is None
    assert code(mode="plan", text="x" * 20000) == "claude-desktop-mode-unsupported"
    assert code(text="x" * 14336) is None
    assert code(text="\U0001f600" * 7169) == "claude-desktop-prompt-too-long"
    assert code(cwd_is_directory=False, app_installed=False) == "claude-desktop-cwd-not-directory"
    assert code(app_installed=False) == "claude-desktop-not-installed"


def row(
    sid: str,
    *,
    cwd: str = "/w",
    prompt: str | None = "fix it",
    created: int | None = 10_000,
    custom: str | None = None,
) -> SessionSummary:
    raw: dict[str, Any] = {"firstPrompt": prompt, "createdAt": created, "customTitle": custom}
    return SessionSummary(nativeSessionId=sid, title=custom or prompt, cwd=cwd, raw=raw)


def start(
    sid: str = "S",
    *,
    text: str = "fix it  now",
    sent: int = 12_000,
    known: frozenset[str] = frozenset(),
    title: str | None = "T",
) -> DesktopStart:
    return DesktopStart(
        session_id=sid, text=text, cwd="/w", title=title, sent_at_ms=sent, known_ids=known
    )


def test_pairing_rules() -> None:
    pairing = DesktopPairing()
    pairing.record(start())
    (paired,) = pairing.apply([row("n")], now_ms=20_000)
    assert paired.startedAs == "S"
    assert paired.title == "T"
    (again,) = pairing.apply([row("n")], now_ms=30_000)
    assert again.startedAs == "S"
    assert not pairing.pending


@pytest.mark.parametrize(
    ("session", "pending", "paired"),
    [
        (row("n", created=6_999), start(), False),
        (row("n", created=7_000), start(), True),
        (row("n", created=None), start(), True),
        (row("n", cwd="/other"), start(), False),
        (row("n"), start(known=frozenset({"n"})), False),
        (row("n", prompt="fix it now\u2026"), start(), True),
        (row("n", prompt="fix something else"), start(), False),
        (row("n", prompt=""), start(), False),
    ],
)
def test_pairing_conditions(session: SessionSummary, pending: DesktopStart, paired: bool) -> None:
    pairing = DesktopPairing()
    pairing.record(pending)
    (out,) = pairing.apply([session], now_ms=20_000)
    assert (out.startedAs is not None) is paired


def test_pairing_expiry_ambiguity_and_custom_titles() -> None:
    expired = DesktopPairing()
    expired.record(start())
    (out,) = expired.apply([row("n")], now_ms=12_000 + 24 * 3600 * 1000 + 1)
    assert out.startedAs is None
    assert not expired.pending
    ambiguous = DesktopPairing()
    ambiguous.record(start("A", text="fix it first"))
    ambiguous.record(start("B", text="fix it second"))
    (out,) = ambiguous.apply([row("n")], now_ms=20_000)
    assert out.startedAs is None
    same = DesktopPairing()
    same.record(start("A", sent=11_000))
    same.record(start("B", sent=13_000))
    (out,) = same.apply([row("n")], now_ms=20_000)
    assert out.startedAs == "B"
    titled = DesktopPairing()
    titled.record(start())
    (out,) = titled.apply([row("n", custom="Mine")], now_ms=20_000)
    assert (out.startedAs, out.title) == ("S", "Mine")


def test_info_encodes_without_absent_fields() -> None:
    assert msgspec.json.encode(info("a", 1)) == b'{"sessionId":"a","summary":"sa","lastModified":1}'


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
KEYS = st.sampled_from(
    [
        "type",
        "uuid",
        "parentUuid",
        "isSidechain",
        "isMeta",
        "message",
        "customTitle",
        "cwd",
        "timestamp",
        "tag",
    ]
)
VALUES = st.one_of(JSON, st.sampled_from(["user", "assistant", "system", "tag", "a", "b"]))


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.dictionaries(KEYS, VALUES, max_size=7), max_size=8))
def test_fuzz_records_never_crash_the_readers(records: list[dict[str, Any]]) -> None:
    info_or_none = session_info(SID, records, last_modified_ms=0)
    messages = session_messages(records)
    assert all(m["type"] in ("user", "assistant", "system") for m in messages)
    if info_or_none is not None:
        session_summary(info_or_none)


@settings(max_examples=examples(300), deadline=None)
@given(st.binary(max_size=256))
def test_fuzz_parse_records_returns_objects(data: bytes) -> None:
    assert all(isinstance(r, dict) for r in parse_records(data))


def test_worktree_list_and_matching() -> None:
    porcelain = (
        "worktree /repo\nHEAD abc\nbranch refs/heads/main\n\n"
        "worktree /repo-wt\nHEAD def\ndetached\n"
    )
    assert parse_worktree_list(porcelain) == ["/repo", "/repo-wt"]
    long_tree = "/" + "w" * 230
    other_hash = encode_project_name(long_tree)[:200] + "-zz9"
    names = ["-repo", "-repo-wt", "-repo-other", "-repo-sub", other_hash]
    assert match_worktree_dirs(["/repo", "/repo-wt", long_tree], names) == [
        ("-repo", "/repo"),
        ("-repo-wt", "/repo-wt"),
        (other_hash, long_tree),
    ]


def test_control_answers_wait_in_the_outbox() -> None:
    connection = ClaudeStreamConnection(session_id=SID)
    events = connection.receive_data(
        b'{"type":"control_request","request_id":"a","request":{"subtype":"can_use_tool"}}\n'
        b'{"type":"control_request","request_id":"b","request":{"subtype":"nope"}}\n'
    )
    replies = [e.reply for e in events if isinstance(e, ControlRequest)]
    assert len(replies) == 2
    assert connection.data_to_send() == b"".join(replies)
    assert connection.data_to_send() == b""


def test_over_cap_line_is_the_sticky_error_after_the_lines_before_it() -> None:
    from shedproto._framing import FramingPolicy

    connection = ClaudeStreamConnection(session_id=SID, framing=FramingPolicy(max_frame_bytes=64))
    events = connection.receive_data(b'{"type":"system","subtype":"init"}\n' + b"x" * 100)
    assert isinstance(events[0], StreamMessage)
    closed = events[-1]
    assert isinstance(closed, StreamClosed)
    assert closed.reason == "frame_too_large"
    assert closed.error is connection.error is not None
    assert connection.closed
    with pytest.raises(LocalProtocolError):
        connection.receive_data(b"more\n")
