"""Running an :class:`AcpDriver` in a test: start, stop, a first session, a turn to interrupt."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio

from shedproto.agentshost import CommandExecutionResult
from shedproto.connector import AgentSourceConfig, PromptPayload, StartPayload
from shedproto.servers.agents_host import AcpDriver, OperationOptions


@asynccontextmanager
async def running_driver(
    config: AgentSourceConfig, *, deadline: float = 60, **options: Any
) -> AsyncIterator[AcpDriver]:
    """Yield a started driver (``options`` go to :class:`AcpDriver`); stop it on exit."""
    driver = AcpDriver(config, **options)
    with anyio.fail_after(deadline):
        async with anyio.create_task_group() as tg:
            await driver.start(tg)
            try:
                yield driver
            finally:
                await driver.stop()


async def start(driver: AcpDriver, text: str = "hello") -> str:
    """Start a session with a first prompt that must succeed; return the agent's session id."""
    result = await driver.start_session("new-1", StartPayload(text=text), OperationOptions())
    assert result.status == "succeeded", result
    assert result.result is not None
    session: str = result.result["nativeSessionId"]
    return session


async def turn_with(
    driver: AcpDriver, session: str, text: str, during: Callable[[], Awaitable[None]]
) -> CommandExecutionResult:
    """Run a prompt; ``during()`` runs once the turn can be cancelled. Return the turn's result."""
    ready = anyio.Event()
    outcome: dict[str, CommandExecutionResult] = {}

    async def turn() -> None:
        outcome["r"] = await driver.prompt(
            session, PromptPayload(text=text), OperationOptions(on_cancellation_ready=ready.set)
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(turn)
        await ready.wait()
        await during()
    return outcome["r"]
