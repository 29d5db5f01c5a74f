"""The drivers behind the host's command worker: commands in, durable receipts out."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from shedproto.connector import (
    COMMAND_SCHEMA,
    AgentSourceConfig,
    Receipt,
    iso_from_epoch_ms,
)
from shedproto.servers.agents_host import AgentDriver, CommandWorker, SqliteTarget, WorkerHooks
from shedproto.servers.connector import CommandLedger
from shedproto.servers.drivers import make_driver_factory

from ._helpers import BASE_ENV, DEADLINE, claude_source, codex_source, record, write_transcript

OWNER = "did:key:z6MkDriversDriversDriversDriversDriversDrivers"


def command(
    command_id: str, source: str, session: str, type_: str = "prompt", **payload: Any
) -> dict[str, Any]:
    return {
        "schema": COMMAND_SCHEMA,
        "ownerDid": OWNER,
        "id": command_id,
        "createdAt": "2026-11-29T20:00:00.000Z",
        "sourceId": source,
        "nativeSessionId": session,
        "type": type_,
        "payload": payload or {"text": f"prompt {command_id}"},
    }


@asynccontextmanager
async def worker_for(
    tmp_path: Path, source: AgentSourceConfig
) -> AsyncIterator[tuple[CommandWorker, list[Receipt]]]:
    ledger = CommandLedger.open(tmp_path / "state" / "ledger.json")
    target = SqliteTarget.open_path(
        str(tmp_path / "target.sqlite3"), owner_did=OWNER, space="did:key:space"
    )
    ticks = [1_800_000_000_000]

    def clock() -> str:
        ticks[0] += 1
        return iso_from_epoch_ms(ticks[0])

    receipts: list[Receipt] = []
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tasks:
            driver: AgentDriver = make_driver_factory(BASE_ENV)(source)
            await driver.start(tasks)
            worker = CommandWorker(
                owner_did=OWNER,
                ledger=ledger,
                target=target,
                drivers={source.id: driver},
                clock=clock,
                task_group=tasks,
                hooks=WorkerHooks(on_receipt=receipts.append),
            )
            try:
                yield worker, receipts
                await worker.drain()
            finally:
                await driver.stop()
                target.close()


def final(receipts: list[Receipt], command_id: str) -> Receipt:
    return [r for r in receipts if r.commandId == command_id][-1]


async def test_codex_prompt_receipts(tmp_path: Path) -> None:
    async with worker_for(tmp_path, codex_source(tmp_path)) as (worker, receipts):
        await worker.handle(
            [
                command("c1", "codex", "t-active-2"),
                command("c2", "codex", "t-active-2", "start", text="x"),
                command("c3", "codex", "t-active-2", "rename", title="Named"),
            ]
        )
        await worker.drain()
    assert final(receipts, "c1").status == "succeeded"
    assert final(receipts, "c1").providerOperationId == "turn-1"
    assert final(receipts, "c2").status == "unsupported"
    assert final(receipts, "c3").result == {"title": "Named"}


async def test_codex_child_exit_mid_turn_leaves_the_receipt_unknown(tmp_path: Path) -> None:
    async with worker_for(tmp_path, codex_source(tmp_path, "exit")) as (worker, receipts):
        await worker.handle([command("c1", "codex", "t-active-2")])
        await worker.drain()
    receipt = final(receipts, "c1")
    assert receipt.status == "unknown"
    assert receipt.error is not None
    assert receipt.error.code == "codex-app-server-exited"


def _claude_session(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "work").mkdir()
    cwd = os.path.realpath(tmp_path / "work")
    session = str(uuid.UUID(int=5))
    write_transcript(
        tmp_path / "claude-home",
        cwd,
        session,
        [record("user", "u1", None, session=session, cwd=cwd, text="hello")],
    )
    return cwd, session


async def test_claude_prompt_and_missing_cli_receipts(tmp_path: Path) -> None:
    cwd, session = _claude_session(tmp_path)
    async with worker_for(tmp_path, claude_source(tmp_path, "is-error", cwd=cwd)) as (
        worker,
        receipts,
    ):
        await worker.handle(
            [
                command("c1", "claude", session),
                command("c2", "claude", session, "set-mode", mode="plan"),
            ]
        )
        await worker.drain()
    failed = final(receipts, "c1")
    assert failed.status == "failed"
    assert failed.error is not None
    assert failed.error.code == "claude-success"
    assert final(receipts, "c2").result == {"mode": "plan", "appliesTo": "connector-prompts"}
    missing = claude_source(tmp_path, cwd=cwd, command=(str(tmp_path / "nothing-here"),))
    async with worker_for(tmp_path / "second", missing) as (worker, receipts):
        await worker.handle([command("c3", "claude", session)])
        await worker.drain()
    receipt = final(receipts, "c3")
    assert receipt.status == "unsupported"
    assert receipt.error is not None
    assert receipt.error.code == "source-unavailable"
