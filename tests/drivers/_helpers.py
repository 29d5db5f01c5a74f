"""Shared helpers: fake peer paths, sources, running drivers, reading the fakes' logs."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from shedproto.connector import AgentSourceConfig
from shedproto.drivers.claude import encode_project_name
from shedproto.servers.drivers import CodexAppServerDriver

FAKES = Path(__file__).parent / "fakes"
FAKE_CODEX = FAKES / "fake_codex.py"
FAKE_CLAUDE = FAKES / "fake_claude.py"
BASE_ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
DEADLINE = 20.0


def codex_source(tmp_path: Path, scenario: str = "complete", **fields: Any) -> AgentSourceConfig:
    """A codex source whose ``command`` runs the fake app-server with ``scenario``."""
    env = {"FAKE_CODEX_SCENARIO": scenario, "FAKE_CODEX_LOG": str(tmp_path / "codex.log")}
    env.update(fields.pop("env", {}))
    fields.setdefault("command", (sys.executable, str(FAKE_CODEX)))
    return AgentSourceConfig(id="codex", driver="codex-app-server", enabled=True, env=env, **fields)


def read_log(path: Path) -> list[dict[str, Any]]:
    """The JSON lines a fake logged."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def received(path: Path) -> list[dict[str, Any]]:
    """The frames the fake received, in order."""
    return [entry["received"] for entry in read_log(path) if "received" in entry]


@asynccontextmanager
async def running_codex(
    source: AgentSourceConfig, **kwargs: Any
) -> AsyncIterator[CodexAppServerDriver]:
    """Start a codex driver in a task group and stop it afterwards, all under a deadline."""
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as tasks:
            driver = CodexAppServerDriver(source, base_env=BASE_ENV, **kwargs)
            await driver.start(tasks)
            try:
                yield driver
            finally:
                await driver.stop()


def claude_source(tmp_path: Path, scenario: str = "success", **fields: Any) -> AgentSourceConfig:
    """A claude source whose CLI is the fake, with its own config dir under ``tmp_path``."""
    env = {"FAKE_CLAUDE_SCENARIO": scenario, "FAKE_CLAUDE_LOG": str(tmp_path / "claude.log")}
    env.update(fields.pop("env", {}))
    fields.setdefault("command", (sys.executable, str(FAKE_CLAUDE)))
    fields.setdefault("configDir", str(tmp_path / "claude-home"))
    return AgentSourceConfig(
        id="claude", driver="claude-agent-sdk", enabled=True, env=env, **fields
    )


def record(
    kind: str,
    uid: str,
    parent: str | None,
    *,
    session: str,
    cwd: str,
    text: str | list[dict[str, Any]],
    timestamp: str = "2026-11-29T20:06:05.818Z",
    **extra: Any,
) -> dict[str, Any]:
    """One conversation record in Claude Code's transcript shape."""
    role = "user" if kind == "user" else "assistant"
    return {
        "type": kind,
        "uuid": uid,
        "parentUuid": parent,
        "sessionId": session,
        "timestamp": timestamp,
        "cwd": cwd,
        "isSidechain": False,
        "userType": "external",
        "entrypoint": "cli",
        "version": "2.1.332",
        "message": {"role": role, "content": text},
        **extra,
    }


def write_transcript(
    config_dir: Path,
    cwd: str,
    session: str,
    lines: Sequence[dict[str, Any] | str],
    *,
    mtime: float | None = None,
) -> Path:
    """Write a transcript where Claude Code keeps it; strings are written verbatim (bad lines)."""
    folder = config_dir / "projects" / encode_project_name(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session}.jsonl"
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path
