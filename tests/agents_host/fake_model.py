"""A fake model endpoint on 127.0.0.1 for the real ACP agents: OpenAI and Anthropic streaming.

:class:`FakeModel` serves, in a background thread:

* ``POST .../responses`` -- the OpenAI Responses API as server-sent events
  (what Codex calls);
* ``POST .../chat/completions`` -- OpenAI Chat Completions streaming;
* ``POST .../messages`` -- the Anthropic Messages API, streamed (what Claude
  Code calls) or whole when the request does not ask for a stream;
  ``.../messages/count_tokens`` answers a fixed count;
* anything else: ``404``.

The reply depends on the last user text of the request: ``hang`` keeps the
response open without a byte until the server stops; ``permission`` asks
for a tool call (a shell command touching ``permission_file``) once,
then answers the tool result with text (``tool_calls`` counts the asks);
anything else streams :data:`REPLY`. Every request is kept in ``requests``
as ``(method, path)``, every body in ``bodies``.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["REPLY", "FakeModel"]

REPLY = "hi from fake model"


def _texts(value: Any) -> list[str]:
    """Every string under a ``text`` / ``content`` / ``input`` key, depth first."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("text", "content", "input") and isinstance(item, str):
                found.append(item)
            else:
                found.extend(_texts(item))
    elif isinstance(value, list):
        for item in value:
            found.extend(_texts(item))
    return found


def _last_user_text(body: dict[str, Any]) -> str:
    messages = body.get("input") if isinstance(body.get("input"), list) else body.get("messages")
    if not isinstance(messages, list):
        return ""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            texts = [t for t in _texts(message.get("content")) if not t.startswith("<")]
            return texts[-1] if texts else ""
    return ""


def _has_tool_result(body: dict[str, Any]) -> bool:
    blob = json.dumps(body)
    return '"function_call_output"' in blob or '"tool_result"' in blob or '"role": "tool"' in blob


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            value = json.loads(raw or b"{}")
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def do_GET(self) -> None:
        self.server.owner.requests.append(("GET", self.path))
        self._json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        body = self._body()
        path = self.path.split("?")[0]
        self.server.owner.requests.append(("POST", self.path))
        self.server.owner.bodies.append(body)
        text = _last_user_text(body)
        if path.endswith("/count_tokens"):
            self._json(200, {"input_tokens": 10})
            return
        if not path.endswith(("/responses", "/chat/completions", "/messages")):
            self._json(404, {"error": {"message": f"not found: {path}"}})
            return
        if "hang" in text:
            self.server.owner.stopped.wait()
            return
        tool = "permission" in text and not _has_tool_result(body)
        if tool:
            self.server.owner.tool_calls += 1
        if path.endswith("/messages") and not body.get("stream"):
            self._json(200, self._anthropic_whole(body))
        elif path.endswith("/responses"):
            self._stream(self._responses(tool))
        elif path.endswith("/chat/completions"):
            self._stream(self._chat())
        else:
            self._stream(self._anthropic(body, tool))

    def _json(self, status: int, value: Any) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, events: list[tuple[str | None, dict[str, Any] | str]]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        for name, data in events:
            payload = data if isinstance(data, str) else json.dumps(data)
            head = f"event: {name}\n" if name else ""
            self.wfile.write(f"{head}data: {payload}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True

    def _responses(self, tool: bool) -> list[tuple[str | None, dict[str, Any] | str]]:
        owner = self.server.owner
        owner.counter += 1
        rid = f"resp_{owner.counter}"
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        if tool:
            item: dict[str, Any] = {
                "type": "function_call",
                "id": f"fc_{owner.counter}",
                "call_id": f"call_{owner.counter}",
                "name": "exec_command",
                "arguments": json.dumps(
                    {
                        "cmd": f"touch {owner.permission_file}",
                        "sandbox_permissions": "require_escalated",
                        "justification": "the test asks for a permission",
                    }
                ),
                "status": "completed",
            }
        else:
            item = {
                "type": "message",
                "id": f"msg_{owner.counter}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": REPLY, "annotations": []}],
            }
        events: list[tuple[str | None, dict[str, Any] | str]] = [
            ("response.created", {"type": "response.created", "response": {"id": rid}}),
            (
                "response.output_item.added",
                {"type": "response.output_item.added", "output_index": 0, "item": item},
            ),
        ]
        if not tool:
            events.append(
                (
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "item_id": item["id"],
                        "output_index": 0,
                        "content_index": 0,
                        "delta": REPLY,
                    },
                )
            )
        events += [
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 0, "item": item},
            ),
            (
                "response.completed",
                {
                    "type": "response.completed",
                    "response": {"id": rid, "status": "completed", "output": [], "usage": usage},
                },
            ),
        ]
        return events

    def _chat(self) -> list[tuple[str | None, dict[str, Any] | str]]:
        chunk = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": REPLY}}],
        }
        done = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        }
        return [(None, chunk), (None, done), (None, "[DONE]")]

    def _anthropic_whole(self, body: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": "msg_whole",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-fake"),
            "content": [{"type": "text", "text": REPLY}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }

    def _anthropic(
        self, body: dict[str, Any], tool: bool
    ) -> list[tuple[str | None, dict[str, Any] | str]]:
        owner = self.server.owner
        owner.counter += 1
        model = body.get("model", "claude-fake")
        usage = {"input_tokens": 10, "output_tokens": 5}
        start = {
            "type": "message_start",
            "message": {
                "id": f"msg_{owner.counter}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage,
            },
        }
        if tool:
            block: dict[str, Any] = {
                "type": "tool_use",
                "id": f"toolu_{owner.counter}",
                "name": "Bash",
                "input": {},
            }
            delta: dict[str, Any] = {
                "type": "input_json_delta",
                "partial_json": json.dumps(
                    {
                        "command": f"touch {owner.permission_file}",
                        "description": "the test asks for a permission",
                    }
                ),
            }
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": REPLY}
            stop = "end_turn"
        return [
            ("message_start", start),
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": block},
            ),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 5},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: FakeModel


class FakeModel:
    """The fake endpoint; use as a context manager, then point the agent at :attr:`url`."""

    def __init__(self, permission_file: str) -> None:
        self.requests: list[tuple[str, str]] = []
        self.bodies: list[dict[str, Any]] = []
        self.counter = 0
        self.tool_calls = 0
        self.permission_file = permission_file
        self.stopped = threading.Event()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (no path)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
