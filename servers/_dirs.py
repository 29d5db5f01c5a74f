"""Create missing directories with an exact mode, and undo exactly that on failure.

:func:`create_directories` is ``mkdir -p`` that gives *every* directory it
creates the requested mode (``os.makedirs`` gives the intermediate ones the
umask default) and never touches a directory that already existed. The
returned :class:`CreatedDirectories` can remove what was created, and only
that, when a later step fails.
"""

from __future__ import annotations

import contextlib
import errno
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CreatedDirectories", "create_directories"]


@dataclass(frozen=True)
class CreatedDirectories:
    """The directories one :func:`create_directories` call made, outermost first."""

    paths: tuple[Path, ...]
    ancestor: Path
    """The nearest directory that already existed (its times are restored by :meth:`undo`)."""
    ancestor_times_ns: tuple[int, int]

    def undo(self) -> None:
        """Remove the created directories (innermost first) if they are still empty.

        Best effort, never raises: a directory someone else filled in the
        meantime stays. The existing ancestor gets its access and
        modification times back, so a failed attempt leaves no trace there.
        """
        removed = False
        for directory in reversed(self.paths):
            try:
                os.rmdir(directory)
            except OSError:
                return
            removed = True
        if removed:
            with contextlib.suppress(OSError):
                os.utime(self.ancestor, ns=self.ancestor_times_ns)


def create_directories(path: str | os.PathLike[str], mode: int = 0o700) -> CreatedDirectories:
    """Create ``path`` and its missing parents, each with exactly ``mode`` (umask ignored).

    Directories that already exist, ``path`` included, keep their mode. One
    created concurrently by someone else counts as existing, not as ours.

    Raises:
        NotADirectoryError: something other than a directory is in the way
            (nothing was created).
        OSError: a directory could not be created or chmodded; whatever this
            call had created is removed again before the error propagates.

    """
    target = Path(path)
    missing: list[Path] = []
    current = target
    while not current.is_dir():
        if os.path.lexists(current):
            raise NotADirectoryError(errno.ENOTDIR, "not a directory", os.fspath(current))
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    info = os.stat(current)
    times = (info.st_atime_ns, info.st_mtime_ns)
    made: list[Path] = []
    try:
        for directory in reversed(missing):
            try:
                os.mkdir(directory, mode)
            except FileExistsError:
                if not directory.is_dir():
                    raise
                continue  # a concurrent creator's directory: not ours
            made.append(directory)
            os.chmod(directory, mode)  # ours: the umask must not change the mode
    except BaseException:
        CreatedDirectories(tuple(made), current, times).undo()
        raise
    return CreatedDirectories(tuple(made), current, times)
