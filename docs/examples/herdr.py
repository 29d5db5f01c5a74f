"""The herdr reference server with a real shell in a PTY, driven by the async client."""

import tempfile
from pathlib import Path

import anyio

from shedproto.clients.herdr import AsyncHerdrClient
from shedproto.herdr import types as t
from shedproto.servers.herdr import HerdrServer


async def main() -> None:
    """Open a workspace, type into its shell and wait for the output."""
    with tempfile.TemporaryDirectory(prefix="sp-", dir="/tmp") as tmp:
        server = HerdrServer(Path(tmp) / "herdr.sock", shell=["/bin/sh"], cwd=tmp)
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                path = await tg.start(server.serve)
                client = AsyncHerdrClient.for_socket(path)

                status = await client.runtime_status()
                print(status.protocol)

                ws = await client.workspace_create(cwd=tmp, focus=True)
                pane = ws.root_pane.pane_id  # "w1:p1"
                await client.pane_send_text(pane, "echo hello from $HERDR_PANE_ID\r")
                done = await client.pane_wait_for_output(
                    pane,
                    "recent",
                    t.SubstringOutputMatch(value="hello from w1:p1"),
                    timeout_ms=10_000,
                )
                print(done.matched_line)
                assert "hello from w1:p1" in done.matched_line

                read = await client.pane_read(pane, "visible")
                # pane.read returns what a user of the pane sees
                assert "hello from w1:p1\n" in read.read.text

                await client.workspace_close(ws.workspace.workspace_id)
                server.shutdown()


anyio.run(main)
