"""Each protocol's subscription replay rule, in the core and over the socket."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from shedproto import herdr
from shedproto.clients.herdr import AsyncHerdrClient
from shedproto.herdr import types as t
from shedproto.servers.herdr import HerdrServer

LIMIT = 30


def test_protocols_20_and_21_replay_from_zero_and_never_report_loss() -> None:
    for protocol in (20, 21):
        rule = herdr.replay_rule(protocol)
        assert rule.start(41) == 0
        assert not rule.drain_bursts
        assert not rule.lost(0, 900)


def test_protocol_22_pins_the_cursor_and_reports_a_gap() -> None:
    rule = herdr.replay_rule(22)
    assert rule.start(41) == 41
    assert rule.drain_bursts
    assert not rule.lost(41, None)
    assert not rule.lost(41, 42)  # the next event is still retained
    assert rule.lost(41, 43)  # event 42 was overwritten before delivery


def test_probe_ids_are_herdrs() -> None:
    assert herdr.probe_id("sub_1", 2) == "sub_1:sub:2:probe"


@pytest.mark.parametrize(("protocol", "version"), [(20, "0.8.2"), (21, "0.9.0-preview")])
async def test_older_protocols_replay_history(
    short_socket_dir: Path, protocol: int, version: str
) -> None:
    with anyio.fail_after(LIMIT):
        server = HerdrServer(
            short_socket_dir / "h.sock", protocol=protocol, shell=["/bin/sh"], cwd="/tmp"
        )
        server.poll_interval = 0.01
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            client = AsyncHerdrClient.for_socket(path, protocol=protocol)
            assert (await client.ping()).version == version
            await client.workspace_create(label="before")
            async with client.subscribe("workspace.created") as events:
                async for event in events:
                    assert isinstance(event.data, t.WorkspaceCreatedEventData)
                    assert event.data.workspace.label == "before"
                    break
            await client.workspace_close("w1")
            server.shutdown()


async def test_protocol_22_starts_at_the_current_event(herdr_server: HerdrServer) -> None:
    herdr_server.poll_interval = 0.01
    client = AsyncHerdrClient.for_socket(herdr_server.path)
    with anyio.fail_after(LIMIT):
        assert (await client.ping()).version == "0.9.5"
        await client.workspace_create(label="before")
        async with client.subscribe("workspace.created") as events:
            await client.workspace_create(label="after")
            async for event in events:
                assert isinstance(event.data, t.WorkspaceCreatedEventData)
                assert event.data.workspace.label == "after"
                break


async def test_protocol_22_subscription_that_falls_behind_answers_events_lost(
    herdr_server: HerdrServer,
) -> None:
    herdr_server.poll_interval = 0.2
    request = {
        "id": "gap",
        "method": "events.subscribe",
        "params": {"subscriptions": [{"type": "workspace.renamed"}]},
    }
    with anyio.fail_after(LIMIT):
        async with await anyio.connect_unix(herdr_server.path) as stream:
            await stream.send(json.dumps(request).encode() + b"\n")
            ack = await stream.receive()
            assert json.loads(ack)["result"]["type"] == "subscription_started"
            for index in range(herdr.HUB_SIZE + 10):  # no checkpoint: the pump cannot keep up
                herdr_server.hub.emit(
                    t.WorkspaceRenamedEventData(workspace_id="w1", label=f"{index}")
                )
            out = b""
            while True:
                try:
                    out += await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    break
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines == [
        {
            "id": "gap",
            "error": {
                "code": "events_lost",
                # herdrdev/herdr src/api/subscriptions.rs:331-334@3f32b738
                "message": herdr.EVENTS_LOST_MESSAGE,
            },
        }
    ]
