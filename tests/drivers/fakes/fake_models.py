"""Local stand-ins for the model APIs, so a real ``codex`` or ``claude`` completes a turn offline.

Both answer every request with one short assistant text, streamed the way the
real APIs stream it: Anthropic Messages events for ``claude``, OpenAI
Responses events for ``codex``. Each runs in a daemon thread on 127.0.0.1 and
records the requests it saw.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = "hello from the fake model"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list[tuple[str, str]]

    def log_message(self, format: str, *args: Any) -> None:
        del format, args

    def _send(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.seen.append(("GET", self.path))
        self._send(404, "application/json", b'{"error":{"message":"not found"}}')

    def _body(self) -> dict[str, Any]:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            value = json.loads(raw or b"{}")
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def _sse(self, events: list[tuple[str, dict[str, Any]]]) -> None:
        payload = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
        self._send(200, "text/event-stream", payload.encode())


class _Anthropic(_Handler):
    def do_POST(self) -> None:
        body = self._body()
        self.seen.append(("POST", self.path))
        if "count_tokens" in self.path:
            self._send(200, "application/json", b'{"input_tokens":1}')
            return
        message = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake"),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        if not body.get("stream"):
            whole = {
                **message,
                "content": [{"type": "text", "text": REPLY}],
                "stop_reason": "end_turn",
            }
            self._send(200, "application/json", json.dumps(whole).encode())
            return
        self._sse(
            [
                ("message_start", {"type": "message_start", "message": message}),
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "text", "text": ""},
                    },
                ),
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": REPLY},
                    },
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                (
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                        "usage": {"output_tokens": 5},
                    },
                ),
                ("message_stop", {"type": "message_stop"}),
            ]
        )


class _OpenAI(_Handler):
    def do_POST(self) -> None:
        self._body()
        self.seen.append(("POST", self.path))
        item = {"type": "message", "role": "assistant", "id": "msg_fake"}
        usage = {
            "input_tokens": 1,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 1,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 2,
        }
        events: list[dict[str, Any]] = [
            {"type": "response.created", "response": {"id": "resp_fake"}},
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {**item, "content": []},
            },
            {
                "type": "response.output_text.delta",
                "output_index": 0,
                "content_index": 0,
                "item_id": "msg_fake",
                "delta": REPLY,
            },
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {**item, "content": [{"type": "output_text", "text": REPLY}]},
            },
            {"type": "response.completed", "response": {"id": "resp_fake", "usage": usage}},
        ]
        self._sse([(event["type"], event) for event in events])


@contextmanager
def _serve(handler: type[_Handler]) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    seen: list[tuple[str, str]] = []
    bound = type(handler.__name__, (handler,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), bound)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def anthropic_api() -> Any:
    """Serve a fake Anthropic Messages API; yields ``(base_url, requests_seen)``."""
    return _serve(_Anthropic)


def openai_responses_api() -> Any:
    """Serve a fake OpenAI Responses API; yields ``(base_url, requests_seen)`` (add ``/v1``)."""
    return _serve(_OpenAI)
