"""Replay never leaves a client waiting (issue 27 item 3).

A connection beyond the cassette is closed at once with a mismatch line (a
host-agent status client, where the server speaks first, used to get neither
bytes nor a close); a request the cassette does not hold gets the protocol's
own error answer (herdr, both desktop dialects, agents-host), then a close,
and the mismatch names the expected and the received frame. Each client
call runs under ``fail_after``: a hang fails the test instead of stalling it.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import msgspec
import pytest

from shedproto.clients import UnreachableSocketError
from shedproto.clients.desktop import AsyncDesktopClient
from shedproto.clients.herdr import AsyncHerdrClient
from shedproto.clients.host_agent import read_status_async
from shedproto.clients.proxy import ReplayMismatch, ReplayServer
from shedproto.desktop import DesktopError
from shedproto.herdr import HerdrApiError
from shedproto.observe import CassetteHeader, CassetteRecord, encode_header, encode_record
from shedproto.testing._cassette import serving

Script = list[tuple[str, bytes]]  # ("c2s"|"s2c"|"eof-c2s"|"eof-s2c", data)


def write_cassette(
    path: Path, protocol: str, episodes: list[Script], *, dialect: str | None = None
) -> Path:
    """Write a cassette of ``episodes`` (one script of records per connection)."""
    header = CassetteHeader(protocol=protocol, dialect=dialect)
    lines = [encode_header(header)]
    t = 0.0
    for conn, script in enumerate(episodes, start=1):
        records = [CassetteRecord(t=t, conn=conn, ev="open")]
        for what, data in script:
            if what.startswith("eof-"):
                records.append(CassetteRecord(t=t, conn=conn, ev="eof", dir=what[4:]))  # type: ignore[arg-type]
            else:
                records.append(CassetteRecord(t=t, conn=conn, ev="data", dir=what, data=data))  # type: ignore[arg-type]
        records.append(CassetteRecord(t=t, conn=conn, ev="close"))
        lines += map(encode_record, records)
    path.write_bytes(b"".join(lines))
    return path


async def read_to_end(path: Path, send: bytes = b"") -> bytes:
    """Connect, send ``send``, read until the server closes."""
    received = b""
    async with await anyio.connect_unix(path) as stream:
        if send:
            await stream.send(send)
        while True:
            try:
                received += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                return received


STATUS = (
    b'{"schema":1,"status":"running","agent":{"pid":1,"version":"0.1.0"},'
    b'"consumer":{"connected":false},"ssh":{},"approvals":{"pending":0}}\n'
)


async def test_a_status_client_beyond_the_cassette_is_closed_at_once(
    short_socket_dir: Path,
) -> None:
    cassette = write_cassette(
        short_socket_dir / "s.ndjson", "host-agent-status", [[("s2c", STATUS), ("eof-s2c", b"")]]
    )
    replay = ReplayServer(cassette, short_socket_dir / "host-agent-status.sock")
    with anyio.fail_after(10):
        async with serving(replay) as path:
            first = await read_to_end(path)
            second = await read_to_end(path)  # used to hang: nobody spoke, nobody closed
            with pytest.raises(UnreachableSocketError, match="another protocol"):
                await read_status_async(path.parent, read_timeout=60)  # at once, not in 60 s
    assert first == STATUS
    assert second == b""
    assert [(m.connection, m.episode, m.expected, m.received) for m in replay.mismatches] == [
        (2, None, None, None),
        (3, None, None, None),
    ]
    assert replay.mismatches[0].human() == (
        "replay connection 2 (no recorded connection): expected nothing more, "
        "received end of stream"
    )


PING = b'{"id":"shedproto_1","method":"ping","params":{}}\n'
PONG = (
    b'{"id":"shedproto_1","result":{"type":"pong","version":"0.8.0","protocol":21,'
    b'"capabilities":{"live_handoff":false,"detached_server_daemon":false}}}\n'
)


async def test_a_herdr_client_beyond_the_cassette_is_closed_without_being_read(
    short_socket_dir: Path,
) -> None:
    cassette = write_cassette(short_socket_dir / "h.ndjson", "herdr", [])
    replay = ReplayServer(cassette, short_socket_dir / "h.sock")
    with anyio.fail_after(10):
        async with serving(replay) as path, await anyio.connect_unix(path) as stream:
            with pytest.raises((anyio.EndOfStream, anyio.BrokenResourceError)):
                await stream.receive()  # closed before the client sent anything
    assert [(m.episode, m.expected, m.received) for m in replay.mismatches] == [
        (None, None, None)
    ]


async def test_a_herdr_request_not_in_the_cassette_gets_herdr_s_error_answer(
    short_socket_dir: Path,
) -> None:
    cassette = write_cassette(
        short_socket_dir / "h.ndjson", "herdr", [[("c2s", PING), ("s2c", PONG), ("eof-s2c", b"")]]
    )
    replay = ReplayServer(cassette, short_socket_dir / "h.sock")
    with anyio.fail_after(10):
        async with serving(replay) as path:
            with pytest.raises(HerdrApiError) as caught:
                await AsyncHerdrClient.for_socket(path).request("workspace.list")
    assert caught.value.code == "internal_error"
    assert "not in the cassette" in caught.value.message
    assert '"method":"ping"' in caught.value.message  # the answer names what was expected
    (mismatch,) = replay.mismatches
    assert mismatch.expected == PING.decode().rstrip("\n")
    assert mismatch.received is not None
    assert '"method":"workspace.list"' in mismatch.received


async def test_a_herdr_line_after_the_recorded_requests_gets_the_error_answer(
    short_socket_dir: Path,
) -> None:
    cassette = write_cassette(
        short_socket_dir / "h.ndjson",
        "herdr",
        [[("c2s", PING), ("s2c", PONG), ("eof-c2s", b"")]],
    )
    replay = ReplayServer(cassette, short_socket_dir / "h.sock")
    with anyio.fail_after(10):
        async with serving(replay) as path:
            received = await read_to_end(path, PING + b'{"id":"2","method":"ping","params":{}}\n')
    first, second = received.splitlines()
    assert first + b"\n" == PONG
    answer = msgspec.json.decode(second)
    assert (answer["id"], answer["error"]["code"]) == ("2", "internal_error")
    (mismatch,) = replay.mismatches
    assert (mismatch.expected, mismatch.episode) == (None, 1)


def _desktop_request(request_id: str, op: str) -> bytes:
    return msgspec.json.encode({"id": request_id, "op": op, "params": {}}) + b"\n"


@pytest.mark.parametrize(
    ("dialect", "code"),
    [
        # charliek/shed-desktop: mac answers any other thrown error with `internal`,
        # the Tauri app an op that failed with `action_failed` (specs/desktop-control.md)
        ("mac", "internal"),
        ("tauri", "action_failed"),
    ],
)
async def test_a_desktop_request_not_in_the_cassette_gets_the_dialect_s_error_answer(
    dialect: str, code: str, short_socket_dir: Path
) -> None:
    identify = _desktop_request("1", "identify")
    answer = b'{"id":"1","ok":true,"result":{"app":"shed-desktop"}}\n'
    cassette = write_cassette(
        short_socket_dir / "d.ndjson",
        "desktop",
        [[("c2s", identify), ("s2c", answer), ("eof-c2s", b"")]] * 2,
        dialect=dialect,
    )
    replay = ReplayServer(cassette, short_socket_dir / "d.sock")
    with anyio.fail_after(10):
        async with serving(replay) as path:
            received = await read_to_end(path, _desktop_request("7", "ui.state"))
            with pytest.raises(DesktopError) as caught:
                async with await AsyncDesktopClient.connect(path) as client:
                    await client.call("ui.state")
    reply = msgspec.json.decode(received)
    assert (reply["id"], reply["ok"], reply["error"]["code"]) == ("7", False, code)
    assert caught.value.code == code
    assert len(replay.mismatches) == 2
    assert all('"op":"identify"' in (m.expected or "") for m in replay.mismatches)
    assert all('"op":"ui.state"' in (m.received or "") for m in replay.mismatches)


async def test_an_agents_host_request_not_in_the_cassette_gets_an_error_reply(
    short_socket_dir: Path,
) -> None:
    health = b'{"id":1,"op":"health"}\n'
    cassette = write_cassette(
        short_socket_dir / "a.ndjson",
        "agents-host",
        [[("c2s", health), ("s2c", b'{"id":1,"ok":true,"result":{"health":{}}}\n')]],
    )
    replay = ReplayServer(cassette, short_socket_dir / "a.sock")
    with anyio.fail_after(10):
        async with serving(replay) as path:
            received = await read_to_end(path, b'{"id":4,"op":"sessions"}\n')
    reply = msgspec.json.decode(received)
    assert (reply["id"], reply["ok"], reply["error"]["code"]) == (4, False, "unavailable")
    assert isinstance(replay.mismatches[0], ReplayMismatch)


async def test_a_host_agent_hello_not_in_the_cassette_is_closed_without_an_answer(
    short_socket_dir: Path,
) -> None:
    hello = b'{"type":"hello","id":"h1","ts":"t","protocol":2,"client":{"name":"a","pid":1}}\n'
    other = b'{"type":"hello","id":"h1","ts":"t","protocol":2,"client":{"name":"b","pid":1}}\n'
    cassette = write_cassette(short_socket_dir / "a.ndjson", "host-agent", [[("c2s", hello)]])
    replay = ReplayServer(cassette, short_socket_dir / "host-agent.sock")
    with anyio.fail_after(10):
        async with serving(replay) as path:
            received = await read_to_end(path, other)
    assert received == b""  # the agent answers nothing it cannot serve: it closes
    (mismatch,) = replay.mismatches
    assert mismatch.received is not None
    assert '"name":"b"' in mismatch.received
