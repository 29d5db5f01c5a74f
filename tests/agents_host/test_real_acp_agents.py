"""Interop: the ACP driver against the real codex-acp and claude-agent-acp, fully offline.

Opt-in: the pinned npm packages (about 300 MB) are taken from the npm prefix
named by ``$SHEDPROTO_ACP_AGENTS`` (CI installs them there), and installed
into that prefix on first use when it lacks them and npm can reach its
registry (the run says so on the terminal). Without the variable nothing is
downloaded and every test here is skipped with the reason. The model behind each
agent is :class:`~tests.agents_host.fake_model.FakeModel` on 127.0.0.1:
Codex reaches it through a custom model provider in ``$CODEX_HOME/config.toml``
(this codex-acp ignores ``OPENAI_BASE_URL``), Claude through
``ANTHROPIC_BASE_URL``. API keys are fake; ``HOME`` is a tmp dir.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from shedproto.agents_host import ACP_AGENT_EXITED, ACP_PROMPT_DEADLINE, CommandExecutionResult
from shedproto.connector import AgentSourceConfig, PromptPayload, StartPayload
from shedproto.servers.agents_host import OperationOptions
from shedproto.servers.agents_host.process_group import group_alive
from shedproto.servers.drivers import AcpDriver
from tests._pins import ACP_AGENT_PACKAGES

from .acp_driving import running_driver, start, turn_with
from .fake_model import REPLY, FakeModel

PACKAGES = ACP_AGENT_PACKAGES
NPM_QUICK = ("--fetch-retries=1", "--fetch-timeout=30000")
"""An unreachable registry fails the install in about a minute instead of many."""
AGENTS_ENV = "SHEDPROTO_ACP_AGENTS"
BINARIES = {"codex": "codex-acp", "claude": "claude-agent-acp"}
BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin"}

pytestmark = pytest.mark.real_agents


def _prefix_has_agents(prefix: Path) -> bool:
    return all((prefix / "node_modules" / ".bin" / name).exists() for name in BINARIES.values())


@pytest.fixture(scope="session")
def agents_prefix(pytestconfig: pytest.Config) -> Path:
    """The npm prefix named by ``$SHEDPROTO_ACP_AGENTS``, with both pinned agents in it.

    Skips without the variable (a user's ``pytest`` downloads nothing); installs
    the agents into the named prefix when they are missing, announcing it.
    """
    given = os.environ.get(AGENTS_ENV)
    if not given:
        pytest.skip(
            f"the real ACP agents are opt-in: set {AGENTS_ENV}=<npm prefix> "
            "(they are installed there on first use, about 300 MB)"
        )
    prefix = Path(given)
    if _prefix_has_agents(prefix):
        return prefix
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(f"${AGENTS_ENV}={given} lacks the agents and npm is not installed")
    reporter = pytestconfig.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"shedproto: installing {' and '.join(PACKAGES)} into {prefix}")
    prefix.mkdir(parents=True, exist_ok=True)
    try:
        installed = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", *NPM_QUICK, "--prefix", str(prefix),
             *PACKAGES],
            capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.skip("npm install of the real ACP agents timed out (registry unreachable?)")
    if installed.returncode != 0 or not _prefix_has_agents(prefix):
        tail = (installed.stderr or installed.stdout).strip().splitlines()[-1:] or ["no output"]
        pytest.skip(f"npm could not install the real ACP agents: {tail[0]}")
    return prefix


@dataclass
class Agent:
    """One real agent's source and what the tests need to know about it."""

    name: str
    source: AgentSourceConfig
    model: FakeModel
    permission_file: Path


def codex_source(prefix: Path, home: Path, model: FakeModel, **fields: Any) -> AgentSourceConfig:
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    (codex_home / "config.toml").write_text(
        'model = "gpt-5.2"\n'
        'model_provider = "fake"\n'
        "[model_providers.fake]\n"
        'name = "fake"\n'
        f'base_url = "{model.url}/v1"\n'
        'env_key = "OPENAI_API_KEY"\n'
        'wire_api = "responses"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
    )
    return AgentSourceConfig(
        id="codex",
        driver="acp",
        enabled=True,
        command=(str(prefix / "node_modules" / ".bin" / "codex-acp"),),
        cwd=str(home),
        env={"HOME": str(home), "CODEX_HOME": str(codex_home), "OPENAI_API_KEY": "sk-offline"},
        **fields,
    )


def claude_source(prefix: Path, home: Path, model: FakeModel, **fields: Any) -> AgentSourceConfig:
    return AgentSourceConfig(
        id="claude",
        driver="acp",
        enabled=True,
        command=(str(prefix / "node_modules" / ".bin" / "claude-agent-acp"),),
        cwd=str(home),
        env={
            "HOME": str(home),
            "ANTHROPIC_API_KEY": "sk-ant-offline",
            "ANTHROPIC_BASE_URL": model.url,
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        },
        **fields,
    )


@pytest.fixture(params=["codex", "claude"])
def agent_name(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture
def fake_model(tmp_path: Path) -> Iterator[FakeModel]:
    with FakeModel(str(tmp_path / "permission-granted")) as model:
        yield model


def make_agent(name: str, prefix: Path, tmp_path: Path, model: FakeModel, **fields: Any) -> Agent:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    build = codex_source if name == "codex" else claude_source
    return Agent(name, build(prefix, home, model, **fields), model, Path(model.permission_file))


def running(agent: Agent, **options: Any) -> Any:
    return running_driver(
        agent.source,
        deadline=180,
        handshake_timeout=60,
        base_env=BASE_ENV,
        restart_backoff=0.2,
        **options,
    )


async def hanging_turn(
    driver: AcpDriver, session: str, during: Callable[[], Awaitable[None]]
) -> CommandExecutionResult:
    """Run a prompt the fake model never answers; ``during()`` runs once it can be cancelled."""
    return await turn_with(driver, session, "hang here", during)


async def test_two_prompts_read_as_user_assistant_pairs(
    agents_prefix: Path, agent_name: str, tmp_path: Path, fake_model: FakeModel
) -> None:
    # Regression (issue 17 item 2): live turns lost the prompt and merged the replies.
    agent = make_agent(agent_name, agents_prefix, tmp_path, fake_model)
    async with running(agent) as driver:
        if agent_name == "codex":
            assert driver.auth_method == "openai-api-key"  # the one method whose env is set
        session = await start(driver, "first")
        second = await driver.prompt(session, PromptPayload(text="second"), OperationOptions())
        assert second.status == "succeeded", second
        live = await driver.read_session(session)
    pairs = [(m.role, m.textPreview) for m in live.normalizedMessages if m.kind == "message"]
    assert [role for role, _ in pairs] == ["user", "assistant", "user", "assistant"]
    assert [text for role, text in pairs if role == "user"] == ["first", "second"]
    assert all((text or "").endswith(REPLY) for role, text in pairs if role == "assistant")


@pytest.fixture(params=[None, True], ids=["reject-once", "allow-once"])
def danger(request: pytest.FixtureRequest) -> bool | None:
    value: bool | None = request.param
    return value


async def test_permission_request_is_answered_by_policy(
    agents_prefix: Path, agent_name: str, tmp_path: Path, fake_model: FakeModel, danger: bool | None
) -> None:
    granted = danger is True
    agent = make_agent(
        agent_name, agents_prefix, tmp_path, fake_model, allowDangerFullAccess=danger
    )
    async with running(agent) as driver:
        result = await driver.start_session(
            "new-1", StartPayload(text="permission please"), OperationOptions()
        )
        assert result.result is not None
        snapshot = await driver.read_session(result.result["nativeSessionId"])
    assert agent.permission_file.exists() is granted
    if granted:
        assert result.status == "succeeded", result
    else:  # codex ends a turn whose command was declined as cancelled; claude goes on
        assert result.status == "succeeded" or (
            result.error is not None and result.error.code == "cancelled"
        ), result
    assert fake_model.tool_calls >= 1  # the model did ask for the command
    if granted:
        assert "tool-call" in [m.kind for m in snapshot.normalizedMessages]


async def test_cancel_ends_a_running_turn(
    agents_prefix: Path, agent_name: str, tmp_path: Path, fake_model: FakeModel
) -> None:
    agent = make_agent(agent_name, agents_prefix, tmp_path, fake_model)
    async with running(agent) as driver:
        session = await start(driver)

        async def cancel() -> None:
            await anyio.sleep(1)  # let the agent reach the model before the cancel
            cancelled = await driver.cancel(session)
            assert cancelled.status == "succeeded", cancelled

        result = await hanging_turn(driver, session, cancel)
    assert result.status == "failed"
    assert result.error is not None
    assert result.error.code == "cancelled"


async def test_sigkill_mid_turn_then_the_next_prompt_works(
    agents_prefix: Path, agent_name: str, tmp_path: Path, fake_model: FakeModel
) -> None:
    agent = make_agent(agent_name, agents_prefix, tmp_path, fake_model)
    async with running(agent) as driver:
        session = await start(driver)
        pgid = driver.process.pid
        assert pgid is not None

        async def kill() -> None:
            await anyio.sleep(1)
            os.killpg(pgid, signal.SIGKILL)

        died = await hanging_turn(driver, session, kill)
        assert died.status == "unknown"
        assert died.error is not None
        assert died.error.code == ACP_AGENT_EXITED
        again = await driver.prompt(session, PromptPayload(text="again"), OperationOptions())
        assert again.status == "succeeded", again
        assert driver.process.pid != pgid


async def test_host_stop_leaves_no_agent_process(
    agents_prefix: Path, agent_name: str, tmp_path: Path, fake_model: FakeModel
) -> None:
    # Regression (issue 17 item 5): the native codex-acp under npm's wrapper survived.
    agent = make_agent(agent_name, agents_prefix, tmp_path, fake_model)
    async with running(agent) as driver:
        await start(driver)
        pgid = driver.process.pid
        assert pgid is not None
        assert group_alive(pgid)
    assert not group_alive(pgid)


async def test_an_agent_that_never_answers_hits_the_deadline(
    agents_prefix: Path, agent_name: str, tmp_path: Path, fake_model: FakeModel
) -> None:
    agent = make_agent(agent_name, agents_prefix, tmp_path, fake_model, promptTimeoutMs=3000)
    async with running(agent, cancel_grace=5) as driver:
        session = await start(driver)
        result = await driver.prompt(session, PromptPayload(text="hang now"), OperationOptions())
        assert result.status == "failed"
        assert result.error is not None
        assert result.error.code == ACP_PROMPT_DEADLINE
        after = await driver.prompt(session, PromptPayload(text="after"), OperationOptions())
        assert after.status == "succeeded", after
