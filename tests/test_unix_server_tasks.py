"""UnixServer's connection tasks end before ``serve`` returns, however serving ends.

On asyncio the connections run as plain loop tasks that the server ends
itself (issue 16, :mod:`shedproto.servers._unix`); these hold it to a task
group's guarantees on both backends.
"""

from __future__ import annotations

import socket
from pathlib import Path

import anyio
import anyio.abc
import pytest

from shedproto.servers import UnixServer


def _connect(path: Path) -> socket.socket:
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(str(path))
    return client


@pytest.mark.parametrize("ending", ["cancelled", "shut down"])
async def test_serve_ends_its_connections_before_returning(
    short_socket_dir: Path, ending: str
) -> None:
    """The handler is cancelled first, then serve returns, however serving ends.

    Cancelled: no grace applies. Shut down: the handler never reads, so the
    socket shutdown does not end it and it is cancelled after the grace.
    """
    started = anyio.Event()
    ended: list[str] = []

    async def handler(stream: anyio.abc.SocketStream) -> None:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            ended.append("handler")

    path = short_socket_dir / "c.sock"
    server = UnixServer(path, handler, grace=30 if ending == "cancelled" else 0.01)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            await tg.start(server.serve)
            client = _connect(path)
            await started.wait()
            if ending == "cancelled":
                tg.cancel_scope.cancel()
            else:
                server.shutdown()
        ended.append("serve")
    client.close()
    assert ended == ["handler", "serve"]
    assert not path.exists()


async def test_many_connections_are_each_served_and_none_outlives_serve(
    short_socket_dir: Path,
) -> None:
    live: set[int] = set()
    served: list[int] = []

    async def handler(stream: anyio.abc.SocketStream) -> None:
        key = id(stream)
        live.add(key)
        try:
            await stream.send(b"hi\n")
            served.append(key)
        finally:
            live.discard(key)

    path = short_socket_dir / "m.sock"
    server = UnixServer(path, handler, grace=5)
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            await tg.start(server.serve)
            for _ in range(40):  # more than EAGER_READS, one after another
                async with await anyio.connect_unix(path) as stream:
                    assert await stream.receive() == b"hi\n"
            server.shutdown()
    assert len(served) == 40
    assert not live
