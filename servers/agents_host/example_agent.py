"""An example ACP agent on stdio, standard library only: point an agents-host config at it.

``python -m shedproto.servers.agents_host.example_agent`` speaks ACP v1 over
stdin/stdout until stdin ends. It behaves like the real agents
(codex-acp, claude-agent-acp) where the host can tell: during
``session/prompt`` it streams only its own output (``agent_message_chunk``);
the user's text appears as ``user_message_chunk`` only when a session is
replayed by ``session/load``.

Methods: ``initialize`` (``loadSession``, ``sessionCapabilities.list``; one
``env_var`` auth method ``example-token`` reading ``EXAMPLE_AGENT_TOKEN``,
needed only when ``EXAMPLE_AGENT_REQUIRE_AUTH`` is set: until then session
methods answer ``auth_required``, -32000), ``authenticate``, ``session/new``,
``session/load``, ``session/list``, ``session/set_mode``, ``session/prompt``,
``session/cancel``. Sessions live in memory, or, like a real agent's, in
``EXAMPLE_AGENT_STATE_DIR`` (one JSON file each) so that a restarted agent
can load them. A prompt's text chooses its behaviour:

* ``permission ...``: asks ``session/request_permission`` first and answers
  ``outcome=<optionId or cancelled>``;
* ``wait ...``: streams ``echo: `` then waits for ``session/cancel``
  (stop reason ``cancelled``);
* ``hang ...``: never answers, not even a cancel (an agent that is stuck);
* ``fail ...``: answers with JSON-RPC ``-32603`` and ``error.data``
  (``fail-nonstandard ...``: code ``500``, as some agents do);
* anything else: ``echo: <text>``, stop reason ``end_turn``.

Malformed lines are answered with JSON-RPC ``-32700`` and otherwise ignored.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from typing import Any, TextIO

__all__ = ["ExampleAgent", "main"]

AGENT_NAME = "shedproto-example-agent"
AUTH_METHOD = "example-token"


@dataclass
class _Session:
    cwd: str | None
    history: list[dict[str, Any]] = field(default_factory=list)
    title: str | None = None
    mode: str = "default"


def _text(text: str, kind: str) -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


class ExampleAgent:
    """The agent's state; :meth:`handle` takes one decoded message and writes the replies."""

    def __init__(
        self, out: TextIO, *, require_auth: bool = False, state_dir: str | None = None
    ) -> None:
        self.out = out
        self.require_auth = require_auth
        self.state_dir = state_dir
        self.authenticated = False
        self.sessions: dict[str, _Session] = {}
        self.counter = 0
        self.waiting: dict[str, Any] = {}
        self.asked: dict[str, tuple[str, Any]] = {}

    def write(self, message: dict[str, Any]) -> None:
        """Write one JSON-RPC message as a line and flush."""
        self.out.write(json.dumps({"jsonrpc": "2.0", **message}, separators=(",", ":")) + "\n")
        self.out.flush()

    def _update(self, session_id: str, update: dict[str, Any]) -> None:
        self.write(
            {"method": "session/update", "params": {"sessionId": session_id, "update": update}}
        )

    def _error(self, request_id: Any, code: int, message: str, data: Any = None) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self.write({"id": request_id, "error": error})

    def _say(self, session_id: str, text: str) -> None:
        update = _text(text, "agent_message_chunk")
        self.sessions[session_id].history.append(update)
        self._save(session_id)
        self._update(session_id, update)

    def _save(self, session_id: str) -> None:
        if self.state_dir is None:
            return
        session = self.sessions[session_id]
        record = {"cwd": session.cwd, "title": session.title, "history": session.history}
        path = os.path.join(self.state_dir, f"{session_id}.json")
        with open(path + ".tmp", "w", encoding="utf-8") as handle:
            json.dump(record, handle)
        os.replace(path + ".tmp", path)

    def _lookup(self, session_id: str) -> _Session | None:
        session = self.sessions.get(session_id)
        if session is not None or self.state_dir is None or "/" in session_id:
            return session
        try:
            with open(os.path.join(self.state_dir, f"{session_id}.json"), encoding="utf-8") as f:
                record = json.load(f)
        except (OSError, ValueError):
            return None
        session = _Session(cwd=record.get("cwd"), history=record.get("history", []))
        session.title = record.get("title")
        self.sessions[session_id] = session
        return session

    def handle(self, message: Any) -> None:
        """Act on one message from the client (request, notification or response)."""
        if not isinstance(message, dict):
            self._error(None, -32600, "Invalid Request")
            return
        method = message.get("method")
        request_id = message.get("id")
        raw_params = message.get("params")
        params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        if method is None:
            self._on_response(request_id, message.get("result"))
        elif request_id is None:
            if method == "session/cancel":
                self._on_cancel(str(params.get("sessionId")))
        else:
            self._on_request(request_id, str(method), params)

    def _on_request(self, request_id: Any, method: str, params: dict[str, Any]) -> None:
        if method == "initialize":
            self.write({"id": request_id, "result": self._initialize()})
            return
        if method == "authenticate":
            if params.get("methodId") != AUTH_METHOD:
                self._error(request_id, -32602, "Invalid params", {"methodId": "unknown"})
                return
            self.authenticated = True
            self.write({"id": request_id, "result": {}})
            return
        if self.require_auth and not self.authenticated:
            self._error(request_id, -32000, "Authentication required")
            return
        if method == "session/new":
            self.counter += 1
            session_id = f"example-{os.getpid()}-{self.counter}"
            self.sessions[session_id] = _Session(cwd=params.get("cwd"))
            self._save(session_id)
            self.write({"id": request_id, "result": {"sessionId": session_id, **self._modes()}})
            return
        if method == "session/list":
            if self.state_dir is not None:
                for name in sorted(os.listdir(self.state_dir)):
                    if name.endswith(".json"):
                        self._lookup(name[: -len(".json")])
            rows = [
                {"sessionId": key, "cwd": value.cwd, "title": value.title}
                for key, value in self.sessions.items()
            ]
            self.write({"id": request_id, "result": {"sessions": rows}})
            return
        session_id = str(params.get("sessionId"))
        session = self._lookup(session_id)
        if method not in ("session/load", "session/prompt", "session/set_mode"):
            self._error(request_id, -32601, f"Method not found: {method}")
        elif session is None:
            self._error(request_id, -32002, "Resource not found", {"uri": session_id})
        elif method == "session/load":
            for update in session.history:
                self._update(session_id, update)
            self.write({"id": request_id, "result": self._modes()})
        elif method == "session/set_mode":
            session.mode = str(params.get("modeId"))
            self.write({"id": request_id, "result": {}})
        else:
            self._prompt(request_id, session_id, session, params.get("prompt"))

    def _initialize(self) -> dict[str, Any]:
        return {
            "protocolVersion": 1,
            "agentCapabilities": {"loadSession": True, "sessionCapabilities": {"list": {}}},
            "agentInfo": {"name": AGENT_NAME, "version": "1"},
            "authMethods": [
                {
                    "type": "env_var",
                    "id": AUTH_METHOD,
                    "name": "Example token",
                    "description": "Any non-empty EXAMPLE_AGENT_TOKEN works",
                    "vars": [{"name": "EXAMPLE_AGENT_TOKEN"}],
                }
            ],
        }

    def _modes(self) -> dict[str, Any]:
        return {
            "modes": {
                "currentModeId": "default",
                "availableModes": [
                    {"id": "default", "name": "Default"},
                    {"id": "plan", "name": "Plan"},
                ],
            }
        }

    def _prompt(self, request_id: Any, session_id: str, session: _Session, blocks: Any) -> None:
        text = (
            "".join(b.get("text", "") for b in blocks if isinstance(b, dict))
            if isinstance(blocks, list)
            else ""
        )
        if text.startswith("hang"):
            return
        if text.startswith("fail-nonstandard"):
            self._error(request_id, 500, "upstream failed", {"status": 500})
            return
        if text.startswith("fail"):
            self._error(request_id, -32603, "Internal error", {"message": "asked to fail"})
            return
        session.title = session.title or text[:40]
        session.history.append(_text(text, "user_message_chunk"))
        if text.startswith("permission"):
            ask_id = f"perm-{self.counter}-{len(self.asked)}"
            self.asked[ask_id] = (session_id, request_id)
            self.write(
                {
                    "id": ask_id,
                    "method": "session/request_permission",
                    "params": {
                        "sessionId": session_id,
                        "toolCall": {"toolCallId": "call-1", "title": "write file"},
                        "options": [
                            {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                            {"optionId": "no", "name": "Reject", "kind": "reject_once"},
                        ],
                    },
                }
            )
            return
        self._say(session_id, "echo: ")
        if text.startswith("wait"):
            self.waiting[session_id] = request_id
            return
        self._say(session_id, text)
        self.write({"id": request_id, "result": {"stopReason": "end_turn"}})

    def _on_response(self, ask_id: Any, result: Any) -> None:
        asked = self.asked.pop(str(ask_id), None)
        if asked is None:
            return
        session_id, request_id = asked
        outcome = result.get("outcome") if isinstance(result, dict) else None
        label = "cancelled"
        if isinstance(outcome, dict) and outcome.get("outcome") == "selected":
            label = str(outcome.get("optionId"))
        self._say(session_id, f"outcome={label}")
        self.write({"id": request_id, "result": {"stopReason": "end_turn"}})

    def _on_cancel(self, session_id: str) -> None:
        request_id = self.waiting.pop(session_id, None)
        if request_id is not None:
            self.write({"id": request_id, "result": {"stopReason": "cancelled"}})


def main() -> None:
    """Serve the example agent on stdin/stdout until stdin ends."""
    agent = ExampleAgent(
        sys.stdout,
        require_auth=bool(os.environ.get("EXAMPLE_AGENT_REQUIRE_AUTH")),
        state_dir=os.environ.get("EXAMPLE_AGENT_STATE_DIR") or None,
    )
    for raw in sys.stdin:
        if not raw.strip():
            continue
        try:
            message = json.loads(raw)
        except ValueError:
            agent.write({"id": None, "error": {"code": -32700, "message": "Parse error"}})
            continue
        agent.handle(message)


if __name__ == "__main__":
    main()
