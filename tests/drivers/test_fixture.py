"""The ``claude_projects`` fixture feeds the claude-agent-sdk driver."""

from __future__ import annotations

import anyio

from shedproto.connector import AgentSourceConfig
from shedproto.servers.drivers import ClaudeAgentSdkDriver
from shedproto.testing import ClaudeProjects

SESSION = "44444444-4444-4444-8444-444444444444"


async def test_claude_projects_fixture(claude_projects: ClaudeProjects) -> None:
    cwd = "/work/some project"
    path = claude_projects.write(
        cwd,
        SESSION,
        [
            {
                "type": "user",
                "uuid": "u",
                "parentUuid": None,
                "cwd": cwd,
                "message": {"content": "hi"},
            },
            "torn {",
        ],
        mtime=1_800_000_000,
    )
    assert path.parent.name == "-work-some-project"
    source = AgentSourceConfig(
        id="claude",
        driver="claude-agent-sdk",
        enabled=True,
        cwd=cwd,
        configDir=str(claude_projects.config_dir),
    )
    driver = ClaudeAgentSdkDriver(source, base_env={}, home="/nonexistent")
    async with anyio.create_task_group() as tasks:
        await driver.start(tasks)
        page = await driver.list_sessions()
    assert [(s.nativeSessionId, s.title, s.cwd) for s in page.sessions] == [(SESSION, "hi", cwd)]
