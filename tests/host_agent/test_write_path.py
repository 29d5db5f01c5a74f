"""The agent's fast paths keep the protocol's guarantees.

Frames are written straight to the socket when nothing is queued, events are
corked into one write, a full socket falls back to the bounded queue and the
writer task, and one expiry task replaces a timer per approval. These tests
pin what must not change: order, the 256-frame bound, the write deadline
(in ``test_faults``) and every approval ending on time.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import anyio.abc
import pytest

from shedproto.clients.host_agent import AsyncApprovalConsumer
from shedproto.host_agent import ApprovalRequest, Decision, Event, Outcome, TokenGet
from shedproto.servers.host_agent import HostAgentServer
from shedproto.servers.host_agent._server import CORK_FRAMES, WRITE_QUEUE

from ._agent import HELLO, Raw, connected, running
from .test_faults import check_healthy, leak_checked, until


async def raw_consumer(agent: HostAgentServer) -> Raw:
    """Connect a raw peer, send the hello, read the ack and wait until it is the consumer."""
    peer = await Raw.connect(agent.approval_path)
    await peer.send(HELLO)
    assert (await peer.frame())["type"] == "hello_ack"
    await agent.wait_for_consumer()
    return peer


async def test_a_synchronous_burst_beyond_the_queue_bound_reaches_a_live_consumer(
    short_socket_dir: Path,
) -> None:
    """Corked events are flushed every CORK_FRAMES, so a burst never counts as a dead consumer."""
    burst = WRITE_QUEUE + 2 * CORK_FRAMES + 7
    async with leak_checked(), running(short_socket_dir) as agent:
        async with await connected(agent, short_socket_dir) as consumer:
            for n in range(burst):  # no await in between: the writer task never runs
                agent.audit("egress", "tcp", "", "allow", detail=f"n={n}")
            assert agent.consumer is not None
            details = []
            with anyio.fail_after(10):
                for _ in range(burst):
                    item = await consumer.receive()
                    assert isinstance(item, Event)
                    details.append(item.detail)
            assert details == [f"n={n}" for n in range(burst)]
        await check_healthy(agent, short_socket_dir)


async def test_frames_keep_their_order_across_a_full_socket(short_socket_dir: Path) -> None:
    """Events that fill the socket, then an approval request: read back in emission order."""
    async with leak_checked(), running(short_socket_dir) as agent:
        peer = await raw_consumer(agent)
        big = "z" * 16384
        count = 40  # 640 KiB: more than the socket buffers hold, far fewer than 256 frames
        for n in range(count):
            agent.audit("egress", "tcp", "", "allow", detail=f"{n}:{big}")
        decisions: list[Decision] = []

        async def ask() -> None:
            decisions.append(await agent.request_approval("ssh-agent", "sign", "web"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            seen = []
            while True:
                frame = await peer.frame()
                if frame["type"] == "approval_request":
                    break
                seen.append(frame["detail"].split(":")[0])
            assert seen == [str(n) for n in range(count)]
            response = (
                b'{"v":2,"type":"approval_response","id":"r","ts":"t","request_id":"%s",'
                b'"decision":"approve"}\n' % frame["id"].encode()
            )
            await peer.send(response)
        assert [(d.approved, d.outcome) for d in decisions] == [(True, Outcome.APPROVED)]
        await peer.aclose()
        await check_healthy(agent, short_socket_dir)


async def test_events_after_a_supersede_go_to_the_new_consumer_not_the_old_queue(
    short_socket_dir: Path,
) -> None:
    """Regression: a burst open on a blocked consumer ends when another consumer takes over.

    Events after the switch go to the new consumer; the old one gets everything
    emitted before it (in order), then its superseded ack, and nothing after.
    """
    async with leak_checked(), running(short_socket_dir) as agent:
        old = await raw_consumer(agent)
        big = "z" * 16384
        for n in range(40):  # 640 KiB: the old socket fills, the rest stays queued
            agent.audit("egress", "tcp", "", "allow", detail=f"old{n}:{big}")
        async with await connected(agent, short_socket_dir, client_name="new") as new:
            for n in range(3):
                agent.audit("egress", "tcp", "", "allow", detail=f"new{n}")
            with anyio.fail_after(10):
                got = [await new.receive() for _ in range(3)]
            assert [item.detail for item in got if isinstance(item, Event)] == [
                "new0",
                "new1",
                "new2",
            ]
            frames = await old.frames_until_eof(timeout=10)
        assert [f["detail"].split(":")[0] for f in frames[:-1]] == [f"old{n}" for n in range(40)]
        assert (frames[-1]["type"], frames[-1]["accepted"]) == ("hello_ack", False)
        await old.aclose()
        await check_healthy(agent, short_socket_dir)


async def test_a_hang_up_ends_the_open_burst(short_socket_dir: Path) -> None:
    """Events after a consumer hung up are not appended to its queue through the open burst."""
    async with running(short_socket_dir) as agent:
        peer = await raw_consumer(agent)
        agent.audit("egress", "tcp", "", "allow", detail="corked")  # opens a burst
        (consumer,) = agent._consumers.values()
        assert len(consumer.queue) == 1
        assert agent._burst is consumer.queue
        consumer.hangup()
        agent.audit("egress", "tcp", "", "allow", detail="after")
        assert [b"corked" in line for line in consumer.queue] == [True]
        await peer.aclose()


async def test_the_expiry_task_honours_each_deadline(short_socket_dir: Path) -> None:
    """A shorter timeout set while an approval waits still fires first; both fail closed."""
    async with leak_checked(), running(short_socket_dir) as agent:
        async with await connected(agent, short_socket_dir) as consumer:
            finished: list[str] = []

            async def ask(name: str) -> None:
                decision = await agent.request_approval("ssh-agent", "sign", name)
                assert (decision.approved, decision.outcome) == (False, Outcome.TIMEOUT)
                finished.append(name)

            with anyio.fail_after(10):
                async with anyio.create_task_group() as tg:
                    agent.approval_timeout = 1.0
                    tg.start_soon(ask, "slow")
                    await until(lambda: agent.pending_approvals == 1)
                    agent.approval_timeout = 0.2
                    tg.start_soon(ask, "fast")
            assert finished == ["fast", "slow"]
            requests = [await consumer.receive(), await consumer.receive()]
            assert [r.shed for r in requests if isinstance(r, ApprovalRequest)] == ["slow", "fast"]
        await check_healthy(agent, short_socket_dir)


async def test_a_withdrawn_approval_leaves_nothing_behind(short_socket_dir: Path) -> None:
    """Cancelling the caller (no per-request timer any more) withdraws the request."""
    async with leak_checked(), running(short_socket_dir) as agent:
        async with await connected(agent, short_socket_dir) as consumer:
            with anyio.move_on_after(0.2) as scope:
                await agent.request_approval("ssh-agent", "sign", "web")
            assert scope.cancelled_caught
            assert agent.pending_approvals == 0
            assert agent._waiters == {}
            request = await consumer.receive()
            assert isinstance(request, ApprovalRequest)
            await consumer.approve(request)  # late: ignored
        await check_healthy(agent, short_socket_dir)


async def test_responding_after_the_agent_went_away_raises(short_socket_dir: Path) -> None:
    """The consumer's direct write maps a dead peer to anyio.BrokenResourceError."""
    async with anyio.create_task_group() as tg:
        agent: HostAgentServer = await tg.start(HostAgentServer(short_socket_dir).serve)
        agent.set_policy("ssh-agent", "shed-desktop")
        consumer = await AsyncApprovalConsumer.connect(short_socket_dir, client_name="late")
        await agent.wait_for_consumer(client_name="late")
        tg.start_soon(agent.request_approval, "ssh-agent", "sign", "web")
        request = await consumer.receive()
        assert isinstance(request, ApprovalRequest)
        agent.shutdown()
    assert isinstance(request, ApprovalRequest)
    # the agent's end is closed; this consumer has not read the EOF yet
    with anyio.fail_after(5), pytest.raises(anyio.BrokenResourceError):
        await consumer.approve(request)
    await consumer.aclose()


async def test_consumer_writes_stay_whole_and_ordered_when_the_socket_is_full(
    short_socket_dir: Path,
) -> None:
    """Two tasks send while the agent does not read: direct and queued writes never interleave."""
    path = short_socket_dir / "host-agent.sock"
    ack = (
        b'{"v":2,"type":"hello_ack","id":"a","ts":"t","accepted":true,"agent":{"version":"x"},'
        b'"namespaces":null,"gate_namespaces":null,"request_timeout_ms":25000}\n'
    )
    per_task, pad = 12, "s" * 40000  # 960 KB in all: far more than the socket buffers
    lines: list[dict[str, str]] = []

    async def agent(*, task_status: anyio.abc.TaskStatus[None]) -> None:
        async with await anyio.create_unix_listener(path) as listener:
            task_status.started()
            async with await listener.accept() as stream:
                data = b""
                while b"\n" not in data:
                    data += await stream.receive()
                await stream.send(ack)
                await anyio.sleep(0.3)  # let both senders fill the socket and queue up
                while data.count(b"\n") < 1 + 2 * per_task:
                    data += await stream.receive()
                lines.extend(json.loads(line) for line in data.splitlines()[1:])

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            await tg.start(agent)
            consumer = await AsyncApprovalConsumer.connect(short_socket_dir)

            async def sender(name: str) -> None:
                for n in range(per_task):
                    await consumer.send(TokenGet(id=f"{name}{n:02d}", server=pad))

            async with anyio.create_task_group() as senders:
                senders.start_soon(sender, "a")
                senders.start_soon(sender, "b")
        await consumer.aclose()
    assert all(line["server"] == pad for line in lines)
    ids = [line["id"] for line in lines]
    for name in "ab":
        assert [i for i in ids if i.startswith(name)] == [f"{name}{n:02d}" for n in range(per_task)]
