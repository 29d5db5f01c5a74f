"""The reference shed-host-agent, its status socket and an approval consumer."""

import tempfile
from pathlib import Path

import anyio

from shedproto.clients.host_agent import AsyncApprovalConsumer, read_status_async
from shedproto.host_agent import ApprovalRequest
from shedproto.servers.host_agent import HostAgentServer


async def main() -> None:
    """Read status, answer one approval, then see a request fail closed."""
    with tempfile.TemporaryDirectory(prefix="sp-", dir="/tmp") as tmp:
        socket_dir = Path(tmp) / "host-agent"
        async with anyio.create_task_group() as tg:
            agent = await tg.start(HostAgentServer(socket_dir).serve)
            agent.set_policy("ssh-agent", "shed-desktop")  # ask the consumer

            status = await read_status_async(socket_dir)
            print(status.gate_namespaces)  # ('ssh-agent',)
            assert status.gate_namespaces == ("ssh-agent",)

            consumer = await AsyncApprovalConsumer.connect(
                socket_dir, client_name="my-app"
            )
            await agent.wait_for_consumer(client_name="my-app")

            async def answer() -> None:
                async for item in consumer:  # pings are answered for you
                    if isinstance(item, ApprovalRequest):
                        await consumer.approve(item, scope="per-session", ttl="1h")

            tg.start_soon(answer)
            decision = await agent.request_approval("ssh-agent", "sign", "web")
            print(decision.approved, decision.decided_by)  # True user
            assert decision.approved

            await consumer.aclose()  # no consumer: later requests fail closed at once
            closed = await agent.request_approval("ssh-agent", "sign", "web")
            assert not closed.approved
            agent.shutdown()  # both socket files removed
        assert not agent.status_path.exists()


anyio.run(main)
