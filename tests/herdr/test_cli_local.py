"""herdr's local commands through the CLI: ``completion``, ``config``, ``channel``, ``update``,
``--default-config`` and ``--skill`` (issue 26, item 4).

Source: herdrdev/herdr src/cli.rs:95-280,1015-1019, src/cli/completion.rs:1-87,
src/main.rs:590-690, src/update.rs:1096-1108,2077-2092 and src/config/io.rs:110-174@v0.8.2.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shedproto.clients.herdr_cli import run
from shedproto.clients.herdr_cli._local import SHELLS, command_words, completion_script
from shedproto.clients.herdr_cli._main import COMMANDS


def _run(*argv: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), env=env or {"HOME": "/nonexistent"}, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


USAGE = "usage: herdr completion <bash|elvish|fish|powershell|zsh>\n"


@pytest.mark.parametrize(
    ("argv", "code", "err"),
    [
        (["completion"], 2, USAGE),
        (["completion", "--help"], 0, USAGE),
        (["completion", "bash", "zsh"], 2, USAGE),
        (["completion", "tcsh"], 2, "unknown shell: tcsh\n" + USAGE),
    ],
)
def test_completion_usage_is_herdrs(argv: list[str], code: int, err: str) -> None:
    # src/cli/completion.rs:11-29,84-86@v0.8.2
    assert _run(*argv) == (code, "", err)


@pytest.mark.parametrize("shell", SHELLS)
def test_completion_prints_a_script_naming_every_command(shell: str) -> None:
    for spelling in ("completion", "completions"):  # src/cli.rs:113@v0.8.2
        code, out, err = _run(spelling, shell)
        assert (code, err) == (0, "")
        for name in [*COMMANDS, "server", "completion", "config", "update"]:
            assert name in out, name
        assert "read" in out  # a subcommand (pane read)


def _bash_complete(script: str, words: list[str]) -> list[str]:
    line = " ".join(words)
    program = (
        f"{script}\nCOMP_WORDS=({line})\nCOMP_CWORD={len(words) - 1}\n"
        '_herdr\nprintf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", program],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout.split()


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_the_bash_script_completes_commands_and_subcommands() -> None:
    script = _run("completion", "bash")[1]
    assert _bash_complete(script, ["herdr", "work"]) == ["workspace", "worktree"]
    assert "read" in _bash_complete(script, ["herdr", "pane", "re"])
    server = _bash_complete(script, ["herdr", "server", ""])
    assert {"stop", "reload-config"} <= set(server)
    assert _bash_complete(script, ["herdr", "pane", "read", ""]) == []


def test_completion_script_refuses_an_unknown_shell() -> None:
    with pytest.raises(ValueError, match="unknown shell"):
        completion_script("tcsh", command_words(COMMANDS))


def test_config_check_reports_ok_or_herdrs_parse_diagnostic(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    assert _run("config", "check", env=env) == (0, "config: ok\n", "")  # no file: defaults
    config = tmp_path / ".config" / "herdr" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[update]\nchannel = "preview"\n')
    assert _run("config", "check", env=env) == (0, "config: ok\n", "")
    config.write_text("[update\n")
    code, out, err = _run("config", "check", env=env)
    assert (code, err) == (1, "")
    lines = out.splitlines()
    assert lines[0] == "config: issues found"
    assert lines[1].startswith("config parse error: ")
    assert lines[1].endswith("; using defaults")
    assert _run("config", "check", "extra", env=env) == (2, "", "usage: herdr config check\n")


def test_herdr_config_path_overrides_the_config_dir(tmp_path: Path) -> None:
    bad = tmp_path / "custom.toml"
    bad.write_text("= nope\n")
    code, out, _ = _run("config", "check", env={"HERDR_CONFIG_PATH": str(bad)})
    assert code == 1
    assert out.startswith("config: issues found\n")


def test_config_without_a_subcommand_prints_herdrs_help() -> None:
    code, out, err = _run("config")
    assert (code, out) == (2, "")
    assert err.startswith("herdr config commands:\n  herdr config check")
    assert _run("config", "--help")[0] == 0


def test_config_reset_keys_and_channel_set_do_not_edit_the_users_config(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[keys]\nprefix = 'ctrl+a'\n")
    env = {"HERDR_CONFIG_PATH": str(config)}
    for argv in (["config", "reset-keys"], ["channel", "set", "preview"]):
        code, out, err = _run(*argv, env=env)
        assert (code, out) == (1, "")
        assert err.count("\n") == 1
        assert err.startswith(f"herdr: `herdr {' '.join(argv[:2])}` is not available")
        assert str(config) in err
    assert config.read_text() == "[keys]\nprefix = 'ctrl+a'\n"


def test_channel_show_reads_the_configured_channel(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    env = {"HERDR_CONFIG_PATH": str(config)}
    assert _run("channel", "show", env=env) == (0, "stable\n", "")  # herdr's default
    config.write_text('[update]\nchannel = "preview"\n')
    assert _run("channel", "show", env=env) == (0, "preview\n", "")
    assert _run("channel", "set", "nightly", env=env) == (
        2,
        "",
        "usage: herdr channel set <stable|preview>\n",
    )
    code, _, err = _run("channel", env=env)
    assert code == 2
    assert err.startswith("herdr channel commands:\n")


@pytest.mark.parametrize(
    ("argv", "code", "err"),
    [
        (["update", "--help"], 0, "usage: herdr update [--handoff]\n"),
        (
            ["update", "--now"],
            2,
            "unknown update option: --now\nusage: herdr update [--handoff]\n",
        ),
    ],
)
def test_update_usage_is_herdrs(argv: list[str], code: int, err: str) -> None:
    # src/update.rs:1096-1108 and src/main.rs:590-601@v0.8.2
    assert _run(*argv) == (code, "", err)


@pytest.mark.parametrize("argv", [["update"], ["update", "--handoff"]])
def test_update_cannot_be_offered_and_says_so_in_herdrs_wording(argv: list[str]) -> None:
    # herdr's form for an install it cannot update: src/update.rs:2077-2092@v0.8.2
    code, out, err = _run(*argv)
    assert (code, out) == (1, "")
    assert err.startswith("self-update is disabled for this herdr stand-in")
    assert err.count("\n") == 1


@pytest.mark.parametrize("flag", ["--default-config", "--skill"])
def test_the_files_built_into_herdr_are_refused_in_one_line(flag: str) -> None:
    code, out, err = _run(flag)
    assert (code, out) == (1, "")
    assert err.startswith(f"herdr: `herdr {flag}` is not available")
    assert err.count("\n") == 1
    assert _run(flag, "--version")[1].startswith("herdr ")  # --version comes first in herdr


def test_help_wins_over_the_other_launcher_flags() -> None:
    code, out, err = _run("--default-config", "--help")
    assert code == 0
    assert "usage: herdr" in out + err


def test_session_list_stop_and_delete(short_socket_dir: Path) -> None:
    # src/cli.rs:418-520,953-1013 and src/session.rs:187-330@v0.8.2
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERDR_")}
    env.update({"HOME": str(short_socket_dir), "XDG_CONFIG_HOME": str(short_socket_dir / "c")})
    base = short_socket_dir / "c" / "herdr"
    (base / "sessions" / "not a name").mkdir(parents=True)  # invalid names are not listed
    cli = [sys.executable, "-m", "shedproto.clients.cli", "herdr", "cli", "--session", "demo"]
    socket = base / "sessions" / "demo" / "herdr.sock"
    with subprocess.Popen(
        [*cli, "server"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as server:
        try:
            deadline = time.monotonic() + 30
            while not socket.is_socket():
                assert server.poll() is None, server.communicate()
                assert time.monotonic() < deadline, "herdr server did not bind in 30 s"
                time.sleep(0.05)
            code, out, err = _run("session", "list", "--json", env=env)
            assert (code, err) == (0, "")
            assert json.loads(out) == {
                "sessions": [
                    {
                        "name": "default",
                        "default": True,
                        "running": False,
                        "socket_path": str(base / "herdr.sock"),
                        "session_dir": str(base),
                    },
                    {
                        "name": "demo",
                        "default": False,
                        "running": True,
                        "socket_path": str(socket),
                        "session_dir": str(base / "sessions" / "demo"),
                    },
                ]
            }
            table = _run("session", "list", env=env)[1].splitlines()
            assert table[0].split() == ["name", "status", "directory", "socket"]
            assert table[2].split()[:2] == ["demo", "running"]
            assert _run("session", "stop", "demo", env=env) == (0, "stopped session demo\n", "")
            assert server.wait(timeout=30) == 0
        finally:
            if server.poll() is None:
                server.kill()
            server.communicate()
    code, out, err = _run("session", "stop", "demo", "--json", env=env)
    assert (code, out) == (1, "")
    error = json.loads(err)["error"]
    assert error["code"] == "session_stop_failed"
    assert error["message"].startswith(
        f"session demo is not running or cannot be reached at {socket}: "
    )
    code, _, err = _run("session", "stop", "../x", env=env)
    assert (code, json.loads(err)["error"]["code"]) == (1, "invalid_session_name")
    code, out, err = _run("session", "delete", "demo", env=env)
    assert (code, out, err.count("\n")) == (1, "", 1)
    assert (base / "sessions" / "demo").is_dir()  # a directory this tool did not create stays
    assert _run("session", "stop", env=env) == (
        2,
        "",
        "usage: herdr session stop <name> [--json]\n",
    )
    code, _, err = _run("session", env=env)
    assert code == 2
    assert err.startswith("herdr session commands:\n")
