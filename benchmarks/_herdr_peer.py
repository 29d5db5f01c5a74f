"""The herdr client against the peer herdr-client 0.1.0, run in a Python >= 3.13 process.

``python -m benchmarks._herdr_peer DIR COUNT RUNS [--uvloop]`` (``benchmarks/clients.py``
starts it with herdr-client on ``PYTHONPATH``) times ``COUNT`` requests per run,
``RUNS`` runs per client, alternating, against one canned raw anyio server
(the same for both clients, a new connection per request as herdr requires),
and prints one JSON object: ``{case: {"theirs": [seconds, ...], "ours": [...]}}``
in CPU seconds of this process. Cases: ``snapshot`` (a 12 KB
``session.snapshot``) and ``workspace.list`` (about 1 KB). Both clients use
their async form on the same event loop.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import msgspec
from herdr_client import AsyncHerdrClient as PeerClient  # type: ignore[import-not-found]

from shedproto.clients.herdr import AsyncHerdrClient

from .clients import _answering, _served, _template, _timed
from .herdr import _snapshot_line

__all__ = ["CASES", "main", "replies"]

CASES = ("snapshot", "workspace.list")


def replies() -> dict[str, Any]:
    """Return each case's canned answer (its id ``"__ID__"``, filled in per request)."""
    snapshot: Any = msgspec.json.decode(_snapshot_line(workspaces=5))
    snapshot["id"] = "__ID__"
    listed: Any = msgspec.json.decode(_snapshot_line(workspaces=4))
    workspaces = listed["result"]["snapshot"]["workspaces"]
    return {
        "snapshot": snapshot,
        "workspace.list": {
            "id": "__ID__",
            "result": {"type": "workspace_list", "workspaces": workspaces},
        },
    }


def _calls(
    case: str, path: str
) -> tuple[Callable[[], Awaitable[object]], Callable[[], Awaitable[object]]]:
    """Return (herdr-client's call, ours) for ``case`` against the socket at ``path``."""
    peer = PeerClient(socket_path=path, timeout=10.0)
    ours = AsyncHerdrClient.for_socket(path)
    if case == "snapshot":
        return (lambda: peer.request("session.snapshot", {})), ours.session_snapshot
    return peer.workspace_list, ours.workspace_list


def main(argv: list[str] | None = None) -> int:
    """Run every case and print the timings as JSON; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks._herdr_peer")
    parser.add_argument("directory", type=Path)
    parser.add_argument("count", type=int)
    parser.add_argument("runs", type=int)
    parser.add_argument("--uvloop", action="store_true")
    args = parser.parse_args(argv)
    if args.uvloop:
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    out: dict[str, dict[str, list[float]]] = {}
    for case, answer in replies().items():
        path = str(args.directory / f"peer-{case}.sock")
        handler = _answering(_template(answer), once=True)
        theirs, ours = _calls(case, path)
        timings: dict[str, list[float]] = {"theirs": [], "ours": []}
        for _ in range(args.runs):
            for name, call in (("theirs", theirs), ("ours", ours)):

                async def work(call: Callable[[], Awaitable[object]] = call) -> float:
                    return await _timed(call, args.count)

                timings[name].append(anyio.run(_served, path, handler, work))
        out[case] = timings
    sys.stdout.write(msgspec.json.encode(out).decode() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
