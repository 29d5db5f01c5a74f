"""A tool driving ``herdr`` through the shim sees an agent typed into a pane, with no hooks.

The issue's first failure: ``herdr agent list`` never showed the agent the
tool typed. herdr finds it from the pane's foreground job
(herdrdev/herdr src/detect/mod.rs:225-250@1c76079f).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from shedproto.testing import HerdrShim

from ._standin import install_standin


def agents(shim: HerdrShim) -> list[dict[str, object]]:
    listed = shim.run("agent", "list")
    assert listed.returncode == 0, listed.stderr
    result = json.loads(listed.stdout)["result"]
    return list(result["agents"])


def test_agent_typed_into_a_pane_appears_and_goes(herdr_shim: HerdrShim, tmp_path: Path) -> None:
    standin = install_standin(tmp_path / "bin", "codex")
    created = herdr_shim.run("workspace", "create", "--cwd", str(tmp_path), "--focus")
    assert created.returncode == 0, created.stderr
    assert herdr_shim.run("pane", "run", "w1:p1", str(standin)).returncode == 0
    deadline = time.monotonic() + 30
    found: list[dict[str, object]] = []
    while time.monotonic() < deadline and not found:
        found = agents(herdr_shim)
    assert [(a["pane_id"], a["agent"]) for a in found] == [("w1:p1", "codex")]
    assert herdr_shim.run("pane", "run", "w1:p1", "exit").returncode == 0
    while time.monotonic() < deadline and found:
        found = agents(herdr_shim)
    assert found == []
