"""The claude-agent-sdk driver reads Claude Code transcripts the plugin wrote."""

import anyio
import pytest

from shedproto.connector import AgentSourceConfig
from shedproto.servers.drivers import driver_factory

SESSION = "0f3c1b9e-5d2a-4c7e-9b1f-2a6d8e4c1f00"


def entry(kind, uid, parent, cwd, text):
    """One transcript record as Claude Code writes it."""
    content = text if kind == "user" else [{"type": "text", "text": text}]
    return {
        "type": kind,
        "uuid": uid,
        "parentUuid": parent,
        "sessionId": SESSION,
        "timestamp": "2026-11-29T20:06:05.818Z",
        "cwd": cwd,
        "isSidechain": False,
        "message": {"role": kind, "content": content},
    }


@pytest.mark.anyio
async def test_the_driver_lists_and_reads_a_session(claude_projects, tmp_path):
    """The inventory finds the session and its title; a read skips a torn line."""
    cwd = str(tmp_path)
    claude_projects.write(
        cwd,
        SESSION,
        [
            {
                "type": "custom-title",
                "customTitle": "Fix the parser",
                "sessionId": SESSION,
            },
            entry("user", "u1", None, cwd, "the parser drops the last line"),
            entry("assistant", "a1", "u1", cwd, "Looking at the framing code."),
            "{not json: a torn line is skipped",
        ],
    )
    source = AgentSourceConfig(
        id="claude",
        driver="claude-agent-sdk",
        enabled=True,
        cwd=cwd,
        configDir=str(claude_projects.config_dir),
    )
    driver = driver_factory(source)  # codex-app-server, claude-agent-sdk or acp
    async with anyio.create_task_group() as tg:
        await driver.start(tg)
        page = await driver.list_sessions()  # newest first
        snapshot = await driver.read_session(SESSION)
        await driver.stop()
    assert [(s.nativeSessionId, s.title) for s in page.sessions] == [
        (SESSION, "Fix the parser")
    ]
    assert [(m.role, m.id) for m in snapshot.normalizedMessages] == [
        ("user", "u1"),
        ("assistant", "a1"),
    ]
