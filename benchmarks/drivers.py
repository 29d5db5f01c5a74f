"""Agents-host drivers: transcript parsing and app-server stream decoding throughput.

* **Claude transcript**: :func:`shedproto.drivers.claude.parse_records` on a
  transcript of realistic user/assistant records against the obvious port
  (``splitlines`` plus ``json.loads`` per line with the same skipping of bad
  lines). Target: ratio >= 1.0.
* **Codex stream**: :meth:`CodexClientConnection.receive_data` on a stream of
  turn notifications (deltas, items, completions) in 64 KiB chunks against
  ``bytes.split`` plus ``json.loads`` and a hand-written classification.
  Target: ratio >= 1.0.
"""

from __future__ import annotations

import json
from typing import Any

from shedproto.drivers.claude import parse_records
from shedproto.drivers.codex import CodexClientConnection

from ._harness import Case, timed


def _transcript(records: int) -> bytes:
    lines = []
    parent = None
    for i in range(records):
        kind = "user" if i % 2 == 0 else "assistant"
        content: Any = (
            f"please look at module {i % 17} and fix the failing test"
            if kind == "user"
            else [{"type": "text", "text": "Looking at it now. " * 8}]
        )
        uid = f"{i:08d}-0000-4000-8000-000000000000"
        lines.append(
            json.dumps(
                {
                    "parentUuid": parent,
                    "isSidechain": False,
                    "type": kind,
                    "message": {"role": kind, "content": content},
                    "uuid": uid,
                    "timestamp": "2026-11-29T20:06:05.818Z",
                    "cwd": "/home/me/project",
                    "sessionId": "11111111-1111-4111-8111-111111111111",
                    "version": "2.1.332",
                    "gitBranch": "main",
                }
            )
        )
        parent = uid
    return ("\n".join(lines) + "\n").encode()


def _naive_records(data: bytes) -> list[dict[str, Any]]:
    out = []
    for line in data.decode("utf-8", "replace").splitlines():
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def _transcript_case(quick: bool) -> Case:
    count = 5_000 if quick else 20_000
    data = _transcript(count)
    return Case(
        name=f"claude: parse_records x{count} records vs splitlines+json.loads",
        baseline=timed(lambda: _naive_records(data)),
        candidate=timed(lambda: parse_records(data)),
        target=1.0,
        units=count,
        unit="record",
        repeat=3 if quick else 5,
    )


def _stream(notifications: int) -> bytes:
    lines = []
    for i in range(notifications):
        kind = i % 4
        if kind == 0:
            note = {
                "method": "item/agentMessage/delta",
                "params": {"threadId": "t", "turnId": "u", "itemId": "a", "delta": "some text "},
            }
        elif kind == 1:
            item = {"type": "agentMessage", "id": f"a{i}", "text": "a finished answer " * 4}
            note = {
                "method": "item/completed",
                "params": {"item": item, "threadId": "t", "turnId": "u", "completedAtMs": i},
            }
        elif kind == 2:
            note = {
                "method": "thread/tokenUsage/updated",
                "params": {
                    "threadId": "t",
                    "turnId": "u",
                    "tokenUsage": {"total": {"totalTokens": i}},
                },
            }
        else:
            note = {
                "method": "turn/completed",
                "params": {
                    "threadId": "t",
                    "turn": {"id": f"turn-{i}", "status": "completed", "items": []},
                },
            }
        lines.append(json.dumps({**note, "emittedAtMs": 1795982727000 + i}, separators=(",", ":")))
    return ("\n".join(lines) + "\n").encode()


def _chunks(data: bytes, size: int = 65536) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def _naive_stream(chunks: list[bytes]) -> int:
    tail = b""
    count = 0
    completed: dict[str, Any] = {}
    for chunk in chunks:
        parts = (tail + chunk).split(b"\n")
        tail = parts.pop()
        for line in parts:
            message = json.loads(line)
            if "method" in message and "id" not in message:
                count += 1
                if message["method"] == "turn/completed":
                    turn = message["params"]["turn"]
                    completed[turn["id"]] = turn
    return count


def _stream_case(quick: bool) -> Case:
    count = 20_000 if quick else 100_000
    chunks = _chunks(_stream(count))

    def candidate() -> None:
        connection = CodexClientConnection()
        connection.initialize(name="bench", version="1")
        for chunk in chunks:
            connection.receive_data(chunk)

    return Case(
        name=f"codex: receive_data x{count} notifications vs split+json.loads",
        baseline=timed(lambda: _naive_stream(chunks)),
        candidate=timed(candidate),
        target=1.0,
        units=count,
        unit="notification",
        repeat=3 if quick else 5,
    )


def cases(quick: bool) -> list[Case]:
    """Return the drivers suite's cases."""
    return [_transcript_case(quick), _stream_case(quick)]
