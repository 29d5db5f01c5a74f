"""``herdr agent start``: herdr's pane pin, busy retry, readiness polling, errors and timeout.

A scripted canned server answers each method from a queue (the last answer
repeats), and the command runs on a fake clock whose ``sleep`` only moves
time forward, so the 2 s busy retry and the startup timeout take no real time.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shedproto.clients.herdr_cli import run
from shedproto.clients.herdr_cli._agent_start import agent_start
from shedproto.clients.herdr_cli._runtime import Context
from shedproto.herdr import DEFAULT_PROTOCOL

from .test_cli_compat import CannedServer

ARGS = ["bob", "--kind", "pi", "--pane", "w1:p1"]
SHELL = {"shell_pid": 10, "foreground_process_group_id": 10,
         "foreground_processes": [{"pid": 10, "name": "bash", "argv": ["-bash"]}]}  # fmt: skip
PROGRAM = {"shell_pid": 10, "foreground_process_group_id": 11,
           "foreground_processes": [{"pid": 11, "name": "pi", "argv": ["pi"]}]}  # fmt: skip
BUSY = {"code": "agent_pane_busy", "message": "agent target pane w1:p1 is not an available shell"}


def agent(**fields: Any) -> dict[str, Any]:
    """A complete ``AgentInfo``: bob, a ``pi`` agent in w1:p1 on terminal t1."""
    info: dict[str, Any] = {
        "terminal_id": "t1", "name": "bob", "agent": "pi", "agent_status": "unknown",
        "workspace_id": "w1", "tab_id": "w1:t1", "pane_id": "w1:p1", "focused": False,
        "launch_pending": True, "revision": 0,
    }  # fmt: skip
    info.update(fields)
    return {key: value for key, value in info.items() if value is not None}


READY = agent(agent_status="idle", launch_pending=False, interactive_ready=True)


class ScriptedServer(CannedServer):
    """Answers each method from ``script[method]``: a queue whose last answer repeats."""

    def __init__(self, path: Path, protocol: int) -> None:
        self.script: dict[str, list[dict[str, Any]]] = {}
        super().__init__(path, protocol)

    def answer(self, request: dict[str, Any]) -> bytes:
        queue = self.script.get(request["method"])
        if not queue:
            return super().answer(request)
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if answer.get("raw") is not None:
            return str(answer["raw"]).encode()
        return json.dumps({"id": request["id"], **answer}).encode()

    def methods(self) -> list[tuple[str, str]]:
        """(request id, method) of every request but the guard's pings."""
        return [(r["id"], r["method"]) for r in self.sent()]


def ok(result: dict[str, Any]) -> dict[str, Any]:
    return {"result": result}


def started(info: dict[str, Any] | None = None) -> dict[str, Any]:
    return ok({"type": "agent_started", "agent": info or agent(), "argv": ["pi"]})


def got(info: dict[str, Any]) -> dict[str, Any]:
    return ok({"type": "agent_info", "agent": info})


def pane(terminal_id: str | None = "t1") -> dict[str, Any]:
    info = {"pane_id": "w1:p1", "workspace_id": "w1", "tab_id": "w1:t1", "focused": False,
            "agent_status": "unknown", "revision": 0, "terminal_id": terminal_id}  # fmt: skip
    return ok({"type": "pane_info", "pane": info}) if terminal_id else ok({"type": "ok"})


def process(info: dict[str, Any]) -> dict[str, Any]:
    return ok({"type": "pane_process_info", "process_info": {"pane_id": "w1:p1", **info}})


class FakeClock:
    """Time that moves only when the command sleeps; ``naps`` records each sleep."""

    def __init__(self) -> None:
        self.ns = 0  # whole nanoseconds, as Rust's Instant: 50 naps of 0.1 s are exactly 5 s
        self.naps: list[float] = []

    @property
    def now(self) -> float:
        return self.ns / 1e9

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.naps.append(seconds)
        self.ns += round(seconds * 1e9)


@pytest.fixture
def server(short_socket_dir: Path) -> Iterator[ScriptedServer]:
    scripted = ScriptedServer(short_socket_dir / "h.sock", DEFAULT_PROTOCOL)
    scripted.script["pane.get"] = [pane()]
    scripted.script["pane.process_info"] = [process(SHELL)]
    scripted.script["agent.start"] = [started()]
    try:
        yield scripted
    finally:
        scripted.close()


def start(server: ScriptedServer, clock: FakeClock, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    ctx = Context(
        env={"HERDR_SOCKET_PATH": str(server.path)},
        client_protocol=DEFAULT_PROTOCOL,
        stdout=out,
        stderr=err,
        monotonic=clock.monotonic,
        sleep=clock.sleep,
    )
    code = agent_start(ctx, list(args or ARGS))
    return code, out.getvalue(), err.getvalue()


def error_line(code: str, message: str) -> str:
    return (
        json.dumps(
            {"id": "cli:agent:start", "error": {"code": code, "message": message}},
            separators=(",", ":"),
        )
        + "\n"
    )


def test_start_polls_until_the_agent_is_interactive_ready(server: ScriptedServer) -> None:
    server.script["agent.get"] = [
        got(agent(agent_status="working")),
        got(agent(agent_status="idle")),  # idle but still launch_pending: keep polling
        got(READY),
    ]
    clock = FakeClock()
    code, out, err = start(server, clock)
    assert (code, err) == (0, "")
    answer = json.loads(out)
    assert answer["id"] == "cli:agent:start"
    assert answer["result"]["type"] == "agent_started"
    assert answer["result"]["argv"] == ["pi"]
    assert answer["result"]["agent"]["interactive_ready"] is True
    assert answer["result"]["agent"]["agent_status"] == "idle"
    assert server.methods() == [
        ("cli:agent:start:pane", "pane.get"),
        ("cli:agent:start", "agent.start"),
        ("cli:agent:start", "agent.get"),
        ("cli:agent:start", "agent.get"),
        ("cli:agent:start", "agent.get"),
    ]
    assert clock.naps == [0.1, 0.1]
    # pings guard pane.get, agent.start and only the first poll
    assert [r["method"] for r in server.requests].count("ping") == 3
    first_poll = next(r for r in server.sent() if r["method"] == "agent.get")
    assert first_poll["params"] == {"target": "bob"}
    sent = next(r for r in server.sent() if r["method"] == "agent.start")
    assert sent["params"] == {"name": "bob", "kind": "pi", "pane_id": "w1:p1"}  # no empty args


def test_start_polls_by_pane_when_the_name_is_not_found(server: ScriptedServer) -> None:
    missing = {"code": "agent_not_found", "message": "agent target bob not found"}
    server.script["agent.get"] = [{"error": missing}, got(READY)]
    code, _, err = start(server, FakeClock())
    assert (code, err) == (0, "")
    polls = [r["params"]["target"] for r in server.sent() if r["method"] == "agent.get"]
    assert polls == ["bob", "w1:p1"]


def test_busy_pane_with_an_initialising_shell_is_retried(server: ScriptedServer) -> None:
    server.script["agent.start"] = [{"error": BUSY}, {"error": BUSY}, started()]
    server.script["agent.get"] = [got(READY)]
    clock = FakeClock()
    code, _, err = start(server, clock)
    assert (code, err) == (0, "")
    methods = [method for _, method in server.methods()]
    assert methods.count("agent.start") == 3
    assert methods[:4] == ["pane.get", "agent.start", "pane.get", "pane.process_info"]
    assert clock.naps == [0.1, 0.1]


def test_busy_pane_is_retried_for_two_seconds_then_reported(server: ScriptedServer) -> None:
    server.script["agent.start"] = [{"error": BUSY}]
    clock = FakeClock()
    code, out, err = start(server, clock)
    assert (code, out) == (1, "")
    assert err == error_line("agent_pane_busy", BUSY["message"])
    assert clock.now == pytest.approx(2.0)
    assert all(nap == pytest.approx(0.1) for nap in clock.naps)
    assert [m for _, m in server.methods()].count("agent.start") == len(clock.naps)


@pytest.mark.parametrize(
    ("why", "args", "pane_answer", "process_answer"),
    [
        ("shell no longer in front", ARGS, pane(), process(PROGRAM)),
        ("no terminal to pin", ARGS, pane(None), process(SHELL)),
        ("timeout not retryable", [*ARGS, "--timeout", "3000"], pane(), process(SHELL)),
    ],
)
def test_busy_pane_is_reported_at_once(
    server: ScriptedServer,
    why: str,
    args: list[str],
    pane_answer: dict[str, Any],
    process_answer: dict[str, Any],
) -> None:
    server.script["agent.start"] = [{"error": BUSY}]
    server.script["pane.get"] = [pane_answer]
    server.script["pane.process_info"] = [process_answer]
    clock = FakeClock()
    code, out, err = start(server, clock, *args)
    assert (code, out, err) == (1, "", error_line("agent_pane_busy", BUSY["message"])), why
    assert [m for _, m in server.methods()].count("agent.start") == 1
    assert clock.naps == []


def test_other_start_errors_are_printed_as_herdr_prints_them(server: ScriptedServer) -> None:
    taken = {"code": "agent_name_taken", "message": "agent name bob is already used; candidates: "}
    server.script["agent.start"] = [{"error": taken}]
    code, out, err = start(server, FakeClock())
    assert (code, out, err) == (1, "", error_line(taken["code"], taken["message"]))
    assert "pane.process_info" not in [m for _, m in server.methods()]


@pytest.mark.parametrize(
    ("poll", "code", "message"),
    [
        (agent(terminal_id="t9"), "agent_name_not_found",
         "named agent bob no longer owns the target terminal"),
        (agent(agent="codex"), "agent_kind_mismatch", "expected pi, detected codex"),
        (agent(name="other"), "agent_name_not_found",
         "named agent bob no longer owns the target terminal"),
        (agent(agent_status="blocked"), "agent_not_ready",
         "agent bob is blocked during startup and is not ready for prompts"),
        (agent(agent_status="done", launch_pending=False), "agent_start_failed",
         "agent process exited before becoming interactive"),
    ],
)  # fmt: skip
def test_startup_poll_errors(
    server: ScriptedServer, poll: dict[str, Any], code: str, message: str
) -> None:
    server.script["agent.get"] = [got(poll)]
    assert start(server, FakeClock()) == (1, "", error_line(code, message))


def test_start_answer_without_an_agent_kind_fails(server: ScriptedServer) -> None:
    server.script["agent.start"] = [started(agent(agent=None))]
    message = "agent start response did not include canonical agent kind"
    assert start(server, FakeClock()) == (1, "", error_line("agent_start_failed", message))
    assert "agent.get" not in [m for _, m in server.methods()]


def test_started_on_another_terminal_than_pinned_loses_the_name(server: ScriptedServer) -> None:
    server.script["agent.start"] = [started(agent(terminal_id="t2"))]
    message = "named agent bob no longer owns the target terminal"
    assert start(server, FakeClock()) == (1, "", error_line("agent_name_not_found", message))


def test_startup_times_out_after_the_timeout_flag(server: ScriptedServer) -> None:
    server.script["agent.get"] = [got(agent(agent_status="working"))]
    clock = FakeClock()
    code, out, err = start(server, clock, *ARGS, "--timeout", "5000")
    assert (code, out) == (1, "")
    assert err == error_line("timeout", "timed out waiting for agent startup")
    assert clock.now == pytest.approx(5.0)
    assert server.methods()[-1] == ("cli:agent:start:timeout", "agent.get")
    sent = next(r for r in server.sent() if r["method"] == "agent.start")
    assert sent["params"]["timeout_ms"] == 5000
    assert server.requests[-1]["method"] == "agent.get"  # the last ask is unguarded


def test_default_timeout_is_thirty_seconds(server: ScriptedServer) -> None:
    server.script["agent.get"] = [got(agent(agent_status="unknown"))]
    clock = FakeClock()
    code, _, err = start(server, clock)
    assert code == 1
    assert json.loads(err)["error"]["code"] == "timeout"
    assert clock.now == pytest.approx(30.0)


def test_transport_failure_while_polling_is_one_json_line(server: ScriptedServer) -> None:
    server.script["agent.get"] = [{"raw": "not json"}]
    code, out, err = start(server, FakeClock())
    assert (code, out) == (1, "")
    assert err.count("\n") == 1
    line = json.loads(err)
    assert line["id"] == "cli:agent:start"
    assert line["error"]["code"] == "agent_start_transport_failed"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "usage: herdr agent start <name> --kind KIND --pane ID [--timeout MS] "
             "[-- <agent-args...>]"),
        (["bob", "--pane", "w1:p1"], "missing required --kind"),
        (["bob", "--kind", "pi"], "missing required --pane"),
        (["bob", "--kind", "pi", "--pane"], "missing value for --pane"),
        (["bob", "--kind", "--", "x"], "missing value for --kind"),
        (["bob", "--kind", "pi", "--pane", "w1:p1", "--timeout", "x"],
         "invalid value for --timeout: x"),
        (["bob", "--model", "x"], "unknown option: --model"),
    ],
)  # fmt: skip
def test_start_usage_errors_exit_2(server: ScriptedServer, argv: list[str], message: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    env = {"HERDR_SOCKET_PATH": str(server.path)}
    code = run(["agent", "start", *argv], env=env, stdout=out, stderr=err)
    assert (code, out.getvalue(), err.getvalue()) == (2, "", message + "\n")
    assert server.requests == []


def test_start_against_no_server_reports_server_not_running(short_socket_dir: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    env = {"HERDR_SOCKET_PATH": str(short_socket_dir / "none.sock")}
    code = run(["agent", "start", *ARGS], env=env, stdout=out, stderr=err)
    assert (code, out.getvalue()) == (1, "")
    assert json.loads(err.getvalue())["error"]["code"] == "server_not_running"
