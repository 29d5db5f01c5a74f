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

Each connection is answered strictly in order, one request at a time; many
connections are served concurrently and share the model. The choices the
real app leaves to its environment, made here, are in the documentation:
``docs/architecture/decisions/desktop.rst`` (*The reference server*).
"""

from __future__ import annotations

from ._app import DesktopApp
from ._model import (
    DEFAULT_KINDS,
    HOST_FAILURE_KINDS,
    AgentHooksHosts,
    Approval,
    CrazeFault,
    CrazeProvider,
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
    "AgentHooksHosts",
    "CrazeProvider",
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
