"""Private-path rules for ledger and lock files: the decision, without touching the disk.

The file layer ``lstat``s (never following symlinks) the final directory and
file and asks :func:`private_path_problem` whether the result is acceptable:
no symbolic link, the right type, (off Windows) owned by the current user and
without group or other permission bits. Parent directories are not checked.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["PathKind", "private_path_problem"]

PathKind = Literal["directory", "file"]
"""What the final path must be."""


def private_path_problem(
    label: str,
    kind: PathKind,
    path: str,
    *,
    is_symlink: bool,
    is_directory: bool,
    is_file: bool,
    uid: int | None,
    mode: int | None,
    current_uid: int | None,
) -> str | None:
    """Return the real program's message for the first violated rule, or ``None`` if private.

    ``label`` is ``command ledger`` or ``process lock``; messages read
    ``<label> <kind> cannot be a symbolic link: <path>``, ``... is not a
    <kind>: <path>``, ``... has a different owner: <path>`` and ``...
    permits access by other users: <path>``. ``current_uid`` is ``None`` on
    Windows, where ownership and mode are not checked.
    """
    if is_symlink:
        return f"{label} {kind} cannot be a symbolic link: {path}"
    if not (is_directory if kind == "directory" else is_file):
        return f"{label} {kind} is not a {kind}: {path}"
    if current_uid is None:
        return None
    if uid is not None and uid != current_uid:
        return f"{label} {kind} has a different owner: {path}"
    if mode is not None and mode & 0o077:
        return f"{label} {kind} permits access by other users: {path}"
    return None
