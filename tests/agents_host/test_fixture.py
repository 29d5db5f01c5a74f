"""The ``agents_host`` pytest fixture."""

from __future__ import annotations

from shedproto.clients.agents_host import AsyncAgentsHostClient
from shedproto.testing import RunningAgentsHost, make_command


async def test_agents_host_fixture(agents_host: RunningAgentsHost) -> None:
    async with await AsyncAgentsHostClient.connect(agents_host.socket) as client:
        result = await client.submit(make_command(agents_host.owner_did, "f1"), wait=True)
        assert result.receipt is not None
        assert result.receipt.status == "succeeded"
    assert agents_host.driver.calls == [("prompt", "s1", "prompt f1")]
