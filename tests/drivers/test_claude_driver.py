"""The claude-agent-sdk driver: transcripts on disk and the fake ``claude`` CLI."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from shedproto import LocalProtocolError
from shedproto.agents_host import CommandExecutionResult
from shedproto.connector import PromptPayload, StartPayload
from shedproto.servers.agents_host import OperationOptions
from shedproto.servers.drivers import ClaudeAgentSdkDriver, ClaudeDriverError

from ._helpers import BASE_ENV, DEADLINE, claude_source, read_log, record, write_transcript

S1 = "11111111-1111-4111-8111-111111111111"
S2 = "22222222-2222-4222-8222-222222222222"
S3 = "33333333-3333-4333-8333-333333333333"


def _realpath(path: Path) -> str:
    return os.path.realpath(path)


def _work(tmp_path: Path) -> str:
    work = tmp_path / "proj.dir"
    work.mkdir(exist_ok=True)
    return _realpath(work)


@asynccontextmanager
async def running(
    tmp_path: Path, scenario: str = "success", **kwargs: Any
) -> AsyncIterator[ClaudeAgentSdkDriver]:
    driver_kwargs = {
        k: kwargs.pop(k) for k in ("platform", "opener", "app_installed", "clock") if k in kwargs
    }
    source = claude_source(tmp_path, scenario, **kwargs)
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tasks:
            driver = ClaudeAgentSdkDriver(
                source, base_env=BASE_ENV, home=str(tmp_path), **driver_kwargs
            )
            await driver.start(tasks)
            try:
                yield driver
            finally:
                await driver.stop()


def _seed(tmp_path: Path, cwd: str) -> Path:
    config = tmp_path / "claude-home"
    write_transcript(
        config,
        cwd,
        S1,
        [
            {"type": "custom-title", "customTitle": "probe name", "sessionId": S1},
            record("user", "u1", None, session=S1, cwd=cwd, text="say hi"),
            record(
                "assistant", "a1", "u1", session=S1, cwd=cwd, text=[{"type": "text", "text": "hi"}]
            ),
            "{this line is not json",
        ],
        mtime=1_800_000_000,
    )
    write_transcript(
        config,
        cwd,
        S2,
        [record("user", "v1", None, session=S2, cwd=cwd, text="x" * 250)],
        mtime=1_800_000_100,
    )
    write_transcript(
        config,
        cwd,
        S3,
        [record("user", "w1", None, session=S3, cwd=cwd, text="side", isSidechain=True)],
        mtime=1_800_000_200,
    )
    write_transcript(
        config,
        "/elsewhere",
        str(uuid.UUID(int=7)),
        [record("user", "z", None, session="z", cwd="/elsewhere", text="other")],
    )
    return config


def _log(tmp_path: Path) -> list[dict[str, Any]]:
    return read_log(tmp_path / "claude.log")


async def test_inventory_reads_transcripts_scoped_to_the_source_cwd(tmp_path: Path) -> None:
    cwd = _work(tmp_path)
    _seed(tmp_path, cwd)
    async with running(tmp_path, cwd=cwd) as driver:
        page = await driver.list_sessions()
    assert [s.nativeSessionId for s in page.sessions] == [S2, S1]
    first, second = page.sessions[1], page.sessions[0]
    assert first.title == "probe name"
    assert first.cwd == cwd
    assert first.createdAt == "2026-11-29T20:06:05.818Z"
    assert first.updatedAt == "2027-01-15T08:00:00.000Z"
    assert first.archived is None
    assert first.active is None
    assert second.title == "x" * 200 + "\u2026"
    assert second.raw["firstPrompt"] == "x" * 200 + "\u2026"
    assert page.nextCursor is None


async def test_inventory_without_a_cwd_covers_every_project(tmp_path: Path) -> None:
    _seed(tmp_path, _work(tmp_path))
    async with running(tmp_path) as driver:
        page = await driver.list_sessions()
    assert len(page.sessions) == 3


async def test_inventory_pages_by_offset(tmp_path: Path) -> None:
    cwd = _work(tmp_path)
    config = tmp_path / "claude-home"
    for index in range(103):
        session = str(uuid.UUID(int=index + 1))
        rows = [record("user", f"u{index}", None, session=session, cwd=cwd, text=f"p{index}")]
        write_transcript(config, cwd, session, rows, mtime=1_700_000_000 + index)
    async with running(tmp_path, cwd=cwd) as driver:
        first = await driver.list_sessions()
        second = await driver.list_sessions(first.nextCursor)
        with pytest.raises(LocalProtocolError, match="invalid Claude cursor"):
            await driver.list_sessions("ten")
    assert len(first.sessions) == 100
    assert first.nextCursor == "100"
    assert [s.title for s in second.sessions] == ["p2", "p1", "p0"]
    assert second.nextCursor is None


async def test_read_follows_the_main_chain(tmp_path: Path) -> None:
    cwd = _work(tmp_path)
    _seed(tmp_path, cwd)
    async with running(tmp_path, cwd=cwd) as driver:
        snapshot = await driver.read_session(S1)
        with pytest.raises(ClaudeDriverError) as missing:
            await driver.read_session(str(uuid.UUID(int=99)))
    assert missing.value.code == "claude-session-not-found"
    assert [(m.id, m.role, m.textPreview) for m in snapshot.normalizedMessages] == [
        ("u1", "user", "say hi"),
        ("a1", "assistant", "hi"),
    ]
    assert snapshot.events[0] == {
        "type": "user",
        "uuid": "u1",
        "session_id": S1,
        "message": {"role": "user", "content": "say hi"},
        "parent_tool_use_id": None,
    }
    assert snapshot.revision == "1800000000000"
    assert snapshot.complete


async def test_prompt_resumes_in_the_recorded_cwd(tmp_path: Path) -> None:
    cwd = _work(tmp_path)
    _seed(tmp_path, cwd)
    async with running(tmp_path, cwd=cwd) as driver:
        result = await driver.prompt(S1, PromptPayload(text="again"), OperationOptions())
        snapshot = await driver.read_session(S1)
    assert result.status == "succeeded"
    assert result.result == {"nativeSessionId": S1}
    start = _log(tmp_path)[0]
    assert start["argv"] == [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--input-format",
        "stream-json",
        f"--resume={S1}",
    ]
    assert start["cwd"] == cwd
    assert start["CLAUDE_CONFIG_DIR"] == str(tmp_path / "claude-home")
    sent = _log(tmp_path)[1]["received"]
    assert sent == {
        "type": "user",
        "message": {"role": "user", "content": "again"},
        "parent_tool_use_id": None,
        "session_id": S1,
    }
    assert [m.textPreview for m in snapshot.normalizedMessages] == ["say hi", "hi", "again", "done"]
    assert driver.version == "2.1.332"


async def test_mode_and_model_apply_to_later_prompts(tmp_path: Path) -> None:
    cwd = _work(tmp_path)
    _seed(tmp_path, cwd)
    async with running(tmp_path, cwd=cwd) as driver:
        bypass = await driver.set_mode(S1, "bypassPermissions")
        mode = await driver.set_mode(S1, "plan")
        model = await driver.set_config_option(S1, "model", "claude-opus")
        other = await driver.set_config_option(S1, "effort", "high")
        result = await driver.prompt(S1, PromptPayload(text="go"), OperationOptions())
    assert bypass.status == "unsupported"
    assert mode.result == {"mode": "plan", "appliesTo": "connector-prompts"}
    assert model.status == "succeeded"
    assert other.status == "unsupported"
    assert result.status == "succeeded"
    argv = _log(tmp_path)[0]["argv"]
    assert argv[-4:] == ["--permission-mode", "plan", "--model", "claude-opus"]


async def test_bypass_permissions_needs_allow_danger_full_access(tmp_path: Path) -> None:
    cwd = _work(tmp_path)
    _seed(tmp_path, cwd)
    async with running(tmp_path, cwd=cwd, allowDangerFullAccess=True) as driver:
        assert driver.capabilities.modes is not None
        assert "bypassPermissions" in driver.capabilities.modes
        mode = await driver.set_mode(S1, "bypassPermissions")
        result = await driver.prompt(S1, PromptPayload(text="go"), OperationOptions())
    assert mode.status == "succeeded"
    assert result.status == "succeeded"
    argv = _log(tmp_path)[0]["argv"]
    assert argv[-3:] == [
        "--permission-mode",
        "bypassPermissions",
        "--allow-dangerously-skip-permissions",
    ]


async def _one_prompt(tmp_path: Path, scenario: str) -> CommandExecutionResult:
    cwd = _work(tmp_path)
    _seed(tmp_path, cwd)
    async with running(tmp_path, scenario, cwd=cwd) as driver:
        return await driver.prompt(S1, PromptPayload(text="go"), OperationOptions())


async def test_success_with_is_error_fails(tmp_path: Path) -> None:
    result = await _one_prompt(tmp_path, "is-error")
    assert result.status == "failed"
    assert result.error is not None
    assert (result.error.code, result.error.message) == ("claude-success", "api_error")


async def test_error_max_turns_fails_with_its_errors(tmp_path: Path) -> None:
    result = await _one_prompt(tmp_path, "max-turns")
    assert result.error is not None
    assert result.error.code == "claude-error_max_turns"
    assert result.error.message == "Reached maximum number of turns (1)"


async def test_no_result_is_unknown(tmp_path: Path) -> None:
    result = await _one_prompt(tmp_path, "no-result")
    assert result.status == "unknown"
    assert result.error is not None
    assert result.error.code == "claude-query-outcome-unknown"


async def test_nonzero_exit_without_result_is_unknown(tmp_path: Path) -> None:
    result = await _one_prompt(tmp_path, "nonzero")
    assert result.status == "unknown"


async def test_tool_permission_requests_are_denied(tmp_path: Path) -> None:
    result = await _one_prompt(tmp_path, "can-use-tool")
    assert result.status == "succeeded"
    answers = [
        e["received"]
        for e in _log(tmp_path)
        if e.get("received", {}).get("type") == "control_response"
    ]
    assert answers == [
        {
            "type": "control_response",
            "response": {
                "subtype": "success",
                "request_id": "cli_req_1",
                "response": {
                    "behavior": "deny",
                    "message": "the connector has no approval surface",
                },
            },
        }
    ]


async def test_controls_reach_a_running_query_and_cancel_interrupts(tmp_path: Path) -> None:
    cwd = _work(tmp_path)
    _seed(tmp_path, cwd)
    outcome: list[CommandExecutionResult] = []
    async with running(tmp_path, "wait", cwd=cwd) as driver:
        active = anyio.Event()

        async def mark() -> None:
            active.set()

        async def run() -> None:
            options = OperationOptions(on_session_active=mark)
            outcome.append(await driver.prompt(S1, PromptPayload(text="long"), options))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(run)
            await active.wait()
            busy = await driver.prompt(S1, PromptPayload(text="again"), OperationOptions())
            assert busy.status == "needs-confirmation"
            listed = await driver.list_sessions()
            assert {s.nativeSessionId: s.active for s in listed.sessions}[S1] is True
            await driver.set_mode(S1, "acceptEdits")
            await driver.set_config_option(S1, "model", "claude-haiku")
            assert (await driver.cancel(S2)).status == "unsupported"
            assert (await driver.cancel(S1)).status == "succeeded"
    assert outcome[0].status == "failed"
    assert outcome[0].error is not None
    assert outcome[0].error.code == "claude-error_during_execution"
    controls = [
        e["received"]["request"]
        for e in _log(tmp_path)
        if e.get("received", {}).get("type") == "control_request"
    ]
    assert controls == [
        {"subtype": "set_permission_mode", "mode": "acceptEdits"},
        {"subtype": "set_model", "model": "claude-haiku"},
        {"subtype": "interrupt"},
    ]


async def test_cancel_during_the_metadata_lookup(tmp_path: Path) -> None:
    cwd = _work(tmp_path)
    _seed(tmp_path, cwd)
    async with running(tmp_path, cwd=cwd) as driver, anyio.create_task_group() as tasks:

        def ready() -> None:
            tasks.start_soon(driver.cancel, S1)

        result = await driver.prompt(
            S1, PromptPayload(text="x"), OperationOptions(on_cancellation_ready=ready)
        )
    assert result.status == "failed"
    assert result.error is not None
    assert result.error.code == "cancelled"
    assert _log(tmp_path) == []


async def test_prompt_on_a_missing_session(tmp_path: Path) -> None:
    cwd = _work(tmp_path)
    async with running(tmp_path, cwd=cwd) as driver:
        result = await driver.prompt(S1, PromptPayload(text="x"), OperationOptions())
    assert result.error is not None
    assert result.error.code == "claude-session-not-found"


async def test_missing_cli_keeps_inventory_working(tmp_path: Path) -> None:
    cwd = _work(tmp_path)
    _seed(tmp_path, cwd)
    async with running(tmp_path, cwd=cwd, command=(str(tmp_path / "no-claude"),)) as driver:
        assert not driver.cli_available
        page = await driver.list_sessions()
        result = await driver.prompt(S1, PromptPayload(text="x"), OperationOptions())
    assert len(page.sessions) == 2
    assert result.status == "unsupported"
    assert result.error is not None
    assert (result.error.code, result.error.retryable) == ("source-unavailable", True)


async def test_headless_start_with_a_chosen_id(tmp_path: Path) -> None:
    cwd = _work(tmp_path)
    new = str(uuid.UUID(int=42))
    async with running(tmp_path, cwd=cwd) as driver:
        seen: list[bool] = []

        async def active() -> None:
            seen.append(True)

        started = await driver.start_session(
            new,
            StartPayload(text="begin", title="My title", mode="plan"),
            OperationOptions(on_session_active=active),
        )
        again = await driver.start_session(new, StartPayload(text="begin"), OperationOptions())
        page = await driver.list_sessions()
    assert started.status == "succeeded"
    assert started.result == {"nativeSessionId": new, "cwd": cwd, "title": "My title"}
    assert started.affectedSession == new
    assert seen == [True]
    assert again.error is not None
    assert again.error.code == "claude-session-exists"
    argv = _log(tmp_path)[0]["argv"]
    assert argv[6:] == ["--session-id", new, "-n", "My title", "--permission-mode", "plan"]
    assert {s.nativeSessionId: s.title for s in page.sessions} == {new: "My title"}


async def test_start_validation(tmp_path: Path) -> None:
    cwd = _work(tmp_path)
    new = str(uuid.UUID(int=43))
    async with running(tmp_path, cwd=cwd) as driver:
        bad_id = await driver.start_session(
            "not-a-uuid", StartPayload(text="x"), OperationOptions()
        )
        elsewhere = await driver.start_session(
            new, StartPayload(text="x", cwd="/tmp"), OperationOptions()
        )
        same = await driver.start_session(
            new, StartPayload(text="x", cwd=cwd + "/."), OperationOptions()
        )
        bad_mode = await driver.start_session(
            str(uuid.UUID(int=44)), StartPayload(text="x", mode="yolo"), OperationOptions()
        )
        desktop = await driver.start_session(
            str(uuid.UUID(int=45)), StartPayload(text="x", surface="desktop"), OperationOptions()
        )
    assert bad_id.error is not None
    assert bad_id.error.code == "claude-session-id-invalid"
    assert elsewhere.error is not None
    assert elsewhere.error.code == "claude-start-cwd-not-source"
    assert same.status == "succeeded"
    assert bad_mode.status == "unsupported"
    assert desktop.status == "unsupported"
    async with running(tmp_path) as sourceless:
        needs = await sourceless.start_session(
            str(uuid.UUID(int=46)), StartPayload(text="x"), OperationOptions()
        )
    assert needs.error is not None
    assert needs.error.code == "claude-start-cwd-required"


async def test_failed_start_rolls_the_mode_back(tmp_path: Path) -> None:
    cwd = _work(tmp_path)
    new = str(uuid.UUID(int=47))
    async with running(tmp_path, "is-error", cwd=cwd) as driver:
        result = await driver.start_session(
            new, StartPayload(text="x", mode="plan"), OperationOptions()
        )
        assert result.status == "failed"
        await driver.prompt(new, PromptPayload(text="y"), OperationOptions())
    resumed = [e["argv"] for e in _log(tmp_path) if "argv" in e]
    assert len(resumed) == 2
    assert "--permission-mode" in resumed[0]
    assert "--permission-mode" not in resumed[1]


async def test_desktop_start_and_pairing(tmp_path: Path) -> None:
    cwd = _work(tmp_path)
    opened: list[str] = []
    now = [1_800_000_000.0]

    async def opener(url: str) -> bool:
        opened.append(url)
        return True

    async with running(
        tmp_path,
        cwd=cwd,
        platform="darwin",
        opener=opener,
        app_installed=lambda: True,
        clock=lambda: now[0],
    ) as driver:
        assert driver.capabilities.surfaces == ("headless", "desktop")
        target = str(uuid.UUID(int=50))
        result = await driver.start_session(
            target,
            StartPayload(text="fix the  bug", title="Desk", surface="desktop"),
            OperationOptions(),
        )
        with_mode = await driver.start_session(
            target, StartPayload(text="x", mode="plan", surface="desktop"), OperationOptions()
        )
        created = str(uuid.UUID(int=51))
        write_transcript(
            tmp_path / "claude-home",
            cwd,
            created,
            [
                record(
                    "user",
                    "d1",
                    None,
                    session=created,
                    cwd=cwd,
                    text="fix the bug",
                    timestamp="2027-01-15T08:00:01.000Z",
                )
            ],
        )
        page = await driver.list_sessions()
    assert result.status == "succeeded"
    assert result.result == {
        "nativeSessionId": target,
        "cwd": cwd,
        "title": "Desk",
        "surface": "desktop",
    }
    assert result.affectedSession is None
    assert result.affected_session_set
    assert opened == [f"claude://code/new?folder={cwd.replace('/', '%2F')}&q=fix+the++bug"]
    assert with_mode.error is not None
    assert with_mode.error.code == "claude-desktop-mode-unsupported"
    row = next(s for s in page.sessions if s.nativeSessionId == created)
    assert row.startedAs == target
    assert row.title == "Desk"


async def test_desktop_checks(tmp_path: Path) -> None:
    cwd = _work(tmp_path)

    async def refuse(url: str) -> bool:
        del url
        return False

    async with running(
        tmp_path, cwd=cwd, platform="darwin", opener=refuse, app_installed=lambda: False
    ) as driver:
        long = await driver.start_session(
            S1, StartPayload(text="x" * 14337, surface="desktop"), OperationOptions()
        )
        missing = await driver.start_session(
            S1, StartPayload(text="x", surface="desktop"), OperationOptions()
        )
    assert long.error is not None
    assert long.error.code == "claude-desktop-prompt-too-long"
    assert missing.error is not None
    assert (missing.error.code, missing.error.retryable) == ("claude-desktop-not-installed", True)
    async with running(
        tmp_path, cwd=cwd, platform="darwin", opener=refuse, app_installed=lambda: True
    ) as driver:
        failing = await driver.start_session(
            S1, StartPayload(text="x", surface="desktop"), OperationOptions()
        )
    assert failing.error is not None
    assert failing.error.code == "claude-desktop-open-failed"


async def test_rename_appends_a_custom_title(tmp_path: Path) -> None:
    cwd = _work(tmp_path)
    config = _seed(tmp_path, cwd)
    async with running(tmp_path, cwd=cwd) as driver:
        renamed = await driver.rename_session(S2, "Renamed")
        missing = await driver.rename_session(str(uuid.UUID(int=98)), "x")
        page = await driver.list_sessions()
    assert renamed.result == {"title": "Renamed"}
    assert missing.error is not None
    assert missing.error.code == "claude-session-not-found"
    assert {s.nativeSessionId: s.title for s in page.sessions}[S2] == "Renamed"
    files = list(config.glob(f"projects/*/{S2}.jsonl"))
    last = json.loads(files[0].read_text().splitlines()[-1])
    assert last == {"type": "custom-title", "customTitle": "Renamed", "sessionId": S2}


async def test_stop_refuses_new_prompts(tmp_path: Path) -> None:
    cwd = _work(tmp_path)
    _seed(tmp_path, cwd)
    async with running(tmp_path, cwd=cwd) as driver:
        await driver.stop()
        result = await driver.prompt(S1, PromptPayload(text="x"), OperationOptions())
    assert result.error is not None
    assert (result.error.code, result.error.retryable) == ("claude-driver-stopped", True)


async def test_stop_kills_a_query_that_ignores_interrupts(tmp_path: Path) -> None:
    cwd = _work(tmp_path)
    _seed(tmp_path, cwd)
    outcome: list[CommandExecutionResult] = []
    async with running(tmp_path, "stubborn", cwd=cwd) as driver:
        active = anyio.Event()

        async def mark() -> None:
            active.set()

        async def run() -> None:
            options = OperationOptions(on_session_active=mark)
            outcome.append(await driver.prompt(S1, PromptPayload(text="x"), options))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(run)
            await active.wait()
            await driver.stop(grace=0.2)
    assert outcome[0].status == "unknown"
    interrupts = [
        e for e in _log(tmp_path) if e.get("received", {}).get("type") == "control_request"
    ]
    assert interrupts == []  # the stubborn child never reads them; the kill ended it


def _git(cwd: Path, *args: str) -> None:
    env = {**BASE_ENV, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_SYSTEM": "/dev/null"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, timeout=30)


def _repo_with_worktree(tmp_path: Path) -> tuple[str, str, str]:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(
        repo,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
    )
    _git(repo, "worktree", "add", "-q", str(tmp_path / "repo-wt"), "-b", "feature")
    sub = repo / "sub"
    sub.mkdir()
    return _realpath(repo), _realpath(tmp_path / "repo-wt"), _realpath(sub)


async def test_inventory_includes_git_worktrees_not_subdirectories(tmp_path: Path) -> None:
    repo, worktree, sub = await anyio.to_thread.run_sync(_repo_with_worktree, tmp_path)
    config = tmp_path / "claude-home"
    for cwd, session in ((repo, S1), (worktree, S2), (sub, S3)):
        write_transcript(
            config, cwd, session, [record("user", "u", None, session=session, cwd=cwd, text=cwd)]
        )
    async with running(tmp_path, cwd=repo) as driver:
        page = await driver.list_sessions()
        snapshot = await driver.read_session(S2)
        result = await driver.prompt(S2, PromptPayload(text="in the worktree"), OperationOptions())
    assert {s.nativeSessionId: s.cwd for s in page.sessions} == {S1: repo, S2: worktree}
    assert snapshot.summary.cwd == worktree
    assert result.status == "succeeded"
    assert _log(tmp_path)[0]["cwd"] == worktree
