"""Hostile input against the running reference server: it answers as the real one, stays up."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import anyio
import pytest

from shedproto.clients.desktop import AsyncDesktopClient
from shedproto.desktop import Dialect
from shedproto.servers.desktop import DesktopServer

from .test_server import raw_exchange, running

MIB = 1 << 20
TOO_LARGE = b'{"error":{"code":"frame_too_large","message":"request exceeds 1 MiB"},"ok":false}\n'


async def assert_alive(server: DesktopServer) -> None:
    async with await AsyncDesktopClient.connect(server.path, timeout=5) as client:
        assert (await client.call("ui.show_window")) == {}


async def wait_for_no_connections(server: DesktopServer) -> None:
    with anyio.fail_after(5):
        while server.connections:  # noqa: ASYNC110 - polling a counter the server owns
            await anyio.sleep(0.01)


async def send_big(path: Path, size: int, *, newline: bool = True, lines: int = 0) -> bytes:
    """Send a ``size``-byte line after a good request; return what the server wrote.

    Reads until the server closes, or until ``lines`` lines arrived when ``lines`` is set.
    """
    good = b'{"id":"1","op":"ui.show_window"}\n'
    payload = good + b"a" * size + (b"\n" if newline else b"")
    async with await anyio.connect_unix(path) as stream:
        out = bytearray()
        with contextlib.suppress(anyio.BrokenResourceError, OSError):
            await stream.send(payload)  # the server may close while we are still writing
        with anyio.fail_after(10):
            while True:
                if lines and out.count(b"\n") >= lines:
                    return bytes(out)
                try:
                    out += await stream.receive()
                except (
                    anyio.EndOfStream,
                    anyio.BrokenResourceError,
                    anyio.ClosedResourceError,
                    OSError,
                ):
                    return bytes(out)


@pytest.mark.parametrize(
    ("dialect", "size", "expect_close"),
    [
        (Dialect.MAC, 17 * MIB, True),
        (Dialect.MAC, 2 * MIB, False),  # under mac's 16 MiB cap: answered (parse-error)
        (Dialect.TAURI, 17 * MIB, True),
        (Dialect.TAURI, 2 * MIB, True),
    ],
)
async def test_oversized_lines(
    short_socket_dir: Path, dialect: Dialect, size: int, expect_close: bool
) -> None:
    async with running(short_socket_dir, dialect) as server:
        if dialect is Dialect.MAC and not expect_close:
            out = await send_big(server.path, size, lines=2)
            first, second = out.splitlines()
            assert first == b'{"id":"1","ok":true,"result":{}}'
            assert second.startswith(b'{"id":"0","ok":false,"error":{"code":"parse-error"')
        else:
            out = await send_big(server.path, size, newline=False)
            if dialect is Dialect.MAC:
                assert out == b'{"id":"1","ok":true,"result":{}}\n'  # then a silent close
            else:
                assert out == b'{"id":"1","ok":true,"result":{}}\n' + TOO_LARGE
        await assert_alive(server)
        await wait_for_no_connections(server)


@pytest.mark.parametrize("dialect", list(Dialect))
async def test_random_bytes_then_still_serving(short_socket_dir: Path, dialect: Dialect) -> None:
    blobs = [os.urandom(4096) for _ in range(5)] + [
        b"\x00" * 1000,
        b"\xff\xfe" * 500,
        b"[" * 50_000 + b"\n",
    ]
    async with running(short_socket_dir, dialect) as server:
        for blob in blobs:
            out = await raw_exchange(server.path, blob)
            for line in out.splitlines():
                assert b'"ok":false' in line
        await assert_alive(server)
        await wait_for_no_connections(server)


@pytest.mark.parametrize("dialect", list(Dialect))
async def test_hundred_concurrent_clients(short_socket_dir: Path, dialect: Dialect) -> None:
    results: list[str] = []
    async with running(short_socket_dir, dialect) as server:
        server.model.add_machine("mini")

        async def one(n: int) -> None:
            async with await AsyncDesktopClient.connect(server.path, timeout=10) as client:
                for _ in range(3):
                    pane = "agents" if n % 2 else "sheds"
                    result = await client.call("ui.navigate", {"pane": pane})
                    assert result == {"pane": pane}
                results.append(str(n))

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                for n in range(100):
                    tg.start_soon(one, n)
        assert len(results) == 100
        await wait_for_no_connections(server)
        await assert_alive(server)


async def test_silent_partial_line_does_not_block_others(short_socket_dir: Path) -> None:
    async with running(short_socket_dir, Dialect.TAURI) as server:
        async with await anyio.connect_unix(server.path) as stalled:
            await stalled.send(b'{"id":1,"op":"ui.show_win')  # never finished
            await assert_alive(server)
        await wait_for_no_connections(server)


async def test_client_that_never_reads_is_cut_off(short_socket_dir: Path) -> None:
    """The server's send deadline bounds a peer that writes but never reads."""
    async with running(short_socket_dir, Dialect.MAC, send_timeout=0.5) as server:
        cut_off = False
        async with await anyio.connect_unix(server.path) as greedy:
            line = b'{"id":"1","op":"app.screenshot"}\n' * 50
            with anyio.fail_after(8):
                try:
                    while True:
                        await greedy.send(line)
                except (anyio.BrokenResourceError, OSError):
                    cut_off = True
        assert cut_off
        await assert_alive(server)
        await wait_for_no_connections(server)


async def test_slow_request_survives_deadline_epochs(short_socket_dir: Path) -> None:
    """A request trickling in slower than the send deadline but within idle is answered.

    The per-connection deadline fires every ``send_timeout`` of silence; the
    read it cancels consumes nothing and the partial line stays buffered.
    """
    async with running(short_socket_dir, Dialect.TAURI, send_timeout=0.1, idle_timeout=5.0) as (
        server
    ):
        async with await anyio.connect_unix(server.path) as slow:
            for piece in (b'{"id":7,"op":', b'"ui.navigate","params"', b':{"pane":"sheds"}}\n'):
                await slow.send(piece)
                await anyio.sleep(0.25)  # > send_timeout + slack: an epoch ends meanwhile
            with anyio.fail_after(5):
                answer = await slow.receive()
        assert answer == b'{"id":7,"ok":true,"result":{"pane":"sheds"}}\n'
        await wait_for_no_connections(server)


async def test_idle_connection_is_closed(short_socket_dir: Path) -> None:
    async with running(short_socket_dir, Dialect.MAC, send_timeout=0.05, idle_timeout=0.3) as (
        server
    ):
        async with await anyio.connect_unix(server.path) as idle:
            with anyio.fail_after(5):
                with pytest.raises(anyio.EndOfStream):
                    await idle.receive()
        await wait_for_no_connections(server)


@pytest.mark.parametrize("dialect", list(Dialect))
async def test_client_survives_its_own_oversized_request(
    short_socket_dir: Path, dialect: Dialect
) -> None:
    from shedproto import RemoteProtocolError
    from shedproto.clients.desktop import DesktopError

    async with (
        running(short_socket_dir, dialect) as server,
        await AsyncDesktopClient.connect(server.path, timeout=10) as client,
    ):
        big = {"pane": "x" * (dialect.frame_cap + 1)}
        if dialect is Dialect.TAURI:
            with pytest.raises(DesktopError) as info:
                await client.call("ui.navigate", big)
            assert info.value.code == "frame_too_large"
        else:
            with pytest.raises(RemoteProtocolError) as closed:
                await client.call("ui.navigate", big)  # mac closes without a word
            assert closed.value.code.value == "connection_closed"
        assert await client.call("ui.navigate", {"pane": "sheds"}) == {"pane": "sheds"}
