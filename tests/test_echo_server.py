"""The echo reference shell under hostile input: it answers, closes, and stays up."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from shedproto import ErrorCode, RemoteProtocolError
from shedproto.clients import AsyncLineTransport
from shedproto.servers import echo as echo_module
from shedproto.servers.echo import ECHO_POLICY, echo_server


async def test_over_cap_stream_without_newline_is_cut_off(short_socket_dir: Path) -> None:
    async with anyio.create_task_group() as tg:
        server = echo_server(short_socket_dir / "e.sock")
        path = await tg.start(server.serve)
        async with await AsyncLineTransport.connect(path) as hostile:
            await hostile.send(b"ok\n")
            chunk = b"x" * 65536
            with pytest.raises(anyio.BrokenResourceError):  # noqa: PT012
                for _ in range(ECHO_POLICY.max_frame_bytes // len(chunk) + 64):
                    await hostile.send(chunk)
            assert await hostile.receive_frame(timeout=5) == b"ok"
            with pytest.raises(RemoteProtocolError) as info:
                await hostile.receive_frame(timeout=5)
            assert info.value.code is ErrorCode.CONNECTION_CLOSED
        async with await AsyncLineTransport.connect(path) as polite:
            assert await polite.request(b"still up\n", timeout=5) == b"still up"
        server.shutdown()


async def test_silent_peer_is_disconnected_after_the_idle_timeout(
    short_socket_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(echo_module, "IDLE_TIMEOUT", 0.05)
    async with anyio.create_task_group() as tg:
        server = echo_server(short_socket_dir / "e.sock")
        path = await tg.start(server.serve)
        async with await AsyncLineTransport.connect(path) as silent:
            with pytest.raises(RemoteProtocolError) as info:
                await silent.receive_frame(timeout=5)
            assert info.value.code is ErrorCode.CONNECTION_CLOSED
        server.shutdown()


async def test_frames_in_one_write_are_all_echoed(short_socket_dir: Path) -> None:
    async with anyio.create_task_group() as tg:
        server = echo_server(short_socket_dir / "e.sock")
        path = await tg.start(server.serve)
        async with await AsyncLineTransport.connect(path) as client:
            await client.send(b"a\r\n\nb\nc")
            assert [await client.receive_frame(timeout=5) for _ in range(2)] == [b"a", b"b"]
            await client.send(b"\n")
            assert await client.receive_frame(timeout=5) == b"c"
        server.shutdown()
