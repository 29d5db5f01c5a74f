"""Terminal streams at the library level: the core's records and encoder, the typed clients.

Sources: herdrdev/herdr ``src/client/mod.rs:1061-1215@1c76079f`` (records,
commands and their error texts), ``src/protocol/render_ansi.rs:447-509@1c76079f``
(frame layout), ``src/server/render_stream.rs:82@1c76079f`` (no frame when the
screen is current), ``src/app/api/tabs.rs:65``, ``panes.rs:54``,
``workspaces.rs:46``, ``layouts.rs:355@1c76079f`` (new terminals follow a pane's cwd).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shedproto import ErrorCode, RemoteProtocolError
from shedproto.clients.herdr import AsyncHerdrClient, AsyncTerminalSession, BlockingHerdrClient
from shedproto.clients.herdr_cli._terminal import AttachEscape, attach_scroll
from shedproto.herdr import types as t
from shedproto.herdr._terminal import (
    FrameEncoder,
    InvalidCommandError,
    TerminalClosed,
    TerminalFrame,
    TerminalInput,
    TerminalOpen,
    TerminalRelease,
    TerminalResize,
    TerminalScroll,
    decode_open,
    decode_record,
    encode_command,
    encode_record,
    parse_command,
    parse_dimension,
)
from shedproto.servers.herdr import HerdrServer
from shedproto.testing import ServerThread
from tests._hypothesis import examples

LIMIT = 30


# ---------------------------------------------------------------- the core
def test_frame_records_print_with_herdrs_sorted_keys() -> None:
    frame = TerminalFrame(seq=3, width=80, height=24, full=False, bytes="aGk=")
    assert encode_record(frame) == (
        b'{"bytes":"aGk=","encoding":"ansi","full":false,"height":24,"seq":3,'
        b'"type":"terminal.frame","width":80}\n'
    )
    assert encode_record(TerminalClosed()) == b'{"reason":null,"type":"terminal.closed"}\n'
    assert decode_record(encode_record(frame)) == frame
    assert frame.data() == b"hi"
    assert TerminalFrame(seq=1, width=1, height=1, full=True, bytes="!!").data() == b""


ZERO_SIZE = "terminal.resize cols and rows must be greater than 0"
BOTH = "terminal.input accepts text or bytes, not both"
NO_LINES = "terminal.scroll lines must be greater than 0"
REJECTIONS = [
    ('{"type":"terminal.input","text":"a","bytes":"YQ=="}', BOTH),
    ('{"type":"terminal.resize","cols":0,"rows":3}', ZERO_SIZE),
    ('{"type":"terminal.resize","cols":3,"rows":0}', ZERO_SIZE),
    ('{"type":"terminal.scroll","direction":"up","lines":0}', NO_LINES),
]


@pytest.mark.parametrize(("line", "reason"), REJECTIONS)
def test_command_rejections_carry_herdrs_reasons(line: str, reason: str) -> None:
    with pytest.raises(InvalidCommandError) as caught:
        parse_command(line)
    assert caught.value.message == reason


@pytest.mark.parametrize(
    "line",
    [
        "{",
        '{"type":"terminal.nope"}',
        '{"type":"terminal.scroll","direction":"left","lines":1}',
        '{"type":"terminal.resize","cols":70000,"rows":1}',
        '{"type":"terminal.scroll","direction":"up","lines":1,"modifiers":256}',
        '{"type":"terminal.resize","cols":"1","rows":1}',
    ],
)
def test_malformed_commands_are_invalid_json_commands(line: str) -> None:
    with pytest.raises(InvalidCommandError) as caught:
        parse_command(line)
    assert caught.value.message.startswith("invalid json command: ")


def test_good_commands_decode_with_herdrs_defaults() -> None:
    assert parse_command('{"type":"terminal.input"}') == TerminalInput()
    scroll = parse_command('{"type":"terminal.scroll","direction":"down","lines":2}')
    assert scroll == TerminalScroll(direction="down", lines=2, source="wheel", modifiers=0)
    resize = parse_command('{"type":"terminal.resize","cols":5,"rows":6,"extra":1}')
    assert resize == TerminalResize(cols=5, rows=6)
    with pytest.raises(InvalidCommandError, match=r"invalid terminal\.input bytes"):
        parse_command('{"type":"terminal.input","bytes":"a"}')


def test_the_opening_line_round_trips_and_bounds_sizes() -> None:
    opened = TerminalOpen(mode="observe", target="w1:p1", cols=10, rows=4)
    assert decode_open(encode_command(opened)) == opened
    with pytest.raises(RemoteProtocolError) as zero:
        decode_open(b'{"type":"terminal.open","mode":"observe","target":"x","cols":0}')
    assert zero.value.code is ErrorCode.SCHEMA_VIOLATION
    with pytest.raises(RemoteProtocolError) as mode:
        decode_open(b'{"type":"terminal.open","mode":"watch","target":"x"}')
    assert mode.value.path == "$.mode"
    with pytest.raises(RemoteProtocolError) as broken:
        decode_record(b"{")
    assert broken.value.code is ErrorCode.MALFORMED_FRAME


@settings(max_examples=examples(300), deadline=None)
@given(st.binary(max_size=200))
def test_every_decoder_answers_arbitrary_bytes_with_a_value_or_a_typed_error(data: bytes) -> None:
    checks: list[tuple[Callable[[bytes], object], type[Exception], tuple[type, ...]]] = [
        (parse_command, InvalidCommandError, (TerminalInput, TerminalResize, TerminalScroll)),
        (decode_record, RemoteProtocolError, (TerminalFrame, TerminalClosed)),
        (decode_open, RemoteProtocolError, (TerminalOpen,)),
    ]
    for decode, error, kinds in checks:
        try:
            value = decode(data)
        except error:
            continue
        assert isinstance(value, (*kinds, TerminalRelease))


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("0", "--cols must be greater than 0"),
        ("x", "--cols must be an integer between 1 and 65535"),
        ("65536", "--cols must be an integer between 1 and 65535"),
        ("-1", "--cols must be an integer between 1 and 65535"),
    ],
)
def test_dimensions_are_herdrs_u16(raw: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_dimension(raw, "--cols")
    assert parse_dimension("65535", "--cols") == 65535


def test_the_encoder_sends_one_frame_per_change_and_none_without() -> None:
    encoder = FrameEncoder()
    first = encoder.encode(["a", "b"], width=4, height=2)
    assert first is not None
    assert (first.seq, first.full) == (1, True)
    painted = first.data()
    # render_ansi.rs:464-477: synchronized output, cursor hidden, OSC 8 reset, clear
    assert painted.startswith(b"\x1b[?2026h\x1b[?25l\x1b]8;;\x1b\\\x1b[2J")
    assert encoder.encode(["a", "b"], width=4, height=2) is None
    second = encoder.encode(["a", "c"], width=4, height=2)
    assert second is not None
    assert (second.seq, second.full) == (2, False)
    assert b"\x1b[2;1H" in second.data()
    assert b"\x1b[1;1H\x1b[0m" not in second.data()  # the unchanged row is not repainted
    moved = encoder.encode(["a", "c"], width=4, height=2, cursor=(1, 1))
    assert moved is not None  # a cursor move is a change
    resized = encoder.encode(["a", "c"], width=5, height=2, cursor=(1, 1))
    assert resized is not None
    assert resized.full
    assert b"\x1b[2J" not in resized.data()  # only the first frame clears
    encoder.repaint()
    repainted = encoder.encode(["a", "c"], width=5, height=2, cursor=(1, 1))
    assert repainted is not None
    assert repainted.full


def test_the_attach_prefix_is_herdrs_ctrl_b() -> None:
    escape = AttachEscape()
    assert escape.filter(b"ab") == (b"ab", False)
    assert escape.filter(b"x\x02") == (b"x", False)  # waits for the next byte
    assert escape.filter(b"\x02") == (b"\x02", False)  # ctrl+b ctrl+b: one ctrl+b
    assert escape.filter(b"\x02z") == (b"\x02z", False)
    assert escape.filter(b"k\x02q rest") == (b"k", True)


def test_attach_turns_wheel_and_page_keys_into_scrolls() -> None:
    # herdrdev/herdr src/client/mod.rs:183-236@1c76079f (attach_scroll_action)
    up = attach_scroll(b"\x1b[<64;10;5M", 24)
    assert up == TerminalScroll(direction="up", lines=3, column=9, row=4)
    down = attach_scroll(b"\x1b[<85;1;1M", 24)  # 65 + shift (4) + ctrl (16)
    assert down == TerminalScroll(direction="down", lines=3, column=0, row=0, modifiers=3)
    assert attach_scroll(b"\x1b[<0;3;3M", 24) is None  # another mouse event is dropped
    page = attach_scroll(b"\x1b[5~", 24)
    assert page == TerminalScroll(direction="up", lines=23, source="page_key")
    assert attach_scroll(b"\x1b[6~", 1) == TerminalScroll(
        direction="down", lines=1, source="page_key"
    )
    assert attach_scroll(b"ls\r", 24) == b"ls\r"
    assert attach_scroll(b"\x1b[<64;1;1M\x1b[<64;1;1M", 24) == b"\x1b[<64;1;1M\x1b[<64;1;1M"


# ---------------------------------------------------------------- the typed clients
async def _frame_showing(term: AsyncTerminalSession, text: bytes) -> TerminalFrame:
    painted = b""
    with anyio.fail_after(LIMIT):
        while True:
            frame = await term.next_frame()
            assert frame is not None, term.closed
            painted += frame.data()
            if text in painted:
                return frame


async def test_the_async_client_drives_a_pane(herdr_server: HerdrServer) -> None:
    client = AsyncHerdrClient.for_socket(herdr_server.path)
    pane = (await client.workspace_create(cwd="/tmp")).root_pane
    async with client.terminal_session(pane.pane_id, cols=50, rows=8) as term:
        first = await term.next_frame(timeout=LIMIT)
        assert first is not None
        assert (first.seq, first.full, first.width, first.height) == (1, True, 50, 8)
        await term.send_input("echo typed-$((6*7))\r")
        await _frame_showing(term, b"typed-42")
        await term.resize(60, 9)
        with anyio.fail_after(LIMIT):
            resized = await term.next_frame()
        assert resized is not None
        assert (resized.width, resized.height, resized.full) == (60, 9, True)
        await term.send_input(data=b"echo raw-bytes\r")
        await _frame_showing(term, b"raw-bytes")
        await term.scroll("up", 2)
        await term.release()
        with anyio.fail_after(LIMIT):
            records = [record async for record in term]
        assert records[-1] == TerminalClosed(reason="detached")
        assert term.closed == TerminalClosed(reason="detached")
    assert await term.next_record() is None


async def test_an_observer_sees_a_controllers_typing(herdr_server: HerdrServer) -> None:
    client = AsyncHerdrClient.for_socket(herdr_server.path)
    pane = (await client.workspace_create(cwd="/tmp")).root_pane
    async with (
        client.terminal_session(pane.pane_id) as control,
        client.terminal_session(pane.terminal_id, mode="observe", cols=20, rows=5) as watch,
    ):
        await control.next_frame(timeout=LIMIT)
        first = await watch.next_frame(timeout=LIMIT)
        assert first is not None
        assert (first.width, first.height) == (20, 5)
        await watch.send_input("echo never\r")  # an observer's commands are dropped
        await control.send_input("echo seen\r")
        await _frame_showing(watch, b"seen")
        read = await client.pane_read(pane_id=pane.pane_id, source="recent")
        assert "never" not in read.read.text
        await client.pane_close(pane_id=pane.pane_id)
        with anyio.fail_after(LIMIT):
            while await watch.next_record() is not None:
                pass
        assert watch.closed == TerminalClosed(reason=f"terminal {pane.terminal_id} exited")


def test_the_blocking_client_drives_a_pane(herdr_server_sync: ServerThread[HerdrServer]) -> None:
    client = BlockingHerdrClient.for_socket(herdr_server_sync.server.path)
    pane = client.workspace_create(cwd="/tmp").root_pane
    with client.terminal_session(pane.pane_id, cols=40, rows=6) as term:
        painted = b""
        while b"blocking-ok" not in painted:
            frame = term.next_frame(timeout=LIMIT)
            assert frame is not None
            painted += frame.data()
            if frame.seq == 1:
                term.send_input("echo blocking-ok\r")
        term.release()
        assert [type(record) for record in term][-1] is TerminalClosed


async def test_hostile_stream_clients_get_one_close_and_the_server_stays_up(
    herdr_server: HerdrServer,
) -> None:
    path = herdr_server.streams.path
    for line in (b"not json\n", b'{"type":"terminal.open","mode":"control"}\n'):
        async with await anyio.connect_unix(path) as stream:
            await stream.send(line)
            with anyio.fail_after(LIMIT):
                answer = await stream.receive()
            record = decode_record(answer)
            assert isinstance(record, TerminalClosed)
            assert (record.reason or "").startswith("invalid terminal stream request: ")
    async with await anyio.connect_unix(path) as stream:  # a line over 1 MiB is skipped
        await stream.send(b"x" * (1 << 20 + 1) + b"\n")
        await stream.send_eof()
        with anyio.fail_after(LIMIT):
            with pytest.raises((anyio.EndOfStream, anyio.BrokenResourceError)):
                await stream.receive()
    client = AsyncHerdrClient.for_socket(herdr_server.path)
    pane = (await client.workspace_create(cwd="/tmp")).root_pane
    async with client.terminal_session(pane.pane_id, mode="observe") as term:
        assert await term.next_frame(timeout=LIMIT) is not None


# ---------------------------------------------------------------- new terminals follow a pane's cwd
async def test_new_tabs_splits_workspaces_and_layouts_follow_the_focused_pane(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    start, moved = tmp_path / "start", tmp_path / "moved"
    start.mkdir()
    moved.mkdir()
    client = AsyncHerdrClient.for_socket(herdr_server.path)
    created = await client.workspace_create(cwd=str(start), focus=True)
    root = created.root_pane
    await client.pane_send_text(pane_id=root.pane_id, text=f"cd {moved} && echo moved-$((1+1))\r")
    await client.pane_wait_for_output(
        pane_id=root.pane_id,
        source="recent",
        match=t.SubstringOutputMatch(value="moved-2"),
        timeout_ms=LIMIT * 1000,
    )
    tab = await client.tab_create(workspace_id=created.workspace.workspace_id)
    assert tab.root_pane.cwd == str(moved)  # herdr: the workspace's focused pane
    split = await client.pane_split(target_pane_id=root.pane_id, direction="right")
    assert split.pane.cwd == str(moved)  # herdr: the pane being split
    other = await client.workspace_create()
    assert other.root_pane.cwd == str(moved)  # herdr: the active workspace's focused pane
    given = await client.tab_create(workspace_id=created.workspace.workspace_id, cwd=str(start))
    assert given.root_pane.cwd == str(start)  # an explicit cwd always wins
    applied = await client.layout_apply(
        workspace_id=created.workspace.workspace_id, root=t.PaneLayoutNode()
    )
    new_pane = applied.layout.root
    assert isinstance(new_pane, t.PaneLayoutNode)
    assert new_pane.cwd == str(moved)  # herdr: the workspace's focused pane
