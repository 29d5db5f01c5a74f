"""Provoke the loop-callback race at will: a wait cancelled in the pass its socket turns ready.

anyio's asyncio socket stream resolves its read/writability future from an
unguarded loop callback; a cancellation that runs in the same loop pass as the
socket's ready report made the loop log ``InvalidStateError``. The stock loop
runs a pass's I/O callbacks after the handles queued before its select
(``queued``); uvloop runs them from libuv's poll phase, after the callbacks of
the same iteration (``same-callback``). Each loop shows the race in one of the
orders, so tests run both orders on both loops. trio is not affected (its waits
are no loop callbacks): these helpers drive asyncio loops directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

LOOPS = ["asyncio", "uvloop"]
ORDERS = ["queued", "same-callback"]


def run_on(name: str, main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run ``main()`` on a new stock loop or uvloop (skipped when the fast extra is absent)."""
    if name == "uvloop":
        uvloop = pytest.importorskip("uvloop", reason="the fast extra (uvloop) is not installed")
        loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
    else:
        loop = asyncio.SelectorEventLoop()
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()


def fill(sock: socket.socket) -> None:
    """Write into ``sock`` until its buffers are full."""
    sock.setblocking(False)
    try:
        while True:
            sock.send(b"x" * 65536)
    except BlockingIOError:
        pass


def drain(sock: socket.socket) -> bytes:
    """Return everything ``sock`` holds now."""
    sock.setblocking(False)
    got = bytearray()
    try:
        while chunk := sock.recv(1 << 20):
            got.extend(chunk)
    except BlockingIOError:
        pass
    return bytes(got)


async def provoke(
    task: asyncio.Future[Any], make_ready: Callable[[], object], order: str
) -> list[dict[str, Any]]:
    """Make the socket ready and cancel ``task`` in ``order``; return what the loop reported."""
    loop = asyncio.get_running_loop()
    errors: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    try:
        if order == "queued":

            def ready_then_cancel() -> None:
                make_ready()  # the next select reports the socket ready ...
                loop.call_soon(task.cancel)  # ... in the pass that runs this cancel first

            loop.call_soon(ready_then_cancel)
        else:

            def ready_and_cancel() -> None:
                make_ready()  # uvloop polls right after this iteration's callbacks
                task.cancel()

            loop.call_soon(ready_and_cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await task
        for _ in range(5):
            await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(previous)
    return errors
