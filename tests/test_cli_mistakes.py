"""The CLI as a user meets it: a table of mistakes, each run through the CLI's ``main``.

Every row is a command with a wrong path, a dead server, a refused bind, bad
params or a bad flag. Each must exit with the convention's code (1 failure,
2 usage, or the mirrored real program's), print its error as exactly one line
with the one prefix (usage errors: the command's own usage first), and never
a traceback. Ctrl-C during long-running commands exits 130 (the daemons that
mirror a real one exit 0, as the real one does).

Every row runs in this process (``main`` with the user's environment and
working directory, stdio captured at the file descriptors); a representative
subset (one per kind of exit) also runs as a real process through the entry
point, as do the Ctrl-C cases.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "shedproto.clients.cli"]
PREFIX = "shedproto: error: "


@dataclass(frozen=True)
class Mistake:
    """One row: the argv (``{d}`` is the scratch directory), the exit code, the error line."""

    argv: tuple[str, ...]
    code: int
    message: str
    """A substring of the one error line (after the prefix)."""
    usage: str | None = None
    """For usage errors: the command whose usage must come first."""
    prefix: str = PREFIX
    quiet: bool = True
    """Nothing on stdout (``run`` prints the real host's startup lines first)."""
    once: bool = False
    """``message`` (a path) must occur exactly once in the error line."""


MISTAKES: dict[str, Mistake] = {
    # wrong paths
    "desktop-call-missing-socket": Mistake(
        ("desktop", "call", "sheds.list", "--socket", "{d}/none/x.sock"), 1, "{d}/none/x.sock"
    ),
    "desktop-identify-directory": Mistake(
        ("desktop", "identify", "--socket", "{d}/adir"), 1, "{d}/adir"
    ),
    "herdr-ping-regular-file": Mistake(
        ("herdr", "ping", "--socket", "{d}/file.txt"), 1, "{d}/file.txt"
    ),
    "agents-host-health-missing": Mistake(
        ("agents-host", "health", "--socket", "{d}/none.sock"), 1, "{d}/none.sock"
    ),
    "check-config-missing": Mistake(
        ("agents-host", "check-config", "{d}/none.jsonc"),
        1,
        "configuration file does not exist: {d}/none.jsonc",
    ),
    "ledger-missing": Mistake(
        ("agents-host", "ledger", "{d}/none.json"), 1, "command ledger does not exist"
    ),
    "watch-missing-dir": Mistake(
        ("host-agent", "watch", "--socket-dir", "{d}/nodir"), 1, "{d}/nodir/host-agent.sock"
    ),
    "init-existing-config": Mistake(
        ("agents-host", "init", "{d}/inited"), 1, "already exists; not overwriting it"
    ),
    "init-dir-is-a-file": Mistake(
        ("agents-host", "init", "{d}/file.txt"),
        1,
        "{d}/file.txt exists and is not a directory; choose another DIR",
        once=True,
    ),
    "init-parent-is-a-file": Mistake(
        ("agents-host", "init", "{d}/file.txt/sub"),
        1,
        "cannot create {d}/file.txt/sub: {d}/file.txt exists and is not a directory",
    ),
    # dead servers: a socket file nobody listens on
    "desktop-call-dead": Mistake(
        ("desktop", "call", "sheds.list", "--socket", "{d}/dead.sock"), 1, "{d}/dead.sock"
    ),
    "herdr-call-dead": Mistake(("herdr", "call", "ping", "--socket", "{d}/dead.sock"), 1, "dead"),
    "receipt-list-dead": Mistake(
        ("agents-host", "receipt", "--list", "--socket", "{d}/dead.sock"), 1, "dead.sock"
    ),
    "desktop-call-dead-json": Mistake(
        ("desktop", "call", "sheds.list", "--json", "--socket", "{d}/dead.sock"),
        1,
        '"code":"connect_failed"',
        prefix='{"error":',
    ),
    # a server of another protocol (reference servers the fixture starts)
    "desktop-call-herdr-server": Mistake(
        ("desktop", "call", "identify", "--socket", "{d}/hsrv.sock"),
        1,
        "cannot talk to {d}/hsrv.sock: the server there speaks another protocol",
        once=True,
    ),
    "desktop-identify-herdr-server": Mistake(
        ("desktop", "identify", "--socket", "{d}/hsrv.sock"),
        1,
        "cannot talk to {d}/hsrv.sock: the server there speaks another protocol",
        once=True,
    ),
    "herdr-ping-status-socket": Mistake(
        ("herdr", "ping", "--socket", "{d}/ha/host-agent-status.sock"),
        1,
        "cannot talk to {d}/ha/host-agent-status.sock: the server there speaks another protocol",
        once=True,
    ),
    "herdr-call-status-socket": Mistake(
        ("herdr", "call", "ping", "--socket", "{d}/ha/host-agent-status.sock"),
        1,
        "cannot talk to {d}/ha/host-agent-status.sock: the server there speaks another protocol",
        once=True,
    ),
    "herdr-ping-mac-desktop-server": Mistake(
        ("herdr", "ping", "--socket", "{d}/desk/host-agent.sock"),
        1,
        "cannot talk to {d}/desk/host-agent.sock: the server there speaks another protocol",
        once=True,
    ),
    "herdr-ping-tauri-desktop-server": Mistake(  # was `unknown_op: unknown op: ` (issue 29)
        ("herdr", "ping", "--socket", "{d}/tauri.sock"),
        1,
        "cannot talk to {d}/tauri.sock: the server there speaks another protocol",
        once=True,
    ),
    "watch-desktop-server": Mistake(
        ("host-agent", "watch", "--socket-dir", "{d}/desk"),
        1,
        "cannot talk to {d}/desk/host-agent.sock: the server there speaks another protocol",
        once=True,
    ),
    # refused binds
    "desktop-serve-live-socket": Mistake(
        ("desktop", "serve", "--dialect", "mac", "--socket", "{d}/live.sock"),
        1,
        "{d}/live.sock",
        once=True,
    ),
    "desktop-serve-regular-file": Mistake(
        ("desktop", "serve", "--dialect", "tauri", "--socket", "{d}/file.txt"),
        1,
        "{d}/file.txt",
        once=True,
    ),
    "herdr-serve-directory": Mistake(
        ("herdr", "serve", "--socket", "{d}/adir", "--shell", "/bin/sh"), 1, "{d}/adir", once=True
    ),
    "herdr-serve-too-long": Mistake(
        ("herdr", "serve", "--socket", "{d}/" + "x" * 120 + ".sock"), 1, "AF_UNIX"
    ),
    "host-agent-serve-not-a-directory": Mistake(
        ("host-agent", "serve", "--socket-dir", "{d}/file.txt"), 1, "file.txt"
    ),
    "desktop-serve-unwritable": Mistake(
        ("desktop", "serve", "--dialect", "mac", "--socket", "/proc/shedproto-test/x.sock"),
        1,
        "/proc/shedproto-test/x.sock",
        once=True,
    ),
    "desktop-serve-bind-refused-without-path": Mistake(
        ("desktop", "serve", "--dialect", "mac", "--socket", "/proc/shedproto-test.sock"),
        1,
        "cannot bind /proc/shedproto-test.sock: No such file or directory",
        once=True,
    ),
    "herdr-serve-parent-is-a-file": Mistake(
        ("herdr", "serve", "--socket", "{d}/file.txt/x.sock"),
        1,
        "{d}/file.txt is not a directory",
        once=True,
    ),
    "host-agent-serve-missing-parent": Mistake(
        ("host-agent", "serve", "--socket-dir", "/proc/shedproto-test"),
        1,
        "/proc/shedproto-test/host-agent-status.sock",
        once=True,
    ),
    "proxy-listen-live-socket": Mistake(
        ("proxy", "--protocol", "herdr", "--listen", "{d}/live.sock", "--upstream", "{d}/x"),
        1,
        "{d}/live.sock",
        once=True,
    ),
    "agents-host-run-live-socket": Mistake(
        (
            "agents-host",
            "run",
            "--config",
            "{d}/inited/echo.jsonc",
            "--api-url",
            "http://localhost:8000",
            "--identity",
            "{d}/inited/operator.key",
            "--space",
            "did:key:s",
            "--state-dir",
            "{d}/inited/st",
            "--lock-dir",
            "{d}/inited/lk",
            "--socket",
            "{d}/live.sock",
        ),
        1,
        "{d}/live.sock",
        prefix="Agent host failed: ",
        quiet=False,
        once=True,
    ),
    # bad params
    "desktop-call-no-equals": Mistake(
        ("desktop", "call", "rc.list", "hostprod"), 2, "expected k=v", usage="desktop call"
    ),
    "desktop-call-no-op": Mistake(  # k=v is optional: it was listed as required (issue 29)
        ("desktop", "call"), 2, "the following arguments are required: op", usage="desktop call"
    ),
    "herdr-call-no-method": Mistake(
        ("herdr", "call"), 2, "the following arguments are required: method", usage="herdr call"
    ),
    "desktop-call-bad-json": Mistake(
        ("desktop", "call", "rc.list", "--params", "{"), 2, "not valid JSON", usage="desktop call"
    ),
    "herdr-call-params-not-object": Mistake(
        ("herdr", "call", "ping", "--params", "[1]"), 2, "JSON object", usage="herdr call"
    ),
    "submit-bad-json": Mistake(
        ("agents-host", "submit", "{nope"), 2, "not valid JSON", usage="agents-host submit"
    ),
    "herdr-methods-unknown-protocol": Mistake(
        ("herdr", "methods", "--protocol", "1"), 2, "protocol 1", usage="herdr methods"
    ),
    "receipt-without-id": Mistake(
        ("agents-host", "receipt"), 2, "an ID is required", usage="agents-host receipt"
    ),
    # bad flags
    "desktop-call-bogus-flag": Mistake(
        ("desktop", "call", "--bogus", "x"), 2, "--bogus", usage="desktop call"
    ),
    "herdr-subscribe-bogus-flag": Mistake(
        ("herdr", "subscribe", "x", "--bogus"), 2, "--bogus", usage="herdr subscribe"
    ),
    "watch-bogus-flag": Mistake(
        ("host-agent", "watch", "--bogus"), 2, "--bogus", usage="host-agent watch"
    ),
    "unknown-command": Mistake(("frobnicate",), 2, "invalid choice", usage=""),
    "completion-unknown-shell": Mistake(
        ("completion", "tcsh"), 2, "invalid choice", usage="completion"
    ),
    "run-bogus-flag": Mistake(
        ("agents-host", "run", "--bogus"),
        1,
        "unknown option: --bogus",
        prefix="Agent host failed: ",
    ),
    "run-extra-positional": Mistake(
        ("agents-host", "run", "extra", "--config", "F"),
        1,
        "unexpected positional argument: extra",
        prefix="Agent host failed: ",
    ),
    "status-bogus-flag": Mistake(
        ("host-agent", "status", "--bogus"), 2, 'unknown argument "--bogus"', prefix="status: "
    ),
}


def _env(directory: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("SHED_", "HERDR_", "CF_", "XDG_"))
    }
    env.update(PYTHONPATH=str(ROOT), HOME=str(directory / "home"), SHELL="/bin/sh")
    env["SHED_HOST_AGENT_SOCKET_DIR"] = str(directory / "agent")
    env["HERDR_SOCKET_PATH"] = str(directory / "herdr.sock")
    return env


def _default_sigint() -> None:
    # A test runner started in the background ignores SIGINT; the CLI's user does not.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _serve(argv: list[str], directory: Path, servers: list[subprocess.Popen[str]]) -> None:
    """Start a reference server in ``directory`` into ``servers``; return once it is ready."""
    server = subprocess.Popen(
        [*CLI, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=_env(directory),
        cwd=str(directory),
    )
    servers.append(server)
    assert server.stdout is not None
    assert server.stdout.readline(), f"{argv} did not start"


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A short directory with a regular file, a directory, a dead socket, a live one,
    and herdr, desktop (at a host-agent path) and host-agent reference servers.
    """
    import tempfile

    directory = Path(tempfile.mkdtemp(prefix="cm-", dir="/tmp"))
    (directory / "file.txt").write_text("not a socket\n")
    (directory / "adir").mkdir()
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(directory / "dead.sock"))
    dead.close()
    live = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    live.bind(str(directory / "live.sock"))
    live.listen(8)
    subprocess.run(
        [*CLI, "agents-host", "init", str(directory / "inited")],
        env=_env(directory),
        capture_output=True,
        check=True,
        timeout=60,
    )
    echo = {
        "schema": "commonfabric.agents-host.config",
        "ownerDid": "did:key:z6MkExampleOwner",
        "sources": [
            {
                "id": "echo",
                "driver": "acp",
                "enabled": True,
                "command": [sys.executable, "-m", "shedproto.testing._agents_host"],
            }
        ],
    }
    (directory / "inited" / "echo.jsonc").write_text(json.dumps(echo))
    desk = f"{directory}/desk/host-agent.sock"
    servers: list[subprocess.Popen[str]] = []
    try:
        _serve(["herdr", "serve", "--socket", f"{directory}/hsrv.sock"], directory, servers)
        _serve(["desktop", "serve", "--dialect", "mac", "--socket", desk], directory, servers)
        tauri = f"{directory}/tauri.sock"
        _serve(["desktop", "serve", "--dialect", "tauri", "--socket", tauri], directory, servers)
        _serve(["host-agent", "serve", "--socket-dir", f"{directory}/ha"], directory, servers)
        yield directory
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=30)
            if server.stdout is not None:
                server.stdout.close()
        live.close()
        subprocess.run(["rm", "-rf", str(directory)], check=False)


THROUGH_THE_ENTRY_POINT = (
    "desktop-call-missing-socket",  # an OSError: exit 1
    "herdr-ping-mac-desktop-server",  # another protocol's server
    "desktop-serve-live-socket",  # a refused bind
    "desktop-call-no-equals",  # a usage error found after parsing
    "unknown-command",  # argparse's own, at the top level
    "run-bogus-flag",  # the mirrored agents-host run
    "status-bogus-flag",  # the mirrored host-agent status
)
"""Rows also run as a real process (interpreter exit, stdio, signals as a user meets them)."""


@pytest.mark.parametrize("name", list(MISTAKES))
def test_mistake_is_one_line_with_the_right_exit_code(
    name: str, scratch: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """Every row, through the CLI's ``main`` in this process (environment and cwd as a user's)."""
    from shedproto.clients.cli import main

    mistake = MISTAKES[name]
    argv = [arg.replace("{d}", str(scratch)) for arg in mistake.argv]
    before = sorted(p.name for p in scratch.iterdir())
    env = _env(scratch)
    for key in list(os.environ):
        if key not in env:
            monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(scratch)
    capfd.readouterr()
    try:
        code = main(argv)
    except SystemExit as exc:
        assert isinstance(exc.code, int)
        code = exc.code
    out, err = capfd.readouterr()
    _check(mistake, scratch, code=code, stdout=out, stderr=err, before=before)


@pytest.mark.parametrize("name", THROUGH_THE_ENTRY_POINT)
def test_mistake_through_the_real_entry_point(name: str, scratch: Path) -> None:
    mistake = MISTAKES[name]
    argv = [arg.replace("{d}", str(scratch)) for arg in mistake.argv]
    before = sorted(p.name for p in scratch.iterdir())
    done = subprocess.run(
        [*CLI, *argv],
        capture_output=True,
        text=True,
        env=_env(scratch),
        cwd=str(scratch),
        timeout=60,
        check=False,
        preexec_fn=_default_sigint,
    )
    _check(
        mistake,
        scratch,
        code=done.returncode,
        stdout=done.stdout,
        stderr=done.stderr,
        before=before,
    )


def _check(
    mistake: Mistake, scratch: Path, *, code: int, stdout: str, stderr: str, before: list[str]
) -> None:
    """The convention: the exit code, one prefixed error line (after the usage), no traceback."""
    assert "Traceback" not in stderr, stderr
    assert code == mistake.code, stderr
    assert stdout == "" or not mistake.quiet
    lines = stderr.splitlines()
    assert lines, "no error message"
    error = lines[-1]
    assert error.startswith(mistake.prefix), stderr
    expected = mistake.message.replace("{d}", str(scratch))
    assert expected in error, stderr
    if expected.startswith("the following arguments are required"):
        assert error.endswith(expected), f"an optional argument is listed as required: {error}"
    if mistake.once:
        assert error.count(expected) == 1, f"{expected!r} named more than once: {error}"
    if mistake.usage is None:
        assert len(lines) == 1, stderr
    else:
        assert lines[0].startswith(f"usage: shedproto {mistake.usage}".rstrip()), stderr
        assert all(not line.startswith(PREFIX) for line in lines[:-1])
    # a refused command leaves the scratch directory as it was
    assert sorted(p.name for p in scratch.iterdir()) == before


@contextmanager
def _process(argv: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        [*CLI, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=_default_sigint,  # noqa: PLW1509 - resets one signal, nothing else
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=20)


def _interrupt(process: subprocess.Popen[str], sig: int = signal.SIGINT) -> tuple[int, str]:
    process.send_signal(sig)
    _out, err = process.communicate(timeout=20)
    return process.returncode, err


def _wait_until_connected(process: subprocess.Popen[str]) -> None:
    """Return once ``process`` holds a connected socket (its request is out), still running.

    A Ctrl-C before that lands in the interpreter's start-up, not in the command.
    """
    fds = Path(f"/proc/{process.pid}/fd")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, "the command ended instead of waiting"
        with contextlib.suppress(OSError):
            if any(os.readlink(fd).startswith("socket:") for fd in fds.iterdir()):
                return
        time.sleep(0.05)
    raise AssertionError("the command never connected")


def _wait_for_stderr_line(process: subprocess.Popen[str]) -> str:
    assert process.stderr is not None
    return process.stderr.readline()


def test_ctrl_c_exits_130_without_a_traceback(tmp_path: Path) -> None:
    import tempfile

    directory = Path(tempfile.mkdtemp(prefix="cc-", dir="/tmp"))
    (directory / "home").mkdir()  # where herdr starts pane shells
    env = _env(directory)
    herdr = str(directory / "herdr.sock")
    try:
        with _process(["herdr", "serve", "--socket", herdr], env) as server:
            assert server.stdout is not None
            assert "reference server" in server.stdout.readline()
            created = subprocess.run(
                [*CLI, "herdr", "call", "workspace.create", "--socket", herdr],
                capture_output=True, text=True, env=env, timeout=60, check=False,
            )  # fmt: skip
            assert created.returncode == 0, created.stderr
            pane = json.loads(created.stdout)["root_pane"]["pane_id"]
            waiting = [
                "herdr", "call", "pane.wait_for_output", "--socket", herdr, f"pane_id={pane}",
                "source=recent", 'match={"type":"substring","value":"never printed"}',
                "timeout_ms=600000",
            ]  # fmt: skip
            for argv in (waiting, ["herdr", "subscribe", "pane.created", "--socket", herdr]):
                with _process(argv, env) as client:
                    _wait_until_connected(client)  # past start-up: it is waiting, not failing
                    code, err = _interrupt(client)
                assert (code, err) == (130, f"{PREFIX}interrupted\n"), argv
            code, err = _interrupt(server)
            assert (code, err) == (130, "")
            assert not Path(herdr).exists()

        with _process(
            ["host-agent", "serve", "--socket-dir", str(directory / "agent")], env
        ) as agent:
            assert agent.stdout is not None
            agent.stdout.readline()
            other = {**env, "SHED_HOST_AGENT_SOCKET_DIR": str(directory / "elsewhere")}
            watching = ["host-agent", "watch", "--socket-dir", str(directory / "agent")]
            with _process(watching, other) as watch:
                hello = _wait_for_stderr_line(watch)
                assert hello.startswith("shedproto: connected to ")
                assert "waiting" in hello
                code, err = _interrupt(watch)
            assert (code, "Traceback" in err) == (130, False)
            # the reference agent stops like the real one: exit 0 on SIGINT
            code, err = _interrupt(agent)
            assert (code, err) == (0, "")

        desk = str(directory / "desk.sock")
        with _process(["desktop", "serve", "--dialect", "mac", "--socket", desk], env) as serve:
            assert serve.stdout is not None
            serve.stdout.readline()
            code, err = _interrupt(serve)
        assert (code, err) == (130, "")
        assert not Path(desk).exists()
    finally:
        subprocess.run(["rm", "-rf", str(directory)], check=False)
