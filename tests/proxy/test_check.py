"""``check`` passes against every reference server and reports a broken server's failures."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import anyio.abc
import pytest

from shedproto.clients.cli import main
from shedproto.clients.proxy import CheckResult, run_check
from shedproto.observe import probe_cases, resolve_options
from shedproto.servers import UnixServer
from shedproto.servers.herdr import HerdrServer
from shedproto.servers.host_agent import HostAgentServer
from shedproto.testing import RunningAgentsHost
from shedproto.testing._desktop import DesktopServerFactory


def failures(results: list[CheckResult]) -> list[str]:
    return [f"{r.case}: {r.detail}" for r in results if r.status == "fail"]


def assert_every_case_passed(
    results: list[CheckResult],
    protocol: str,
    *,
    dialect: str | None = None,
    allow_mutations: bool = False,
) -> None:
    """Every probe case of ``protocol`` ran and passed (mutations skipped unless allowed).

    The expected list comes from the cases, not from ``results``: a check that
    ran nothing, or fewer cases, fails here.
    """
    dialect, version = resolve_options(protocol, dialect=dialect, version=None)
    cases = probe_cases(protocol, dialect=dialect, version=version)
    expected = [
        (case.name, "skip" if case.mutation and not allow_mutations else "pass") for case in cases
    ]
    assert [(r.case, r.status) for r in results] == expected, failures(results)
    assert "pass" in {status for _, status in expected}


async def test_check_passes_against_the_herdr_reference(herdr_server: HerdrServer) -> None:
    results = await run_check("herdr", herdr_server.path)
    assert_every_case_passed(results, "herdr")
    assert len(results) >= 7


@pytest.mark.parametrize("dialect", ["mac", "tauri"])
async def test_check_passes_against_the_desktop_reference(
    desktop_server_factory: DesktopServerFactory, dialect: str
) -> None:
    server = desktop_server_factory(dialect=dialect, test_mode=False)
    results = await run_check("desktop", server.path, dialect=dialect)
    assert_every_case_passed(results, "desktop", dialect=dialect)


async def test_check_passes_against_the_agents_host_reference(
    agents_host: RunningAgentsHost,
) -> None:
    results = await run_check("agents-host", agents_host.socket)
    assert_every_case_passed(results, "agents-host")


async def test_check_passes_against_the_host_agent_reference(short_socket_dir: Path) -> None:
    async with anyio.create_task_group() as tasks:
        agent: HostAgentServer = await tasks.start(HostAgentServer(short_socket_dir / "a").serve)
        status = await run_check("host-agent-status", agent.status_path)
        read_only = await run_check("host-agent", agent.approval_path)
        mutating = await run_check("host-agent", agent.approval_path, allow_mutations=True)
        agent.shutdown()
    assert_every_case_passed(status, "host-agent-status")
    assert_every_case_passed(read_only, "host-agent")
    assert_every_case_passed(mutating, "host-agent", allow_mutations=True)
    assert [r.status for r in read_only].count("skip") == 1


async def broken_herdr(stream: anyio.abc.SocketStream) -> None:
    """Answer every line, even a bad one, with a protocol-20 pong for the request's id."""
    try:
        line = await stream.receive()
    except anyio.EndOfStream:
        return
    try:
        request_id = json.loads(line)["id"]
    except (ValueError, KeyError, TypeError):
        request_id = ""
    await stream.send(
        b'{"id":%s,"result":{"type":"pong","version":"0","protocol":20}}\n'
        % json.dumps(request_id).encode()
    )


async def test_check_reports_the_failures_of_a_broken_server(short_socket_dir: Path) -> None:
    async with anyio.create_task_group() as tasks:
        server = UnixServer(short_socket_dir / "broken.sock", broken_herdr)
        path = await tasks.start(server.serve)
        results = await run_check("herdr", path, version=21, timeout=1.0)
        server.shutdown()
    failed = failures(results)
    assert len(failed) == len(results), failed  # it never errs, never closes, speaks 20
    assert any(line.startswith("ping answers: ") and "protocol 20" in line for line in failed)
    assert any(
        line.startswith("blank line closes: ") and "an answer before any request" in line
        for line in failed
    )
    # every answer is a pong of protocol 20: the observer names the version mismatch
    assert any(
        line.startswith("unknown method: ")
        and "version_mismatch: the server speaks herdr protocol 20" in line
        for line in failed
    )


async def test_check_cli_prints_a_table_and_exits_1_on_failure(
    short_socket_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with anyio.create_task_group() as tasks:
        server = UnixServer(short_socket_dir / "broken.sock", broken_herdr)
        path = await tasks.start(server.serve)
        argv = ["check", "--protocol", "herdr", "--socket", str(path), "--timeout", "1"]
        code = await anyio.to_thread.run_sync(main, argv)
        server.shutdown()
    out = capsys.readouterr().out
    assert code == 1
    assert out.splitlines()[0].startswith("FAIL")
    assert "failed" in out.splitlines()[-1]


async def test_check_cli_json_passes_against_the_reference(
    herdr_server: HerdrServer, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["check", "--protocol", "herdr", "--socket", str(herdr_server.path), "--json"]
    code = await anyio.to_thread.run_sync(main, argv)
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert report["ok"] is True
    assert {r["status"] for r in report["results"]} == {"pass"}


def test_check_cli_unreachable_socket_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["check", "--protocol", "herdr", "--socket", str(tmp_path / "none.sock")])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("shedproto: error: cannot reach ")
    assert err.count("\n") == 1
