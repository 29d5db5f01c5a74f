"""desktop-control round trips through the reference server against a raw anyio echo.

Baseline: a raw anyio Unix echo (``receive_until`` on both ends) bouncing the
same request line. Candidate: :class:`DesktopServer` (envelope parse, op
lookup, gate, params decode, the model's handler, response encode) driven by
:class:`AsyncDesktopClient` (request encode, response parse, id pairing),
one connection, sequential calls of ``ui.navigate {pane: sheds}``, asyncio.
One case per dialect. Target: ratio >= 0.50 (a full request/response stack on
both ends against a bare byte echo).

Core cases (no sockets): a ``ServerConnection`` turning a batch of request
lines into events and answering each (envelope, op lookup, gate, params,
response encoding) against a bare ``msgspec.json.decode`` + ``encode`` of the
same lines. Target: ratio >= 0.12, a regression floor: the envelope, op,
gate and typed-params checks plus the answer's encoding cost about 5 us a
request here, against under 1 us for a bare decode/encode that checks nothing.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import time
from pathlib import Path

import anyio
import anyio.abc
import msgspec
from anyio.streams.buffered import BufferedByteReceiveStream

from shedproto.clients.desktop import AsyncDesktopClient
from shedproto.desktop import Answer, Dialect, RequestReceived, ServerConnection, request_line
from shedproto.servers.desktop import DesktopServer

from ._harness import Case

PARAMS = {"pane": "sheds"}
LINE = request_line("1", "ui.navigate", PARAMS)


async def _raw_echo(stream: anyio.abc.SocketStream) -> None:
    reader = BufferedByteReceiveStream(stream)
    async with stream:
        try:
            while True:
                line = await reader.receive_until(b"\n", 1 << 20)
                await stream.send(line + b"\n")
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
            return


async def _raw_run(path: str, count: int) -> float:
    listener = await anyio.create_unix_listener(path)
    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, _raw_echo)
        stream = await anyio.connect_unix(path)
        reader = BufferedByteReceiveStream(stream)
        start = time.perf_counter()
        for _ in range(count):
            await stream.send(LINE)
            await reader.receive_until(b"\n", 1 << 20)
        elapsed = time.perf_counter() - start
        await stream.aclose()
        tg.cancel_scope.cancel()
    await listener.aclose()
    os.unlink(path)
    return elapsed


async def _desktop_run(path: str, dialect: Dialect, count: int) -> float:
    async with anyio.create_task_group() as tg:
        server = DesktopServer(path, dialect=dialect, test_mode=True, env={}, grace=0.1)
        await tg.start(server.serve)
        async with await AsyncDesktopClient.connect(path) as client:
            start = time.perf_counter()
            for _ in range(count):
                await client.call("ui.navigate", PARAMS)
            elapsed = time.perf_counter() - start
        server.shutdown()
    return elapsed


def _core_case(dialect: Dialect, quick: bool) -> Case:
    count = 5000 if quick else 50000
    batch = b"".join(request_line(str(i), "ui.navigate", PARAMS) for i in range(1, count + 1))
    lines = batch.splitlines()

    def baseline() -> float:
        start = time.perf_counter()
        decode, encode = msgspec.json.decode, msgspec.json.encode
        for line in lines:
            request = decode(line)
            encode({"id": request["id"], "ok": True, "result": request["params"]})
        return time.perf_counter() - start

    def candidate() -> float:
        start = time.perf_counter()
        conn = ServerConnection(dialect, test_mode=True)
        for event in conn.receive_data(batch):
            if isinstance(event, RequestReceived):
                conn.send(Answer(id=event.id, result=PARAMS))
        return time.perf_counter() - start

    return Case(
        name=f"desktop: {dialect.value} core connection vs bare msgspec ({count} req)",
        baseline=baseline,
        candidate=candidate,
        target=0.12,
        units=count,
        unit="request",
        repeat=3 if quick else 5,
    )


def cases(quick: bool) -> list[Case]:
    count = 1000 if quick else 5000
    directory = Path(tempfile.mkdtemp(prefix="spbench-", dir="/tmp"))
    atexit.register(shutil.rmtree, directory, True)

    def baseline() -> float:
        return anyio.run(_raw_run, str(directory / "raw.sock"), count)

    def make(dialect: Dialect) -> Case:
        def candidate() -> float:
            return anyio.run(_desktop_run, str(directory / f"{dialect.value}.sock"), dialect, count)

        return Case(
            name=f"desktop: {dialect.value} reference server vs raw anyio echo ({count} rt)",
            baseline=baseline,
            candidate=candidate,
            target=0.50,
            units=count,
            unit="round trip",
            repeat=3 if quick else 5,
        )

    return [
        make(Dialect.TAURI),
        make(Dialect.MAC),
        _core_case(Dialect.TAURI, quick),
        _core_case(Dialect.MAC, quick),
    ]
