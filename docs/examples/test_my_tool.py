"""Testing your own tool against the reference servers with the pytest plugin.

Installing shedproto registers the plugin: its fixtures need no import, no conftest.
"""

import anyio
import pytest

from shedproto.clients.desktop import BlockingDesktopClient
from shedproto.clients.host_agent import AsyncApprovalConsumer, read_status_async
from shedproto.host_agent import ApprovalRequest


def run_my_tool(socket: str) -> None:
    """Stands in for the code under test: it launches a tab through shed-desktop."""
    with BlockingDesktopClient.connect(socket) as desktop:
        desktop.roost_run("codex --model x", machine="mini")


def test_my_tool_launches_codex(desktop_server_factory):  # a plain, synchronous test
    """My tool asks shed-desktop for a codex tab on the machine mini."""
    desktop = desktop_server_factory(dialect="tauri", test_mode=True)
    desktop.model.add_machine("mini")
    run_my_tool(str(desktop.path))
    assert desktop.model.launched_tabs[-1].argv == ("codex", "--model", "x")


@pytest.mark.anyio
async def test_my_approval_ui_approves(host_agent_server):  # an async test (anyio)
    """My approval UI, as the consumer, approves the agent's ssh-agent request."""
    host_agent_server.set_policy("ssh-agent", "shed-desktop")
    status = await read_status_async(host_agent_server.socket_dir)
    assert status.gate_namespaces == ("ssh-agent",)
    async with await AsyncApprovalConsumer.connect(
        host_agent_server.socket_dir, client_name="my-ui"
    ) as consumer:
        await host_agent_server.wait_for_consumer(client_name="my-ui")
        async with anyio.create_task_group() as tg:

            async def approve_one() -> None:
                while not isinstance(item := await consumer.receive(), ApprovalRequest):
                    assert item is not None, "the agent closed the channel"
                await consumer.approve(item, scope="per-request")

            tg.start_soon(approve_one)
            decision = await host_agent_server.request_approval(
                "ssh-agent", "sign", "web"
            )
    assert decision.approved
