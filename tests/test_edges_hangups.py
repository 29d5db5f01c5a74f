"""A peer that hangs up while a server still owes it replies is normal (issue 11, item 4).

Every server gets a connection that sends requests and closes without
reading a byte. The server must log no error and no traceback (at most one
debug line) and keep serving the next connection.
"""

from __future__ import annotations

import builtins
import json
import logging
import threading
from importlib import import_module
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

from shedproto.servers import UnixServer
from shedproto.servers._receive import HANGUP_ERRORS, receive_or_eof
from shedproto.servers._unix import is_hangup
from shedproto.servers.echo import echo_server
from shedproto.servers.herdr import HerdrServer
from shedproto.servers.host_agent import HostAgentServer
from shedproto.testing import RunningAgentsHost, make_command
from shedproto.testing._desktop import RunningDesktopServer

ExceptionGroup: Any = (
    getattr(builtins, "ExceptionGroup", None)
    or import_module(
        "exceptiongroup"  # anyio's backport on Python 3.10
    ).ExceptionGroup
)

HELLO = (
    b'{"v":2,"type":"hello","id":"h1","ts":"2026-01-01T00:00:00Z","client":{"name":"hangup",'
    b'"version":"0","pid":1},"capabilities":[],"replay_events":0}\n'
)


class Ended:
    """Counts finished connection handlers per socket path (servers run in other threads too)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._counts: dict[Path, int] = {}

    def add(self, path: Path) -> None:
        with self._changed:
            self._counts[path] = self._counts.get(path, 0) + 1
            self._changed.notify_all()

    def count(self, path: Path) -> int:
        with self._changed:
            return self._counts.get(path, 0)

    def wait_beyond(self, path: Path, count: int, timeout: float) -> bool:
        """Block until more than ``count`` handlers on ``path`` ended; False on timeout."""
        with self._changed:
            return self._changed.wait_for(lambda: self._counts.get(path, 0) > count, timeout)


@pytest.fixture
def ended(monkeypatch: pytest.MonkeyPatch) -> Ended:
    """Record each connection handler's end, so a test can wait for it without sleeping."""
    counter = Ended()
    original = UnixServer._run_handler

    async def run_and_record(self: UnixServer, stream: anyio.abc.SocketStream) -> None:
        try:
            await original(self, stream)
        finally:
            counter.add(self.path)

    monkeypatch.setattr(UnixServer, "_run_handler", run_and_record)
    return counter


async def hang_up(path: Path, data: bytes, ended: Ended, caplog: pytest.LogCaptureFixture) -> None:
    """Send ``data``, close without reading, wait for the handler to end; check the log."""
    caplog.set_level(logging.DEBUG, logger="shedproto")
    caplog.clear()
    before = ended.count(path)
    stream = await anyio.connect_unix(path)
    await stream.send(data)
    await stream.aclose()  # the replies stay unread: the server's writes fail
    assert await anyio.to_thread.run_sync(ended.wait_beyond, path, before, 15)
    loud = [r for r in caplog.records if r.levelno > logging.DEBUG or r.exc_info]
    assert loud == [], [r.getMessage() for r in loud]
    assert "Traceback" not in caplog.text
    assert len(caplog.records) <= 1  # at most one debug line for the hang-up


async def still_answers(path: Path, request: bytes) -> bytes:
    """Send one request on a fresh connection and return the first reply line."""
    async with await anyio.connect_unix(path) as stream:
        await stream.send(request)
        received = b""
        with anyio.fail_after(15):
            while b"\n" not in received:
                received += await stream.receive()
    return received.split(b"\n", 1)[0]


async def test_echo_server_survives_a_hang_up_owed_replies(
    short_socket_dir: Path, ended: Ended, caplog: pytest.LogCaptureFixture
) -> None:
    path = short_socket_dir / "echo.sock"
    async with anyio.create_task_group() as tg:
        server = echo_server(path)
        await tg.start(server.serve)
        await hang_up(path, b"x" * 100 + b"\n" * 5000, ended, caplog)
        assert await still_answers(path, b"still\n") == b"still"
        server.shutdown()


async def test_host_agent_status_socket_survives_a_hang_up(
    host_agent_server: HostAgentServer, ended: Ended, caplog: pytest.LogCaptureFixture
) -> None:
    path = host_agent_server.status_path
    await hang_up(path, b"anything\n" * 1000, ended, caplog)
    assert json.loads(await still_answers(path, b""))["schema"] == 1


async def test_host_agent_approval_socket_survives_a_hang_up(
    host_agent_server: HostAgentServer, ended: Ended, caplog: pytest.LogCaptureFixture
) -> None:
    path = host_agent_server.approval_path
    await hang_up(path, HELLO + b'{"type":"pong"}\n' * 2000, ended, caplog)
    assert json.loads(await still_answers(path, HELLO))["type"] == "hello_ack"


async def survives(
    path: Path, request: bytes, ended: Ended, caplog: pytest.LogCaptureFixture
) -> dict[str, object]:
    """Hang up owing 3000 replies to ``request``, then return the answer to one more."""
    await hang_up(path, request * 3000, ended, caplog)
    answer: dict[str, object] = json.loads(await still_answers(path, request))
    return answer


async def test_desktop_server_survives_a_hang_up_owed_replies(
    desktop_server: RunningDesktopServer, ended: Ended, caplog: pytest.LogCaptureFixture
) -> None:
    request = b'{"id":"1","op":"identify"}\n'
    assert (await survives(Path(desktop_server.path), request, ended, caplog))["id"] == "1"


async def test_herdr_server_survives_a_hang_up_owed_replies(
    herdr_server: HerdrServer, ended: Ended, caplog: pytest.LogCaptureFixture
) -> None:
    request = b'{"id":"1","method":"ping","params":{}}\n'
    assert (await survives(Path(herdr_server.path), request, ended, caplog))["id"] == "1"


async def test_agents_host_api_survives_a_hang_up_owed_replies(
    agents_host: RunningAgentsHost, ended: Ended, caplog: pytest.LogCaptureFixture
) -> None:
    path = agents_host.socket
    health = b'{"id":1,"op":"health"}\n'
    submit = json.dumps(
        {
            "id": 2,
            "op": "submit",
            "command": make_command(agents_host.owner_did, "c1"),
            "wait": True,
        }
    ).encode()
    await hang_up(path, submit + b"\n" + health * 3000, ended, caplog)
    assert json.loads(await still_answers(path, health))["id"] == 1


async def read_until_closed(stream: anyio.abc.SocketStream) -> bytes:
    """Return everything the server sends until it closes the connection."""
    received = b""
    while True:
        try:
            received += await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            return received


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (anyio.BrokenResourceError(), True),
        (anyio.ClosedResourceError(), True),
        (ConnectionResetError(), True),
        (BrokenPipeError(), True),
        (ExceptionGroup("g", [anyio.BrokenResourceError()]), True),
        (
            ExceptionGroup("g", [ExceptionGroup("h", [BrokenPipeError()]), ConnectionResetError()]),
            True,
        ),
        (ExceptionGroup("g", [anyio.BrokenResourceError(), RuntimeError("bug")]), False),
        (RuntimeError("bug"), False),
        (TimeoutError(), False),
    ],
)
def test_is_hangup(exc: BaseException, expected: bool) -> None:
    assert is_hangup(exc) is expected


class _FailingStream(anyio.abc.ByteReceiveStream):
    """A receive stream whose every read raises ``error``."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def receive(self, max_bytes: int = 65536) -> bytes:
        raise self.error

    async def aclose(self) -> None:
        return None


@pytest.mark.parametrize(
    "error",
    [
        anyio.BrokenResourceError(),
        anyio.ClosedResourceError(),
        anyio.EndOfStream(),
        ConnectionResetError(),
        BrokenPipeError(),
        PermissionError("audit log"),
        OSError("not a hang-up"),
        RuntimeError("bug"),
    ],
    ids=type,
)
async def test_receive_or_eof_and_is_hangup_share_one_hangup_set(error: Exception) -> None:
    """Regression (issue 16): the receive step took every OSError as EOF, is_hangup did not."""
    hangup = is_hangup(error)
    assert hangup is isinstance(error, HANGUP_ERRORS)
    if hangup:
        assert await receive_or_eof(_FailingStream(error)) == b""
    else:
        with pytest.raises(type(error)):
            await receive_or_eof(_FailingStream(error))


async def test_hang_up_inside_a_task_group_is_not_a_handler_failure(
    short_socket_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def handler(stream: anyio.abc.SocketStream) -> None:
        async with anyio.create_task_group() as tg:  # a reply owed from a child task
            tg.start_soon(stream.send, b"late\n")
            raise anyio.BrokenResourceError

    async def buggy(stream: anyio.abc.SocketStream) -> None:
        async with anyio.create_task_group():
            raise RuntimeError("handler bug")

    caplog.set_level(logging.DEBUG, logger="shedproto")
    for name, serve in (("quiet.sock", handler), ("loud.sock", buggy)):
        path = short_socket_dir / name
        async with anyio.create_task_group() as tg:
            server = UnixServer(path, serve)
            await tg.start(server.serve)
            async with await anyio.connect_unix(path) as stream:
                await read_until_closed(stream)
            server.shutdown()
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert [r.getMessage() for r in errors] == [
        f"connection handler failed on {short_socket_dir / 'loud.sock'}"
    ]
    assert "handler bug" in caplog.text
