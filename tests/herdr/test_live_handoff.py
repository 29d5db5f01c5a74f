"""``server.live_handoff``: the panes move to a successor process serving the same socket.

herdr's handoff: herdrdev/herdr src/server/headless.rs:1235-1441 (the source),
5178-5260 (the successor), 3636-3658 (the ``ok`` / ``handoff_failed`` answer) and
src/server/handoff.rs@1c76079f (the stream: token, manifest, ``validated``, one
``SCM_RIGHTS`` message, ``restored``, ``ready``, ``committed``, ``owned``).
Real PTYs and real processes throughout: the source is ``shedproto herdr serve``
(or the ``herdr`` shim's ``herdr server``) and the successor the process it starts.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import msgspec
import pytest

import shedproto
from shedproto import herdr
from shedproto.clients.herdr import AsyncHerdrClient, BlockingHerdrClient
from shedproto.clients.herdr_cli import write_shim
from shedproto.herdr import types as t
from shedproto.servers.herdr import HerdrServer
from shedproto.servers.herdr import _handoff as handoff
from shedproto.servers.herdr._handoff_manifest import (
    HandoffManifest,
    SessionRecord,
    validate_manifest,
)
from shedproto.servers.herdr._pty import AdoptedProcess
from shedproto.servers.herdr._screen import PaneScreen

CLI = [sys.executable, "-m", "shedproto.clients.cli"]
ROOT = Path(shedproto.__file__).resolve().parent.parent
WAIT_MS = 15_000


def _env(**extra: str) -> dict[str, str]:
    """The environment of the processes started here: this checkout's package first."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.update(extra)
    return env


def _gone(pid: int) -> bool:
    """Wait (bounded) until ``pid`` has exited; it is not our child (a handoff adopted it)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if AdoptedProcess(pid).poll() is not None:
            return True
        time.sleep(0.05)
    return False


def _stop(sock: Path) -> None:
    """Stop whichever server answers on ``sock`` (the successor after a handoff)."""
    with contextlib.suppress(OSError, herdr.HerdrApiError):
        BlockingHerdrClient.for_socket(str(sock), timeout=10).server_stop()


@contextlib.contextmanager
def serving(directory: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """Run ``shedproto herdr serve`` on ``directory/api.sock``; stop what serves there after."""
    sock = directory / "api.sock"
    log = (directory / "source.err").open("wb")
    source = subprocess.Popen(
        [*CLI, "herdr", "serve", "--socket", str(sock), "--shell", "/bin/sh",
         "--config-dir", str(directory / "config")],
        stdout=subprocess.PIPE,
        stderr=log,
        env=_env(PS1="$ ", TERM="xterm-256color"),
    )  # fmt: skip
    try:
        assert source.stdout is not None
        ready = source.stdout.readline()
        assert f" on {sock};".encode() in ready, (directory / "source.err").read_text()
        yield source, sock
    finally:
        _stop(sock)
        if source.poll() is None:
            source.kill()
        source.wait()
        if source.stdout is not None:
            source.stdout.close()
        log.close()


def _layout_facts(snapshot: t.SessionSnapshot) -> object:
    """What a reconnecting client must find unchanged: ids, labels, layout, focus, agents."""
    return (
        snapshot.focused_workspace_id,
        snapshot.focused_tab_id,
        snapshot.focused_pane_id,
        [(ws.workspace_id, ws.label, ws.tab_count, ws.pane_count) for ws in snapshot.workspaces],
        [(tab.tab_id, tab.label) for tab in snapshot.tabs],
        [(p.pane_id, p.terminal_id, p.cwd, p.agent) for p in snapshot.panes],
        [msgspec.to_builtins(layout) for layout in snapshot.layouts],
        [(a.pane_id, a.agent, a.name) for a in snapshot.agents],
    )


def test_a_shell_keeps_its_process_and_screen_and_clients_see_the_same_session(
    short_socket_dir: Path,
) -> None:
    with serving(short_socket_dir) as (source, sock):
        client = BlockingHerdrClient.for_socket(str(sock), timeout=40)
        assert client.ping().capabilities.live_handoff is True  # type: ignore[union-attr]
        first = client.workspace_create(label="one").root_pane.pane_id
        client.pane_split("down", target_pane_id=first)
        client.tab_create(label="two")
        client.pane_send_text(first, "echo before-$$\n")
        # the shell's prompt may come after the terminal's echo: match the line's end
        matched = client.pane_wait_for_output(
            first, "recent", t.RegexOutputMatch(value=r"before-\d+$"), timeout_ms=WAIT_MS
        ).matched_line
        shell = client.pane_process_info(pane_id=first).process_info.shell_pid
        assert matched is not None
        assert shell is not None
        assert matched.endswith(f" before-{shell}") or matched == f"before-{shell}"
        client.pane_report_agent(first, "test-hook", "claude", "idle")
        before = client.session_snapshot().snapshot
        assert [(a.pane_id, a.agent) for a in before.agents] == [(first, "claude")]
        screen = client.pane_read(first, "recent").read.text

        assert client.server_live_handoff() == t.OkReply()
        assert source.wait(30) == 0  # the old server exits once it has answered

        again = BlockingHerdrClient.for_socket(str(sock), timeout=40)
        after = again.session_snapshot().snapshot
        assert _layout_facts(after) == _layout_facts(before)
        assert again.pane_read(first, "recent").read.text == screen
        assert again.pane_process_info(pane_id=first).process_info.shell_pid == shell
        again.pane_send_text(first, "echo after-$$\n")
        matched = again.pane_wait_for_output(
            first, "recent", t.RegexOutputMatch(value=r"^after-\d+$"), timeout_ms=WAIT_MS
        ).matched_line
        assert matched == f"after-{shell}"  # the same shell answered
        # the id counters came along: the next workspace is w2, as it would have been
        assert again.workspace_create(label="three").workspace.workspace_id == "w2"
        again.server_stop()
        assert _gone(shell)  # the successor owns the panes: they end with it


def test_a_successor_hands_off_again(short_socket_dir: Path) -> None:
    with serving(short_socket_dir) as (_, sock):
        client = BlockingHerdrClient.for_socket(str(sock), timeout=40)
        pane = client.workspace_create(label="one").root_pane.pane_id
        shell = client.pane_process_info(pane_id=pane).process_info.shell_pid
        assert client.server_live_handoff() == t.OkReply()
        assert client.server_live_handoff() == t.OkReply()
        assert client.pane_process_info(pane_id=pane).process_info.shell_pid == shell
        assert [ws.label for ws in client.workspace_list().workspaces] == ["one"]


def _shim_server(directory: Path, version: str) -> tuple[Path, Path, dict[str, str]]:
    shim = write_shim(directory / "bin")
    sock = directory / "api.sock"
    env = _env(
        HERDR_SOCKET_PATH=str(sock),
        SHEDPROTO_HERDR_CLIENT_VERSION=version,
        SHELL="/bin/sh",
        XDG_CONFIG_HOME=str(directory / "xdg-config"),
        XDG_STATE_HOME=str(directory / "xdg-state"),
    )
    return shim, sock, env


def _wait_serving(sock: Path, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        with contextlib.suppress(OSError, herdr.HerdrApiError):
            BlockingHerdrClient.for_socket(str(sock), timeout=2).ping()
            return
        time.sleep(0.05)
    raise AssertionError("the shim's herdr server did not come up")


def test_the_shims_server_hands_off_to_a_newer_release(short_socket_dir: Path) -> None:
    # herdr update --handoff / remote attach: live-handoff --import-exe NEW --expected-version V
    # (src/remote/attach.rs:1349-1359@1c76079f); the import child is `EXE server --handoff-import`
    shim, sock, env = _shim_server(short_socket_dir, "0.9.5")
    newer = short_socket_dir / "bin" / "herdr-0.9.4"
    newer.write_text(f'#!/bin/sh\nSHEDPROTO_HERDR_CLIENT_VERSION=0.9.4 exec {shim} "$@"\n')
    newer.chmod(0o755)
    source = subprocess.Popen([str(shim), "server"], env=env, stderr=subprocess.DEVNULL)
    try:
        _wait_serving(sock, source)
        client = BlockingHerdrClient.for_socket(str(sock), timeout=40)
        pane = client.workspace_create(label="kept").root_pane.pane_id
        shell = client.pane_process_info(pane_id=pane).process_info.shell_pid

        refused = subprocess.run(
            [str(shim), "server", "live-handoff", "--import-exe", str(newer),
             "--expected-version", "0.9.3"],
            env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert refused.returncode == 1
        assert '"code":"handoff_failed"' in refused.stderr
        assert '"message":"handoff stream closed while reading line"' in refused.stderr
        assert client.ping().version == "0.9.5"  # the old server kept serving

        done = subprocess.run(
            [str(shim), "server", "live-handoff", "--import-exe", str(newer),
             "--expected-version", "0.9.4", "--expected-protocol", "22"],
            env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert (done.returncode, done.stdout) == (0, "")
        assert done.stderr.startswith("live handoff complete; server log: ")
        assert source.wait(30) == 0
        assert client.ping().version == "0.9.4"
        assert client.pane_process_info(pane_id=pane).process_info.shell_pid == shell
    finally:
        _stop(sock)
        if source.poll() is None:
            source.kill()
        source.wait()


# ------------------------------------------------------------------ refusals
FAKE_SUCCESSOR = r"""
import socket, sys
_, _, _, path, token = sys.argv
s = socket.socket(socket.AF_UNIX)
s.connect(path)
s.sendall(token.encode() + b"\n")
line = b""
while not line.endswith(b"\n"):
    line += s.recv(1)
s.sendall(b"validated\n")
socket.recv_fds(s, 1, 64)
s.sendall(b"restored\n")
"""
"""A successor that takes the panes and says ``restored``, then dies before ``ready``."""


async def test_a_failed_handoff_keeps_the_server_and_its_panes(
    short_socket_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = short_socket_dir / "fake-herdr"
    fake.write_text(f"#!{sys.executable}\n{FAKE_SUCCESSOR}")
    fake.chmod(0o755)
    server = HerdrServer(
        short_socket_dir / "h.sock",
        shell=["/bin/sh"],
        cwd=str(short_socket_dir),
        environ=_env(PS1="$ ", TERM="xterm-256color"),
        poll_interval=0.02,
    )
    refusals = [
        # src/server/handoff.rs:96-103@1c76079f (Rust's io::Error display)
        ({"import_exe": "/nonexistent/herdr"}, "failed to spawn handoff import server at "
         "/nonexistent/herdr: No such file or directory (os error 2)"),
        # src/server/handoff.rs:346: the child never connects (here: it exits at once)
        ({"import_exe": "/bin/true"}, "timed out waiting for handoff import connection"),
        # the successor refuses the manifest and exits: the source reads EOF (handoff.rs:366)
        ({"expected_protocol": 99}, "handoff stream closed while reading line"),
        ({"expected_version": "9.9.9"}, "handoff stream closed while reading line"),
        # headless.rs:1398-1413: the successor died after `restored`; the sockets come back
        ({"import_exe": str(fake)}, "handoff replacement server did not become ready: "
         "handoff stream closed while reading line"),
    ]  # fmt: skip
    async with anyio.create_task_group() as tg:
        await tg.start(server.serve)
        client = AsyncHerdrClient.for_socket(server.path, timeout=40)
        pane = (await client.workspace_create(label="stays")).root_pane.pane_id
        for number, (params, message) in enumerate(refusals):
            with pytest.raises(herdr.HerdrApiError) as failed:
                await client.request("server.live_handoff", params)
            assert (failed.value.code, failed.value.message) == ("handoff_failed", message)
            # the socket still answers and the pane's reader runs again
            await client.pane_send_text(pane, f"echo still-{number}\n")
            await client.pane_wait_for_output(
                pane, "recent", t.SubstringOutputMatch(value=f"still-{number}"),
                timeout_ms=WAIT_MS,
            )  # fmt: skip
        monkeypatch.setattr(handoff, "MAX_FDS_PER_HANDOFF", 0)
        with pytest.raises(herdr.HerdrApiError) as failed:
            await client.server_live_handoff()
        # src/server/headless.rs:1266-1275@1c76079f
        assert failed.value.message == (
            "live handoff supports at most 0 panes in one update; "
            "close panes or restart herdr normally"
        )
        assert [ws.label for ws in (await client.workspace_list()).workspaces] == ["stays"]
        leftovers = [e.name for e in os.scandir(short_socket_dir) if "handoff" in e.name]
        assert leftovers == []  # the handoff socket never outlives an attempt
        server.shutdown()


def _manifest(**changes: object) -> HandoffManifest:
    base = HandoffManifest(
        version=1,
        source_version="0.9.5",
        source_protocol=22,
        expected_version=None,
        expected_protocol=None,
        snapshot=SessionRecord(
            workspaces=[], active_workspace_id=None, next_workspace=1, next_terminal=1
        ),
        panes=[],
    )
    return msgspec.structs.replace(base, **changes)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({}, None),
        ({"expected_protocol": 22, "expected_version": "0.9.5"}, None),
        ({"version": 2}, "unsupported handoff version 2"),
        (
            {"expected_protocol": 21},
            "handoff expected protocol 21, but this server speaks protocol 22",
        ),
        ({"expected_version": "0.9.4"}, "handoff expected herdr v0.9.4, but this server is v0.9.5"),
        # herdr checks in this order: the format version first
        ({"version": 0, "expected_protocol": 1}, "unsupported handoff version 0"),
    ],
)
def test_the_successor_checks_the_manifest_as_herdr_does(
    changes: dict[str, object], message: str | None
) -> None:
    # herdrdev/herdr src/server/handoff.rs:241-267@1c76079f
    assert validate_manifest(_manifest(**changes), 22, "0.9.5") == message


def test_the_import_command_refuses_an_unexpected_protocol_and_takes_nothing(
    short_socket_dir: Path,
) -> None:
    path = short_socket_dir / "handoff.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    listener.settimeout(30)
    child = subprocess.Popen(
        [*CLI, "herdr", "serve", "--handoff-import", str(path), "tok-1"],
        stderr=subprocess.PIPE,
        env=_env(),
    )
    try:
        stream, _ = listener.accept()
        stream.settimeout(30)
        with stream:
            token = b""
            while not token.endswith(b"\n"):
                token += stream.recv(1)
            assert token == b"tok-1\n"
            stream.sendall(msgspec.json.encode(_manifest(expected_protocol=99)) + b"\n")
            assert stream.recv(64) == b""  # no `validated`: it hung up
        _, err = child.communicate(timeout=30)
    finally:
        listener.close()
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 1
    assert err.decode() == (
        "herdr: handoff import failed: "
        "handoff expected protocol 99, but this server speaks protocol 22\n"
    )


def test_the_replay_redraws_screen_scrollback_wraps_and_modes() -> None:
    source = PaneScreen(cols=20, rows=5)
    source.feed(b"\x1b]2;a title\x07")
    for number in range(12):
        source.feed(f"line {number}\r\n".encode())
    source.feed(b"\x1b[31mred\x1b[0m " + b"x" * 30 + b"\r\n$ \x1b[?2004h")
    copy = PaneScreen(cols=20, rows=5)
    copy.feed(source.replay())
    for where in ("visible", "recent", "recent_unwrapped"):
        assert copy.read(where, lines=100, ansi=True) == source.read(where, lines=100, ansi=True)
    assert (copy.cursor, copy.title, copy.bracketed_paste, copy.scrollback_rows) == (
        source.cursor,
        source.title,
        True,
        source.scrollback_rows,
    )
    source.feed(b"\x1b[?1049h\x1b[2;3Hfull screen")
    copy = PaneScreen(cols=20, rows=5)
    copy.feed(source.replay())
    assert (copy.alternate, copy.cursor) == (True, source.cursor)
    assert copy.read("visible") == source.read("visible")
    source.feed(b"\x1b[?1049l")
    copy.feed(b"\x1b[?1049l")  # leaving the alternate screen shows the primary one again
    assert (copy.read("recent", lines=100), copy.cursor) == (
        source.read("recent", lines=100),
        source.cursor,
    )


def test_the_import_commands_refuse_bad_usage(short_socket_dir: Path) -> None:
    serve = subprocess.run(
        [*CLI, "herdr", "serve", "--handoff-import", "s", "t", "--shell", "/bin/sh"],
        capture_output=True, text=True, env=_env(), check=False,
    )  # fmt: skip
    assert serve.returncode == 2
    assert "--handoff-import takes the old server's options; drop --shell" in serve.stderr
    shim = write_shim(short_socket_dir / "bin")
    wrong = subprocess.run(
        [str(shim), "server", "--handoff-import", "only-a-socket"],
        capture_output=True, text=True, env=_env(), check=False,
    )  # fmt: skip
    assert (wrong.returncode, wrong.stderr) == (
        2,
        "usage: herdr server --handoff-import <socket> <token>\n",
    )
    gone = subprocess.run(
        [str(shim), "server", "--handoff-import", str(short_socket_dir / "none.sock"), "t"],
        capture_output=True, text=True, env=_env(), check=False,
    )  # fmt: skip
    assert (gone.returncode, gone.stderr) == (
        1,
        "herdr: handoff import failed: No such file or directory (os error 2)\n",
    )
