"""``shedproto proxy`` / ``replay`` on the command line: strict exit, usage errors, help."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from shedproto.clients.cli import main
from shedproto.servers.herdr import HerdrServer

CLI = [sys.executable, "-m", "shedproto.clients.cli"]


async def test_strict_proxy_exits_1_at_the_first_deviation(
    herdr_server: HerdrServer, short_socket_dir: Path
) -> None:
    listen = short_socket_dir / "proxy.sock"
    command = [*CLI, "proxy", "--protocol", "herdr", "--listen", str(listen)]
    command += ["--upstream", str(herdr_server.path), "--strict", "--json"]
    with anyio.fail_after(30):
        async with await anyio.open_process(command) as process:
            assert process.stdout is not None
            ready = json.loads((await process.stdout.receive()).splitlines()[0])
            assert ready["listening"] == str(listen)
            async with await anyio.connect_unix(listen) as stream:
                await stream.send(b'{"id":"1","method":"no.such","params":{}}\n')
                answer = await stream.receive()
            rest = b""
            async for chunk in process.stdout:
                rest += chunk
            code = await process.wait()
    assert code == 1
    diagnostic = json.loads(rest.splitlines()[0])
    assert (diagnostic["kind"], diagnostic["direction"], diagnostic["path"]) == (
        "unknown_op",
        "c2s",
        "$.method",
    )
    assert b"invalid_request" in answer  # the bytes were relayed before the proxy stopped


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["proxy", "--protocol", "herdr", "--version", "7"], "herdr protocol 7 is not supported"),
        (["proxy", "--protocol", "agents-host", "--dialect", "mac"], "desktop protocol only"),
    ],
)
def test_proxy_usage_errors_are_one_line_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = main([*argv, "--listen", str(tmp_path / "l"), "--upstream", str(tmp_path / "u")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1
    assert message in err


def test_record_never_overwrites_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    existing = tmp_path / "mine.ndjson"
    existing.write_text("keep me")
    argv = ["proxy", "--protocol", "herdr", "--listen", str(tmp_path / "l")]
    code = main([*argv, "--upstream", str(tmp_path / "u"), "--record", str(existing)])
    assert code == 2
    assert "exists" in capsys.readouterr().err
    assert existing.read_text() == "keep me"


def test_replay_of_a_bad_cassette_is_one_line_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette = tmp_path / "bad.ndjson"
    cassette.write_text('{"cassette":"shedproto","format":3,"protocol":"herdr"}\n')
    code = main(["replay", "--cassette", str(cassette), "--listen", str(tmp_path / "l")])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("shedproto: error: ")
    assert "format 3 is not supported" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize("command", ["proxy", "replay", "check"])
def test_help_ends_with_an_example(command: str) -> None:
    result = subprocess.run([*CLI, command, "--help"], capture_output=True, text=True, check=True)
    example = result.stdout.split("examples:\n", 1)[1]
    assert example.strip().startswith("shedproto ")
    assert result.stdout.rstrip().endswith(example.rstrip())


CASSETTE = Path(__file__).parent / "cassettes" / "test_cassette_fixture" / "herdr-ping.ndjson"


@pytest.mark.parametrize(
    "argv",
    [
        ["proxy", "--protocol", "herdr", "--upstream", "/nonexistent/u.sock"],
        ["replay", "--cassette", str(CASSETTE)],
    ],
    ids=["proxy", "replay"],
)
def test_refused_listen_path_is_the_central_bind_failed_line(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    occupied = tmp_path / "not-a-socket"
    occupied.write_text("mine\n")
    code = main([*argv, "--listen", str(occupied), "--json"])
    out, err = capsys.readouterr()
    assert code == 1
    assert out == ""
    (line,) = err.splitlines()
    report = json.loads(line)["error"]
    assert report["code"] == "bind_failed"
    assert report["message"].count(str(occupied)) == 1
    assert occupied.read_text() == "mine\n"


def _default_sigint() -> None:
    # A test runner started in the background ignores SIGINT; the CLI's user does not.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 0)], ids=["ctrl-c", "sigterm"]
)
@pytest.mark.parametrize("command", ["proxy", "replay"])
def test_proxy_and_replay_exit_130_on_ctrl_c_and_0_on_sigterm(
    command: str, sig: int, code: int, tmp_path: Path
) -> None:
    """Regression (issue 27): both exited 0 on Ctrl-C; the CLI convention is 130."""
    listen = tmp_path / "l.sock"
    if command == "proxy":
        argv = ["proxy", "--protocol", "herdr", "--upstream", str(tmp_path / "u.sock")]
    else:
        argv = ["replay", "--cassette", str(CASSETTE)]
    process = subprocess.Popen(
        [*CLI, *argv, "--listen", str(listen)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,  # noqa: PLW1509 - resets one signal, nothing else
    )
    try:
        assert process.stdout is not None
        assert "Ctrl-C stops it" in process.stdout.readline()
        process.send_signal(sig)
        _out, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    assert (process.returncode, err) == (code, "")
    assert not listen.exists()
