"""Opt-in: the drivers against the real ``codex`` and ``claude`` binaries, fully offline.

Run with ``SHEDPROTO_REAL_BINARIES=<npm prefix> pytest tests/drivers -m real_binaries``.
Every model endpoint is ``127.0.0.1:9`` (closed), so turns fail or are
interrupted; the protocols, files and receipts around them are real.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from jsonschema.protocols import Validator

from shedproto.connector import AgentSourceConfig, PromptPayload, StartPayload
from shedproto.drivers.claude import transcript_path
from shedproto.servers.agents_host import OperationOptions
from shedproto.servers.drivers import ClaudeAgentSdkDriver, CodexAppServerDriver
from tests._pins import CLAUDE_SDK_VERSION, CODEX_VERSION
from tests._upstream_schema import problems as schema_problems
from tests._upstream_schema import schema_validator

from ._helpers import FAKE_CODEX, received
from .conftest import real_prefix

pytestmark = pytest.mark.real_binaries

OFFLINE = {"PATH": "/usr/bin:/bin"}


def codex_bin() -> str:
    return str(real_prefix() / "node_modules" / ".bin" / "codex")


def claude_cli() -> str:
    return str(
        real_prefix() / "node_modules" / "@anthropic-ai" / "claude-agent-sdk-linux-x64" / "claude"
    )


def codex_source(tmp_path: Path) -> AgentSourceConfig:
    home = tmp_path / "codex-home"
    home.mkdir(exist_ok=True)
    return AgentSourceConfig(
        id="codex",
        driver="codex-app-server",
        enabled=True,
        codexBin=codex_bin(),
        codexHome=str(home),
        cwd=str(tmp_path),
        env={
            "HOME": str(home),
            "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
            "OPENAI_API_KEY": "sk-offline",
        },
    )


async def _inventory(driver: CodexAppServerDriver) -> list[Any]:
    listed: list[Any] = []
    cursor: str | None = None
    while True:
        page = await driver.list_sessions(cursor)
        listed += page.sessions
        if page.nextCursor is None:
            return listed
        cursor = page.nextCursor


async def test_codex_handshake_thread_rename_list_read_and_interrupt(tmp_path: Path) -> None:
    with anyio.fail_after(120):
        async with anyio.create_task_group() as tasks:
            driver = CodexAppServerDriver(codex_source(tmp_path), base_env=OFFLINE)
            await driver.start(tasks)
            assert driver.version == CODEX_VERSION
            started = await driver.request("thread/start", {"cwd": str(tmp_path)})
            thread_id = started["thread"]["id"]
            renamed = await driver.rename_session(thread_id, "probe name")
            assert renamed.status == "succeeded"

            async def interrupt() -> None:
                # Interrupt once the user message is recorded: codex lists only threads
                # whose rollout holds one, and an early interrupt can beat that write.
                for _ in range(400):
                    if any(
                        n.method == "item/completed"
                        and n.params.get("item", {}).get("type") == "userMessage"
                        for n in driver.connection.notifications
                    ):
                        break
                    await anyio.sleep(0.05)
                cancelled = await driver.cancel(thread_id)
                assert cancelled.status == "succeeded"

            async def active() -> None:
                tasks.start_soon(interrupt)

            result = await driver.prompt(
                thread_id, PromptPayload(text="hello"), OperationOptions(on_session_active=active)
            )
            assert result.status == "failed"
            assert result.error is not None
            assert result.error.code == "cancelled"
            # The rollout reaches the thread index shortly after the turn ends: poll.
            listed = await _inventory(driver)
            for _ in range(50):
                if any(s.nativeSessionId == thread_id for s in listed):
                    break
                await anyio.sleep(0.2)
                listed = await _inventory(driver)
            snapshot = await driver.read_session(thread_id)
            await driver.stop()
    assert {s.nativeSessionId: s.title for s in listed}.get(thread_id) == "probe name"
    assert snapshot.summary.title == "probe name"
    assert [(m.role, m.textPreview) for m in snapshot.normalizedMessages][:1] == [("user", "hello")]


@pytest.fixture(scope="module")
def codex_schema(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("schema")
    home = tmp_path_factory.mktemp("codex-home")
    subprocess.run(
        [codex_bin(), "app-server", "generate-json-schema", "--out", str(out)],
        check=True,
        capture_output=True,
        timeout=120,
        env={**OFFLINE, "CODEX_HOME": str(home), "HOME": str(home)},
    )
    return out


def _schema(root: Path, name: str) -> Validator | None:
    for folder in (root, root / "v2", root / "v1"):
        path = folder / f"{name}.json"
        if path.exists():
            return schema_validator(json.loads(path.read_text()))
    return None


def _response_names(root: Path, file: str) -> dict[str, str]:
    names = {}
    for variant in json.loads((root / file).read_text())["oneOf"]:
        method = variant["properties"]["method"]["enum"][0]
        ref = variant["properties"].get("params", {}).get("$ref", "")
        names[method] = ref.rsplit("/", 1)[-1].replace("Params", "Response")
    return names


SCRIPT: list[dict[str, Any]] = [
    {"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "t", "version": "1"}}},
    {"method": "initialized"},
    {"id": 2, "method": "thread/list", "params": {"archived": False}},
    {"id": 3, "method": "thread/list", "params": {"cursor": "2", "archived": False}},
    {"id": 4, "method": "thread/list", "params": {"archived": True}},
    {"id": 5, "method": "thread/read", "params": {"threadId": "t-active-2", "includeTurns": True}},
    {"id": 6, "method": "thread/read", "params": {"threadId": "t-active-2"}},
    {"id": 7, "method": "thread/turns/list", "params": {"threadId": "t-active-2"}},
    {
        "id": 8,
        "method": "thread/items/list",
        "params": {"threadId": "t-active-2", "turnId": "turn-a"},
    },
    {"id": 9, "method": "thread/resume", "params": {"threadId": "t-active-2"}},
    {"id": 10, "method": "thread/name/set", "params": {"threadId": "t-active-2", "name": "N"}},
    {
        "id": 11,
        "method": "turn/start",
        "params": {
            "threadId": "t-active-2",
            "input": [{"type": "text", "text": "x", "text_elements": []}],
        },
    },
    {
        "id": 12,
        "method": "turn/interrupt",
        "params": {"threadId": "t-active-2", "turnId": "turn-1"},
    },
    *({"id": n, "result": {}} for n in range(5)),
]


UNKNOWN_KINDS = ("hologram", "item/teleport/requestApproval")
"""What the fake sends on purpose to test tolerance; no schema can know them."""


def _known(value: Any) -> Any:
    if isinstance(value, list):
        return [_known(v) for v in value if not (isinstance(v, dict) and _is_unknown(v))]
    if isinstance(value, dict):
        return {k: _known(v) for k, v in value.items()}
    return value


def _is_unknown(value: dict[str, Any]) -> bool:
    inner = value.get("item", value)
    return isinstance(inner, dict) and inner.get("type") in UNKNOWN_KINDS


def _fake_frames(scenario: str) -> Iterator[tuple[str, dict[str, Any]]]:
    stdin = "".join(json.dumps(frame) + "\n" for frame in SCRIPT)
    run = subprocess.run(
        [sys.executable, str(FAKE_CODEX)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=30,
        env={**OFFLINE, "FAKE_CODEX_SCENARIO": scenario},
        check=False,
    )
    methods = {
        frame["id"]: frame["method"] for frame in SCRIPT if "id" in frame and "method" in frame
    }
    for line in run.stdout.splitlines():
        frame = json.loads(line)
        if "method" in frame and "id" in frame:
            yield "server-request", frame
        elif "method" in frame:
            yield "notification", frame
        elif "result" in frame:
            yield methods[frame["id"]], frame


@pytest.mark.parametrize("scenario", ["complete", "failed", "approval", "hang", "early"])
def test_fake_app_server_frames_validate_against_the_real_schema(
    codex_schema: Path, scenario: str
) -> None:
    responses = _response_names(codex_schema, "ClientRequest.json")
    notifications = _schema(codex_schema, "ServerNotification")
    requests = _schema(codex_schema, "ServerRequest")
    assert notifications is not None
    assert requests is not None
    problems: list[str] = []
    checked = 0
    for kind, frame in _fake_frames(scenario):
        if kind == "notification":
            schema: Validator | None = notifications
            value = {k: v for k, v in frame.items() if k != "emittedAtMs"}
        elif kind == "server-request":
            schema, value = requests, frame
        else:
            schema, value = _schema(codex_schema, responses[kind]), frame["result"]
        if schema is None or frame.get("method") in UNKNOWN_KINDS:
            continue
        checked += 1
        found = schema_problems(schema, _known(value))
        problems += [f"{kind} {frame.get('method', '')}: {p}" for p in found]
    assert checked > 5
    assert problems == []


async def test_driver_requests_validate_against_the_real_schema(
    codex_schema: Path, tmp_path: Path
) -> None:
    from ._helpers import codex_source as fake_source
    from ._helpers import running_codex

    async with running_codex(
        fake_source(tmp_path, "approval", allowDangerFullAccess=True)
    ) as driver:
        await driver.list_sessions()
        await driver.read_session("t-active-2")
        await driver.prompt("t-active-2", PromptPayload(text="x"), OperationOptions())
        await driver.rename_session("t-active-2", "N")
    client = _schema(codex_schema, "ClientRequest")
    assert client is not None
    server_responses = _response_names(codex_schema, "ServerRequest.json")
    methods = {
        0: "item/commandExecution/requestApproval",
        1: "item/fileChange/requestApproval",
        2: "item/permissions/requestApproval",
        3: "execCommandApproval",
    }
    problems = []
    for frame in received(tmp_path / "codex.log"):
        if "method" in frame and "id" in frame:
            problems += [f"{frame['method']}: {p}" for p in schema_problems(client, frame)]
        elif frame.get("id") in methods and "result" in frame:
            schema = _schema(codex_schema, server_responses[methods[frame["id"]]])
            assert schema is not None
            found = schema_problems(schema, frame["result"])
            problems += [f"answer {frame['id']}: {p}" for p in found]
    assert problems == []


async def test_claude_cli_writes_a_transcript_the_driver_reads(tmp_path: Path) -> None:
    work = tmp_path / "proj.dir"
    work.mkdir()
    config = tmp_path / "claude-config"
    source = AgentSourceConfig(
        id="claude",
        driver="claude-agent-sdk",
        enabled=True,
        command=(claude_cli(),),
        cwd=str(work.resolve()),
        configDir=str(config),
        env={
            "HOME": str(tmp_path),
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
            "ANTHROPIC_API_KEY": "sk-ant-offline",
            "CLAUDE_CODE_MAX_RETRIES": "0",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        },
    )
    session = str(uuid.uuid4())
    with anyio.fail_after(120):
        async with anyio.create_task_group() as tasks:
            driver = ClaudeAgentSdkDriver(source, base_env=OFFLINE, home=str(tmp_path))
            await driver.start(tasks)
            started = await driver.start_session(
                session, StartPayload(text="say hi", title="probe name"), OperationOptions()
            )
            page = await driver.list_sessions()
            snapshot = await driver.read_session(session)
            again = await driver.prompt(session, PromptPayload(text="again"), OperationOptions())
            await driver.stop()
    assert driver.version is not None
    assert started.status == "failed"
    assert started.error is not None
    assert started.error.code == "claude-success"
    assert again.error is not None
    assert again.error.code == "claude-success"
    expected = transcript_path(
        str(work.resolve()), session, {"CLAUDE_CONFIG_DIR": str(config)}, str(tmp_path)
    )
    assert await anyio.Path(expected).exists()
    assert [(s.nativeSessionId, s.title) for s in page.sessions] == [(session, "probe name")]
    assert snapshot.normalizedMessages[0].textPreview == "say hi"
    assert snapshot.normalizedMessages[1].role == "assistant"
    assert CLAUDE_SDK_VERSION


async def test_codex_full_turn_through_the_worker(tmp_path: Path) -> None:
    from .fakes.fake_models import REPLY, openai_responses_api
    from .test_host_integration import command, final, worker_for

    home = tmp_path / "codex-home"
    home.mkdir()
    with openai_responses_api() as (url, seen):
        provider = (
            f'model_providers.fake={{name="fake",base_url="{url}/v1",wire_api="responses",'
            'env_key="FAKE_KEY",supports_websockets=false}'
        )
        source = AgentSourceConfig(
            id="codex",
            driver="codex-app-server",
            enabled=True,
            command=(codex_bin(), "-c", provider, "-c", "model_provider=fake", "app-server"),
            codexHome=str(home),
            cwd=str(tmp_path),
            env={"HOME": str(home), "FAKE_KEY": "sk-fake"},
        )
        thread_id = await _materialised_thread(source, tmp_path)
        async with worker_for(tmp_path / "host", source) as (worker, receipts):
            await worker.handle([command("c1", "codex", thread_id)])
            await worker.drain()
            snapshot = await worker.drivers["codex"].read_session(thread_id)
    receipt = final(receipts, "c1")
    assert receipt.status == "succeeded"
    assert receipt.providerOperationId is not None
    assert ("POST", "/v1/responses") in seen
    assert [m.textPreview for m in snapshot.normalizedMessages][-2:] == ["prompt c1", REPLY]


async def _materialised_thread(source: AgentSourceConfig, cwd: Path) -> str:
    # A thread gets its rollout (and becomes resumable) once it is named or has a turn.
    async with anyio.create_task_group() as tasks:
        driver = CodexAppServerDriver(source, base_env=OFFLINE)
        await driver.start(tasks)
        started = await driver.request("thread/start", {"cwd": str(cwd)})
        thread_id: str = started["thread"]["id"]
        await driver.rename_session(thread_id, "e2e")
        await driver.stop()
    return thread_id


async def test_claude_full_turn_through_the_worker(tmp_path: Path) -> None:
    from .fakes.fake_models import REPLY, anthropic_api
    from .test_host_integration import command, final, worker_for

    work = tmp_path / "work"
    work.mkdir()
    session = str(uuid.uuid4())
    with anthropic_api() as (url, seen):
        source = AgentSourceConfig(
            id="claude",
            driver="claude-agent-sdk",
            enabled=True,
            command=(claude_cli(),),
            cwd=str(work.resolve()),
            configDir=str(tmp_path / "claude-config"),
            env={
                "HOME": str(tmp_path),
                "ANTHROPIC_BASE_URL": url,
                "ANTHROPIC_API_KEY": "sk-ant-offline",
                "CLAUDE_CODE_MAX_RETRIES": "0",
                "DISABLE_AUTOUPDATER": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            },
        )
        async with worker_for(tmp_path / "host", source) as (worker, receipts):
            await worker.handle(
                [command("c1", "claude", session, "start", text="say hi", title="e2e")]
            )
            await worker.drain()
            await worker.handle([command("c2", "claude", session)])
            await worker.drain()
            snapshot = await worker.drivers["claude"].read_session(session)
    assert final(receipts, "c1").status == "succeeded"
    assert final(receipts, "c2").status == "succeeded"
    assert any(path.startswith("/v1/messages") for _, path in seen)
    assert [m.textPreview for m in snapshot.normalizedMessages] == [
        "say hi",
        REPLY,
        "prompt c2",
        REPLY,
    ]
    assert snapshot.summary.title == "e2e"
