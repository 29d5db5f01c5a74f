"""Scripted stand-in agents: programs named like each agent that print what it prints.

:func:`install_standin` writes ``<bin_dir>/<executable>``, a Python script
(run by this interpreter through its ``#!`` line, as npm's wrappers run
node) that shows the agent's idle screen and then reads lines from its
terminal: ``working``, ``blocked`` or ``idle`` shows that screen, ``exit``
ends it, and any other line is a prompt: the working screen for
``STANDIN_WORK_SECONDS`` (default 1), then idle. It never talks to the
herdr socket: whatever the server learns, it learns from the pane.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from shedproto.herdr._detect import agent_executable

from ._agent_screens import SCREENS

_BODY = r"""
import json, os, sys, time
SCREENS = json.loads(SCREENS_JSON)
def show(state):
    sys.stdout.write("\x1b[2J\x1b[H" + (SCREENS.get(state) or "").replace("\n", "\r\n"))
    sys.stdout.flush()
show("idle")
for line in sys.stdin:
    line = line.strip()
    if line == "exit":
        break
    if line in ("working", "blocked", "idle"):
        show(line)
        continue
    if not line:
        continue
    show("working")
    time.sleep(float(os.environ.get("STANDIN_WORK_SECONDS", "1")))
    show("idle")
"""


def install_standin(bin_dir: Path, kind: str) -> Path:
    """Write the stand-in for agent ``kind`` into ``bin_dir`` and return its path."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / agent_executable(kind)
    screens = json.dumps(SCREENS[kind])
    path.write_text(f"#!{sys.executable}\nSCREENS_JSON = {screens!r}\n{_BODY}")
    path.chmod(0o755)
    return path
