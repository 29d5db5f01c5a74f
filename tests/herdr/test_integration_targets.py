# ruff: noqa: E501 - expectations read best one a line
"""integration.install / uninstall for every target herdr ships, in a temp home.

Each case is herdr's own steps (herdrdev/herdr src/integration/targets.rs,
actions.rs, env.rs, config_edit.rs, opencode_config.rs@1c76079f): install,
re-install (identical files), uninstall (the user's own content intact, herdr's
files gone), malformed config (herdr's message), an override outside the home
(refused, nothing written there).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import typing
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest

from shedproto import herdr
from shedproto.clients.herdr import AsyncHerdrClient
from shedproto.herdr._integration_edits import agent_dir
from shedproto.herdr._integrations import IntegrationError
from shedproto.servers.herdr import HerdrServer
from shedproto.servers.herdr import _integration_targets as targets

ENV = {"PATH": "/usr/bin:/bin"}
USER_GROUP = {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}


@dataclass(frozen=True)
class Case:
    """One target: its dir under home, the user's config file there, herdr's files."""

    target: str
    make: str  # the directory the agent's install would have created (under home)
    config: str  # the user's config file, relative to the agent dir ("" = none)
    user: str  # its text before install
    owned: tuple[str, ...]  # files herdr writes, relative to the agent dir
    malformed: str = ""
    error: str = ""  # herdr's message for `malformed`, {path} = the config path
    kept_after: str | None = None  # config text after uninstall when not `user` (JSON: compared parsed)
    extra: dict[str, str] = field(default_factory=dict)


def _hooks_json(event: str = "Stop") -> str:
    return json.dumps({"model": "x", "hooks": {event: [USER_GROUP]}})


CASES = [
    Case("claude", ".claude", "settings.json", _hooks_json(), ("hooks/herdr-agent-state.sh",), "{", "failed to parse {path}: "),
    Case("codex", ".codex", "hooks.json", _hooks_json("SessionStart"), ("herdr-agent-state.sh",), "[]", "codex hooks file at {path} must be a JSON object",
         extra={"config.toml": 'model = "o3"\n'}),
    Case("copilot", ".copilot", "settings.json", json.dumps({"hooks": {"SessionStart": [{"type": "command", "bash": "echo mine"}]}}), ("hooks/herdr-agent-state.sh",),
         '{"hooks": []}', "copilot settings hooks at {path} must be a JSON object"),
    Case("devin", ".config/devin", "config.json", _hooks_json("PreToolUse"), ("herdr-agent-state.sh",), '{"hooks": 1}', "devin settings hooks at {path} must be a JSON object"),
    Case("droid", ".factory", "settings.json", _hooks_json("SessionStart"), ("hooks/herdr-agent-state.sh",), "7", "droid settings at {path} must be a JSON object"),
    Case("qodercli", ".qoder", "settings.json", _hooks_json(), ("hooks/herdr-agent-state.sh",), '{"hooks": {"SessionStart": {}}}', "hook entries for SessionStart must be an array"),
    Case("qwen", ".qwen", "settings.json", _hooks_json("SessionStart"), ("hooks/herdr-agent-session.sh",), "{,}", "failed to parse {path}: "),
    Case("cursor", ".cursor", "hooks.json", json.dumps({"version": 1, "hooks": {"stop": [{"command": "echo mine"}]}}), ("herdr-agent-state.sh",),
         "[1]", "cursor hooks file at {path} must be a JSON object"),
    Case("mastracode", ".mastracode", "hooks.json", json.dumps({"Stop": [{"type": "command", "command": "echo mine"}]}), ("hooks/herdr-agent-state.sh",),
         "[]", "mastracode hooks file at {path} must be a JSON object"),
    Case("antigravity_cli", ".gemini/config", "hooks.json", json.dumps({"mine": {"Stop": [{"type": "command", "command": "echo mine"}]}}), ("hooks/herdr-agent-state.sh",),
         '"x"', "antigravity cli hooks file at {path} must be a JSON object"),
    Case("grok", ".grok", "hooks/mine.json", json.dumps({"hooks": {}}), ("hooks/herdr-agent-state.sh", "hooks/herdr.json")),
    Case("kimi", ".kimi-code", "config.toml", 'model = "k2"\n\n[[hooks]]\nevent = "Stop"\ncommand = "echo mine"\n', ("hooks/herdr-agent-state.sh",)),
    Case("hermes", ".hermes", "config.yaml", "model: x\nplugins:\n  enabled:\n    - mine\n", ("plugins/herdr-agent-state/plugin.yaml", "plugins/herdr-agent-state/__init__.py")),
    Case("opencode", ".config/opencode", "tui.jsonc", '{\n  // mine\n  "theme": "system",\n  "plugin": ["example"],\n}\n', ("plugins/herdr-agent-state.js", "herdr-tui-session.js"),
         '{"plugin": "x"}', "OpenCode TUI config plugin list at {path} must be an array"),
    Case("kilo", ".config/kilo", "plugin/mine.js", "export default {}\n", ("plugin/herdr-agent-state.js",)),
    Case("pi", ".pi/agent", "extensions/mine.ts", "export default 1\n", ("herdr-agent-state.ts",)),
    Case("omp", ".omp/agent", "extensions/mine.ts", "export default 1\n", ("herdr-omp-agent-state.ts",)),
]  # fmt: skip


def test_every_target_herdr_ships_has_a_case() -> None:
    # herdrdev/herdr src/api/schema/integrations.rs IntegrationTarget (protocol 22: no command_code)
    assert {case.target for case in CASES} == set(targets.TARGETS)
    assert set(targets.TARGETS) == set(typing.get_args(herdr.types.IntegrationTarget))


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def _setup(home: Path, case: Case) -> Path:
    (home / case.make).mkdir(parents=True)
    directory = Path(agent_dir(case.target, ENV, str(home)))
    for name, text in {case.config: case.user, **case.extra}.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text)
    return directory


def _same(text: str, expected: str, name: str) -> bool:
    if name.endswith(".json"):
        return bool(json.loads(text) == json.loads(expected))
    return text == expected


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.target)
def test_install_reinstall_uninstall(tmp_path: Path, case: Case) -> None:
    home = tmp_path / "home"
    directory = _setup(home, case)
    messages = targets.install(case.target, ENV, str(home))
    for name in case.owned:
        path = directory / name
        assert path.is_file(), name
        assert any(str(path) in m or str(path.parent) in m for m in messages), (name, messages)
        if name.endswith(".sh"):
            assert path.stat().st_mode & 0o111
            assert f"HERDR_INTEGRATION_ID={case.target}" in path.read_text()
    installed = _tree(home)
    again = targets.install(case.target, ENV, str(home))
    assert _tree(home) == installed  # re-install: byte-identical files
    assert again == messages or case.target == "omp"
    removed = targets.uninstall(case.target, ENV, str(home))
    assert all("no " not in m.split(" at ")[0] for m in removed if "legacy" not in m), removed
    for name in case.owned:
        assert not (directory / name).exists(), name
    config = directory / case.config
    assert _same(config.read_text(), case.kept_after or case.user, case.config), config.read_text()
    nothing = targets.uninstall(case.target, ENV, str(home))
    assert any(m.startswith("no ") for m in nothing), nothing


@pytest.mark.parametrize("case", [c for c in CASES if c.malformed], ids=lambda c: c.target)
def test_malformed_config_is_herdrs_error(tmp_path: Path, case: Case) -> None:
    home = tmp_path / "home"
    directory = _setup(home, case)
    config = directory / case.config
    config.write_text(case.malformed)
    with pytest.raises(IntegrationError) as refused:
        targets.install(case.target, ENV, str(home))
    assert str(refused.value).startswith(case.error.format(path=config))
    assert config.read_text() == case.malformed  # nothing rewritten


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.target)
def test_the_agents_own_hook_entries_stay(tmp_path: Path, case: Case) -> None:
    """What the user added beside herdr's entries survives install and uninstall."""
    home = tmp_path / "home"
    directory = _setup(home, case)
    targets.install(case.target, ENV, str(home))
    text = (directory / case.config).read_text()
    assert "mine" in text or case.target in ("grok", "kilo", "pi", "omp")
    targets.uninstall(case.target, ENV, str(home))
    assert "mine" in (directory / case.config).read_text() or case.target in ("grok", "kilo", "pi", "omp")


OVERRIDES = {
    "claude": "CLAUDE_CONFIG_DIR", "codex": "CODEX_HOME", "kimi": "KIMI_CODE_HOME",
    "copilot": "COPILOT_HOME", "hermes": "HERMES_HOME", "qodercli": "QODER_CONFIG_DIR",
    "qwen": "QWEN_HOME", "cursor": "CURSOR_CONFIG_DIR",
    "antigravity_cli": "ANTIGRAVITY_CLI_CONFIG_DIR", "grok": "GROK_HOME", "pi": "PI_CODING_AGENT_DIR",
    "omp": "PI_CONFIG_DIR", "devin": "XDG_CONFIG_HOME",
}  # fmt: skip


@pytest.mark.parametrize(("target", "var"), sorted(OVERRIDES.items()))
def test_an_override_outside_home_is_refused(tmp_path: Path, target: str, var: str) -> None:
    home, outside = tmp_path / "home", tmp_path / "real"
    home.mkdir()
    outside.mkdir()
    env = {**ENV, var: str(outside)}
    for action in (targets.install, targets.uninstall):
        with pytest.raises(IntegrationError) as refused:
            action(target, env, str(home))
        assert "outside the server's home" in str(refused.value)
        assert var in str(refused.value)
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("target", ["codex", "claude", "grok"])
def test_an_override_inside_home_and_tilde_are_followed(tmp_path: Path, target: str) -> None:
    # env.rs expand_tilde_path: "~/x" is <home>/x
    home = tmp_path / "home"
    (home / "alt").mkdir(parents=True)
    var = OVERRIDES[target]
    messages = targets.install(target, {**ENV, var: "~/alt"}, str(home))
    assert str(home / "alt") in messages[0]


def test_a_symlink_out_of_home_is_refused(tmp_path: Path) -> None:
    home, outside = tmp_path / "home", tmp_path / "real"
    home.mkdir()
    outside.mkdir()
    (home / ".codex").symlink_to(outside)
    with pytest.raises(IntegrationError, match="outside the server's home"):
        targets.install("codex", ENV, str(home))
    assert list(outside.iterdir()) == []


MISSING = {
    "claude": "claude directory not found at {}. install claude code first",
    "codex": "codex config directory not found at {}. install codex first",
    "copilot": "copilot config directory not found at {}. install github copilot cli first",
    "hermes": "hermes config directory not found at {}. install hermes agent first",
    "opencode": "opencode config directory not found at {}. install opencode first",
    "pi": "pi extension directory not found at {}. install pi first",
}


@pytest.mark.parametrize(("target", "message"), sorted(MISSING.items()))
def test_a_missing_agent_dir_is_herdrs_error(tmp_path: Path, target: str, message: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with pytest.raises(IntegrationError) as refused:
        targets.install(target, ENV, str(home))
    assert str(refused.value) == message.format(agent_dir(target, ENV, str(home)))
    assert list(home.iterdir()) == []


def test_mastracode_needs_no_prior_dir(tmp_path: Path) -> None:
    # targets.rs install_mastracode creates ~/.mastracode/hooks itself
    home = tmp_path / "home"
    home.mkdir()
    targets.install("mastracode", ENV, str(home))
    hooks = json.loads((home / ".mastracode" / "hooks.json").read_text())
    assert sorted(hooks) == sorted(["SessionStart", "UserPromptSubmit", "AgentStart", "PreToolUse", "PermissionRequest",
                                    "PermissionResult", "SubagentStart", "SubagentEnd", "Interrupt", "AgentEnd", "Stop"])  # fmt: skip
    assert hooks["Stop"][0]["timeout"] == 10_000


def test_codex_files_are_herdrs(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text('model = "o3"\n[features]\ncodex_hooks = true\n')
    targets.install("codex", ENV, str(home))
    hook = home / ".codex" / "herdr-agent-state.sh"
    hooks = json.loads((home / ".codex" / "hooks.json").read_text())
    assert hooks == {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": f"bash '{hook}' session", "timeout": 10}]}]}}
    # config_edit.rs build_codex_config_with_hooks: the deprecated key goes, hooks = true under [features]
    assert (home / ".codex" / "config.toml").read_text() == 'model = "o3"\n[features]\nhooks = true\n'


def test_copilot_entry_is_the_flat_shape(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".copilot").mkdir(parents=True)
    targets.install("copilot", ENV, str(home))
    hook = home / ".copilot" / "hooks" / "herdr-agent-state.sh"
    settings = json.loads((home / ".copilot" / "settings.json").read_text())
    assert settings == {"hooks": {"SessionStart": [{"type": "command", "bash": f"bash '{hook}'", "timeoutSec": 10}]}}


def test_kimi_block_and_version_gate(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".kimi-code").mkdir(parents=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    kimi = bin_dir / "kimi"
    kimi.write_text("#!/bin/sh\necho 'kimi, version 0.13.2'\n")
    kimi.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin"}
    with pytest.raises(IntegrationError) as refused:  # version.rs enforce_agent_version
        targets.install("kimi", env, str(home))
    assert str(refused.value) == ("kimi code 0.13.2 is too old: herdr hooks require kimi code 0.14.0 or newer. "
                                  "upgrade kimi code, then re-run install")  # fmt: skip
    assert list((home / ".kimi-code").iterdir()) == []
    kimi.write_text("#!/bin/sh\necho 'kimi, version 0.15.0'\n")
    messages = targets.install("kimi", env, str(home))
    assert messages[-1] == "requires kimi code 0.14.0 or newer"
    config = (home / ".kimi-code" / "config.toml").read_text()
    assert config.startswith("# >>> herdr kimi integration\n[[hooks]]\nevent = \"SessionStart\"\n")
    assert config.count("[[hooks]]") == 12
    assert config.endswith("# <<< herdr kimi integration\n")


def test_opencode_keeps_comments(tmp_path: Path) -> None:
    home = tmp_path / "home"
    case = next(c for c in CASES if c.target == "opencode")
    directory = _setup(home, case)
    targets.install("opencode", ENV, str(home))
    text = (directory / "tui.jsonc").read_text()
    assert "// mine" in text
    assert '"plugin": ["example", "./herdr-tui-session.js"]' in text
    targets.uninstall("opencode", ENV, str(home))
    assert (directory / "tui.jsonc").read_text() == case.user


def test_hermes_flow_list_and_empty_list(tmp_path: Path) -> None:
    from shedproto.herdr._integration_edits import hermes_plugin_enabled

    # config_edit.rs update_hermes_enabled_plugin: flow list rewritten as a block list
    assert hermes_plugin_enabled("plugins: [a, 'b']\n", True) == "plugins:\n  - herdr-agent-state\n  - a\n  - b\n"
    assert hermes_plugin_enabled("plugins:\n  - herdr-agent-state\n", False) == "plugins:\n"
    assert hermes_plugin_enabled("x: 1\nplugins:\n  enabled: []\n", True) == "x: 1\nplugins:\n  enabled:\n    - herdr-agent-state\n"
    assert hermes_plugin_enabled("", True) == "plugins:\n  enabled:\n    - herdr-agent-state\n"
    assert hermes_plugin_enabled("x: 1", False) == "x: 1"


def test_omp_refuses_the_pi_directory(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "agent").mkdir(parents=True)
    with pytest.raises(IntegrationError, match=r"^Pi and OMP resolve to the same extension directory"):
        targets.install("omp", {**ENV, "PI_CODING_AGENT_DIR": "~/agent"}, str(home))


def test_omp_removes_the_legacy_pi_extension(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ext = home / ".omp" / "agent" / "extensions"
    ext.mkdir(parents=True)
    (ext / "herdr-agent-state.ts").write_text("// HERDR_INTEGRATION_ID=pi\n")
    messages = targets.install("omp", ENV, str(home))
    assert messages[0] == f"removed legacy pi integration from omp extension directory at {ext / 'herdr-agent-state.ts'}"
    assert not (ext / "herdr-agent-state.ts").exists()


async def test_the_installed_hook_reports_to_the_pane(short_socket_dir: Path) -> None:
    """A herdr-installed codex hook run inside a pane reports the session to the server."""
    if shutil.which("python3") is None:
        pytest.skip("python3 is needed by the hook script")
    home = short_socket_dir / "home"
    (home / ".codex").mkdir(parents=True)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            server = HerdrServer(
                short_socket_dir / "h.sock", shell=["/bin/sh"], home=str(home),
                config_dir=str(short_socket_dir / "cfg"), environ=dict(ENV),
            )  # fmt: skip
            socket_path = await tg.start(server.serve)
            client = AsyncHerdrClient.for_socket(socket_path)
            installed = await client.integration_install("codex")
            assert installed.target == "codex"
            await client.workspace_create(cwd=str(short_socket_dir), focus=True)
            pane = (await client.pane_list()).panes[0]
            hook = home / ".codex" / "herdr-agent-state.sh"
            env = {**os.environ, "HERDR_ENV": "1", "HERDR_SOCKET_PATH": str(socket_path), "HERDR_PANE_ID": pane.pane_id}
            stdin = json.dumps({"hook_event_name": "SessionStart", "session_id": "s-1", "source": "startup"})
            done = await anyio.run_process(["sh", str(hook), "session"], input=stdin.encode(), env=env, check=False)
            assert done.returncode == 0, done.stderr
            got = (await client.pane_get(pane.pane_id)).pane
            assert got.agent_session is not None
            assert (got.agent_session.source, got.agent_session.value) == ("herdr:codex", "s-1")
            quiet = await anyio.run_process(["sh", str(hook), "session"], input=stdin.encode(),
                                            env={**env, "HERDR_ENV": ""}, check=False)  # fmt: skip
            assert quiet.returncode == 0
            with pytest.raises(herdr.HerdrApiError) as refused:
                await client.integration_install("cursor")
            assert refused.value.code == "integration_install_failed"
            assert refused.value.message.startswith("cursor config directory not found at")
            server.shutdown()


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_js_plugin_loads_and_stays_quiet_outside_herdr(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".config" / "kilo").mkdir(parents=True)
    targets.install("kilo", ENV, str(home))
    plugin = home / ".config" / "kilo" / "plugin" / "herdr-agent-state.js"
    script = (f"import('{plugin.as_uri()}').then(async (m) => {{ const hooks = await m.default();"
              " await hooks.event({ event: { type: 'session.created', properties: { info: { id: 's' } } } });"
              " console.log(typeof hooks.event); })")  # fmt: skip
    done = subprocess.run(["node", "-e", script], capture_output=True, text=True, timeout=60, check=False,
                          env={"PATH": os.environ.get("PATH", "")})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "function"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.target)
def test_state_follows_install_and_uninstall(tmp_path: Path, case: Case) -> None:
    # registry.rs integration_status_at: the version marker of the installed file
    home = tmp_path / "home"
    _setup(home, case)
    assert targets.state(case.target, ENV, str(home)) == "not_installed"
    targets.install(case.target, ENV, str(home))
    assert targets.state(case.target, ENV, str(home)) == "current"
    targets.uninstall(case.target, ENV, str(home))
    assert targets.state(case.target, ENV, str(home)) == "not_installed"


def test_an_old_marker_or_a_broken_grok_config_is_outdated(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".grok").mkdir()
    targets.install("codex", ENV, str(home))
    hook = home / ".codex" / "herdr-agent-state.sh"
    hook.write_text(hook.read_text().replace("HERDR_INTEGRATION_VERSION=8", "HERDR_INTEGRATION_VERSION=7"))
    assert targets.state("codex", ENV, str(home)) == "outdated"
    targets.install("grok", ENV, str(home))
    (home / ".grok" / "hooks" / "herdr.json").write_text("{}")
    assert targets.state("grok", ENV, str(home)) == "outdated"


async def test_integration_list_reports_labels_and_state(short_socket_dir: Path) -> None:
    home = short_socket_dir / "home"
    (home / ".cursor").mkdir(parents=True)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            server = HerdrServer(short_socket_dir / "h.sock", shell=["/bin/sh"], home=str(home),
                                 config_dir=str(short_socket_dir / "cfg"), environ=dict(ENV))  # fmt: skip
            client = AsyncHerdrClient.for_socket(await tg.start(server.serve))
            await client.integration_install("cursor")
            listed = {i.target: i for i in (await client.integration_list()).integrations}
            server.shutdown()
    assert (listed["cursor"].state, listed["cursor"].command, listed["cursor"].available) == ("current", "cursor-agent", True)
    assert (listed["antigravity_cli"].label, listed["antigravity_cli"].command) == ("antigravity-cli", "agy")
    assert listed["codex"].state == "not_installed"
