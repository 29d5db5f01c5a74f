"""The CLI convention across every command: examples in --help, usage errors, completion, init."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shedproto.clients.cli import build_parser, main
from shedproto.clients.cli._agents_host_init import EXAMPLE_AGENT_MODULE, example_config
from shedproto.clients.cli._agents_host_run import run_help
from shedproto.clients.cli._completion import render, walk
from shedproto.clients.cli._convention import innermost

ROOT = Path(__file__).resolve().parents[1]


def _commands(
    parser: argparse.ArgumentParser, path: str = "shedproto"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, f"{path} {name}")


COMMANDS = dict(_commands(build_parser()))


@pytest.mark.parametrize("path", list(COMMANDS))
def test_every_help_ends_with_examples(path: str) -> None:
    parser = COMMANDS[path]
    if path == "shedproto agents-host run":
        text = run_help()  # the real host's usage, printed by the spec-exact parser
    elif path == "shedproto host-agent status":
        from shedproto.clients.cli._host_agent import STATUS_HELP

        text = STATUS_HELP  # the real CLI's own token rules; help is shedproto's
    else:
        text = parser.format_help()
    examples = text.rstrip("\n").rpartition("examples:\n")[2].splitlines()
    assert examples, f"{path} --help has no examples at its end"
    for line in examples:
        assert line.startswith("  "), line
        stripped = line.strip()
        assert stripped.startswith(("shedproto ", "SHED_", "CF_", "HERDR_", "--")), line


def test_bad_flag_on_a_subcommand_prints_that_subcommands_usage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # regression: argparse passed unknown flags up and printed the top-level usage
    with pytest.raises(SystemExit) as info:
        main(["herdr", "ping", "--bogus"])
    assert info.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("usage: shedproto herdr ping ")
    assert err[-1] == "shedproto: error: unrecognized arguments: --bogus"


def test_options_between_params_keep_the_params(
    capsys: pytest.CaptureFixture[str], short_socket_dir: Path
) -> None:
    # intermixed parsing: "call OP --socket S k=v" is not an unrecognized k=v
    code = main(["desktop", "call", "x", "--socket", str(short_socket_dir / "n.sock"), "a=1"])
    assert code == 1  # it got as far as connecting
    assert "n.sock" in capsys.readouterr().err


class GroupError(Exception):
    """Stands in for (Base)ExceptionGroup on every Python version: only ``exceptions`` counts."""

    def __init__(self, *exceptions: BaseException) -> None:
        super().__init__("group")
        self.exceptions = exceptions


def test_innermost_unwraps_single_member_groups() -> None:
    bind = OSError(98, "in use")
    assert innermost(GroupError(GroupError(bind))) is bind
    interrupt = KeyboardInterrupt()
    assert innermost(GroupError(ValueError("x"), GroupError(interrupt))) is interrupt
    assert innermost(GroupError(ValueError("x"), bind)) is bind
    several = GroupError(ValueError("x"), TypeError("y"))
    assert innermost(several) is several


def test_completion_tree_has_every_command_and_choice() -> None:
    nodes = {node.path: node for node in walk(build_parser())}
    assert set(nodes) == set(COMMANDS)
    assert nodes["shedproto desktop serve"].choices["--dialect"] == ["mac", "tauri"]
    assert nodes["shedproto completion"].positional_choices == ["bash", "zsh", "fish"]
    for shell in ("zsh", "fish"):
        script = render(build_parser(), shell)
        for path, node in nodes.items():
            assert path in script, (shell, path)
            for option in node.options:
                assert option.lstrip("-") in script, (shell, path, option)
    with pytest.raises(ValueError, match="tcsh"):
        render(build_parser(), "tcsh")


CASES = [
    (["shedproto", ""], {"demo", "desktop", "herdr", "completion"}),
    (["shedproto", "desktop", ""], {"call", "identify", "ops", "serve"}),
    (["shedproto", "desktop", "serve", "--dialect", ""], {"mac", "tauri"}),
    (["shedproto", "herdr", "call", "--so"], {"--socket"}),
    (["shedproto", "agents-host", "re"], {"receipt"}),
    (["shedproto", "completion", ""], {"bash", "zsh", "fish"}),
]


def test_herdr_cli_help_ends_with_examples(capsys: pytest.CaptureFixture[str]) -> None:
    # Regression (issue 29 item 6): the herdr stand-in's help ended without examples.
    assert main(["herdr", "cli", "--help"]) == 0
    captured = capsys.readouterr()
    text = captured.out + captured.err
    examples = text.rstrip("\n").rpartition("examples:\n")[2].splitlines()
    assert examples
    assert all(line.startswith(("  herdr ", "  HERDR_", "  shedproto ")) for line in examples)


def test_check_options_help_ends_with_examples(capsys: pytest.CaptureFixture[str]) -> None:
    # Regression (issue 29 item 6): `check-options --help` printed the real host's
    # usage (the spec-exact parser's) and no examples.
    assert main(["agents-host", "check-options", "--help"]) == 0
    text = capsys.readouterr().out
    examples = text.rstrip("\n").rpartition("examples:\n")[2].splitlines()
    assert examples
    assert all(line.startswith(("  shedproto ", "  CF_")) for line in examples), examples


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
@pytest.mark.parametrize(("words", "expected"), CASES)
def test_bash_completion_completes(words: list[str], expected: set[str]) -> None:
    script = render(build_parser(), "bash")
    array = " ".join(f"'{word}'" for word in words)
    program = (
        f"{script}\nCOMP_WORDS=({array}); COMP_CWORD={len(words) - 1}; _shedproto; "
        'printf "%s\\n" "${COMPREPLY[@]}"'
    )
    done = subprocess.run(
        ["bash", "-c", program], capture_output=True, text=True, timeout=30, check=True
    )
    assert expected <= set(done.stdout.split()), done.stdout


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
@pytest.mark.parametrize(("words", "expected"), CASES)
def test_zsh_completion_completes(words: list[str], expected: set[str]) -> None:
    # compadd only works inside a completion widget: a stand-in prints what it is given
    array = " ".join(f"'{word}'" for word in words)
    program = (
        'compdef() { :; }; compadd() { shift; print -l -- "$@"; }\n'
        f"{render(build_parser(), 'zsh')}\nwords=({array}); CURRENT={len(words)}; _shedproto"
    )
    done = subprocess.run(["zsh", "-c", program], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    offered = {word for word in done.stdout.split() if word.startswith(words[-1])}
    assert expected <= offered, done.stdout


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
@pytest.mark.parametrize(("words", "expected"), CASES)
def test_fish_completion_completes(words: list[str], expected: set[str], tmp_path: Path) -> None:
    script = tmp_path / "shedproto.fish"
    script.write_text(render(build_parser(), "fish"))
    line = " ".join(words)
    program = f"source {script}; complete -C {shlex.quote(line)}"
    done = subprocess.run(["fish", "-c", program], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    offered = {row.split("\t")[0] for row in done.stdout.splitlines()}
    assert expected <= offered, done.stdout


def test_completion_command_prints_the_script(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", "fish"]) == 0
    assert "complete -c shedproto" in capsys.readouterr().out


def test_init_writes_a_commented_config_that_check_config_accepts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "demo"
    assert main(["agents-host", "init", str(target)]) == 0
    out = capsys.readouterr().out
    config = target / "agents.jsonc"
    text = config.read_text()
    assert text == example_config(str(config))
    assert text.count("//") >= 5  # commented
    assert f'"-m", "{EXAMPLE_AGENT_MODULE}"' in text
    assert (target / "operator.key").stat().st_mode & 0o777 == 0o600
    for command in ("agents-host run --config", "agents-host submit", "agents-host receipt"):
        assert command in out
    assert "--state-dir" in out
    assert "--lock-dir" in out
    assert main(["agents-host", "check-config", "--json", str(config)]) == 0
    checked = json.loads(capsys.readouterr().out)
    (source,) = checked["config"]["sources"]
    assert (source["driver"], source["enabled"]) == ("acp", True)
    assert source["command"] == [sys.executable, "-m", EXAMPLE_AGENT_MODULE]


def test_init_never_overwrites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "agents.jsonc"
    config.write_text("// mine\n")
    (tmp_path / "operator.key").write_text("my key\n")
    assert main(["agents-host", "init", str(tmp_path)]) == 1
    assert capsys.readouterr().err == (
        f"shedproto: error: {config} already exists; not overwriting it\n"
    )
    assert config.read_text() == "// mine\n"
    assert (tmp_path / "operator.key").read_text() == "my key\n"


@pytest.mark.skipif(
    importlib.util.find_spec(EXAMPLE_AGENT_MODULE) is None,
    reason=f"{EXAMPLE_AGENT_MODULE} is not in this tree yet (the acp work ships it)",
)
def test_init_then_the_printed_commands_work(
    short_socket_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["agents-host", "init", str(short_socket_dir / "d")]) == 0
    lines = capsys.readouterr().out.splitlines()
    run, submit, receipt = (
        shlex.split(line)[1:] for line in lines if line.startswith("shedproto ")
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    host = subprocess.Popen(
        [sys.executable, "-m", "shedproto.clients.cli", *run],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert host.stdout is not None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = host.stdout.readline()
            assert line, host.stderr.read() if host.stderr else ""
            if line.startswith("Ready;"):
                break
        assert main(submit) == 0, capsys.readouterr()
        assert "succeeded" in capsys.readouterr().out
        assert main(receipt) == 0
        assert "try-1" in capsys.readouterr().out
        host.send_signal(signal.SIGTERM)
        assert host.wait(timeout=30) == 0
    finally:
        if host.poll() is None:
            host.kill()
        host.communicate(timeout=10)


def test_closed_stdout_ends_quietly() -> None:
    # regression guard: `shedproto herdr subscribe ... | head -1` must not print a traceback
    program = (
        "import sys\n"
        "from shedproto.clients.cli._convention import invoke\n"
        "def flood(args):\n"
        "    while True:\n"
        "        sys.stdout.write('x' * 65536)\n"
        "        sys.stdout.flush()\n"
        "sys.exit(invoke(flood, None))\n"
    )
    reader = subprocess.Popen(
        [sys.executable, "-c", program],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert reader.stdout is not None
    reader.stdout.read(10)
    reader.stdout.close()
    _, err = reader.communicate(timeout=30)
    assert (reader.returncode, err) == (1, b"")
