"""Socket-level helpers for the host-agent shell tests."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from shedproto.clients.host_agent import AsyncApprovalConsumer
from shedproto.host_agent import AgentConfig
from shedproto.servers.host_agent import HostAgentServer

WATCH_NONE = AgentConfig(
    policies={
        "ssh-agent": "shed-desktop",
        "aws-credentials": "approve-all",
        "docker-credentials": "deny-all",
    }
)
HELLO = (
    b'{"v":2,"type":"hello","id":"h1","ts":"2026-01-01T00:00:00Z","client":{"name":"fake-desktop",'
    b'"version":"0.0.0-test","pid":4242},"capabilities":[],"replay_events":0}\n'
)


@asynccontextmanager
async def running(directory: Path, **kwargs: Any) -> AsyncIterator[HostAgentServer]:
    """Run a reference agent for the duration of the block; always shut down."""
    kwargs.setdefault("config", WATCH_NONE)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            server: HostAgentServer = await tg.start(HostAgentServer(directory, **kwargs).serve)
            try:
                yield server
            finally:
                server.shutdown()


class Raw:
    """A raw approval-channel peer: bytes in, decoded JSON lines out."""

    def __init__(self, stream: anyio.abc.SocketStream) -> None:
        self.stream = stream
        self.buffer = b""
        self.eof = False

    @classmethod
    async def connect(cls, path: Path) -> Raw:
        return cls(await anyio.connect_unix(path))

    async def send(self, data: bytes) -> None:
        await self.stream.send(data)

    async def line(self, timeout: float = 5.0) -> bytes | None:
        """The next raw line without its newline, or None at EOF."""
        with anyio.fail_after(timeout):
            while b"\n" not in self.buffer:
                try:
                    chunk = await self.stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    self.eof = True
                    return None
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    async def frame(self, timeout: float = 5.0) -> dict[str, Any]:
        line = await self.line(timeout)
        assert line is not None, "connection closed before a frame"
        value: dict[str, Any] = json.loads(line)
        return value

    async def frames_until_eof(self, timeout: float = 5.0) -> list[dict[str, Any]]:
        frames = []
        while (line := await self.line(timeout)) is not None:
            frames.append(json.loads(line))
        return frames

    async def aclose(self) -> None:
        await self.stream.aclose()


async def connected(
    agent: HostAgentServer, directory: Path, **kwargs: Any
) -> AsyncApprovalConsumer:
    """Connect a consumer and wait until the agent has promoted it.

    The agent writes the ack *before* it promotes (as the real one does), so a
    client that just got its ack may not be the consumer yet.
    """
    kwargs.setdefault("client_name", "shedproto-test")
    consumer = await AsyncApprovalConsumer.connect(directory, **kwargs)
    with anyio.fail_after(5):
        await agent.wait_for_consumer(client_name=kwargs["client_name"])
    return consumer
