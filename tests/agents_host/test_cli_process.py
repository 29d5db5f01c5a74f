"""The host as a real process: CLI lines, signals, SIGKILL recovery, client commands."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from shedproto.clients.agents_host import BlockingAgentsHostClient
from shedproto.testing._agents_host import make_command
from shedproto.testing._connector import AgentsHostDirs

from .conftest import OWNER
from .host_cli import main as cli_main

HOST_CLI = Path(__file__).with_name("host_cli.py")
ROOT = Path(__file__).resolve().parents[2]


def write_config(dirs: AgentsHostDirs, **extra: Any) -> Path:
    config = {
        "schema": "commonfabric.agents-host.config",
        "ownerDid": OWNER,
        "collectionIntervalMs": 0,
        "sources": [
            {
                "id": "echo",
                "driver": "acp",
                "enabled": True,
                "command": [sys.executable, "-m", "shedproto.servers.agents_host.example_agent"],
            }
        ],
        **extra,
    }
    path = dirs.root / "agents.jsonc"
    path.write_text("// test host\n" + json.dumps(config))
    (dirs.root / "operator.key").write_bytes(b"key")
    return path


@contextmanager
def host_process(
    dirs: AgentsHostDirs, socket: Path, *extra: str
) -> Iterator[subprocess.Popen[str]]:
    config = write_config(dirs)
    env = {**os.environ, **dirs.env, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [
            sys.executable,
            str(HOST_CLI),
            "run",
            "--config",
            str(config),
            "--api-url",
            "http://localhost:8000",
            "--identity",
            str(dirs.root / "operator.key"),
            "--space",
            "did:key:space",
            "--socket",
            str(socket),
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=str(ROOT),
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)
        assert process.stdout is not None
        assert process.stderr is not None
        process.stdout.close()
        process.stderr.close()


def read_until_ready(process: subprocess.Popen[str]) -> list[str]:
    assert process.stdout is not None
    lines = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if line.startswith("Ready;"):
            return lines
    raise AssertionError(
        f"host did not become ready: {lines} {process.stderr.read() if process.stderr else ''}"
    )


def wait_for(predicate: Any, timeout: float = 10) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("condition not met in time")


def test_run_prints_startup_lines_and_stops_on_sigterm(
    agents_host_dirs: AgentsHostDirs, short_socket_dir: Path
) -> None:
    socket = short_socket_dir / "h.sock"
    with host_process(agents_host_dirs, socket) as process:
        lines = read_until_ready(process)
        assert lines[0] == "Agent host synchronized 0 sessions in did:key:space"
        assert lines[1] == "Command cell: commands/_owner"
        if agents_host_dirs.target is not None:  # the PostgreSQL case really runs on it
            assert "Target database: postgresql://postgres@" in "\n".join(lines)
        assert lines[-2] == f"API socket: {socket}"
        assert lines[-1] == "Ready; send SIGHUP to collect again, or SIGINT/SIGTERM to stop"
        with BlockingAgentsHostClient.connect(socket) as client:
            start = make_command(OWNER, "c1", type_="start", payload={"text": "hello"})
            result = client.submit(start, wait=True, timeout=20)
            assert result.receipt is not None
            assert result.receipt.status == "succeeded"
            assert result.receipt.result is not None
            agent_session = result.receipt.result["nativeSessionId"]
            key = f"echo/{agent_session}"
            wait_for(lambda: client.session(key).session is not None)
            session = client.session(key)
            assert session.session is not None
            assert [m.textPreview for m in session.session.recentMessages] == [
                "hello",
                "echo: hello",
            ]
            process.send_signal(signal.SIGHUP)

            def collected_on_sighup() -> bool:
                health = client.health().health
                return (
                    health is not None
                    and health.sync is not None
                    and (health.sync.reason == "SIGHUP" and health.sync.status == "complete")
                )

            wait_for(collected_on_sighup)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0
        assert process.stderr is not None
        errors = process.stderr.read()
        assert "SIGTERM received; shutting down" in errors
    assert not socket.exists()


def test_sigkill_between_claim_and_terminal_receipt(
    agents_host_dirs: AgentsHostDirs, short_socket_dir: Path
) -> None:
    socket = short_socket_dir / "k.sock"
    with host_process(agents_host_dirs, socket) as process:
        read_until_ready(process)
        with BlockingAgentsHostClient.connect(socket) as client:
            command = make_command(
                OWNER, "k1", type_="start", session="wanted", payload={"text": "hang forever"}
            )
            client.submit(command)
            claimed = wait_for(lambda: client.receipt("k1").receipt)
            assert claimed.status == "in-flight"
        process.kill()
        process.wait(timeout=10)
    with host_process(agents_host_dirs, socket) as process:
        read_until_ready(process)
        with BlockingAgentsHostClient.connect(socket) as client:
            recovered = client.receipt("k1").receipt
            assert recovered is not None
            assert recovered.status == "unknown"
            assert recovered.error is not None
            assert recovered.error.code == "orphaned-in-flight"
            # re-delivering the command never runs it again
            again = client.submit(command, wait=True, timeout=10)
            assert again.receipt == recovered
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0


def test_once_and_client_commands(
    agents_host_dirs: AgentsHostDirs, short_socket_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    socket = short_socket_dir / "o.sock"
    with host_process(agents_host_dirs, socket, "--once") as process:
        assert process.wait(timeout=30) == 0
        assert process.stdout is not None
        out = process.stdout.read().splitlines()
        assert out[0] == "Agent host synchronized 0 sessions in did:key:space"
        assert not any(line.startswith("Ready") for line in out)
    assert cli_main(["health", "--socket", str(socket)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("shedproto: error: ")
    assert str(socket) in err
    assert err.count("\n") == 1
    with host_process(agents_host_dirs, socket) as process:
        read_until_ready(process)
        command = json.dumps(make_command(OWNER, "x1", payload={"text": "hi"}))
        # the session x1 names does not exist at the agent: the prompt fails
        assert cli_main(["submit", command, "--wait", "--socket", str(socket)]) == 1
        assert "x1 failed" in capsys.readouterr().out
        assert cli_main(["receipt", "x1", "--json", "--socket", str(socket)]) == 0
        assert json.loads(capsys.readouterr().out)["status"] == "failed"
        assert cli_main(["health", "--socket", str(socket)]) == 0
        assert capsys.readouterr().out.startswith("status: ")
        assert cli_main(["sessions", "--all", "--json", "--socket", str(socket)]) == 0
        assert json.loads(capsys.readouterr().out)["bucket"] == "all"
        assert cli_main(["submit", "{nope", "--socket", str(socket)]) == 2  # as --params
        assert "shedproto: error: COMMAND is not valid JSON" in capsys.readouterr().err
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0


def test_run_option_errors(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("CF_API_URL", "CF_IDENTITY", "CF_SPACE"):
        monkeypatch.delenv(name, raising=False)
    assert cli_main(["run"]) == 1
    assert capsys.readouterr().err == "Agent host failed: missing required option: --config\n"
    assert cli_main(["run", "--config", "/nonexistent.jsonc", "--api-url", "nope"]) == 1
    assert capsys.readouterr().err == "Agent host failed: --api-url is not a valid URL\n"
    # the spec-exact parser, as the real host (connector.md 2.1-2.2), not argparse's exit 2
    assert cli_main(["run", "--bogus"]) == 1
    assert capsys.readouterr().err == "Agent host failed: unknown option: --bogus\n"
    assert cli_main(["run", "extra", "--config", "F"]) == 1
    assert capsys.readouterr().err == "Agent host failed: unexpected positional argument: extra\n"
    assert cli_main(["run", "--socket"]) == 1
    assert capsys.readouterr().err == "Agent host failed: missing value for option: --socket\n"


def test_run_help_shows_real_options_and_shedproto_additions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli_main(["run", "--help"]) == 0
    out = capsys.readouterr().out
    for option in ("--config", "--api-url", "--identity", "--space", "--once", "--no-debug-view"):
        assert option in out
    for extra in ("--socket", "--state-dir", "--lock-dir", "--json"):
        assert extra in out
    for variable in ("CF_API_URL", "XDG_STATE_HOME", "CF_AGENTS_HOST_LOCK_DIR"):
        assert variable in out
    assert "examples:" in out


def test_run_state_dir_lock_dir_and_json(
    agents_host_dirs: AgentsHostDirs, short_socket_dir: Path
) -> None:
    config = write_config(agents_host_dirs)
    state, locks = short_socket_dir / "st", short_socket_dir / "lk"
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("XDG_STATE_HOME", "CF_AGENTS_HOST_LOCK_DIR", "XDG_RUNTIME_DIR")
    }
    env["HOME"] = str(short_socket_dir / "home")
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-m", "shedproto.clients.cli", "agents-host", "run",
         "--config", str(config), "--api-url", "http://localhost:8000",
         "--identity", str(agents_host_dirs.root / "operator.key"), "--space", "did:key:space",
         "--state-dir", str(state), "--lock-dir", str(locks), "--once", "--json"],
        capture_output=True, text=True, env=env, cwd=str(ROOT), timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[0])
    assert report["ready"] is False  # --once never reports Ready
    assert report["socket"] == str(locks / "agents-host.sock")
    assert report["lines"][0] == "Agent host synchronized 0 sessions in did:key:space"
    assert any(path.name.endswith(".command-ledger.json") for path in state.iterdir())
    assert not (short_socket_dir / "home").exists()  # nothing went to the default state dir
