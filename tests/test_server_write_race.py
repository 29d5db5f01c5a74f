"""A server's write that waits for room and is cancelled as room appears logs nothing.

Regression: the desktop, host-agent and agents-host servers handed what the socket did not
take at once to anyio's ``stream.send``, whose writability future an unguarded
loop callback resolves: a cancellation (the idle/send deadline, the server
stopping) in the loop pass that reported the socket writable made the loop log
``InvalidStateError``. They now wait with the pump's guarded wait
(``shedproto.servers._receive.send_all``). Provoked with ``tests/_loop_race.py``
(both orders, stock loop and uvloop; trio is not affected).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import anyio.abc
import pytest

from shedproto.servers.agents_host.api import _Connection
from shedproto.servers.desktop import DesktopServer
from shedproto.servers.host_agent import HostAgentServer
from tests._loop_race import LOOPS, ORDERS, drain, fill, provoke, run_on


async def _blocked_write(
    serve: Callable[[anyio.abc.SocketStream], Coroutine[Any, Any, None]],
    request: bytes,
    order: str,
) -> list[dict[str, Any]]:
    """Serve a connection whose socket is full, cancel it as room appears; return loop errors."""
    ours, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        fill(ours)
        peer.setblocking(False)
        if request:
            peer.send(request)
        stream = await anyio.abc.UNIXSocketStream.from_socket(ours)
        task = asyncio.ensure_future(serve(stream))
        for _ in range(20):
            await asyncio.sleep(0)
        assert not task.done()  # it waits for room
        return await provoke(task, lambda: drain(peer), order)
    finally:
        ours.close()
        peer.close()


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("loop_name", LOOPS)
def test_a_desktop_answer_waiting_for_room_cancelled_as_room_appears_reports_no_loop_error(
    tmp_path: Path, loop_name: str, order: str
) -> None:
    async def main() -> None:
        server = DesktopServer(tmp_path / "desktop.sock", env={}, test_mode=True)
        request = b'{"id":1,"op":"ui.navigate","params":{"pane":"agents"}}\n'
        assert await _blocked_write(server.serve_connection, request, order) == []

    run_on(loop_name, main)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("loop_name", LOOPS)
def test_a_host_agent_status_line_waiting_for_room_cancelled_as_room_appears_reports_no_loop_error(
    tmp_path: Path, loop_name: str, order: str
) -> None:
    async def main() -> None:
        server = HostAgentServer(tmp_path)
        assert await _blocked_write(server._serve_status, b"", order) == []

    run_on(loop_name, main)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("loop_name", LOOPS)
def test_an_agents_host_api_write_waiting_for_room_cancelled_as_room_appears_reports_no_loop_error(
    loop_name: str, order: str
) -> None:
    # The connection's write path (answers and subscription events); the host is not needed.
    async def main() -> None:
        async def write_answer(stream: anyio.abc.SocketStream) -> None:
            connection = _Connection(stream, None)  # type: ignore[arg-type]
            await connection.write(b'{"id":1,"ok":true}\n')

        assert await _blocked_write(write_answer, b"", order) == []

    run_on(loop_name, main)
