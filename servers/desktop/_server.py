"""The anyio shell: one :class:`ServerConnection` per socket connection, answered in order."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import anyio
import anyio.abc

from shedproto.desktop import (
    Answer,
    ConnectionEnded,
    DesktopError,
    Dialect,
    Failure,
    LaunchPolicy,
    RequestReceived,
    RequestRejected,
    ServerConnection,
    env_test_mode,
    mock_base_url_from_env,
)
from shedproto.servers import IdleDeadline, UnixServer

from ._app import DesktopApp
from ._model import DesktopModel

__all__ = ["IDLE_TIMEOUT", "RECEIVE_CHUNK", "SEND_TIMEOUT", "DesktopServer"]

IDLE_TIMEOUT = 300.0
"""Seconds a connection may sit idle between requests before the server closes it.

The real servers have no read deadline; a long one keeps persistent harness
connections alive while still reclaiming abandoned ones.
"""
SEND_TIMEOUT = 30.0
"""Seconds an answer may take to drain to a client that stopped reading."""
RECEIVE_CHUNK = 65536


class DesktopServer:
    """A reference shed-desktop control socket in one dialect, backed by a :class:`DesktopModel`.

    ``test_mode`` ``None`` reads ``SHED_DESKTOP_TEST_MODE`` (mac) or
    ``SHED_TAURI_TEST_MODE`` (Tauri) from ``env`` (default ``os.environ``);
    ``mock_base_url`` likewise, and mac's ``SHED_DESKTOP_RUST_CORE=0`` makes
    ``identify`` report ``core: "swift"``. Start with ``await tg.start(server.serve)``
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
        idle_timeout: float = IDLE_TIMEOUT,
        grace: float = 1.0,
    ) -> None:
        self.dialect = Dialect(dialect)
        environ = os.environ if env is None else env
        self.model = DesktopModel() if model is None else model
        if self.dialect is Dialect.MAC and environ.get("SHED_DESKTOP_RUST_CORE") == "0":
            self.model.core = "swift"
        self.test_mode = env_test_mode(self.dialect, environ) if test_mode is None else test_mode
        if mock_base_url is None:
            mock_base_url = mock_base_url_from_env(self.dialect, environ)
        self.path = Path(path)
        self.app = DesktopApp(
            self.model,
            self.dialect,
            test_mode=self.test_mode,
            socket_path=os.fspath(self.path),
            pid=os.getpid(),
            mock_base_url=mock_base_url,
            launch_policy=launch_policy,
        )
        self.idle_timeout = idle_timeout
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
        """
        conn = ServerConnection(self.dialect, test_mode=self.test_mode)
        idle = IdleDeadline(self.idle_timeout)
        self.connections += 1
        try:
            with idle.scope:
                while True:
                    try:
                        data = await stream.receive(RECEIVE_CHUNK)
                    except (anyio.EndOfStream, anyio.BrokenResourceError):
                        data = b""
                    idle.touch()
                    out = bytearray()
                    ended = False
                    for event in conn.receive_data(data):
                        if isinstance(event, RequestReceived):
                            out += self._answer(conn, event)
                        elif isinstance(event, RequestRejected):
                            out += event.reply
                        elif isinstance(event, ConnectionEnded):
                            ended = True
                            if event.reply is not None:
                                out += event.reply
                        self.served += not isinstance(event, ConnectionEnded)
                    if out:
                        with anyio.fail_after(SEND_TIMEOUT):
                            await stream.send(bytes(out))
                    if ended:
                        return
        finally:
            self.connections -= 1

    def _answer(self, conn: ServerConnection, event: RequestReceived) -> bytes:
        try:
            result = self.app.handle(event)
        except DesktopError as exc:
            return conn.send(Failure.from_error(event.id, exc))
        try:
            return conn.send(Answer(id=event.id, result=result))
        except TypeError as exc:  # a result the model could not encode
            return conn.send(
                Failure(id=event.id, code=self.dialect.internal.value, message=str(exc))
            )
