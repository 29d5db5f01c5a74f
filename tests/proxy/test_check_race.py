"""``check`` never logs a loop error when a case's deadline lands as the server's bytes arrive.

Regression: a probe case read and wrote with anyio's asyncio socket stream, whose
ready future an unguarded loop callback resolves, so the case's deadline (its
``move_on_after``) running in the loop pass that reported the socket ready made
the loop log ``InvalidStateError``. The case now goes through a ``SocketPump``
(guarded waits), as the relay and the servers do. Provoked with
``tests/_loop_race.py`` (both orders, stock loop and uvloop; trio is not affected).
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest

from shedproto.clients.proxy._check import _run_case
from shedproto.observe import Outcome, ProbeCase, observer_factory
from tests._loop_race import LOOPS, ORDERS, drain, provoke, run_on

_BIG = b"x" * (8 << 20)  # more than the socket buffers take: the send waits for room


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("loop_name", LOOPS)
@pytest.mark.parametrize("wait", ["read", "write"])
def test_a_case_cancelled_as_its_socket_turns_ready_reports_no_loop_error(
    short_socket_dir: Path, loop_name: str, order: str, wait: str
) -> None:
    path = short_socket_dir / "s.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen()
    payload = _BIG if wait == "write" else b""
    case = ProbeCase(name="race", payload=payload, expected=(Outcome("ok"),))

    async def main() -> None:
        observer = observer_factory("herdr")(1)
        task = asyncio.ensure_future(_run_case(path, case, observer, version=None, timeout=60))
        for _ in range(20):
            await asyncio.sleep(0)
        server, _ = listener.accept()  # connected already: the backlog holds it
        try:
            for _ in range(20):
                await asyncio.sleep(0)
            assert not task.done()  # it waits for the answer, or for room to send

            def ready() -> object:
                return drain(server) if wait == "write" else server.send(b"x")

            assert await provoke(task, ready, order) == []
        finally:
            server.close()

    try:
        run_on(loop_name, main)
    finally:
        listener.close()
