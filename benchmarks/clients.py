"""The typed clients against a raw anyio client doing the same socket work (issue 16).

Every case serves canned answers from one raw anyio server (the same for
baseline and candidate, so the ratio is the client's cost alone): the server
reads a request line, answers it with pre-encoded bytes carrying the
request's id, and (where the protocol says so) closes. Baseline: a raw anyio
client that sends the same request bytes and reads the answer
(``receive_until`` a newline, or to EOF) without decoding it. Candidate: the
library's async client, which encodes, frames, decodes and types. For the
12 KB snapshot, where parsing is most of the work, the goal case's raw client
also parses the answer (see :func:`_herdr`). Cases:

* desktop ``identify`` round trips on one connection (``AsyncDesktopClient``);
* host-agent status reads, a new connection each (``read_status_async``);
* herdr ``ping`` (small reply) and a 12 KB ``session.snapshot``, a new
  connection each (``AsyncHerdrClient``);
* agents-host ``health`` requests on one connection (``AsyncAgentsHostClient``).

Target: ratio >= 0.95. Two more cases put the herdr client against the peer
herdr-client 0.1.0 on the same kind of canned server (goal >= 3x on a 12 KB
``session.snapshot``, >= 1.5x on a 1 KB ``workspace.list``): herdr-client is
Python 3.13 code, so both clients run in one Python 3.13 subprocess (see
:class:`_PeerRuns`); without 3.13, shedproto's dependencies there, or the
unpacked wheel, they are skipped with the reason on stderr. Times are CPU
seconds of the measuring process (both ends run in one event loop; see
``benchmarks/desktop.py``).
"""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import msgspec
from anyio.streams.buffered import BufferedByteReceiveStream

from shedproto import herdr
from shedproto.clients.agents_host import AsyncAgentsHostClient
from shedproto.clients.desktop import AsyncDesktopClient
from shedproto.clients.herdr import AsyncHerdrClient
from shedproto.clients.host_agent import read_status_async
from shedproto.desktop import request_line
from shedproto.herdr import types as t
from shedproto.host_agent import build_live_status, encode_live_status, status_socket_path
from tests.herdr._interop import CLIENT_DIR, PEER_VENV, python313

from ._harness import Case
from .herdr import _snapshot_line

_clock = time.process_time
MAX_LINE = 1 << 22
ID = b'"__ID__"'


class _Request(msgspec.Struct):
    id: Any = None


_decode_request = msgspec.json.Decoder(_Request).decode


def _template(answer: Any) -> tuple[bytes, bytes]:
    """Split the encoded ``answer`` (whose id is ``"__ID__"``) around the id."""
    before, after = msgspec.json.encode(answer).split(ID, 1)
    return before, after + b"\n"


async def _serve_lines(
    stream: anyio.abc.SocketStream, template: tuple[bytes, bytes], *, once: bool
) -> None:
    """Answer each request line with ``template`` around its id; close after one if ``once``."""
    before, after = template
    encode = msgspec.json.encode
    reader = BufferedByteReceiveStream(stream)
    async with stream:
        try:
            while True:
                line = await reader.receive_until(b"\n", MAX_LINE)
                await stream.send(before + encode(_decode_request(line).id) + after)
                if once:
                    return
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
            return


def _answering(
    template: tuple[bytes, bytes], *, once: bool
) -> Callable[[anyio.abc.SocketStream], Awaitable[None]]:
    """Return a handler answering request lines with ``template`` (see :func:`_serve_lines`)."""

    async def handler(stream: anyio.abc.SocketStream) -> None:
        await _serve_lines(stream, template, once=once)

    return handler


async def _timed(call: Callable[[], Awaitable[object]], count: int) -> float:
    """Await ``call()`` ``count`` times; return the CPU time it took."""
    start = _clock()
    for _ in range(count):
        await call()
    return _clock() - start


async def _served(
    path: str,
    handler: Callable[[anyio.abc.SocketStream], Awaitable[None]],
    work: Callable[[], Awaitable[float]],
) -> float:
    """Run ``work`` (which returns its own CPU time) against ``handler`` listening at ``path``."""
    listener = await anyio.create_unix_listener(path)
    active = 0
    done = False
    idle = anyio.Event()

    async def counted(stream: anyio.abc.SocketStream) -> None:
        nonlocal active
        active += 1
        try:
            await handler(stream)
        finally:
            active -= 1
            if done and not active:
                idle.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, counted)
        elapsed = await work()
        done = True
        if active:  # let handlers see EOF and end: cancelling a pending read trips asyncio
            await idle.wait()
        tg.cancel_scope.cancel()
    await listener.aclose()
    await anyio.Path(path).unlink(missing_ok=True)
    return elapsed


async def _raw_persistent(path: str, line: bytes, count: int) -> float:
    async with await anyio.connect_unix(path) as stream:
        reader = BufferedByteReceiveStream(stream)
        start = _clock()
        for _ in range(count):
            await stream.send(line)
            await reader.receive_until(b"\n", MAX_LINE)
        return _clock() - start


async def _raw_new_connection(
    path: str, line: bytes | None, count: int, *, decode: bool = False
) -> float:
    """Send ``line`` on a new connection each time and read the answer to EOF.

    With ``decode`` the answer is also parsed with ``msgspec.json.decode``
    (untyped: the fastest generic parse, 1.6x the cost of the typed one here).
    """
    start = _clock()
    for _ in range(count):
        async with await anyio.connect_unix(path) as stream:
            if line is not None:
                await stream.send(line)
            chunks = []
            while True:
                try:
                    chunks.append(await stream.receive())
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    break
            if decode:
                msgspec.json.decode(b"".join(chunks))
    return _clock() - start


def _desktop(directory: Path, count: int) -> Case:
    path = str(directory / "desk.sock")
    identify = {
        "socket_path": path, "pid": 1, "app_label": "Shed", "app_id": "dev.shed.desktop",
        "ui_version": "1.0", "protocol_version": 1, "test_mode": True, "core": "mac",
    }  # fmt: skip
    template = _template({"id": "__ID__", "ok": True, "result": identify})
    handler = _answering(template, once=False)

    async def raw() -> float:
        return await _raw_persistent(path, request_line("1", "identify", {}), count)

    async def client() -> float:
        async with await AsyncDesktopClient.connect(path) as desktop:
            return await _timed(desktop.identify, count)

    return _case(
        f"clients: desktop identify, one connection ({count} rt)",
        path,
        handler=handler,
        raw=raw,
        client=client,
        count=count,
    )


def _host_agent_status(directory: Path, count: int) -> Case:
    path = str(status_socket_path(str(directory)))
    status = encode_live_status(
        build_live_status(
            version="0.9.0", pid=1, started_at="2026-01-01T00:00:00Z",
            written_at="2026-01-01T00:00:00Z", config_path="/etc/shed/host-agent.yaml",
            policies={}, socket_path=str(directory / "host-agent.sock"),
        )
    )  # fmt: skip

    async def handler(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            await stream.send(status)

    async def raw() -> float:
        return await _raw_new_connection(path, None, count)

    async def client() -> float:
        return await _timed(lambda: read_status_async(directory), count)

    return _case(
        f"clients: host-agent status, new connection each ({count} req)",
        path,
        handler=handler,
        raw=raw,
        client=client,
        count=count,
    )


def _herdr(directory: Path, count: int, snapshot: bool, *, decoding_raw: bool = False) -> Case:
    """Time herdr ``ping`` or a 12 KB ``session.snapshot``, a new connection each.

    The snapshot is compared twice. The goal case (``decoding_raw``) gives the
    raw client the parse every client needs to use the answer; the other
    reports the typed client against a raw client that only reads the bytes,
    where the ~33 µs typed decode of 12.5 KB is most of the gap (a regression
    floor, like the stretch case in ``roundtrip.py``).
    """
    path = str(directory / ("snap.sock" if snapshot else "ping.sock"))
    if snapshot:
        reply: Any = msgspec.json.decode(_snapshot_line(workspaces=5))
        reply["id"] = "__ID__"
        request = b'{"id":"1","method":"session.snapshot","params":{}}\n'
    else:
        pong = t.PongReply(version="0.8.0", protocol=herdr.DEFAULT_PROTOCOL)
        reply = herdr.SuccessResponse(id="__ID__", result=pong)
        request = b'{"id":"1","method":"ping","params":{}}\n'
    template = _template(reply)
    size = len(template[0]) + len(template[1])
    handler = _answering(template, once=True)

    async def raw() -> float:
        return await _raw_new_connection(path, request, count, decode=decoding_raw)

    async def client() -> float:
        herdr_client = AsyncHerdrClient.for_socket(path)
        call = herdr_client.session_snapshot if snapshot else herdr_client.ping
        return await _timed(call, count)

    what = f"session.snapshot ({size // 1024} KB)" if snapshot else "ping"
    if snapshot:
        what += ", raw decodes" if decoding_raw else ", raw skips decode"
    return _case(
        f"clients: herdr {what}, new connection each ({count} req)",
        path,
        handler=handler,
        raw=raw,
        client=client,
        count=count,
        target=0.95 if decoding_raw or not snapshot else 0.65,
    )


def _agents_host(directory: Path, count: int) -> Case:
    path = str(directory / "ah.sock")
    template = _template({"id": "__ID__", "ok": True, "result": {"health": None}})
    handler = _answering(template, once=False)

    async def raw() -> float:
        return await _raw_persistent(path, b'{"id":1,"op":"health"}\n', count)

    async def client() -> float:
        async with await AsyncAgentsHostClient.connect(path) as host:
            return await _timed(host.health, count)

    return _case(
        f"clients: agents-host health, one connection ({count} req)",
        path,
        handler=handler,
        raw=raw,
        client=client,
        count=count,
    )


def _case(
    name: str,
    path: str,
    *,
    handler: Callable[[anyio.abc.SocketStream], Awaitable[None]],
    raw: Callable[[], Awaitable[float]],
    client: Callable[[], Awaitable[float]],
    count: int,
    target: float = 0.95,
) -> Case:
    return Case(
        name=name,
        baseline=lambda: anyio.run(_served, path, handler, raw),
        candidate=lambda: anyio.run(_served, path, handler, client),
        target=target,
        units=count,
        unit="request",
        repeat=5,
    )


class _PeerRuns:
    """The herdr-client comparison, measured once in a Python 3.13 process, then replayed.

    herdr-client 0.1.0 is Python 3.13 code, so both clients run in one
    subprocess (``benchmarks/_herdr_peer.py``) on the interop interpreter
    (``tests/herdr/_interop.py``: ``SHEDPROTO_HERDR_PYTHON``, else the venv
    ``/tmp/interop/py313`` with shedproto's dependencies, else any 3.13) with
    the unpacked wheel on ``PYTHONPATH``. Each case's timers hand out that
    run's timings in the harness's order (a warm-up pair, then the repeats).
    """

    def __init__(self, python: str, directory: Path, count: int, runs: int) -> None:
        self.command = [python, "-m", "benchmarks._herdr_peer", str(directory), str(count)]
        self.command += [str(runs), *(["--uvloop"] if _on_uvloop() else [])]
        self.timings: dict[str, dict[str, list[float]]] | None = None

    def timer(self, case: str, side: str) -> Callable[[], float]:
        """Return a timer giving the next timing of ``side`` (theirs, ours) in ``case``."""

        def next_timing() -> float:
            if self.timings is None:
                self.timings = _run_peer(self.command)
            return self.timings[case][side].pop(0)

        return next_timing


def _on_uvloop() -> bool:
    """Whether ``python -m benchmarks --uvloop`` installed uvloop's policy in this process."""
    return type(asyncio.get_event_loop_policy()).__module__.startswith("uvloop")


def _run_peer(command: list[str]) -> dict[str, dict[str, list[float]]]:
    """Run the peer comparison; return its timings (raises ``RuntimeError`` when it fails)."""
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(CLIENT_DIR)])}
    env.pop("PYENV_VERSION", None)
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the herdr-client comparison failed: {done.stderr.decode()[-2000:]}")
    timings: dict[str, dict[str, list[float]]] = msgspec.json.decode(done.stdout)
    return timings


def _herdr_peer_python() -> tuple[str | None, str]:
    """Return (the Python 3.13 that can run both clients, None when none can; why not)."""
    if not (CLIENT_DIR / "herdr_client").is_dir():
        return (
            None,
            f"herdr-client 0.1.0 is not unpacked in {CLIENT_DIR} (see tests/herdr/_interop.py)",
        )
    python = python313()
    if python is None:
        return None, "no working Python >= 3.13"
    needed = "msgspec, anyio, typing_extensions, pyte" + (", uvloop" if _on_uvloop() else "")
    probe = subprocess.run([python, "-c", f"import {needed}"], capture_output=True, check=False)
    if probe.returncode != 0:
        return None, (
            f"{python} lacks one of {needed}; make one: {python} -m venv {PEER_VENV}"
            f" && {PEER_VENV}/bin/pip install msgspec anyio typing-extensions pyte uvloop"
        )
    return python, ""


def _herdr_peer(directory: Path, count: int) -> list[Case]:
    """Compare the herdr client with herdr-client 0.1.0 (goals: >= 3x snapshot, >= 1.5x small)."""
    python, reason = _herdr_peer_python()
    if python is None:
        sys.stderr.write(f"clients: herdr client vs herdr-client skipped: {reason}\n")
        return []
    repeat = 5
    runs = _PeerRuns(python, directory, count, repeat + 1)
    return [
        Case(
            name=f"clients: herdr {what} vs herdr-client 0.1.0 ({count} req)",
            baseline=runs.timer(case, "theirs"),
            candidate=runs.timer(case, "ours"),
            target=target,
            units=count,
            unit="request",
            repeat=repeat,
        )
        for case, what, target in (
            ("snapshot", "session.snapshot (12 KB)", 3.0),
            ("workspace.list", "workspace.list (1 KB)", 1.5),
        )
    ]


def cases(quick: bool) -> list[Case]:
    count = 500 if quick else 3000
    directory = Path(tempfile.mkdtemp(prefix="clbench-", dir="/tmp"))
    atexit.register(shutil.rmtree, directory, True)
    return [
        _desktop(directory, count),
        _host_agent_status(directory, count // 3),
        _herdr(directory, count // 3, snapshot=False),
        _herdr(directory, count // 3, snapshot=True, decoding_raw=True),
        _herdr(directory, count // 3, snapshot=True),
        _agents_host(directory, count),
        *_herdr_peer(directory, count // 3),
    ]
