"""The ``shedproto desktop`` commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from shedproto.clients.cli import main
from shedproto.clients.cli._desktop import parse_call_args
from shedproto.testing._desktop import DesktopServerFactory


def test_parse_call_args_like_shedctl() -> None:
    params = parse_call_args(
        ["n=3", "flag=true", "name=web", "list=[1,2]", 'quoted="7"', "bare", "text=a b"],
        '{"host":"prod","n":1}',
    )
    assert params == {
        "host": "prod",
        "n": 3,
        "flag": True,
        "name": "web",
        "list": [1, 2],
        "quoted": "7",
        "text": "a b",
    }
    with pytest.raises(ValueError, match="JSON object"):
        parse_call_args([], "[1]")
    with pytest.raises(ValueError, match="empty key"):
        parse_call_args(["=x"], None)


def test_call_prints_sorted_result(
    desktop_server_factory: DesktopServerFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    handle = desktop_server_factory(dialect="tauri")
    handle.model.add_shed("prod", "web")
    code = main(["desktop", "call", "sheds.list", "--socket", str(handle.path)])
    out = capsys.readouterr().out
    assert code == 0
    assert json.loads(out) == {
        "host_errors": [],
        "sheds": [{"name": "web", "server": "prod", "status": "running"}],
    }
    assert out.index('"host_errors"') < out.index('"sheds"')


def test_call_error_exit_1_and_stderr(
    desktop_server_factory: DesktopServerFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    handle = desktop_server_factory(dialect="mac", test_mode=False)
    code = main(["desktop", "call", "policy.set", "rules=[]", "--socket", str(handle.path)])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.out == ""
    assert captured.err == "error: not-enabled: policy.set requires SHED_DESKTOP_TEST_MODE=1\n"
    code = main(["desktop", "call", "x", "--json", "--socket", str(handle.path)])
    err = json.loads(capsys.readouterr().err)
    assert code == 1
    assert err["error"]["code"] == "unknown-op"


def test_call_usage_and_connect_errors(
    short_socket_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["desktop", "call", "identify", "--params", "nope"]) == 2
    code = main(["desktop", "call", "identify", "--socket", str(short_socket_dir / "none.sock")])
    assert code == 1
    assert "none.sock" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["desktop", "serve"])  # --dialect is required
    assert info.value.code == 2


def test_identify_command(
    desktop_server_factory: DesktopServerFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    handle = desktop_server_factory(dialect="mac")
    assert main(["desktop", "identify", "--json", "--socket", str(handle.path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["dialect"] == "mac"
    assert data["test_mode"] is True


def test_serve_subprocess_answers_then_stops(short_socket_dir: Path) -> None:
    path = short_socket_dir / "cli.sock"
    command = [sys.executable, "-m", "shedproto.clients.cli", "desktop"]
    with subprocess.Popen(
        [*command, "serve", "--dialect", "tauri", "--test-mode", "--socket", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            assert proc.stdout is not None
            ready = proc.stdout.readline()
            assert ready.startswith(f"serving the tauri dialect on {path} (test mode on)")
            done = subprocess.run(
                [*command, "call", "identify", "--socket", str(path)],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            assert done.returncode == 0
            assert json.loads(done.stdout)["platform"] == "tauri"
        finally:
            proc.terminate()
            proc.communicate(timeout=10)
    assert proc.returncode == 0
    assert not path.exists()
