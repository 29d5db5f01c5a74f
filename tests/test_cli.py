from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from shedproto import __version__
from shedproto.clients.cli import main
from shedproto.clients.cli._groups import GROUPS


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"shedproto {__version__}"


def test_help_lists_every_group(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for name in ["demo", "schemas", *GROUPS]:
        assert name in out


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: shedproto" in capsys.readouterr().err


def test_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["frobnicate"])
    assert info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


@pytest.mark.parametrize("group", list(GROUPS))
def test_group_without_command_prints_help_and_exits_2(
    group: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([group]) == 2
    assert f"usage: shedproto {group}" in capsys.readouterr().out


def test_demo_json_reports_every_step(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["demo", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0, report
    assert report["ok"] is True
    names = [step["name"] for step in report["steps"]]
    assert names[0] == "framing"
    assert all(step["ok"] for step in report["steps"])


def test_checked_in_schemas_are_current() -> None:
    root = Path(__file__).resolve().parents[1]
    assert main(["schemas", "export", "--check", "--dir", str(root / "schemas")]) == 0


@pytest.mark.parametrize(
    "command",
    [
        [str(Path(sys.executable).parent / "shedproto")],
        [sys.executable, "-m", "shedproto.clients.cli"],
    ],
    ids=["console-script", "python-m"],
)
def test_console_script_runs(command: list[str]) -> None:
    result = subprocess.run(
        [*command, "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0
    assert result.stdout.strip() == f"shedproto {__version__}"
