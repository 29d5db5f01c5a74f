"""Server side: one raw client drives each reference server and a raw anyio server.

Every case pairs a reference server with a raw anyio server doing the same
socket work (an accept loop, a task per connection, ``receive_until`` framing,
and the very reply bytes the reference server produced, captured once before
timing) and drives both with the same raw anyio client, so the ratio is the
server's own overhead. Target: ratio >= 0.95 (issue 16).

* **echo**: one connection, sequential round trips of a 300-byte line.
* **desktop identify** (both dialects): one connection, sequential
  ``identify`` requests; the raw server answers each with the captured reply.
* **host-agent status**: a new connection per read, as the real CLI does; the
  raw server writes the captured LiveStatus line and closes.

Both ends share one event loop; runs are timed in CPU seconds of this process
(``time.process_time``) because nothing sleeps and wall time on the shared
machine mostly measures other tenants.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

from shedproto import encode_line
from shedproto.desktop import Dialect, request_line
from shedproto.servers.desktop import DesktopServer
from shedproto.servers.echo import echo_server
from shedproto.servers.host_agent import HostAgentServer

from ._frames import sample_frame
from ._harness import Case

MAX_LINE = 1 << 20
TARGET = 0.95
FRAME = encode_line(sample_frame(1))
IDENTIFY = request_line("1", "identify", None)
_clock = time.process_time

Handler = Callable[[anyio.abc.SocketStream], Awaitable[None]]
Drive = Callable[[str, int], Awaitable[float]]


async def _accept_loop(
    listener: anyio.abc.SocketListener, handler: Handler, connections: anyio.abc.TaskGroup
) -> None:
    """Accept forever, a task per connection, closing each stream after its handler."""

    async def run(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            await handler(stream)

    while True:
        connections.start_soon(run, await listener.accept())


def _replier(reply: bytes) -> Handler:
    """Return a raw line handler answering every complete line with ``reply`` until EOF."""

    async def handler(stream: anyio.abc.SocketStream) -> None:
        reader = BufferedByteReceiveStream(stream)
        try:
            while True:
                await reader.receive_until(b"\n", MAX_LINE)
                await stream.send(reply)
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
            return

    return handler


def _writer(reply: bytes) -> Handler:
    """Return a raw status handler writing ``reply`` and closing, reading nothing."""

    async def handler(stream: anyio.abc.SocketStream) -> None:
        await stream.send(reply)

    return handler


async def _raw_server(path: str, handler: Handler, drive: Drive, count: int) -> float:
    """Serve ``handler`` raw while ``drive`` runs; only the accept is cancelled at the end.

    The handlers end on their own once the client hung up (cancelling a read
    while data arrives trips an anyio race on asyncio).
    """
    listener = await anyio.create_unix_listener(path)
    async with anyio.create_task_group() as connections, anyio.create_task_group() as accepting:
        accepting.start_soon(_accept_loop, listener, handler, connections)
        elapsed = await drive(path, count)
        accepting.cancel_scope.cancel()
    await listener.aclose()
    await anyio.Path(path).unlink()
    return elapsed


def _line_driver(line: bytes) -> Drive:
    """Send ``line`` and read one reply line ``count`` times on one connection."""

    async def drive(path: str, count: int) -> float:
        stream = await anyio.connect_unix(path)
        reader = BufferedByteReceiveStream(stream)
        start = _clock()
        for _ in range(count):
            await stream.send(line)
            await reader.receive_until(b"\n", MAX_LINE)
        elapsed = _clock() - start
        await stream.aclose()
        return elapsed

    return drive


async def _read_to_eof(path: str) -> bytes:
    """Connect, read until the server closes, return what it wrote."""
    chunks = []
    async with await anyio.connect_unix(path) as stream:
        try:
            while True:
                chunks.append(await stream.receive())
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            pass
    return b"".join(chunks)


async def _new_connection_each(path: str, count: int) -> float:
    start = _clock()
    for _ in range(count):
        await _read_to_eof(path)
    return _clock() - start


async def _first_reply(path: str, line: bytes) -> bytes:
    async with await anyio.connect_unix(path) as stream:
        await stream.send(line)
        return await BufferedByteReceiveStream(stream).receive_until(b"\n", MAX_LINE) + b"\n"


async def _echo_run(path: str, count: int) -> float:
    async with anyio.create_task_group() as tg:
        server = echo_server(path)
        await tg.start(server.serve)
        elapsed = await _line_driver(FRAME)(path, count)
        server.shutdown()
    return elapsed


async def _desktop_run(path: str, dialect: Dialect, count: int) -> float:
    async with anyio.create_task_group() as tg:
        server = DesktopServer(path, dialect=dialect, test_mode=True, env={}, grace=0.1)
        await tg.start(server.serve)
        elapsed = await _line_driver(IDENTIFY)(path, count)
        server.shutdown()
    return elapsed


async def _desktop_reply(path: str, dialect: Dialect) -> bytes:
    async with anyio.create_task_group() as tg:
        server = DesktopServer(path, dialect=dialect, test_mode=True, env={}, grace=0.1)
        await tg.start(server.serve)
        reply = await _first_reply(path, IDENTIFY)
        server.shutdown()
    return reply


async def _status_run(directory: Path, count: int, capture: list[bytes] | None = None) -> float:
    async with anyio.create_task_group() as tg:
        agent = await tg.start(HostAgentServer(directory, grace=0.1).serve)
        if capture is not None:
            capture.append(await _read_to_eof(str(agent.status_path)))
        elapsed = await _new_connection_each(str(agent.status_path), count)
        agent.shutdown()
    return elapsed


def cases(quick: bool) -> list[Case]:
    directory = Path(tempfile.mkdtemp(prefix="spsrv-", dir="/tmp"))
    atexit.register(shutil.rmtree, directory, True)
    round_trips = 1000 if quick else 5000
    connections = 300 if quick else 2000
    repeat = 3 if quick else 5
    counter = iter(range(1 << 30))

    def fresh(name: str) -> str:
        return str(directory / f"{name}{next(counter)}")

    def case(
        name: str,
        baseline: Callable[[], float],
        candidate: Callable[[], float],
        units: int,
        unit: str,
    ) -> Case:
        return Case(
            name=f"servers: {name}",
            baseline=baseline,
            candidate=candidate,
            target=TARGET,
            units=units,
            unit=unit,
            repeat=repeat,
        )

    out = [
        case(
            f"echo vs raw anyio echo server ({round_trips} rt)",
            lambda: anyio.run(
                _raw_server, fresh("r"), _replier(FRAME), _line_driver(FRAME), round_trips
            ),
            lambda: anyio.run(_echo_run, fresh("e"), round_trips),
            round_trips,
            "round trip",
        )
    ]
    for dialect in (Dialect.TAURI, Dialect.MAC):
        reply = anyio.run(_desktop_reply, fresh("c"), dialect)

        def raw(reply: bytes = reply) -> float:
            return anyio.run(
                _raw_server, fresh("r"), _replier(reply), _line_driver(IDENTIFY), round_trips
            )

        def ref(dialect: Dialect = dialect) -> float:
            return anyio.run(_desktop_run, fresh("d"), dialect, round_trips)

        out.append(
            case(
                f"desktop {dialect.value} identify vs raw anyio server ({round_trips} rt)",
                raw,
                ref,
                round_trips,
                "round trip",
            )
        )
    captured: list[bytes] = []
    anyio.run(_status_run, Path(fresh("s")), 1, captured)
    status = captured[0]
    out.append(
        case(
            f"host-agent status, new connection each, vs raw anyio server ({connections} conn)",
            lambda: anyio.run(
                _raw_server, fresh("r"), _writer(status), _new_connection_each, connections
            ),
            lambda: anyio.run(_status_run, Path(fresh("h")), connections),
            connections,
            "connection",
        )
    )
    return out
