"""Running an :class:`AcpDriver` or a whole host in a test: start, stop, sessions, turns."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from shedproto.agents_host import CommandExecutionResult
from shedproto.connector import (
    AgentsHostCliOptions,
    AgentSourceConfig,
    PromptPayload,
    StartPayload,
    parse_agents_host_config,
)
from shedproto.servers.agents_host import HostRun, OperationOptions, run_host
from shedproto.servers.drivers import AcpDriver


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


OWNER_DID = "did:key:z6MkTestOwner"


def host_run(root: Path, sources: list[dict[str, Any]], errors: list[str]) -> HostRun:
    """Return a :class:`HostRun` of ``sources`` with private dirs under ``root``.

    Its stderr lines go to ``errors``.
    """
    (root / "operator.key").write_bytes(b"test")
    return HostRun(
        cli=AgentsHostCliOptions(
            config_path=str(root / "agents.jsonc"),
            api_url="http://localhost:8000",
            identity_path=str(root / "operator.key"),
            space="did:key:z6MkTestSpace",
        ),
        config=parse_agents_host_config(
            {
                "schema": "commonfabric.agents-host.config",
                "ownerDid": OWNER_DID,
                "collectionIntervalMs": 0,
                "sources": sources,
            }
        ),
        env={
            "XDG_STATE_HOME": str(root / "state"),
            "CF_AGENTS_HOST_LOCK_DIR": str(root / "run"),
            "HOME": str(root),
            "PATH": "/usr/bin:/bin",
        },
        socket_path=str(root / "h.sock"),
        out=lambda line: None,
        err=errors.append,
        handle_signals=False,
    )


@asynccontextmanager
async def hosting(run: HostRun, *, deadline: float = 60) -> AsyncIterator[list[int]]:
    """Run the host until it is ready (or failed); yield its exit status list; stop it on exit."""
    status: list[int] = []
    with anyio.fail_after(deadline):
        async with anyio.create_task_group() as tg:

            async def main() -> None:
                status.append(await run_host(run))
                run.ready.set()

            tg.start_soon(main)
            await run.ready.wait()
            try:
                yield status
            finally:
                run.stop_requested.set()
