"""Pane screens with real programs in PTYs, and the envelope's trailing-bytes rule, end to end."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from shedproto import herdr
from shedproto.clients.herdr import AsyncHerdrClient
from shedproto.herdr import types as t
from shedproto.servers.herdr import HerdrServer

from .test_server import raw

LIMIT = 30

TUI = r"""
import os, sys, termios, tty
fd = sys.stdin.fileno()
saved = termios.tcgetattr(fd)
tty.setraw(fd)
out = sys.stdout
out.write("\x1b[3;4H\x1b[6n"); out.flush()
position = b""
while not position.endswith(b"R"):
    position += os.read(fd, 64)
out.write("\x1b[?1049h\x1b[?2004h\x1b[H\x1b[2J")
out.write("\x1b[1;1H+------+\x1b[2;1H| TUI  |\x1b[3;1H+------+")
out.write("\x1b[4;1HPOS:" + position.hex() + "\x1b[5;1HREADY")
out.flush()
typed = b""
while not typed.endswith(b"\r"):
    typed += os.read(fd, 1024)
out.write("\x1b[6;1HGOT:" + typed.hex()); out.flush()
os.read(fd, 1)
out.write("\x1b[?2004l\x1b[?1049l"); out.flush()
termios.tcsetattr(fd, termios.TCSADRAIN, saved)
"""


@pytest.fixture
async def small_server(short_socket_dir: Path) -> AsyncIterator[HerdrServer]:
    async with anyio.create_task_group() as tg:
        server = HerdrServer(
            short_socket_dir / "h.sock",
            shell=["/bin/sh"],
            cwd=str(short_socket_dir),
            size=(60, 12),
            poll_interval=0.02,
            environ={"PATH": "/usr/bin:/bin", "TERM": "xterm-256color", "PS1": "$ "},
        )
        await tg.start(server.serve)
        try:
            yield server
        finally:
            server.shutdown()


async def visible_lines(client: AsyncHerdrClient, pane: str) -> list[str]:
    return herdr.split_lines((await client.pane_read(pane, "visible")).read.text)


async def wait_for(
    client: AsyncHerdrClient, pane: str, needle: str, source: t.ReadSource = "visible"
) -> str:
    """Wait for a line matching the regex ``needle`` (the typed command's echo never does)."""
    try:
        matched = await client.pane_wait_for_output(
            pane, source, t.RegexOutputMatch(value=needle), timeout_ms=10_000
        )
    except herdr.HerdrApiError:
        shown = (await client.pane_read(pane, "recent")).read.text
        pytest.fail(f"{needle!r} never appeared; the pane shows {shown!r}")
    assert matched.matched_line is not None
    return matched.matched_line


async def test_printf_cursor_addressing_reads_back_as_a_screen(small_server: HerdrServer) -> None:
    with anyio.fail_after(LIMIT):
        client = AsyncHerdrClient.for_socket(small_server.path)
        pane = (await client.workspace_create()).root_pane.pane_id
        await client.pane_send_text(
            pane, "printf '\\033[2J\\033[H\\033[4;6HMARK\\033[1;1HTOP\\033[7;1H'\r"
        )
        await wait_for(client, pane, "^     MARK$")
        lines = await visible_lines(client, pane)
        assert lines[:4] == ["TOP", "", "", "     MARK"]
        # the typed command line was on the screen before the clear: gone from visible
        assert not any("printf" in line for line in lines)


async def test_tput_positions_text(small_server: HerdrServer) -> None:
    with anyio.fail_after(LIMIT):
        client = AsyncHerdrClient.for_socket(small_server.path)
        pane = (await client.workspace_create()).root_pane.pane_id
        await client.pane_send_text(pane, "clear; tput cup 2 7; echo HERE\r")
        await wait_for(client, pane, "^ +HERE$")
        lines = await visible_lines(client, pane)
        assert lines[2] == "       HERE"


async def test_full_screen_program_alternate_screen_paste_and_replies(
    small_server: HerdrServer, short_socket_dir: Path
) -> None:
    script = short_socket_dir / "tui.py"
    script.write_text(TUI)
    with anyio.fail_after(LIMIT):
        client = AsyncHerdrClient.for_socket(small_server.path)
        pane = (await client.workspace_create()).root_pane.pane_id
        await client.pane_send_text(pane, "echo before-tui\r")
        await wait_for(client, pane, "(^|\\$ )before-tui$", "recent")
        await client.pane_send_text(pane, f"{sys.executable} {script}\r")
        await wait_for(client, pane, "^READY$")
        lines = await visible_lines(client, pane)
        assert lines[:3] == ["+------+", "| TUI  |", "+------+"]
        # the terminal answered the program's cursor-position query
        assert lines[3] == "POS:" + b"\x1b[3;4R".hex()
        # on the alternate screen, recent is that screen: no shell history
        recent = (await client.pane_read(pane, "recent")).read.text
        assert "before-tui" not in recent
        assert "| TUI  |" in recent
        # the program enabled bracketed paste: send_input wraps the text, keys follow
        await client.pane_send_input(pane, text="hi there", keys=["enter"])
        got = await wait_for(client, pane, "^GOT:")
        assert got == "GOT:" + b"\x1b[200~hi there\x1b[201~\r".hex()
        await client.pane_send_text(pane, "q")
        await wait_for(client, pane, "(^|\\$ )before-tui$")  # the primary screen is back
        # back on the primary screen: the shell's history is there again
        recent = (await client.pane_read(pane, "recent")).read.text
        assert "| TUI  |" not in recent


async def test_a_shell_without_bracketed_paste_gets_plain_text(
    small_server: HerdrServer,
) -> None:
    with anyio.fail_after(LIMIT):
        client = AsyncHerdrClient.for_socket(small_server.path)
        pane = (await client.workspace_create()).root_pane.pane_id
        # od shows exactly the bytes the program read: no paste brackets for sh
        await client.pane_send_text(pane, "head -c 6 | od -An -c\r")
        await anyio.sleep(0.2)
        await client.pane_send_input(pane, text="ab", keys=["ctrl+d"])
        await client.pane_send_input(pane, text="cd", keys=["enter", "ctrl+d"])
        line = await wait_for(client, pane, "a +b", "recent")
        assert "033" not in line


async def test_split_resizes_the_screen_and_the_program_sees_it(
    small_server: HerdrServer,
) -> None:
    with anyio.fail_after(LIMIT):
        client = AsyncHerdrClient.for_socket(small_server.path)
        pane = (await client.workspace_create()).root_pane.pane_id
        await client.pane_split(direction="right", target_pane_id=pane)
        layout = (await client.pane_layout(pane_id=pane)).layout
        rect = next(p.rect for p in layout.panes if p.pane_id == pane)
        await client.pane_send_text(pane, "stty size\r")
        await wait_for(client, pane, f"{rect.height} {rect.width}$", "recent")
        await client.pane_send_text(pane, "printf '%0" + str(rect.width + 5) + "d\\n' 0\r")
        # the prompt may land before the output: "$ 000…" is fine
        line = await wait_for(client, pane, f"0{{{rect.width + 5}}}$", "recent_unwrapped")
        rows = herdr.split_lines((await client.pane_read(pane, "recent")).read.text)
        # recent wraps at the pane's new width; recent_unwrapped had it as one line
        assert max(len(row) for row in rows) == rect.width
        start = rows.index(line[: rect.width])
        assert rows[start + 1] == line[rect.width :]


async def test_scroll_metrics_follow_the_scrollback(small_server: HerdrServer) -> None:
    with anyio.fail_after(LIMIT):
        client = AsyncHerdrClient.for_socket(small_server.path)
        pane = (await client.workspace_create()).root_pane.pane_id
        info = (await client.pane_get(pane)).pane
        assert info.scroll == t.PaneScrollInfo(
            offset_from_bottom=0, max_offset_from_bottom=0, viewport_rows=12
        )
        sub = {"type": "pane.scroll_changed", "pane_id": pane}
        async with client.subscribe(sub) as events:
            await client.pane_send_text(pane, "seq 1 40\r")
            async for event in events:
                assert event.event == "pane.scroll_changed"
                assert isinstance(event.data, t.PaneScrollChangedEvent)
                assert event.data.pane_id == pane
                if event.data.scroll.max_offset_from_bottom >= 40 - 12:
                    break
        await wait_for(client, pane, "^40$", "recent")
        scroll = (await client.pane_get(pane)).pane.scroll
        assert scroll is not None
        assert scroll.max_offset_from_bottom >= 40 - 12
        assert scroll.offset_from_bottom == 0


async def test_the_terminal_title_reaches_pane_info(small_server: HerdrServer) -> None:
    with anyio.fail_after(LIMIT):
        client = AsyncHerdrClient.for_socket(small_server.path)
        pane = (await client.workspace_create()).root_pane.pane_id
        assert (await client.pane_get(pane)).pane.terminal_title is None
        await client.pane_send_text(pane, "printf '\\033]0;\u2733 my task\\007'; echo titled\r")
        await wait_for(client, pane, "(^|\\$ )titled$", "recent")
        info = (await client.pane_get(pane)).pane
        assert (info.terminal_title, info.terminal_title_stripped) == ("\u2733 my task", "my task")


# ---------------------------------------------------------------- trailing bytes
SUBSCRIBE = (
    b'{"id":"s","method":"events.subscribe",'
    b'"params":{"subscriptions":[{"type":"workspace.created"}]}}\n'
)


async def test_bytes_after_a_subscribe_line_get_the_ack_and_end_the_stream(
    herdr_server: HerdrServer,
) -> None:
    herdr_server.replay = herdr.replay_rule(21)
    with anyio.fail_after(LIMIT):
        client = AsyncHerdrClient.for_socket(herdr_server.path)
        await client.workspace_create()  # an event a live stream would replay at once
        ack = b'{"id":"s","result":{"type":"subscription_started"}}\n'
        assert await raw(herdr_server.path, SUBSCRIBE + b"x") == ack
        assert await raw(herdr_server.path, SUBSCRIBE + SUBSCRIBE) == ack
        assert await raw(herdr_server.path, SUBSCRIBE, half_close=True) == ack
        # a subscription that fails its probe still answers its error
        bad = json.dumps(
            {
                "id": "b",
                "method": "events.subscribe",
                "params": {
                    "subscriptions": [{"type": "pane.agent_status_changed", "pane_id": "w9:p9"}]
                },
            }
        ).encode()
        answer = json.loads(await raw(herdr_server.path, bad + b"\nx"))
        assert answer["id"] == "b"  # the default release (0.9.5) echoes the request id
        assert answer["error"]["code"] == "pane_not_found"
        # without trailing bytes the same request streams the replayed event
        async with await anyio.connect_unix(herdr_server.path) as stream:
            await stream.send(SUBSCRIBE)
            received = b""
            while received.count(b"\n") < 2:
                received += await stream.receive()
        assert b'"event":"workspace_created"' in received


async def test_waits_answer_what_herdr_decides_before_its_first_probe(
    herdr_server: HerdrServer,
) -> None:
    with anyio.fail_after(LIMIT):
        client = AsyncHerdrClient.for_socket(herdr_server.path)
        pane = (await client.workspace_create()).root_pane.pane_id

        def line(method: str, params: dict[str, object]) -> bytes:
            return json.dumps({"id": "w", "method": method, "params": params}).encode() + b"\n"

        # validation errors come before the first probe
        bad_regex = line(
            "pane.wait_for_output",
            {"pane_id": pane, "source": "recent", "match": {"type": "regex", "value": "("}},
        )
        assert json.loads(await raw(herdr_server.path, bad_regex + b"x"))["error"]["code"] == (
            "invalid_regex"
        )
        no_agent = line("agent.wait", {"target": "nobody"})
        assert json.loads(await raw(herdr_server.path, no_agent + b"x"))["error"]["code"] == (
            "agent_not_found"
        )
        # a status that already matches is answered at once
        await client.pane_report_agent(pane, "hook", "pi", "idle")
        matched = line("agent.wait", {"target": pane, "until": ["idle"]})
        answer = json.loads(await raw(herdr_server.path, matched + b"x"))
        assert answer["result"]["agent"]["agent_status"] == "idle"
        # a wait that would have to poll is dropped
        pending = line("agent.wait", {"target": pane, "until": ["blocked"]})
        assert await raw(herdr_server.path, pending + b"x") == b""
        assert isinstance(await client.ping(), t.PongReply)
