# ruff: noqa: E501 - screens and calls read best one a line
"""Agents found with no hooks: stand-ins typed into a real shell, seen from the pane alone.

Each stand-in (tests/herdr/_standin.py) is a script named like the agent and
run by an interpreter, as npm installs run node: herdr finds it from the
foreground job (herdrdev/herdr src/detect/mod.rs:225-375@1c76079f) and reads
its state from the screen by the built-in rules
(src/detect/manifests/<agent>.toml@1c76079f).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from shedproto import herdr
from shedproto.clients.herdr import AsyncHerdrClient
from shedproto.herdr import types as t
from shedproto.servers.herdr import HerdrServer

from ._agent_screens import SCREENS
from ._standin import install_standin

LIMIT = 30


@dataclass
class Rig:
    server: HerdrServer
    client: AsyncHerdrClient
    pane: str
    bin_dir: Path
    config_dir: Path


@pytest.fixture
async def rig(short_socket_dir: Path) -> AsyncIterator[Rig]:
    bin_dir, config_dir = short_socket_dir / "bin", short_socket_dir / "cfg"
    bin_dir.mkdir()
    config_dir.mkdir()
    async with anyio.create_task_group() as tg:
        server = HerdrServer(
            short_socket_dir / "h.sock",
            shell=["/bin/sh"],
            cwd=str(short_socket_dir),
            size=(80, 24),
            poll_interval=0.02,
            detect_interval=0.05,
            config_dir=str(config_dir),
            environ={"PATH": f"{bin_dir}:/usr/bin:/bin", "TERM": "xterm-256color", "PS1": "$ "},
        )
        path = await tg.start(server.serve)
        client = AsyncHerdrClient.for_socket(path)
        created = await client.workspace_create(cwd=str(short_socket_dir), focus=True)
        try:
            yield Rig(server, client, created.root_pane.pane_id, bin_dir, config_dir)
        finally:
            server.shutdown()


async def until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    """Re-check ``check`` on each server poll until it holds (the fixture's LIMIT bounds it)."""
    with anyio.move_on_after(LIMIT / 2) as scope:
        while not await check():  # noqa: ASYNC110 - the server is the event source
            await anyio.sleep(0.05)
    if scope.cancelled_caught:
        pytest.fail(f"never saw {what}")


async def agent_of(rig: Rig) -> str | None:
    return (await rig.client.pane_get(rig.pane)).pane.agent


async def status_of(rig: Rig) -> str:
    return (await rig.client.pane_get(rig.pane)).pane.agent_status


async def start_standin(rig: Rig, kind: str) -> None:
    path = install_standin(rig.bin_dir, kind)
    await rig.client.pane_send_text(rig.pane, f"{path.name}\r")

    async def seen() -> bool:
        return await agent_of(rig) == kind

    await until(seen, f"{kind} detected")


@pytest.mark.parametrize("kind", sorted(SCREENS))
async def test_each_agent_is_found_and_its_states_read_from_the_screen(
    rig: Rig, kind: str
) -> None:
    with anyio.fail_after(LIMIT):
        await start_standin(rig, kind)
        listed = await rig.client.agent_list()
        assert [(a.pane_id, a.agent) for a in listed.agents] == [(rig.pane, kind)]
        states: list[t.AgentStatus] = ["working", "blocked", "idle"]
        if SCREENS[kind]["blocked"] is None:
            states.remove("blocked")
        for state in states:
            await rig.client.pane_send_text(rig.pane, f"{state}\r")
            waited = await rig.client.agent_wait(rig.pane, until=[state], timeout_ms=10_000)
            assert waited.agent.agent_status == state
        await rig.client.pane_send_text(rig.pane, "exit\r")

        async def gone() -> bool:
            return await agent_of(rig) is None

        await until(gone, f"{kind} gone when the shell is back in front")
        assert (await rig.client.agent_list()).agents == []


async def test_detection_events_and_done_for_an_unfocused_pane(rig: Rig) -> None:
    with anyio.fail_after(LIMIT):
        other = (await rig.client.pane_split("right", target_pane_id=rig.pane)).pane
        await rig.client.pane_focus(other.pane_id)
        seen: list[tuple[str, str | None, str | None]] = []
        async with rig.client.subscribe(
            "pane.agent_detected", {"type": "pane.agent_status_changed", "pane_id": rig.pane}
        ) as stream:
            await start_standin(rig, "claude")
            await rig.client.pane_send_text(rig.pane, "working\r")
            await rig.client.agent_wait(rig.pane, until=["working"], timeout_ms=10_000)
            await rig.client.pane_send_text(rig.pane, "idle\r")
            waited = await rig.client.agent_wait(rig.pane, until=["done"], timeout_ms=10_000)
            assert waited.agent.agent_status == "done"  # idle, not yet seen: not focused
            async for event in stream:
                data = event.data
                seen.append(
                    (event.event, getattr(data, "agent", None), getattr(data, "agent_status", None))
                )
                if seen[-1][2] == "done":
                    break
        assert seen[0] == ("pane_agent_detected", "claude", None)
        assert ("pane.agent_status_changed", "claude", "working") in seen


async def test_prompt_wait_until_working_follows_the_screen(rig: Rig) -> None:
    # the copilot case: no hook, herdr sees "working" on the screen
    with anyio.fail_after(LIMIT):
        await start_standin(rig, "copilot")
        prompted = await rig.client.agent_prompt(
            rig.pane, "write the tests", wait=t.AgentPromptWaitOptions(until=["working"], timeout_ms=10_000)
        )
        assert prompted.agent.agent_status == "working"


async def test_events_wait_matches_a_detected_change(rig: Rig) -> None:
    with anyio.fail_after(LIMIT):
        await start_standin(rig, "codex")
        async with anyio.create_task_group() as tg:
            got: list[t.WaitMatchedReply] = []

            async def wait() -> None:
                got.append(
                    await rig.client.events_wait(
                        t.PaneAgentStatusChangedEventMatch(pane_id=rig.pane, agent_status="blocked"),
                        timeout_ms=10_000,
                    )
                )

            tg.start_soon(wait)
            await anyio.sleep(0.2)
            await rig.client.pane_send_text(rig.pane, "blocked\r")
        assert got
        assert got[0].event.data.agent_status == "blocked"  # type: ignore[union-attr]


async def test_hook_report_wins_over_the_screen(rig: Rig) -> None:
    with anyio.fail_after(LIMIT):
        await start_standin(rig, "claude")
        await rig.client.pane_report_agent(rig.pane, "herdr:claude", "claude", "blocked")
        await rig.client.pane_send_text(rig.pane, "working\r")
        await rig.client.pane_wait_for_output(
            rig.pane, "visible", t.SubstringOutputMatch(value="esc to interrupt"), timeout_ms=10_000
        )
        for _ in range(5):
            await anyio.sleep(0.06)  # a few detection ticks
            assert await status_of(rig) == "blocked"


async def test_user_manifest_from_the_config_dir_is_loaded_and_reloaded(rig: Rig) -> None:
    with anyio.fail_after(LIMIT):
        first = await rig.client.server_agent_manifests()
        claude = next(m for m in first.manifests if m.agent == "claude")
        assert (claude.source, claude.source_kind, claude.active_version) == (
            "bundled", "bundled", "2026.08.21.1",
        )  # fmt: skip
        target = rig.config_dir / "agent-detection" / "claude.toml"
        target.parent.mkdir()
        target.write_text(
            'id = "claude"\nversion = "7"\n[[rules]]\nid = "crunch"\nstate = "blocked"\n'
            'priority = 5000\ncontains = ["crunching"]\n'
        )
        reloaded = await rig.client.server_reload_agent_manifests()
        claude = next(m for m in reloaded.manifests if m.agent == "claude")
        assert (claude.source, claude.source_kind, claude.active_version) == (
            str(target), "local override", "7",
        )  # fmt: skip
        (rig.config_dir / "agent-detection" / "codex.toml").write_text("id = [")
        codex = next(
            m for m in (await rig.client.server_reload_agent_manifests()).manifests
            if m.agent == "codex"
        )  # fmt: skip
        assert codex.source_kind == "bundled"
        assert codex.warning is not None
        assert "could not be loaded" in codex.warning


async def test_prompt_stalled_carries_herdrs_message(rig: Rig) -> None:
    with anyio.fail_after(LIMIT):
        await start_standin(rig, "pi")
        # "idle" is typed as a command: the stand-in stays idle, nothing changes on screen
        with pytest.raises(herdr.HerdrApiError) as stalled:
            await rig.client.agent_prompt(
                rig.pane, "idle", wait=t.AgentPromptWaitOptions(until=["working"], timeout_ms=20_000)
            )
        assert stalled.value.code == "agent_prompt_stalled"
        # herdrdev/herdr src/api/wait.rs:622-630@1c76079f
        assert stalled.value.message.startswith(
            "agent prompt produced no observed state change within 5000 ms; status is idle"
            " and state_change_seq remained "
        )


async def test_a_started_agent_that_exits_leaves_with_its_name(rig: Rig) -> None:
    # herdr releases the name when the agent's process exits (src/terminal/state.rs:330-345@1c76079f)
    with anyio.fail_after(LIMIT):
        install_standin(rig.bin_dir, "claude")
        started = await rig.client.agent_start("buddy", "claude", rig.pane)
        assert started.agent.name == "buddy"

        async def seen() -> bool:
            return await agent_of(rig) == "claude" and rig.server.detectors[
                rig.server.workspaces[0].panes()[0]
            ].agent == "claude"

        await until(seen, "the started claude identified")
        await rig.client.pane_send_text(rig.pane, "exit\r")

        async def gone() -> bool:
            return (await rig.client.agent_list()).agents == []

        await until(gone, "the agent gone with its name")
        with pytest.raises(herdr.HerdrApiError) as missing:
            await rig.client.agent_get("buddy")
        assert missing.value.code == "agent_not_found"
