"""The longest AF_UNIX socket path per platform (``sockaddr_un.sun_path`` minus the NUL)."""

from __future__ import annotations

__all__ = ["max_socket_path_bytes"]


def max_socket_path_bytes(platform: str) -> int:
    """Return the longest usable AF_UNIX path in bytes on ``platform`` (a ``sys.platform``)."""
    return 103 if platform == "darwin" or platform.startswith(("freebsd", "openbsd")) else 107
