"""The anyio shell: one :class:`ServerConnection` per socket connection, answered in order."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from shedproto.desktop import (
    MOCK_UNREACHABLE_URL,
    Answer,
    DesktopError,
    Dialect,
    Failure,
    LaunchPolicy,
    Release,
    RequestReceived,
    RequestRejected,
    ServerConnection,
    ServerEvent,
    env_test_mode,
    mock_base_url_from_env,
    mock_unreachable_hosts,
)
from shedproto.servers import UnixServer
from shedproto.servers._idle import loop_clock
from shedproto.servers._receive import RECEIVE_CHUNK, SocketPump

from ._app import DesktopApp
from ._model import DesktopModel

__all__ = ["IDLE_TIMEOUT", "RECEIVE_CHUNK", "SEND_TIMEOUT", "DesktopServer"]

IDLE_TIMEOUT = 300.0
"""Seconds a connection may sit idle between requests before the server closes it.

The real servers have no read deadline; a long one keeps persistent harness
connections alive while still reclaiming abandoned ones.
"""
SEND_TIMEOUT = 30.0
"""Seconds an answer may take to drain to a client that stopped reading.

A connection's send deadline is ``min(send_timeout, idle_timeout)`` (plus up
to a tenth as slack): both share one sliding deadline, so no timer is armed
per request.
"""
MOCK_UNREACHABLE_DETAIL = {
    Dialect.MAC: "Could not connect to the server.",
    Dialect.TAURI: f"error sending request for url ({MOCK_UNREACHABLE_URL}/)",
}
"""The ``detail`` of a host made unreachable by ``SHED_*_MOCK_UNREACHABLE_HOSTS``:
the mac app's URLSession wording and the Tauri app's reqwest wording for a
refused connection (our choice of text; the apps print their HTTP clients' own)."""


class DesktopServer:
    """A reference shed-desktop control socket in one dialect, backed by a :class:`DesktopModel`.

    ``test_mode`` ``None`` reads ``SHED_DESKTOP_TEST_MODE`` (mac) or
    ``SHED_TAURI_TEST_MODE`` (Tauri) from ``env`` (default ``os.environ``);
    ``mock_base_url`` likewise; in test mode only, ``SHED_*_MOCK_UNREACHABLE_HOSTS``
    (comma-separated server names) makes those hosts unreachable; mac's
    ``SHED_DESKTOP_RUST_CORE=0`` makes
    ``identify`` report ``core: "swift"``. ``release`` picks which app
    release it answers like: :attr:`~shedproto.desktop.Release.LATEST` (the newer app, the
    default) or :attr:`~shedproto.desktop.Release.V0_0_14` (shed-desktop v0.0.14: fewer ops,
    the older result shapes; see the release table in the desktop docs).
    Start with ``await tg.start(server.serve)``
    (returns the bound path); stop with :meth:`shutdown`.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        dialect: Dialect | str = Dialect.TAURI,
        model: DesktopModel | None = None,
        test_mode: bool | None = None,
        mock_base_url: str | None = None,
        env: Mapping[str, str] | None = None,
        launch_policy: LaunchPolicy = LaunchPolicy.IGNORE_EXTRAS,
        release: Release | str = Release.LATEST,
        idle_timeout: float = IDLE_TIMEOUT,
        send_timeout: float = SEND_TIMEOUT,
        grace: float = 1.0,
    ) -> None:
        self.dialect = Dialect(dialect)
        self.release = Release(release)
        environ = os.environ if env is None else env
        self.model = DesktopModel() if model is None else model
        if self.dialect is Dialect.MAC and environ.get("SHED_DESKTOP_RUST_CORE") == "0":
            self.model.core = "swift"
        self.test_mode = env_test_mode(self.dialect, environ) if test_mode is None else test_mode
        if mock_base_url is None:
            mock_base_url = mock_base_url_from_env(self.dialect, environ)
        unreachable = mock_unreachable_hosts(self.dialect, environ, test_mode=self.test_mode)
        if unreachable:
            self.model.mock_unreachable(unreachable, detail=MOCK_UNREACHABLE_DETAIL[self.dialect])
        self.path = Path(path)
        self.app = DesktopApp(
            self.model,
            self.dialect,
            test_mode=self.test_mode,
            socket_path=os.fspath(self.path),
            pid=os.getpid(),
            mock_base_url=mock_base_url,
            launch_policy=launch_policy,
            release=self.release,
        )
        self.idle_timeout = idle_timeout
        self.send_timeout = send_timeout
        self.connections = 0
        """Connections currently open (for tests that check nothing leaked)."""
        self.served = 0
        """Requests answered so far, rejections included."""
        self._unix = UnixServer(self.path, self.serve_connection, grace=grace)

    async def serve(
        self, *, task_status: anyio.abc.TaskStatus[Path] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Bind, signal readiness with the path, and serve until :meth:`shutdown`.

        Raises:
            BindError: the bind ceremony refused the path.

        """
        await self._unix.serve(task_status=task_status)

    def shutdown(self) -> None:
        """Stop accepting; open connections get the grace period, then are cancelled."""
        self._unix.shutdown()

    async def serve_connection(self, stream: anyio.abc.ByteStream) -> None:
        """Serve one connection: read, answer each request in order, until EOF or a cap breach.

        Peer misbehaviour never raises out of here: it is answered (or the
        connection closed) exactly as the dialect's real server does.

        Deadlines cost no timer per request: one cancel scope per connection
        "epoch" carries a sliding deadline ``step = min(send_timeout,
        idle_timeout)`` (plus a tenth as slack) past the last read, moved only
        when less than ``step`` remains. When it fires during a send, the
        peer stopped reading: the connection ends. When it fires during a read,
        the connection ends if it has been silent for ``idle_timeout`` (since
        its last request, or since the answer to a slow op);
        otherwise a new epoch starts (a cancelled read consumes nothing, and
        the partial line stays buffered in the core). Bytes move through a
        ``shedproto.servers._receive.SocketPump``: one event-loop pass per
        request instead of three. Time is read from the loop's own clock
        (``shedproto.servers._idle.loop_clock()``), not ``anyio.current_time``,
        which costs more per call than the request's protocol work.
        """
        conn = ServerConnection(self.dialect, test_mode=self.test_mode, release=self.release)
        pump = SocketPump(stream)
        clock = loop_clock()
        idle_timeout = self.idle_timeout
        step = min(self.send_timeout, idle_timeout)
        slack = step / 10
        last_active = clock()
        sending = False
        self.connections += 1
        try:
            while True:
                scope = anyio.CancelScope(deadline=clock() + step + slack)
                with scope:
                    while True:
                        data = await pump.receive()
                        last_active = now = clock()
                        if scope.deadline - now < step:
                            scope.deadline = now + step + slack
                        events = conn.receive_data(data)
                        out = self._answer_one(conn, events)
                        if out is None:
                            out, ended = await self._process(conn, events, scope)
                        else:
                            ended = False
                        if out and (out := pump.send_now(out)):
                            sending = True
                            await pump.send(out)  # waits for room, guarded
                            sending = False
                            if clock() - now > step:  # a slow op: idle counts from its answer
                                last_active = clock()
                        if ended:
                            return
                # the epoch's deadline fired
                if sending or clock() - last_active >= idle_timeout:
                    return
        finally:
            self.connections -= 1

    def _answer_one(self, conn: ServerConnection, events: list[ServerEvent]) -> bytes | None:
        """Answer the common read (one request, an op that does not wait) without awaiting.

        Returns the bytes owed, or ``None`` when :meth:`_process` must handle
        ``events`` (several, a rejection, the end, an op that takes time).
        Skipping the coroutine of :meth:`_process` and of ``pump.send`` saves
        two coroutine frames per request on the hot path.
        """
        if len(events) != 1:
            return None
        event = events[0]
        if not isinstance(event, RequestReceived) or event.op in self.app.async_ops:
            return None
        self.served += 1
        answer = self._answer(conn, event)
        return answer + conn.data_to_send() if conn.outbox else answer

    async def _process(
        self, conn: ServerConnection, events: list[ServerEvent], scope: anyio.CancelScope
    ) -> tuple[bytes, bool]:
        """Answer the core's ``events``; return the bytes owed to the peer and whether to close.

        Requests are answered strictly in order; an op that takes time
        (:attr:`DesktopApp.async_ops`) holds back the requests behind it on
        this connection only, as the real servers do. The connection's
        deadline (``scope``) is lifted while such an op runs and re-armed after.
        """
        out: list[bytes] = []
        ended = False
        for event in events:
            # error lines the core wrote by itself, due once the answers before them went out
            out.append(conn.data_to_send())
            if isinstance(event, RequestReceived):
                if event.op in self.app.async_ops:
                    scope.deadline = math.inf  # the op has its own budget
                    try:
                        out.append(await self._answer_async(conn, event))
                    finally:
                        step = min(self.send_timeout, self.idle_timeout)
                        scope.deadline = anyio.current_time() + step * 1.1
                else:
                    out.append(self._answer(conn, event))
            elif not isinstance(event, RequestRejected):
                ended = True
                continue
            self.served += 1
        out.append(conn.data_to_send())
        return b"".join(out), ended

    async def _answer_async(self, conn: ServerConnection, event: RequestReceived) -> bytes:
        try:
            result = await self.app.handle_async(event)
        except DesktopError as exc:
            return conn.send(Failure.from_error(event.id, exc))
        return self._encode(conn, event, result)

    def _answer(self, conn: ServerConnection, event: RequestReceived) -> bytes:
        try:
            result = self.app.handle(event)
        except DesktopError as exc:
            return conn.send(Failure.from_error(event.id, exc))
        return self._encode(conn, event, result)

    def _encode(self, conn: ServerConnection, event: RequestReceived, result: Any) -> bytes:
        try:
            return conn.send(Answer(id=event.id, result=result))
        except TypeError as exc:  # a result the model could not encode
            return conn.send(
                Failure(id=event.id, code=self.dialect.internal.value, message=str(exc))
            )
