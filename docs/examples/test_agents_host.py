"""Submitting a command to a running reference agents-host through its socket API."""

import pytest

from shedproto.clients.agents_host import AsyncAgentsHostClient
from shedproto.testing import make_command


@pytest.mark.anyio
async def test_a_prompt_gets_a_receipt(agents_host):
    """A valid prompt reaches the echo driver and ends in a succeeded receipt."""
    command = make_command(agents_host.owner_did, "cmd-01", payload={"text": "hello"})
    async with await AsyncAgentsHostClient.connect(agents_host.socket) as client:
        done = await client.submit(command, wait=True)
        assert done.receipt is not None
        assert done.receipt.status == "succeeded"
        assert done.receipt.commandId == "cmd-01"
    # what the echo driver was asked to do
    assert agents_host.driver.calls[-1][:2] == ("prompt", "s1")
