"""herdr: ping round trips (one connection per request) and snapshot decoding.

1. ``ping`` through the typed async client against the reference server,
   opening a new connection per request as herdr clients must. Baseline: a
   raw anyio Unix listener that reads one line, writes it back and closes,
   with a client that connects, sends, reads to EOF and closes. Same
   backend (asyncio), same machine, same number of requests. Target 0.5: the
   candidate also builds, encodes, decodes and validates typed messages on
   both sides and runs herdr's connection state machines.
2. Server side, ``ping`` with a new connection each: one raw anyio client
   (connect, send the ping line, read to EOF) drives (a) a raw anyio server
   that reads one line with ``receive_until``, writes the reply bytes the
   reference server produced (captured once before timing) and closes, and
   (b) the reference :class:`~shedproto.servers.herdr.HerdrServer`. The
   ratio is the server's own overhead per connection; target 0.95 (issue
   16). Timed in CPU seconds of this process, as ``benchmarks.servers``.
3. ``pane.read`` round trips against a server with four shell panes, agent
   detection on (herdr's 0.3 s tick) against off (``detect_interval=None``):
   detection must not slow screen reads; target 0.95.
4. Decoding a large ``session.snapshot`` answer (200 workspaces, 400 tabs,
   800 panes, their layouts and 200 agents) into typed Structs with
   :func:`shedproto.herdr.decode_response` at the default protocol, against ``json.loads`` of the
   same bytes into plain dicts. Target 1.0.
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
import time
from pathlib import Path

import anyio
import anyio.abc
import msgspec
from anyio.streams.buffered import BufferedByteReceiveStream

from shedproto import herdr
from shedproto.clients.herdr import AsyncHerdrClient
from shedproto.herdr import types as t
from shedproto.servers.herdr import HerdrServer

from ._harness import Case, timed
from .servers import Handler, _raw_server

PING = b'{"id":"1","method":"ping","params":{}}\n'


async def _raw_handler(stream: anyio.abc.SocketStream) -> None:
    reader = BufferedByteReceiveStream(stream)
    async with stream:
        try:
            line = await reader.receive_until(b"\n", 1 << 20)
            await stream.send(line + b"\n")
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
            return


async def _raw_run(path: str, count: int) -> float:
    listener = await anyio.create_unix_listener(path)
    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, _raw_handler)
        start = time.perf_counter()
        for _ in range(count):
            async with await anyio.connect_unix(path) as stream:
                await stream.send(PING)
                while True:
                    try:
                        await stream.receive()
                    except anyio.EndOfStream:
                        break
        elapsed = time.perf_counter() - start
        tg.cancel_scope.cancel()
    await listener.aclose()
    await anyio.Path(path).unlink(missing_ok=True)
    return elapsed


async def _herdr_run(path: str, count: int) -> float:
    async with anyio.create_task_group() as tg:
        server = HerdrServer(path, shell=["/bin/sh"])
        await tg.start(server.serve)
        client = AsyncHerdrClient.for_socket(path)
        start = time.perf_counter()
        for _ in range(count):
            await client.ping()
        elapsed = time.perf_counter() - start
        server.shutdown()
    return elapsed


async def _read_run(path: str, count: int, detect: float | None) -> float:
    """Time ``count`` ``pane.read`` answers on a server with four shell panes."""
    async with anyio.create_task_group() as tg:
        server = HerdrServer(
            path, shell=["/bin/sh"], detect_interval=detect, config_dir=str(Path(path).parent)
        )
        await tg.start(server.serve)
        client = AsyncHerdrClient.for_socket(path)
        pane = (await client.workspace_create(focus=True)).root_pane.pane_id
        for _ in range(3):
            await client.pane_split("right", target_pane_id=pane)
        await anyio.sleep(0.7)  # a few detection ticks first
        start = time.perf_counter()
        for _ in range(count):
            await client.pane_read(pane, "visible")
        elapsed = time.perf_counter() - start
        server.shutdown()
    return elapsed


def _one_reply(reply: bytes) -> Handler:
    """Return a raw handler that reads one line, writes ``reply`` and returns (the close)."""

    async def handler(stream: anyio.abc.SocketStream) -> None:
        try:
            await BufferedByteReceiveStream(stream).receive_until(b"\n", 1 << 20)
            await stream.send(reply)
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
            return

    return handler


async def _ask(path: str, line: bytes) -> bytes:
    """Connect, send ``line``, read until the server closes; return what it wrote."""
    async with await anyio.connect_unix(path) as stream:
        await stream.send(line)
        return b"".join([chunk async for chunk in stream])


async def _pings(path: str, count: int) -> float:
    """Ask ``count`` pings, a new connection each; return the CPU seconds taken."""
    start = time.process_time()
    for _ in range(count):
        await _ask(path, PING)
    return time.process_time() - start


async def _herdr_server_run(path: str, count: int, capture: list[bytes] | None = None) -> float:
    async with anyio.create_task_group() as tg:
        server = HerdrServer(path, shell=["/bin/sh"])
        await tg.start(server.serve)
        if capture is not None:
            capture.append(await _ask(path, PING))
        elapsed = await _pings(path, count)
        server.shutdown()
    return elapsed


def _snapshot_line(workspaces: int = 200) -> bytes:
    ws_infos, tabs, panes, layouts, agents = [], [], [], [], []
    for w in range(1, workspaces + 1):
        wid = herdr.workspace_id(w)
        ws_infos.append(
            t.WorkspaceInfo(
                workspace_id=wid, number=w, label=f"project-{w}", focused=w == 1, pane_count=4,
                tab_count=2, active_tab_id=f"{wid}:t1", agent_status="idle",
                tokens={"branch": "main", "model": "large"},
            )
        )  # fmt: skip
        for tab_number in (1, 2):
            tid = herdr.tab_id(wid, tab_number)
            tabs.append(
                t.TabInfo(
                    tab_id=tid, workspace_id=wid, number=tab_number, label=str(tab_number),
                    focused=w == 1 and tab_number == 1, pane_count=2, agent_status="working",
                )
            )  # fmt: skip
            layout_panes = []
            for p in (tab_number * 2 - 1, tab_number * 2):
                pid = herdr.pane_id(wid, p)
                panes.append(
                    t.PaneInfo(
                        pane_id=pid, terminal_id=f"term_{w}_{p}", workspace_id=wid, tab_id=tid,
                        focused=False, cwd=f"/home/user/src/project-{w}", label="shell",
                        agent="claude", title="Refactoring the parser", agent_status="working",
                        state_labels={"phase": "edit"}, revision=0,
                    )
                )  # fmt: skip
                rect = t.PaneLayoutRect(x=0 if p % 2 else 60, y=0, width=60, height=40)
                layout_panes.append(t.PaneLayoutPane(pane_id=pid, focused=False, rect=rect))
            area = t.PaneLayoutRect(x=0, y=0, width=120, height=40)
            layouts.append(
                t.PaneLayoutSnapshot(
                    workspace_id=wid, tab_id=tid, zoomed=False, area=area,
                    focused_pane_id=layout_panes[0].pane_id, panes=layout_panes,
                    splits=[t.PaneLayoutSplit(id="s1", direction="right", ratio=0.5, rect=area)],
                )
            )  # fmt: skip
        agents.append(
            t.AgentInfo(
                terminal_id=f"term_{w}_1", name=f"agent-{w}", agent="claude",
                agent_status="working",
                workspace_id=wid, tab_id=f"{wid}:t1", pane_id=f"{wid}:p1", focused=False,
                state_change_seq=7, revision=0,
            )
        )  # fmt: skip
    snapshot = t.SessionSnapshot(
        version="0.8.0", protocol=21, focused_workspace_id="w1", workspaces=ws_infos,
        tabs=tabs, panes=panes, layouts=layouts, agents=agents,
    )  # fmt: skip
    reply = herdr.SuccessResponse(id="snap", result=t.SessionSnapshotReply(snapshot=snapshot))
    return msgspec.json.encode(reply)


def cases(quick: bool) -> list[Case]:
    directory = Path(tempfile.mkdtemp(prefix="hdbench-", dir="/tmp"))
    atexit.register(shutil.rmtree, directory, True)
    count = 300 if quick else 2000

    def baseline() -> float:
        return anyio.run(_raw_run, str(directory / "raw.sock"), count)

    def candidate() -> float:
        return anyio.run(_herdr_run, str(directory / "herdr.sock"), count)

    counter = iter(range(1 << 30))

    def fresh(name: str) -> str:
        return str(directory / f"{name}{next(counter)}.sock")

    captured: list[bytes] = []
    anyio.run(_herdr_server_run, fresh("c"), 0, captured)
    pong = captured[0]

    def raw_server() -> float:
        return anyio.run(_raw_server, fresh("r"), _one_reply(pong), _pings, count)

    def herdr_server() -> float:
        return anyio.run(_herdr_server_run, fresh("h"), count)

    reads = 300 if quick else 1500

    def reads_undetected() -> float:
        return anyio.run(_read_run, fresh("u"), reads, None)

    def reads_detected() -> float:
        return anyio.run(_read_run, fresh("d"), reads, 0.3)

    line = _snapshot_line()
    decodes = 20 if quick else 100
    assert herdr.decode_response(line, herdr.DEFAULT_PROTOCOL) is not None

    def loads() -> None:
        for _ in range(decodes):
            json.loads(line)

    def typed() -> None:
        for _ in range(decodes):
            herdr.decode_response(line, herdr.DEFAULT_PROTOCOL)

    return [
        Case(
            name=f"herdr: ping, new connection each, typed client+server ({count} rt)",
            baseline=baseline,
            candidate=candidate,
            target=0.5,
            units=count,
            unit="round trip",
            repeat=3 if quick else 5,
        ),
        Case(
            name=f"herdr: server, ping, new connection each, vs raw anyio server ({count} conn)",
            baseline=raw_server,
            candidate=herdr_server,
            target=0.95,
            units=count,
            unit="connection",
            repeat=3 if quick else 5,
        ),
        Case(
            name=f"herdr: pane.read, 4 panes, agent detection on vs off ({reads} reads)",
            baseline=reads_undetected,
            candidate=reads_detected,
            target=0.95,
            units=reads,
            unit="read",
            repeat=3 if quick else 5,
        ),
        Case(
            name=f"herdr: decode {len(line) // 1024} KiB session.snapshot vs json.loads",
            baseline=timed(loads),
            candidate=timed(typed),
            target=1.0,
            units=decodes,
            unit="snapshot",
            repeat=3 if quick else 7,
        ),
    ]
