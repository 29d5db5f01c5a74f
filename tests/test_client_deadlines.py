"""The clients' one sliding deadline per connection and their call lock (issue 16).

On asyncio a receive waits on the socket's descriptor with one timer per
connection that slides; elsewhere a bare cancel scope bounds it. Either way a
call that gets no answer in time raises ``TimeoutError``, a late answer never
reaches a later call, and a close wakes a waiting receive.
"""

from __future__ import annotations

import asyncio
import gc
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.abc
import anyio.lowlevel
import pytest

from shedproto.clients import AsyncLineTransport
from shedproto.clients._waits import _BY_LOOP, CallLock, LoopDeadlines
from shedproto.clients.desktop import AsyncDesktopClient


@asynccontextmanager
async def socket_pair() -> AsyncIterator[tuple[AsyncLineTransport, socket.socket]]:
    """Yield a transport over one end of a socket pair, and the other end (blocking)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ours.setblocking(False)
    stream = await anyio.abc.UNIXSocketStream.from_socket(ours)
    transport = AsyncLineTransport(stream)
    try:
        yield transport, theirs
    finally:
        await transport.aclose()
        theirs.close()


async def times_out_then_receives(transport: AsyncLineTransport, peer: socket.socket) -> None:
    """Check a receive with nothing there ends at a short deadline and a later line arrives."""
    transport.set_timeout(0.05)
    with anyio.fail_after(10), pytest.raises(TimeoutError):
        await transport.receive_frame()
    peer.send(b"now\n")
    assert await transport.receive_frame(timeout=30) == b"now"


async def test_a_deadline_moved_later_outlives_the_timer_armed_for_the_earlier_one() -> None:
    async with socket_pair() as (transport, theirs):
        transport.set_timeout(0.05)
        theirs.send(b"first\n")
        assert await transport.receive_frame() == b"first"  # a wait armed at the short deadline
        transport.set_timeout(30)  # slides: the armed wait time passes, the call goes on

        async def answer_late() -> None:
            await anyio.sleep(0.2)
            theirs.send(b"late\n")

        async with anyio.create_task_group() as tg:
            tg.start_soon(answer_late)
            assert await transport.receive_frame() == b"late"


async def test_a_deadline_moved_earlier_ends_the_wait_at_the_earlier_time() -> None:
    async with socket_pair() as (transport, theirs):
        transport.set_timeout(30)
        theirs.send(b"first\n")
        assert await transport.receive_frame() == b"first"
        transport.set_timeout(0.05)
        with anyio.fail_after(10), pytest.raises(TimeoutError):
            await transport.receive_frame()


async def test_a_short_deadline_ends_its_own_wait_and_no_other() -> None:
    async with socket_pair() as (patient, patient_peer), socket_pair() as (hasty, _hasty_peer):
        patient.set_timeout(30)
        hasty.set_timeout(0.05)
        outcome: list[bytes | BaseException] = []

        async def wait_patiently() -> None:
            outcome.append(await patient.receive_frame())

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(wait_patiently)
                await anyio.wait_all_tasks_blocked()
                with pytest.raises(TimeoutError):
                    await hasty.receive_frame()
                assert outcome == []  # the other wait goes on
                patient_peer.send(b"still here\n")
        assert outcome == [b"still here"]


async def test_a_transport_over_a_bare_socket_times_out_and_receives() -> None:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ours.setblocking(False)
    transport = AsyncLineTransport(None, sock=ours)
    try:
        await times_out_then_receives(transport, theirs)
    finally:
        await transport.aclose()
        theirs.close()


async def test_bytes_nobody_waits_for_stay_for_the_next_receive() -> None:
    """On asyncio the loop keeps watching the socket between calls; bytes that arrive
    while nobody waits end the watching (no busy loop) and wait for the next receive."""
    async with socket_pair() as (transport, theirs):
        transport.set_timeout(30)
        theirs.send(b"one\n")
        assert await transport.receive_frame() == b"one"
        await transport.send(b"request\n")  # the next receive waits before reading
        theirs.send(b"unasked\n")
        for _ in range(3):
            await anyio.lowlevel.checkpoint()
        assert not transport._watched
        with anyio.fail_after(10):
            assert await transport.receive_frame() == b"unasked"


async def test_a_receive_waiting_when_the_transport_closes_sees_eof() -> None:
    async with socket_pair() as (transport, _theirs):
        received: list[bytes] = []

        async def receive() -> None:
            received.append(await transport.receive_some())

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(receive)
                await anyio.wait_all_tasks_blocked()
                await transport.aclose()
        assert received == [b""]


async def test_a_desktop_call_against_a_server_that_never_answers_times_out_and_its_late_answer_is_never_delivered(  # noqa: E501
    short_socket_dir: Path,
) -> None:
    path = short_socket_dir / "silent.sock"
    answer_now = anyio.Event()
    connections = 0

    async def handler(stream: anyio.abc.SocketStream) -> None:
        nonlocal connections
        connections += 1
        first = connections == 1
        async with stream:
            await stream.receive()
            if first:  # answers only after the call gave up
                await answer_now.wait()
                payload = b'{"id":"1","ok":true,"result":{"late":true}}\n'
            else:
                payload = b'{"id":"1","ok":true,"result":{"late":false}}\n'
            try:
                await stream.send(payload)
                await stream.receive()
            except (anyio.BrokenResourceError, anyio.EndOfStream):
                return

    listener = await anyio.create_unix_listener(path)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, handler)
        async with await AsyncDesktopClient.connect(path, timeout=0.1) as client:
            with anyio.fail_after(10):
                with pytest.raises(TimeoutError):
                    await client.call("ui.navigate", {"pane": "agents"})
                answer_now.set()
                assert await client.call("ui.navigate", {"pane": "sheds"}) == {"late": False}
        tg.cancel_scope.cancel()
    assert connections == 2


async def test_the_call_lock_serves_contending_calls_in_arrival_order() -> None:
    lock = CallLock()
    order: list[int] = []

    async def call(n: int) -> None:
        async with lock:
            order.append(n)
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg, lock:
        for n in range(3):
            tg.start_soon(call, n)
            await anyio.wait_all_tasks_blocked()
        assert order == []
    assert order == [0, 1, 2]
    assert not lock.locked()


async def test_a_cancelled_waiter_of_the_call_lock_does_not_keep_it() -> None:
    lock = CallLock()
    order: list[str] = []

    async def call(name: str, scope: anyio.CancelScope) -> None:
        with scope:
            async with lock:
                order.append(name)

    for cancel_after_release in (False, True):
        order.clear()
        doomed = anyio.CancelScope()
        async with anyio.create_task_group() as tg:
            async with lock:
                tg.start_soon(call, "doomed", doomed)
                await anyio.wait_all_tasks_blocked()
                tg.start_soon(call, "after", anyio.CancelScope())
                await anyio.wait_all_tasks_blocked()
                if not cancel_after_release:
                    doomed.cancel()  # leaves the queue before its turn
                    await anyio.wait_all_tasks_blocked()
            if cancel_after_release:
                doomed.cancel()  # the lock was just handed to it: it passes it on
        assert order[-1] == "after"
        assert "doomed" not in order or cancel_after_release
        assert not lock.locked()


def test_closed_event_loops_are_not_kept_alive_by_the_shared_deadline_timer() -> None:
    """Regression: the per-loop deadlines held their timer, which held the loop, their key."""

    async def one_wait() -> None:
        async with socket_pair() as (transport, theirs):
            transport.set_timeout(30)
            theirs.send(b"x\n")
            assert await transport.receive_frame() == b"x"

    for _ in range(3):
        anyio.run(one_wait, backend="asyncio")
    gc.collect()
    assert not any(loop.is_closed() for loop in _BY_LOOP)


def test_a_stale_readable_report_after_a_wake_up_wakes_nobody() -> None:
    """Regression (issue 16): a level-triggered loop reports the socket again right after
    the wake-up; that report used to wake the next receive for nothing (one spurious task
    step and a failed read per round trip). The loop's callback reads for the receive now."""

    async def run() -> None:
        async with socket_pair() as (transport, theirs):
            received: list[bytes] = []

            async def receive() -> None:
                received.append(await transport.receive_some())

            async with anyio.create_task_group() as tg:
                tg.start_soon(receive)
                await anyio.wait_all_tasks_blocked()
                waiter = transport._waiter
                assert waiter is not None
                transport._on_readable()  # the stale report: nothing to read
                assert not waiter.done()
                theirs.send(b"real\n")
                transport._on_readable()
                assert waiter.done()
            assert received == [b"real\n"]

    anyio.run(run, backend="asyncio")  # the fast wait exists on asyncio only


def test_bytes_read_for_a_receive_cancelled_before_it_got_them_are_kept() -> None:
    """The loop's callback reads for the waiting receive; if that receive's task is
    cancelled before it runs again, the bytes go to the next receive: nothing is lost."""

    async def run() -> None:
        async with socket_pair() as (transport, theirs):
            task = asyncio.ensure_future(transport.receive_some())
            await anyio.wait_all_tasks_blocked()
            theirs.send(b"kept\n")
            transport._on_readable()  # read and handed over ...
            task.cancel()  # ... but the task is cancelled before it resumes
            with pytest.raises(asyncio.CancelledError):
                await task
            with anyio.fail_after(10):
                assert await transport.receive_frame() == b"kept"

    asyncio.run(run())  # the fast wait exists on asyncio only


def test_each_loop_keeps_its_own_deadlines_when_lookups_alternate_between_loops() -> None:
    """The last loop looked up is remembered (a fast path); another loop in between must
    not hand the first loop's deadlines to the second, nor lose the first loop's."""
    first, second = asyncio.new_event_loop(), asyncio.new_event_loop()
    try:
        mine = LoopDeadlines.of(first)
        theirs = LoopDeadlines.of(second)
        assert theirs is not mine
        assert LoopDeadlines.of(first) is mine
        assert LoopDeadlines.of(second) is theirs
    finally:
        first.close()
        second.close()


async def test_a_connected_transport_never_blocks_the_loop_on_its_socket(
    short_socket_dir: Path,
) -> None:
    """The socket is made non-blocking at birth (one syscall fewer): a receive with
    nothing to read must wait for the peer, not block the whole event loop."""
    path = short_socket_dir / "quiet.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    try:
        transport = await AsyncLineTransport.connect(path)
        peer, _ = listener.accept()
        try:
            raw = transport._raw
            assert raw is not None
            assert not raw.getblocking()  # checked first: a blocking socket would hang below
            peer.send(b"first\n")
            assert await transport.receive_frame(timeout=30) == b"first"
            await times_out_then_receives(transport, peer)  # reads directly first: nothing
        finally:
            await transport.aclose()
            peer.close()
    finally:
        listener.close()
