"""herdr's own command line over any herdr API socket, and the ``herdr`` shim that runs it.

::

    from shedproto.clients.herdr_cli import run, write_shim

    run(["workspace", "list"])          # prints herdr's JSON answer line, returns 0
    write_shim("/tmp/bin")              # /tmp/bin/herdr runs `shedproto herdr cli "$@"`

:func:`run` accepts herdr's client subcommands (``workspace``, ``tab``,
``pane``, ``agent``, ``worktree``, ``notification``, ``integration``,
``plugin``, ``api``, ``status``, ``server``) with herdr's flags, output and
exit codes (0 ok, 1 failure, 2 usage), resolving the socket as herdr does.
Each request is sent through the client's generic path, so a method the
library has no type for still goes out as herdr builds it.
"""

from __future__ import annotations

from ._main import COMMANDS, run
from ._shim import SHIM_MARKER, ShimRefused, shim_text, write_shim

__all__ = ["COMMANDS", "SHIM_MARKER", "ShimRefused", "run", "shim_text", "write_shim"]
