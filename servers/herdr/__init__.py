"""The herdr reference server: herdr's JSON socket API over real PTY panes.

Start it inside a task group; it returns the socket path when it is ready::

    server = HerdrServer("/tmp/x/herdr.sock", protocol=21)
    path = await task_group.start(server.serve)
    ...
    server.shutdown()

What each method does here, and where this server knowingly differs from
herdr: ``docs/architecture/decisions/herdr.rst`` (*The reference server*).
"""

from __future__ import annotations

from ._handoff import ImportIdentity, run_handoff_import
from ._pty import PtyProcess
from ._server import AGENT_NAME_PATTERN, DEFAULT_AGENT_KINDS, MODELLED_METHODS, HerdrServer

__all__ = [
    "AGENT_NAME_PATTERN",
    "DEFAULT_AGENT_KINDS",
    "MODELLED_METHODS",
    "HerdrServer",
    "ImportIdentity",
    "PtyProcess",
    "run_handoff_import",
]
