"""Clients for shed-desktop's control socket: async (anyio) and blocking, either dialect.

::

    from shedproto.clients.desktop import BlockingDesktopClient

    with BlockingDesktopClient.connect() as desktop:        # SHED_DESKTOP_SOCKET, else the default
        info = desktop.identify()                    # desktop.dialect is now known
        rows = desktop.rc_list().sessions
        desktop.call("ui.navigate", {"pane": "machines"})

Failures raise :class:`~shedproto.desktop.DesktopError` with the wire
``code`` and ``message``; ``error.matches("not_enabled")`` matches either
dialect's spelling.
"""

from __future__ import annotations

from shedproto.desktop import DesktopError

from ._async import AsyncDesktopClient
from ._blocking import BlockingDesktopClient
from ._common import DEFAULT_TIMEOUT, default_socket_path, dialect_of_identify

__all__ = [
    "AsyncDesktopClient",
    "BlockingDesktopClient",
    "DesktopError",
    "DEFAULT_TIMEOUT",
    "default_socket_path",
    "dialect_of_identify",
]
