"""The ``herdr`` shim: an executable that runs ``shedproto herdr cli "$@"``."""

from __future__ import annotations

import os
import shlex
import sys
import tempfile
from pathlib import Path

__all__ = ["SHIM_MARKER", "ShimRefused", "shim_text", "write_shim"]

SHIM_MARKER = "# shedproto-herdr-shim: written by `shedproto herdr shim`"
"""The line that marks a ``herdr`` file as the shim's own (safe to replace)."""


class ShimRefused(Exception):  # noqa: N818 - a refusal, reported as one line
    """``DIR/herdr`` exists and is not a shim this tool wrote; nothing was changed."""


def shim_text(python: str | None = None) -> str:
    """Return the shim's source: a POSIX shell script exec-ing ``shedproto.clients.cli``."""
    interpreter = shlex.quote(os.path.abspath(python or sys.executable))
    return (
        "#!/bin/sh\n"
        f"{SHIM_MARKER}\n"
        f'SHEDPROTO_HERDR_BIN="$0" exec {interpreter} -m shedproto.clients.cli herdr cli "$@"\n'
    )


def write_shim(directory: str | os.PathLike[str], *, python: str | None = None) -> Path:
    """Write the executable ``herdr`` shim into ``directory`` and return its path.

    The directory is created (0700) when missing. An existing ``herdr`` is
    replaced only when it carries ``SHIM_MARKER``; the new file is written
    beside it and renamed into place, so a failure leaves the old one intact.

    Raises:
        ShimRefused: ``directory/herdr`` exists and is not the shim (left as is).
        OSError: the directory cannot be created or written.

    """
    folder = Path(directory)
    target = folder / "herdr"
    if target.exists() or target.is_symlink():
        try:
            ours = (
                target.is_file()
                and not target.is_symlink()
                and SHIM_MARKER in target.read_text(encoding="utf-8", errors="replace")
            )
        except OSError:
            ours = False
        if not ours:
            raise ShimRefused(f"{target} exists and was not written by shedproto; not replacing it")
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=".herdr-shim-", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(shim_text(python))
        os.chmod(temp, 0o755)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return target
