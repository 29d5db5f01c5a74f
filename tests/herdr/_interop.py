"""Where the interop tests find the independent herdr tools and a Python >= 3.13 to run them.

The wheels are unpacked (not installed) into the directories named by
``SHEDPROTO_HERDR_CLIENT`` (default ``/tmp/interop/herdr_client``) and
``SHEDPROTO_CLAUDE_FOCUS`` (default ``/tmp/interop/claude_focus``); .ci/run
does this. Tests that need them skip with the reason when they are missing.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
from pathlib import Path

__all__ = ["CLAUDE_FOCUS_DIR", "CLIENT_DIR", "PEER_VENV", "python313"]

CLIENT_DIR = Path(os.environ.get("SHEDPROTO_HERDR_CLIENT", "/tmp/interop/herdr_client"))
CLAUDE_FOCUS_DIR = Path(os.environ.get("SHEDPROTO_CLAUDE_FOCUS", "/tmp/interop/claude_focus"))
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
