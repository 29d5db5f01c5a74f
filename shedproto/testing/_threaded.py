"""Run a reference server on its own event loop in a background thread, behind a blocking handle.

This is what the ``*_sync`` fixtures yield. Like every fixture module of
the plugin, it imports only the standard library and typing helpers at the
top; anyio is imported when a server starts.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Future
from contextlib import AbstractAsyncContextManager, contextmanager
from typing import TYPE_CHECKING, Generic, TypeVar, cast, overload

from typing_extensions import TypeVarTuple, Unpack

if TYPE_CHECKING:
    from anyio.from_thread import BlockingPortal

__all__ = ["ServerThread", "serve_in_thread"]

ServerT = TypeVar("ServerT")
T = TypeVar("T")
PosArgsT = TypeVarTuple("PosArgsT")


class ServerThread(Generic[ServerT]):
    """A running server (``server``) whose event loop runs in a background thread.

    Read plain attributes of ``server`` directly (paths, recorded calls);
    run anything that changes it or awaits on its loop with :meth:`call`,
    and start a long call (one that waits for your own code to act) with
    :meth:`start`, which returns a :class:`concurrent.futures.Future`.
    """

    def __init__(self, server: ServerT, portal: BlockingPortal) -> None:
        self.server = server
        self.portal = portal

    @overload
    def call(
        self, func: Callable[[Unpack[PosArgsT]], Awaitable[T]], *args: Unpack[PosArgsT]
    ) -> T: ...

    @overload
    def call(self, func: Callable[[Unpack[PosArgsT]], T], *args: Unpack[PosArgsT]) -> T: ...

    def call(
        self, func: Callable[[Unpack[PosArgsT]], Awaitable[T] | T], *args: Unpack[PosArgsT]
    ) -> T:
        """Run ``func(*args)`` (sync or async) on the server's event loop and return its result.

        Its exception, if any, is raised here.
        """
        return cast("T", self.portal.call(func, *args))  # one of the two overloads above

    def start(
        self, func: Callable[[Unpack[PosArgsT]], Awaitable[T]], *args: Unpack[PosArgsT]
    ) -> Future[T]:
        """Start ``await func(*args)`` on the server's loop; the future holds its outcome."""
        return self.portal.start_task_soon(func, *args)


@contextmanager
def serve_in_thread(
    running: Callable[[], AbstractAsyncContextManager[ServerT]], *, backend: str = "asyncio"
) -> Iterator[ServerThread[ServerT]]:
    """Enter ``running()`` on a new event loop in a background thread for the ``with`` block.

    On asyncio the loop is uvloop when it is installed (``shedproto.servers._loop``).

    The context manager is exited (the server stopped) on that loop when the
    block ends, then the thread stops. An error while starting is raised here.
    """
    from anyio.from_thread import start_blocking_portal

    from shedproto.servers._loop import loop_options

    options = loop_options() if backend == "asyncio" else None
    with (
        start_blocking_portal(backend, options) as portal,
        portal.wrap_async_context_manager(running()) as server,
    ):
        yield ServerThread(server, portal)
