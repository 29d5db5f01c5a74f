"""herdr terminal streams: frames sent against screen changes, and the cost of a frame.

1. Frames per screen change. The reference server runs a pane whose shell
   prints paced lines (a change every ~10 ms) and then a burst (``seq``, many
   PTY reads in a row); a controller and an observer stream it through the
   typed client. Baseline: the screen changes, counted as the pane's output
   notifications (one per PTY read fed to the screen,
   ``Pane.content_revision``); candidate: the frames the observer received.
   The ratio is changes per frame; target 1.0 (never more than one frame per
   change: bursts coalesce, an unchanged screen sends none). The figures are
   counts, not times.
2. The cost of a frame: painting a 120 x 40 screen with one changed row per
   frame through :class:`~shedproto.herdr.FrameEncoder` plus the record
   encoding, against ``json.dumps`` of a dict holding the same base64 payload
   (the least a JSON-lines frame costs). Target 0.3.
"""

from __future__ import annotations

import atexit
import base64
import json
import shutil
import tempfile
from pathlib import Path

import anyio

from shedproto.clients.herdr import AsyncHerdrClient
from shedproto.herdr import types as t
from shedproto.herdr._terminal import FrameEncoder, encode_record
from shedproto.servers.herdr import HerdrServer

from ._harness import Case, timed


async def _stream_run(path: str, lines: int, burst: int) -> tuple[int, int]:
    """Return (screen changes, observer frames) for one paced run plus one burst."""
    async with anyio.create_task_group() as tg:
        server = HerdrServer(path, shell=["/bin/sh"], cwd="/tmp")
        await tg.start(server.serve)
        client = AsyncHerdrClient.for_socket(path)
        pane = (await client.workspace_create(cwd="/tmp")).root_pane
        model = next(p for ws in server.workspaces for p in ws.panes() if p.id == pane.pane_id)
        async with (
            client.terminal_session(pane.pane_id, cols=80, rows=24) as control,
            client.terminal_session(pane.pane_id, mode="observe", cols=80, rows=24) as watch,
        ):
            await control.next_frame(timeout=30)
            await watch.next_frame(timeout=30)
            before, frames = model.content_revision, 0
            script = (
                f"i=0; while [ $i -lt {lines} ]; do i=$((i+1)); echo paced$i; sleep 0.01; done; "
                f"seq 1 {burst}; echo done-$((1+1))\r"
            )
            await control.send_input(script)
            match = t.SubstringOutputMatch(value="done-2")
            await client.pane_wait_for_output(
                pane_id=pane.pane_id, source="recent", match=match, timeout_ms=120_000
            )
            painted = b""
            with anyio.fail_after(60):
                while b"done-2" not in painted:
                    frame = await watch.next_frame()
                    assert frame is not None
                    frames += 1
                    painted = painted[-64:] + frame.data()
            with anyio.move_on_after(0.5):  # frames still in flight count too
                while await watch.next_frame() is not None:
                    frames += 1
            changes = model.content_revision - before
        server.shutdown()
    return changes, frames


def cases(quick: bool) -> list[Case]:
    directory = Path(tempfile.mkdtemp(prefix="htbench-", dir="/tmp"))
    atexit.register(shutil.rmtree, directory, True)
    lines, burst = (40, 2000) if quick else (150, 20000)
    counter = iter(range(1 << 30))
    last: list[tuple[int, int]] = []

    def changes() -> float:
        path = str(directory / f"h{next(counter)}.sock")
        last.append(anyio.run(_stream_run, path, lines, burst))
        return float(last[-1][0])

    def frames() -> float:
        return float(last[-1][1])

    rows = [f"row {y} " + "x" * 60 for y in range(40)]
    paints = 200 if quick else 1000
    payload = base64.b64encode(("".join(rows)).encode()[:400]).decode()

    def encoder_frames() -> None:
        encoder = FrameEncoder()
        screen = list(rows)
        for n in range(paints):
            screen[n % 40] = f"row {n} changed " + "y" * 50
            frame = encoder.encode(screen, width=120, height=40, cursor=(n % 120, n % 40))
            assert frame is not None
            encode_record(frame)

    def dumps_only() -> None:
        for n in range(paints):
            json.dumps({"type": "terminal.frame", "seq": n, "bytes": payload})

    return [
        Case(
            name=f"herdr: terminal stream, screen changes per frame ({lines} + {burst} lines)",
            baseline=changes,
            candidate=frames,
            target=1.0,
            units=1,
            unit="run",
            repeat=3,
            measure="count",
        ),
        Case(
            name=f"herdr: terminal frame encode (one row changed) vs json.dumps ({paints})",
            baseline=timed(dumps_only),
            candidate=timed(encoder_frames),
            target=0.3,
            units=paints,
            unit="frame",
            repeat=3 if quick else 5,
        ),
    ]
