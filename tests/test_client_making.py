"""Every client is made and closed one documented way; misuse raises, never stays silent.

docs/clients.md: a connection-holding client is made by ``connect()`` and closed
by its ``with`` block; a stream opens when its ``with`` block is entered. Using
one outside that (a desktop client made from a path, a herdr subscription or
terminal session iterated without ``with``, any of them used after closing)
raises a typed error whose one line shows the documented way, instead of
connecting behind the caller's back, yielding nothing, or reconnecting.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shedproto import ErrorCode, LocalProtocolError
from shedproto.clients import AsyncLineTransport
from shedproto.clients.agents_host import AsyncAgentsHostClient, BlockingAgentsHostClient
from shedproto.clients.desktop import AsyncDesktopClient, BlockingDesktopClient
from shedproto.clients.herdr import AsyncHerdrClient, BlockingHerdrClient
from shedproto.servers.herdr import HerdrServer
from shedproto.testing import RunningAgentsHost, RunningDesktopServer, ServerThread


def _connection_closed(caught: pytest.ExceptionInfo[LocalProtocolError]) -> str:
    assert caught.value.code is ErrorCode.CONNECTION_CLOSED
    return caught.value.message


# -- desktop: connect() is the one way to make the client ---------------------------------


def test_a_blocking_desktop_client_made_from_a_path_raises_a_type_error_naming_connect(
    tmp_path: Path,
) -> None:
    # Regression: BlockingDesktopClient(path) made an unconnected client that connected
    # on its first call, a second way of making it that docs/clients.md does not have.
    with pytest.raises(TypeError) as caught:
        BlockingDesktopClient(tmp_path / "d.sock")  # type: ignore[arg-type]
    message = str(caught.value)
    assert "with BlockingDesktopClient.connect(path) as client:" in message
    assert "async" not in message
    assert str(tmp_path / "d.sock") in message


async def test_an_async_desktop_client_made_from_a_path_raises_a_type_error_naming_connect(
    tmp_path: Path,
) -> None:
    with pytest.raises(TypeError) as caught:
        AsyncDesktopClient(str(tmp_path / "d.sock"))  # type: ignore[arg-type]
    assert "async with await AsyncDesktopClient.connect(path) as client:" in str(caught.value)


async def test_an_async_desktop_client_needs_a_transport_with_a_path_to_reconnect_to(
    desktop_server: RunningDesktopServer,
) -> None:
    transport = await AsyncLineTransport.connect(desktop_server.path)
    transport.path = None  # as for a stream from elsewhere: nowhere to reconnect
    try:
        with pytest.raises(TypeError, match="connect"):
            AsyncDesktopClient(transport)
    finally:
        await transport.aclose()


def test_a_call_on_a_closed_blocking_desktop_client_raises_instead_of_reconnecting(
    desktop_server: RunningDesktopServer,
) -> None:
    # Regression: after close() the next call silently opened a new connection.
    with BlockingDesktopClient.connect(desktop_server.path, timeout=5) as client:
        assert client.call("identify")["platform"] == "tauri"
    with pytest.raises(LocalProtocolError) as caught:
        client.call("identify")
    assert "connect()" in _connection_closed(caught)
    client.close()  # still idempotent


async def test_a_call_on_a_closed_async_desktop_client_raises_instead_of_reconnecting(
    desktop_server: RunningDesktopServer,
) -> None:
    async with await AsyncDesktopClient.connect(desktop_server.path, timeout=5) as client:
        assert (await client.call("identify"))["platform"] == "tauri"
    with pytest.raises(LocalProtocolError) as caught:
        await client.identify()
    assert "connect()" in _connection_closed(caught)
    await client.aclose()


# -- herdr streams: open only inside their with block --------------------------------------


async def test_an_async_herdr_subscription_iterated_without_async_with_raises(
    tmp_path: Path,
) -> None:
    # Regression: iterating client.subscribe(...) without `async with` yielded nothing.
    client = AsyncHerdrClient.for_socket(tmp_path / "absent.sock")
    with pytest.raises(LocalProtocolError) as caught:
        [event async for event in client.subscribe("workspace.created")]
    assert "async with client.subscribe(...) as events:" in _connection_closed(caught)


def test_a_blocking_herdr_subscription_iterated_without_with_raises(tmp_path: Path) -> None:
    client = BlockingHerdrClient.for_socket(tmp_path / "absent.sock")
    with pytest.raises(LocalProtocolError) as caught:
        list(client.subscribe("workspace.created"))
    message = _connection_closed(caught)
    assert "with client.subscribe(...) as events:" in message
    assert "async" not in message


async def test_an_async_herdr_subscription_ends_after_its_block_and_opens_only_once(
    herdr_server: HerdrServer,
) -> None:
    client = AsyncHerdrClient.for_socket(herdr_server.path)
    subscription = client.subscribe("workspace.created")
    async with subscription as events:
        await client.workspace_create(cwd="/tmp")
        first = await events.__anext__()
        assert first.event == "workspace_created"
    assert [event async for event in events] == []  # ended with its block: not an error
    with pytest.raises(LocalProtocolError) as again:
        await subscription.__aenter__()
    assert "client.subscribe(...)" in _connection_closed(again)


def test_a_blocking_herdr_subscription_opens_only_once(
    herdr_server_sync: ServerThread[HerdrServer],
) -> None:
    client = BlockingHerdrClient.for_socket(herdr_server_sync.server.path)
    subscription = client.subscribe("workspace.created")
    with subscription as events:
        pass
    assert list(events) == []
    with pytest.raises(LocalProtocolError) as caught:
        subscription.__enter__()
    assert "already opened" in _connection_closed(caught)


async def test_an_async_terminal_session_read_or_written_without_async_with_raises(
    tmp_path: Path,
) -> None:
    # Regression: next_record() on a session never opened returned None (iteration
    # yielded nothing); send() raised a RemoteProtocolError, the peer's fault.
    session = AsyncHerdrClient.for_socket(tmp_path / "absent.sock").terminal_session("p1")
    with pytest.raises(LocalProtocolError) as reading:
        [record async for record in session]
    assert "async with client.terminal_session(...) as term:" in _connection_closed(reading)
    with pytest.raises(LocalProtocolError) as writing:
        await session.send_input("ls\n")
    assert "not open" in _connection_closed(writing)


def test_a_blocking_terminal_session_read_without_with_raises(tmp_path: Path) -> None:
    session = BlockingHerdrClient.for_socket(tmp_path / "absent.sock").terminal_session("p1")
    with pytest.raises(LocalProtocolError) as caught:
        session.next_record()
    assert "with client.terminal_session(...) as term:" in _connection_closed(caught)


# -- waits that nothing could ever end --------------------------------------------------


async def test_next_event_without_a_subscription_raises_instead_of_waiting_for_ever(
    agents_host: RunningAgentsHost,
) -> None:
    # Regression: next_event() before subscribe() waited for an event that never comes
    # (with its default timeout, for good).
    async with await AsyncAgentsHostClient.connect(agents_host.socket) as client:
        with pytest.raises(LocalProtocolError) as caught:
            await client.next_event()
        assert caught.value.code is ErrorCode.UNEXPECTED_EVENT
        assert "subscribe()" in caught.value.message
        await client.subscribe(("health",))
        event = await client.next_event(timeout=10)  # subscribed: the events come
        assert event.event.startswith("health")


def test_a_blocking_next_event_without_a_subscription_raises(
    agents_host_sync: ServerThread[RunningAgentsHost],
) -> None:
    with (
        BlockingAgentsHostClient.connect(agents_host_sync.server.socket) as client,
        pytest.raises(LocalProtocolError, match=r"subscribe\(\)"),
    ):
        client.next_event(timeout=None)


async def test_a_held_herdr_connection_entered_twice_raises_instead_of_opening_another(
    herdr_server: HerdrServer, tmp_path: Path
) -> None:
    client = AsyncHerdrClient.for_socket(herdr_server.path)
    registration = client.ssh_agent_register(str(tmp_path / "agent.sock"))
    async with registration:
        with pytest.raises(LocalProtocolError, match="already opened"):
            await registration.__aenter__()
