"""Memory per idle and per hostile connection, measured with tracemalloc (issue 16).

For each reference server (echo, desktop mac and Tauri, host-agent status and
approval sockets, herdr, agents-host API) one process runs the server on its
event loop while a worker thread drives plain blocking client sockets, created
before the measurement starts so that only the server's allocations (and the
few bytes a ``connect`` costs) are traced. After the clients acted, a probe
connection sends one line and waits for any answer (accepts are serial, so
every earlier connection has been taken), then the loop runs until the traced
total stops moving.

* **idle**: N connections that send nothing. Baseline: a raw anyio line
  server (``receive_until`` per connection); candidate: the reference server.
  Ratio = raw bytes / server bytes per connection (1.0 = as lean as raw);
  informational target 0.5.
* **hostile**: each of N connections sends ``4 x cap`` bytes with no newline
  (the client stops early when the server hangs up or stops reading). The
  candidate is the larger of the bytes the server still holds per connection
  afterwards and the bytes it holds per connection while each peer has sent
  ``cap - 1`` bytes (every buffer full at once). Baseline: the server's frame
  cap. Ratio = cap / bytes: >= 0.8 (the target; a buffer filled to the cap
  costs up to ~1.2 x cap with bytearray over-allocation) means the memory a
  peer can pin is bounded by the cap and does not grow with what it sends
  beyond it. A server that never reads (the host-agent status socket writes
  its snapshot and closes) holds almost nothing: the bytes wait in the kernel.

The result line prints the medians in bytes per connection (the cases'
``measure`` is ``bytes``); every run's figures, with ``bytes / cap`` for both
hostile runs, are written to stderr.
"""

from __future__ import annotations

import gc
import shutil
import socket
import sys
import tempfile
import time
import tracemalloc
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import NamedTuple

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

from shedproto.agents_host import API_MAX_FRAME_BYTES
from shedproto.desktop import Dialect
from shedproto.herdr import MAX_REQUEST_BYTES
from shedproto.host_agent import MAX_LINE_BYTES
from shedproto.servers.agents_host import run_host
from shedproto.servers.desktop import DesktopServer
from shedproto.servers.echo import ECHO_POLICY, echo_server
from shedproto.servers.herdr import HerdrServer
from shedproto.servers.host_agent import HostAgentServer
from shedproto.testing._agents_host import echo_host_run

from ._harness import Case

__all__ = ["TARGETS", "Hostile", "Target", "cases", "measure_hostile", "measure_idle"]

IDLE_TARGET = 0.5
HOSTILE_TARGET = 0.8
PROBE = b"{}\n"
CLIENT_TIMEOUT = 2.0
"""Seconds a blocking client write may stall before the peer counts as not reading."""
CONNECT_TIMEOUT = 10.0
"""Seconds a client keeps retrying a connect while the server's backlog is full."""

Serve = Callable[[Path], AbstractAsyncContextManager[str]]
"""Start a server with its files under a directory; yield the socket path to measure."""


@dataclass(frozen=True)
class Target:
    """One server to measure: its name, its frame cap and how to start it."""

    name: str
    cap: int
    serve: Serve


@asynccontextmanager
async def _unix_server(server: object, path: str) -> AsyncIterator[str]:
    async with anyio.create_task_group() as tg:
        await tg.start(server.serve)  # type: ignore[attr-defined]
        yield path
        server.shutdown()  # type: ignore[attr-defined]


def _echo(directory: Path) -> AbstractAsyncContextManager[str]:
    path = str(directory / "echo.sock")
    return _unix_server(echo_server(path, grace=0.1), path)


def _desktop(dialect: Dialect) -> Serve:
    def serve(directory: Path) -> AbstractAsyncContextManager[str]:
        path = str(directory / "desktop.sock")
        server = DesktopServer(path, dialect=dialect, test_mode=True, env={}, grace=0.1)
        return _unix_server(server, path)

    return serve


def _herdr(directory: Path) -> AbstractAsyncContextManager[str]:
    path = str(directory / "herdr.sock")
    return _unix_server(HerdrServer(path, shell=["/bin/sh"]), path)


def _host_agent(socket_name: str) -> Serve:
    @asynccontextmanager
    async def serve(directory: Path) -> AsyncIterator[str]:
        async with anyio.create_task_group() as tg:
            agent = await tg.start(HostAgentServer(directory / "agent", grace=0.1).serve)
            yield str(getattr(agent, socket_name))
            agent.shutdown()

    return serve


@asynccontextmanager
async def _agents_host(directory: Path) -> AsyncIterator[str]:
    root = directory / "ah"
    root.mkdir(mode=0o700)
    run = echo_host_run(root, owner_did="did:key:z6MkBenchOwner", space="did:key:bench")
    async with anyio.create_task_group() as tg:
        tg.start_soon(run_host, run)
        await run.ready.wait()
        yield str(root / "h.sock")
        run.stop_requested.set()


async def _raw_handler(stream: anyio.abc.SocketStream) -> None:
    reader = BufferedByteReceiveStream(stream)
    async with stream:
        try:
            while True:
                await reader.receive_until(b"\n", ECHO_POLICY.max_frame_bytes)
                await stream.send(b"{}\n")
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
            return


@asynccontextmanager
async def _raw(directory: Path) -> AsyncIterator[str]:
    path = str(directory / "raw.sock")
    listener = await anyio.create_unix_listener(path)
    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, _raw_handler)
        yield path
        tg.cancel_scope.cancel()
    await listener.aclose()


TARGETS = [
    Target("echo", ECHO_POLICY.max_frame_bytes, _echo),
    Target("desktop tauri", Dialect.TAURI.frame_cap, _desktop(Dialect.TAURI)),
    Target("desktop mac", Dialect.MAC.frame_cap, _desktop(Dialect.MAC)),
    Target("host-agent status", MAX_LINE_BYTES, _host_agent("status_path")),
    Target("host-agent approval", MAX_LINE_BYTES, _host_agent("approval_path")),
    Target("herdr", MAX_REQUEST_BYTES, _herdr),
    Target("agents-host api", API_MAX_FRAME_BYTES, _agents_host),
]


def _send(sock: socket.socket, data: bytes) -> None:
    """Write ``data`` until done, the peer hangs up or stops reading (no error either way)."""
    try:
        sock.sendall(data)
    except OSError:  # hung up (EPIPE, ECONNRESET) or stopped reading (timeout)
        return


def _connect(sock: socket.socket, path: str) -> None:
    """Connect ``sock`` to ``path``, retrying while the listener's backlog is full.

    Raises :class:`TimeoutError` when the server has not taken the connection
    within :data:`CONNECT_TIMEOUT` seconds.
    """
    deadline = time.monotonic() + CONNECT_TIMEOUT
    while True:
        try:
            sock.connect(path)
        except BlockingIOError:  # a Unix socket with a timeout says EAGAIN on a full backlog
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"{path}: backlog still full after {CONNECT_TIMEOUT} s"
                ) from None
            time.sleep(0.001)
        else:
            return


def _drive(path: str, clients: list[socket.socket], probe: socket.socket, send: bytes) -> None:
    """Connect every client (sending ``send`` on each), then one probe round trip."""
    for sock in clients:
        _connect(sock, path)
        if send:
            _send(sock, send)
    _connect(probe, path)
    _send(probe, PROBE)
    try:
        probe.recv(1)
    except OSError:  # any outcome proves the accept loop reached the probe
        return


async def _settle() -> None:
    """Let the loop run until the traced total holds still for a few passes (2 s at most)."""
    last, still = -1, 0
    for _ in range(100):
        await anyio.sleep(0.02)
        now = tracemalloc.get_traced_memory()[0]
        still = still + 1 if abs(now - last) < 4096 else 0
        if still >= 3:
            return
        last = now


async def _held(serve: Serve, directory: Path, count: int, send: bytes) -> float:
    """Return server bytes held per connection after ``count`` clients each sent ``send``."""
    async with serve(directory) as path:
        clients = [socket.socket(socket.AF_UNIX) for _ in range(count)]
        probe = socket.socket(socket.AF_UNIX)
        for sock in (*clients, probe):
            sock.settimeout(CLIENT_TIMEOUT)
        await anyio.to_thread.run_sync(gc.collect)  # the worker thread exists before tracing
        await _settle()
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        try:
            await anyio.to_thread.run_sync(_drive, path, clients, probe, send)
            await _settle()
            after = tracemalloc.get_traced_memory()[0]
        finally:
            for sock in (*clients, probe):
                sock.close()
    return max(0.0, (after - before) / count)


def _traced(serve: Serve, count: int, send: bytes) -> float:
    """Run :func:`_held` under tracemalloc in a fresh event loop and temporary directory."""
    directory = Path(tempfile.mkdtemp(prefix="spmem-", dir="/tmp"))
    tracing = tracemalloc.is_tracing()  # someone else's tracing is left running
    if not tracing:
        tracemalloc.start()
    try:
        return anyio.run(_held, serve, directory, count, send)
    finally:
        if not tracing:
            tracemalloc.stop()
        shutil.rmtree(directory, ignore_errors=True)


def measure_idle(target: Target, count: int) -> float:
    """Return the bytes ``target``'s server holds per idle connection (``count`` of them)."""
    return _traced(target.serve, count, b"")


class Hostile(NamedTuple):
    """Bytes a server holds per hostile connection, in the two hostile runs."""

    at_cap: float
    """Every peer ``cap - 1`` bytes into an unterminated line."""
    beyond_cap: float
    """Every peer has sent ``4 x cap`` bytes with no newline."""


def measure_hostile(target: Target, count: int) -> Hostile:
    """Return the bytes ``target``'s server holds per hostile connection (``count`` of them)."""
    return Hostile(
        _traced(target.serve, count, b"x" * (target.cap - 1)),
        _traced(target.serve, count, b"x" * (4 * target.cap)),
    )


def _idle_timer(label: str, measure: Callable[[], float]) -> Callable[[], float]:
    """Wrap ``measure`` (bytes) into a harness measurement; echo it to stderr."""

    def run() -> float:
        value = measure()
        sys.stderr.write(f"memory: {label} idle: {value:,.0f} bytes/connection\n")
        return value

    return run


def _hostile_timer(target: Target, count: int) -> Callable[[], float]:
    """Return a harness measurement of the larger hostile figure (bytes); echo both to stderr."""

    def run() -> float:
        held = measure_hostile(target, count)
        sys.stderr.write(
            f"memory: {target.name} hostile: {held.at_cap:,.0f} bytes/connection at the cap"
            f" ({held.at_cap / target.cap:.3f} x cap), {held.beyond_cap:,.0f} beyond it"
            f" ({held.beyond_cap / target.cap:.3f} x cap; cap {target.cap} bytes)\n"
        )
        return max(held)

    return run


def cases(quick: bool) -> list[Case]:
    """Return an idle and a hostile case per server in :data:`TARGETS`."""
    idle = 50 if quick else 200
    budget = (8 if quick else 32) << 20
    repeat = 3 if quick else 5
    out: list[Case] = []
    for target in TARGETS:
        hostile = max(2, min(20, budget // target.cap))
        out.append(
            Case(
                name=f"memory: {target.name} idle, raw anyio/server bytes ({idle} conn)",
                baseline=_idle_timer("raw anyio", partial(_traced, _raw, idle, b"")),
                candidate=_idle_timer(target.name, partial(measure_idle, target, idle)),
                target=IDLE_TARGET,
                units=1,
                unit="connection",
                repeat=repeat,
                measure="bytes",
            )
        )
        out.append(
            Case(
                name=f"memory: {target.name} hostile, cap/server bytes ({hostile} conn)",
                baseline=partial(float, target.cap),
                candidate=_hostile_timer(target, hostile),
                target=HOSTILE_TARGET,
                units=1,
                unit="connection",
                repeat=repeat,
                measure="bytes",
            )
        )
    return out
