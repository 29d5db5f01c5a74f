"""``shedproto herdr ...`` against the reference server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from shedproto import herdr
from shedproto.clients.cli import main
from shedproto.servers.herdr import HerdrServer


async def _cli(argv: list[str]) -> int:
    return await anyio.to_thread.run_sync(main, argv)


async def test_ping_call_and_subscribe(
    herdr_server: HerdrServer, capsys: pytest.CaptureFixture[str]
) -> None:
    sock = str(herdr_server.path)
    herdr_server.replay = herdr.replay_rule(21)  # `subscribe` below replays the earlier event
    with anyio.fail_after(30):
        assert await _cli(["herdr", "ping", "--socket", sock, "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert (report["protocol"], report["compatible"], report["version"]) == (22, True, "0.9.5")

        assert await _cli(["herdr", "ping", "--socket", sock]) == 0
        assert "protocol 22 (compatible" in capsys.readouterr().out

        assert (
            await _cli(
                [
                    "herdr",
                    "call",
                    "workspace.create",
                    "--socket",
                    sock,
                    "--params",
                    '{"label":"cli"}',
                ]
            )
            == 0
        )
        created = json.loads(capsys.readouterr().out)
        assert created["type"] == "workspace_created"
        assert created["workspace"]["label"] == "cli"

        # k=v like desktop call; --json wraps the result with the method
        assert (
            await _cli(
                ["herdr", "call", "workspace.create", "label=kv", "--socket", sock, "--json"]
            )
            == 0
        )
        report = json.loads(capsys.readouterr().out)
        assert report["method"] == "workspace.create"
        assert report["result"]["workspace"]["label"] == "kv"

        assert (
            await _cli(
                ["herdr", "subscribe", "workspace.created", "--socket", sock, "--count", "1"]
            )
            == 0
        )
        name, _, data = capsys.readouterr().out.splitlines()[0].partition(" ")
        assert name == "workspace_created"
        assert json.loads(data)["type"] == "workspace_created"
        one_event = ["herdr", "subscribe", "workspace.created", "--socket", sock, "--count", "1"]
        assert await _cli([*one_event, "--json"]) == 0
        line = json.loads(capsys.readouterr().out.splitlines()[0])
        assert line["event"] == "workspace_created"

        assert await _cli(["herdr", "call", "pane.get", "--socket", sock, "pane_id=w9:p9"]) == 1
        assert capsys.readouterr().err.startswith("shedproto: error: pane_not_found: ")

        # params that do not fit the method: a usage error, like bad JSON
        assert await _cli(["herdr", "call", "pane.read", "--socket", sock, "pane_id=1"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("shedproto: error: ")
        assert err.count("\n") == 1

        assert await _cli(["herdr", "call", "ping", "--socket", sock + ".missing", "--json"]) == 1
        assert json.loads(capsys.readouterr().err)["error"]["code"] == "connect_failed"


def test_call_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, message in [
        (["--params", "[1]"], "argument --params: must be a JSON object"),
        (["--params", "{"], "argument --params: not valid JSON"),
        (["bare"], "argument k=v: expected k=v, got 'bare'"),
    ]:
        with pytest.raises(SystemExit) as info:
            main(["herdr", "call", "ping", *argv])
        assert info.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("usage: shedproto herdr call ")
        assert err.splitlines()[-1].startswith(f"shedproto: error: {message}")


def test_methods_come_from_the_core(capsys: pytest.CaptureFixture[str]) -> None:
    from shedproto.herdr import DEFAULT_PROTOCOL, SUPPORTED_PROTOCOLS
    from shedproto.herdr import types as t

    for protocol in SUPPORTED_PROTOCOLS:
        assert main(["herdr", "methods", "--protocol", str(protocol), "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["protocol"] == protocol
        methods = {row["method"] for row in report["methods"]}
        assert methods == set(t.PROTOCOL_TABLES[protocol][1])
    assert main(["herdr", "methods"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(t.PROTOCOL_TABLES[DEFAULT_PROTOCOL][1])
    read = next(line for line in lines if line.startswith("pane.read "))
    assert "pane_id, source, lines?" in read
    unsupported = max(SUPPORTED_PROTOCOLS) + 100
    assert main(["herdr", "methods", "--protocol", str(unsupported)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: shedproto herdr methods")
    assert err.endswith(f"protocol {unsupported} is not one of "
                        f"{', '.join(map(str, SUPPORTED_PROTOCOLS))}\n")  # fmt: skip


async def test_group_without_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert await _cli(["herdr"]) == 2
    assert "subscribe" in capsys.readouterr().out


def _spawn(sock: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    argv = ["herdr", "serve", "--socket", str(sock), "--protocol", "20", "--json"]
    return subprocess.Popen(
        [sys.executable, "-m", "shedproto.clients.cli", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )


async def test_serve_command(short_socket_dir: Path) -> None:
    sock = short_socket_dir / "served.sock"
    env = {**os.environ, "SHELL": "/bin/sh"}
    process = await anyio.to_thread.run_sync(_spawn, sock, env)
    try:
        with anyio.fail_after(30):
            assert process.stdout is not None
            document = ""
            while not document.endswith("}\n"):
                line = await anyio.to_thread.run_sync(process.stdout.readline)
                assert line, "serve exited before reporting readiness"
                document += line.decode()
            assert (json.loads(document)["protocol"], json.loads(document)["version"]) == (
                20,
                "0.8.2",
            )
            from shedproto.clients.herdr import AsyncHerdrClient

            status = await AsyncHerdrClient.for_socket(sock, protocol=20).runtime_status()
            assert (status.protocol, status.version) == (20, "0.8.2")
            process.send_signal(signal.SIGINT)
            code = await anyio.to_thread.run_sync(process.wait)
            assert code == 130  # Ctrl-C: the shell convention; SIGTERM exits 0
            assert not sock.exists()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
