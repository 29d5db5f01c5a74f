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

from shedproto.servers import UnixServer


def _connect(path: Path) -> socket.socket:
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(str(path))
    return client


async def test_cancelled_serve_ends_its_connections_before_returning(
    short_socket_dir: Path,
) -> None:
    started = anyio.Event()
    ended: list[str] = []

    async def handler(stream: anyio.abc.SocketStream) -> None:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            ended.append("handler")

    path = short_socket_dir / "c.sock"
    server = UnixServer(path, handler, grace=30)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            await tg.start(server.serve)
            client = _connect(path)
            await started.wait()
            tg.cancel_scope.cancel()  # no shutdown(): the grace period does not apply
        ended.append("serve")
    client.close()
    assert ended == ["handler", "serve"]
    assert not path.exists()


async def test_shutdown_cancels_a_connection_that_ignores_end_of_stream_before_returning(
    short_socket_dir: Path,
) -> None:
    started = anyio.Event()
    cancelled: list[bool] = []

    async def handler(stream: anyio.abc.SocketStream) -> None:
        started.set()
        try:
            await anyio.sleep_forever()  # never reads, so the socket shutdown does not end it
        except anyio.get_cancelled_exc_class():
            cancelled.append(True)
            raise

    path = short_socket_dir / "s.sock"
    server = UnixServer(path, handler, grace=0.01)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            await tg.start(server.serve)
            client = _connect(path)
            await started.wait()
            server.shutdown()
        assert cancelled == [True]  # serve did not return before its connection ended
    client.close()


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
