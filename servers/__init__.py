"""Reference servers: thin anyio shells around the sans-IO cores.

Every server binds through :func:`bind_unix_socket` (the shared ceremony) and
serves through :class:`UnixServer`; protocol servers live in sub-modules.
"""

from __future__ import annotations

from ._idle import IdleDeadline
from ._unix import (
    BindError,
    BoundSocket,
    CannotBindError,
    ConnectionHandler,
    NotASocketError,
    SocketInUseError,
    SocketPathTooLongError,
    UnixServer,
    bind_unix_socket,
    max_socket_path_bytes,
)

__all__ = [
    "BindError",
    "BoundSocket",
    "CannotBindError",
    "ConnectionHandler",
    "IdleDeadline",
    "NotASocketError",
    "SocketInUseError",
    "SocketPathTooLongError",
    "UnixServer",
    "bind_unix_socket",
    "max_socket_path_bytes",
]
