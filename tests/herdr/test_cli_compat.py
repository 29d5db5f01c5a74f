"""``shedproto herdr cli``: each herdr subcommand builds herdr's request and prints as herdr does.

A tiny canned server records every request line and answers ``ping`` with a
pong and anything else with a canned result, so request construction is
checked for every subcommand, including methods the reference server does
not model yet.
"""

from __future__ import annotations

import io
import json
import re
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shedproto.clients.herdr_cli import SHIM_MARKER, ShimRefused, run, write_shim
from shedproto.herdr import DEFAULT_PROTOCOL

READ = {
    "type": "pane_read",
    "read": {
        "pane_id": "w1:p1",
        "workspace_id": "w1",
        "tab_id": "w1:t1",
        "source": "recent",
        "format": "text",
        "text": "hello\nworld\n",
        "revision": 0,
        "truncated": False,
    },
}


class CannedServer:
    """Answers one request per connection; ``requests`` holds every decoded request line."""

    def __init__(self, path: Path, protocol: int) -> None:
        self.path = path
        self.protocol = protocol
        self.requests: list[dict[str, Any]] = []
        self.results: dict[str, Any] = {}
        self.errors: dict[str, dict[str, str]] = {}
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(path))
        self._sock.listen(16)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while not data.endswith(b"\n"):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                if not data:
                    continue
                request = json.loads(data)
                self.requests.append(request)
                conn.sendall(self.answer(request) + b"\n")

    def answer(self, request: dict[str, Any]) -> bytes:
        """Return the answer line (without its newline) for one request."""
        method = request["method"]
        answer: dict[str, Any] = {"id": request["id"]}
        if method == "ping":
            answer["result"] = {"type": "pong", "version": "0.8.0", "protocol": self.protocol}
        elif method in self.errors:
            answer["error"] = self.errors[method]
        else:
            answer["result"] = self.results.get(method, {"type": "ok"})
        return json.dumps(answer).encode()

    def close(self) -> None:
        self._sock.close()

    def sent(self) -> list[dict[str, Any]]:
        """The requests other than the guard's pings."""
        return [r for r in self.requests if r["method"] != "ping"]


@pytest.fixture
def canned(short_socket_dir: Path) -> Iterator[CannedServer]:
    server = CannedServer(short_socket_dir / "h.sock", DEFAULT_PROTOCOL)
    try:
        yield server
    finally:
        server.close()


def herdr(
    server: CannedServer, *argv: str, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    environment = {"HERDR_SOCKET_PATH": str(server.path), "HOME": "/home/u"}
    environment.update(env or {})
    code = run(list(argv), env=environment, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


CLOSE_USAGE = "usage: herdr workspace close <workspace_id> [--group]"
"""The usage a bad ``workspace close`` prints (a client's record of live 0.9.1 output)."""

# (argv, request id, method, params) as herdr's CLI builds them (src/cli/*.rs).
REQUESTS: list[tuple[list[str], str, str, dict[str, Any]]] = [
    (["workspace", "list"], "cli:workspace:list", "workspace.list", {}),
    (
        ["workspace", "create", "--cwd", "/tmp", "--label", "x", "--env", "A=1", "--focus"],
        "cli:workspace:create",
        "workspace.create",
        {"cwd": "/tmp", "label": "x", "env": {"A": "1"}, "focus": True},
    ),
    (
        ["workspace", "create"],
        "cli:workspace:create",
        "workspace.create",
        {"env": {}, "focus": False},
    ),
    (["workspace", "get", "w1"], "cli:workspace:get", "workspace.get", {"workspace_id": "w1"}),
    (
        ["workspace", "focus", "w1"],
        "cli:workspace:focus",
        "workspace.focus",
        {"workspace_id": "w1"},
    ),
    (
        ["workspace", "rename", "w1", "my", "work"],
        "cli:workspace:rename",
        "workspace.rename",
        {"workspace_id": "w1", "label": "my work"},
    ),
    (
        [
            "workspace",
            "report-metadata",
            "w1",
            "--source",
            "ci",
            "--token",
            "k=v",
            "--clear-token",
            "old",
            "--seq",
            "3",
            "--ttl-ms",
            "500",
        ],
        "cli:request",
        "workspace.report_metadata",
        {
            "workspace_id": "w1",
            "source": "ci",
            "tokens": {"k": "v", "old": None},
            "seq": 3,
            "ttl_ms": 500,
        },
    ),
    (
        ["workspace", "close", "w1"],
        "cli:workspace:close",
        "workspace.close",
        {"workspace_id": "w1"},
    ),
    # --group maps to close_group (CHANGELOG.md:27@16996f3; clients' records of 0.9.1/0.9.3)
    (
        ["workspace", "close", "w1", "--group"],
        "cli:workspace:close",
        "workspace.close",
        {"workspace_id": "w1", "close_group": True},
    ),
    (["tab", "list", "--workspace", "w1"], "cli:tab:list", "tab.list", {"workspace_id": "w1"}),
    (
        ["tab", "create", "--workspace", "w1", "--label", "t", "--no-focus"],
        "cli:tab:create",
        "tab.create",
        {"workspace_id": "w1", "label": "t", "env": {}, "focus": False},
    ),
    (["tab", "get", "w1:t1"], "cli:tab:get", "tab.get", {"tab_id": "w1:t1"}),
    (["tab", "focus", "w1:t1"], "cli:tab:focus", "tab.focus", {"tab_id": "w1:t1"}),
    (
        ["tab", "rename", "w1:t1", "a", "b"],
        "cli:tab:rename",
        "tab.rename",
        {"tab_id": "w1:t1", "label": "a b"},
    ),
    (["tab", "close", "w1:t1"], "cli:tab:close", "tab.close", {"tab_id": "w1:t1"}),
    (["worktree", "list", "--cwd", "/r"], "cli:worktree:list", "worktree.list", {"cwd": "/r"}),
    (
        [
            "worktree",
            "create",
            "--workspace",
            "w1",
            "--branch",
            "b",
            "--base",
            "main",
            "--path",
            "~/wt",
            "--label",
            "L",
            "--focus",
            "--json",
        ],
        "cli:worktree:create",
        "worktree.create",
        {
            "workspace_id": "w1",
            "branch": "b",
            "base": "main",
            "path": "/home/u/wt",
            "label": "L",
            "focus": True,
        },
    ),
    (
        ["worktree", "open", "--branch", "b"],
        "cli:worktree:open",
        "worktree.open",
        {"branch": "b", "focus": False},
    ),
    (
        ["worktree", "remove", "--workspace", "w2", "--force"],
        "cli:worktree:remove",
        "worktree.remove",
        {"workspace_id": "w2", "force": True},
    ),
    (["pane", "list"], "cli:pane:list", "pane.list", {}),
    (["pane", "get", "w1:p1"], "cli:pane:get", "pane.get", {"pane_id": "w1:p1"}),
    (["pane", "current"], "cli:pane:current", "pane.current", {"caller_pane_id": "w1:p9"}),
    (["pane", "layout", "--pane", "w1:p2"], "cli:pane:layout", "pane.layout", {"pane_id": "w1:p2"}),
    (
        ["pane", "process-info", "--current"],
        "cli:pane:process_info",
        "pane.process_info",
        {"pane_id": "w1:p9"},
    ),
    (["pane", "edges"], "cli:pane:edges", "pane.edges", {}),
    (
        ["pane", "neighbor", "--direction", "left", "--current"],
        "cli:pane:neighbor",
        "pane.neighbor",
        {"direction": "left"},
    ),
    (
        ["pane", "focus", "--direction", "up", "--pane", "w1:p2"],
        "cli:pane:focus",
        "pane.focus_direction",
        {"direction": "up", "pane_id": "w1:p2"},
    ),
    (
        ["pane", "resize", "--direction", "right", "--amount", "0.25"],
        "cli:pane:resize",
        "pane.resize",
        {"direction": "right", "amount": 0.25},
    ),
    (
        ["pane", "zoom", "w1:p1", "--on"],
        "cli:pane:zoom",
        "pane.zoom",
        {"pane_id": "w1:p1", "mode": "on"},
    ),
    (["pane", "zoom"], "cli:pane:zoom", "pane.zoom", {"mode": "toggle"}),
    (
        ["pane", "rename", "w1:p1", "--clear"],
        "cli:pane:rename",
        "pane.rename",
        {"pane_id": "w1:p1"},
    ),
    (
        ["pane", "input", "w1:p1", "--right-click=pane"],
        "cli:pane:input:set",
        "pane.input.set",
        {"pane_id": "w1:p1", "right_click": "pane"},
    ),
    (
        [
            "pane",
            "split",
            "w1:p1",
            "--direction",
            "down",
            "--ratio",
            "0.3",
            "--cwd",
            "/tmp",
            "--env",
            "K=V",
            "--focus",
        ],
        "cli:pane:split",
        "pane.split",
        {
            "target_pane_id": "w1:p1",
            "direction": "down",
            "ratio": 0.3,
            "cwd": "/tmp",
            "env": {"K": "V"},
            "focus": True,
            "right_click": "herdr",
        },
    ),
    (
        ["pane", "swap", "--source-pane", "w1:p1", "--target-pane", "w1:p2"],
        "cli:pane:swap",
        "pane.swap",
        {"source_pane_id": "w1:p1", "target_pane_id": "w1:p2"},
    ),
    (
        ["pane", "swap", "--direction", "down"],
        "cli:pane:swap",
        "pane.swap",
        {"direction": "down"},
    ),
    (
        ["pane", "move", "w1:p2", "--tab", "w1:t2", "--split", "right", "--ratio", "0.5"],
        "cli:pane:move",
        "pane.move",
        {
            "pane_id": "w1:p2",
            "focus": True,
            "destination": {"type": "tab", "tab_id": "w1:t2", "split": "right", "ratio": 0.5},
        },
    ),
    (
        ["pane", "move", "w1:p2", "--new-workspace", "--label", "L", "--no-focus"],
        "cli:pane:move",
        "pane.move",
        {
            "pane_id": "w1:p2",
            "focus": False,
            "destination": {"type": "new_workspace", "label": "L"},
        },
    ),
    (["pane", "close", "w1:p1"], "cli:pane:close", "pane.close", {"pane_id": "w1:p1"}),
    (
        ["pane", "send-text", "w1:p1", "echo", "hi"],
        "cli:request",
        "pane.send_text",
        {"pane_id": "w1:p1", "text": "echo hi"},
    ),
    (
        ["pane", "send-keys", "w1:p1", "C-c", "enter"],
        "cli:request",
        "pane.send_keys",
        {"pane_id": "w1:p1", "keys": ["C-c", "enter"]},
    ),
    (
        ["pane", "run", "w1:p1", "ls", "-la"],
        "cli:request",
        "pane.send_input",
        {"pane_id": "w1:p1", "text": "ls -la", "keys": ["Enter"]},
    ),
    (
        [
            "pane",
            "wait-output",
            "w1:p1",
            "--regex=^done$",
            "--source",
            "recent-unwrapped",
            "--timeout",
            "2000",
            "--raw",
        ],
        "cli:pane:wait-output",
        "pane.wait_for_output",
        {
            "pane_id": "w1:p1",
            "match": {"type": "regex", "value": "^done$"},
            "source": "recent_unwrapped",
            "timeout_ms": 2000,
            "strip_ansi": False,
        },
    ),
    (
        [
            "pane",
            "report-agent",
            "w1:p1",
            "--source",
            "hook",
            "--agent",
            "claude",
            "--state",
            "working",
            "--seq",
            "4",
            "--agent-session-id",
            "s1",
        ],
        "cli:request",
        "pane.report_agent",
        {
            "pane_id": "w1:p1",
            "source": "hook",
            "agent": "claude",
            "state": "working",
            "seq": 4,
            "agent_session_id": "s1",
        },
    ),
    (
        [
            "pane",
            "report-agent-session",
            "w1:p1",
            "--source",
            "hook",
            "--agent",
            "claude",
            "--agent-session-path",
            "/s.jsonl",
            "--session-start-source",
            "resume",
        ],
        "cli:request",
        "pane.report_agent_session",
        {
            "pane_id": "w1:p1",
            "source": "hook",
            "agent": "claude",
            "agent_session_path": "/s.jsonl",
            "session_start_source": "resume",
        },
    ),
    (
        ["pane", "release-agent", "w1:p1", "--source", "hook", "--agent", "claude"],
        "cli:request",
        "pane.release_agent",
        {"pane_id": "w1:p1", "source": "hook", "agent": "claude"},
    ),
    (
        [
            "pane",
            "report-metadata",
            "w1:p1",
            "--source",
            "s",
            "--title",
            "T",
            "--state-label",
            "Working=busy",
            "--token",
            "a=b",
            "--clear-display-agent",
        ],
        "cli:request",
        "pane.report_metadata",
        {
            "pane_id": "w1:p1",
            "source": "s",
            "title": "T",
            "state_labels": {"working": "busy"},
            "tokens": {"a": "b"},
            "clear_title": False,
            "clear_display_agent": True,
            "clear_state_labels": False,
        },
    ),
    (["agent", "list"], "cli:agent:list", "agent.list", {}),
    (["agent", "get", "bob"], "cli:agent:get", "agent.get", {"target": "bob"}),
    (["agent", "focus", "bob"], "cli:agent:focus", "agent.focus", {"target": "bob"}),
    (
        ["agent", "wait", "bob", "--until", "idle", "--until", "done", "--timeout", "900"],
        "cli:agent:wait",
        "agent.wait",
        {"target": "bob", "until": ["idle", "done"], "timeout_ms": 900},
    ),
    (
        ["agent", "prompt", "bob", "fix it", "--wait", "--until", "idle"],
        "cli:agent:prompt",
        "agent.prompt",
        {"target": "bob", "text": "fix it", "wait": {"until": ["idle"]}},
    ),
    (
        ["agent", "rename", "w1:p1", "bob"],
        "cli:agent:rename",
        "agent.rename",
        {"target": "w1:p1", "name": "bob"},
    ),
    (
        ["agent", "send-keys", "bob", "esc"],
        "cli:agent:send-keys",
        "agent.send_keys",
        {"target": "bob", "keys": ["esc"]},
    ),
    (
        ["notification", "show", "Done", "--body", "b", "--position", "top-left"],
        "cli:notification:show",
        "notification.show",
        {"title": "Done", "body": "b", "position": "top-left", "sound": "none"},
    ),
    (["api", "snapshot"], "cli:api:snapshot", "session.snapshot", {}),
    (["server", "reload-config"], "cli:server:reload-config", "server.reload_config", {}),
    (
        ["server", "reload-agent-manifests"],
        "cli:server:reload-agent-manifests",
        "server.reload_agent_manifests",
        {},
    ),
    (
        ["server", "agent-manifests", "--json"],
        "cli:server:agent-manifests",
        "server.agent_manifests",
        {},
    ),
    (
        ["plugin", "link", "/p", "--disabled"],
        "cli:plugin",
        "plugin.link",
        {"path": "/p", "enabled": False},
    ),
    (["plugin", "list", "--json"], "cli:plugin", "plugin.list", {}),
    (["plugin", "unlink", "x"], "cli:plugin", "plugin.unlink", {"plugin_id": "x"}),
    (["plugin", "enable", "x"], "cli:plugin", "plugin.enable", {"plugin_id": "x"}),
    (["plugin", "disable", "x"], "cli:plugin", "plugin.disable", {"plugin_id": "x"}),
    (
        ["plugin", "action", "list", "--plugin", "x"],
        "cli:plugin",
        "plugin.action.list",
        {"plugin_id": "x"},
    ),
    (
        ["plugin", "action", "invoke", "a1"],
        "cli:plugin",
        "plugin.action.invoke",
        {"action_id": "a1", "context": {"invocation_source": "cli"}},
    ),
    (["plugin", "log", "list", "--limit", "5"], "cli:plugin", "plugin.log.list", {"limit": 5}),
    (
        [
            "plugin",
            "pane",
            "open",
            "--plugin",
            "x",
            "--entrypoint",
            "main",
            "--placement",
            "fullscreen",
            "--width",
            "80%",
            "--height",
            "20",
        ],
        "cli:plugin",
        "plugin.pane.open",
        {
            "plugin_id": "x",
            "entrypoint": "main",
            "placement": "zoomed",
            "width": "80%",
            "height": 20,
            "focus": False,
            "env": {},
        },
    ),
    (["plugin", "pane", "focus", "w1:p3"], "cli:plugin", "plugin.pane.focus", {"pane_id": "w1:p3"}),
    (["plugin", "pane", "close", "w1:p3"], "cli:plugin", "plugin.pane.close", {"pane_id": "w1:p3"}),
]


@pytest.mark.parametrize(
    ("argv", "request_id", "method", "params"),
    REQUESTS,
    ids=[" ".join(r[0][:3]) for r in REQUESTS],
)
def test_subcommand_sends_herdrs_request(
    canned: CannedServer, argv: list[str], request_id: str, method: str, params: dict[str, Any]
) -> None:
    code, _, err = herdr(canned, *argv, env={"HERDR_PANE_ID": "w1:p9"})
    assert code == 0, err
    assert canned.requests[0]["method"] == "ping"  # the protocol guard pings first
    assert canned.sent() == [{"id": request_id, "method": method, "params": params}]


def test_print_response_writes_the_answer_line_on_stdout(canned: CannedServer) -> None:
    code, out, err = herdr(canned, "workspace", "close", "w1")
    assert (code, err) == (0, "")
    assert out == '{"id":"cli:workspace:close","result":{"type":"ok"}}\n'


def test_an_error_answer_goes_to_stderr_with_exit_1(canned: CannedServer) -> None:
    canned.errors["pane.get"] = {"code": "pane_not_found", "message": "pane w9:p1 not found"}
    code, out, err = herdr(canned, "pane", "get", "w9:p1")
    assert (code, out) == (1, "")
    assert json.loads(err) == {
        "id": "cli:pane:get",
        "error": {"code": "pane_not_found", "message": "pane w9:p1 not found"},
    }


def test_send_ok_commands_print_nothing(canned: CannedServer) -> None:
    assert herdr(canned, "pane", "send-text", "w1:p1", "x") == (0, "", "")


def test_read_prints_the_text_only(canned: CannedServer) -> None:
    canned.results["pane.read"] = READ
    canned.results["agent.read"] = READ
    assert herdr(canned, "pane", "read", "w1:p1") == (0, "hello\nworld\n", "")
    assert herdr(canned, "agent", "read", "bob", "--ansi")[1] == "hello\nworld\n"
    assert canned.sent()[0]["params"] == {
        "pane_id": "w1:p1", "source": "recent", "format": "text", "strip_ansi": True
    }  # fmt: skip
    assert canned.sent()[1]["params"] == {
        "target": "bob", "source": "recent", "format": "ansi", "strip_ansi": False
    }  # fmt: skip


LATE_ERROR = 'Error: Custom { kind: Other, error: "invalid value for --lines: -3" }'


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["workspace"], 2, "herdr workspace commands:"),
        (["workspace", "help"], 0, "herdr workspace commands:"),
        (["workspace", "get"], 2, "usage: herdr workspace get <workspace_id>"),
        (["workspace", "create", "--bogus"], 2, "unknown option: --bogus"),
        (["workspace", "create", "--cwd"], 2, "missing value for --cwd"),
        (["workspace", "create", "--env", "NOEQ"], 2, "env must use KEY=VALUE"),
        (["workspace", "report-metadata", "w1", "--token", "a=b"], 2, "missing required --source"),
        (["pane", "split"], 2, "usage: herdr pane split"),
        (["pane", "split", "--direction", "up"], 2, "invalid split direction: up"),
        (["pane", "zoom", "--on", "--off"], 2, "provide only one of --toggle, --on, or --off"),
        (["pane", "read", "w1:p1", "--lines", "x"], 2, "invalid value for --lines: x"),
        (["pane", "wait-output", "w1:p1"], 2, "missing required --match or --regex"),
        (["pane", "move", "w1:p1", "--new-tab", "--new-workspace"], 2, "usage: herdr pane move"),
        (["pane", "input", "--current", "--right-click", "pane"], 2, "--current requires HERDR_"),
        (["pane", "report-metadata", "w1:p1", "--source", "s"], 2, "missing metadata field"),
        (["agent", "prompt", "bob", "hi", "--until", "idle"], 2, "--until requires --wait"),
        (["agent", "wait", "bob", "--until", "sleepy"], 2, "invalid agent status: sleepy"),
        (["agent", "read", "bob", "--lines", "-3"], 1, LATE_ERROR),
        (["workspace", "close", "w1", "--close-group"], 2, CLOSE_USAGE),
        (["workspace", "close"], 2, CLOSE_USAGE),
        (["worktree", "open", "--path", "/a", "--branch", "b"], 2, "usage: herdr worktree open"),
        (["worktree", "remove"], 2, "usage: herdr worktree remove --workspace ID [--force]"),
        (["notification", "show", "t", "--sound", "loud"], 2, "invalid sound: loud"),
        (["integration", "install", "emacs"], 2, "unknown integration target: emacs"),
        (["status", "bogus"], 2, "herdr status commands:"),
        (["api", "schema", "--yaml"], 2, "unknown option: --yaml"),
        (["plugin", "pane", "open", "--plugin", "x"], 2, "missing required --entrypoint"),
        (["teleport"], 2, "unknown command 'teleport'"),
        ([], 1, "herdr: the terminal UI is not available"),  # the TUI launch (issue 26)
        (["--help"], 0, "usage: herdr <workspace|tab|pane|agent|"),
        (["--session", "a/b", "status"], 2, "error: session name may only contain"),
    ],
)  # fmt: skip
def test_usage_errors_exit_as_herdr_does(
    canned: CannedServer, argv: list[str], code: int, message: str
) -> None:
    result = herdr(canned, *argv)
    assert result[0] == code
    assert message in result[2]
    assert canned.sent() == []  # nothing reached the server


def test_protocol_mismatch_is_refused_before_the_request(short_socket_dir: Path) -> None:
    server = CannedServer(short_socket_dir / "old.sock", DEFAULT_PROTOCOL - 1)
    try:
        code, out, err = herdr(server, "workspace", "list")
    finally:
        server.close()
    assert (code, out) == (1, "")
    answer = json.loads(err)
    assert answer["id"] == "cli:workspace:list"
    assert answer["error"]["code"] == "protocol_mismatch"
    assert f"client protocol {DEFAULT_PROTOCOL} is newer than server protocol" in err
    assert [r["method"] for r in server.requests] == ["ping"]


def test_live_handoff_skips_the_protocol_guard(short_socket_dir: Path) -> None:
    server = CannedServer(short_socket_dir / "old.sock", DEFAULT_PROTOCOL - 1)
    try:
        code, _, err = herdr(server, "server", "live-handoff", "--expected-protocol=7")
    finally:
        server.close()
    assert code == 0
    assert "live handoff complete" in err
    assert server.requests == [
        {"id": "cli:server:live-handoff", "method": "server.live_handoff",
         "params": {"expected_protocol": 7}}
    ]  # fmt: skip


def test_server_not_running_is_herdrs_json_error(short_socket_dir: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    missing = str(short_socket_dir / "none.sock")
    code = run(["tab", "list"], env={"HERDR_SOCKET_PATH": missing}, stdout=out, stderr=err)
    assert code == 1
    assert json.loads(err.getvalue()) == {
        "id": "cli:tab:list",
        "error": {
            "code": "server_not_running",
            "message": f"no herdr server is running at {missing}; "
            "run `herdr` to start or attach it",
        },
    }


def test_status_reports_a_dead_server_without_failing(short_socket_dir: Path) -> None:
    out = io.StringIO()
    env = {"HERDR_SOCKET_PATH": str(short_socket_dir / "none.sock")}
    assert run(["status", "server", "--json"], env=env, stdout=out, stderr=io.StringIO()) == 0
    status = json.loads(out.getvalue())
    assert (status["status"], status["running"], status["restart_needed"]) == (
        "not_running", False, False
    )  # fmt: skip


def test_session_flag_picks_the_sessions_socket(tmp_path: Path) -> None:
    out = io.StringIO()
    env = {"XDG_CONFIG_HOME": str(tmp_path), "HERDR_SOCKET_PATH": "/elsewhere.sock"}
    assert run(["--session", "dev", "status", "server"], env=env, stdout=out) == 0
    assert f"socket: {tmp_path}/herdr/sessions/dev/herdr.sock" in out.getvalue()
    out = io.StringIO()
    assert run(["status", "client", "--json", "--session=dev"], env=env, stdout=out) == 0
    assert json.loads(out.getvalue())["session"] == "dev"


def test_status_json_has_herdrs_fields(canned: CannedServer) -> None:
    code, out, _ = herdr(canned, "status", "--json")
    status = json.loads(out)
    assert code == 0
    assert set(status) == {"client", "server", "update"}
    assert status["server"]["compatible"] is True
    assert status["server"]["socket"] == str(canned.path)
    assert status["client"]["protocol"] == DEFAULT_PROTOCOL


def test_api_schema_lists_every_request_method(canned: CannedServer) -> None:
    from shedproto.herdr import types as t

    code, out, _ = herdr(canned, "api", "schema", "--json")
    document = json.loads(out)
    assert code == 0
    assert document["protocol"] == DEFAULT_PROTOCOL
    text = json.dumps(document["schemas"]["request"])
    assert all(f'"{method}"' in text for method in t.PROTOCOL_TABLES[DEFAULT_PROTOCOL][0])
    assert sorted(document["schemas"]) == [
        "error_response", "event", "request", "subscription_event", "success_response"
    ]  # fmt: skip
    for ref in re.findall(r'"\$ref": "#/([^"]+)"', json.dumps(document)):
        node: Any = document
        for part in ref.split("/"):
            node = node[part]  # every reference resolves inside the document
        assert isinstance(node, dict)


def test_shim_runs_the_cli_and_refuses_foreign_files(tmp_path: Path) -> None:
    path = write_shim(tmp_path / "bin")
    assert path.read_text().startswith("#!/bin/sh\n" + SHIM_MARKER)
    assert path.stat().st_mode & 0o111
    assert write_shim(tmp_path / "bin") == path  # its own file: replaced
    foreign = tmp_path / "other"
    foreign.mkdir()
    (foreign / "herdr").write_text("#!/bin/sh\necho real herdr\n")
    with pytest.raises(ShimRefused):
        write_shim(foreign)
    assert (foreign / "herdr").read_text() == "#!/bin/sh\necho real herdr\n"


def test_agent_explain_prints_text_or_the_explain_object(canned: CannedServer) -> None:
    explain = {"agent": "claude", "state": "idle", "manifest_source": "builtin"}
    canned.results["agent.explain"] = {"type": "agent_explain", "explain": explain}
    code, out, _ = herdr(canned, "agent", "explain", "bob")
    assert code == 0
    assert out.splitlines()[:4] == [
        "agent: claude", "state: idle", "manifest: builtin unknown", "rule: none"
    ]  # fmt: skip
    code, out, _ = herdr(canned, "agent", "explain", "bob", "--format", "json")
    assert (code, json.loads(out)) == (0, explain)
    assert canned.sent()[0] == {
        "id": "cli:agent:explain", "method": "agent.explain", "params": {"target": "bob"}
    }  # fmt: skip


def test_integration_install_prints_the_servers_messages(canned: CannedServer) -> None:
    canned.results["integration.install"] = {
        "type": "integration_install",
        "target": "antigravity_cli",
        "details": {"messages": ["installed claude hook", "restart claude"]},
    }
    code, out, _ = herdr(canned, "integration", "install", "antigravity-cli")
    assert (code, out) == (0, "installed claude hook\nrestart claude\n")
    assert canned.sent()[0]["params"] == {"target": "antigravity_cli"}


def test_server_stop_is_silent_and_unguarded(canned: CannedServer) -> None:
    assert herdr(canned, "server", "stop") == (0, "", "")
    assert [r["method"] for r in canned.requests] == ["server.stop"]


def test_plugin_list_without_json_is_a_summary(canned: CannedServer) -> None:
    canned.results["plugin.list"] = {"type": "plugin_list", "plugins": []}
    assert herdr(canned, "plugin", "list") == (0, "No plugins installed.\n", "")


def test_session_after_double_dash_is_an_argument(canned: CannedServer) -> None:
    agent = {"terminal_id": "t1", "agent": "pi", "name": "bob", "agent_status": "idle",
             "interactive_ready": True, "workspace_id": "w1", "tab_id": "w1:t1",
             "pane_id": "w1:p1", "focused": False, "revision": 0}  # fmt: skip
    canned.results["agent.start"] = {"type": "agent_started", "agent": agent, "argv": ["pi"]}
    canned.results["agent.get"] = {"type": "agent_info", "agent": agent}
    code, _, err = herdr(canned, "agent", "start", "bob", "--kind", "pi", "--pane", "w1:p1",
                         "--", "--session", "s")  # fmt: skip
    assert code == 0, err
    started = [r for r in canned.sent() if r["method"] == "agent.start"]
    assert started[0]["params"]["args"] == ["--session", "s"]


def test_api_schema_output_writes_the_json_document(canned: CannedServer, tmp_path: Path) -> None:
    target = tmp_path / "schema.json"
    code, out, _ = herdr(canned, "api", "schema", "--output", str(target))
    assert (code, out) == (0, f"wrote API schema to {target}\n")
    assert json.loads(target.read_text())["protocol"] == DEFAULT_PROTOCOL
    assert canned.requests == []  # the schema is local: no socket traffic


def test_agent_manifests_text_table(canned: CannedServer) -> None:
    canned.results["server.agent_manifests"] = {
        "type": "agent_manifest_status",
        "last_result": "up to date",
        "manifests": [],
    }
    code, out, err = herdr(canned, "server", "agent-manifests")
    assert code == 0, err
    assert out.splitlines()[:2] == ["last check: never", "result: up to date"]


def test_help_after_a_command_path_prints_usage_on_stdout(canned: CannedServer) -> None:
    code, out, _ = herdr(canned, "pane", "split", "--help")
    assert code == 0
    assert out.startswith("herdr pane split [<pane_id>|--pane ID|--current] --direction right|down")
    code, out, _ = herdr(canned, "tab", "-h")
    assert (code, out.splitlines()[0]) == (0, "herdr tab commands:")
    assert canned.requests == []


def test_plugin_list_summary_lines(canned: CannedServer) -> None:
    plugin = {
        "plugin_id": "acme.notes", "name": "Notes", "enabled": False, "warnings": ["old api"],
        "plugin_root": "/p/notes", "version": "1.0.0", "manifest_path": "/p/notes/herdr.toml",
        "source": {"kind": "github", "owner": "acme", "repo": "notes", "requested_ref": "v1"},
    }  # fmt: skip
    canned.results["plugin.list"] = {"type": "plugin_list", "plugins": [plugin]}
    code, out, err = herdr(canned, "plugin", "list", env={"XDG_CONFIG_HOME": "/cfg"})
    assert code == 0, err
    assert out.splitlines() == [
        "1 plugin installed:",
        "- acme.notes (Notes) disabled [github:acme/notes@v1; 1 warning(s)]",
        "  config: /cfg/herdr/plugins/config/acme.notes",
        "  warning: old api",
    ]


def test_workspace_close_group_is_not_in_herdr_082s_cli(canned: CannedServer) -> None:
    # herdr 0.8.2 (protocol 20) has no close_group: WorkspaceTarget at
    # src/app/api/workspaces.rs:298@v0.8.2; --group came with 0.9.0 (CHANGELOG.md:27@16996f3)
    env = {"SHEDPROTO_HERDR_CLIENT_PROTOCOL": "20"}
    code, _, err = herdr(canned, "workspace", "close", "w1", "--group", env=env)
    assert code == 2
    assert "usage: herdr workspace close <workspace_id>\n" in err
    assert canned.sent() == []
