"""The API server watches each socket for its connection's life and stops before it closes.

Its reads are :class:`~shedproto.servers._receive.WatchedReads` (issue 16):
one reader registration per connection. A registration left behind when a
socket closes can leave the next connection that gets the same descriptor
number unwatched on asyncio's selector loop, so the watch must end before
the close, on every path (the peer's EOF, a dropped subscriber), and
connections one after another (the descriptor reused) are each answered.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import anyio.abc
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from shedproto.servers._receive import WatchedReads
from shedproto.servers.agents_host import AgentsHost, api, run_host
from shedproto.testing._agents_host import echo_host_run

from .conftest import OWNER

HEALTH = b'{"id":7,"op":"health"}\n'


async def _health(path: Path) -> bytes:
    async with await anyio.connect_unix(path) as stream:
        await stream.send(HEALTH)
        return await BufferedByteReceiveStream(stream).receive_until(b"\n", 1 << 20)


def _record_unwatch_and_close(
    monkeypatch: pytest.MonkeyPatch, order: list[tuple[str, int]]
) -> None:
    """Record ``("unwatch", id(stream))`` and ``("close", id(stream))`` for every API connection."""
    close_reads = WatchedReads.close
    serve = api.serve_api_connection

    def unwatch(reads: WatchedReads) -> None:
        order.append(("unwatch", id(reads._pump.stream)))
        close_reads(reads)

    async def recorded(stream: anyio.abc.ByteStream, host: AgentsHost) -> None:
        aclose: Callable[[], Awaitable[None]] = stream.aclose

        async def closing() -> None:
            order.append(("close", id(stream)))
            await aclose()

        stream.aclose = closing  # type: ignore[method-assign]
        await serve(stream, host)

    monkeypatch.setattr(WatchedReads, "close", unwatch)
    monkeypatch.setattr(api, "serve_api_connection", recorded)


async def _read_until_closed(stream: anyio.abc.SocketStream) -> None:
    """Read until the stream ends: raises ``EndOfStream`` (or a reset) when the server closed it."""
    while True:
        await stream.receive()


def _unwatched_before_closed(order: list[tuple[str, int]]) -> bool:
    closed = [key for what, key in order if what == "close"]
    return bool(closed) and all(
        ("unwatch", key) in order[: order.index(("close", key))] for key in closed
    )


async def test_each_connection_is_unwatched_before_its_socket_closes_and_the_next_is_answered(
    short_socket_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    order: list[tuple[str, int]] = []
    _record_unwatch_and_close(monkeypatch, order)
    run = echo_host_run(short_socket_dir, owner_did=OWNER, space="did:key:space")
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run_host, run)
            await run.ready.wait()
            replies = [await _health(short_socket_dir / "h.sock") for _ in range(20)]
            run.stop_requested.set()
    assert all(reply.startswith(b'{"id":7,"ok":true') for reply in replies), replies[:1]
    assert _unwatched_before_closed(order), order


async def test_a_dropped_subscriber_is_unwatched_before_its_socket_closes(
    short_socket_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(api, "EVENT_BUFFER", 2)
    order: list[tuple[str, int]] = []
    _record_unwatch_and_close(monkeypatch, order)
    run = echo_host_run(short_socket_dir, owner_did=OWNER, space="did:key:space")
    path = short_socket_dir / "h.sock"
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run_host, run)
            await run.ready.wait()
            assert run.host is not None
            target = run.host.target
            async with await anyio.connect_unix(path) as stream:
                await stream.send(b'{"id":1,"op":"subscribe","topics":["health"]}\n')
                await BufferedByteReceiveStream(stream).receive_until(b"\n", 1 << 20)
                health = target.read_health()
                assert health is not None
                for _ in range(5):  # the 2-line buffer overflows: the server drops us
                    target.publish_health(health)
                with pytest.raises((anyio.EndOfStream, anyio.BrokenResourceError)):
                    await _read_until_closed(stream)
            reply = await _health(path)
            run.stop_requested.set()
    assert reply.startswith(b'{"id":7,"ok":true')
    assert _unwatched_before_closed(order), order
