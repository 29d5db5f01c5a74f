"""The reference server and the clients for what issue 26 added: graphics streams, SSH agent
registrations, ``pane.clear`` and release selection (``HerdrServer(herdr_version=...)``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
import anyio.abc
import msgspec
import pytest

from shedproto import herdr
from shedproto.clients.herdr import AsyncHerdrClient, BlockingHerdrClient
from shedproto.herdr import types as t
from shedproto.servers.herdr import HerdrServer

LIMIT = 30
RGBA = herdr.GraphicsFrameHeader(format="rgba", image_width=1, image_height=1)


@pytest.fixture
async def served(short_socket_dir: Path) -> AsyncIterator[HerdrServer]:
    server = HerdrServer(short_socket_dir / "h.sock", shell=["/bin/sh"])
    async with anyio.create_task_group() as tg:
        await tg.start(server.serve)
        yield server
        server.shutdown()


@pytest.fixture
async def graphics_served(short_socket_dir: Path) -> AsyncIterator[HerdrServer]:
    """herdr 0.9.1, the last release with the pane graphics API (0.9.2 removed it)."""
    server = HerdrServer(short_socket_dir / "g.sock", herdr_version="0.9.1", shell=["/bin/sh"])
    async with anyio.create_task_group() as tg:
        await tg.start(server.serve)
        yield server
        server.shutdown()


async def _raw(path: Path, line: bytes) -> dict[str, object]:
    async with await anyio.connect_unix(path) as stream:
        await stream.send(line + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            data += await stream.receive()
    answer: dict[str, object] = json.loads(data)
    return answer


async def _until(check: Callable[[], bool]) -> None:
    """Poll server state that no answer reports (the test's ``fail_after`` bounds it)."""
    while True:
        if check():
            return
        await anyio.sleep(0.01)


async def _pane(client: AsyncHerdrClient) -> str:
    created = await client.workspace_create(cwd="/")
    return created.root_pane.pane_id


async def test_graphics_stream_draws_a_layer_and_clears_it_on_close(
    graphics_served: HerdrServer,
) -> None:
    client = AsyncHerdrClient.for_socket(graphics_served.path)
    with anyio.fail_after(LIMIT):
        pane = await _pane(client)
        async with client.graphics_stream(pane, layer_id="overlay") as stream:
            await stream.send_frame(RGBA, b"\x01\x02\x03\x04")
            await stream.send_frame(RGBA, b"\x05\x06\x07\x08")
            await _until(
                lambda: getattr(
                    graphics_served.graphics.get(pane, {}).get("overlay"), "data_base64", ""
                )
                == "BQYHCA=="  # the second frame's pixels
            )
            with pytest.raises(herdr.HerdrApiError) as conflict:
                async with client.graphics_stream(pane, layer_id="overlay"):
                    pass
            assert conflict.value.code == "stream_conflict"
        await _until(lambda: (pane, "overlay") not in graphics_served.graphics_streams)
    assert "overlay" not in graphics_served.graphics.get(pane, {})


async def test_graphics_stream_file_frames_are_acknowledged(
    graphics_served: HerdrServer, tmp_path: Path
) -> None:
    pixels = tmp_path / "frame.rgba"
    pixels.write_bytes(b"\x00" * 16)
    header = herdr.GraphicsFrameHeader(
        format="bgra",
        image_width=2,
        image_height=2,
        file=herdr.GraphicsFrameFile(path=str(pixels)),
        sequence=3,
        revision=9,
    )
    client = AsyncHerdrClient.for_socket(graphics_served.path)
    with anyio.fail_after(LIMIT):
        pane = await _pane(client)
        async with client.graphics_stream(pane) as stream:
            ack = await stream.send_file(header)
            assert (ack.sequence, ack.revision) == (3, 9)
            missing = msgspec_replace(header, str(tmp_path / "gone"))
            with pytest.raises(herdr.HerdrApiError) as refused:
                await stream.send_file(missing)
    assert refused.value.code == "invalid_frame_file"
    assert refused.value.id.endswith(":file:3")  # <request id>:file:<sequence>


def msgspec_replace(header: herdr.GraphicsFrameHeader, path: str) -> herdr.GraphicsFrameHeader:
    return msgspec.structs.replace(header, file=herdr.GraphicsFrameFile(path=path))


async def test_graphics_stream_refused_inline_frame_answers_with_the_frame_id(
    graphics_served: HerdrServer,
) -> None:
    client = AsyncHerdrClient.for_socket(graphics_served.path)
    with anyio.fail_after(LIMIT):
        pane = await _pane(client)
        line = json.dumps(
            {"id": "g", "method": "pane.graphics.stream", "params": {"pane_id": pane}}
        ).encode()
        bad = herdr.encode_frame(RGBA, b"\x00\x01")  # 2 bytes for a 1x1 rgba image
        async with await anyio.connect_unix(graphics_served.path) as sock:
            await sock.send(line + b"\n" + bad)
            data = b""
            while data.count(b"\n") < 2:
                data += await sock.receive()
            with pytest.raises(anyio.EndOfStream):
                await sock.receive()  # herdr closes after the error
    first, second = (json.loads(x) for x in data.splitlines())
    assert first == {"id": "g", "result": {"type": "ok"}}
    assert second["id"] == "g:frame:1"
    assert second["error"]["code"] == "invalid_image"


async def test_graphics_stream_on_an_unknown_pane_is_refused(graphics_served: HerdrServer) -> None:
    client = AsyncHerdrClient.for_socket(graphics_served.path)
    with anyio.fail_after(LIMIT), pytest.raises(herdr.HerdrApiError) as refused:
        async with client.graphics_stream("w9:p9"):
            pass
    assert refused.value.code == "pane_not_found"


async def test_ssh_agent_registration_lasts_while_the_connection_is_open(
    served: HerdrServer,
) -> None:
    client = AsyncHerdrClient.for_socket(served.path)
    with anyio.fail_after(LIMIT):
        async with client.ssh_agent_register("/run/agent.sock"):
            await _until(lambda: served.ssh_agents == ["/run/agent.sock"])
        await _until(lambda: not served.ssh_agents)
        with pytest.raises(herdr.HerdrApiError) as refused:
            async with client.ssh_agent_register("relative.sock"):
                pass
    # herdrdev/herdr src/api/server.rs:387-407@3f32b738 (InvalidInput -> invalid_ssh_agent)
    assert refused.value.code == "invalid_ssh_agent"
    assert (await client.ping()).capabilities.ssh_agent_registration is True  # type: ignore[union-attr]


async def test_pane_clear_empties_screen_and_scrollback(served: HerdrServer) -> None:
    client = AsyncHerdrClient.for_socket(served.path)
    with anyio.fail_after(LIMIT):
        pane = await _pane(client)
        await client.pane_send_text(pane, "echo CLEARME\n")
        await client.pane_wait_for_output(
            pane, "recent", t.SubstringOutputMatch(value="CLEARME"), timeout_ms=10000
        )
        await client.pane_clear(pane)
        read = await client.pane_read(pane, source="recent")
    assert "CLEARME" not in read.read.text


@pytest.mark.parametrize(
    ("version", "link", "echo", "ssh_field"),
    [
        ("0.9.0", False, False, False),
        ("0.9.1", True, False, False),
        ("0.9.2", True, True, True),
        ("0.9.5", True, True, True),
    ],
)
async def test_release_selection_changes_ping_methods_and_error_ids(
    short_socket_dir: Path, version: str, link: bool, echo: bool, ssh_field: bool
) -> None:
    server = HerdrServer(short_socket_dir / "h.sock", herdr_version=version, shell=["/bin/sh"])
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            pong = await _raw(path, b'{"id":"p","method":"ping","params":{}}')
            resolve = await _raw(
                path, b'{"id":"r","method":"pane.link.resolve","params":'
                b'{"pane_id":"w9:p9","viewport_row":0,"col":0}}'
            )
            clear = await _raw(
                path, b'{"id":"c","method":"pane.clear","params":{"pane_id":"w9:p9"}}'
            )
            server.shutdown()
    assert pong["result"]["version"] == version  # type: ignore[index]
    assert ("ssh_agent_registration" in pong["result"]["capabilities"]) is ssh_field  # type: ignore[index]
    unknown = {"code": "invalid_request"}
    if link:
        assert resolve["error"]["code"] == "pane_not_found"  # type: ignore[index]
    else:
        assert resolve["error"]["code"] == unknown["code"]  # type: ignore[index]
        assert resolve["id"] == ""
    assert clear["error"]["code"] == ("pane_not_found" if echo else "invalid_request")  # type: ignore[index]
    bad = await_bad_id(short_socket_dir, version)
    assert (await bad) == ("q" if echo else "")


async def await_bad_id(directory: Path, version: str) -> str:
    server = HerdrServer(directory / "b.sock", herdr_version=version, shell=["/bin/sh"])
    async with anyio.create_task_group() as tg:
        path = await tg.start(server.serve)
        answer = await _raw(path, b'{"id":"q","method":"no.such","params":{}}')
        server.shutdown()
    return str(answer["id"])


def test_blocking_client_streams_graphics_and_registers_an_agent(short_socket_dir: Path) -> None:
    async def main() -> None:
        old = HerdrServer(short_socket_dir / "g.sock", herdr_version="0.9.1", shell=["/bin/sh"])
        new = HerdrServer(short_socket_dir / "h.sock", shell=["/bin/sh"])
        async with anyio.create_task_group() as tg:
            with_graphics = await tg.start(old.serve)
            with_agents = await tg.start(new.serve)

            def blocking() -> None:
                client = BlockingHerdrClient.for_socket(with_graphics)
                pane = client.workspace_create(cwd="/").root_pane.pane_id
                with client.graphics_stream(pane) as stream:
                    stream.send_frame(RGBA, b"abcd")
                client = BlockingHerdrClient.for_socket(with_agents)
                with client.ssh_agent_register("/run/a.sock"):
                    assert client.ping().protocol == 22

            with anyio.fail_after(LIMIT):
                await anyio.to_thread.run_sync(blocking)
            old.shutdown()
            new.shutdown()

    anyio.run(main)


SUBSCRIBE = json.dumps(
    {
        "id": "sub",
        "method": "events.subscribe",
        "params": {"subscriptions": [{"type": "workspace.renamed"}]},
    }
).encode()


async def _until_end(stream: anyio.abc.ByteStream) -> list[dict[str, object]]:
    out = b""
    while True:
        try:
            out += await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            break
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize(("version", "reported"), [("0.9.1", False), ("0.9.2", True)])
async def test_a_subscriber_that_falls_behind_is_told_from_092(
    short_socket_dir: Path, version: str, reported: bool
) -> None:
    server = HerdrServer(short_socket_dir / "h.sock", herdr_version=version, shell=["/bin/sh"])
    server.poll_interval = 0.2
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            async with await anyio.connect_unix(path) as stream:
                await stream.send(SUBSCRIBE + b"\n")
                ack = json.loads(await stream.receive())
                assert ack["result"]["type"] == "subscription_started"
                for index in range(herdr.HUB_SIZE + 10):  # no checkpoint: the pump falls behind
                    data_ = t.WorkspaceRenamedEventData(workspace_id="w1", label=f"{index}")
                    server.hub.emit(data_)
                if reported:
                    lines = await _until_end(stream)
                else:  # the stream goes on with what is retained, up to the last event
                    last = f'"label":"{herdr.HUB_SIZE + 9}"'.encode()
                    data = b""
                    while last not in data:
                        data += await stream.receive()
                    lines = [json.loads(line) for line in data.splitlines()]
            server.shutdown()
    if reported:
        assert [line["error"]["code"] for line in lines] == ["events_lost"]  # type: ignore[index]
    else:
        assert {line.get("event") for line in lines} == {"workspace_renamed"}  # no error line
        assert len(lines) < herdr.HUB_SIZE + 10  # the overwritten events were skipped


@pytest.mark.parametrize("version", ["0.9.1", "0.9.3", "0.9.5"])
async def test_a_stream_ends_with_a_bare_eof_when_the_server_stops(
    short_socket_dir: Path, version: str
) -> None:
    # herdrdev/herdr src/api/server.rs:726,779@v0.8.2 and stream_subscriptions@3f32b738: the
    # loop sees `running` false and returns Ok, no error line (server_unavailable "server is
    # shutting down" answers only a new request while a stop is pending)
    server = HerdrServer(short_socket_dir / "h.sock", herdr_version=version, shell=["/bin/sh"])
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            async with await anyio.connect_unix(path) as stream:
                await stream.send(SUBSCRIBE + b"\n")
                ack = json.loads(await stream.receive())
                assert ack["result"]["type"] == "subscription_started"
                server.shutdown()
                lines = await _until_end(stream)
    assert lines == []


@pytest.mark.parametrize(("version", "ends"), [("0.9.1", False), ("0.9.2", True), ("0.9.5", True)])
async def test_an_event_that_cannot_be_encoded_ends_the_stream_with_internal_error_from_092(
    short_socket_dir: Path, version: str, ends: bool
) -> None:
    # herdrdev/herdr src/api/subscriptions.rs:342-347@3f32b738 ("failed to encode
    # subscription event: {error}", written with the request id, then the stream returns);
    # before: src/api/subscriptions.rs:333-341@v0.8.2 `to_value(event).ok()` skips the event
    server = HerdrServer(short_socket_dir / "h.sock", herdr_version=version, shell=["/bin/sh"])
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            async with await anyio.connect_unix(path) as stream:
                await stream.send(SUBSCRIBE + b"\n")
                ack = json.loads(await stream.receive())
                assert ack["result"]["type"] == "subscription_started"
                bad = t.WorkspaceRenamedEventData(workspace_id="w1", label=object())  # type: ignore[arg-type]
                server.hub.emit(bad)
                server.hub.emit(t.WorkspaceRenamedEventData(workspace_id="w1", label="after"))
                if ends:
                    lines = await _until_end(stream)
                else:
                    data = b""
                    while b'"after"' not in data:
                        data += await stream.receive()
                    lines = [json.loads(line) for line in data.splitlines()]
            server.shutdown()
    if ends:
        [line] = lines
        assert line["id"] == "sub"
        error = line["error"]
        assert isinstance(error, dict)
        assert error["code"] == "internal_error"
        assert error["message"].startswith("failed to encode subscription event: ")
    else:  # the bad event was skipped, the stream went on
        assert [line["data"]["label"] for line in lines] == ["after"]  # type: ignore[index]


@pytest.mark.parametrize("protocol", [20, 21])
async def test_the_schema_only_protocols_serve_the_hidden_graphics_stream(
    short_socket_dir: Path, protocol: int
) -> None:
    # herdrdev/herdr src/api/schema.rs:182-183@v0.8.2 (parsed, skipped only by the schema) and
    # src/api/server/pane_graphics_stream.rs@v0.8.2: `ok`, then frames on the same connection
    server = HerdrServer(short_socket_dir / "h.sock", protocol=protocol, shell=["/bin/sh"])
    client = AsyncHerdrClient.for_socket(short_socket_dir / "h.sock", protocol=protocol)
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            await tg.start(server.serve)
            pane = await _pane(client)
            async with client.graphics_stream(pane, layer_id="l") as stream:
                await stream.send_frame(RGBA, b"\x01\x02\x03\x04")
                await _until(
                    lambda: getattr(server.graphics.get(pane, {}).get("l"), "data_base64", "")
                    == "AQIDBA=="
                )
            server.shutdown()



@pytest.mark.parametrize("method", sorted(herdr.RETIRED_GRAPHICS))
async def test_the_pane_graphics_api_is_unknown_method_from_092(
    served: HerdrServer, method: str
) -> None:
    # herdrdev/herdr src/api/server.rs retired_pane_graphics_method_error and its test
    # removed_pane_graphics_methods_return_unknown_method_without_stream_upgrade@3f32b738
    line = json.dumps({"id": "removed", "method": method, "params": {}}).encode()
    with anyio.fail_after(LIMIT):
        answer = await _raw(served.path, line)
    assert answer == {
        "id": "removed",
        "error": {"code": "unknown_method", "message": f"unknown method: {method}"},
    }
