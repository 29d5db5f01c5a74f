"""The blocking approval consumer: a plain socket loop over the same core as the async one."""

from __future__ import annotations

import json
from contextlib import suppress
from functools import partial
from pathlib import Path

import anyio
import anyio.abc
import anyio.to_thread
import pytest

from shedproto import ErrorCode, RemoteProtocolError
from shedproto.clients import ConnectError, ConnectReason, UnreachableSocketError
from shedproto.clients.host_agent import (
    AsyncApprovalConsumer,
    BlockingApprovalConsumer,
    SupersededError,
)
from shedproto.host_agent import ApprovalRequest, Decision, Event, Outcome, approval_socket_path

from ._agent import running
from .test_faults import until

ACK = (
    b'{"v":2,"type":"hello_ack","id":"a","ts":"t","accepted":true,"agent":{"version":"x"},'
    b'"namespaces":null,"gate_namespaces":["ssh-agent"],"request_timeout_ms":25000}\n'
)


async def test_blocking_consumer_approves_and_denies(short_socket_dir: Path) -> None:
    async with running(short_socket_dir) as agent:
        agent.audit("egress", "tcp", "", "allow", detail="before")
        seen: list[object] = []

        def desk() -> None:
            with BlockingApprovalConsumer.connect(
                short_socket_dir, client_name="blocking", replay_events=1, timeout=5
            ) as consumer:
                assert consumer.ack is not None
                assert consumer.ack.gate_namespaces == ("ssh-agent",)
                for item in consumer:
                    seen.append(item)
                    if isinstance(item, ApprovalRequest):
                        if item.shed == "yes":
                            consumer.approve(item, decided_by="touchid", scope="per-request")
                        else:
                            consumer.deny(item)
                            return

        decisions: list[Decision] = []
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(partial(anyio.to_thread.run_sync, desk, abandon_on_cancel=True))
                await agent.wait_for_consumer(client_name="blocking")
                decisions.append(await agent.request_approval("ssh-agent", "sign", "yes"))
                decisions.append(await agent.request_approval("ssh-agent", "sign", "no"))
        assert [(d.approved, d.outcome, d.decided_by, d.scope) for d in decisions] == [
            (True, Outcome.APPROVED, "touchid", "per-request"),
            (False, Outcome.DENIED, "user", ""),
        ]
        assert isinstance(seen[0], Event)
        assert seen[0].detail == "before"  # the replayed event comes first
        assert [r.shed for r in seen[1:] if isinstance(r, ApprovalRequest)] == ["yes", "no"]
        await until(lambda: agent.consumer is None)


async def _fake_agent(
    directory: Path,
    script: str,
    got: list[dict[str, object]],
    *,
    task_status: anyio.abc.TaskStatus[None],
) -> None:
    """Accept one consumer: ``ack+ping`` acks, pings and reads the pong; ``close``; ``silent``."""
    path = approval_socket_path(str(directory))
    async with await anyio.create_unix_listener(path) as listener:
        task_status.started()
        async with await listener.accept() as stream:
            buffer = b""
            while b"\n" not in buffer:
                buffer += await stream.receive()
            got.append(json.loads(buffer.partition(b"\n")[0]))
            if script == "close":
                return
            if script == "silent":  # never acks; ends when the consumer gives up and closes
                with suppress(anyio.EndOfStream, anyio.BrokenResourceError):
                    while True:
                        await stream.receive()
                return
            await stream.send(ACK + b'{"v":2,"type":"ping","id":"p1","ts":"t"}\n')
            buffer = buffer.partition(b"\n")[2]
            while b"\n" not in buffer:
                buffer += await stream.receive()
            got.append(json.loads(buffer.partition(b"\n")[0]))
            with suppress(anyio.EndOfStream):
                while True:  # until the consumer closes
                    await stream.receive()


async def test_blocking_consumer_answers_pings_and_times_out(short_socket_dir: Path) -> None:
    got: list[dict[str, object]] = []

    def desk() -> None:
        with BlockingApprovalConsumer.connect(short_socket_dir, client_name="b") as consumer:
            with pytest.raises(TimeoutError):
                consumer.receive(timeout=0.3)  # the ping is answered, never returned
            with pytest.raises(TimeoutError):
                consumer.receive(timeout=0)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            await tg.start(_fake_agent, short_socket_dir, "ack+ping", got)
            await anyio.to_thread.run_sync(desk, abandon_on_cancel=True)
    hello, pong = got
    assert hello["type"] == "hello"
    assert (pong["type"], pong["id"], list(pong)) == ("pong", "p1", ["v", "type", "id", "ts"])


async def test_blocking_connect_errors(short_socket_dir: Path) -> None:
    with pytest.raises(ConnectError):
        BlockingApprovalConsumer.connect(short_socket_dir, timeout=1)
    got: list[dict[str, object]] = []
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            await tg.start(_fake_agent, short_socket_dir, "close", got)
            with pytest.raises(UnreachableSocketError) as info:
                await anyio.to_thread.run_sync(
                    partial(BlockingApprovalConsumer.connect, short_socket_dir, timeout=5)
                )
            # a close before any hello_ack: no agent of this protocol is there
            assert info.value.reason is ConnectReason.OTHER_PROTOCOL
            assert isinstance(info.value.__cause__, RemoteProtocolError)
            assert info.value.__cause__.code is ErrorCode.CONNECTION_CLOSED
        async with anyio.create_task_group() as tg:
            await tg.start(_fake_agent, short_socket_dir, "silent", got)
            with pytest.raises(TimeoutError):
                await anyio.to_thread.run_sync(
                    partial(BlockingApprovalConsumer.connect, short_socket_dir, timeout=0.2)
                )


async def test_blocking_consumer_is_superseded(short_socket_dir: Path) -> None:
    async with running(short_socket_dir) as agent:
        first = await anyio.to_thread.run_sync(
            partial(BlockingApprovalConsumer.connect, short_socket_dir, client_name="first")
        )
        await agent.wait_for_consumer(client_name="first")
        async with await AsyncApprovalConsumer.connect(short_socket_dir, client_name="second"):
            with anyio.fail_after(10), pytest.raises(SupersededError) as info:
                await anyio.to_thread.run_sync(partial(first.receive, timeout=5))
            assert info.value.ack.reason == "superseded"
            with pytest.raises(SupersededError):
                first.receive(timeout=0)  # it stays superseded
        first.close()
