"""The reference server over real sockets, both dialects, with both clients."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

from shedproto.clients.desktop import AsyncDesktopClient, BlockingDesktopClient, DesktopError
from shedproto.desktop import CreateTicket, Dialect, LaunchPolicy
from shedproto.desktop import types as o
from shedproto.servers.desktop import CrazeSource, DesktopModel, DesktopServer
from shedproto.testing._desktop import DesktopServerFactory, RunningDesktopServer

TIMEOUT = 10


def kept_id(ticket: CreateTicket) -> str | None:
    return ticket.request_id


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@asynccontextmanager
async def running(
    socket_dir: Path,
    dialect: Dialect = Dialect.TAURI,
    *,
    test_mode: bool = True,
    model: DesktopModel | None = None,
    **kw: object,
) -> AsyncIterator[DesktopServer]:
    server = DesktopServer(
        socket_dir / f"{dialect.value}.sock",
        dialect=dialect,
        model=model,
        test_mode=test_mode,
        env={},
        **kw,  # type: ignore[arg-type]
    )
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            await tg.start(server.serve)
            try:
                yield server
            finally:
                server.shutdown()


async def raw_exchange(path: Path, data: bytes, *, read_until_eof: bool = False) -> bytes:
    async with await anyio.connect_unix(path) as stream:
        await stream.send(data)
        if not read_until_eof:
            await stream.send_eof()
        out = bytearray()
        while True:
            try:
                out += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                return bytes(out)


async def test_identify_reports_dialect_and_test_mode(short_socket_dir: Path) -> None:
    for dialect in Dialect:
        async with (
            running(short_socket_dir, dialect, mock_base_url="http://127.0.0.1:9") as server,
            await AsyncDesktopClient.connect(server.path) as client,
        ):
            info = await client.identify()
            assert client.dialect is dialect
            assert info.test_mode is True
            assert info.mock_base_url == "http://127.0.0.1:9"
            assert info.socket_path == str(server.path)


async def test_mac_identify_omits_unset_mock_url_tauri_sends_null(short_socket_dir: Path) -> None:
    line = b'{"id":"1","op":"identify"}\n'
    async with running(short_socket_dir, Dialect.MAC, test_mode=False) as server:
        mac = await raw_exchange(server.path, line)
    async with running(short_socket_dir, Dialect.TAURI, test_mode=False) as server:
        tauri = await raw_exchange(server.path, line)
    assert b"mock_base_url" not in mac
    assert b'"protocol_version":1' in mac
    assert b'"mock_base_url":null' in tauri
    assert b'"platform":"tauri"' in tauri


def test_model_refuses_unknown_failure_kind() -> None:
    with pytest.raises(ValueError, match="agent_upgrade_required"):
        DesktopModel().make_host_unreachable("lab", kind="bogus")


async def test_test_mode_from_environment(short_socket_dir: Path) -> None:
    server = DesktopServer(
        short_socket_dir / "a.sock", dialect="tauri", env={"SHED_TAURI_TEST_MODE": "1"}
    )
    assert server.test_mode is True
    server = DesktopServer(
        short_socket_dir / "b.sock", dialect="mac", env={"SHED_TAURI_TEST_MODE": "1"}
    )
    assert server.test_mode is False
    server = DesktopServer(
        short_socket_dir / "c.sock", dialect="mac", env={"SHED_DESKTOP_TEST_MODE": "1"}
    )
    assert server.test_mode is True
    swift = DesktopServer(
        short_socket_dir / "d.sock", dialect="mac", env={"SHED_DESKTOP_RUST_CORE": "0"}
    )
    assert swift.model.core == "swift"


async def test_pipelined_requests_answered_in_order(short_socket_dir: Path) -> None:
    lines = b"".join(
        b'{"id":"%d","op":"ui.navigate","params":{"pane":"%s"}}\n' % (i, pane)
        for i, pane in enumerate([b"sheds", b"bogus", b"machines", b"agents"] * 5, start=1)
    )
    async with running(short_socket_dir) as server:
        out = await raw_exchange(
            server.path, lines + b"{bad json\n" + b'{"id":"last","op":"ui.current_pane"}'
        )
    replies = out.splitlines()
    assert len(replies) == 22
    for i, reply in enumerate(replies[:20], start=1):
        assert f'"id":"{i}"'.encode() in reply
    assert b'"code":"bad_request"' in replies[1]
    assert replies[20].startswith(b'{"error":{"code":"bad_request"')
    assert replies[21] == b'{"id":"last","ok":true,"result":{"pane":"agents"}}'


async def test_hosts_failures_and_dashboard(short_socket_dir: Path) -> None:
    model = DesktopModel()
    model.add_shed("prod", "web")
    model.add_shed("lab", "gpu")
    model.make_host_unreachable(
        "lab", kind="agent_upgrade_required", summary="update shed-agent on lab", detail="HTTP 426"
    )
    async with (
        running(short_socket_dir, model=model) as server,
        await AsyncDesktopClient.connect(server.path) as client,
    ):
        sheds = await client.call("sheds.list", {"host": "ignored-on-tauri"})
        assert [s["name"] for s in sheds["sheds"]] == ["web"]
        assert sheds["host_errors"] == [
            {
                "server": "lab",
                "kind": "agent_upgrade_required",
                "summary": "update shed-agent on lab",
                "detail": "HTTP 426",
            }
        ]
        dump = await client.dashboard_dump()
        assert [r["name"] for r in dump.rows] == ["web"]
        assert dump.empty is None
        model.hosts["prod"].sheds.clear()
        dump = await client.dashboard_dump()
        assert isinstance(dump.empty, o.DashboardEmpty)
        assert "lab" in dump.empty.body
        assert "No sheds yet" not in dump.empty.title
    async with (
        running(short_socket_dir, Dialect.MAC, model=model) as server,
        await AsyncDesktopClient.connect(server.path) as client,
    ):
        hosts = (await client.call("host.list"))["hosts"]
        lab = next(h for h in hosts if h["name"] == "lab")
        assert lab["reachable"] is False
        assert lab["failure"]["kind"] == "agent_upgrade_required"
        assert "failure" not in next(h for h in hosts if h["name"] == "prod")


async def test_machines_unreachable_is_a_state(short_socket_dir: Path) -> None:
    model = DesktopModel()
    model.add_machine("mini", craze=CrazeSource())
    model.make_machine_unreachable("mini", "ssh: connect to host mini port 22: No route to host")
    model.add_roost_session("machine:mini", "4", "opencode")
    model.add_roost_session("machine:mini2", "4", "opencode")
    async with (
        running(short_socket_dir, model=model) as server,
        await AsyncDesktopClient.connect(server.path) as client,
    ):
        machines = {m.name: m for m in (await client.machines_list()).machines}
        assert machines["mini"].reachable is False
        assert machines["mini"].detail == "ssh: connect to host mini port 22: No route to host"
        listing = await client.rc_list()
        assert isinstance(listing, o.TauriRcList)  # the Tauri app's roost rows
        rows = listing.sessions
        assert {r["origin"] for r in rows} == {"machine:mini", "machine:mini2"}
        assert all(r["shed"] == "" for r in rows)
        # one roost_capabilities per status row (ipc.rs:163-172@2cd01ef, rc_list_payload):
        # mini2 is no configured machine, so it has rows but no status row; the implicit
        # localhost has none before its session answers (roost_hosts.rs:2043-2045@9668981)
        assert set(listing.capabilities) == {"machine:mini"}
        with pytest.raises(DesktopError) as info:
            await client.roost_launch("claude-rc", machine="mini")
        assert info.value.code == "action_failed"
        assert "No route to host" in info.value.message


async def test_launch_rules_over_the_wire(short_socket_dir: Path) -> None:
    model = DesktopModel()
    model.add_shed("prod", "web")
    model.add_machine("mini")
    async with (
        running(short_socket_dir, model=model) as server,
        await AsyncDesktopClient.connect(server.path) as client,
    ):
        row = await client.roost_launch(
            "opencode", target="roost:prod/web", workdir="  ", display_name="T"
        )
        assert row.origin == "roost:prod/web"
        assert row.shed == "web"
        assert row.workdir == ""  # blank is absent: roost is sent no cwd (the stand-in's "")
        assert model.launched_tabs[-1].cwd is None
        cases: list[tuple[dict[str, Any], str | None, str]] = [
            ({"machine": "mini"}, "bad_request", "missing or invalid 'kind'"),
            ({"machine": "mini", "kind": "vim"}, "bad_request", "unknown rc kind 'vim'"),
            ({"kind": "opencode"}, "bad_request", "missing 'machine'"),
            ({"target": "roost:prod", "kind": "opencode"}, "action_failed", "names no server"),
            # RoostHosts::ssh_entry (roost_hosts.rs:1608-1642@0041e17)
            (
                {"target": "nowhere", "kind": "opencode"},
                "action_failed",
                'no machine "nowhere" in ~/.shed/config.yaml',
            ),
            (
                {"target": 7, "machine": "mini", "kind": "opencode", "initial_prompt": ["x"]},
                None,
                "",
            ),
        ]
        for params, code, fragment in cases:
            if code is None:
                result = await client.call("roost.launch", params)
                assert result["origin"] == "machine:mini"
                continue
            with pytest.raises(DesktopError) as info:
                await client.call("roost.launch", params)
            assert info.value.code == code
            assert fragment in info.value.message
        run = await client.roost_run("say 'a b'\tc", machine="mini", workdir=" /w ")
        assert run.argv == ["say", "'a", "b'", "c"]
        assert run.cwd == "/w"
        assert run.origin == "machine:mini"
        assert run.machine == "mini"
        for command in ("", "  \t \n"):
            with pytest.raises(DesktopError) as info:
                await client.roost_run(command, machine="mini")
            assert info.value.code == "bad_request"
        with pytest.raises(DesktopError, match="missing 'command'"):
            await client.call("roost.run", {"machine": "mini", "command": ["codex"]})


async def test_refuse_extras_policy_server(short_socket_dir: Path) -> None:
    model = DesktopModel()
    model.add_machine("mini")
    async with (
        running(short_socket_dir, model=model, launch_policy=LaunchPolicy.REFUSE_EXTRAS) as server,
        await AsyncDesktopClient.connect(server.path) as client,
    ):
        with pytest.raises(DesktopError, match="initial_prompt is not supported"):
            await client.call(
                "roost.launch", {"machine": "mini", "kind": "claude-rc", "initial_prompt": "go"}
            )
        assert model.launched_tabs == []
        row = await client.roost_launch("claude-rc", machine="mini", display_name="  named ")
        assert row.display_name == "named"  # ipc.md's text: the tab is named after it


async def test_craze_idempotency_over_the_wire(short_socket_dir: Path) -> None:
    clock = FakeClock()
    model = DesktopModel(clock=clock)
    model.add_machine("mini", craze=CrazeSource())
    async with (
        running(short_socket_dir, model=model) as server,
        await AsyncDesktopClient.connect(server.path) as client,
    ):
        base = {"machine": "mini", "cwd": "/src"}
        first = await client.call("craze.create", {**base, "request_id": "r-1"})
        again = await client.call("craze.create", {**base, "request_id": "r-1"})
        assert again["host_id"] == first["host_id"]
        assert again["request_id"] == "r-1"
        assert len([s for s in model.sessions if s.source == "craze"]) == 1
        # a failure is replayed too
        model.refuse_next_craze_create("mini", "failed", "provider exited: 1")
        for _ in range(2):
            with pytest.raises(DesktopError) as info:
                await client.call("craze.create", {**base, "request_id": "r-2"})
            assert (info.value.code, info.value.message) == ("failed", "provider exited: 1")
        # the same id with other params is refused, not replayed
        with pytest.raises(DesktopError) as info:
            await client.call("craze.create", {**base, "cwd": "/other", "request_id": "r-1"})
        assert info.value.code == "bad_request"
        # after the window a still-running session is still the answer ...
        clock.now += 601
        kept = await client.call("craze.create", {**base, "request_id": "r-1"})
        assert kept["host_id"] == first["host_id"]
        # ... a replay inside the window says when its session has ended ...
        model.end_craze_session(first["host_id"])
        replay = await client.call("craze.create", {**base, "request_id": "r-1"})
        assert replay["host_id"] == first["host_id"]
        assert replay["ended"] is True
        # ... and once the window passes with the session gone, a new one starts
        clock.now += 601
        later = await client.call("craze.create", {**base, "request_id": "r-1"})
        assert later["host_id"] != first["host_id"]
        assert later["ended"] is False
        # minted when absent
        minted = await client.call("craze.create", base)
        assert minted["request_id"].startswith("shed-")
        # strict types and cwd rules
        for bad in (
            {"cwd": "rel"},
            {"request_id": 7},
            {"request_id": "no spaces!"},
            {"prompt": 3},
        ):
            with pytest.raises(DesktopError) as info:
                await client.call("craze.create", {**base, **bad})
            assert info.value.code == "bad_request"


async def test_outcome_unknown_keeps_id_and_held_retry_replays(short_socket_dir: Path) -> None:
    from shedproto.desktop import TicketState

    model = DesktopModel()
    model.add_machine("mini", craze=CrazeSource())
    async with (
        running(short_socket_dir, model=model) as server,
        await AsyncDesktopClient.connect(server.path) as client,
    ):
        model.lose_craze_answers("mini", 2, applied=True)  # the hub created, both answers lost
        ticket = CreateTicket()
        with pytest.raises(DesktopError) as info:
            await client.craze_create("mini", "/src", ticket=ticket)
        assert info.value.code == "outcome_unknown"
        assert ticket.state is TicketState.UNKNOWN
        kept = ticket.request_id
        assert kept is not None
        # a held retry whose preflight now fails is outcome_unknown again, id kept
        source = model.machines["mini"].craze
        assert source is not None
        source.installed = False
        with pytest.raises(DesktopError) as info:
            await client.craze_create("mini", "/src", ticket=ticket)
        assert info.value.code == "outcome_unknown"
        assert kept_id(ticket) == kept
        source.installed = True
        result = await client.craze_create("mini", "/src", ticket=ticket)
        assert result.request_id == kept
        assert kept_id(ticket) is None
        assert len([s for s in model.sessions if s.source == "craze"]) == 1  # never a second
        # lost before craze acted; a held retry answered "unavailable" stays unknown
        model.lose_craze_answers("mini", 2, applied=False)
        second = CreateTicket()
        with pytest.raises(DesktopError) as info:
            await client.craze_create("mini", "/b", ticket=second)
        assert info.value.code == "outcome_unknown"
        model.refuse_next_craze_create("mini", "unavailable", "host_unreachable")
        with pytest.raises(DesktopError) as info:
            await client.craze_create("mini", "/b", ticket=second)
        assert info.value.code == "outcome_unknown"
        kept_second = kept_id(second)
        assert kept_second is not None
        created = await client.craze_create("mini", "/b", ticket=second)
        assert created.request_id == kept_second
        # a lost-once answer is retried under the same id and succeeds
        model.lose_craze_answers("mini", 1, applied=False)
        fresh = await client.craze_create("mini", "/other")
        assert fresh.host_id != result.host_id


async def test_craze_host_gates(short_socket_dir: Path) -> None:
    model = DesktopModel()
    model.add_machine("plain")
    model.add_machine("old", craze=CrazeSource(too_old=True))
    model.add_machine("none", craze=CrazeSource(installed=False, cause="not on PATH"))
    async with (
        running(short_socket_dir, model=model) as server,
        await AsyncDesktopClient.connect(server.path) as client,
    ):
        for machine, code in (
            ("ghost", "bad_request"),
            ("plain", "no_craze"),
            ("old", "too_old"),
            ("none", "not_installed"),
        ):
            with pytest.raises(DesktopError) as info:
                await client.call("craze.create", {"machine": machine, "cwd": "/"})
            assert info.value.code == code


async def test_approvals_and_policy(short_socket_dir: Path) -> None:
    model = DesktopModel()
    model.add_approval("a1", "prod", "web")
    model.add_approval("a2", "prod", "api")
    async with (
        running(short_socket_dir, Dialect.MAC, model=model, test_mode=False) as server,
        await AsyncDesktopClient.connect(server.path) as client,
    ):
        assert len((await client.call("approvals.list"))["approvals"]) == 2
        await client.approval_decide("a1", "approve", scope="per-shed", ttl="1h", persist=True)
        assert model.decisions[-1] == {
            "id": "a1",
            "decision": "approve",
            "scope": "per-shed",
            "ttl": "1h",
            "persist": True,
        }
        # after the three built-in namespace rules (coordinator.rs:836-870,893-900@5a762e8)
        assert (await client.call("policy.list"))["rules"][3:] == [
            {"scope": "shed", "server": "prod", "shed": "web", "action": "approve", "gate": "none"}
        ]
        with pytest.raises(DesktopError) as info:
            await client.call("approval.decide", {"id": "a2", "decision": "maybe"})
        assert info.value.code == "invalid-param"
        with pytest.raises(DesktopError) as info:
            await client.call("policy.set", {"rules": []})
        assert info.value.matches("not_enabled")
        with pytest.raises(DesktopError) as info:
            await client.call("approval.decide", {"id": "a2", "decision": "deny", "extra": 1})
        assert info.value.code == "unknown-field"


async def test_every_catalogue_op_answers_its_shape(short_socket_dir: Path) -> None:
    """Minimal valid params for each op: the answer converts into the op's result Struct."""
    import msgspec

    from shedproto.desktop import CATALOGUE, DesktopCode, Release, release_has_op

    model = DesktopModel()
    model.add_shed("prod", "web")
    model.add_machine("mini", craze=CrazeSource())
    lane = {"machine": "mini", "kind": "craze", "session_id": "000000000001"}
    values = {
        "pane": "sheds",
        "name": "web",
        "create_id": "create-1",
        "shed": "web",
        "slug": "1",
        "machine": "mini",
        "kind": "claude",
        "command": "echo hi",
        "target": "mini",
        "fingerprint": "fp-machine:mini",
        "cwd": "/",
        "session_id": "000000000001",
        "text": "hi",
        "approval_id": "x",
        "answer": {"choice": 1},
        "change": {"kind": "mode", "id": "x"},
        "id": "n1",
        "decision": "approve",
        "action": "approve",
        "rules": [],
        "mode": "dark",
        "enabled": True,
        "preset": "ghostty",
        "namespace": "aws-credentials",
        "server": "prod",
        "open": True,
        "row": "model",
        "value": "x",
        "hold": True,
    }
    refusals: dict[Dialect, set[str]] = {Dialect.MAC: set(), Dialect.TAURI: set()}
    codes: set[str] = set()
    for dialect in Dialect:
        async with (
            running(short_socket_dir, dialect, model=model) as server,
            await AsyncDesktopClient.connect(server.path) as client,
        ):
            await client.call(
                "craze.create", {"machine": "mini", "cwd": "/"}
            ) if dialect is Dialect.TAURI else None
            for name, spec in CATALOGUE.items():
                shape = spec.shape(dialect)
                if shape is None or not release_has_op(Release.LATEST, dialect, name):
                    continue  # rc.classify is v0.0.14's (test_fidelity.py covers it)
                if "web" not in model.hosts["prod"].sheds:
                    model.add_shed("prod", "web")
                fields = msgspec.structs.fields(shape.params)
                params = {f.encode_name: values[f.encode_name] for f in fields if f.required}
                if name == "ui.navigate":
                    params["pane"] = "sheds"
                if name in ("ui.set_appearance",):
                    params["mode"] = "dark"
                if name == "broker.set_mode":
                    params["mode"] = "embedded"
                if name == "lane.send":
                    params["mode"] = "queue"
                if name.startswith(("lane.", "ui.show_lane")) and "kind" in params:
                    params.update(lane)
                    if name.startswith("lane.") and name != "lane.close":
                        # every lane op but open and close needs an open lane
                        # (lane.rs:1303-1324@9a84ddf open_entry); lane.close in the walk
                        # closes it
                        await client.call("lane.open", lane)
                if name == "machine.add":
                    params["name"] = "added"
                if name == "rc.inject_test":  # read after the host (ipc.rs:1882-1910@2cd01ef)
                    params["slug"] = "1"
                if name == "rc.launch":  # read after the host (ipc.rs:1828-1843@2cd01ef)
                    params["kind"] = "claude-rc"
                try:
                    result = await client.call(name, params)
                except DesktopError as exc:
                    # documented refusals given the minimal model are fine, crashes are not
                    assert "reference server bug" not in exc.message, (name, exc)
                    refusals[dialect].add(name)
                    codes.add(exc.code)
                    continue
                msgspec.convert(result, shape.result)
                if name == "create.start":  # the mac id is a UUID (AppModel.swift:861@5a762e8)
                    values["create_id"] = result["create_id"]
    # the refusals minimal params earn, each a documented answer (not a crash)
    assert refusals[Dialect.MAC] == {"approval.decide", "notification.invoke", "terminal.open"}
    assert refusals[Dialect.TAURI] == {  # unknown approval id: ok (coordinator.rs:528@5a762e8)
        "craze.create",
        "egress.show",  # frontend_not_ready off the Egress pane (ipc.rs:848@2cd01ef)
        "lane.answer",
        "lane.set",
        "machine.kill",
        "machine.launch",
        "notification.invoke",
        "roost.bootstrap",
        "roost.launch",
        "roost.run",
        "terminal.open",
        "updater.check",
    }
    assert codes <= {c.value for c in DesktopCode}


def test_blocking_client_against_threaded_server(short_socket_dir: Path) -> None:
    from shedproto.testing import running_desktop_server

    with running_desktop_server(
        short_socket_dir / "t.sock", dialect="mac", test_mode=True
    ) as handle:
        handle.model.add_shed("prod", "web")
        with BlockingDesktopClient.connect(handle.path, timeout=5) as client:
            with pytest.raises(DesktopError) as info_err:
                client.call("no.such")
            assert info_err.value.code == "unknown-op"
            assert client.dialect is Dialect.MAC  # told by the code's spelling
            info = client.identify()
            assert info.test_mode is True
            # mac rows: host (not server), nil optionals omitted
            assert client.call("sheds.list")["sheds"] == [
                {"host": "prod", "name": "web", "status": "running", "active_namespaces": []}
            ]
            assert os.path.exists(handle.path)
    assert not os.path.exists(handle.path)


def test_fixture_seeds_and_inspects(desktop_server_factory: DesktopServerFactory) -> None:
    factory = desktop_server_factory
    handle = factory(dialect="tauri")
    handle.model.add_machine("mini")
    with BlockingDesktopClient.connect(handle.path, timeout=5) as client:
        run = client.roost_run("htop", machine="mini")
        assert client.call("identify")["platform"] == "tauri"
    assert handle.model.launched_tabs[-1].argv == ("htop",)
    assert run.slug == handle.model.launched_tabs[-1].tab_id
    mac = factory(dialect="mac", test_mode=False)
    with (
        BlockingDesktopClient.connect(mac.path, timeout=5) as client,
        pytest.raises(DesktopError) as info,
    ):
        client.call("policy.set", {"rules": []})
    assert info.value.message == "policy.set requires SHED_DESKTOP_TEST_MODE=1"


def test_default_fixture_is_tauri_in_test_mode(desktop_server: RunningDesktopServer) -> None:
    with BlockingDesktopClient.connect(desktop_server.path, timeout=5) as client:
        info = client.identify()
    assert client.dialect is Dialect.TAURI
    assert info.test_mode is True
    assert desktop_server.dialect is Dialect.TAURI


async def test_async_client_times_out_then_reconnects(short_socket_dir: Path) -> None:
    from shedproto.servers import UnixServer

    accepted: list[object] = []

    async def silent(stream: anyio.abc.SocketStream) -> None:
        accepted.append(stream)
        with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
            while True:
                await stream.receive()

    server = UnixServer(short_socket_dir / "silent.sock", silent, grace=0.1)
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            client = await AsyncDesktopClient.connect(path, timeout=0.2)
            with pytest.raises(TimeoutError):
                await client.call("identify")
            with pytest.raises(TimeoutError):
                await client.call("identify")  # reconnected, silent again
            await client.aclose()
            server.shutdown()
    assert len(accepted) == 2


def test_blocking_client_times_out_then_reconnects(short_socket_dir: Path) -> None:
    import socket
    import threading

    path = short_socket_dir / "silent-b.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen()
    listener.settimeout(5)
    held: list[socket.socket] = []

    def accept_two() -> None:
        for _ in range(2):
            conn, _ = listener.accept()
            held.append(conn)

    thread = threading.Thread(target=accept_two)
    thread.start()
    try:
        with BlockingDesktopClient.connect(path, timeout=0.2) as client:
            for _ in range(2):
                with pytest.raises(TimeoutError):
                    client.call("identify")
        thread.join(5)
        assert len(held) == 2
    finally:
        for conn in held:
            conn.close()
        listener.close()


async def test_ui_truth_dumps_are_settable(short_socket_dir: Path) -> None:
    model = DesktopModel()
    model.set_dump("toast.dump", {"text": "craze did not take the prompt"})
    model.set_dump(
        "dashboard.dump",
        {"rows": [], "host_errors": [], "empty": {"title": "No sheds yet", "body": "b"}},
    )
    async with (
        running(short_socket_dir, model=model) as server,
        await AsyncDesktopClient.connect(server.path) as client,
    ):
        assert await client.call("toast.dump") == {
            "toast": {"text": "craze did not take the prompt"}
        }
        assert await client.call("lane.dump") == {"lane": None}
        dump = await client.dashboard_dump()
        assert isinstance(dump.empty, o.DashboardEmpty)
        assert dump.empty.title == "No sheds yet"
        await client.call("ui.show_launch")
        await client.call("ui.fill_launch", {"mode": "command", "target": "machine:localhost"})
        launch = (await client.call("launch.dump"))["launch"]
        assert (launch["mode"], launch["target"]) == ("command", "machine:localhost")
        with pytest.raises(DesktopError) as info:
            await client.call("ui.fill_launch", {"mode": 3})
        assert info.value.message == "'mode' must be a string"
