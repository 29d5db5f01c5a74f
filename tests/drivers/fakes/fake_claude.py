"""A scripted stand-in for ``claude -p --input-format stream-json --output-format stream-json``.

Standard library only. Like the real CLI it resolves sessions through the
project directory of its cwd under ``CLAUDE_CONFIG_DIR`` (or ``~/.claude``),
writes the transcript there (``user``/``assistant`` records with
``parentUuid`` chains, ``custom-title`` for ``-n``), emits ``system/init``
first and a ``result`` last, and answers control requests. ``--resume`` of a
missing session and ``--session-id`` of an existing one fail on stderr with
exit 1 and no stdout, as the real CLI does.

``FAKE_CLAUDE_SCENARIO``: ``success`` (default), ``is-error`` (``success`` with
``is_error: true``, exit 1), ``max-turns``, ``no-result`` (exit 0 without a
result), ``nonzero`` (exit 3 right after init), ``wait`` (the turn runs until
an ``interrupt`` control request), ``stubborn`` (ignores everything until
killed), ``can-use-tool`` (asks the host for a tool
permission first). ``FAKE_CLAUDE_LOG`` receives the argv, cwd, config dir and
every stdin line.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import uuid
from datetime import datetime, timezone
from typing import Any

SCENARIO = os.environ.get("FAKE_CLAUDE_SCENARIO", "success")
LOG = os.environ.get("FAKE_CLAUDE_LOG")
VERSION = "2.1.332"


def log(entry: object) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")


def emit(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def fail(text: str, code: int = 1) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()
    sys.exit(code)


def java_hash(text: str) -> str:
    value = 0
    data = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        value = (value * 31 + int.from_bytes(data[i : i + 2], "little")) & 0xFFFFFFFF
    if value >= 0x80000000:
        value -= 0x100000000
    value = abs(value)
    digits = ""
    while value:
        value, rest = divmod(value, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[rest] + digits
    return digits or "0"


def project_name(cwd: str) -> str:
    # JavaScript replaces UTF-16 units, so a character outside the BMP gives two dashes.
    encoded = "".join(
        c if re.fullmatch(r"[A-Za-z0-9]", c) else "--" if ord(c) > 0xFFFF else "-" for c in cwd
    )
    if len(encoded) <= 200:
        return encoded
    return f"{encoded[:200]}-{java_hash(cwd)}"


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class Options:
    def __init__(self, argv: list[str]) -> None:
        self.flags: dict[str, str | bool] = {}
        args = iter(argv)
        for arg in args:
            if arg.startswith("--resume="):
                self.flags["resume"] = arg.split("=", 1)[1]
            elif arg in (
                "--output-format",
                "--input-format",
                "--session-id",
                "-n",
                "--permission-mode",
                "--model",
            ):
                self.flags[arg.lstrip("-")] = next(args)
            else:
                self.flags[arg.lstrip("-")] = True

    def get(self, key: str) -> Any:
        return self.flags.get(key)


class Session:
    def __init__(self, path: str, session_id: str, cwd: str) -> None:
        self.path = path
        self.session_id = session_id
        self.cwd = cwd
        self.last_uuid: str | None = None
        if os.path.exists(path):
            with open(path, encoding="utf-8") as handle:
                for line in handle:
                    try:
                        record = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(record, dict) and isinstance(record.get("uuid"), str):
                        self.last_uuid = record["uuid"]

    def write(self, record: dict[str, Any]) -> None:
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    def entry(self, kind: str, message: dict[str, Any], **extra: Any) -> dict[str, Any]:
        record = {
            "type": kind,
            "uuid": str(uuid.uuid4()),
            "parentUuid": self.last_uuid,
            "sessionId": self.session_id,
            "timestamp": now(),
            "cwd": self.cwd,
            "isSidechain": False,
            "userType": "external",
            "entrypoint": "sdk-cli",
            "version": VERSION,
            "message": message,
            **extra,
        }
        self.last_uuid = record["uuid"]
        self.write(record)
        return record


def main() -> None:  # noqa: PLR0915 - one scripted conversation
    options = Options(sys.argv[1:])
    config = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    cwd = os.path.realpath(os.getcwd())
    log(
        {"argv": sys.argv[1:], "cwd": cwd, "CLAUDE_CONFIG_DIR": os.environ.get("CLAUDE_CONFIG_DIR")}
    )
    if options.get("output-format") == "stream-json" and not options.get("verbose"):
        fail("Error: When using --print, --output-format=stream-json requires --verbose")
    folder = os.path.join(config, "projects", project_name(cwd))
    resume = options.get("resume")
    session_id = resume or options.get("session-id") or str(uuid.uuid4())
    path = os.path.join(folder, f"{session_id}.jsonl")
    if resume and not os.path.exists(path):
        fail(f"No conversation found with session ID: {resume}")
    if options.get("session-id") and os.path.exists(path):
        fail(f"Error: Session ID {session_id} is already in use.")
    session = Session(path, session_id, cwd)
    mode = options.get("permission-mode") or "default"
    model = options.get("model") or "claude-sonnet-4-5"
    title = options.get("n")
    if title:
        session.write({"type": "custom-title", "customTitle": title, "sessionId": session_id})
        emit(
            {
                "type": "system",
                "subtype": "session_title_changed",
                "title": title,
                "session_id": session_id,
            }
        )
    emit(
        {
            "type": "system",
            "subtype": "init",
            "session_id": session_id,
            "cwd": cwd,
            "model": model,
            "permissionMode": mode,
            "claude_code_version": VERSION,
            "tools": [],
        }
    )
    if SCENARIO == "nonzero":
        fail("fatal: simulated crash", 3)
    exit_code = 0
    waiting_for_tool = False
    running = False
    for raw in sys.stdin:
        if not raw.strip():
            continue
        message = json.loads(raw)
        log({"received": message})
        kind = message.get("type")
        if kind == "control_request":
            request = message["request"]
            emit(
                {
                    "type": "control_response",
                    "response": {
                        "subtype": "success",
                        "request_id": message["request_id"],
                        "response": {},
                    },
                }
            )
            if request.get("subtype") == "interrupt" and running:
                running = False
                emit(
                    result(
                        session_id,
                        "error_during_execution",
                        True,
                        terminal_reason="aborted_streaming",
                    )
                )
            continue
        if kind == "control_response":
            if waiting_for_tool:
                waiting_for_tool = False
                finish_turn(session, session_id)
            continue
        if kind != "user":
            continue
        session.entry("user", {"role": "user", "content": message["message"]["content"]})
        if SCENARIO == "can-use-tool":
            waiting_for_tool = True
            emit(
                {
                    "type": "control_request",
                    "request_id": "cli_req_1",
                    "request": {
                        "subtype": "can_use_tool",
                        "tool_name": "Bash",
                        "input": {"command": "ls"},
                    },
                }
            )
            continue
        if SCENARIO == "stubborn":
            emit({"type": "assistant", "message": {"role": "assistant", "content": []}})
            time.sleep(60)  # ignores interrupts and the end of stdin; only a kill ends it
        if SCENARIO == "wait":
            running = True
            assistant = session.entry(
                "assistant", {"role": "assistant", "content": [{"type": "text", "text": "working"}]}
            )
            emit(
                {
                    "type": "assistant",
                    "message": assistant["message"],
                    "session_id": session_id,
                    "uuid": assistant["uuid"],
                }
            )
            continue
        if SCENARIO == "is-error":
            text = "API Error: Connection refused"
            session.entry(
                "assistant",
                {
                    "role": "assistant",
                    "model": "<synthetic>",
                    "content": [{"type": "text", "text": text}],
                },
                isApiErrorMessage=True,
            )
            emit(result(session_id, "success", True, terminal_reason="api_error", text=text))
            exit_code = 1
            continue
        if SCENARIO == "max-turns":
            emit(
                result(
                    session_id,
                    "error_max_turns",
                    True,
                    errors=["Reached maximum number of turns (1)"],
                )
            )
            continue
        if SCENARIO == "no-result":
            assistant = session.entry(
                "assistant", {"role": "assistant", "content": [{"type": "text", "text": "partial"}]}
            )
            emit(
                {
                    "type": "assistant",
                    "message": assistant["message"],
                    "session_id": session_id,
                    "uuid": assistant["uuid"],
                }
            )
            sys.exit(0)
        finish_turn(session, session_id)
    sys.exit(exit_code)


def finish_turn(session: Session, session_id: str) -> None:
    assistant = session.entry(
        "assistant", {"role": "assistant", "content": [{"type": "text", "text": "done"}]}
    )
    emit(
        {
            "type": "assistant",
            "message": assistant["message"],
            "session_id": session_id,
            "uuid": assistant["uuid"],
        }
    )
    emit(result(session_id, "success", False, text="done"))


def result(
    session_id: str,
    subtype: str,
    is_error: bool,
    *,
    terminal_reason: str | None = None,
    text: str | None = None,
    errors: list[str] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": "result",
        "subtype": subtype,
        "is_error": is_error,
        "num_turns": 1,
        "duration_ms": 5,
        "total_cost_usd": 0,
        "session_id": session_id,
    }
    if text is not None:
        body["result"] = text
    if terminal_reason is not None:
        body["terminal_reason"] = terminal_reason
    if errors is not None:
        body["errors"] = errors
    return body


if __name__ == "__main__":
    main()
