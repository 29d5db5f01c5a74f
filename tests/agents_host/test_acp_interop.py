"""The ACP driver against a real agent built with the public ``agent-client-protocol`` SDK."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from shedproto.connector import AgentSourceConfig, PromptPayload, StartPayload
from shedproto.drivers.acp import PermissionPolicy
from shedproto.servers.agents_host import OperationOptions
from shedproto.servers.drivers import AcpDriver, AcpDriverError

pytest.importorskip("acp")

AGENT = Path(__file__).with_name("sdk_echo_agent.py")


def source(**env: str) -> AgentSourceConfig:
    return AgentSourceConfig(
        id="echo",
        driver="acp",
        enabled=True,
        command=(sys.executable, str(AGENT)),
        cwd=str(AGENT.parent),
        env=env or None,
    )


@asynccontextmanager
async def running(
    policy: PermissionPolicy = PermissionPolicy.CANCELLED, **env: str
) -> AsyncIterator[AcpDriver]:
    driver = AcpDriver(source(**env), permission_policy=policy, handshake_timeout=20)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            await driver.start(tg)
            try:
                yield driver
            finally:
                await driver.stop()


async def check_start_prompt_list_read(driver: AcpDriver) -> None:
    caps = driver.capabilities
    assert caps.inventory
    assert caps.read
    assert caps.prompt
    assert caps.cancel
    assert not caps.rename
    assert driver.version == "1.0"
    ready: list[str] = []

    async def active() -> None:
        ready.append("active")

    options = OperationOptions(
        on_cancellation_ready=lambda: ready.append("cancel-ready"), on_session_active=active
    )
    started = await driver.start_session(
        "wanted-id", StartPayload(text="hello there", title="T"), options
    )
    assert started.status == "succeeded", started
    assert started.result is not None
    agent_id = started.result["nativeSessionId"]
    assert started.result["requestedSessionId"] == "wanted-id"
    assert started.result["stopReason"] == "end_turn"
    assert started.affectedSession == agent_id
    assert ready == ["cancel-ready"]  # the named id does not exist: no active refresh
    assert driver.capabilities.modes == ("default", "plan")
    second = await driver.prompt(agent_id, PromptPayload(text="again"), OperationOptions())
    assert second.status == "succeeded"
    page = await driver.list_sessions()
    assert [s.nativeSessionId for s in page.sessions] == [agent_id]
    assert page.sessions[0].title == "hello there"
    snapshot = await driver.read_session(agent_id)
    texts = [(m.role, m.textPreview) for m in snapshot.normalizedMessages]
    assert texts == [
        ("user", "hello there"),
        ("assistant", "echo: hello there"),
        ("user", "again"),
        ("assistant", "echo: again"),
    ]
    assert snapshot.complete
    assert len(snapshot.events) == 6


async def check_load_replays_history(driver: AcpDriver) -> None:
    result = await driver.start_session("x", StartPayload(text="one"), OperationOptions())
    assert result.result is not None
    agent_id = result.result["nativeSessionId"]
    driver._replayed.discard(agent_id)  # force a session/load
    snapshot = await driver.read_session(agent_id)
    assert [m.textPreview for m in snapshot.normalizedMessages] == ["one", "echo: one"]


async def check_cancel_reaches_a_running_prompt(driver: AcpDriver) -> None:
    created = await driver.start_session("x", StartPayload(text="hi"), OperationOptions())
    assert created.result is not None
    agent_id = created.result["nativeSessionId"]
    ready = anyio.Event()
    outcome = {}

    async def run_prompt() -> None:
        outcome["r"] = await driver.prompt(
            agent_id,
            PromptPayload(text="wait for me"),
            OperationOptions(on_cancellation_ready=ready.set),
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(run_prompt)
        await ready.wait()
        busy = await driver.prompt(agent_id, PromptPayload(text="x"), OperationOptions())
        assert busy.status == "needs-confirmation"
        assert busy.error is not None
        assert busy.error.code == "already-active"
        cancelled = await driver.cancel(agent_id)
        assert cancelled.status == "succeeded"
    result = outcome["r"]
    assert result.status == "failed"
    assert result.error is not None
    assert result.error.code == "cancelled"
    idle = await driver.cancel(agent_id)
    assert idle.status == "failed"


async def check_permission(driver: AcpDriver, answer: str) -> None:
    created = await driver.start_session(
        "x", StartPayload(text="permission please"), OperationOptions()
    )
    assert created.result is not None
    snapshot = await driver.read_session(created.result["nativeSessionId"])
    assert snapshot.normalizedMessages[-1].textPreview == f"outcome={answer}"


async def check_agent_error_and_unsupported_operations(driver: AcpDriver) -> None:
    created = await driver.start_session("x", StartPayload(text="hi"), OperationOptions())
    assert created.result is not None
    agent_id = created.result["nativeSessionId"]
    failed = await driver.prompt(agent_id, PromptPayload(text="fail now"), OperationOptions())
    assert failed.status == "failed"
    assert failed.error is not None
    assert failed.error.code == "acp-prompt-failed"
    renamed = await driver.rename_session(agent_id, "t")
    assert renamed.status == "unsupported"
    bad_mode = await driver.set_mode(agent_id, "nope")
    assert bad_mode.status == "failed"
    good_mode = await driver.set_mode(agent_id, "plan")
    assert good_mode.status == "succeeded"
    option = await driver.set_config_option(agent_id, "model", "x")
    assert option.status == "failed"


async def check_local_inventory() -> None:
    async with running(ECHO_AGENT_NO_LIST="1") as driver:
        assert (await driver.list_sessions()).sessions == ()
        created = await driver.start_session("x", StartPayload(text="hi"), OperationOptions())
        assert created.result is not None
        page = await driver.list_sessions()
        assert [s.nativeSessionId for s in page.sessions] == [created.result["nativeSessionId"]]


async def start_error(driver: AcpDriver) -> BaseException:
    with anyio.fail_after(30):
        try:
            async with anyio.create_task_group() as tg:
                await driver.start(tg)
        except BaseException as exc:
            while len(getattr(exc, "exceptions", ())) == 1:
                exc = exc.exceptions[0]  # type: ignore[attr-defined]
            return exc
    raise AssertionError("the driver started")


async def check_version_mismatch() -> None:
    error = await start_error(AcpDriver(source(ECHO_AGENT_VERSION="5"), handshake_timeout=20))
    assert isinstance(error, AcpDriverError)
    assert "protocol version 5" in str(error)


async def test_agent_that_exits_fails_start() -> None:
    config = AgentSourceConfig(
        id="dead", driver="acp", enabled=True, command=(sys.executable, "-c", "pass")
    )
    error = await start_error(AcpDriver(config, handshake_timeout=20))
    assert isinstance(error, AcpDriverError)


async def test_driver_against_the_sdk_agent() -> None:
    """One agent process, every operation (on both anyio backends)."""
    async with running() as driver:
        await check_start_prompt_list_read(driver)
        await check_load_replays_history(driver)
        await check_cancel_reaches_a_running_prompt(driver)
        await check_agent_error_and_unsupported_operations(driver)
        await check_permission(driver, "cancelled")


async def allow_once() -> None:
    async with running(PermissionPolicy.ALLOW_ONCE) as driver:
        await check_permission(driver, "yes")


def test_allow_once_policy() -> None:
    anyio.run(allow_once, backend="asyncio")


def test_without_session_list_the_inventory_is_local() -> None:
    anyio.run(check_local_inventory, backend="asyncio")


def test_version_mismatch_fails_start() -> None:
    anyio.run(check_version_mismatch, backend="asyncio")
