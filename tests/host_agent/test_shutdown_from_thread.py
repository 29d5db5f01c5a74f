"""Regression: ``HostAgentServer.shutdown()`` called from plain code in another thread hung."""

from __future__ import annotations

from pathlib import Path

import pytest
from anyio.from_thread import start_blocking_portal

from shedproto.servers.host_agent import HostAgentServer


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_shutdown_from_another_thread_stops_the_server(
    backend: str, short_socket_dir: Path
) -> None:
    agent = HostAgentServer(short_socket_dir / "s")
    with start_blocking_portal(backend) as portal:
        future, _ = portal.start_task(agent.serve)
        assert agent.approval_path.exists()
        agent.shutdown()  # this thread is not the server's event loop thread
        future.result(timeout=10)
    assert not agent.approval_path.exists()
    assert not agent.status_path.exists()


def test_shutdown_after_the_loop_ended_is_a_no_op(short_socket_dir: Path) -> None:
    agent = HostAgentServer(short_socket_dir / "s")
    with start_blocking_portal() as portal:
        future, _ = portal.start_task(agent.serve)
        portal.call(agent.shutdown)
        future.result(timeout=10)
    agent.shutdown()
    assert not agent.status_path.exists()
