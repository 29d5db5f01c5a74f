"""A client pointed at a server of another protocol says so, once, in one line (issue 11, item 8).

Each client meets a reference server of a different protocol: its first reply
is no frame of the client's protocol (or the connection closes without one),
so it raises ``UnreachableSocketError`` with reason ``other-protocol``. A reply
that is the protocol's own error keeps its typed error.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from shedproto.clients import ConnectReason, UnreachableSocketError
from shedproto.clients.cli import main
from shedproto.clients.desktop import AsyncDesktopClient, BlockingDesktopClient, DesktopError
from shedproto.clients.herdr import AsyncHerdrClient, BlockingHerdrClient
from shedproto.clients.host_agent import (
    AsyncApprovalConsumer,
    BlockingApprovalConsumer,
    read_status,
    read_status_async,
)
from shedproto.herdr import ErrorResponse, RawRequest
from shedproto.servers.desktop import DesktopServer
from shedproto.servers.herdr import HerdrServer
from shedproto.servers.host_agent import HostAgentServer
from shedproto.testing import RunningDesktopServer


def assert_other_protocol(error: UnreachableSocketError, path: str | os.PathLike[str]) -> None:
    assert error.reason is ConnectReason.OTHER_PROTOCOL
    message = str(error)
    assert message.startswith(f"cannot talk to {path}: the server there speaks another protocol")
    assert "\n" not in message
    assert message.count(os.fspath(path)) == 1


async def raises_other_protocol(
    path: str | os.PathLike[str], call: Callable[[], Any], *, blocking: bool = False
) -> None:
    run = (lambda: anyio.to_thread.run_sync(call)) if blocking else call
    with pytest.raises(UnreachableSocketError) as info:
        await run()
    assert_other_protocol(info.value, path)


@asynccontextmanager
async def silent_desktop_server(path: Path) -> AsyncIterator[DesktopServer]:
    """A desktop server that closes a connection silent for a tenth of a second."""
    async with anyio.create_task_group() as tg:
        server = DesktopServer(path, env={}, test_mode=True, idle_timeout=0.1, grace=0.1)
        await tg.start(server.serve)
        try:
            yield server
        finally:
            server.shutdown()


async def test_desktop_clients_name_a_herdr_server_as_another_protocol(
    herdr_server: HerdrServer,
) -> None:
    path = herdr_server.path

    async def identify() -> None:
        async with await AsyncDesktopClient.connect(path, timeout=5) as client:
            await client.call("identify")

    def identify_blocking() -> None:
        with BlockingDesktopClient.connect(path, timeout=5) as client:
            client.call("identify")

    await raises_other_protocol(path, identify)
    await raises_other_protocol(path, identify_blocking, blocking=True)


async def test_herdr_clients_name_a_status_socket_as_another_protocol(
    host_agent_server: HostAgentServer,
) -> None:
    path = host_agent_server.status_path
    client = AsyncHerdrClient.for_socket(path)
    blocking = BlockingHerdrClient.for_socket(path)

    async def subscribe() -> None:
        async with client.subscribe("workspace.created"):
            pass

    def subscribe_blocking() -> None:
        with blocking.subscribe("workspace.created"):
            pass

    await raises_other_protocol(path, lambda: client.request("ping"))
    await raises_other_protocol(path, lambda: blocking.request("ping"), blocking=True)
    await raises_other_protocol(path, subscribe)
    await raises_other_protocol(path, subscribe_blocking, blocking=True)


async def test_herdr_client_names_a_server_that_closes_without_answering(
    host_agent_server: HostAgentServer,
) -> None:
    # The approval channel drops a first line that is not a hello: no reply at all.
    path = host_agent_server.approval_path
    await raises_other_protocol(path, lambda: AsyncHerdrClient.for_socket(path).request("ping"))


async def test_status_clients_name_a_desktop_server_as_another_protocol(
    short_socket_dir: Path,
) -> None:
    path = short_socket_dir / "host-agent-status.sock"
    async with silent_desktop_server(path):
        await raises_other_protocol(path, lambda: read_status_async(short_socket_dir))
        await raises_other_protocol(path, lambda: read_status(short_socket_dir), blocking=True)


async def test_approval_consumers_name_a_desktop_server_as_another_protocol(
    short_socket_dir: Path,
) -> None:
    path = short_socket_dir / "host-agent.sock"
    async with silent_desktop_server(path):
        await raises_other_protocol(
            path, lambda: AsyncApprovalConsumer.connect(short_socket_dir, timeout=5)
        )
        await raises_other_protocol(
            path,
            lambda: BlockingApprovalConsumer.connect(short_socket_dir, timeout=5),
            blocking=True,
        )


def test_a_desktop_error_reply_stays_a_desktop_error(desktop_server: RunningDesktopServer) -> None:
    with BlockingDesktopClient.connect(desktop_server.path, timeout=5) as client:
        with pytest.raises(DesktopError):
            client.call("no.such.op")
        assert client.call("identify")  # the same client still works


async def test_a_herdr_error_reply_stays_a_herdr_answer(herdr_server: HerdrServer) -> None:
    client = AsyncHerdrClient.for_socket(herdr_server.path)
    answer = await client.send(RawRequest(id="1", method="no.such.method"))
    assert isinstance(answer, ErrorResponse)


def test_status_cli_names_another_protocol_in_one_line(
    short_socket_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from anyio.from_thread import start_blocking_portal

    path = short_socket_dir / "host-agent-status.sock"
    server = DesktopServer(path, env={}, test_mode=True, idle_timeout=0.1, grace=0.1)
    monkeypatch.setenv("SHED_HOST_AGENT_SOCKET_DIR", str(short_socket_dir))
    with start_blocking_portal() as portal:
        future, _ = portal.start_task(server.serve)
        try:
            code = main(["host-agent", "status"])
        finally:
            portal.call(server.shutdown)
            future.result(timeout=10)
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1
    assert err.count(os.fspath(path)) == 1
    assert "the server there speaks another protocol" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("dialect", ["tauri", "mac"])
async def test_herdr_clients_name_a_desktop_server_as_another_protocol(
    dialect: str, short_socket_dir: Path
) -> None:
    # Regression (issue 29 item 6): a Tauri server's error reply carries the
    # request's id, so it passed for a herdr error (`unknown_op: unknown op: `).
    # herdr's answers are exactly {id, result} or {id, error}, never `ok`:
    # herdrdev/herdr src/api/schema/response.rs:24-34@1c76079f.
    path = short_socket_dir / "desktop.sock"
    async with anyio.create_task_group() as tg:
        server = DesktopServer(path, dialect=dialect, env={}, test_mode=True, grace=0.1)
        await tg.start(server.serve)
        try:
            await raises_other_protocol(path, lambda: AsyncHerdrClient.for_socket(path).ping())
            blocking = BlockingHerdrClient.for_socket(path)
            await raises_other_protocol(path, blocking.ping, blocking=True)
        finally:
            server.shutdown()


@pytest.mark.parametrize("peer", ["herdr", "desktop"])
async def test_status_clients_name_a_request_driven_server_without_waiting(
    peer: str, short_socket_dir: Path
) -> None:
    # Regression (issue 29 item 6): a server that waits for a request (herdr) left
    # the status client waiting for its read timeout. The read timeout here is long:
    # only the probe answered at once makes this pass. The probe is safe with the
    # real agent: it writes its report on accept, reads nothing and closes
    # (charliek/shed crates/shed-host-agent/src/status_server.rs:26-70@518fc00).
    path = short_socket_dir / "host-agent-status.sock"
    server = (
        HerdrServer(path, shell=["/bin/sh"], cwd=str(short_socket_dir))
        if peer == "herdr"
        else DesktopServer(path, env={}, test_mode=True, grace=0.1)
    )
    async with anyio.create_task_group() as tg:
        await tg.start(server.serve)
        try:
            await raises_other_protocol(
                path, lambda: read_status_async(short_socket_dir, read_timeout=120)
            )
            await raises_other_protocol(
                path, lambda: read_status(short_socket_dir, read_timeout=120), blocking=True
            )
        finally:
            server.shutdown()
