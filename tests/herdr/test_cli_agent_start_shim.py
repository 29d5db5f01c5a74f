"""``herdr agent start`` through the shim against the reference server.

The agent kind ``pi`` runs ``cat`` (a harmless program that holds the
terminal), so the server sees it start and reports it ready as herdr does.
Failures a hook causes (another agent, a blocked agent) are reported while
the command polls.
"""

from __future__ import annotations

import json
import subprocess
import time
from typing import Any

import pytest

from shedproto.clients.herdr import BlockingHerdrClient
from shedproto.herdr import HerdrApiError
from shedproto.herdr import types as t
from shedproto.testing import HerdrShim

LIMIT = 60.0


def answer(text: str) -> dict[str, Any]:
    lines = text.splitlines()
    assert len(lines) == 1, text  # herdr prints one compact JSON line
    decoded: dict[str, Any] = json.loads(lines[0])
    return decoded


def prepare(shim: HerdrShim, settle: float) -> str:
    """Make ``pi`` run cat with a ``settle`` s delay; return a fresh workspace's root pane."""
    server = shim.handle.server
    server.agent_commands["pi"] = "cat"
    server.agent_settle_delay = settle
    created = shim.run("workspace", "create", "--label", "agents")
    assert created.returncode == 0, created.stderr
    pane: str = answer(created.stdout)["result"]["root_pane"]["pane_id"]
    return pane


def test_agent_start_waits_until_ready_then_prints_the_agent(herdr_shim: HerdrShim) -> None:
    pane = prepare(herdr_shim, settle=0.2)
    done = herdr_shim.run("agent", "start", "bob", "--kind", "pi", "--pane", pane, "--", "-v")
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    line = answer(done.stdout)
    assert line["id"] == "cli:agent:start"
    assert line["result"]["type"] == "agent_started"
    assert line["result"]["argv"] == ["pi", "-v"]
    agent = line["result"]["agent"]
    assert (agent["name"], agent["agent"], agent["pane_id"]) == ("bob", "pi", pane)
    assert (agent["agent_status"], agent["interactive_ready"]) == ("idle", True)
    assert not agent.get("launch_pending", False)

    busy = herdr_shim.run("agent", "start", "eve", "--kind", "pi", "--pane", pane)
    assert (busy.returncode, busy.stdout) == (1, "")
    assert answer(busy.stderr)["error"]["code"] == "agent_pane_busy"

    split = herdr_shim.run("pane", "split", pane, "--direction", "right")
    other = answer(split.stdout)["result"]["pane"]["pane_id"]
    taken = herdr_shim.run("agent", "start", "bob", "--kind", "pi", "--pane", other)
    assert (taken.returncode, taken.stdout) == (1, "")
    assert answer(taken.stderr)["error"]["code"] == "agent_name_taken"


def wait_for_agent(client: BlockingHerdrClient, name: str) -> None:
    deadline = time.monotonic() + LIMIT
    while True:
        try:
            client.agent_get(name)
        except HerdrApiError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
        else:
            return


@pytest.mark.parametrize(
    ("agent", "state", "code", "message"),
    [
        ("codex", "idle", "agent_kind_mismatch", "expected pi, detected codex"),
        ("pi", "blocked", "agent_not_ready",
         "agent eve is blocked during startup and is not ready for prompts"),
    ],
)  # fmt: skip
def test_agent_start_reports_what_a_hook_reports_during_startup(
    herdr_shim: HerdrShim, agent: str, state: t.PaneAgentState, code: str, message: str
) -> None:
    pane = prepare(herdr_shim, settle=600.0)  # pending for the whole test
    command = ["herdr", "agent", "start", "eve", "--kind", "pi", "--pane", pane]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as run:
        client = BlockingHerdrClient.for_socket(herdr_shim.socket)
        wait_for_agent(client, "eve")
        client.pane_report_agent(pane, "hook", agent, state)
        out, err = run.communicate(timeout=LIMIT)
    assert (run.returncode, out) == (1, "")
    assert answer(err) == {"id": "cli:agent:start", "error": {"code": code, "message": message}}


def test_agent_start_times_out_and_frees_the_name(herdr_shim: HerdrShim) -> None:
    pane = prepare(herdr_shim, settle=600.0)  # never ready: the shortest timeout herdr allows
    timed_out = herdr_shim.run("agent", "start", "eve", "--kind", "pi", "--pane", pane,
                               "--timeout", "3001")  # fmt: skip
    assert (timed_out.returncode, timed_out.stdout) == (1, "")
    assert answer(timed_out.stderr) == {
        "id": "cli:agent:start",
        "error": {"code": "timeout", "message": "timed out waiting for agent startup"},
    }
    # the server's own deadline passed too: the pending name is released
    gone = herdr_shim.run("agent", "get", "eve")
    assert gone.returncode == 1
    assert answer(gone.stderr)["error"]["code"] == "agent_not_found"
