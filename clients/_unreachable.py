"""Why a Unix socket could not be reached, said once and plainly.

:class:`UnreachableSocketError` is the :class:`ConnectError` every client
raises when connecting fails: it names the path once and says what is there
(:class:`ConnectReason`), in one line, for example
``cannot connect to /run/x: it is a directory, not a socket``.
"""

from __future__ import annotations

import enum
import errno
import os
import stat
import sys

from shedproto._unix_paths import max_socket_path_bytes

__all__ = [
    "ConnectError",
    "ConnectReason",
    "UnreachableSocketError",
    "other_protocol",
    "unreachable",
]


class ConnectError(OSError):
    """The socket could not be reached; ``errno`` and ``filename`` say why and where."""


class ConnectReason(str, enum.Enum):
    """What is at a socket path that could not be connected to."""

    NOTHING = "nothing"
    """Nothing exists at the path (or a parent directory is missing)."""
    DIRECTORY = "directory"
    REGULAR_FILE = "regular-file"
    NOT_A_SOCKET = "not-a-socket"
    """Something else that is not a socket (a FIFO, a device)."""
    NOT_LISTENING = "not-listening"
    """A socket file that no server listens on (a stale socket)."""
    PERMISSION_DENIED = "permission-denied"
    TIMEOUT = "timeout"
    """A server is there but did not accept the connection in time."""
    PATH_TOO_LONG = "path-too-long"
    OTHER_PROTOCOL = "other-protocol"
    """A server answered, but it speaks another protocol."""
    OTHER = "other"


_SAYS = {
    ConnectReason.NOTHING: "nothing is there",
    ConnectReason.DIRECTORY: "it is a directory, not a socket",
    ConnectReason.REGULAR_FILE: "it is a regular file, not a socket",
    ConnectReason.NOT_A_SOCKET: "it is not a socket",
    ConnectReason.NOT_LISTENING: "a socket is there but no server is listening on it",
    ConnectReason.PERMISSION_DENIED: "permission denied",
    ConnectReason.TIMEOUT: "the server did not accept the connection in time",
    ConnectReason.OTHER_PROTOCOL: "the server there speaks another protocol",
}

_ERRNO = {
    ConnectReason.NOTHING: errno.ENOENT,
    ConnectReason.DIRECTORY: errno.ECONNREFUSED,
    ConnectReason.REGULAR_FILE: errno.ECONNREFUSED,
    ConnectReason.NOT_A_SOCKET: errno.ECONNREFUSED,
    ConnectReason.NOT_LISTENING: errno.ECONNREFUSED,
    ConnectReason.PERMISSION_DENIED: errno.EACCES,
    ConnectReason.TIMEOUT: errno.ETIMEDOUT,
    ConnectReason.PATH_TOO_LONG: errno.ENAMETOOLONG,
    ConnectReason.OTHER_PROTOCOL: errno.EPROTO,
}


class UnreachableSocketError(ConnectError):
    """Connecting to ``path`` failed; ``reason`` (:class:`ConnectReason`) says what is there.

    ``str()`` is one line naming the path once. ``errno`` is the connect
    error's (``ENOENT``, ``ECONNREFUSED``, ...) and ``filename`` the path, as
    for any :class:`ConnectError`.
    """

    def __init__(
        self, path: str, reason: ConnectReason, detail: str = "", *, code: int | None = None
    ) -> None:
        self.path = path
        self.reason = reason
        says = _SAYS.get(reason, detail)
        if detail and reason in _SAYS:
            says = f"{says} ({detail})"
        verb = "talk to" if reason is ConnectReason.OTHER_PROTOCOL else "connect to"
        self.message = f"cannot {verb} {path}: {says}"
        super().__init__(code or _ERRNO.get(reason, errno.EIO), self.message)
        self.filename = path

    def __str__(self) -> str:
        return self.message


def _reason_from_disk(path: str, code: int | None) -> ConnectReason:
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return ConnectReason.NOTHING
    except PermissionError:
        return ConnectReason.PERMISSION_DENIED
    except OSError:
        return ConnectReason.OTHER
    if stat.S_ISDIR(mode):
        return ConnectReason.DIRECTORY
    if stat.S_ISREG(mode):
        return ConnectReason.REGULAR_FILE
    if not stat.S_ISSOCK(mode):
        return ConnectReason.NOT_A_SOCKET
    return ConnectReason.NOT_LISTENING if code == errno.ECONNREFUSED else ConnectReason.OTHER


def unreachable(path: str, exc: BaseException) -> UnreachableSocketError:
    """Explain a failed connect to ``path`` (``exc`` is what connecting raised).

    Looks at the path on disk (``stat``) to say what is there; never raises.
    """
    code = exc.errno if isinstance(exc, OSError) else None
    limit = max_socket_path_bytes(sys.platform)
    size = len(os.fsencode(path))
    if size > limit:
        return UnreachableSocketError(
            path,
            ConnectReason.PATH_TOO_LONG,
            f"the path is {size} bytes; a Unix socket path may have at most {limit}",
        )
    if isinstance(exc, TimeoutError) or code in (errno.ETIMEDOUT, errno.EAGAIN):
        return UnreachableSocketError(path, ConnectReason.TIMEOUT, code=code)
    if code in (errno.EACCES, errno.EPERM):
        return UnreachableSocketError(path, ConnectReason.PERMISSION_DENIED, code=code)
    reason = _reason_from_disk(path, code)
    if reason is ConnectReason.OTHER:
        detail = os.strerror(code) if code else (str(exc) or type(exc).__name__)
        return UnreachableSocketError(path, reason, detail, code=code)
    return UnreachableSocketError(path, reason, code=code)


def other_protocol(path: str, detail: str) -> UnreachableSocketError:
    """Return the error for a server at ``path`` that speaks another protocol.

    For a connection's *first* reply that this protocol never sends (or a
    close without one); ``detail`` says what was wrong with it.
    """
    return UnreachableSocketError(path, ConnectReason.OTHER_PROTOCOL, detail)
