"""The ``cassette_server`` fixture's record modes and the cassette format's rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from shedproto.clients.herdr import AsyncHerdrClient
from shedproto.herdr import HerdrApiError
from shedproto.observe import (
    CassetteError,
    CassetteHeader,
    CassetteRecord,
    decode_cassette,
    encode_header,
    encode_record,
    redact,
)
from shedproto.servers.herdr import HerdrServer
from shedproto.testing import CassetteServer


async def ping(path: Path) -> object:
    return await AsyncHerdrClient.for_socket(path).request("ping")


async def test_record_mode_option_is_registered(request: pytest.FixtureRequest) -> None:
    assert request.config.getoption("record_mode") in ("none", "once", "new_episodes", "all")


async def test_once_records_then_replays_without_upstream(
    herdr_server: HerdrServer, short_socket_dir: Path
) -> None:
    server = CassetteServer("once", short_socket_dir / "cassettes", "t")
    async with server("herdr", upstream=herdr_server.path) as path:
        recorded = await ping(path)
    assert server.path_for().exists()
    async with server("herdr") as path:  # the cassette exists: replayed, no upstream needed
        assert await ping(path) == recorded


async def test_none_without_cassette_fails_the_test(short_socket_dir: Path) -> None:
    server = CassetteServer("none", short_socket_dir, "missing")
    with pytest.raises(pytest.fail.Exception, match="record it with --record-mode=once"):
        async with server("herdr"):
            pass


async def test_replay_mismatch_fails_naming_expected_and_received(
    herdr_server: HerdrServer, short_socket_dir: Path
) -> None:
    server = CassetteServer("all", short_socket_dir, "t")
    async with server("herdr", upstream=herdr_server.path) as path:
        await ping(path)
    replay = CassetteServer("none", short_socket_dir, "t")

    async def other_request() -> None:
        async with replay("herdr") as path:
            # the replay answers the stranger with herdr's own error, then closes
            with pytest.raises(HerdrApiError, match="not in the cassette"):
                await AsyncHerdrClient.for_socket(path).request("workspace.list")

    with pytest.raises(pytest.fail.Exception, match=r"expected .*ping.*received .*workspace\.list"):
        await other_request()


async def test_new_episodes_appends_only_unknown_connections(
    herdr_server: HerdrServer, short_socket_dir: Path
) -> None:
    async with CassetteServer("all", short_socket_dir, "t")(
        "herdr", upstream=herdr_server.path
    ) as path:
        await ping(path)
    server = CassetteServer("new_episodes", short_socket_dir, "t")
    async with server("herdr", upstream=herdr_server.path) as path:
        await ping(path)  # the same first frame: not appended
        await AsyncHerdrClient.for_socket(path).request("workspace.list", None)
    _, records = decode_cassette(server.path_for().read_bytes())
    assert sorted({record.conn for record in records}) == [1, 2]
    times = [record.t for record in records]
    assert times == sorted(times)


def test_cassette_round_trips_exact_bytes() -> None:
    header = CassetteHeader(protocol="desktop", dialect="mac")
    records = [
        CassetteRecord(t=0.0, conn=1, ev="open"),
        CassetteRecord(t=0.1, conn=1, ev="data", dir="c2s", data=b'{"id":"1"}\n'),
        CassetteRecord(t=0.2, conn=1, ev="data", dir="s2c", data=b"\xff\x00binary"),
        CassetteRecord(t=0.3, conn=1, ev="eof", dir="c2s"),
        CassetteRecord(t=0.3, conn=1, ev="close"),
    ]
    data = encode_header(header) + b"".join(map(encode_record, records))
    assert b'"b64"' in data
    assert decode_cassette(data) == (header, records)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty file"),
        (b'{"cassette":"shedproto","format":9,"protocol":"herdr"}\n', "format 9"),
        (b'{"cassette":"shedproto","format":1,"protocol":"nope"}\n', "unknown protocol"),
        (
            b'{"cassette":"shedproto","format":1,"protocol":"herdr"}\n'
            b'{"t":1,"conn":1,"ev":"open"}\n{"t":0.5,"conn":1,"ev":"close"}\n',
            "time runs backwards",
        ),
        (b'{"cassette":"shedproto","format":1,"protocol":"herdr"}\n{"t":1}\n', "line 2"),
    ],
)
def test_bad_cassettes_are_named_errors(data: bytes, message: str) -> None:
    with pytest.raises(CassetteError, match=message):
        decode_cassette(data)


def test_redaction_keeps_the_frame_decodable_and_marks_it() -> None:
    from shedproto.host_agent import CredentialResponse, decode_agent_frame, encode_frame

    line = encode_frame(
        CredentialResponse(in_reply_to="c1", server="web", token="t0k", client_cert="PEM")
    )
    redacted, paths, _ = redact("host-agent", "s2c", line)
    assert paths == ("$.token", "$.client_cert")
    frame = decode_agent_frame(redacted.rstrip(b"\n"))
    assert isinstance(frame, CredentialResponse)
    assert (frame.token, frame.client_cert, frame.in_reply_to) == ("REDACTED", "REDACTED", "c1")
    assert redact("host-agent", "c2s", line) == (line, (), None)
    submit = b'{"id":1,"op":"submit","command":"{\\"payload\\":{\\"env\\":{\\"K\\":\\"v\\"}}}"}\n'
    redacted, paths, _ = redact("agents-host", "c2s", submit)
    assert paths == ("$.command.payload.env.K",)
    assert b"REDACTED" in redacted
    assert redacted.endswith(b"\n")


async def test_checked_in_cassette_replays_through_the_fixture(
    cassette_server: CassetteServer, herdr_server: HerdrServer
) -> None:
    assert cassette_server.directory.parts[-2:] == ("cassettes", "test_cassette_fixture")
    async with cassette_server("herdr", upstream=herdr_server.path, name="herdr-ping") as path:
        pong = await ping(path)
    assert pong.protocol == 21  # type: ignore[attr-defined]
    assert cassette_server.path_for("herdr-ping").is_file()
