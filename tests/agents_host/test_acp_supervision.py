"""The ACP driver as real agents need it (issue 17): auth, errors, groups, restarts, deadlines."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from shedproto.agents_host import (
    ACP_AGENT_EXITED,
    ACP_AUTH_REQUIRED,
    ACP_PROMPT_DEADLINE,
    ACP_PROMPT_FAILED,
    CommandExecutionResult,
)
from shedproto.connector import AgentSourceConfig, PromptPayload, StartPayload
from shedproto.servers.agents_host import OperationOptions
from shedproto.servers.agents_host.process_group import group_alive
from shedproto.servers.drivers import AcpDriver, AcpDriverError

from .acp_driving import OWNER_DID, host_run, hosting, running_driver, start, turn_with

AGENT = (sys.executable, "-m", "shedproto.servers.agents_host.example_agent")


def source(
    *, command: tuple[str, ...] = AGENT, env: dict[str, str] | None = None, **fields: Any
) -> AgentSourceConfig:
    return AgentSourceConfig(
        id="ex", driver="acp", enabled=True, command=command, env=env, **fields
    )


def source_entry() -> dict[str, Any]:
    return {"id": "echo", "driver": "acp", "enabled": True, "command": list(AGENT)}


def running(config: AgentSourceConfig, **options: Any) -> Any:
    options.setdefault("stop_grace", 2.0)
    base_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    return running_driver(config, handshake_timeout=20, base_env=base_env, **options)


def error_code(result: CommandExecutionResult) -> str | None:
    return None if result.error is None else result.error.code


# -- item 1: authenticate ----------------------------------------------------------------------


async def test_auth_required_is_its_own_code_and_refreshes_nothing() -> None:
    # Regression (items 1 and 3): session/new failing auth_required became
    # provider-call-failed and the refresh loaded the requested id "new-1".
    async with running(source(env={"EXAMPLE_AGENT_REQUIRE_AUTH": "1"})) as driver:
        assert driver.auth_method is None
        result = await driver.start_session("new-1", StartPayload(text="hi"), OperationOptions())
    assert result.status == "failed"
    assert error_code(result) == ACP_AUTH_REQUIRED
    assert result.error is not None
    assert "Authentication required (-32000)" in result.error.message
    assert result.affected_session_set
    assert result.affectedSession is None


async def test_authenticates_with_the_one_method_whose_env_is_present() -> None:
    env = {"EXAMPLE_AGENT_REQUIRE_AUTH": "1", "EXAMPLE_AGENT_TOKEN": "t"}
    async with running(source(env=env)) as driver:
        assert driver.auth_method == "example-token"
        await start(driver)


async def test_authenticates_with_the_configured_method() -> None:
    config = source(env={"EXAMPLE_AGENT_REQUIRE_AUTH": "1"}, authMethod="example-token")
    async with running(config) as driver:
        assert driver.auth_method == "example-token"
        await start(driver)


async def test_an_auth_method_the_agent_does_not_offer_fails_the_start() -> None:
    driver = AcpDriver(source(authMethod="chatgpt"), handshake_timeout=20)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            with pytest.raises(AcpDriverError, match="no auth method chatgpt"):
                await driver.start(tg)
            await driver.stop()


# -- item 4: the agent's error data --------------------------------------------------------------


async def test_agent_error_data_is_kept_and_nonstandard_codes_flagged() -> None:
    async with running(source()) as driver:
        session = await start(driver)
        failed = await driver.prompt(session, PromptPayload(text="fail now"), OperationOptions())
        odd = await driver.prompt(
            session, PromptPayload(text="fail-nonstandard"), OperationOptions()
        )
    assert error_code(failed) == ACP_PROMPT_FAILED
    assert failed.error is not None
    assert failed.error.message == "session/prompt failed: Internal error (-32603): asked to fail"
    assert odd.error is not None
    assert odd.error.message == (
        'session/prompt failed: upstream failed (500, nonstandard): {"status":500}'
    )


# -- item 5: process groups ----------------------------------------------------------------------


async def test_stop_leaves_no_process_of_the_agents_group(tmp_path: Path) -> None:
    # Regression: only the direct child was killed; a wrapper's grandchild
    # (the native codex-acp under npm's wrapper) survived, re-parented to PID 1.
    wrapper = ("/bin/sh", "-c", 'trap "" TERM; sleep 300 & exec "$@"', "sh", *AGENT)
    async with running(source(command=wrapper), stop_grace=0.5) as driver:
        await start(driver)
        pgid = driver.process.pid
        assert pgid is not None
        assert group_alive(pgid)
    assert not group_alive(pgid)


async def test_sources_stop_in_parallel(tmp_path: Path) -> None:
    from shedproto.testing._agents_host import EchoDriver

    from .test_lifecycle import make_host, started

    events: list[tuple[str, str]] = []

    class SlowStop(EchoDriver):
        async def stop(self) -> None:
            events.append(("begin", self.source.id))
            for _ in range(5):  # every other stop begins before this one ends
                await anyio.lowlevel.checkpoint()
            events.append(("end", self.source.id))

    host = make_host(tmp_path, SlowStop, sources=4)
    async with started(host):
        pass
    begins = [i for i, (kind, _) in enumerate(events) if kind == "begin"]
    ends = [i for i, (kind, _) in enumerate(events) if kind == "end"]
    assert len(begins) == len(ends) == 4
    assert max(begins) < min(ends)


# -- item 6: restart -----------------------------------------------------------------------------


async def test_killed_agent_restarts_and_the_next_prompt_works(tmp_path: Path) -> None:
    # Regression: after the agent died every command failed with
    # "send-request is not allowed in state closed" until the host restarted.
    state = tmp_path / "agent-state"
    state.mkdir()
    events: list[tuple[str, bool]] = []
    config = source(env={"EXAMPLE_AGENT_STATE_DIR": str(state)})
    async with running(config, restart_backoff=0.05) as driver:
        driver.set_lifecycle_listener(lambda kind, message, up: events.append((kind, up)))
        session = await start(driver)
        pid = driver.process.pid
        assert pid is not None

        async def kill() -> None:
            os.kill(pid, signal.SIGKILL)

        died = await turn_with(driver, session, "wait forever", kill)
        assert died.status == "unknown"
        assert error_code(died) == ACP_AGENT_EXITED
        assert died.error is not None
        # asyncio may report a reaped SIGKILLed child as status 255
        assert "killed by signal 9" in died.error.message or "status 255" in died.error.message
        again = await driver.prompt(session, PromptPayload(text="again"), OperationOptions())
        assert again.status == "succeeded", again
        assert driver.process.pid != pid
        snapshot = await driver.read_session(session)
    assert events[0] == ("source-agent-exited", False)
    assert events[-1] == ("source-agent-restarted", True)
    texts = [(m.role, m.textPreview) for m in snapshot.normalizedMessages]
    assert texts[:2] == [("user", "hello"), ("assistant", "echo: hello")]
    assert texts[-2:] == [("user", "again"), ("assistant", "echo: again")]


async def test_a_restart_whose_spawn_fails_keeps_retrying_without_hanging(tmp_path: Path) -> None:
    # Issue 11 item 3 at a later restart: the spawn fails, nothing waits forever.
    script = tmp_path / "agent.sh"
    script.write_text(f"#!/bin/sh\nexec {' '.join(AGENT)}\n")
    script.chmod(0o755)
    events: list[str] = []
    spawn_failed = anyio.Event()

    def listen(kind: str, message: str, up: bool) -> None:
        events.append(message)
        if "restart attempt 2" in message:
            spawn_failed.set()

    config = source(command=(str(script),))
    async with running(config, restart_backoff=0.05, restart_wait=0.2) as driver:
        driver.set_lifecycle_listener(listen)
        script.unlink()
        pid = driver.process.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        with anyio.fail_after(20):
            await spawn_failed.wait()
        assert any("cannot run" in message for message in events)
        assert driver.supervision_error is not None
        result = await driver.start_session("new-1", StartPayload(text="x"), OperationOptions())
        assert result.status == "failed"
        assert result.error is not None
        assert result.error.retryable


# -- item 7: deadlines and cancelling a start ----------------------------------------------------


async def test_prompt_deadline_fires_and_frees_the_session() -> None:
    # Regression: an agent that never answered kept the prompt in flight for minutes.
    async with running(source(promptTimeoutMs=200), cancel_grace=0.2) as driver:
        session = await start(driver)
        hung = await driver.prompt(session, PromptPayload(text="hang on"), OperationOptions())
        assert hung.status == "failed"
        assert error_code(hung) == ACP_PROMPT_DEADLINE
        assert hung.error is not None
        assert "200 ms" in hung.error.message
        assert "did not answer the cancel" in hung.error.message
        next_turn = await driver.prompt(session, PromptPayload(text="ok"), OperationOptions())
    assert next_turn.status == "succeeded"


async def test_prompt_deadline_cancels_a_turn_that_answers_the_cancel() -> None:
    async with running(source(promptTimeoutMs=200)) as driver:
        session = await start(driver)
        slow = await driver.prompt(session, PromptPayload(text="wait"), OperationOptions())
    assert error_code(slow) == ACP_PROMPT_DEADLINE
    assert slow.error is not None
    assert "did not answer" not in slow.error.message


async def test_cancel_reaches_a_starts_turn_by_the_requested_id() -> None:
    # Regression: "not-active: no prompt of this host runs in new-1".
    async with running(source()) as driver:
        ready = anyio.Event()
        outcome: dict[str, CommandExecutionResult] = {}

        async def run_start() -> None:
            outcome["r"] = await driver.start_session(
                "new-1",
                StartPayload(text="wait for me"),
                OperationOptions(on_cancellation_ready=ready.set),
            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(run_start)
            await ready.wait()
            cancelled = await driver.cancel("new-1")
            assert cancelled.status == "succeeded"
    result = outcome["r"]
    assert result.status == "failed"
    assert error_code(result) == "cancelled"
    assert result.result is not None
    assert result.result["requestedSessionId"] == "new-1"


# -- item 8: permissions -------------------------------------------------------------------------


@pytest.mark.parametrize(("danger", "answer"), [(None, "no"), (True, "yes")])
async def test_permission_selects_reject_once_or_allow_once(
    danger: bool | None, answer: str
) -> None:
    # Regression: answered "cancelled", which ACP v1 reserves for a cancelled turn.
    async with running(source(allowDangerFullAccess=danger)) as driver:
        session = await start(driver, "permission please")
        snapshot = await driver.read_session(session)
    assert snapshot.normalizedMessages[-1].textPreview == f"outcome={answer}"


async def test_host_health_shows_the_agent_down_then_restarted(tmp_path: Path) -> None:
    from shedproto.connector import Health

    from .test_lifecycle import make_host, started

    def factory(config: AgentSourceConfig) -> AcpDriver:
        return AcpDriver(source(), handshake_timeout=20, restart_backoff=0.05)

    host = make_host(tmp_path, factory)
    down: list[Health] = []
    restarted = anyio.Event()
    async with started(host):
        driver = host.sources["s0"].driver
        assert isinstance(driver, AcpDriver)
        forward = driver._listener
        assert forward is not None

        def listen(kind: str, message: str, up: bool) -> None:
            assert forward is not None
            forward(kind, message, up)
            if up:
                restarted.set()
            else:
                down.append(host.health())

        driver.set_lifecycle_listener(listen)
        pid = driver.process.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        with anyio.fail_after(20):
            await restarted.wait()
        after = host.health()
    during = down[0].sources[0]
    assert during.status == "degraded"
    assert during.lastError is not None
    assert during.lastError.startswith("the agent process ")
    assert "restart attempt 1" in during.lastError
    assert down[0].status == "degraded"
    assert after.sources[0].status == "ready"
    assert after.status == "ready"
    kinds = [entry.type for entry in after.activity]
    assert kinds.index("source-agent-exited") < kinds.index("source-agent-restarted")


async def test_host_cancel_command_names_a_running_start_by_its_requested_id(
    tmp_path: Path,
) -> None:
    # Regression (item 7): the start's session id was known only from its terminal
    # receipt, so `cancel new-1` answered not-active.
    from shedproto.clients.agents_host import AsyncAgentsHostClient
    from shedproto.testing._agents_host import make_command

    run = host_run(tmp_path, [source_entry()], [])
    start_command = make_command(
        OWNER_DID, "s-1", type_="start", session="new-1", payload={"text": "wait for me"}
    )
    cancel_command = make_command(OWNER_DID, "c-1", type_="cancel", session="new-1", payload={})
    async with hosting(run), await AsyncAgentsHostClient.connect(tmp_path / "h.sock") as client:
        await client.submit(start_command)
        cancelled = (await client.submit(cancel_command, wait=True)).receipt
        started = (await client.submit(start_command, wait=True)).receipt
    assert cancelled is not None
    assert cancelled.status == "succeeded", cancelled
    assert started is not None
    assert started.status == "failed"
    assert started.error is not None
    assert started.error.code == "cancelled"
