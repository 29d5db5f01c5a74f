"""The reference server over real sockets and real PTYs, through the clients."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from shedproto import herdr
from shedproto.clients.herdr import AsyncHerdrClient, BlockingHerdrClient
from shedproto.herdr import types as t
from shedproto.servers.herdr import MODELLED_METHODS, HerdrServer

LIMIT = 30


async def raw(path: Path, data: bytes, *, half_close: bool = False) -> bytes:
    """Send ``data`` on a fresh connection and return everything until the server closes."""
    async with await anyio.connect_unix(path) as stream:
        # the server may close while we are still sending (an over-long line)
        with contextlib.suppress(anyio.BrokenResourceError):
            await stream.send(data)
        if half_close:
            await stream.send_eof()
        out = b""
        while True:
            try:
                out += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                return out


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _zombie_or_gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ", 1)[1].startswith("Z")
    except FileNotFoundError:
        return True


async def test_end_to_end_through_the_client(short_socket_dir: Path) -> None:  # noqa: PLR0915
    with anyio.fail_after(LIMIT):
        server = HerdrServer(
            short_socket_dir / "herdr.sock",
            shell=["/bin/sh"],
            agent_commands={"claude": "cat"},
            cwd=str(short_socket_dir),
            poll_interval=0.02,
        )
        pids: list[int] = []
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            client = AsyncHerdrClient.for_socket(path)
            status = await client.runtime_status()
            assert (status.version, status.protocol, status.compatible) == ("0.9.5", 22, True)
            await client.check_version()

            # 1. a workspace with a real shell
            created = await client.workspace_create(
                cwd=str(short_socket_dir), focus=True, label="demo"
            )
            assert created.workspace.workspace_id == "w1"
            assert created.tab.tab_id == "w1:t1"
            pane = created.root_pane
            assert (pane.pane_id, pane.focused, created.workspace.label) == ("w1:p1", True, "demo")

            # 2. send text, wait for output, read it (the pane's env carries its identity)
            await client.pane_send_text(
                pane.pane_id, "echo ID=$HERDR_PANE_ID:$HERDR_WORKSPACE_ID:$HERDR_ENV\r"
            )
            matched = await client.pane_wait_for_output(
                pane.pane_id,
                "recent",
                t.SubstringOutputMatch(value="ID=w1:p1:w1:1"),
                timeout_ms=10_000,
            )
            assert matched.matched_line is not None
            assert matched.matched_line.rstrip().endswith("ID=w1:p1:w1:1")
            read = await client.pane_read(pane.pane_id, "recent", lines=20)
            assert "ID=w1:p1:w1:1" in read.read.text
            assert read.read.revision == 0

            # 3. split a pane
            split = await client.pane_split("right", target_pane_id=pane.pane_id)
            second = split.pane
            assert second.pane_id == "w1:p2"
            assert not second.focused
            layout = await client.pane_layout(pane_id=second.pane_id)
            assert [p.pane_id for p in layout.layout.panes] == ["w1:p1", "w1:p2"]
            assert layout.layout.panes[0].rect.width + layout.layout.panes[1].rect.width == 120

            # 4. start an agent kind that runs a harmless program (cat)
            started = await client.agent_start("buddy", "claude", second.pane_id)
            assert started.argv == ["claude"]
            assert started.agent.name == "buddy"
            with pytest.raises(herdr.HerdrApiError) as taken:
                await client.agent_start("buddy", "claude", pane.pane_id)
            assert taken.value.code == "agent_name_taken"
            with pytest.raises(herdr.HerdrApiError) as busy:
                await client.agent_start("other", "claude", second.pane_id)
            assert busy.value.code == "agent_pane_busy"
            await client.pane_send_text(second.pane_id, "meow\r")
            await client.pane_wait_for_output(
                second.pane_id, "recent", t.RegexOutputMatch(value=r"^meow$"), timeout_ms=10_000
            )
            await client.pane_report_agent(second.pane_id, "test", "claude", "working")
            await client.pane_report_agent(second.pane_id, "test", "claude", "idle")
            waited = await client.agent_wait("buddy", timeout_ms=5000)
            assert waited.agent.agent_status in ("idle", "done")
            agents = await client.agent_list()
            assert [a.pane_id for a in agents.agents] == ["w1:p2"]
            pids = [p.process.pid for ws in server.workspaces for p in ws.panes()]

            # 5. subscribe: lifecycle events arrive in order (history replays from the
            # ring under protocol 21's rule; protocol 22 starts at the current event)
            server.replay = herdr.replay_rule(21)
            seen: list[str] = []
            async with client.subscribe("workspace.created") as events:
                async for event in events:
                    seen.append(event.event)
                    break
            async with client.subscribe("pane.created") as events:
                async for event in events:
                    assert isinstance(event, herdr.LifecycleEvent)
                    assert isinstance(event.data, t.PaneCreatedEventData)
                    seen.append(event.data.pane.pane_id)
                    if len(seen) == 3:
                        break
            assert seen == ["workspace_created", "w1:p1", "w1:p2"]

            # 6. close everything
            await client.workspace_close("w1")
            snapshot = await client.session_snapshot()
            assert snapshot.snapshot.workspaces == []
            server.shutdown()
        assert pids
        for pid in pids:
            assert _zombie_or_gone(pid)
            assert not _group_alive(pid)


async def test_lifecycle_events_stream_in_order(herdr_server: HerdrServer) -> None:
    with anyio.fail_after(LIMIT):
        client = AsyncHerdrClient.for_socket(herdr_server.path)
        herdr_server.poll_interval = 0.01
        async with client.subscribe(
            "workspace.created", "tab.created", "pane.created", "layout.updated", "pane.closed",
            "tab.closed", "workspace.closed",
        ) as events:  # fmt: skip
            await client.workspace_create()
            await client.workspace_close("w1")
            kinds: list[str] = []
            async for event in events:
                kinds.append(event.event)
                if event.event == "workspace_closed":
                    break
        assert kinds[:4] == ["workspace_created", "tab_created", "pane_created", "layout_updated"]
        assert set(kinds[4:]) == {"pane_closed", "tab_closed", "workspace_closed"}


async def test_envelope_edge_cases_over_the_socket(short_socket_dir: Path) -> None:
    with anyio.fail_after(LIMIT):
        server = HerdrServer(short_socket_dir / "h.sock", shell=["/bin/sh"], request_timeout=0.3)
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            for line, echoed in (
                (b'{"id":"1","method":"ping"}\n', "1"),  # missing params
                (b'{"id":7,"method":"ping","params":{}}\n', ""),  # non-string id
                (b'{"id":"1","method":"no.such","params":{}}\n', "1"),  # unknown method
            ):
                reply = json.loads(await raw(path, line))
                assert reply["id"] == echoed  # the default release, 0.9.5, echoes a string id
                assert reply["error"]["code"] == "invalid_request"
            # a 2 MiB line: closed with no answer
            assert await raw(path, b'{"id":"' + b"x" * (2 << 20) + b'"}\n') == b""
            # still incomplete after the deadline: closed with no answer
            assert await raw(path, b'{"id":"1","method":"pi') == b""
            # a request without its newline, then a half-close: dropped
            assert (
                await raw(path, b'{"id":"1","method":"ping","params":{}}', half_close=True) == b""
            )
            # ping still works afterwards: nothing was lost and the server is up
            pong = json.loads(await raw(path, b'{"id":"p","method":"ping","params":{}}\r\n'))
            assert pong["result"]["type"] == "pong"
            # an app-layer failure answers herdr's code with the request id
            outside = json.loads(
                await raw(path, b'{"id":"u","method":"worktree.list","params":{"cwd":"/"}}\n')
            )
            assert outside["id"] == "u"
            assert outside["error"]["code"] == "worktree_not_found"
            server.shutdown()


async def test_default_request_timeout_is_herdrs() -> None:
    assert herdr.REQUEST_TIMEOUT == 5.0
    assert herdr.MAX_REQUEST_BYTES == 1 << 20


async def test_bytes_after_the_subscribe_line_end_the_subscription(
    herdr_server: HerdrServer,
) -> None:
    with anyio.fail_after(LIMIT):
        line = (
            b'{"id":"s","method":"events.subscribe",'
            b'"params":{"subscriptions":[{"type":"workspace.created"}]}}\n'
        )
        # pipelined bytes in the same packet: the stream ends right after the ack (or before)
        out = await raw(herdr_server.path, line + b'{"id":"2"}\n')
        assert out in (b"", b'{"id":"s","result":{"type":"subscription_started"}}\n')
        # bytes sent later end an acknowledged stream
        async with await anyio.connect_unix(herdr_server.path) as stream:
            await stream.send(line)
            ack = await stream.receive()
            assert b"subscription_started" in ack
            await stream.send(b"x")
            rest = b""
            with anyio.fail_after(5):
                while True:
                    try:
                        rest += await stream.receive()
                    except (anyio.EndOfStream, anyio.BrokenResourceError):
                        break
            assert b"error" not in rest


@pytest.mark.parametrize(("version", "expected"), [("0.9.1", "s:sub:1:probe"), ("0.9.5", "s")])
async def test_subscription_probe_errors_use_derived_ids(
    short_socket_dir: Path, version: str, expected: str
) -> None:
    """Up to 0.9.1 the probe's derived id; from 0.9.2 the request id (herdr 241063f7)."""
    herdr_server = HerdrServer(short_socket_dir / "h.sock", herdr_version=version)
    async with anyio.create_task_group() as tg:
        await tg.start(herdr_server.serve)
        await _probe_errors(herdr_server, expected)
        herdr_server.shutdown()


async def _probe_errors(herdr_server: HerdrServer, expected: str) -> None:
    with anyio.fail_after(LIMIT):
        line = (
            b'{"id":"s","method":"events.subscribe","params":{"subscriptions":['
            b'{"type":"tab.created"},{"type":"pane.agent_status_changed","pane_id":"w9:p9"}]}}\n'
        )
        reply = json.loads(await raw(herdr_server.path, line))
        assert reply["id"] == expected
        assert reply["error"]["code"] == "pane_not_found"
        unknown = json.loads(
            await raw(
                herdr_server.path,
                b'{"id":"s","method":"events.subscribe","params":{"subscriptions":[{"type":"pane.output_changed"}]}}\n',
            )
        )
        assert unknown["id"] == ("" if expected != "s" else "s")
        assert unknown["error"]["code"] == "invalid_request"


async def test_output_matched_and_status_subscriptions(herdr_server: HerdrServer) -> None:
    with anyio.fail_after(LIMIT):
        herdr_server.poll_interval = 0.02
        client = AsyncHerdrClient.for_socket(herdr_server.path)
        pane = (await client.workspace_create()).root_pane.pane_id
        async with client.subscribe(
            {"type": "pane.output_matched", "pane_id": pane, "source": "recent",
             "match": {"type": "substring", "value": "MARK-42"}},
            {"type": "pane.agent_status_changed", "pane_id": pane, "agent_status": "blocked"},
        ) as events:  # fmt: skip
            await client.pane_send_text(pane, "echo MARK-$((40+2))\r")
            got: dict[str, Any] = {}
            async for event in events:
                got[event.event] = event.data
                if event.event == "pane.output_matched":
                    await client.pane_report_agent(pane, "test", "pi", "blocked")
                if len(got) == 2:
                    break
        matched = got["pane.output_matched"]
        assert isinstance(matched, t.PaneOutputMatchedEvent)
        assert "MARK-42" in matched.matched_line
        status = got["pane.agent_status_changed"]
        assert isinstance(status, t.PaneAgentStatusChangedEvent)
        assert (status.agent_status, status.agent) == ("blocked", "pi")


async def test_events_wait_and_agent_rules(herdr_server: HerdrServer) -> None:
    with anyio.fail_after(LIMIT):
        client = AsyncHerdrClient.for_socket(herdr_server.path)
        pane = (await client.workspace_create()).root_pane.pane_id
        for name, code in (("Bad", "invalid_agent_name"), ("a" * 33, "invalid_agent_name")):
            with pytest.raises(herdr.HerdrApiError) as info:
                await client.agent_start(name, "pi", pane)
            assert info.value.code == code
        with pytest.raises(herdr.HerdrApiError) as kind:
            await client.agent_start("ok", "no-such-agent", pane)
        assert kind.value.code == "unsupported_agent_kind"
        for timeout_ms in (3000, 300_001):
            with pytest.raises(herdr.HerdrApiError) as bounds:
                await client.agent_start("ok", "pi", pane, timeout_ms=timeout_ms)
            assert bounds.value.code == "invalid_agent_timeout"
        with pytest.raises(herdr.HerdrApiError) as missing:
            await client.agent_start("ok", "pi", "w1:p9")
        assert missing.value.code == "agent_pane_not_found"
        with pytest.raises(herdr.HerdrApiError) as unsupported:
            await client.events_wait(t.PaneExitedEventMatch(pane_id=pane))
        assert unsupported.value.code == "unsupported_event_wait_match"
        with pytest.raises(herdr.HerdrApiError) as timeout:
            await client.events_wait(
                t.PaneAgentStatusChangedEventMatch(pane_id=pane, agent_status="idle"),
                timeout_ms=100,
            )
        assert timeout.value.code == "timeout"

        async def report() -> None:
            await anyio.sleep(0.1)
            await client.pane_report_agent(pane, "hook", "pi", "idle")

        async with anyio.create_task_group() as tg:
            tg.start_soon(report)
            matched = await client.events_wait(
                t.PaneAgentStatusChangedEventMatch(pane_id=pane, agent_status="idle"),
                timeout_ms=5000,
            )
        assert matched.event.event == "pane_agent_status_changed"
        with pytest.raises(herdr.HerdrApiError) as keys:
            await client.pane_send_keys(pane, ["enter", "not-a-key"])
        assert (keys.value.code, keys.value.message) == ("invalid_key", "unsupported key not-a-key")
        with pytest.raises(herdr.HerdrApiError) as nope:
            await client.agent_get("ghost")
        assert nope.value.code == "agent_not_found"


async def test_pane_exit_emits_pane_exited(herdr_server: HerdrServer) -> None:
    with anyio.fail_after(LIMIT):
        herdr_server.poll_interval = 0.01
        client = AsyncHerdrClient.for_socket(herdr_server.path)
        pane = (await client.workspace_create()).root_pane.pane_id
        async with client.subscribe("pane.exited") as events:
            await client.pane_send_text(pane, "exit\r")
            async for event in events:
                assert isinstance(event.data, t.PaneExitedEventData)
                assert event.data.pane_id == pane
                break
        with pytest.raises(herdr.HerdrApiError):
            await client.pane_get(pane)


async def test_focus_rename_and_tabs(herdr_server: HerdrServer) -> None:
    with anyio.fail_after(LIMIT):
        client = AsyncHerdrClient.for_socket(herdr_server.path)
        first = await client.workspace_create()
        second = await client.workspace_create(label="two")
        assert first.workspace.focused  # the first workspace takes focus
        assert not second.workspace.focused
        focused = await client.workspace_focus("w2")
        assert focused.workspace.focused
        tab = await client.tab_create(label="logs", focus=True)
        assert tab.tab.tab_id == "w2:t2"
        assert tab.tab.focused
        renamed = await client.tab_rename("w2:t2", "LOGS")
        assert renamed.tab.label == "LOGS"
        tabs = await client.tab_list(workspace_id="w2")
        assert [x.tab_id for x in tabs.tabs] == ["w2:t1", "w2:t2"]
        legacy = await client.tab_get("w2:2")  # legacy 1-based position
        assert legacy.tab.tab_id == "w2:t2"
        await client.tab_close("w2:t2")
        ws = await client.workspace_get("w2")
        assert ws.workspace.tab_count == 1
        renamed_ws = await client.workspace_rename("w_1", "first")  # legacy id
        assert renamed_ws.workspace.label == "first"
        with pytest.raises(herdr.HerdrApiError) as missing:
            await client.workspace_get("w9")
        assert missing.value.code == "workspace_not_found"
        panes = await client.pane_list()
        assert {p.pane_id for p in panes.panes} == {"w1:p1", "w2:p1"}
        assert "events.subscribe" in MODELLED_METHODS


async def test_blocking_client(herdr_server: HerdrServer) -> None:
    path = herdr_server.path
    herdr_server.replay = herdr.replay_rule(21)  # the subscription below replays history

    def work() -> tuple[str, list[str]]:
        client = BlockingHerdrClient.for_socket(path, timeout=10)
        pong = client.ping()
        created = client.workspace_create()
        seen: list[str] = []
        with client.subscribe("workspace.created") as events:
            for event in events:
                seen.append(event.event)
                break
        client.workspace_close(created.workspace.workspace_id)
        with pytest.raises(herdr.HerdrApiError):
            client.request("pane.get", {"pane_id": "w9:p1"})
        return pong.version, seen

    with anyio.fail_after(LIMIT):
        version, seen = await anyio.to_thread.run_sync(work)
    assert version == "0.9.5"
    assert seen == ["workspace_created"]


async def test_local_resolves_like_herdr(herdr_server: HerdrServer) -> None:
    with anyio.fail_after(LIMIT):
        client = AsyncHerdrClient.local(env={"HERDR_SOCKET_PATH": str(herdr_server.path)})
        assert client.path == str(herdr_server.path)
        result = await client.request("ping")
        assert isinstance(result, t.PongReply)


async def test_version_check_against_a_protocol20_server(short_socket_dir: Path) -> None:
    with anyio.fail_after(LIMIT):
        server = HerdrServer(
            short_socket_dir / "h.sock", protocol=20, version="0.7.9", shell=["/bin/sh"]
        )
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            client = AsyncHerdrClient.for_socket(path)
            with pytest.raises(herdr.VersionMismatchError) as info:
                await client.check_version()
            assert (info.value.ours, info.value.theirs) == (22, 20)
            ok = await client.check_version(["workspace.list", "pane.send_text"])
            assert not ok.exact
            server.shutdown()


async def test_server_stop_method(short_socket_dir: Path) -> None:
    with anyio.fail_after(LIMIT):
        server = HerdrServer(short_socket_dir / "h.sock", shell=["/bin/sh"])
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            client = AsyncHerdrClient.for_socket(path)
            await client.workspace_create()
            pid = server.workspaces[0].panes()[0].process.pid
            assert isinstance(await client.server_stop(), t.OkReply)
        assert not path.exists()
        assert _zombie_or_gone(pid)
        assert not _group_alive(pid)


async def test_agent_prompt_types_text_then_enter(short_socket_dir: Path) -> None:
    with anyio.fail_after(LIMIT):
        server = HerdrServer(
            short_socket_dir / "h.sock",
            shell=["/bin/sh"],
            agent_commands={"pi": "cat"},
            agent_settle_delay=0.0,
        )
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            client = AsyncHerdrClient.for_socket(path)
            pane = (await client.workspace_create()).root_pane.pane_id
            await client.agent_start("scout", "pi", pane)
            await until_ready(client, "scout")
            with pytest.raises(herdr.HerdrApiError) as empty:
                await client.agent_prompt("scout", "   ")
            assert empty.value.code == "empty_agent_prompt"
            prompted = await client.agent_prompt("scout", "hello agent")
            assert prompted.agent.name == "scout"
            await client.pane_wait_for_output(
                pane, "recent", t.RegexOutputMatch(value="^hello agent$"), timeout_ms=10_000
            )

            async def react() -> None:
                await anyio.sleep(0.2)
                await client.pane_report_agent(pane, "hook", "pi", "working")
                await anyio.sleep(0.1)
                await client.pane_report_agent(pane, "hook", "pi", "idle")

            tg.start_soon(react)
            waited = await client.agent_prompt(
                "scout", "second", wait=t.AgentPromptWaitOptions(timeout_ms=5000)
            )
            assert waited.agent.agent_status in ("idle", "done")
            server.shutdown()


async def test_a_wait_is_dropped_when_the_client_sends_more(herdr_server: HerdrServer) -> None:
    with anyio.fail_after(LIMIT):
        client = AsyncHerdrClient.for_socket(herdr_server.path)
        pane = (await client.workspace_create()).root_pane.pane_id
        line = json.dumps(
            {
                "id": "w",
                "method": "pane.wait_for_output",
                "params": {
                    "pane_id": pane,
                    "source": "recent",
                    "match": {"type": "substring", "value": "never-printed"},
                },
            }
        ).encode()
        assert await raw(herdr_server.path, line + b"\nx") == b""
        assert await raw(herdr_server.path, line + b"\n", half_close=True) == b""
        # the server is still fine afterwards
        assert isinstance(await client.ping(), t.PongReply)


async def test_a_request_line_sent_in_pieces_is_answered(herdr_server: HerdrServer) -> None:
    # the server reads what is there at once and waits (under the deadline) for the rest
    with anyio.fail_after(LIMIT):
        async with await anyio.connect_unix(herdr_server.path) as stream:
            await stream.send(b'{"id":"parts","method":')
            await anyio.sleep(0.05)  # ordering only: the first piece arrives alone
            await stream.send(b'"ping","params":{}}\n')
            reply = b""
            with contextlib.suppress(anyio.EndOfStream):
                while True:
                    reply += await stream.receive()
        pong = json.loads(reply)
        assert pong["id"] == "parts"
        assert pong["result"]["type"] == "pong"


async def test_an_answer_larger_than_the_socket_buffer_arrives_whole(
    herdr_server: HerdrServer,
) -> None:
    # the answer is written straight to the socket; what it does not take waits for room
    with anyio.fail_after(LIMIT):
        client = AsyncHerdrClient.for_socket(herdr_server.path)
        workspace = (await client.workspace_create()).workspace.workspace_id
        label = "x" * 900_000
        request = {
            "id": "big",
            "method": "workspace.rename",
            "params": {"workspace_id": workspace, "label": label},
        }
        reply = json.loads(await raw(herdr_server.path, json.dumps(request).encode() + b"\n"))
        assert reply["id"] == "big"
        assert reply["result"]["workspace"]["label"] == label


async def test_pane_read_formats(herdr_server: HerdrServer) -> None:
    with anyio.fail_after(LIMIT):
        client = AsyncHerdrClient.for_socket(herdr_server.path)
        pane = (await client.workspace_create()).root_pane.pane_id
        await client.pane_send_text(pane, "printf '\\033[31mRED\\033[0m\\n'\r")
        try:
            await client.pane_wait_for_output(
                pane, "recent", t.RegexOutputMatch(value="RED$"), timeout_ms=10_000
            )
        except herdr.HerdrApiError:
            screen = await client.pane_read(pane, "recent_unwrapped", format="ansi")
            pytest.fail(f"no RED line; the pane shows {screen.read.text!r}")
        ansi = await client.pane_read(pane, "recent_unwrapped", format="ansi", lines=5000)
        assert "\x1b[31mRED" in ansi.read.text
        plain = await client.pane_read(pane, "visible")
        assert "\x1b" not in plain.read.text
        assert plain.read.format == "text"


async def test_writing_to_a_pane_that_does_not_read_fails_instead_of_hanging(
    short_socket_dir: Path,
) -> None:
    with anyio.fail_after(LIMIT):
        server = HerdrServer(short_socket_dir / "h.sock", shell=["/bin/sh"], input_timeout=0.3)
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            client = AsyncHerdrClient.for_socket(path)
            pane = (await client.workspace_create()).root_pane.pane_id
            await client.pane_send_text(pane, "stty -icanon -echo; sleep 30\r")
            await anyio.sleep(0.3)
            with pytest.raises(herdr.HerdrApiError) as info:
                await client.pane_send_text(pane, "x" * (512 << 10))
            assert info.value.code == "pane_send_failed"
            assert isinstance(await client.ping(), t.PongReply)  # the server stayed responsive
            server.shutdown()


async def test_subscriptions_do_not_time_out_on_a_quiet_stream(herdr_server: HerdrServer) -> None:
    herdr_server.poll_interval = 0.01
    client = AsyncHerdrClient.for_socket(herdr_server.path, timeout=0.3)
    with anyio.fail_after(LIMIT):
        async with client.subscribe("tab.created") as events:
            await anyio.sleep(0.7)  # well beyond the client's request timeout
            await client.workspace_create()
            async for event in events:
                assert event.event == "tab_created"
                break

    def blocking() -> str:
        sync = BlockingHerdrClient.for_socket(herdr_server.path, timeout=0.3)
        with sync.subscribe("workspace.closed") as stream:
            anyio.from_thread.run(anyio.sleep, 0.7)
            sync.workspace_close("w1")
            return next(iter(stream)).event

    with anyio.fail_after(LIMIT):
        assert await anyio.to_thread.run_sync(blocking) == "workspace_closed"


async def until_ready(client: AsyncHerdrClient, name: str) -> t.AgentInfo:
    """Poll ``agent.get`` (as herdr's CLI does) until ``name`` is interactive_ready."""
    while True:
        agent = (await client.agent_get(name)).agent
        if agent.interactive_ready:
            return agent
        await anyio.sleep(0.05)


async def eventually(check: Callable[[], Awaitable[bool]]) -> None:
    """Poll ``check`` until it holds (the test's ``fail_after`` bounds it)."""
    while True:
        if await check():
            return
        await anyio.sleep(0.05)


@contextlib.asynccontextmanager
async def started_scout(
    directory: Path, settle: float
) -> AsyncIterator[tuple[AsyncHerdrClient, str, t.AgentInfo]]:
    """Serve with ``pi`` running cat; yield a client, the pane and agent ``scout`` started there."""
    server = HerdrServer(
        directory / "h.sock",
        shell=["/bin/sh"],
        agent_commands={"pi": "cat"},
        agent_settle_delay=settle,
    )
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            client = AsyncHerdrClient.for_socket(await tg.start(server.serve))
            pane = (await client.workspace_create()).root_pane.pane_id
            started = await client.agent_start("scout", "pi", pane)
            yield client, pane, started.agent
            server.shutdown()


async def test_started_agent_is_launch_pending_then_interactive_ready(
    short_socket_dir: Path,
) -> None:
    async with started_scout(short_socket_dir, settle=0.0) as (client, _, started):
        assert (started.launch_pending, started.interactive_ready) == (True, False)
        ready = await until_ready(client, "scout")
        assert (ready.launch_pending, ready.agent_status, ready.name) == (False, "idle", "scout")
        listed = (await client.agent_list()).agents
        assert [(a.name, a.interactive_ready) for a in listed] == [("scout", True)]


async def test_prompt_and_rename_wait_for_a_pending_launch(short_socket_dir: Path) -> None:
    async with started_scout(short_socket_dir, settle=600.0) as (client, _, _):
        with pytest.raises(herdr.HerdrApiError) as prompt:
            await client.agent_prompt("scout", "hello")
        assert prompt.value.code == "agent_not_ready"
        with pytest.raises(herdr.HerdrApiError) as rename:
            await client.agent_rename("scout", name="other")
        assert rename.value.code == "agent_launch_pending"


async def test_hook_reported_blocked_agent_stays_launch_pending(short_socket_dir: Path) -> None:
    async with started_scout(short_socket_dir, settle=600.0) as (client, pane, _):
        await client.pane_report_agent(pane, "hook", "pi", "blocked")
        blocked = (await client.agent_get("scout")).agent
        assert (blocked.agent_status, blocked.launch_pending) == ("blocked", True)
        assert not blocked.interactive_ready
        await client.pane_report_agent(pane, "hook", "pi", "idle")  # blocked -> idle: ready
        ready = (await client.agent_get("scout")).agent
        assert (ready.launch_pending, ready.interactive_ready) == (False, True)


async def test_another_agent_detected_releases_the_started_name(short_socket_dir: Path) -> None:
    async with started_scout(short_socket_dir, settle=600.0) as (client, pane, _):
        await client.pane_report_agent(pane, "hook", "codex", "idle")
        with pytest.raises(herdr.HerdrApiError) as gone:
            await client.agent_get("scout")
        assert gone.value.code == "agent_not_found"
        by_pane = (await client.agent_get(pane)).agent
        assert (by_pane.agent, by_pane.name, by_pane.launch_pending) == ("codex", None, False)


async def test_started_program_exiting_while_pending_releases_the_agent(
    short_socket_dir: Path,
) -> None:
    async with started_scout(short_socket_dir, settle=600.0) as (client, pane, _):

        async def seen() -> bool:  # the program holds the terminal: seen, idle, pending
            return (await client.agent_get("scout")).agent.agent_status == "idle"

        async def released() -> bool:
            return not (await client.agent_list()).agents

        await eventually(seen)
        await client.pane_send_text(pane, "\x04")  # EOF: cat exits, the shell returns
        await eventually(released)
        with pytest.raises(herdr.HerdrApiError) as gone:
            await client.agent_get("scout")
        assert gone.value.code == "agent_not_found"
        again = await client.agent_start("scout", "pi", pane)  # the name is free again
        assert again.agent.name == "scout"
