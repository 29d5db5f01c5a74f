"""The shed-desktop client over anyio, for either dialect.

The source of the blocking client (``tools/unasync.py`` writes ``_blocking.py``).
"""

from __future__ import annotations

import os
from typing import Any

from typing_extensions import Self

from shedproto.clients import AsyncLineTransport
from shedproto.clients._transport import SEND_FAILURES, AsyncClosing, first_reply
from shedproto.desktop import (
    ClientConnection,
    CreateTicket,
    DesktopError,
    Dialect,
)
from shedproto.desktop import types as o
from shedproto.desktop._params import params_dict

from ._common import (
    DEFAULT_TIMEOUT,
    MAC_FRAME_CAP,
    RESPONSE_POLICY,
    client_closed,
    closed_while_sending,
    convert_result,
    default_socket_path,
    dialect_of_code,
    dialect_of_identify,
    launch_params,
    made_without_connect,
)

__all__ = ["AsyncDesktopClient"]


class AsyncDesktopClient(AsyncClosing):
    """A persistent connection to a shed-desktop control socket (mac or Tauri).

    Made by :meth:`connect`, which resolves the socket like shedctl
    (``SHED_DESKTOP_SOCKET``, then the dialect's default) and returns once
    connected; closed by :meth:`aclose`, which leaving its ``with`` block
    calls (see *Making and closing clients*). :meth:`call` sends one request and returns
    its result; a failure raises :class:`~shedproto.desktop.DesktopError`
    carrying the wire code and message. Calls are serialised; after a timeout
    or a broken connection the next call reconnects; after :meth:`aclose` a
    call raises :class:`~shedproto.LocalProtocolError` (``CONNECTION_CLOSED``).
    :attr:`dialect` is known after :meth:`identify` (or :meth:`detect_dialect`).
    """

    def __init__(
        self, transport: AsyncLineTransport, *, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        """Hold ``transport``, the connection :meth:`connect` made (calls reconnect to its path).

        Raises:
            TypeError: ``transport`` is not a connected transport with a path: a socket
                path here (the constructor used to connect on the first call) names
                :meth:`connect`, the one way to make the client.

        """
        given: object = transport  # typed callers cannot get this wrong; untyped ones can
        if not isinstance(given, AsyncLineTransport) or given.path is None:
            raise TypeError(made_without_connect(type(self).__name__, given))
        self.path: str = given.path
        """The socket the client connected to (and reconnects to)."""
        self.timeout = timeout
        self.dialect: Dialect | None = None
        """Which dialect answered: set by ``identify``, or by the first envelope-level
        error code (``unknown-op`` vs ``unknown_op``); ``None`` until then."""
        self._transport: AsyncLineTransport | None = transport
        self._conn = ClientConnection()
        self._lock = AsyncLineTransport.new_lock()
        self._closed = False

    @classmethod
    async def connect(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        dialect: Dialect | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> Self:
        """Connect to ``path`` (default: resolved from the environment for ``dialect``).

        Raises:
            ConnectError: the socket is missing, refuses, or did not answer in time.

        """
        target = default_socket_path(dialect) if path is None else path
        transport = await AsyncLineTransport.connect(
            target, timeout=timeout, policy=RESPONSE_POLICY
        )
        return cls(transport, timeout=timeout)

    async def _reconnect(self) -> AsyncLineTransport:
        """Connect again after a timeout or a broken connection dropped the last one.

        Raises:
            LocalProtocolError: ``CONNECTION_CLOSED``: the client was closed.
            ConnectError: reconnecting failed.

        """
        if self._closed:
            raise client_closed()
        transport = self._transport = await AsyncLineTransport.connect(
            self.path, timeout=self.timeout, policy=RESPONSE_POLICY
        )
        self._conn = ClientConnection()
        return transport

    async def _drop(self) -> None:
        transport, self._transport = self._transport, None
        if transport is not None:
            await transport.aclose()

    async def call(
        self, op: str, params: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> Any:
        """Send ``op`` with ``params`` and return the result (``{}`` for a null result).

        Answers to other ids (a late answer to an abandoned call) are skipped.

        Raises:
            DesktopError: the server answered ``ok: false`` (``code``, ``message``).
            TimeoutError: no answer within ``timeout`` (default: the client's ``timeout``);
                the connection is dropped and the next call reconnects.
                ``math.inf`` sets no deadline: for callers that bound a
                batch of calls themselves.
            RemoteProtocolError: the server's answer is not a valid response.
            UnreachableSocketError: ``other-protocol`` when a connection's first
                answer is not a desktop response (or it closed without one).
            ConnectError: (re)connecting failed.
            LocalProtocolError: ``CONNECTION_CLOSED`` after :meth:`aclose`.

        """
        async with self._lock:
            transport = self._transport
            if transport is None:
                transport = await self._reconnect()
            request_id, line = self._conn.send_request(op, params)
            transport.set_timeout(self.timeout if timeout is None else timeout)
            try:
                with first_reply(transport, silent_close=len(line) >= MAC_FRAME_CAP):
                    await self._send(transport, line)
                    reply = self._conn.receive_line(await transport.receive_frame())
                    while reply.request_id != request_id:
                        reply = self._conn.receive_line(await transport.receive_frame())
            except BaseException:
                await self._drop()
                raise
            error = reply.response.error
            if error is not None:
                if self.dialect is None:
                    self.dialect = dialect_of_code(error.code)
                if not reply.response.has_id:  # Tauri closes after these
                    await self._drop()
            return reply.result()

    @staticmethod
    async def _send(transport: AsyncLineTransport, line: bytes) -> None:
        try:
            await transport.send(line)
        except TimeoutError:  # an OSError too, but no hang-up: the server did not read in time
            raise
        except SEND_FAILURES as exc:
            raise closed_while_sending(exc) from exc

    async def detect_dialect(self) -> Dialect:
        """Return the dialect of the server (calls ``identify`` once and caches it)."""
        if self.dialect is None:
            await self.identify()
        assert self.dialect is not None
        return self.dialect

    async def identify(self) -> o.MacIdentify | o.TauriIdentify:
        """Call ``identify``; also sets :attr:`dialect`."""
        result = await self.call("identify")
        self.dialect = dialect_of_identify(result)
        if self.dialect is Dialect.TAURI:
            return convert_result(result, o.TauriIdentify, "identify")
        return convert_result(result, o.MacIdentify, "identify")

    async def sheds_list(self, *, host: str | None = None) -> o.MacShedsList | o.TauriShedsList:
        """Call ``sheds.list``: typed ``Shed`` rows (mac filters by ``host``; Tauri ignores it)."""
        dialect = await self.detect_dialect()
        result = await self.call("sheds.list", {} if host is None else {"host": host})
        if dialect is Dialect.TAURI:
            return convert_result(result, o.TauriShedsList, "sheds.list")
        return convert_result(result, o.MacShedsList, "sheds.list")

    async def rc_list(
        self, *, host: str | None = None, shed: str | None = None
    ) -> o.RcSessionList | o.TauriRcList:
        """Call ``rc.list``: roost rows, or the ``RcSession`` table.

        The newer Tauri app answers roost rows with capabilities and machine rows;
        the mac app and v0.0.14's Tauri app answer ``RcSession`` rows.
        """
        params = {k: v for k, v in (("host", host), ("shed", shed)) if v is not None}
        result = await self.call("rc.list", params)
        if "capabilities" in result:
            return convert_result(result, o.TauriRcList, "rc.list")
        return convert_result(result, o.RcSessionList, "rc.list")

    async def machines_list(self) -> o.MachinesList:
        """Call ``machines.list`` (Tauri): every machine, reachable or not."""
        return convert_result(await self.call("machines.list"), o.MachinesList, "machines.list")

    async def roost_run(
        self,
        command: str,
        *,
        target: str | None = None,
        machine: str | None = None,
        workdir: str | None = None,
    ) -> o.RoostRunResult:
        """Call ``roost.run``: open a tab running ``command`` (split on ASCII whitespace).

        Raises:
            ValueError: neither ``target`` nor ``machine`` was given.
            DesktopError: ``bad_request`` (blank command, ...) or ``action_failed``.

        """
        params = launch_params(
            "", target=target, machine=machine, workdir=workdir, display_name=None
        )
        del params["kind"]
        params["command"] = command
        return convert_result(await self.call("roost.run", params), o.RoostRunResult, "roost.run")

    async def roost_launch(
        self,
        kind: str,
        *,
        target: str | None = None,
        machine: str | None = None,
        workdir: str | None = None,
        display_name: str | None = None,
    ) -> o.SessionRow:
        """Call ``roost.launch``; returns the opened tab's row.

        Raises:
            ValueError: neither ``target`` nor ``machine`` was given.
            DesktopError: ``bad_request`` or ``action_failed``.

        """
        params = launch_params(
            kind, target=target, machine=machine, workdir=workdir, display_name=display_name
        )
        return convert_result(await self.call("roost.launch", params), o.SessionRow, "roost.launch")

    async def craze_create(
        self,
        machine: str,
        cwd: str,
        *,
        provider: str | None = None,
        prompt: str | None = None,
        ticket: CreateTicket | None = None,
    ) -> o.CrazeCreateResult:
        """Call ``craze.create`` with the request-id lifecycle built in.

        Pass the same ``ticket`` to retry after ``outcome_unknown``: it resends
        the kept id, so a create that did run is replayed, never doubled. A
        fresh ticket (the default) mints a new id.

        Raises:
            DesktopError: a refusal, or ``outcome_unknown`` (the ticket keeps its id).

        """
        ticket = CreateTicket() if ticket is None else ticket
        request_id = ticket.submit(os.urandom(8))
        params = params_dict(
            o.CrazeCreateParams(
                machine=machine, cwd=cwd, provider=provider, prompt=prompt, request_id=request_id
            )
        )
        try:
            result = await self.call("craze.create", params)
        except DesktopError as exc:
            ticket.answered(exc)
            raise
        except BaseException:
            ticket.answered(DesktopError("outcome_unknown", "the answer was lost"))
            raise
        ticket.answered(None)
        return convert_result(result, o.CrazeCreateResult, "craze.create")

    async def approval_decide(
        self,
        approval_id: str,
        decision: str,
        *,
        scope: str | None = None,
        ttl: str | None = None,
        persist: bool = False,
    ) -> None:
        """Call ``approval.decide`` (``decision`` approve|deny).

        Raises:
            DesktopError: ``invalid-param``/``bad_request``, or an unknown approval.

        """
        params = params_dict(
            o.ApprovalDecideParams(
                id=approval_id, decision=decision, scope=scope, ttl=ttl, persist=persist
            )
        )
        await self.call("approval.decide", params)

    async def dashboard_dump(self) -> o.DashboardDump:
        """Call ``dashboard.dump`` (Tauri UI truth): rows, host_errors, empty state."""
        return convert_result(await self.call("dashboard.dump"), o.DashboardDump, "dashboard.dump")

    async def aclose(self) -> None:
        """Close the connection for good (later calls raise); idempotent."""
        self._closed = True
        await self._drop()
