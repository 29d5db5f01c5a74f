"""Private directories and files on disk: create ``0700``/``0600``, check with ``lstat``.

The decision (symlink, type, owner, mode) is the core's
:func:`shedproto.connector.private_path_problem`; this module only gathers
the ``stat`` facts and raises :class:`PrivatePathError` with its message.
"""

from __future__ import annotations

import os
import stat
import sys

from shedproto.connector import PathKind, private_path_problem
from shedproto.servers._dirs import create_directories

__all__ = ["PrivatePathError", "check_private", "current_uid", "ensure_private_directory"]


class PrivatePathError(PermissionError):
    """A ledger or lock path is not private; ``str(error)`` is the real program's message.

    For example ``command ledger file permits access by other users: <path>``.
    Nothing was created or changed at the offending path.
    """


def current_uid() -> int | None:
    """Return the uid whose files count as ours, or ``None`` on Windows (no owner checks)."""
    return None if sys.platform == "win32" else os.getuid()


def check_private(label: str, kind: PathKind, path: str, info: os.stat_result) -> None:
    """Raise :class:`PrivatePathError` unless ``info`` (from ``lstat``/``fstat``) is private."""
    problem = private_path_problem(
        label,
        kind,
        path,
        is_symlink=stat.S_ISLNK(info.st_mode),
        is_directory=stat.S_ISDIR(info.st_mode),
        is_file=stat.S_ISREG(info.st_mode),
        uid=info.st_uid,
        mode=stat.S_IMODE(info.st_mode),
        current_uid=current_uid(),
    )
    if problem is not None:
        raise PrivatePathError(problem)


def ensure_private_directory(label: str, path: str) -> None:
    """Create ``path`` (and parents) with mode ``0700`` if needed, then check the final directory.

    Parent directories are not checked, as in the real program.

    Raises:
        PrivatePathError: the directory is a symlink, not a directory, owned by
            someone else or open to group/other.
        OSError: it could not be created.

    """
    if not os.path.lexists(path):
        create_directories(path, 0o700)  # every missing level 0700, as ``mkdir -p -m 0700``
    check_private(label, "directory", path, os.lstat(path))
