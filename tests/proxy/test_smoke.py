from __future__ import annotations

from pathlib import Path

from shedproto.clients.herdr import AsyncHerdrClient
from shedproto.servers.herdr import HerdrServer

from ._helpers import proxied


async def test_herdr_through_proxy(herdr_server: HerdrServer, short_socket_dir: Path) -> None:
    async with proxied(short_socket_dir / "p.sock", herdr_server.path, "herdr", record=short_socket_dir / "c.ndjson") as run:
        client = AsyncHerdrClient.for_socket(run.path)
        pong = await client.request("ping")
        print(pong)
        ws = await client.request("workspace.list")
        print(ws)
        await run.settle()
    print(run.diagnostics, run.errors)
    print((short_socket_dir / "c.ndjson").read_text())
    assert run.diagnostics == []


async def test_herdr_replay(herdr_server: HerdrServer, short_socket_dir: Path) -> None:
    import anyio
    from shedproto.clients.proxy import ReplayServer
    cassette = short_socket_dir / "c.ndjson"
    async with proxied(short_socket_dir / "p.sock", herdr_server.path, "herdr", record=cassette) as run:
        client = AsyncHerdrClient.for_socket(run.path)
        first = [await client.request("ping"), await client.request("workspace.list")]
        await run.settle()
    replay = ReplayServer(cassette, short_socket_dir / "r.sock")
    async with anyio.create_task_group() as tg:
        path = await tg.start(replay.serve)
        client = AsyncHerdrClient.for_socket(path)
        second = [await client.request("ping"), await client.request("workspace.list")]
        replay.shutdown()
    assert first == second
    assert replay.mismatches == []
