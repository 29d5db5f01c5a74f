"""The example ACP agent shipped in the package, and the demo in an install without extras."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from shedproto.connector import AgentSourceConfig, PromptPayload, StartPayload
from shedproto.servers.agents_host import OperationOptions
from shedproto.servers.agents_host.example_agent import ExampleAgent
from shedproto.servers.drivers import AcpDriver
from tests._bare_venv import make_bare_venv

ROOT = Path(__file__).resolve().parents[2]
IGNORED = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis"
)
EXAMPLE_AGENT = (sys.executable, "-m", "shedproto.servers.agents_host.example_agent")


def example_source(**env: str) -> AgentSourceConfig:
    return AgentSourceConfig(
        id="example", driver="acp", enabled=True, command=EXAMPLE_AGENT, env=env or None
    )


async def test_example_agent_turns_read_as_user_assistant_pairs() -> None:
    import anyio

    driver = AcpDriver(example_source(), handshake_timeout=20)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            await driver.start(tg)
            try:
                started = await driver.start_session(
                    "new", StartPayload(text="one"), OperationOptions()
                )
                assert started.status == "succeeded", started
                assert started.result is not None
                agent_id = started.result["nativeSessionId"]
                second = await driver.prompt(
                    agent_id, PromptPayload(text="two"), OperationOptions()
                )
                assert second.status == "succeeded", second
                live = await driver.read_session(agent_id)
                driver._replayed.discard(agent_id)  # force the agent's own replay
                replayed = await driver.read_session(agent_id)
            finally:
                await driver.stop()
    pairs = [
        ("user", "one"),
        ("assistant", "echo: one"),
        ("user", "two"),
        ("assistant", "echo: two"),
    ]
    assert [(m.role, m.textPreview) for m in live.normalizedMessages] == pairs
    assert [(m.role, m.textPreview) for m in replayed.normalizedMessages] == pairs


def test_example_agent_streams_no_user_chunk_during_a_prompt() -> None:
    # Regression (issue 17 item 2): the project's agents echoed the user's text live,
    # unlike real agents, which hid the host's lost user messages.
    out = io.StringIO()
    agent = ExampleAgent(out)
    agent.handle({"jsonrpc": "2.0", "id": 0, "method": "session/new", "params": {"cwd": "/"}})
    session = json.loads(out.getvalue())["result"]["sessionId"]
    out.seek(0)
    out.truncate()
    prompt = [{"type": "text", "text": "hi"}]
    params = {"sessionId": session, "prompt": prompt}
    agent.handle({"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": params})
    live = [json.loads(text) for text in out.getvalue().splitlines()]
    out.seek(0)
    out.truncate()
    params = {"sessionId": session, "cwd": "/"}
    agent.handle({"jsonrpc": "2.0", "id": 2, "method": "session/load", "params": params})
    replay = [json.loads(text) for text in out.getvalue().splitlines()]

    def kinds(messages: list[dict[str, Any]]) -> list[str]:
        return [m["params"]["update"]["sessionUpdate"] for m in messages if "method" in m]

    assert kinds(live) == ["agent_message_chunk", "agent_message_chunk"]
    assert live[-1]["result"] == {"stopReason": "end_turn"}
    assert kinds(replay) == ["user_message_chunk", "agent_message_chunk", "agent_message_chunk"]


@pytest.fixture(scope="module")
def bare_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel and only the runtime dependencies (linked, not downloaded)."""
    work = tmp_path_factory.mktemp("bare")
    source = work / "src"
    shutil.copytree(ROOT, source, symlinks=True, ignore=IGNORED)
    build = "import sys; from setuptools import build_meta as b; print(b.build_wheel(sys.argv[1]))"
    built = subprocess.run(
        [sys.executable, "-c", build, str(work / "dist")],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    wheel = work / "dist" / built.stdout.strip().splitlines()[-1]
    python = make_bare_venv(wheel, work / "venv")
    return python.parent.parent


def test_demo_runs_in_an_install_without_extras(bare_venv: Path) -> None:
    # Regression (issue 12 item 3): the demo's agents-host step ran an agent from
    # shedproto.testing, which imports pytest, so a plain install failed it.
    python = bare_venv / "bin" / "python"
    no_pytest = subprocess.run(
        [str(python), "-c", "import pytest"], capture_output=True, text=True, check=False
    )
    assert no_pytest.returncode != 0, "pytest must not be installed in the bare venv"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    demo = subprocess.run(
        [str(bare_venv / "bin" / "shedproto"), "demo"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
        cwd=bare_venv,
    )
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    assert "[ok] agents-host" in demo.stdout
    assert "hello | echo: hello | how are you? | echo: how are you?" in demo.stdout
