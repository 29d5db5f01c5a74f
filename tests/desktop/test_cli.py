"""The ``shedproto desktop`` commands."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from shedproto.clients.cli import main
from shedproto.clients.cli._params import json_object, merge_params, pair
from shedproto.testing._desktop import DesktopServerFactory


def test_params_like_shedctl() -> None:
    pairs = [
        pair(text)
        for text in ["n=3", "flag=true", "name=web", "list=[1,2]", 'quoted="7"', "text=a b"]
    ]
    params = merge_params(json_object('{"host":"prod","n":1}'), pairs)
    assert params == {
        "host": "prod",
        "n": 3,
        "flag": True,
        "name": "web",
        "list": [1, 2],
        "quoted": "7",
        "text": "a b",
    }
    with pytest.raises(argparse.ArgumentTypeError, match="JSON object"):
        json_object("[1]")
    with pytest.raises(argparse.ArgumentTypeError, match="empty key"):
        pair("=x")


def test_argument_without_equals_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    # shedctl silently drops "hostprod"; a typo must not vanish
    with pytest.raises(SystemExit) as info:
        main(["desktop", "call", "rc.list", "hostprod"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: shedproto desktop call")
    assert err.endswith("shedproto: error: argument k=v: expected k=v, got 'hostprod'\n")


def test_call_prints_sorted_result(
    desktop_server_factory: DesktopServerFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    handle = desktop_server_factory(dialect="tauri")
    handle.model.add_shed("prod", "web")
    code = main(["desktop", "call", "sheds.list", "--socket", str(handle.path)])
    out = capsys.readouterr().out
    assert code == 0
    row = json.loads(out)["sheds"][0]
    assert (row["host"], row["name"], row["status"]) == ("prod", "web", "running")
    assert row["repo"] is None
    assert json.loads(out)["host_errors"] == []
    assert out.index('"host_errors"') < out.index('"sheds"')


def test_call_error_exit_1_and_stderr(
    desktop_server_factory: DesktopServerFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    handle = desktop_server_factory(dialect="mac", test_mode=False)
    code = main(["desktop", "call", "policy.set", "rules=[]", "--socket", str(handle.path)])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.out == ""
    assert captured.err == (
        "shedproto: error: not-enabled: policy.set requires SHED_DESKTOP_TEST_MODE=1\n"
    )
    code = main(["desktop", "call", "x", "--json", "--socket", str(handle.path)])
    err = json.loads(capsys.readouterr().err)
    assert code == 1
    assert err["error"]["code"] == "unknown-op"


def test_call_usage_and_connect_errors(
    short_socket_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as bad_json:
        main(["desktop", "call", "identify", "--params", "nope"])
    assert bad_json.value.code == 2
    assert "shedproto: error: argument --params: not valid JSON" in capsys.readouterr().err
    code = main(["desktop", "call", "identify", "--socket", str(short_socket_dir / "none.sock")])
    assert code == 1
    err = capsys.readouterr().err
    assert err.startswith("shedproto: error: ")
    assert "none.sock" in err
    assert err.count("\n") == 1
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


def test_call_json_reports_op_and_result(
    desktop_server_factory: DesktopServerFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    handle = desktop_server_factory(dialect="tauri")
    code = main(["desktop", "call", "sheds.list", "--json", "--socket", str(handle.path)])
    assert code == 0
    assert json.loads(capsys.readouterr().out) == {
        "op": "sheds.list",
        "result": {"host_errors": [], "sheds": []},
    }


def test_ops_lists_the_core_catalogue(capsys: pytest.CaptureFixture[str]) -> None:
    from shedproto.desktop import CATALOGUE, Dialect

    assert main(["desktop", "ops", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert set(rows) == set(CATALOGUE)
    assert rows["policy.set"]["gate"] == {"mac": "test_only", "tauri": "test_only"}
    assert rows["terminal.open"]["gate"]["mac"] == "refused_in_test"
    assert main(["desktop", "ops", "--dialect", "mac", "--json"]) == 0
    mac = {row["name"] for row in json.loads(capsys.readouterr().out)}
    assert mac == {name for name, spec in CATALOGUE.items() if Dialect.MAC in spec.dialects}
    assert main(["desktop", "ops", "--dialect", "tauri"]) == 0
    lines = capsys.readouterr().out.splitlines()
    craze = next(line for line in lines if line.startswith("craze.create "))
    assert "machine, cwd?" in craze
    assert any(line.startswith("policy.set ") and "[test_only]" in line for line in lines)


def test_serve_release_flag_answers_like_v0_0_14(short_socket_dir: Path) -> None:
    """``serve --release 0.0.14``: identify without ``broker_mode`` (ipc.rs:116-125@5a762e8)."""
    path = short_socket_dir / "old.sock"
    command = [sys.executable, "-m", "shedproto.clients.cli", "desktop"]
    serve = [*command, "serve", "--dialect", "tauri", "--test-mode", "--release", "0.0.14"]
    with subprocess.Popen(
        [*serve, "--socket", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            assert proc.stdout is not None
            ready = proc.stdout.readline()
            assert ready.startswith(f"serving the tauri dialect on {path} (test mode on)")
            assert "; release 0.0.14;" in ready
            done = subprocess.run(
                [*command, "call", "identify", "--socket", str(path)],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            assert done.returncode == 0
            assert "broker_mode" not in json.loads(done.stdout)
        finally:
            proc.terminate()
            proc.communicate(timeout=10)
    assert proc.returncode == 0


def test_serve_release_flag_refuses_unknown_release() -> None:
    """An unknown ``--release`` is a usage error (exit 2), one line on stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "shedproto.clients.cli", "desktop", "serve", "--dialect", "mac",
         "--release", "9.9"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert "--release" in done.stderr
