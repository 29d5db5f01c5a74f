"""The ``shedproto demo`` step for the drivers: Claude inventory and a read on a fixture directory.

It writes two small transcripts in Claude Code's real layout (one renamed,
one with a branch) under a private config directory and lists and reads them
through :class:`~shedproto.servers.drivers.ClaudeAgentSdkDriver`; no ``claude``
CLI is needed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio

from shedproto.connector import AgentSourceConfig
from shedproto.drivers.claude import encode_project_name
from shedproto.servers.drivers import ClaudeAgentSdkDriver

from ._demo import DemoStep

__all__ = ["demo_step", "write_demo_transcripts"]

_FIRST = "0f3c1b9e-5d2a-4c7e-9b1f-2a6d8e4c1f00"
_SECOND = "7a1e2c3d-4b5f-4607-8a9b-0c1d2e3f4a5b"


def _entry(kind: str, uid: str, parent: str | None, *, session: str, cwd: str, text: str) -> str:
    role = "user" if kind == "user" else "assistant"
    content: Any = text if kind == "user" else [{"type": "text", "text": text}]
    return json.dumps(
        {
            "type": kind,
            "uuid": uid,
            "parentUuid": parent,
            "sessionId": session,
            "timestamp": "2026-11-29T20:06:05.818Z",
            "cwd": cwd,
            "isSidechain": False,
            "message": {"role": role, "content": content},
        }
    )


def write_demo_transcripts(config_dir: Path, cwd: str) -> list[Path]:
    """Write the demo's two transcripts under ``config_dir``; return their paths."""
    folder = config_dir / "projects" / encode_project_name(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    first = folder / f"{_FIRST}.jsonl"
    first.write_text(
        "\n".join(
            [
                json.dumps(
                    {"type": "custom-title", "customTitle": "Fix the parser", "sessionId": _FIRST}
                ),
                _entry(
                    "user",
                    "u1",
                    None,
                    session=_FIRST,
                    cwd=cwd,
                    text="the parser drops the last line",
                ),
                _entry(
                    "assistant",
                    "a1",
                    "u1",
                    session=_FIRST,
                    cwd=cwd,
                    text="Looking at the framing code.",
                ),
                _entry("user", "u2", "a1", session=_FIRST, cwd=cwd, text="(abandoned branch)"),
                _entry("user", "u3", "a1", session=_FIRST, cwd=cwd, text="keep the tail at EOF"),
                _entry(
                    "assistant",
                    "a3",
                    "u3",
                    session=_FIRST,
                    cwd=cwd,
                    text="Done: EOF now flushes the tail.",
                ),
                "{not json: a torn line is skipped",
            ]
        )
        + "\n"
    )
    second = folder / f"{_SECOND}.jsonl"
    second.write_text(
        _entry("user", "v1", None, session=_SECOND, cwd=cwd, text="write the README") + "\n"
    )
    os.utime(first, (1_800_000_000, 1_800_000_000))
    os.utime(second, (1_800_000_100, 1_800_000_100))
    return [first, second]


async def demo_step(directory: Path) -> DemoStep:
    """List and read the fixture sessions through the claude-agent-sdk driver."""
    cwd = str(await anyio.Path(directory).resolve())
    config = directory / "claude-config"
    await anyio.to_thread.run_sync(write_demo_transcripts, config, cwd)
    source = AgentSourceConfig(
        id="claude", driver="claude-agent-sdk", enabled=True, cwd=cwd, configDir=str(config)
    )
    driver = ClaudeAgentSdkDriver(source, base_env={"PATH": ""})
    lines = [f"wrote 2 transcripts under {config}/projects/{encode_project_name(cwd)}/"]
    async with anyio.create_task_group() as tasks:
        await driver.start(tasks)
        page = await driver.list_sessions()
        lines.extend(
            f"  {session.nativeSessionId}  {session.title!r}  updated {session.updatedAt}"
            for session in page.sessions
        )
        snapshot = await driver.read_session(_FIRST)
        lines.extend(
            f"    {message.role:>9}: {message.textPreview}"
            for message in snapshot.normalizedMessages
        )
        await driver.stop()
    ok = [s.nativeSessionId for s in page.sessions] == [_SECOND, _FIRST] and [
        m.id for m in snapshot.normalizedMessages
    ] == ["u1", "a1", "u3", "a3"]
    lines.append(
        "inventory newest first, custom title kept, abandoned branch and torn line skipped"
    )
    return DemoStep(name="drivers", ok=ok, lines=lines)
