from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from shedproto.clients.cli import main
from shedproto.servers import UnixServer
from tests.conftest import requires_shared

from ._agent import running
from ._shared import canonical, golden

CLI = [sys.executable, "-c", "import sys; from shedproto.clients.cli import main; sys.exit(main())"]


def run_cli(
    args: list[str],
    directory: Path,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[int, str, str]:
    monkeypatch.setenv("SHED_HOST_AGENT_SOCKET_DIR", str(directory))
    code = main(args)
    out, err = capfd.readouterr()
    return code, out, err


async def run_cli_async(
    args: list[str],
    directory: Path,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[int, str, str]:
    monkeypatch.setenv("SHED_HOST_AGENT_SOCKET_DIR", str(directory))
    code = await anyio.to_thread.run_sync(main, args)
    out, err = capfd.readouterr()
    return code, out, err


@requires_shared
async def test_status_text_golden(
    short_socket_dir: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    async with running(short_socket_dir, config_path="/abs/extensions.yaml", version="v1.2.3"):
        code, out, err = await run_cli_async(
            ["host-agent", "status"], short_socket_dir, capfd, monkeypatch
        )
    assert (code, err) == (0, "")
    lines = out.split("\n")
    assert lines[0] == f"shed-host-agent status (pid {os.getpid()}, v1.2.3)"
    assert lines[1] == "config:   /abs/extensions.yaml"
    assert lines[2].startswith("started:  20")
    lines[0] = "shed-host-agent status (pid <pid>, <version>)"
    lines[1] = "config:   <config_path>"
    lines[2] = "started:  <ts>"
    masked = "\n".join(lines).replace(str(short_socket_dir), "<dir>")
    assert masked == golden("test_status_running__test_status_text_masked_equal.json")


@requires_shared
async def test_status_json_golden(
    short_socket_dir: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    async with running(short_socket_dir, config_path="/abs/extensions.yaml"):
        code, out, err = await run_cli_async(
            ["host-agent", "status", "--json"], short_socket_dir, capfd, monkeypatch
        )
    assert (code, err) == (0, "")
    assert out.startswith('{\n  "schema": 1,\n')
    assert out.endswith("\n}\n")
    report = json.loads(out)
    assert isinstance(report["pid"], int)
    assert report["pid"] > 0
    assert report["config_path"] == "/abs/extensions.yaml"
    report.update(pid="<pid>", version="<version>", config_path="<config_path>")
    report.update(started_at="<ts>", written_at="<ts>")
    report["approval_channel"]["socket_path"] = report["approval_channel"]["socket_path"].replace(
        str(short_socket_dir), "<dir>"
    )
    expected = golden("test_status_running__test_status_json_masked_canonical_equal.json")
    assert canonical(report) == canonical(expected)


@requires_shared
def test_status_not_running_golden(
    short_socket_dir: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = golden("test_status_not_running__test_status_not_running_masked_stderr_equal.json")
    for args in (["host-agent", "status"], ["host-agent", "status", "-json"]):
        code, out, err = run_cli(args, short_socket_dir, capfd, monkeypatch)
        assert (code, out) == (1, "")
        assert err.replace(str(short_socket_dir), "<DIR>") == expected


@requires_shared
@pytest.mark.parametrize(
    ("args", "name"),
    [
        (["--bogus"], "test_status_badarg__test_status_bogus_arg_exit2_equal.json"),
        (["--live"], "test_status_badarg__test_status_live_removed_exit2_equal.json"),
        (["-live"], "test_status_badarg__test_status_live_removed_exit2_equal.json"),
    ],
)
def test_status_bad_arguments_golden(
    short_socket_dir: Path,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    name: str,
) -> None:
    code, out, err = run_cli(["host-agent", "status", *args], short_socket_dir, capfd, monkeypatch)
    assert (code, out, err) == (2, "", golden(name))


def test_status_help(
    short_socket_dir: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, _err = run_cli(
        ["host-agent", "status", "--help"], short_socket_dir, capfd, monkeypatch
    )
    assert code == 0
    assert "usage: shedproto host-agent status [--json]" in out


async def test_status_skew_and_garbage(
    short_socket_dir: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for body, message in [
        (
            b'{"schema":3}\n',
            "status: agent status schema is 3, this CLI expects 1 (version skew \u2014 "
            "match the shed-host-agent binary and CLI versions)\n",
        ),
        (b"garbage", "status: reading from the agent: "),
    ]:

        async def handler(stream: object, body: bytes = body) -> None:
            await stream.send(body)  # type: ignore[attr-defined]

        async with anyio.create_task_group() as tg:
            server = UnixServer(short_socket_dir / "host-agent-status.sock", handler, grace=0)
            await tg.start(server.serve)
            code, out, err = await run_cli_async(
                ["host-agent", "status"], short_socket_dir, capfd, monkeypatch
            )
            server.shutdown()
        assert (code, out) == (1, "")
        assert err.startswith(message)
        assert err.endswith("\n")
        assert err.count("\n") == 1


def _serve(directory: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CLI, "host-agent", "serve", "--socket-dir", str(directory), "--json", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_runs_until_signal_and_cleans_up(short_socket_dir: Path, sig: signal.Signals) -> None:
    config = short_socket_dir / "extensions.yaml"
    config.write_text("ssh:\n  approval:\n    policy: shed-desktop\napproval_timeout: 40s\n")
    directory = short_socket_dir / "agent"
    proc = _serve(directory, "--config", str(config))
    try:
        assert proc.stdout is not None
        ready = json.loads(proc.stdout.readline())
        assert ready["status_socket"] == str(directory / "host-agent-status.sock")
        from shedproto.clients.host_agent import read_status

        status = read_status(directory)
        assert status.config_path == str(config)
        assert status.gate_namespaces == ("ssh-agent",)
        proc.send_signal(sig)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    assert not (directory / "host-agent-status.sock").exists()
    assert not (directory / "host-agent.sock").exists()


def test_serve_config_error_exits_1(short_socket_dir: Path) -> None:
    config = short_socket_dir / "bad.yaml"
    config.write_text("approval_timeout: never\n")
    proc = _serve(short_socket_dir / "agent", "--config", str(config))
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 1
    assert out == ""
    assert "approval_timeout" in err or "invalid duration" in err
    assert not (short_socket_dir / "agent").exists()  # nothing was bound


async def test_watch_approves_and_prints(short_socket_dir: Path) -> None:
    async with running(short_socket_dir) as agent:
        agent.audit("egress", "tcp", "", "allow", detail="h:443 (1.2.3.4)")
        env = {**os.environ, "SHED_HOST_AGENT_SOCKET_DIR": str(short_socket_dir)}
        args = ["host-agent", "watch", "--approve", "--replay", "5", "--count", "3", "--json"]
        async with await anyio.open_process([*CLI, *args], env=env) as process:
            with anyio.fail_after(20):
                await agent.wait_for_consumer(client_name="shedproto-watch")
                decision = await agent.request_approval("ssh-agent", "sign", "web")
                agent.audit(
                    "ssh-agent", "sign", "web", "ok", detail="ssh-ed25519", decision=decision
                )
                assert process.stdout is not None
                out = b""
                async for chunk in process.stdout:
                    out += chunk
                assert await process.wait() == 0
    assert decision.approved is True
    frames = [json.loads(line) for line in out.splitlines()]
    assert [f["type"] for f in frames] == ["event", "approval_request", "event"]
    assert frames[0]["detail"] == "h:443 (1.2.3.4)"  # replayed
    assert frames[2]["decided_by"] == "user"


def test_watch_without_an_agent(
    short_socket_dir: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = run_cli(["host-agent", "watch"], short_socket_dir, capfd, monkeypatch)
    assert (code, out) == (1, "")
    path = short_socket_dir / "host-agent.sock"
    assert err == f"shedproto: error: cannot connect to {path}: nothing is there\n"
