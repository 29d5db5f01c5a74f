"""``shedproto demo``: drive every protocol end to end against its reference server.

Each protocol contributes one step: an async function that gets a private,
short socket directory and returns a :class:`DemoStep` report. The steps run
in order on the asyncio backend; the demo fails if any step fails.
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import msgspec

from ._output import EXIT_FAILURE, EXIT_OK, emit, json_flag

__all__ = ["DEMO_STEPS", "DemoStep", "register", "run_demo"]


class DemoStep(msgspec.Struct, kw_only=True):
    """What one protocol's demo step did: a name, success, and human-readable lines."""

    name: str
    ok: bool
    lines: list[str]


DemoFunction = Callable[[Path], Awaitable[DemoStep]]


async def framing_step(socket_dir: Path) -> DemoStep:
    """Round-trip three frames through the echo reference shell on a private socket."""
    from shedproto import encode_line
    from shedproto.clients import AsyncLineTransport
    from shedproto.servers.echo import echo_server

    frames = [
        {"type": "hello", "v": 2},
        {"type": "ping", "seq": 1},
        {"type": "event", "payload": {"text": "line with \\n escaped"}},
    ]
    async with anyio.create_task_group() as tg:
        server = echo_server(socket_dir / "echo.sock")
        path = await tg.start(server.serve)
        lines = [f"started the echo reference shell on {path} (dir 0700, socket 0600)"]
        start = time.perf_counter()
        async with await AsyncLineTransport.connect(path) as transport:
            echoed = [await transport.request(encode_line(frame), timeout=5.0) for frame in frames]
        elapsed_ms = (time.perf_counter() - start) * 1000
        server.shutdown()
    ok = echoed == [encode_line(frame)[:-1] for frame in frames]
    lines.append(
        f"sent {len(frames)} NDJSON frames, got {len(echoed)} back "
        f"{'byte-identical' if ok else 'DIFFERENT'} in {elapsed_ms:.1f} ms"
    )
    lines.append(f"server shut down; socket file removed: {not path.exists()}")
    return DemoStep(name="framing", ok=ok and not path.exists(), lines=lines)


DEMO_STEPS: list[tuple[str, str]] = [
    ("framing", "shedproto.clients.cli._demo:framing_step"),
    ("host-agent", "shedproto.clients.cli._host_agent:serve_step"),
    ("desktop-control", "shedproto.clients.cli._desktop:desktop_step"),
    ("herdr", "shedproto.clients.cli._herdr:demo_step"),
    ("connector", "shedproto.clients.cli._agents_host:demo_step"),
    ("agents-host", "shedproto.clients.cli._agents_host_run:demo_step"),
    ("drivers", "shedproto.clients.cli._drivers_demo:demo_step"),
]
"""The demo's steps in order: (name, ``"module:function"`` resolved when the demo runs).

Each protocol appends its own; a step function takes a private directory and
returns a :class:`DemoStep`. Lazy references keep protocol modules free to
import :class:`DemoStep` from here at module level.
"""


def _resolve(reference: str) -> DemoFunction:
    module_name, _, function_name = reference.partition(":")
    step: DemoFunction = getattr(importlib.import_module(module_name), function_name)
    return step


async def run_demo() -> list[DemoStep]:
    """Run every step in a fresh private socket directory; never raises for a failed step."""
    reports = []
    base = Path(tempfile.mkdtemp(prefix="shedproto-", dir="/tmp"))
    try:
        for name, reference in DEMO_STEPS:
            socket_dir = base / name
            try:
                reports.append(await _resolve(reference)(socket_dir))
            except Exception as exc:  # a failing step is reported, not fatal
                reports.append(
                    DemoStep(name=name, ok=False, lines=[f"{type(exc).__name__}: {exc}"])
                )
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return reports


def register(subparsers: Any) -> None:
    """Add the ``demo`` command."""
    demo = subparsers.add_parser(
        "demo",
        parents=[json_flag()],
        help="drive every protocol end to end against the reference servers",
        epilog="examples:\n  shedproto demo\n  shedproto demo --json",
    )
    demo.set_defaults(func=_demo)


def _demo(args: argparse.Namespace) -> int:
    reports = anyio.run(run_demo)
    text = []
    for report in reports:
        text.append(f"[{'ok' if report.ok else 'FAILED'}] {report.name}")
        text += [f"    {line}" for line in report.lines]
    all_ok = all(r.ok for r in reports)
    text.append(f"demo {'passed' if all_ok else 'FAILED'}: {len(reports)} steps")
    emit(args, "\n".join(text), {"ok": all_ok, "steps": reports})
    return EXIT_OK if all_ok else EXIT_FAILURE
