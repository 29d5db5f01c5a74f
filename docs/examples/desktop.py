"""The reference shed-desktop control socket (Tauri dialect) and the async client."""

import tempfile
from pathlib import Path

import anyio

from shedproto.clients.desktop import AsyncDesktopClient
from shedproto.desktop import CreateTicket, DesktopError, Dialect
from shedproto.servers.desktop import CrazeSource, DesktopModel, DesktopServer


async def main() -> None:
    """Seed the app model, launch a tab, retry a craze.create whose answer was lost."""
    model = DesktopModel()  # the app's state, seeded by you
    model.add_shed("prod", "web")
    model.add_machine("mini", craze=CrazeSource())
    with tempfile.TemporaryDirectory(prefix="sp-", dir="/tmp") as tmp:
        server = DesktopServer(
            Path(tmp) / "shed.sock",
            dialect=Dialect.TAURI,
            model=model,
            test_mode=True,
            env={},
        )
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            async with await AsyncDesktopClient.connect(path, timeout=5) as desktop:
                await desktop.identify()
                assert desktop.dialect is Dialect.TAURI

                tab = await desktop.roost_run("codex --model x", machine="mini")
                print(tab.argv)  # ['codex', '--model', 'x']: split on ASCII space
                assert tab.argv == ["codex", "--model", "x"]

                # craze.create is idempotent per ticket: a retry after a lost answer
                # reuses the request id and is replayed, never doubled.
                model.lose_craze_answers("mini", 1, applied=True)
                ticket = CreateTicket()
                try:
                    await desktop.craze_create("mini", "/src", ticket=ticket)
                except DesktopError as exc:
                    assert exc.matches("outcome_unknown")  # either dialect's spelling
                    await desktop.craze_create("mini", "/src", ticket=ticket)
            server.shutdown()
    print(model.launched_tabs[-1].argv)
    assert model.launched_tabs[-1].argv == ("codex", "--model", "x")


anyio.run(main)
