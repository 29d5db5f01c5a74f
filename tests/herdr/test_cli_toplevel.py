"""herdr's launcher commands through the CLI and the shim: ``herdr server`` in the foreground,
``--version``, unknown options, the TUI refusal, and a ``corral --fresh``-style start-up.

Source: herdrdev/herdr src/main.rs:559-800 and src/server/headless.rs:5045-5080@v0.8.2.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shedproto.clients.herdr_cli import run, write_shim


def _run(*argv: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run(list(argv), env=env or {"HOME": "/nonexistent"}, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_version_prints_herdrs_line() -> None:
    assert _run("--version", env={"SHEDPROTO_HERDR_CLIENT_VERSION": "0.9.5"}) == (
        0,
        "herdr 0.9.5\n",
        "",
    )
    assert _run("-V")[1].startswith("herdr ")


def test_unknown_option_and_command_are_herdrs_usage_errors() -> None:
    assert _run("--bogus") == (2, "", "unknown option: --bogus\nrun 'herdr --help' for usage\n")
    code, _, err = _run("frobnicate")
    assert code == 2
    assert "frobnicate" in err


@pytest.mark.parametrize("argv", [[], ["--no-session"], ["session", "attach", "main"]])
def test_the_tui_is_refused_with_herdrs_message_form(argv: list[str]) -> None:
    code, out, err = _run(*argv)
    assert (code, out) == (1, "")
    assert err.startswith("herdr: ")
    assert "herdr server" in err


def test_a_subcommand_flag_is_not_a_launcher_flag() -> None:
    code, _, err = _run("status", "server", "--json", env={"HERDR_SOCKET_PATH": "/nonexistent/s"})
    assert "unknown option" not in err
    assert code == 0


def _wait_for(path: Path, process: subprocess.Popen[str]) -> None:
    """Wait for the socket, as a tool that started ``herdr server`` does (bounded)."""
    deadline = time.monotonic() + 30
    while not path.is_socket():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "herdr server did not bind in 30 s"
        time.sleep(0.05)


def test_fresh_start_through_the_shim(short_socket_dir: Path, tmp_path: Path) -> None:
    """``corral --fresh``: start ``herdr server`` in the background, wait, use it, stop it."""
    bin_dir = tmp_path / "bin"
    write_shim(bin_dir)
    socket = short_socket_dir / "api.sock"
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "HERDR_SOCKET_PATH": str(socket),
    }
    env.pop("HERDR_SESSION", None)
    with subprocess.Popen(
        ["herdr", "server"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as server:
        try:
            _use_and_stop(server, socket, env)
        finally:
            if server.poll() is None:
                server.kill()
            server.communicate()


def _use_and_stop(server: subprocess.Popen[str], socket: Path, env: dict[str, str]) -> None:
    """Wait for the socket, use the server through the shim, stop it with ``herdr server stop``."""
    _wait_for(socket, server)

    def herdr(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["herdr", *args], env=env, capture_output=True, text=True, timeout=60, check=False
        )

    status = herdr("status", "server", "--json")
    assert status.returncode == 0, status.stderr
    assert '"running":true' in status.stdout
    created = herdr("workspace", "create", "--cwd", "/tmp", "--label", "fresh")
    assert created.returncode == 0, created.stderr
    second = herdr("server")
    assert second.returncode == 1
    assert second.stderr == f"error: herdr server is already running\napi socket: {socket}\n"
    assert herdr("server", "reload-config").returncode == 0
    stopped = herdr("server", "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert server.wait(timeout=30) == 0
    assert not socket.exists()


def test_herdr_session_server_listens_on_the_sessions_socket(short_socket_dir: Path) -> None:
    """``herdr --session NAME server`` binds that session's socket; ``--session NAME server
    stop`` finds it there."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERDR_")}
    env.update({"HOME": str(short_socket_dir), "XDG_CONFIG_HOME": str(short_socket_dir / "c")})
    env["PATH"] = os.environ.get("PATH", "")
    cli = [sys.executable, "-m", "shedproto.clients.cli", "herdr", "cli", "--session", "demo"]
    status = subprocess.run(
        [*cli, "status", "server", "--json"], env=env, capture_output=True, text=True, check=False
    )
    socket = Path(json.loads(status.stdout)["socket"])
    assert "demo" in str(socket)
    with subprocess.Popen(
        [*cli, "server"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as server:
        try:
            _wait_for(socket, server)
            stop = subprocess.run(
                [*cli, "server", "stop"], env=env, capture_output=True, text=True, check=False
            )
            assert stop.returncode == 0, stop.stderr
            assert server.wait(timeout=30) == 0
        finally:
            if server.poll() is None:
                server.kill()
            server.communicate()
