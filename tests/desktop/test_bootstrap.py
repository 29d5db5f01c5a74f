"""roost.bootstrap: consent, one run per host at a time, the budget (pure and served)."""

from __future__ import annotations

import math
from pathlib import Path

import anyio
import msgspec
import pytest

from shedproto.clients.desktop import AsyncDesktopClient, DesktopError
from shedproto.desktop import (
    BOOTSTRAP_BUDGET,
    BootstrapLedger,
    DesktopCode,
    Dialect,
    agent_hooks_reply,
    hooks_result,
    require_consent,
)
from shedproto.servers.desktop import DesktopModel

from .test_server import running


def test_consent_is_required_and_missing_means_false() -> None:
    for consent in (None, False):
        with pytest.raises(DesktopError) as info:
            require_consent("mini", consent)
        assert info.value.code == DesktopCode.CONSENT_REQUIRED
        assert info.value.message == (
            "mini: roost.bootstrap needs consent: true \u2014 nothing was changed"
        )
    require_consent("mini", True)


def test_ledger_refuses_a_second_run_of_the_same_host() -> None:
    # Refusal::AlreadyBootstrapping, its code and sentence:
    # charliek/shed desktop/tauri/src-tauri/src/roost_hosts.rs:372-378,1406-1539@0041e17
    # (Refusal::code, RoostHosts::bootstrap)
    ledger = BootstrapLedger()
    assert ledger.budget == BOOTSTRAP_BUDGET == 600.0
    ledger.begin("machine:mini", now=100.0)
    with pytest.raises(DesktopError) as info:
        ledger.begin("machine:mini", now=142.5)
    assert info.value.code == "already_bootstrapping"
    assert info.value.message == (
        "machine:mini is already being bootstrapped \u2014 nothing was changed; "
        "wait for that one to finish"
    )
    assert ledger.running == {"machine:mini": 100.0}  # unchanged by the refusal
    ledger.begin("roost:prod/web", now=142.5)  # other hosts are independent
    ledger.end("machine:mini")
    ledger.end("machine:mini")  # idempotent
    ledger.begin("machine:mini", now=200.0)  # free again


def test_ledger_budget_is_an_input() -> None:
    ledger = BootstrapLedger(budget=600)
    ledger.begin("machine:mini", now=10.0)
    assert ledger.remaining("machine:mini", now=10.0) == 600.0
    assert ledger.remaining("machine:mini", now=400.0) == 210.0
    assert ledger.remaining("machine:mini", now=1000.0) == 0.0
    assert ledger.remaining("machine:other", now=10.0) == 0.0
    # ipc.rs:1546-1555@2cd01ef (roost_bootstrap): the target as sent, the budget in whole minutes
    error = ledger.over_budget("mini")
    assert error.code == DesktopCode.ACTION_FAILED
    assert error.message == "mini: the bootstrap did not finish within 10 minutes"


def _model(seconds: float) -> DesktopModel:
    model = DesktopModel()
    model.add_machine("mini")
    model.add_machine("maxi")
    model.bootstrap_seconds = seconds
    return model


async def until_running(model: DesktopModel) -> None:
    """Wait (at most 5 s) until a served bootstrap has begun."""
    for _ in range(500):
        if model.bootstraps.running:
            return
        await anyio.sleep(0.01)
    raise AssertionError("no bootstrap started")


def installed(origin: str, name: str) -> dict[str, object]:
    """The stand-in's ``installed_json`` (roost_hosts.rs:1880-1894@0041e17): every key."""
    dest = f"/home/{name}/.local/bin/roost-session"
    return {
        "ok": True,
        "target": origin,
        "plan": {"kind": "install", "needs_source": True, "dest": dest},
        "dest": dest,
        # roost's readiness verdict (bootstrap/machines.rs:407-434@3170191, Installed)
        "verdict": "ready pid=4242",
        "session_protocol": 6,
        "session_id": f"stand-in-{origin}",
        "path_warning": None,
        "backup_warning": None,
        # hooks_json (roost_hosts.rs:1898-1911@0041e17): a host without agent config dirs skips
        # all five the raise names (test_bootstrap_hooks.py)
        "hooks": hooks_result("shed-desktop", agent_hooks_reply(present=(), announced=())),
    }


def _params(machine: str) -> dict[str, object]:
    return {"target": machine, "fingerprint": f"fp-machine:{machine}", "consent": True}


async def test_second_bootstrap_of_a_host_is_refused_while_one_runs(
    short_socket_dir: Path,
) -> None:
    model = _model(0.5)
    async with (
        running(short_socket_dir, Dialect.TAURI, model=model) as server,
        await AsyncDesktopClient.connect(server.path) as first,
        await AsyncDesktopClient.connect(server.path) as second,
    ):
        answers: dict[str, object] = {}

        async def install() -> None:
            answers["first"] = await first.call("roost.bootstrap", _params("mini"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(install)
            await until_running(model)
            with pytest.raises(DesktopError) as info:
                await second.call("roost.bootstrap", _params("mini"))
            assert info.value.code == "already_bootstrapping"
            assert "machine:mini is already being bootstrapped" in info.value.message
            other = await second.call("roost.bootstrap", _params("maxi"))
            assert other == installed("machine:maxi", "maxi")
        assert answers["first"] == installed("machine:mini", "mini")
        assert model.bootstraps.running == {}


async def test_a_long_bootstrap_holds_later_requests_on_its_connection_only(
    short_socket_dir: Path,
) -> None:
    model = _model(0.4)
    async with (
        running(short_socket_dir, Dialect.TAURI, model=model, send_timeout=0.1) as server,
        await anyio.connect_unix(server.path) as stream,
        await AsyncDesktopClient.connect(server.path) as other,
    ):
        await stream.send(
            b'{"id":1,"op":"roost.bootstrap","params":{"target":"mini",'
            b'"fingerprint":"fp-machine:mini","consent":true}}\n'
            b'{"id":2,"op":"ui.navigate","params":{"pane":"agents"}}\n'
        )
        await until_running(model)
        # another connection is answered meanwhile
        assert await other.call("ui.navigate", {"pane": "sheds"}) == {"pane": "sheds"}
        received = b""
        with anyio.fail_after(5):
            while received.count(b"\n") < 2:
                received += await stream.receive()
        # in order, and the connection survived a bootstrap longer than its send deadline
        first, second = (msgspec.json.decode(line) for line in received.splitlines())
        assert first == {"id": 1, "ok": True, "result": installed("machine:mini", "mini")}
        assert second == {"id": 2, "ok": True, "result": {"pane": "agents"}}


async def test_bootstrap_past_the_budget_is_action_failed(short_socket_dir: Path) -> None:
    model = _model(math.inf)
    model.bootstraps.budget = 0.2
    async with (
        running(short_socket_dir, Dialect.TAURI, model=model) as server,
        await AsyncDesktopClient.connect(server.path) as client,
    ):
        with pytest.raises(DesktopError) as info:
            await client.call("roost.bootstrap", _params("mini"))
        assert info.value.code == "action_failed"
        # whole minutes, as the app's as_secs() / 60 (ipc.rs:1546-1555@2cd01ef, roost_bootstrap)
        assert info.value.message == "mini: the bootstrap did not finish within 0 minutes"
        assert model.bootstraps.running == {}
        # the host is free again and the connection still answers
        model.bootstrap_seconds = 0.0
        assert await client.call("roost.bootstrap", _params("mini")) == installed(
            "machine:mini", "mini"
        )


async def test_a_call_without_deadline_is_bounded_by_the_callers_scope(
    short_socket_dir: Path,
) -> None:
    """``timeout=math.inf`` arms no scope; the caller's own deadline still ends the call."""
    model = _model(math.inf)
    async with (
        running(short_socket_dir, Dialect.TAURI, model=model) as server,
        await AsyncDesktopClient.connect(server.path, timeout=math.inf) as client,
    ):
        assert await client.call("ui.navigate", {"pane": "agents"}) == {"pane": "agents"}
        with anyio.move_on_after(0.3) as outer:
            await client.call("roost.bootstrap", _params("mini"))
        assert outer.cancelled_caught
        # the abandoned connection was dropped; the next call reconnects
        assert await client.call("ui.navigate", {"pane": "sheds"}) == {"pane": "sheds"}
