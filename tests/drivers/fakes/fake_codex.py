"""A scripted stand-in for ``codex app-server --listen stdio://`` (standard library only).

It speaks the app-server's stdio dialect: one JSON object per line, no
``jsonrpc`` member, notifications with ``emittedAtMs``, ``-32600`` for
almost every bad request. The scenario comes from ``FAKE_CODEX_SCENARIO``;
every line received is appended to ``FAKE_CODEX_LOG`` (when set) so tests
can check the exact frames the driver sent. Its argv and environment are
logged as the first line.

Scenarios: ``complete`` (default), ``early`` (``turn/completed`` for another
turn and then for this one, both before the ``turn/start`` response),
``failed``, ``approval`` (five server requests mid-turn; completes once all
are answered), ``hang`` (the turn runs until ``turn/interrupt``), ``exit``
(the process dies mid-turn), ``unstarted`` (``turn/start`` is answered but
the turn never starts), ``reverse`` (``thread/read`` answers held until
two are pending, then sent newest first), ``no-include-turns``
(``includeTurns`` is refused), ``repeat-cursor`` (``thread/list`` repeats its
cursor), ``noisy`` (a megabyte on stderr first).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

SCENARIO = os.environ.get("FAKE_CODEX_SCENARIO", "complete")
LOG = os.environ.get("FAKE_CODEX_LOG")
VERSION = "0.171.0"
USAGE = {
    "cachedInputTokens": 0,
    "inputTokens": 1,
    "outputTokens": 1,
    "reasoningOutputTokens": 0,
    "totalTokens": 2,
}

THREADS: dict[str, dict[str, Any]] = {
    "t-active-1": {
        "status": {"type": "active", "activeFlags": []},
        "name": "First",
        "archived": False,
    },
    "t-active-2": {"status": {"type": "idle"}, "name": None, "archived": False},
    "t-active-3": {"status": {"type": "notLoaded"}, "name": None, "archived": False},
    "t-archived-1": {"status": {"type": "systemError"}, "name": "Old", "archived": True},
}


def log(entry: object) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def notify(method: str, params: dict[str, Any]) -> None:
    send({"method": method, "params": params, "emittedAtMs": int(time.time() * 1000)})


def thread(thread_id: str, *, turns: bool = False) -> dict[str, Any]:
    info = THREADS[thread_id]
    body = {
        "id": thread_id,
        "sessionId": thread_id,
        "preview": f"preview of {thread_id}",
        "name": info["name"],
        "cwd": "/work/project",
        "createdAt": 1795982727,
        "updatedAt": 1795982728,
        "status": info["status"],
        "path": f"/codex/sessions/rollout-{thread_id}.jsonl",
        "ephemeral": False,
        "modelProvider": "openai",
        "cliVersion": VERSION,
        "source": "cli",
        "gitInfo": {"sha": "abc", "branch": "main", "originUrl": None},
        "forkedFromId": None,
        "projectId": None,
        "historyMode": "paginated",
        "turns": [],
    }
    if turns:
        body["turns"] = TURNS
    return body


TURNS: list[dict[str, Any]] = [
    {
        "id": "turn-a",
        "items": [
            {
                "type": "userMessage",
                "id": "i1",
                "content": [{"type": "text", "text": "hello", "text_elements": []}],
            },
            {"type": "reasoning", "id": "i2", "summary": ["thinking"], "content": []},
            {"type": "agentMessage", "id": "i3", "text": "hi there"},
        ],
        "itemsView": "full",
        "status": "completed",
        "error": None,
    },
    {
        "id": "turn-b",
        "items": [
            {
                "type": "commandExecution",
                "id": "i4",
                "command": "ls",
                "cwd": "/w",
                "status": "completed",
                "commandActions": [],
            },
            {"type": "hologram", "id": "i5", "payload": {"x": 1}},
        ],
        "itemsView": "full",
        "status": "interrupted",
        "error": None,
    },
]


class Fake:
    def __init__(self) -> None:
        self.initialized = False
        self.active_turn: str | None = None
        self.turn_counter = 0
        self.awaiting_answers: set[object] = set()
        self.held: list[dict[str, Any]] = []
        self.list_calls = 0

    def error(self, request_id: object, message: str, code: int = -32600) -> None:
        send({"id": request_id, "error": {"code": code, "message": message}})

    def handle(self, message: dict[str, Any]) -> None:
        if "method" not in message:
            self.answer(message)
            return
        method = message["method"]
        request_id = message.get("id")
        params = message.get("params") or {}
        if request_id is None:
            return  # notifications: initialized
        if method == "initialize":
            if self.initialized:
                self.error(request_id, "Already initialized")
                return
            self.initialized = True
            name = params.get("clientInfo", {}).get("name", "client")
            send(
                {
                    "id": request_id,
                    "result": {
                        "userAgent": f"{name}/{VERSION} (Debian 12; x86_64) xterm ({name}; 0.0.1)",
                        "codexHome": os.environ.get("CODEX_HOME", "/home/me/.codex"),
                        "platformFamily": "unix",
                        "platformOs": "linux",
                    },
                }
            )
            notify("configWarning", {"summary": "harmless"})
            notify(
                "remoteControl/status/changed",
                {"installationId": "fake", "serverName": "fake", "status": "disabled"},
            )
            return
        if not self.initialized:
            self.error(request_id, "Not initialized")
            return
        handler = getattr(self, "on_" + method.replace("/", "_"), None)
        if handler is None:
            self.error(request_id, f"Invalid request: unknown variant `{method}`")
            return
        handler(request_id, params)

    def answer(self, message: dict[str, Any]) -> None:
        self.awaiting_answers.discard(message.get("id"))
        if SCENARIO == "approval" and not self.awaiting_answers and self.active_turn:
            for request_id in range(5):
                notify(
                    "serverRequest/resolved", {"threadId": "t-active-2", "requestId": request_id}
                )
            self.complete(self.active_turn, "completed")

    def on_thread_list(self, request_id: object, params: dict[str, Any]) -> None:
        self.list_calls += 1
        archived = bool(params.get("archived"))
        ids = sorted(t for t, info in THREADS.items() if info["archived"] == archived)
        cursor = params.get("cursor")
        start = int(cursor) if cursor else 0
        page = ids[start : start + 2]
        result: dict[str, Any] = {"data": [thread(t) for t in page], "backwardsCursor": None}
        following = str(start + 2) if start + 2 < len(ids) else None
        if SCENARIO == "repeat-cursor":
            result["nextCursor"] = cursor or "0"
        elif following is not None:
            result["nextCursor"] = following
        elif not archived:
            result["nextCursor"] = None
        # archived last page: nextCursor absent entirely
        send({"id": request_id, "result": result})

    def on_thread_read(self, request_id: object, params: dict[str, Any]) -> None:
        thread_id = params.get("threadId")
        if thread_id not in THREADS:
            self.error(request_id, f"thread not loaded: {thread_id}")
            return
        if params.get("includeTurns") and SCENARIO == "no-include-turns":
            self.error(request_id, "includeTurns is not supported for paginated threads")
            return
        if params.get("includeTurns"):
            notify("deprecationNotice", {"summary": "Full-history hydration is deprecated"})
        response = {
            "id": request_id,
            "result": {"thread": thread(thread_id, turns=bool(params.get("includeTurns")))},
        }
        if SCENARIO == "reverse":
            self.held.append(response)
            if len(self.held) == 2:
                for held in reversed(self.held):
                    send(held)
                self.held.clear()
            return
        send(response)

    def on_thread_turns_list(self, request_id: object, params: dict[str, Any]) -> None:
        cursor = params.get("cursor")
        start = int(cursor) if cursor else 0
        page = [
            {**turn, "items": [], "itemsView": "notLoaded"} for turn in TURNS[start : start + 1]
        ]
        following = str(start + 1) if start + 1 < len(TURNS) else None
        send({"id": request_id, "result": {"data": page, "nextCursor": following}})

    def on_thread_items_list(self, request_id: object, params: dict[str, Any]) -> None:
        turn = next(t for t in TURNS if t["id"] == params.get("turnId"))
        cursor = params.get("cursor")
        start = int(cursor) if cursor else 0
        page = [{"item": item, "turnId": turn["id"]} for item in turn["items"][start : start + 2]]
        following = str(start + 2) if start + 2 < len(turn["items"]) else None
        send({"id": request_id, "result": {"data": page, "nextCursor": following}})

    def on_thread_resume(self, request_id: object, params: dict[str, Any]) -> None:
        thread_id = params.get("threadId")
        if thread_id not in THREADS:
            self.error(request_id, f"no rollout found for thread id {thread_id}")
            return
        send(
            {
                "id": request_id,
                "result": {
                    "thread": thread(thread_id),
                    "model": "gpt-5",
                    "modelProvider": "openai",
                    "cwd": "/work/project",
                    "approvalPolicy": "on-request",
                    "approvalsReviewer": "user",
                    "sandbox": {"type": "readOnly"},
                },
            }
        )

    def on_thread_name_set(self, request_id: object, params: dict[str, Any]) -> None:
        THREADS[params["threadId"]]["name"] = params["name"]
        send({"id": request_id, "result": {}})
        notify(
            "thread/name/updated", {"threadId": params["threadId"], "threadName": params["name"]}
        )

    def turn(self, turn_id: str, status: str, error: object = None) -> dict[str, Any]:
        return {
            "id": turn_id,
            "items": [],
            "itemsView": "notLoaded",
            "status": status,
            "error": error,
        }

    def complete(self, turn_id: str, status: str, error: object = None) -> None:
        notify(
            "turn/completed", {"threadId": "t-active-2", "turn": self.turn(turn_id, status, error)}
        )
        self.active_turn = None

    def on_turn_start(self, request_id: object, params: dict[str, Any]) -> None:
        self.turn_counter += 1
        turn_id = f"turn-{self.turn_counter}"
        thread_id = params["threadId"]
        started = {"id": request_id, "result": {"turn": self.turn(turn_id, "inProgress")}}
        if SCENARIO == "early":
            notify(
                "turn/completed", {"threadId": thread_id, "turn": self.turn("turn-other", "failed")}
            )
            notify(
                "turn/completed", {"threadId": thread_id, "turn": self.turn(turn_id, "completed")}
            )
            send(started)
            return
        send(started)
        if SCENARIO == "unstarted":
            return  # answered, but never started: interrupt finds no active turn
        self.active_turn = turn_id
        notify(
            "thread/status/changed",
            {"threadId": thread_id, "status": {"type": "active", "activeFlags": []}},
        )
        notify("turn/started", {"threadId": thread_id, "turn": self.turn(turn_id, "inProgress")})
        user = {"type": "userMessage", "id": "u1", "content": params["input"]}
        notify(
            "item/started",
            {"item": user, "threadId": thread_id, "turnId": turn_id, "startedAtMs": 1},
        )
        notify(
            "item/completed",
            {"item": user, "threadId": thread_id, "turnId": turn_id, "completedAtMs": 2},
        )
        if SCENARIO == "exit":
            sys.stdout.flush()
            os._exit(1)
        if SCENARIO == "hang":
            return
        if SCENARIO == "approval":
            base = {"threadId": thread_id, "turnId": turn_id, "itemId": "c1", "startedAtMs": 3}
            send(
                {
                    "id": 0,
                    "method": "item/commandExecution/requestApproval",
                    "params": {**base, "command": "rm -rf build", "cwd": "/w"},
                }
            )
            send({"id": 1, "method": "item/fileChange/requestApproval", "params": base})
            send(
                {
                    "id": 2,
                    "method": "item/permissions/requestApproval",
                    "params": {
                        **base,
                        "cwd": "/w",
                        "reason": "r",
                        "permissions": {"network": {"enabled": True}},
                    },
                }
            )
            send(
                {
                    "id": 3,
                    "method": "execCommandApproval",
                    "params": {
                        "conversationId": thread_id,
                        "callId": "x",
                        "command": ["ls"],
                        "cwd": "/w",
                        "parsedCmd": [],
                    },
                }
            )
            send({"id": 4, "method": "item/teleport/requestApproval", "params": base})
            self.awaiting_answers = {0, 1, 2, 3, 4}
            return
        notify(
            "item/agentMessage/delta",
            {"threadId": thread_id, "turnId": turn_id, "itemId": "a1", "delta": "hi"},
        )
        notify(
            "thread/tokenUsage/updated",
            {
                "threadId": thread_id,
                "turnId": turn_id,
                "tokenUsage": {"total": USAGE, "last": USAGE},
            },
        )
        if SCENARIO == "failed":
            error = {
                "message": "context window exceeded",
                "codexErrorInfo": "contextWindowExceeded",
                "additionalDetails": None,
            }
            notify(
                "error",
                {"error": error, "willRetry": False, "threadId": thread_id, "turnId": turn_id},
            )
            self.complete(turn_id, "failed", error)
            return
        self.complete(turn_id, "completed")

    def on_turn_interrupt(self, request_id: object, params: dict[str, Any]) -> None:
        if self.active_turn is None or params.get("turnId") != self.active_turn:
            self.error(request_id, "no active turn to interrupt")
            return
        send({"id": request_id, "result": {}})
        self.complete(self.active_turn, "interrupted")


def main() -> None:
    log(
        {
            "argv": sys.argv,
            "cwd": os.getcwd(),
            "CODEX_HOME": os.environ.get("CODEX_HOME"),
            "FAKE_MARK": os.environ.get("FAKE_MARK"),
        }
    )
    if SCENARIO == "noisy":
        sys.stderr.write("x" * (1 << 20) + "\n")
        sys.stderr.flush()
    sys.stderr.write("WARN codex: no system bwrap found\n")
    sys.stderr.flush()
    fake = Fake()
    for raw in sys.stdin:
        line = raw.strip()
        if not line:
            continue
        log({"received": json.loads(line)})
        fake.handle(json.loads(line))


if __name__ == "__main__":
    main()
