"""The reference shed-desktop control socket, in either dialect.

:class:`DesktopServer` binds a socket and answers every catalogue op from an
in-memory :class:`DesktopModel` that a test seeds and inspects::

    model = DesktopModel()
    model.add_shed("prod", "web")
    model.add_machine("mini").craze = CrazeSource()
    server = DesktopServer(path, dialect="tauri", model=model, test_mode=True)
    async with anyio.create_task_group() as tg:
        await tg.start(server.serve)
        ...                      # drive it with shedproto.clients.desktop
        server.shutdown()

Each connection is answered strictly in order, one request at a time
(pipelined requests included); many connections are served concurrently and
share the model. The model stands in for the app: a host can be made
unreachable (``host_errors``), a machine asleep (``detail`` verbatim),
sessions added by origin, craze answers lost or refused, dumps set.

Choices the real app leaves to its environment, made here:

* the implicit ``localhost`` machine exists; the known rc kinds are
  :data:`DEFAULT_KINDS`; an absent ``host`` on ``rc.*``/``shed.*`` means the
  first configured server, an unknown one is ``bad_request``
  (``invalid-param`` on mac);
* craze: the hub replays a request id's first answer for 10 minutes
  (failures too; other params under the same id are ``bad_request``), then
  keeps answering with a session that still runs; ``unavailable`` answers
  are never recorded; a retry under an id whose outcome is unknown is held
  (preflight refusals and ``unavailable`` keep it ``outcome_unknown``);
* deadlines: a connection idle for :data:`IDLE_TIMEOUT` seconds between
  requests is closed, and an answer that cannot be written within 30 s
  (a peer that stopped reading) ends the connection; the real servers have
  neither, so both are generous. Both ride one sliding deadline per
  connection: no timer is armed per request;
* ``roost.bootstrap`` takes ``model.bootstrap_seconds`` (default 0) within
  ``model.bootstraps.budget`` (600 s): later requests on its connection wait,
  other connections are answered meanwhile and refused for the same host;
* ``SHED_*_MOCK_UNREACHABLE_HOSTS`` (test mode only) makes the named servers
  unreachable, also when they are seeded after the server started.
"""

from __future__ import annotations

from ._app import DesktopApp
from ._model import (
    DEFAULT_KINDS,
    HOST_FAILURE_KINDS,
    Approval,
    CrazeFault,
    CrazeSource,
    DesktopModel,
    Host,
    Lane,
    LaunchedTab,
    Machine,
    Session,
    Shed,
)
from ._server import IDLE_TIMEOUT, DesktopServer

__all__ = [
    "DesktopServer",
    "DesktopApp",
    "DesktopModel",
    "Host",
    "Shed",
    "Machine",
    "CrazeSource",
    "CrazeFault",
    "Session",
    "LaunchedTab",
    "Lane",
    "Approval",
    "DEFAULT_KINDS",
    "HOST_FAILURE_KINDS",
    "IDLE_TIMEOUT",
]
