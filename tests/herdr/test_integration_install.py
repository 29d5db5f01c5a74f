# ruff: noqa: E501 - expectations read best one a line
"""integration.install / uninstall edit claude's configuration under the server's home only.

herdr's claude integration: herdrdev/herdr src/integration/targets.rs:119-150,552-576
and actions.rs:61-73,298-323@1c76079f.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from shedproto import herdr
from shedproto.clients.herdr import AsyncHerdrClient
from shedproto.servers.herdr import HerdrServer

LIMIT = 20


async def test_install_and_uninstall_in_a_temp_home(short_socket_dir: Path) -> None:
    home = short_socket_dir / "home"
    claude = home / ".claude"
    claude.mkdir(parents=True)
    (claude / "settings.json").write_text(json.dumps({"model": "opus"}))
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            server = HerdrServer(
                short_socket_dir / "h.sock", shell=["/bin/sh"], home=str(home),
                config_dir=str(short_socket_dir / "cfg"), environ={"PATH": "/usr/bin:/bin"},
            )  # fmt: skip
            client = AsyncHerdrClient.for_socket(await tg.start(server.serve))
            hook = claude / "hooks" / "herdr-agent-state.sh"
            installed = await client.integration_install("claude")
            assert installed.details.messages == [
                f"installed claude integration hook to {hook}",
                f"ensured claude settings at {claude / 'settings.json'}",
            ]
            settings = json.loads((claude / "settings.json").read_text())
            assert settings["model"] == "opus"
            assert settings["hooks"]["SessionStart"][0]["hooks"][0]["command"] == (
                f"bash '{hook}' session"
            )
            assert hook.stat().st_mode & 0o111
            removed = await client.integration_uninstall("claude")
            assert removed.details.messages == [
                f"removed claude hook at {hook}",
                f"removed herdr claude hook entries from {claude / 'settings.json'}",
            ]
            assert json.loads((claude / "settings.json").read_text()) == {"model": "opus", "hooks": {}}
            assert not hook.exists()
            server.shutdown()


async def test_without_a_home_the_server_refuses(short_socket_dir: Path) -> None:
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            server = HerdrServer(short_socket_dir / "h.sock", shell=["/bin/sh"], config_dir=str(short_socket_dir))
            client = AsyncHerdrClient.for_socket(await tg.start(server.serve))
            with pytest.raises(herdr.HerdrApiError) as refused:
                await client.integration_install("claude")
            assert refused.value.code == "integration_install_failed"
            assert "HerdrServer(home=...)" in refused.value.message
            server.shutdown()


async def test_a_missing_claude_dir_is_herdrs_error(short_socket_dir: Path) -> None:
    home = short_socket_dir / "home"
    home.mkdir()
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            server = HerdrServer(short_socket_dir / "h.sock", shell=["/bin/sh"], home=str(home), environ={}, config_dir=str(home))
            client = AsyncHerdrClient.for_socket(await tg.start(server.serve))
            with pytest.raises(herdr.HerdrApiError) as refused:
                await client.integration_install("claude")
            assert refused.value.message == (
                f"claude directory not found at {home / '.claude'}. install claude code first"
            )
            server.shutdown()


@pytest.mark.parametrize("verb", ["install", "uninstall"])
async def test_a_claude_config_dir_outside_the_home_is_refused_and_left_alone(
    verb: str, short_socket_dir: Path
) -> None:
    # Regression (review): the server's environment's CLAUDE_CONFIG_DIR (a user's real
    # claude config) took precedence over the sandbox home, so a test edited it.
    home = short_socket_dir / "home"
    (home / ".claude").mkdir(parents=True)
    real = short_socket_dir / "real-claude"
    real.mkdir()
    (real / "settings.json").write_text('{"model": "opus"}')
    before = sorted(p.name for p in real.iterdir())
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            server = HerdrServer(
                short_socket_dir / "h.sock", shell=["/bin/sh"], home=str(home),
                config_dir=str(short_socket_dir / "cfg"), environ={"CLAUDE_CONFIG_DIR": str(real)},
            )  # fmt: skip
            client = AsyncHerdrClient.for_socket(await tg.start(server.serve))
            call = client.integration_install if verb == "install" else client.integration_uninstall
            with pytest.raises(herdr.HerdrApiError) as refused:
                await call("claude")
            assert refused.value.code == f"integration_{verb}_failed"
            assert "outside the server's home" in refused.value.message
            server.shutdown()
    assert sorted(p.name for p in real.iterdir()) == before
    assert (real / "settings.json").read_text() == '{"model": "opus"}'
