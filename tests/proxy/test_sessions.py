"""Record a session of each protocol through the proxy, replay it to the same client.

Each test drives the library's own client against the reference server
through a recording proxy (no diagnostics expected), then against a
:class:`ReplayServer` of that cassette, and compares what the client got.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from shedproto.clients.agents_host import AsyncAgentsHostClient
from shedproto.clients.desktop import AsyncDesktopClient
from shedproto.clients.herdr import AsyncHerdrClient
from shedproto.clients.host_agent import AsyncApprovalConsumer, read_status_async
from shedproto.clients.proxy import ReplayServer
from shedproto.desktop import DesktopError
from shedproto.herdr import DEFAULT_PROTOCOL
from shedproto.host_agent import NS_SSH, POLICY_SHED_DESKTOP, ApprovalRequest, TokenGet
from shedproto.observe import REDACTED, decode_cassette
from shedproto.servers.herdr import HerdrServer
from shedproto.servers.host_agent import HostAgentServer, MintedCredential
from shedproto.testing import RunningAgentsHost, make_command
from shedproto.testing._cassette import serving
from shedproto.testing._desktop import DesktopServerFactory

from ._helpers import proxied

Session = Callable[[Path], Awaitable[Any]]


async def replayed(cassette: Path, listen: Path, session: Session) -> tuple[Any, ReplayServer]:
    """Run ``session`` against a replay of ``cassette`` served on ``listen``."""
    replay = ReplayServer(cassette, listen)
    async with serving(replay) as path:
        result = await session(path)
    return result, replay


async def record_and_replay(
    upstream: Path,
    directory: Path,
    protocol: str,
    session: Session,
    *,
    deviations: tuple[str, ...] = (),
    **options: Any,
) -> tuple[Any, Any, Path]:
    """Record ``session`` through a proxy, replay it; return both results and the cassette.

    The proxy must report exactly the ``deviations`` kinds, in order.
    """
    cassette = directory / "session.ndjson"
    async with proxied(
        directory / "proxy.sock", upstream, protocol, record=cassette, **options
    ) as run:
        recorded = await session(run.path)
    assert [d.kind for d in run.diagnostics] == list(deviations), [
        d.human() for d in run.diagnostics
    ]
    result, replay = await replayed(cassette, directory / "replay.sock", session)
    assert replay.mismatches == []
    return recorded, result, cassette


async def test_herdr_session_records_and_replays(
    herdr_server: HerdrServer, short_socket_dir: Path
) -> None:
    async def session(path: Path) -> list[Any]:
        client = AsyncHerdrClient.for_socket(path)
        out: list[Any] = [await client.request("ping")]
        out.append(await client.request("workspace.create", {"label": "rec"}))
        out.append(await client.request("workspace.list"))
        try:
            await client.request("pane.get", {"pane_id": "w9:p9"})
        except Exception as exc:  # the error answer is part of the session
            out.append(repr(exc))
        return out

    recorded, replay, _ = await record_and_replay(
        herdr_server.path, short_socket_dir, "herdr", session, version=DEFAULT_PROTOCOL
    )
    assert replay == recorded
    assert len(recorded) == 4


@pytest.mark.parametrize("dialect", ["mac", "tauri"])
async def test_desktop_session_records_and_replays(
    desktop_server_factory: DesktopServerFactory, short_socket_dir: Path, dialect: str
) -> None:
    server = desktop_server_factory(dialect=dialect)

    async def session(path: Path) -> list[Any]:
        async with await AsyncDesktopClient.connect(path) as client:
            out: list[Any] = [await client.identify(), await client.call("rc.list")]
            try:
                await client.call("no.such.op")
            except DesktopError as exc:
                out.append((exc.code, exc.message))
            out.append(await client.identify())
        return out

    recorded, replay, _ = await record_and_replay(
        server.path,
        short_socket_dir,
        "desktop",
        session,
        dialect=dialect,
        deviations=("unknown_op",),  # the session's deliberate unknown op, seen by the proxy
    )
    assert replay == recorded
    assert recorded[2][0] in ("unknown-op", "unknown_op")


async def test_agents_host_session_records_and_replays(
    agents_host: RunningAgentsHost, short_socket_dir: Path
) -> None:
    async def session(path: Path) -> list[Any]:
        async with await AsyncAgentsHostClient.connect(path) as client:
            out: list[Any] = [await client.health()]
            command = make_command(agents_host.owner_did, "rec-1")
            command["payload"]["env"] = {"API_KEY": "sekrit-value"}
            out.append(await client.submit(command, wait=True))
            out.append(await client.receipts(limit=5))
        return [msgspec.to_builtins(item) for item in out]

    recorded, replay, cassette = await record_and_replay(
        agents_host.socket, short_socket_dir, "agents-host", session
    )
    assert replay == recorded
    text = cassette.read_text()
    assert "sekrit-value" not in text
    _, records = decode_cassette(cassette.read_bytes())
    assert any("$.command.payload.env.API_KEY" in r.redacted for r in records)


async def test_host_agent_session_records_and_replays(short_socket_dir: Path) -> None:
    async def mint(server: str, csr: str) -> MintedCredential:
        return MintedCredential(token=f"tok-secret-{server}")

    agent_dir, proxy_dir, replay_dir = (short_socket_dir / name for name in ("a", "p", "r"))
    async with anyio.create_task_group() as tasks:
        agent: HostAgentServer = await tasks.start(HostAgentServer(agent_dir, minter=mint).serve)
        agent.policies[NS_SSH] = POLICY_SHED_DESKTOP

        async def session(directory: Path, *, live: bool) -> list[Any]:
            out: list[Any] = [(await read_status_async(directory)).schema]
            async with await AsyncApprovalConsumer.connect(directory, pid=1) as consumer:
                out.append(consumer.ack)
                if live:
                    tasks.start_soon(agent.request_approval, NS_SSH, "sign", "web")
                request = await consumer.receive()
                assert isinstance(request, ApprovalRequest)
                out.append(request)
                await consumer.approve(request)
                await consumer.send(TokenGet(id="t1", server="web"))
                out.append(await consumer.receive())
            return out

        cassettes = {
            p: short_socket_dir / f"{p}.ndjson" for p in ("host-agent-status", "host-agent")
        }
        results = {}
        async with (
            proxied(proxy_dir / "host-agent-status.sock", agent.status_path, "host-agent-status",
                    record=cassettes["host-agent-status"]) as status_run,
            proxied(proxy_dir / "host-agent.sock", agent.approval_path, "host-agent",
                    record=cassettes["host-agent"]) as approval_run,
        ):  # fmt: skip
            results["recorded"] = await session(proxy_dir, live=True)
        assert status_run.diagnostics == approval_run.diagnostics == []
        agent.shutdown()

    replays = [
        ReplayServer(cassettes[protocol], replay_dir / name)
        for protocol, name in (
            ("host-agent-status", "host-agent-status.sock"),
            ("host-agent", "host-agent.sock"),
        )
    ]
    async with anyio.create_task_group() as tasks:
        for replay in replays:
            await tasks.start(replay.serve)
        results["replayed"] = await session(replay_dir, live=False)
        for replay in replays:
            replay.shutdown()
    assert [replay.mismatches for replay in replays] == [[], []]
    recorded, replay_result = results["recorded"], results["replayed"]
    assert recorded[3].token == "tok-secret-web"
    assert replay_result[3].token == REDACTED  # the cassette never held the secret
    assert replay_result[:3] == recorded[:3]
    assert "tok-secret" not in cassettes["host-agent"].read_text()
