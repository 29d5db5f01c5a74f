"""Where the agent's sockets live: a pure function of (environment, platform, home)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath

from ._constants import APPROVAL_SOCKET_NAME, STATUS_SOCKET_NAME

__all__ = ["SOCKET_DIR_ENV", "approval_socket_path", "socket_dir", "status_socket_path"]

SOCKET_DIR_ENV = "SHED_HOST_AGENT_SOCKET_DIR"
"""The escape hatch for tests and side-by-side agents; wins over everything else."""


def socket_dir(env: Mapping[str, str], platform: str, home: str) -> PurePosixPath:
    """Resolve the socket directory exactly as shed-host-agent does.

    Order: ``$SHED_HOST_AGENT_SOCKET_DIR``; on macOS (``platform == "darwin"``)
    ``~/Library/Application Support/shed``; ``$XDG_RUNTIME_DIR/shed``;
    ``~/.local/share/shed``. Empty values count as unset. ``home`` is the
    user's home directory (``$HOME``); pass what the shell resolved. Never raises.
    """
    override = env.get(SOCKET_DIR_ENV, "")
    if override:
        return PurePosixPath(override)
    if platform == "darwin":
        return PurePosixPath(home, "Library", "Application Support", "shed")
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime:
        return PurePosixPath(runtime, "shed")
    return PurePosixPath(home, ".local", "share", "shed")


def status_socket_path(directory: str | PurePosixPath) -> PurePosixPath:
    """Return ``<directory>/host-agent-status.sock``."""
    return PurePosixPath(directory, STATUS_SOCKET_NAME)


def approval_socket_path(directory: str | PurePosixPath) -> PurePosixPath:
    """Return ``<directory>/host-agent.sock`` (the approval channel)."""
    return PurePosixPath(directory, APPROVAL_SOCKET_NAME)
