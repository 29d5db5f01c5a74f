"""A subscriber that falls behind is disconnected, also while its connection waits to read."""

from __future__ import annotations

from pathlib import Path

import anyio
import anyio.abc
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from shedproto.servers.agents_host import AgentsHost, api, run_host
from shedproto.testing._agents_host import echo_host_run

from ._watch_order import record_unwatch_and_close, unwatched_before_closed
from .conftest import OWNER


async def test_a_subscriber_dropped_for_falling_behind_sees_the_connection_end(
    short_socket_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(api, "EVENT_BUFFER", 2)
    order: list[tuple[str, int]] = []
    record_unwatch_and_close(monkeypatch, order)
    ended = anyio.Event()
    serve = api.serve_api_connection

    async def watched(stream: anyio.abc.ByteStream, host: AgentsHost) -> None:
        try:
            await serve(stream, host)
        finally:
            ended.set()

    monkeypatch.setattr(api, "serve_api_connection", watched)
    run = echo_host_run(short_socket_dir, owner_did=OWNER, space="did:key:space")
    received = b""
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run_host, run)
            await run.ready.wait()
            assert run.host is not None
            target = run.host.target
            async with await anyio.connect_unix(short_socket_dir / "h.sock") as stream:
                await stream.send(b'{"id":1,"op":"subscribe","topics":["health"]}\n')
                await BufferedByteReceiveStream(stream).receive_until(b"\n", 1 << 20)
                health = target.read_health()
                assert health is not None
                for _ in range(5):  # no checkpoint in between: the 2-line buffer overflows
                    target.publish_health(health)
                while True:  # the server reads nothing more from us: only its close ends this
                    try:
                        received += await stream.receive()
                    except anyio.EndOfStream:
                        break
            with anyio.fail_after(5):  # the server side of the connection ended too
                await ended.wait()
            run.stop_requested.set()
    assert received.endswith(b"\n")  # whole event lines, then the end
    assert unwatched_before_closed(order), order  # the socket's watch ended before its close
