"""A client's write that must wait for room ends at its deadline, cleanly (issue 29).

When the socket buffer is full the transport waits for room. anyio's asyncio
socket stream resolves that wait's future from an unguarded loop callback: a
cancellation (the call's deadline) that lands in the loop pass that reports the
socket writable made asyncio log ``InvalidStateError`` ("exception in
callback"), failing whichever test ran then. The clients now wait with the
servers' guarded wait (``shedproto.servers._receive.send_all``); these tests pin
both the deadline and the absence of loop errors, and that a close wakes a
waiting write.
"""

from __future__ import annotations

import asyncio
import heapq
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

from shedproto.clients import AsyncLineTransport, BlockingLineTransport
from shedproto.clients.desktop import AsyncDesktopClient

BIG = b"x" * (8 << 20) + b"\n"  # more than any socket buffer holds


def _fill(sock: socket.socket) -> None:
    """Write into ``sock`` until its buffers are full."""
    sock.setblocking(False)
    try:
        while True:
            sock.send(b"x" * 65536)
    except BlockingIOError:
        pass


def _drain(sock: socket.socket) -> None:
    """Read everything ``sock`` holds now."""
    sock.setblocking(False)
    try:
        while sock.recv(1 << 20):
            pass
    except BlockingIOError:
        pass


@contextmanager
def loop_errors() -> Iterator[list[dict[str, Any]]]:
    """Collect what the running asyncio loop reports as errors (nothing under trio)."""
    errors: list[dict[str, Any]] = []
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # trio
        yield errors
        return
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    try:
        yield errors
    finally:
        loop.set_exception_handler(previous)


@asynccontextmanager
async def full_pair(
    *, with_stream: bool
) -> AsyncIterator[tuple[AsyncLineTransport, socket.socket]]:
    """Yield a transport whose socket cannot take another byte, and the peer that never reads."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ours.setblocking(False)
    _fill(ours)
    if with_stream:
        stream = await anyio.abc.UNIXSocketStream.from_socket(ours)
        transport = AsyncLineTransport(stream)
    else:
        transport = AsyncLineTransport(None, sock=ours)
    try:
        yield transport, theirs
    finally:
        await transport.aclose()
        theirs.close()


@pytest.mark.parametrize("with_stream", [True, False], ids=["anyio-stream", "bare-socket"])
async def test_a_send_that_waits_for_room_past_the_deadline_raises_timeout_and_no_loop_error(
    with_stream: bool,
) -> None:
    with loop_errors() as errors:
        async with full_pair(with_stream=with_stream) as (transport, _peer):
            transport.set_timeout(0.05)
            with anyio.fail_after(10), pytest.raises(TimeoutError):
                await transport.send(b"more\n")
        for _ in range(5):
            await anyio.lowlevel.checkpoint()
    assert errors == []


async def test_a_send_queued_behind_a_blocked_send_ends_at_its_own_deadline() -> None:
    # Regression: the send lock was taken outside the deadline, so a second write
    # queued behind one that waited for room waited without any deadline.
    async with full_pair(with_stream=False) as (transport, _peer):
        outcome: list[BaseException] = []

        async def blocked_send() -> None:
            try:
                await transport.send(BIG)
            except anyio.ClosedResourceError as exc:
                outcome.append(exc)

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                transport.set_timeout(None)
                tg.start_soon(blocked_send)
                await anyio.wait_all_tasks_blocked()
                transport.set_timeout(0.05)
                with pytest.raises(TimeoutError):
                    await transport.send(b"queued\n")
                await transport.aclose()
        assert [type(e) for e in outcome] == [anyio.ClosedResourceError]


@pytest.mark.parametrize("with_stream", [True, False], ids=["anyio-stream", "bare-socket"])
async def test_closing_a_transport_wakes_a_send_waiting_for_room(with_stream: bool) -> None:
    with loop_errors() as errors:
        async with full_pair(with_stream=with_stream) as (transport, _peer):
            failures: list[type[BaseException]] = []

            async def send() -> None:
                try:
                    await transport.send(BIG)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
                    failures.append(type(exc))

            with anyio.fail_after(10):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(send)
                    await anyio.wait_all_tasks_blocked()
                    await transport.aclose()
            assert failures == [anyio.ClosedResourceError]
        for _ in range(5):
            await anyio.lowlevel.checkpoint()
    assert errors == []


async def test_a_desktop_call_whose_request_the_server_never_reads_times_out_and_reconnects(
    short_socket_dir: Path,
) -> None:
    path = short_socket_dir / "deaf.sock"
    connections = 0

    async def handler(stream: anyio.abc.SocketStream) -> None:
        nonlocal connections
        connections += 1
        async with stream:
            if connections == 1:  # never reads: the client's request fills the socket
                await anyio.sleep_forever()
            await stream.receive()
            await stream.send(b'{"id":"1","ok":true,"result":{"second":true}}\n')
            await anyio.sleep_forever()

    with loop_errors() as errors:
        listener = await anyio.create_unix_listener(path)
        async with listener, anyio.create_task_group() as tg:
            tg.start_soon(listener.serve, handler)
            async with await AsyncDesktopClient.connect(path, timeout=0.2) as client:
                with anyio.fail_after(10):
                    with pytest.raises(TimeoutError):
                        await client.call("ui.navigate", {"pane": "x" * len(BIG)})
                    assert await client.call("ui.navigate", {"pane": "sheds"}) == {
                        "second": True
                    }
            tg.cancel_scope.cancel()
    assert connections == 2
    assert errors == []


def test_a_blocking_send_the_peer_never_reads_ends_at_the_deadline() -> None:
    # Regression: the blocking transport's send had no deadline at all (a peer that
    # stopped reading hung the caller for good).
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    _fill(ours)
    ours.setblocking(True)
    transport = BlockingLineTransport(ours)
    try:
        transport.set_timeout(0.05)
        with pytest.raises(TimeoutError, match="deadline"):
            transport.send(b"more\n")
    finally:
        transport.close()
        theirs.close()


class _TimersFirstLoop(asyncio.SelectorEventLoop):
    """A selector loop that runs due timers before the pass's I/O callbacks, on a movable clock.

    asyncio does not order a pass's timers against its I/O callbacks (the stock
    loop runs I/O first; libuv-based loops have run timers first): this order is
    the one in which a deadline's cancellation lands just before the report that
    the socket turned writable. :attr:`skew` moves the clock on without sleeping.
    """

    def __init__(self) -> None:
        super().__init__()
        self.skew = 0.0

    def time(self) -> float:
        return super().time() + self.skew

    def _process_events(self, event_list: list[Any]) -> None:
        scheduled: list[asyncio.TimerHandle] = self._scheduled  # type: ignore[attr-defined]
        ready: Any = self._ready  # type: ignore[attr-defined]
        end = self.time() + self._clock_resolution  # type: ignore[attr-defined]
        while scheduled and scheduled[0].when() < end:
            handle = heapq.heappop(scheduled)
            handle._scheduled = False  # type: ignore[attr-defined]
            ready.append(handle)
        super()._process_events(event_list)  # type: ignore[misc]


def _run_on_timers_first_loop(main: Callable[[_TimersFirstLoop], Any]) -> None:
    loop = _TimersFirstLoop()
    try:
        loop.run_until_complete(main(loop))
    finally:
        loop.close()


@pytest.mark.parametrize("with_stream", [True, False], ids=["anyio-stream", "bare-socket"])
def test_a_deadline_landing_in_the_pass_that_reports_the_socket_writable_reports_no_loop_error(
    with_stream: bool,
) -> None:
    # Regression: the slow-path send was anyio's stream.send, whose writability future
    # is resolved by an unguarded loop callback; the deadline's cancellation ran first
    # in the same pass and the loop reported InvalidStateError ("exception in callback").
    async def main(loop: _TimersFirstLoop) -> None:
        with loop_errors() as errors:
            async with full_pair(with_stream=with_stream) as (transport, peer):
                transport.set_timeout(30)
                sender = asyncio.ensure_future(transport.send(b"y" * 65536))
                for _ in range(5):
                    await asyncio.sleep(0)
                assert not sender.done()  # it waits for room

                def turn_writable_and_pass_the_deadline() -> None:
                    _drain(peer)  # the next select reports the socket writable ...
                    loop.skew += 60  # ... in the pass where the deadline falls due

                loop.call_soon(turn_writable_and_pass_the_deadline)
                with pytest.raises(TimeoutError):
                    await sender
                for _ in range(5):
                    await asyncio.sleep(0)
        assert errors == []

    _run_on_timers_first_loop(main)


@pytest.mark.parametrize("with_stream", [True, False], ids=["anyio-stream", "bare-socket"])
def test_a_cancellation_landing_in_the_pass_that_reports_the_socket_writable_reports_no_loop_error(
    with_stream: bool,
) -> None:
    # The same race on the stock loop, with the caller's own cancellation (a task
    # group cancelled by a sibling) running just before the writable report.
    async def main() -> None:
        loop = asyncio.get_running_loop()
        with loop_errors() as errors:
            async with full_pair(with_stream=with_stream) as (transport, peer):
                transport.set_timeout(30)
                sender = asyncio.ensure_future(transport.send(b"y" * 65536))
                for _ in range(5):
                    await asyncio.sleep(0)
                assert not sender.done()

                def turn_writable_then_cancel() -> None:
                    _drain(peer)
                    loop.call_soon(sender.cancel)  # runs first in the pass that reports it

                loop.call_soon(turn_writable_then_cancel)
                with pytest.raises(asyncio.CancelledError):
                    await sender
                for _ in range(5):
                    await asyncio.sleep(0)
        assert errors == []

    asyncio.run(main())
