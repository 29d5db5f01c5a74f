"""The command worker: sequence, dedupe, ordering, cancel gate, faults and recovery."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest

from shedproto.agents_host import CommandExecutionResult
from shedproto.connector import AgentSourceConfig, InvalidCommand, Receipt
from shedproto.servers.agents_host import (
    CommandTaskError,
    CommandWorker,
    CommandWorkerError,
    WorkerHooks,
)
from shedproto.servers.connector import CommandLedger
from shedproto.testing._agents_host import EchoDriver, make_command

from .conftest import OWNER, Clock, Flaky, open_any_target

pytestmark = pytest.mark.usefixtures("both_targets")


@dataclass
class Rig:
    worker: CommandWorker
    target: Flaky
    ledger: CommandLedger
    driver: EchoDriver
    receipts: list[Receipt] = field(default_factory=list)
    invalid: list[InvalidCommand] = field(default_factory=list)
    failures: list[CommandTaskError] = field(default_factory=list)
    refreshed: list[tuple[str, str]] = field(default_factory=list)


def echo_source() -> AgentSourceConfig:
    return AgentSourceConfig(id="echo", driver="acp", enabled=True, command=("x",))


@asynccontextmanager
async def rig(tmp_path: Path, *, target: Flaky | None = None) -> AsyncIterator[Rig]:
    ledger = CommandLedger.open(tmp_path / "state" / "ledger.json")
    target = target or open_any_target(tmp_path / "target.sqlite3")
    driver = EchoDriver(echo_source())
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            receipts: list[Receipt] = []
            invalid: list[InvalidCommand] = []
            failures: list[CommandTaskError] = []
            refreshed: list[tuple[str, str]] = []

            async def refresh(source: str, session: str) -> None:
                refreshed.append((source, session))

            worker = CommandWorker(
                owner_did=OWNER,
                ledger=ledger,
                target=target,
                drivers={"echo": driver},
                clock=Clock(),
                task_group=tg,
                hooks=WorkerHooks(
                    on_receipt=receipts.append,
                    on_invalid=lambda i, p: invalid.append(i),
                    on_task_failure=failures.append,
                    refresh=refresh,
                ),
            )
            yield Rig(worker, target, ledger, driver, receipts, invalid, failures, refreshed)


def statuses(rig: Rig) -> list[tuple[str, str]]:
    return [(r.commandId, r.status) for r in rig.receipts]


async def test_prompt_sequence_and_documents(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        assert await r.worker.handle([make_command(OWNER, "c1")]) == 1
        await r.worker.drain()
        assert statuses(r) == [("c1", "in-flight"), ("c1", "succeeded")]
        stored = r.target.read_receipt("c1", None)
        assert stored is not None
        assert stored.status == "succeeded"
        assert stored.providerOperationId == "s1:2"
        ledgered = r.ledger.get("c1")
        assert ledgered == stored
        assert r.ledger.pending_publication_count() == 0
        index = r.target.read_receipt_index()
        assert index is not None
        assert [(row.commandId, row.status) for row in index.receipts] == [("c1", "succeeded")]
        assert r.refreshed == [("echo", "s1")]


async def test_invalid_and_foreign_commands_are_skipped(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        bad = make_command(OWNER, "c1")
        bad["schema"] = "nope"
        foreign = make_command("did:key:someone-else", "c2")
        assert await r.worker.handle([bad, foreign, "not json", 7]) == 0
        await r.worker.drain()
        assert r.receipts == []
        assert len(r.invalid) == 4
        assert r.driver.calls == []


async def test_json_string_elements_are_accepted(tmp_path: Path) -> None:
    import json

    async with rig(tmp_path) as r:
        await r.worker.handle([json.dumps(make_command(OWNER, "c1"))])
        await r.worker.drain()
        assert statuses(r)[-1] == ("c1", "succeeded")


async def test_redelivered_arrays_run_each_command_once(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        first = [make_command(OWNER, "c1")]
        await r.worker.handle(first)
        await r.worker.handle([*first, make_command(OWNER, "c2")])
        await r.worker.drain()
        await r.worker.handle([*first, make_command(OWNER, "c2")])
        await r.worker.drain()
        assert [call[2] for call in r.driver.calls] == ["prompt c1", "prompt c2"]
        assert [s for s in statuses(r) if s[1] == "succeeded"] == [
            ("c1", "succeeded"),
            ("c2", "succeeded"),
        ]


async def test_same_id_on_two_queues_is_two_commands(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        await r.worker.handle([make_command(OWNER, "c1")])
        await r.worker.handle([make_command(OWNER, "c1")], "workbench")
        await r.worker.drain()
        owner = r.target.read_receipt("c1", None)
        producer = r.target.read_receipt("c1", "workbench")
        assert owner is not None
        assert producer is not None
        assert owner.producer is None
        assert producer.producer == "workbench"
        assert len(r.driver.calls) == 2


async def test_in_flight_publication_failure_never_calls_the_provider(tmp_path: Path) -> None:
    target = open_any_target(tmp_path / "t.sqlite3")
    target.fail_when = lambda receipt: receipt.status == "in-flight"
    async with rig(tmp_path, target=target) as r:
        await r.worker.handle([make_command(OWNER, "c1")])
        await r.worker.drain()
        assert r.driver.calls == []
        stored = r.target.read_receipt("c1", None)
        assert stored is not None
        assert stored.status == "failed"
        assert stored.error is not None
        assert stored.error.code == "claim-publish-failed"
        assert stored.error.retryable is True


async def test_driver_that_raises_gives_provider_call_failed(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        r.driver.fail = "boom"
        await r.worker.handle([make_command(OWNER, "c1")])
        await r.worker.drain()
        stored = r.target.read_receipt("c1", None)
        assert stored is not None
        assert stored.status == "failed"
        assert stored.error is not None
        assert (stored.error.code, stored.error.message) == ("provider-call-failed", "Error: boom")
        assert r.refreshed == [("echo", "s1")]  # prompts refresh even after a failure


async def test_bad_payload_fails_after_the_claim(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        await r.worker.handle([make_command(OWNER, "c1", payload={})])
        await r.worker.drain()
        assert statuses(r) == [("c1", "in-flight"), ("c1", "failed")]
        assert r.receipts[-1].error is not None
        assert r.receipts[-1].error.code == "provider-call-failed"


async def test_unknown_source_is_unsupported(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        await r.worker.handle([make_command(OWNER, "c1", source_id="gone")])
        await r.worker.drain()
        assert r.receipts[-1].status == "unsupported"
        assert r.receipts[-1].error is not None
        assert r.receipts[-1].error.code == "source-unavailable"
        assert r.refreshed == []


async def test_terminal_publication_failure_is_republished_at_next_start(tmp_path: Path) -> None:
    target = open_any_target(tmp_path / "t.sqlite3")
    target.fail_when = lambda receipt: receipt.status == "succeeded"
    async with rig(tmp_path, target=target) as r:
        await r.worker.handle([make_command(OWNER, "c1")])
        with pytest.raises(CommandWorkerError) as info:
            await r.worker.drain()
        assert "terminal receipt publication failed" in str(info.value.errors[0])
        assert r.ledger.pending_publication_count() == 1
        assert r.refreshed == [("echo", "s1")]
        published = r.target.read_receipt("c1", None)
        assert published is not None
        assert published.status == "in-flight"
    target.fail_when = lambda receipt: False
    async with rig(tmp_path, target=target) as again:
        recovered = await again.worker.recover_unpublished_receipts()
        assert [(x.commandId, x.status) for x in recovered] == [("c1", "succeeded")]
        assert again.ledger.pending_publication_count() == 0
        stored = again.target.read_receipt("c1", None)
        assert stored is not None
        assert stored.status == "succeeded"
        await again.worker.handle([make_command(OWNER, "c1")])
        await again.worker.drain()
        assert again.driver.calls == []


async def test_orphaned_in_flight_claim_is_unknown_and_never_rerun(tmp_path: Path) -> None:
    from shedproto.connector import in_flight_receipt

    async with rig(tmp_path) as r:
        await r.worker.handle([make_command(OWNER, "c1")])
        await r.worker.drain()
    # A crash between the claim and the terminal receipt leaves the claim in the ledger.
    ledger = CommandLedger.open(tmp_path / "state" / "ledger.json")
    ledger.put(
        in_flight_receipt(
            owner_did=OWNER,
            command_id="c2",
            source_id="echo",
            native_session_id="s1",
            claimed_at="2026-01-01T00:00:00.000Z",
        )
    )
    async with rig(tmp_path, target=r.target) as again:
        recovered = await again.worker.recover_unpublished_receipts()
        assert [(x.commandId, x.status) for x in recovered] == [("c2", "unknown")]
        assert recovered[0].error is not None
        assert recovered[0].error.code == "orphaned-in-flight"
        await again.worker.handle([make_command(OWNER, "c2")])
        await again.worker.drain()
        assert again.driver.calls == []


async def test_shared_claim_from_another_host(tmp_path: Path) -> None:
    from shedproto.connector import in_flight_receipt

    async with rig(tmp_path) as r:
        r.target.publish_receipt(
            in_flight_receipt(
                owner_did=OWNER,
                command_id="c1",
                source_id="echo",
                native_session_id="s1",
                claimed_at="2026-01-01T00:00:00.000Z",
            ),
            now="2026-01-01T00:00:00.000Z",
        )
        r.target.publish_receipt(
            in_flight_receipt(
                owner_did=OWNER,
                command_id="c2",
                source_id="echo",
                native_session_id="other",
                claimed_at="2026-01-01T00:00:00.000Z",
            ),
            now="2026-01-01T00:00:00.000Z",
        )
        await r.worker.handle([make_command(OWNER, "c1"), make_command(OWNER, "c2")])
        with pytest.raises(CommandWorkerError):
            await r.worker.drain()
        assert r.driver.calls == []
        stored = r.target.read_receipt("c1", None)
        assert stored is not None
        assert stored.status == "unknown"
        assert stored.error is not None
        assert stored.error.code == "orphaned-shared-claim"
        assert [str(f) for f in r.failures] == ["command ID belongs to another session: c2"]


async def test_per_session_order_and_cancel_gate(tmp_path: Path) -> None:
    async with rig(tmp_path) as r:
        r.driver.gate = anyio.Event()
        commands = [
            make_command(OWNER, "p1"),
            make_command(OWNER, "p2"),
            make_command(OWNER, "x1", session="s2"),
            make_command(OWNER, "k1", type_="cancel", payload={}),
        ]
        cancel_called = anyio.Event()
        real_cancel = r.driver.cancel

        async def cancel(session: str) -> CommandExecutionResult:
            result = await real_cancel(session)
            cancel_called.set()
            return result

        r.driver.cancel = cancel  # type: ignore[method-assign,assignment]
        await r.worker.handle(commands)
        with anyio.fail_after(5):
            await cancel_called.wait()
        # the cancel ran while p1 was still running (it waited only for p1's readiness)
        assert [c[2] for c in r.driver.calls if c[0] == "prompt" and c[1] == "s1"] == ["prompt p1"]
        r.driver.gate.set()
        await r.worker.drain()
        s1 = [c[2] for c in r.driver.calls if c[1] == "s1"]
        assert s1.index("prompt p1") < s1.index("prompt p2")
        p1 = r.target.read_receipt("p1", None)
        assert p1 is not None
        assert p1.result == {"stopReason": "cancelled"}, (r.driver.calls, r.receipts)
        terminal = [x for x in r.receipts if x.status != "in-flight"]
        assert sorted(x.commandId for x in terminal) == ["k1", "p1", "p2", "x1"]
