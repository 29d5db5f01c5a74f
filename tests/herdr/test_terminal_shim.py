"""``herdr terminal session control|observe`` through the shim, as a web client drives it.

Each test runs the shim as a subprocess against the reference server (the
``herdr_shim`` fixture), writes JSON commands on its stdin and reads its
JSON records from stdout. Frames are painted into a pyte screen, as a
browser terminal paints them, and the test reads that screen. Waits are on
records (a queue fed by a reader thread), never on sleeps.

herdr's contract: herdrdev/herdr ``src/client/mod.rs:1061-1215@1c76079f``
(records and commands), ``src/cli.rs:540-677@1c76079f`` (options),
``src/server/headless.rs:1849-1918,2803-2897@1c76079f`` (targets, the
controller lock, takeover, reasons).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import subprocess
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pyte
import pytest

from shedproto.testing import HerdrShim

WAIT = 30.0


class Stream:
    """A running ``herdr terminal session ...`` with its records in a queue."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            ["herdr", "terminal", "session", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.records: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.lines: list[str] = []
        self.screen: pyte.Screen | None = None
        self._stream: pyte.ByteStream | None = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)
            self.records.put(json.loads(line))
        self.records.put(None)

    def send(self, command: dict[str, Any] | str) -> None:
        assert self.process.stdin is not None
        text = command if isinstance(command, str) else json.dumps(command)
        self.process.stdin.write(text + "\n")
        self.process.stdin.flush()

    def next(self) -> dict[str, Any]:
        record = self.records.get(timeout=WAIT)
        assert record is not None, "the stream ended without terminal.closed"
        if record["type"] == "terminal.frame":
            self._paint(record)
        return record

    def _paint(self, frame: dict[str, Any]) -> None:
        size = (frame["width"], frame["height"])
        if self.screen is None or (self.screen.columns, self.screen.lines) != size:
            self.screen = pyte.Screen(*size)
            self._stream = pyte.ByteStream(self.screen)
        assert self._stream is not None
        self._stream.feed(base64.b64decode(frame["bytes"]))

    def text(self) -> str:
        assert self.screen is not None
        return "\n".join(line.rstrip() for line in self.screen.display)

    def until(self, check: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """Read records until ``check`` holds for one; fail on the close."""
        while True:
            record = self.next()
            if check(record):
                return record
            assert record["type"] != "terminal.closed", f"closed early: {record}"

    def shows(self, text: str) -> dict[str, Any]:
        return self.until(lambda r: r["type"] == "terminal.frame" and text in self.text())

    def closed(self) -> dict[str, Any]:
        return self.until(lambda r: r["type"] == "terminal.closed")

    def finish(self) -> tuple[int, str]:
        try:
            _, err = self.process.communicate(timeout=WAIT)
        except ValueError:  # stdin already closed by the test
            err = self.process.stderr.read() if self.process.stderr else ""
            self.process.wait(timeout=WAIT)
        return self.process.returncode, err

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=WAIT)
        self._reader.join(WAIT)
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()


@pytest.fixture
def streams() -> Iterator[Callable[..., Stream]]:
    started: list[Stream] = []

    def start(*args: str) -> Stream:
        stream = Stream(*args)
        started.append(stream)
        return stream

    yield start
    for stream in started:
        stream.kill()


@pytest.fixture
def pane(herdr_shim: HerdrShim) -> str:
    done = herdr_shim.run("workspace", "create", "--cwd", "/tmp", "--focus")
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["result"]["root_pane"]["pane_id"])


def _terminal_id(herdr_shim: HerdrShim, pane: str) -> str:
    done = herdr_shim.run("pane", "get", pane)
    return str(json.loads(done.stdout)["result"]["pane"]["terminal_id"])


def test_typing_echo_hi_shows_hi_in_a_frame(pane: str, streams: Callable[..., Stream]) -> None:
    control = streams("control", pane, "--cols", "60", "--rows", "12")
    first = control.next()
    assert first["type"] == "terminal.frame"
    assert (first["seq"], first["full"], first["encoding"]) == (1, True, "ansi")
    assert (first["width"], first["height"]) == (60, 12)
    control.send({"type": "terminal.input", "text": "echo hi"})
    control.send({"type": "terminal.input", "bytes": base64.b64encode(b"\r").decode()})
    seen = control.until(lambda r: "\nhi" in control.text())
    assert seen["seq"] > 1
    assert seen["full"] is False
    control.send({"type": "terminal.release"})
    assert control.closed() == {"type": "terminal.closed", "reason": "detached"}
    code, _ = control.finish()
    assert code == 0


def test_records_are_herdrs_sorted_keys_and_seq_increases(
    pane: str, streams: Callable[..., Stream]
) -> None:
    # serde_json::json! builds a BTreeMap: keys print sorted (src/client/mod.rs:1067@1c76079f)
    control = streams("control", pane)
    control.next()
    control.send({"type": "terminal.input", "text": "echo one; echo two\r"})
    control.shows("two")
    control.send({"type": "terminal.release"})
    control.closed()
    control.finish()
    seqs = [json.loads(line)["seq"] for line in control.lines if "terminal.frame" in line]
    assert seqs == list(range(1, len(seqs) + 1))
    first = json.loads(control.lines[0])
    assert list(first) == ["bytes", "encoding", "full", "height", "seq", "type", "width"]
    assert (first["width"], first["height"]) == (120, 40)  # herdr's defaults (src/cli.rs:620)
    assert control.lines[-1] == '{"reason":"detached","type":"terminal.closed"}\n'


def test_resize_gives_a_full_frame_of_the_new_size_and_resizes_the_pane(
    herdr_shim: HerdrShim, pane: str, streams: Callable[..., Stream]
) -> None:
    control = streams("control", pane, "--cols", "40", "--rows", "10")
    control.next()
    control.send({"type": "terminal.resize", "cols": 70, "rows": 15})
    frame = control.until(lambda r: r.get("width") == 70)
    assert (frame["height"], frame["full"]) == (15, True)
    control.send({"type": "terminal.input", "text": "stty size\r"})
    control.shows("15 70")  # the program sees the new size
    control.send({"type": "terminal.release"})
    control.closed()


def test_bad_commands_are_skipped_on_stderr_and_the_stream_goes_on(
    pane: str, streams: Callable[..., Stream]
) -> None:
    control = streams("control", pane, "--cols", "50", "--rows", "10")
    control.next()
    control.send("not json")
    control.send({"type": "terminal.resize", "cols": 0, "rows": 5})
    control.send({"type": "terminal.input", "text": "a", "bytes": "YQ=="})
    control.send({"type": "terminal.scroll", "direction": "up", "lines": 0})
    control.send({"type": "terminal.input", "bytes": "***"})
    control.send("")
    control.send({"type": "terminal.input", "text": "echo still-here\r"})
    control.shows("still-here")
    control.send({"type": "terminal.release"})
    control.closed()
    code, err = control.finish()
    assert code == 0
    lines = err.splitlines()
    prefix = "herdr: terminal session control input ignored: "
    assert len(lines) == 5
    assert all(line.startswith(prefix) for line in lines)
    reasons = [line.removeprefix(prefix) for line in lines]
    assert reasons[0].startswith("invalid json command: ")
    assert reasons[1:4] == [
        "terminal.resize cols and rows must be greater than 0",
        "terminal.input accepts text or bytes, not both",
        "terminal.scroll lines must be greater than 0",
    ]
    assert reasons[4].startswith("invalid terminal.input bytes: ")


def test_scroll_moves_the_viewport_through_the_scrollback(
    herdr_shim: HerdrShim, pane: str, streams: Callable[..., Stream]
) -> None:
    control = streams("control", pane, "--cols", "40", "--rows", "8")
    control.next()
    control.send({"type": "terminal.input", "text": "for i in $(seq 1 30); do echo row$i; done\r"})
    control.shows("row30")
    assert "row20" not in control.text()
    control.send({"type": "terminal.scroll", "direction": "up", "lines": 10})
    control.shows("row20")
    assert "row30" not in control.text()
    info = json.loads(herdr_shim.run("pane", "get", pane).stdout)["result"]["pane"]
    assert info["scroll"]["offset_from_bottom"] == 10  # the viewport is the terminal's
    control.send({"type": "terminal.scroll", "direction": "down", "lines": 10, "source": "wheel"})
    control.shows("row30")
    control.send({"type": "terminal.scroll", "direction": "up", "lines": 5, "source": "page_key"})
    control.shows("row25")
    control.send({"type": "terminal.input", "text": "echo back\r"})  # input returns to the bottom
    control.shows("back")
    control.send({"type": "terminal.release"})
    control.closed()


def test_a_second_controller_without_takeover_is_refused(
    herdr_shim: HerdrShim, pane: str, streams: Callable[..., Stream]
) -> None:
    terminal = _terminal_id(herdr_shim, pane)
    first = streams("control", pane)
    first.next()
    second = streams("control", pane)
    refused = second.next()
    assert refused == {
        "type": "terminal.closed",
        "reason": f"terminal attach failed: terminal {terminal} already has an attached client; "
        "retry with --takeover",
    }
    assert second.finish()[0] == 0  # herdr exits 0 after any close
    first.send({"type": "terminal.input", "text": "echo first-still-controls\r"})
    first.shows("first-still-controls")


def test_takeover_closes_the_first_controller(
    herdr_shim: HerdrShim, pane: str, streams: Callable[..., Stream]
) -> None:
    first = streams("control", pane, "--cols", "50", "--rows", "10")
    first.next()
    second = streams("control", pane, "--takeover", "--cols", "60", "--rows", "12")
    assert second.next()["type"] == "terminal.frame"
    assert first.closed() == {"type": "terminal.closed", "reason": "terminal attach taken over"}
    assert first.finish()[0] == 0
    second.send({"type": "terminal.input", "text": "stty size\r"})
    second.shows("12 60")  # the new controller sized the pane


def test_observe_alongside_control_sees_the_output_and_never_writes(
    herdr_shim: HerdrShim, pane: str, streams: Callable[..., Stream]
) -> None:
    control = streams("control", pane, "--cols", "60", "--rows", "12")
    control.next()
    observer = streams("observe", pane, "--cols", "30", "--rows", "6")
    first = observer.next()
    assert (first["full"], first["width"], first["height"]) == (True, 30, 6)
    observer.send({"type": "terminal.input", "text": "echo observer-typed\r"})
    control.send({"type": "terminal.input", "text": "echo from-control\r"})
    observer.shows("from-control")
    control.shows("from-control")
    read = herdr_shim.run("pane", "read", pane, "--source", "recent")
    assert "from-control" in read.stdout
    assert "observer-typed" not in read.stdout
    control.send({"type": "terminal.release"})
    control.closed()
    observer.process.stdin.close()  # type: ignore[union-attr]
    observer.kill()


def test_the_pane_closing_closes_every_stream(
    herdr_shim: HerdrShim, pane: str, streams: Callable[..., Stream]
) -> None:
    terminal = _terminal_id(herdr_shim, pane)
    control = streams("control", pane)
    control.next()
    observer = streams("observe", terminal)  # a terminal id is a target too
    observer.next()
    assert herdr_shim.run("pane", "split", pane, "--direction", "right").returncode == 0
    assert herdr_shim.run("pane", "close", pane).returncode == 0
    reason = f"terminal {terminal} exited"  # src/server/headless.rs:2598@1c76079f
    assert control.closed() == {"type": "terminal.closed", "reason": reason}
    assert observer.closed() == {"type": "terminal.closed", "reason": reason}
    assert control.finish()[0] == 0


def test_an_unknown_target_is_closed_with_herdrs_reason(
    herdr_shim: HerdrShim, streams: Callable[..., Stream]
) -> None:
    for verb in ("control", "observe"):
        stream = streams(verb, "w9:p9")
        assert stream.next() == {
            "type": "terminal.closed",
            "reason": f"terminal session {verb} failed: terminal target w9:p9 not found",
        }
        assert stream.finish()[0] == 0


def test_the_end_of_stdin_releases(pane: str, streams: Callable[..., Stream]) -> None:
    control = streams("control", pane)
    control.next()
    control.process.stdin.close()  # type: ignore[union-attr]
    assert control.closed()["reason"] == "detached"
    assert control.finish()[0] == 0


def test_a_pane_held_by_a_controller_keeps_its_size_through_a_split(
    herdr_shim: HerdrShim, pane: str, streams: Callable[..., Stream]
) -> None:
    control = streams("control", pane, "--cols", "44", "--rows", "11")
    control.next()
    assert herdr_shim.run("pane", "split", pane, "--direction", "right").returncode == 0
    control.send({"type": "terminal.input", "text": "stty size\r"})
    control.shows("11 44")


def test_usage_and_value_errors_exit_as_herdr(herdr_shim: HerdrShim) -> None:
    usage = "usage: herdr terminal session control <target> [--takeover] [--cols N] [--rows N]"
    unknown = herdr_shim.run("terminal", "session", "control", "w1:p1", "--bogus")
    assert unknown.returncode == 2
    assert unknown.stderr == f"unknown terminal session control option: --bogus\n{usage}\n"
    observe_takeover = herdr_shim.run("terminal", "session", "observe", "w1:p1", "--takeover")
    assert observe_takeover.returncode == 2
    assert "unknown terminal session observe option: --takeover" in observe_takeover.stderr
    zero = herdr_shim.run("terminal", "session", "observe", "w1:p1", "--cols", "0")
    assert zero.returncode == 1
    assert zero.stderr == (
        'Error: Custom { kind: InvalidInput, error: "--cols must be greater than 0" }\n'
    )
    huge = herdr_shim.run("terminal", "session", "observe", "w1:p1", "--rows", "70000")
    assert "--rows must be an integer between 1 and 65535" in huge.stderr
    bare = herdr_shim.run("terminal")
    assert bare.returncode == 2
    assert bare.stderr.startswith("herdr terminal commands:\n")
    helped = herdr_shim.run("terminal", "session", "control", "-h")
    assert helped.returncode == 0
    assert helped.stderr == usage + "\n"


def test_no_server_is_herdrs_connect_failure(
    herdr_shim: HerdrShim, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "gone.sock"
    monkeypatch.setenv("HERDR_SOCKET_PATH", str(missing))
    done = herdr_shim.run("terminal", "session", "observe", "w1:p1")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "herdr: failed to connect to server: No such file or directory (os error 2)",
        "Is herdr server running? Start it with `herdr server`.",
        f"Socket path: {tmp_path / 'gone-client.sock'}",
    ]


def test_attach_without_a_terminal_exits_with_herdrs_message(
    herdr_shim: HerdrShim, pane: str
) -> None:
    terminal = _terminal_id(herdr_shim, pane)
    done = subprocess.run(
        ["herdr", "terminal", "attach", terminal],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=WAIT,
        start_new_session=True,  # no controlling terminal: /dev/tty cannot open
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("herdr: failed to set up terminal: ")


def _attach_on_a_pty(herdr_shim: HerdrShim, pane: str, *command: str) -> None:
    """Run ``herdr COMMAND...`` on a pty, type into it, detach with ctrl+b q."""
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child becomes the shim
        os.execvp("herdr", ["herdr", *command])
    output = bytearray()

    def read_until(needle: bytes) -> None:
        while needle not in output:
            chunk = os.read(fd, 65536)
            assert chunk, f"attach ended before {needle!r}: {bytes(output)!r}"
            output.extend(chunk)

    try:
        read_until(b"\x1b[?2026l")  # the first frame
        assert b"\x1b[?1000h" in output  # herdr's direct attach captures the mouse
        os.write(fd, b"echo attached-ok\r")
        read_until(b"attached-ok\x1b")
        os.write(fd, b"\x02q")
        read_until(b"Run `herdr` to reattach")
        assert b"herdr: detached from server" in output
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    read = herdr_shim.run("pane", "read", pane, "--source", "recent")
    assert "attached-ok" in read.stdout


def test_attach_on_a_terminal_types_into_the_pane_and_detaches_with_ctrl_b_q(
    herdr_shim: HerdrShim, pane: str
) -> None:
    _attach_on_a_pty(herdr_shim, pane, "terminal", "attach", _terminal_id(herdr_shim, pane))


def test_agent_attach_attaches_the_agents_terminal(herdr_shim: HerdrShim, pane: str) -> None:
    # herdrdev/herdr src/cli/agent.rs:472-490@1c76079f: agent.get, then terminal attach
    reported = herdr_shim.run(
        "pane", "report-agent", pane, "--source", "test", "--agent", "claude", "--state", "idle"
    )
    assert reported.returncode == 0, reported.stderr
    _attach_on_a_pty(herdr_shim, pane, "agent", "attach", pane)


def test_attach_usage_and_an_unknown_agent(herdr_shim: HerdrShim) -> None:
    bare = herdr_shim.run("terminal", "attach")
    assert bare.returncode == 2
    assert bare.stderr == "usage: herdr terminal attach <terminal_id> [--takeover]\n"
    bogus = herdr_shim.run("terminal", "attach", "term_1", "--bogus")
    assert bogus.returncode == 2
    assert bogus.stderr == "unknown option: --bogus\n"  # src/cli.rs:730, no usage line
    missing = herdr_shim.run("agent", "attach", "nobody")
    assert missing.returncode == 1
    answer = json.loads(missing.stderr)
    assert answer["id"] == "cli:agent:attach:resolve"
    assert answer["error"]["code"] == "agent_not_found"


def test_attach_of_an_unknown_terminal_is_herdrs_shutdown_line(herdr_shim: HerdrShim) -> None:
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover
        os.execvp("herdr", ["herdr", "terminal", "attach", "term_99"])
    output = bytearray()
    try:
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            output.extend(chunk)
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 1
    assert b"herdr: server shut down: terminal attach failed: terminal term_99 not found" in output


def _window_title(herdr_shim: HerdrShim) -> str | None:
    return herdr_shim.handle.server.window_title


def test_title_set_and_clear_send_the_window_title_methods(herdr_shim: HerdrShim) -> None:
    done = herdr_shim.run("terminal", "title", "set", "my title")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["id"] == "cli:terminal:title:set"
    assert _window_title(herdr_shim) == "my title"
    cleared = herdr_shim.run("terminal", "title", "clear")
    assert cleared.returncode == 0
    assert json.loads(cleared.stdout)["id"] == "cli:terminal:title:clear"
    assert _window_title(herdr_shim) is None
    assert herdr_shim.run("terminal", "title", "set").returncode == 2
