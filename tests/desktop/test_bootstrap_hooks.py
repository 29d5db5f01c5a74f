"""``roost.bootstrap``'s ``hooks``: the agent-hooks raise shed asks for, as the app reports it.

charliek/shed, read at these stored versions (lines counted on the stored text):

- ``desktop/tauri/src-tauri/src/roost_hosts.rs:1880-1894,1898-1911@0041e17``
  (``installed_json``, ``hooks_json``): ``hooks`` is ``null`` when the install ran no
  hooks step, else ``{client, applied, wired, refreshed, removed, skipped[{agent,
  reason}], errors[{agent, error}], error}``; the same two at
  ``roost_hosts.rs:3062-3076,3080-3093@9668981``, whose ``RoostHosts`` doc (777-810, the
  ``armed`` flag) names the raise, ``{agents: ROOST_WIRED_AGENTS, client}``;
- ``crates/shed-core/src/roost/bootstrap/hooks.rs@3170191``: ``HooksResult`` (89-105),
  ``applied`` (113-115: ``error`` being unset), ``failed`` (117-123) and
  ``wire_agent_hooks`` (163-178: a refusal is ``"<code>: <message>"`` with every list
  empty, the client label kept); the protocol-6 version of the same file (stored, its
  commit not named by the index) raises ``ROOST_WIRED_AGENTS`` = claude, codex, cursor,
  grok, opencode;
- ``roost/bootstrap/machines.rs:407-434@3170191`` (``Installed``): its ``hooks`` (433) is
  ``None`` only when shed started nothing, else the hooks step's result.

The host's answer is roost's, charliek/roost:

- ``crates/roost-session/src/agent_hooks.rs:108-148@b6243df`` (``reply``): ``wired``
  lists the agents this host wired and never announced (133-135);
- ``crates/roost-agent-install/src/error.rs:96-113,115-132@3de0a3f`` (``SkipReason``
  and its ``Display``): an agent whose config directory is absent is skipped
  ``not installed``.
"""

from __future__ import annotations

from typing import Any

from shedproto.desktop import ROOST_WIRED_AGENTS, Dialect, agent_hooks_reply, hooks_result
from shedproto.servers.desktop import DesktopModel

from ._helpers import answer


def test_shed_raises_roost_s_five_agents() -> None:
    assert ROOST_WIRED_AGENTS == ("claude", "codex", "cursor", "grok", "opencode")


def test_the_host_wires_present_agents_once_and_skips_absent_ones() -> None:
    first = agent_hooks_reply(present={"cursor", "claude"}, announced=set())
    assert first == {
        "wired": ["claude", "cursor"],
        "refreshed": [],
        "removed": [],
        "skipped": [
            {"agent": "codex", "reason": "not installed"},
            {"agent": "grok", "reason": "not installed"},
            {"agent": "opencode", "reason": "not installed"},
        ],
        "errors": [],
    }
    again = agent_hooks_reply(present={"cursor", "claude"}, announced={"claude", "cursor"})
    assert again["wired"] == []
    assert [skip["agent"] for skip in again["skipped"]] == ["codex", "grok", "opencode"]


def test_hooks_result_is_hooks_json() -> None:
    outcome = agent_hooks_reply(present={"codex"}, announced=set())
    assert hooks_result("shed-desktop", outcome) == {
        "client": "shed-desktop",
        "applied": True,
        **outcome,
        "error": None,
    }
    assert hooks_result("shed-desktop", error="invalid-param: no agent named x") == {
        "client": "shed-desktop",
        "applied": False,
        "wired": [],
        "refreshed": [],
        "removed": [],
        "skipped": [],
        "errors": [],
        "error": "invalid-param: no agent named x",
    }


def _bootstrap(model: DesktopModel) -> dict[str, Any]:
    params = {"target": "mini", "fingerprint": "fp-machine:mini", "consent": True}
    reply = answer(Dialect.TAURI, model, "roost.bootstrap", params)
    assert reply["ok"] is True, reply
    hooks: dict[str, Any] = reply["result"]["hooks"]
    return hooks


def test_an_install_reports_what_the_host_wired_then_nothing_new() -> None:
    model = DesktopModel()
    model.add_machine("mini")
    model.agent_hooks.homes["machine:mini"] = {"claude", "opencode"}
    first = _bootstrap(model)
    assert (first["client"], first["applied"], first["error"]) == ("shed-desktop", True, None)
    assert first["wired"] == ["claude", "opencode"]
    assert [s["agent"] for s in first["skipped"]] == ["codex", "cursor", "grok"]
    second = _bootstrap(model)
    assert second["wired"] == []
    assert second["skipped"] == first["skipped"]


def test_a_host_without_agents_skips_all_five() -> None:
    model = DesktopModel()
    model.add_machine("mini")
    hooks = _bootstrap(model)
    assert hooks["wired"] == []
    assert hooks["skipped"] == [
        {"agent": agent, "reason": "not installed"} for agent in ROOST_WIRED_AGENTS
    ]
