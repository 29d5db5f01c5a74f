"""Client connect paths say what is at the path, once, in one line (issue 11, item 8)."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from shedproto.clients import ConnectReason, UnreachableSocketError
from shedproto.clients.agents_host import AsyncAgentsHostClient, BlockingAgentsHostClient
from shedproto.clients.cli import main
from shedproto.clients.host_agent import AsyncApprovalConsumer
from shedproto.servers.echo import echo_server
from shedproto.servers.host_agent import HostAgentServer


async def test_agents_host_client_names_a_server_of_another_protocol(
    short_socket_dir: Path,
) -> None:
    path = short_socket_dir / "echo.sock"
    async with anyio.create_task_group() as tg:
        server = echo_server(path)
        await tg.start(server.serve)
        async with await AsyncAgentsHostClient.connect(path) as client:
            with pytest.raises(UnreachableSocketError) as info:
                await client.health()
        blocking = await anyio.to_thread.run_sync(BlockingAgentsHostClient.connect, path)
        with blocking, pytest.raises(UnreachableSocketError) as blocking_info:
            await anyio.to_thread.run_sync(blocking.health)
        server.shutdown()
    for error in (info.value, blocking_info.value):
        assert error.reason is ConnectReason.OTHER_PROTOCOL
        assert str(error).startswith(
            f"cannot talk to {path}: the server there speaks another protocol ("
        )


async def test_agents_host_client_names_a_host_agent_socket_as_another_protocol(
    host_agent_server: HostAgentServer,
) -> None:
    for path in (host_agent_server.status_path, host_agent_server.approval_path):
        async with await AsyncAgentsHostClient.connect(path) as client:
            with pytest.raises(UnreachableSocketError) as info:
                await client.health()
        assert info.value.reason is ConnectReason.OTHER_PROTOCOL


async def test_approval_consumer_on_a_directory_says_so(short_socket_dir: Path) -> None:
    (short_socket_dir / "host-agent.sock").mkdir()
    with pytest.raises(UnreachableSocketError) as info:
        await AsyncApprovalConsumer.connect(short_socket_dir, timeout=1)
    path = short_socket_dir / "host-agent.sock"
    assert str(info.value) == f"cannot connect to {path}: it is a directory, not a socket"


@pytest.mark.parametrize(
    ("kind", "says"),
    [
        ("directory", "it is a directory, not a socket"),
        ("regular file", "it is a regular file, not a socket"),
        ("nothing", "nothing is there"),
    ],
)
def test_cli_connect_error_is_one_line_naming_the_path_once(
    short_socket_dir: Path, capsys: pytest.CaptureFixture[str], kind: str, says: str
) -> None:
    path = short_socket_dir / "x.sock"
    if kind == "directory":
        path.mkdir()
    elif kind == "regular file":
        path.write_text("")
    assert main(["agents-host", "health", "--socket", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.count(os.fspath(path)) == 1  # was "[Errno 111] cannot connect to DIR: ...: 'DIR'"
    assert err.rstrip("\n").endswith(f"cannot connect to {path}: {says}")
    assert "Traceback" not in err
