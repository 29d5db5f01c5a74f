"""roost.bootstrap: consent, one run per host at a time, the budget (pure and served)."""

from __future__ import annotations

import math
from pathlib import Path

import anyio
import pytest

from shedproto.clients.desktop import AsyncDesktopClient, DesktopError
from shedproto.desktop import (
    BOOTSTRAP_BUDGET,
    BootstrapLedger,
    DesktopCode,
    Dialect,
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
    ledger = BootstrapLedger()
    assert ledger.budget == BOOTSTRAP_BUDGET == 600.0
    ledger.begin("machine:mini", now=100.0)
    with pytest.raises(DesktopError) as info:
        ledger.begin("machine:mini", now=142.5)
    assert info.value.code == DesktopCode.ACTION_FAILED
    assert (
        info.value.message == "machine:mini: roost.bootstrap is already running (started 42 s ago)"
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
    error = ledger.over_budget("machine:mini")
    assert error.code == DesktopCode.ACTION_FAILED
    assert error.message == "machine:mini: roost.bootstrap did not finish within 600 s"


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
            assert info.value.code == "action_failed"
            assert "already running" in info.value.message
            other = await second.call("roost.bootstrap", _params("maxi"))
            assert other == {"installed": True, "ok": True, "target": "machine:maxi"}
        assert answers["first"] == {"installed": True, "ok": True, "target": "machine:mini"}
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
        assert received == (
            b'{"id":1,"ok":true,"result":{"installed":true,"ok":true,"target":"machine:mini"}}\n'
            b'{"id":2,"ok":true,"result":{"pane":"agents"}}\n'
        )


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
        assert info.value.message == "machine:mini: roost.bootstrap did not finish within 0.2 s"
        assert model.bootstraps.running == {}
        # the host is free again and the connection still answers
        model.bootstrap_seconds = 0.0
        assert (await client.call("roost.bootstrap", _params("mini")))["installed"] is True


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
