"""Faults while approvals are pending: the agent stays up, every approval fails closed, no leaks."""

from __future__ import annotations

import os
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from pathlib import Path

import anyio
import anyio.abc
import anyio.lowlevel

from shedproto.clients.host_agent import AsyncApprovalConsumer, read_status_async
from shedproto.host_agent import ApprovalRequest, Decision, Outcome
from shedproto.servers.host_agent import HostAgentServer

from ._agent import HELLO, Raw, connected, running


async def until(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    """Poll ``predicate`` (state owned by the server, no event to wait on) within ``timeout``."""
    with anyio.fail_after(timeout):
        while not predicate():  # noqa: ASYNC110
            await anyio.sleep(0.005)


@asynccontextmanager
async def pending(agent: HostAgentServer, count: int) -> AsyncIterator[list[Decision]]:
    """Start ``count`` ssh approvals, wait until all are pending, yield their (future) decisions."""
    decisions: list[Decision] = []
    before = agent.pending_approvals

    async def ask() -> None:
        decisions.append(await agent.request_approval("ssh-agent", "sign", "web"))

    async with anyio.create_task_group() as tg:
        for _ in range(count):
            tg.start_soon(ask)
        await until(lambda: agent.pending_approvals == before + count)
        yield decisions
    assert len(decisions) == count


async def check_healthy(agent: HostAgentServer, directory: Path, consumers: int = 0) -> None:
    await until(lambda: len(agent._consumers) == consumers)
    assert agent.pending_approvals == 0
    assert agent._waiters == {}
    status = await read_status_async(directory)
    assert status.approval_channel.consumer_connected is (consumers > 0)


@asynccontextmanager
async def leak_checked() -> AsyncIterator[None]:
    baseline = len(anyio.get_running_tasks())
    yield
    await until(lambda: len(anyio.get_running_tasks()) == baseline)


async def test_consumer_disconnects(short_socket_dir: Path) -> None:
    async with leak_checked(), running(short_socket_dir) as agent:
        consumer = await connected(agent, short_socket_dir)
        async with pending(agent, 3) as decisions:
            await consumer.aclose()
        assert {(d.approved, d.outcome, d.decided_by) for d in decisions} == {
            (False, Outcome.DISCONNECTED, "user")
        }
        await check_healthy(agent, short_socket_dir)


async def test_consumer_superseded(short_socket_dir: Path) -> None:
    async with leak_checked(), running(short_socket_dir) as agent:
        first = await connected(agent, short_socket_dir, client_name="first")
        async with pending(agent, 3) as decisions:
            second = await connected(agent, short_socket_dir, client_name="second")
        assert {(d.approved, d.outcome, d.decided_by) for d in decisions} == {
            (False, Outcome.SUPERSEDED, "user")
        }
        await check_healthy(agent, short_socket_dir, consumers=1)
        await first.aclose()
        await second.aclose()
        await check_healthy(agent, short_socket_dir)


async def test_timeout(short_socket_dir: Path) -> None:
    async with leak_checked(), running(short_socket_dir) as agent:
        agent.approval_timeout = 0.2
        async with await connected(agent, short_socket_dir):
            async with pending(agent, 3) as decisions:
                pass
            assert {(d.approved, d.outcome, d.decided_by) for d in decisions} == {
                (False, Outcome.TIMEOUT, None)
            }
            await check_healthy(agent, short_socket_dir, consumers=1)


async def answer_all(consumer: AsyncApprovalConsumer, decision: str) -> None:
    async for item in consumer:
        if isinstance(item, ApprovalRequest):
            await consumer.respond(item, decision)


async def test_peer_that_never_sends_hello(short_socket_dir: Path) -> None:
    async with leak_checked(), running(short_socket_dir, hello_timeout=0.2) as agent:
        consumer = await connected(agent, short_socket_dir)
        async with pending(agent, 2) as decisions:
            silent = await Raw.connect(agent.approval_path)
            assert await silent.frames_until_eof() == []  # closed after the deadline
            await silent.aclose()
            assert agent.consumer is not None  # the consumer is untouched
            async with anyio.create_task_group() as tg:
                tg.start_soon(answer_all, consumer, "deny")
                await until(lambda: agent.pending_approvals == 0)
                await consumer.aclose()  # ends the iteration (no cancelled receive)
        assert {(d.outcome, d.decided_by) for d in decisions} == {(Outcome.DENIED, "user")}
        await consumer.aclose()
        await check_healthy(agent, short_socket_dir)


async def test_two_mib_line(short_socket_dir: Path) -> None:
    big = b'{"type":"pong","pad":"' + b"x" * (2 << 20) + b'"}\n'
    async with leak_checked(), running(short_socket_dir) as agent:
        consumer = await connected(agent, short_socket_dir)
        # from a stranger: closed silently, the consumer keeps its approvals
        stranger = await Raw.connect(agent.approval_path)
        async with pending(agent, 2) as decisions:
            with anyio.move_on_after(5):
                with suppress(anyio.BrokenResourceError, OSError):
                    await stranger.send(big)
            assert await stranger.frames_until_eof() == []
            assert agent.pending_approvals == 2
            # from the consumer itself: it is disconnected and its approvals fail closed
            with suppress(anyio.BrokenResourceError, OSError):
                await consumer.transport.send(big)
        await stranger.aclose()
        await consumer.aclose()
        assert {(d.outcome, d.decided_by) for d in decisions} == {(Outcome.DISCONNECTED, "user")}
        await check_healthy(agent, short_socket_dir)


async def test_random_bytes(short_socket_dir: Path) -> None:
    rng = random.Random(1234)
    async with leak_checked(), running(short_socket_dir) as agent:
        consumer = await connected(agent, short_socket_dir)
        async with pending(agent, 2) as decisions:
            for _ in range(5):  # strangers spraying bytes: silent closes
                noise = Raw(await anyio.connect_unix(agent.approval_path))
                await noise.send(rng.randbytes(4096) + b"\n")
                assert await noise.frames_until_eof() == []
                await noise.aclose()
            # the consumer sprays too: lines are skipped, the connection lives on
            await consumer.transport.send(os.urandom(1 << 16).replace(b"\n", b" ") + b"\n")
            await until(lambda: agent.consumer is not None)
            async with anyio.create_task_group() as tg:
                tg.start_soon(answer_all, consumer, "nope")  # anything but "approve" denies
                await until(lambda: agent.pending_approvals == 0)
                await consumer.aclose()  # ends the iteration (no cancelled receive)
        assert {(d.approved, d.outcome) for d in decisions} == {(False, Outcome.DENIED)}
        await consumer.aclose()
        await check_healthy(agent, short_socket_dir)


async def test_two_hundred_rapid_reconnects(short_socket_dir: Path) -> None:
    async with leak_checked(), running(short_socket_dir) as agent:
        consumer = await connected(agent, short_socket_dir)
        async with pending(agent, 3) as decisions:
            limiter = anyio.CapacityLimiter(20)

            async def churn(index: int) -> None:
                async with limiter:
                    raw = await Raw.connect(agent.approval_path)
                    if index % 2 == 0:
                        await raw.send(HELLO)
                        await raw.line()  # the ack (accepted) or already the superseded notice
                    await raw.aclose()

            async with anyio.create_task_group() as tg:
                for index in range(200):
                    tg.start_soon(churn, index)
        assert {(d.outcome, d.decided_by) for d in decisions} == {(Outcome.SUPERSEDED, "user")}
        await consumer.aclose()
        await check_healthy(agent, short_socket_dir)
        late: Awaitable[Decision] = agent.request_approval("ssh-agent", "sign", "web")
        assert (await late).outcome is Outcome.NO_CONSUMER


async def test_shutdown_with_pending_approvals(short_socket_dir: Path) -> None:
    async with leak_checked():
        async with running(short_socket_dir) as agent:
            consumer = await connected(agent, short_socket_dir)
            decisions: list[Decision] = []

            async def ask() -> None:
                decisions.append(await agent.request_approval("ssh-agent", "sign", "web"))

            async with anyio.create_task_group() as tg:
                tg.start_soon(ask)
                await until(lambda: agent.pending_approvals == 1)
                agent.shutdown()
        await consumer.aclose()
        assert [(d.approved, d.outcome) for d in decisions] == [(False, Outcome.DISCONNECTED)]
        assert not agent.status_path.exists()


async def test_consumer_that_stops_reading_is_dropped(short_socket_dir: Path) -> None:
    """A full 256-frame writer queue is a dead transport: dropped, approvals denied."""
    async with leak_checked(), running(short_socket_dir) as agent:
        stuck = await Raw.connect(agent.approval_path)
        await stuck.send(HELLO)
        await stuck.line()
        await agent.wait_for_consumer()
        async with pending(agent, 2) as decisions:
            detail = "x" * 8192
            for _ in range(2000):  # far more than the socket buffer plus the queue hold
                agent.audit("egress", "tcp", "", "allow", detail=detail)
                if agent.consumer is None:
                    break
                await anyio.lowlevel.checkpoint()
        assert {(d.outcome, d.decided_by) for d in decisions} == {(Outcome.DISCONNECTED, "user")}
        await stuck.aclose()
        await check_healthy(agent, short_socket_dir)
        assert len(agent.ring) == 100


async def test_write_deadline_drops_a_stuck_consumer(short_socket_dir: Path) -> None:
    async with leak_checked(), running(short_socket_dir, write_timeout=0.2) as agent:
        stuck = await Raw.connect(agent.approval_path)
        await stuck.send(HELLO)
        await stuck.line()
        await agent.wait_for_consumer()
        async with pending(agent, 1) as decisions:
            for _ in range(40):  # 40 x 64 KiB: more than the socket buffers, fewer than 256
                agent.audit("egress", "tcp", "", "allow", detail="y" * 65536)
        assert [(d.outcome, d.decided_by) for d in decisions] == [(Outcome.DISCONNECTED, "user")]
        await stuck.aclose()
        await check_healthy(agent, short_socket_dir)
