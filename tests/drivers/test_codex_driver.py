"""The codex-app-server driver against the scripted fake app-server (every §4 case)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from shedproto import LocalProtocolError
from shedproto.agents_host import CommandExecutionResult
from shedproto.connector import PromptPayload, StartPayload
from shedproto.servers.agents_host import OperationOptions
from shedproto.servers.drivers import CodexAppServerDriver, CodexDriverError

from ._helpers import BASE_ENV, FAKE_CODEX, codex_source, read_log, received, running_codex


def _same_path(a: str | Path, b: str | Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


async def test_handshake_records_version_and_sends_initialized(tmp_path: Path) -> None:
    async with running_codex(codex_source(tmp_path)) as driver:
        assert driver.version == "0.171.0"
        await driver.list_sessions()
    frames = received(tmp_path / "codex.log")
    assert frames[0]["method"] == "initialize"
    assert frames[0]["id"] == 1
    assert frames[0]["params"]["clientInfo"]["name"] == "commonfabric-agents-connector"
    assert frames[1] == {"method": "initialized"}
    ids = [frame["id"] for frame in frames if "id" in frame]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)
    assert not any("jsonrpc" in frame for frame in frames)


async def test_inventory_walks_active_then_archived(tmp_path: Path) -> None:
    async with running_codex(codex_source(tmp_path)) as driver:
        pages = []
        cursor: str | None = None
        while True:
            page = await driver.list_sessions(cursor)
            pages.append(page)
            if page.nextCursor is None:
                break
            cursor = page.nextCursor
    assert [p.nextCursor for p in pages] == ["active:2", "archived:", None]
    rows = {s.nativeSessionId: s for p in pages for s in p.sessions}
    assert list(rows) == ["t-active-1", "t-active-2", "t-active-3", "t-archived-1"]
    assert [rows[k].active for k in rows] == [True, False, False, False]
    assert [rows[k].archived for k in rows] == [False, False, False, True]
    assert rows["t-active-1"].title == "First"
    assert rows["t-active-2"].title == "preview of t-active-2"
    assert rows["t-active-1"].createdAt == "2026-11-29T20:05:27.000Z"
    assert rows["t-active-1"].raw["historyMode"] == "paginated"
    lists = [
        f["params"] for f in received(tmp_path / "codex.log") if f.get("method") == "thread/list"
    ]
    assert lists == [
        {"archived": False},
        {"cursor": "2", "archived": False},
        {"archived": True},
    ]


async def test_a_repeating_cursor_ends_each_phase(tmp_path: Path) -> None:
    async with running_codex(codex_source(tmp_path, "repeat-cursor")) as driver:
        cursors = []
        cursor: str | None = None
        for _ in range(10):
            page = await driver.list_sessions(cursor)
            cursors.append(page.nextCursor)
            if page.nextCursor is None:
                break
            cursor = page.nextCursor
    assert cursors == ["active:0", "archived:", "archived:0", None]


async def test_invalid_cursor_is_refused(tmp_path: Path) -> None:
    async with running_codex(codex_source(tmp_path)) as driver:
        with pytest.raises(LocalProtocolError, match="invalid Codex cursor"):
            await driver.list_sessions("sideways:1")


async def test_read_maps_items_and_keeps_unknown_kinds(tmp_path: Path) -> None:
    async with running_codex(codex_source(tmp_path)) as driver:
        snapshot = await driver.read_session("t-active-2")
    messages = snapshot.normalizedMessages
    assert [(m.id, m.role, m.kind) for m in messages] == [
        ("i1", "user", "userMessage"),
        ("i2", "assistant", "reasoning"),
        ("i3", "assistant", "agentMessage"),
        ("i4", "tool", "commandExecution"),
        ("i5", "unknown", "hologram"),
    ]
    assert [m.textPreview for m in messages] == ["hello", "thinking", "hi there", "ls", None]
    assert snapshot.events[4] == {"type": "hologram", "id": "i5", "payload": {"x": 1}}
    assert all(snapshot.events[m.rawIndex]["id"] == m.id for m in messages)
    assert snapshot.complete
    assert snapshot.revision == "1795982728"
    reads = [
        f["params"] for f in received(tmp_path / "codex.log") if f.get("method") == "thread/read"
    ]
    assert reads == [{"threadId": "t-active-2", "includeTurns": True}]


async def test_read_falls_back_to_paged_turns_and_items(tmp_path: Path) -> None:
    async with running_codex(codex_source(tmp_path, "no-include-turns")) as driver:
        snapshot = await driver.read_session("t-active-2")
    assert [m.id for m in snapshot.normalizedMessages] == ["i1", "i2", "i3", "i4", "i5"]
    methods = [f.get("method") for f in received(tmp_path / "codex.log") if "id" in f]
    assert methods[1:3] == ["thread/read", "thread/read"]
    assert methods.count("thread/turns/list") == 2
    assert methods.count("thread/items/list") == 3


async def test_unknown_thread_read_raises_a_provider_error(tmp_path: Path) -> None:
    async with running_codex(codex_source(tmp_path)) as driver:
        with pytest.raises(CodexDriverError, match="thread not loaded"):
            await driver.read_session("t-missing")


async def test_out_of_order_responses_reach_their_callers(tmp_path: Path) -> None:
    results: dict[str, str] = {}
    async with running_codex(codex_source(tmp_path, "reverse")) as driver:

        async def read(thread_id: str) -> None:
            snapshot = await driver.read_session(thread_id)
            results[thread_id] = snapshot.summary.nativeSessionId

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read, "t-active-1")
            tasks.start_soon(read, "t-archived-1")
    assert results == {"t-active-1": "t-active-1", "t-archived-1": "t-archived-1"}


async def _prompt(
    driver: CodexAppServerDriver, thread: str = "t-active-2"
) -> CommandExecutionResult:
    return await driver.prompt(thread, PromptPayload(text="do it"), OperationOptions())


async def test_prompt_resumes_starts_and_waits_for_its_turn(tmp_path: Path) -> None:
    async with running_codex(codex_source(tmp_path)) as driver:
        result = await _prompt(driver)
    assert result.status == "succeeded"
    assert result.providerOperationId == "turn-1"
    frames = [f for f in received(tmp_path / "codex.log") if "method" in f and "id" in f]
    methods = [f["method"] for f in frames]
    assert methods[-2:] == ["thread/resume", "turn/start"]
    assert frames[-2]["params"] == {"threadId": "t-active-2"}
    start = frames[-1]["params"]
    assert start == {
        "threadId": "t-active-2",
        "input": [{"type": "text", "text": "do it", "text_elements": []}],
    }


async def test_allow_danger_full_access_sets_exactly_the_two_overrides(tmp_path: Path) -> None:
    source = codex_source(tmp_path, allowDangerFullAccess=True)
    async with running_codex(source) as driver:
        result = await _prompt(driver)
    assert result.status == "succeeded"
    start = next(f for f in received(tmp_path / "codex.log") if f.get("method") == "turn/start")
    params = start["params"]
    assert params["approvalPolicy"] == "never"
    assert params["sandboxPolicy"] == {"type": "dangerFullAccess"}
    assert "sandbox" not in params
    assert set(params) == {"threadId", "input", "approvalPolicy", "sandboxPolicy"}


async def test_completion_before_the_turn_start_response(tmp_path: Path) -> None:
    async with running_codex(codex_source(tmp_path, "early")) as driver:
        result = await _prompt(driver)
    assert result.status == "succeeded"
    assert result.providerOperationId == "turn-1"


async def test_failed_turn_carries_the_codex_error_kind(tmp_path: Path) -> None:
    async with running_codex(codex_source(tmp_path, "failed")) as driver:
        result = await _prompt(driver)
    assert result.status == "failed"
    assert result.error is not None
    assert result.error.code == "codex-contextWindowExceeded"
    assert result.error.message == "context window exceeded"
    assert not result.error.retryable


async def test_every_server_request_is_answered(tmp_path: Path) -> None:
    async with running_codex(codex_source(tmp_path, "approval")) as driver:
        result = await _prompt(driver)
    assert result.status == "succeeded"
    answers = {f["id"]: f for f in received(tmp_path / "codex.log") if "method" not in f}
    assert answers[0] == {"id": 0, "result": {"decision": "decline"}}
    assert answers[1] == {"id": 1, "result": {"decision": "decline"}}
    assert answers[2] == {"id": 2, "result": {"permissions": {}}}
    assert answers[3] == {
        "id": 3,
        "result": {"decision": {"denied": {"rejection": "the connector has no approval surface"}}},
    }
    assert answers[4]["error"]["code"] == -32601


async def test_cancel_interrupts_only_its_own_turn(tmp_path: Path) -> None:
    outcome: list[CommandExecutionResult] = []
    async with running_codex(codex_source(tmp_path, "hang")) as driver:
        active = anyio.Event()

        async def mark_active() -> None:
            active.set()

        async def run() -> None:
            options = OperationOptions(on_session_active=mark_active)
            outcome.append(await driver.prompt("t-active-2", PromptPayload(text="x"), options))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(run)
            await active.wait()
            again = await _prompt(driver)
            assert again.status == "needs-confirmation"
            assert again.error is not None
            assert again.error.code == "already-active"
            listed = await driver.list_sessions()
            assert {s.nativeSessionId: s.active for s in listed.sessions}["t-active-2"] is True
            other = await driver.cancel("t-active-1")
            assert other.status == "unsupported"
            cancelled = await driver.cancel("t-active-2")
            assert cancelled.status == "succeeded"
    assert outcome[0].status == "failed"
    assert outcome[0].error is not None
    assert outcome[0].error.code == "cancelled"
    interrupt = next(
        f for f in received(tmp_path / "codex.log") if f.get("method") == "turn/interrupt"
    )
    assert interrupt["params"] == {"threadId": "t-active-2", "turnId": "turn-1"}


async def test_child_exit_mid_turn_is_unknown(tmp_path: Path) -> None:
    async with running_codex(codex_source(tmp_path, "exit")) as driver:
        result = await _prompt(driver)
        assert result.status == "unknown"
        assert result.error is not None
        assert result.error.code == "codex-app-server-exited"
        after = await _prompt(driver)
        assert after.status == "failed"
        assert after.error is not None
        assert after.error.retryable


async def test_stderr_is_drained_not_echoed(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    async with running_codex(codex_source(tmp_path, "noisy")) as driver:
        page = await driver.list_sessions()
    assert page.sessions
    captured = capfd.readouterr()
    assert "bwrap" not in captured.err
    assert "xxxx" not in captured.err
    assert "bwrap" not in captured.out


async def test_rename_and_unsupported_operations(tmp_path: Path) -> None:
    async with running_codex(codex_source(tmp_path)) as driver:
        renamed = await driver.rename_session("t-active-3", "Renamed")
        assert renamed.status == "succeeded"
        assert renamed.result == {"title": "Renamed"}
        page = await driver.list_sessions("active:2")
        assert page.sessions[0].title == "Renamed"
        start = await driver.start_session("t-new", StartPayload(text="hi"), OperationOptions())
        mode = await driver.set_mode("t-active-1", "plan")
        option = await driver.set_config_option("t-active-1", "model", "x")
    assert [r.status for r in (start, mode, option)] == ["unsupported"] * 3
    frames = [f for f in received(tmp_path / "codex.log") if f.get("method") == "thread/name/set"]
    assert frames[0]["params"] == {"threadId": "t-active-3", "name": "Renamed"}


async def test_managed_and_proxy_refuse_clearly(tmp_path: Path) -> None:
    for transport in ("managed", "proxy"):
        source = codex_source(tmp_path, codexTransport=transport)
        driver = CodexAppServerDriver(source, base_env=BASE_ENV)
        async with anyio.create_task_group() as tasks:
            with pytest.raises(CodexDriverError) as caught:
                await driver.start(tasks)
        assert caught.value.code == "codex-transport-unsupported"
        assert "WebSocket" in caught.value.message
    assert not (tmp_path / "codex.log").exists()


async def test_missing_binary_is_source_unavailable(tmp_path: Path) -> None:
    source = codex_source(tmp_path, command=None, codexBin=str(tmp_path / "no-codex"))
    driver = CodexAppServerDriver(source, base_env=BASE_ENV)
    async with anyio.create_task_group() as tasks:
        with pytest.raises(CodexDriverError) as caught:
            await driver.start(tasks)
    assert caught.value.code == "codex-app-server-unavailable"


async def test_codex_bin_home_cwd_and_env_reach_the_child(tmp_path: Path) -> None:
    wrapper = tmp_path / "codex"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_CODEX}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    workdir = tmp_path / "work"
    workdir.mkdir()
    source = codex_source(
        tmp_path,
        command=None,
        codexBin=str(wrapper),
        codexHome=str(tmp_path / "home"),
        cwd=str(workdir),
        env={"FAKE_MARK": "from-source"},
    )
    async with running_codex(source) as driver:
        assert driver.version == "0.171.0"
    first = read_log(tmp_path / "codex.log")[0]
    assert first["argv"][1:] == ["app-server", "--listen", "stdio://"]
    assert first["CODEX_HOME"] == str(tmp_path / "home")
    assert _same_path(first["cwd"], workdir)
    assert first["FAKE_MARK"] == "from-source"


async def test_handshake_timeout_kills_the_child(tmp_path: Path) -> None:
    silent = (sys.executable, "-c", "import time; time.sleep(60)")
    driver = CodexAppServerDriver(
        codex_source(tmp_path, command=silent), base_env=BASE_ENV, handshake_timeout=0.3
    )
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            with pytest.raises(CodexDriverError) as caught:
                await driver.start(tasks)
    assert caught.value.code == "codex-handshake-timeout"


async def test_child_that_exits_before_the_handshake(tmp_path: Path) -> None:
    gone = (sys.executable, "-c", "import sys; sys.stderr.write('boom\\n'); sys.exit(2)")
    driver = CodexAppServerDriver(codex_source(tmp_path, command=gone), base_env=BASE_ENV)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            with pytest.raises(CodexDriverError) as caught:
                await driver.start(tasks)
    assert caught.value.code == "codex-app-server-exited"


async def test_interrupt_refused_with_no_active_turn(tmp_path: Path) -> None:
    outcome: list[CommandExecutionResult] = []
    async with running_codex(codex_source(tmp_path, "unstarted"), interrupt_wait=0.2) as driver:
        active = anyio.Event()

        async def mark() -> None:
            active.set()

        async def run() -> None:
            options = OperationOptions(on_session_active=mark)
            outcome.append(await driver.prompt("t-active-2", PromptPayload(text="x"), options))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(run)
            await active.wait()
            refused = await driver.cancel("t-active-2")
            assert refused.status == "failed"
            assert refused.error is not None
            assert refused.error.code == "codex-interrupt-failed"
            assert refused.error.message == "no active turn to interrupt"
            await driver.stop()
    assert outcome[0].status == "unknown"


def test_the_fake_mirrors_the_real_handshake_errors() -> None:
    frames = [
        {"id": 1, "method": "thread/list", "params": {}},
        {"id": 2, "method": "initialize", "params": {"clientInfo": {"name": "t", "version": "1"}}},
        {"id": 3, "method": "initialize", "params": {"clientInfo": {"name": "t", "version": "1"}}},
        {"id": 4, "method": "no/such", "params": {}},
    ]
    run = subprocess.run(
        [sys.executable, str(FAKE_CODEX)],
        input="".join(json.dumps(f) + "\n" for f in frames),
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    answers = {f["id"]: f for f in map(json.loads, run.stdout.splitlines()) if "id" in f}
    assert answers[1]["error"] == {"code": -32600, "message": "Not initialized"}
    assert "userAgent" in answers[2]["result"]
    assert answers[3]["error"]["message"] == "Already initialized"
    assert answers[4]["error"]["code"] == -32600
    assert run.stderr.startswith("WARN")
