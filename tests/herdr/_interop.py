"""Where the interop tests find the independent herdr tools and a Python >= 3.13 to run them.

The wheels are unpacked (not installed) into the directories named by
``SHEDPROTO_HERDR_CLIENT`` and ``SHEDPROTO_CLAUDE_FOCUS``; .ci/run does this.
The tests are opt-in: they run only when the variable is set (a directory that
happens to exist at the benchmarks' default, ``/tmp/interop/...``, is not
enough) and skip with the reason otherwise.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
from pathlib import Path

__all__ = [
    "CLAUDE_FOCUS_DIR",
    "CLAUDE_FOCUS_READY",
    "CLAUDE_FOCUS_SKIP",
    "CLIENT_DIR",
    "CLIENT_READY",
    "CLIENT_SKIP",
    "PEER_VENV",
    "opted_in",
    "python313",
]

CLIENT_DIR = Path(os.environ.get("SHEDPROTO_HERDR_CLIENT", "/tmp/interop/herdr_client"))
CLAUDE_FOCUS_DIR = Path(os.environ.get("SHEDPROTO_CLAUDE_FOCUS", "/tmp/interop/claude_focus"))


def opted_in(variable: str, directory: Path, package: str) -> bool:
    """True when ``variable`` is set and ``directory/package`` is unpacked there."""
    return bool(os.environ.get(variable)) and (directory / package).is_dir()


CLIENT_READY = opted_in("SHEDPROTO_HERDR_CLIENT", CLIENT_DIR, "herdr_client")
"""herdr-client's tests may run: opted in with ``SHEDPROTO_HERDR_CLIENT`` and unpacked there."""
CLAUDE_FOCUS_READY = opted_in("SHEDPROTO_CLAUDE_FOCUS", CLAUDE_FOCUS_DIR, "claude_focus")
"""claude-focus's tests may run: opted in with ``SHEDPROTO_CLAUDE_FOCUS`` and unpacked there."""
CLIENT_SKIP = "herdr-client is opt-in: set SHEDPROTO_HERDR_CLIENT to its unpacked wheel"
"""The skip reason of herdr-client's tests (the wheel's steps: tests/herdr/_interop.py)."""
CLAUDE_FOCUS_SKIP = "claude-focus is opt-in: set SHEDPROTO_CLAUDE_FOCUS to its unpacked wheel"
"""The skip reason of claude-focus's tests."""
PEER_VENV = CLIENT_DIR.parent / "py313"
"""A Python 3.13 venv with shedproto's dependencies, preferred when present (the herdr
client benchmark against herdr-client runs both in one 3.13 process)."""


@functools.cache
def python313() -> str | None:
    """Find a Python >= 3.13 that really runs (a pyenv shim may not)."""
    candidates = [os.environ.get("SHEDPROTO_HERDR_PYTHON"), str(PEER_VENV / "bin" / "python")]
    candidates.append(shutil.which("python3.13"))
    pattern = os.path.expanduser("~/.pyenv/versions/3.1[3-9]*/bin/python3")
    candidates += sorted(glob.glob(pattern))
    for candidate in candidates:
        if not candidate:
            continue
        try:
            probe = subprocess.run(
                [candidate, "-c", "import sys; sys.exit(sys.version_info < (3, 13))"],
                capture_output=True,
                timeout=20,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.returncode == 0:
            return candidate
    return None
