"""The ``agents_host`` and ``agents_host_postgres`` pytest fixtures."""

from __future__ import annotations

import pytest

from shedproto.clients.agents_host import AsyncAgentsHostClient
from shedproto.testing import RunningAgentsHost, ServerThread, make_command


@pytest.fixture(params=["agents_host", "agents_host_postgres"])
def any_host(request: pytest.FixtureRequest) -> RunningAgentsHost:
    host: RunningAgentsHost = request.getfixturevalue(request.param)
    return host


async def test_a_command_gets_a_receipt_from_the_fixture(any_host: RunningAgentsHost) -> None:
    async with await AsyncAgentsHostClient.connect(any_host.socket) as client:
        result = await client.submit(make_command(any_host.owner_did, "f1"), wait=True)
        assert result.receipt is not None
        assert result.receipt.status == "succeeded"
    assert any_host.driver.calls == [("prompt", "s1", "prompt f1")]


async def test_agents_host_runs_on_sqlite_and_agents_host_postgres_on_postgres(
    agents_host: RunningAgentsHost, agents_host_postgres: RunningAgentsHost
) -> None:
    from shedproto.servers.agents_host import SqliteTarget
    from shedproto.servers.agents_host.target_postgres import PostgresTarget

    assert isinstance(agents_host.run.host.target, SqliteTarget)
    assert isinstance(agents_host_postgres.run.host.target, PostgresTarget)


def test_agents_host_postgres_sync_serves_from_a_thread(
    agents_host_postgres_sync: ServerThread[RunningAgentsHost],
) -> None:
    from shedproto.clients.agents_host import BlockingAgentsHostClient

    host = agents_host_postgres_sync.server
    with BlockingAgentsHostClient.connect(host.socket) as client:
        result = client.submit(make_command(host.owner_did, "f2"), wait=True)
    assert result.receipt is not None
    assert result.receipt.status == "succeeded"
