"""The API server watches each socket for its connection's life and stops before it closes.

Its reads are :class:`~shedproto.servers._receive.WatchedReads` (issue 16):
one reader registration per connection. A registration left behind when a
socket closes can leave the next connection that gets the same descriptor
number unwatched on asyncio's selector loop, so the watch must end before
the close, and connections one after another (the descriptor reused) are
each answered. The dropped subscriber's path: ``test_api_subscriber``.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import anyio.abc
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from shedproto.servers.agents_host import run_host
from shedproto.testing._agents_host import echo_host_run

from ._watch_order import record_unwatch_and_close, unwatched_before_closed
from .conftest import OWNER

HEALTH = b'{"id":7,"op":"health"}\n'


async def _health(path: Path) -> bytes:
    async with await anyio.connect_unix(path) as stream:
        await stream.send(HEALTH)
        return await BufferedByteReceiveStream(stream).receive_until(b"\n", 1 << 20)


async def test_each_connection_is_unwatched_before_its_socket_closes_and_the_next_is_answered(
    short_socket_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    order: list[tuple[str, int]] = []
    record_unwatch_and_close(monkeypatch, order)
    run = echo_host_run(short_socket_dir, owner_did=OWNER, space="did:key:space")
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run_host, run)
            await run.ready.wait()
            replies = [await _health(short_socket_dir / "h.sock") for _ in range(20)]
            run.stop_requested.set()
    assert all(reply.startswith(b'{"id":7,"ok":true') for reply in replies), replies[:1]
    assert unwatched_before_closed(order), order
