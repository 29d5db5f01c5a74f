"""``shedproto agents-host fleet`` and the client commands acting through a fleet database."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shedproto.clients.cli import main
from shedproto.connector import TargetIdentity
from shedproto.testing._agents_host import make_command
from shedproto.testing._connector import AgentsHostDirs

from .conftest import OWNER
from .test_cli_process import host_process, read_until_ready, wait_for

pytest.importorskip("psycopg", reason="psycopg is not installed (the postgres extra)")

KEY = TargetIdentity("http://localhost:8000", "did:key:space", OWNER).key


@pytest.fixture
def fleet_dirs(postgres_url: str) -> Iterator[AgentsHostDirs]:
    root = Path(tempfile.mkdtemp(prefix="sp-fc-", dir="/tmp"))
    state, locks = root / "state", root / "locks"
    for directory in (state, locks):
        directory.mkdir(mode=0o700)
    env = {
        "XDG_STATE_HOME": str(state),
        "CF_AGENTS_HOST_LOCK_DIR": str(locks),
        "HOME": str(root),
        "SHEDPROTO_AGENTS_HOST_TARGET": postgres_url,
    }
    try:
        yield AgentsHostDirs(root, state, locks, env, target=postgres_url)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def url_label(url: str) -> str:
    from shedproto.servers.agents_host.target_postgres import describe_database

    return describe_database(url)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_fleet_and_client_commands_through_the_database(
    fleet_dirs: AgentsHostDirs, capsys: pytest.CaptureFixture[str]
) -> None:
    url = fleet_dirs.target
    assert url is not None
    socket = fleet_dirs.root / "h.sock"
    with host_process(fleet_dirs, socket) as process:
        read_until_ready(process)
        command = make_command(OWNER, "f1", type_="start", session="s1", payload={"text": "hi"})
        code, out, err = cli(
            capsys,
            "agents-host", "submit", json.dumps(command),
            "--target", url, "--host", KEY[:10], "--wait", "--timeout", "20",
        )  # fmt: skip
        assert (code, err) == (0, "")
        assert out.startswith("f1 succeeded echo/s1")

        code, out, err = cli(capsys, "agents-host", "receipt", "f1", "--target", url, "--host", KEY)
        assert (code, out.strip()) == (0, "f1 succeeded echo/s1")

        code, out, _ = cli(capsys, "agents-host", "fleet", "--target", url)
        assert code == 0
        header, row = out.splitlines()[:2]
        assert header.split()[:5] == ["HOST", "SPACE", "LIVENESS", "BEAT", "STATUS"]
        assert row.split()[:3] == [KEY[:12], "did:key:space", "live"]
        assert row.split()[4] == "ready"
        assert row.endswith("echo:ready")

        code, out, _ = cli(capsys, "agents-host", "fleet", "--target", url, "--json")
        assert code == 0
        hosts = json.loads(out)["hosts"]
        assert [h["key"] for h in hosts] == [KEY]
        assert hosts[0]["health"]["status"] == "ready"
        assert (hosts[0]["liveness"], hosts[0]["lockHeld"]) == ("live", True)

        code, out, _ = cli(
            capsys, "agents-host", "sessions", "--all", "--target", url, "--host", KEY[:8]
        )
        assert code == 0
        key, status = out.split()[:2]  # the agent names the session: example-<pid>-<n>
        assert (key.startswith("echo/example-"), status) == (True, "complete")

        code, out, err = cli(capsys, "agents-host", "health", "--target", url, "--host", "zz")
        assert (code, out) == (1, "")
        assert err == f"shedproto: error: no agents-host with key zz in {url_label(url)}\n"

        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0


def fleet_json(capsys: pytest.CaptureFixture[str], url: str, *extra: str) -> dict[str, Any]:
    code, out, _ = cli(capsys, "agents-host", "fleet", "--target", url, "--json", *extra)
    assert code == 0
    hosts: list[dict[str, Any]] = json.loads(out)["hosts"]
    assert len(hosts) == 1
    return hosts[0]


def test_fleet_tells_live_stale_and_gone_hosts_apart(
    fleet_dirs: AgentsHostDirs, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 28 item 3: a kill -9'd host was listed ``ready`` from its last health.

    Liveness comes from the database: whether the key's advisory lock is
    held (``pg_locks``) and the heartbeat's age by the database's clock.
    """
    url = fleet_dirs.target
    assert url is not None
    socket = fleet_dirs.root / "h.sock"
    with host_process(fleet_dirs, socket, "--heartbeat", "0.2") as process:
        read_until_ready(process)
        live = fleet_json(capsys, url, "--stale-after", "3600")  # a loaded machine beats late
        assert (live["liveness"], live["lockHeld"], live["heartbeatIntervalSeconds"]) == (
            "live",
            True,
            0.2,
        )
        process.kill()  # kill -9: no shutdown, the last health still says ready
        process.wait(timeout=20)
    dead = wait_for(lambda: (h := fleet_json(capsys, url))["liveness"] == "gone" and h)
    assert dead["health"]["status"] == "ready"  # what it last published, not what it is
    assert dead["lockHeld"] is False
    code, out, _ = cli(capsys, "agents-host", "fleet", "--target", url)
    assert code == 0
    assert out.splitlines()[1].split()[2] == "gone"
    # a fresh heartbeat without the lock: just died (or reconnecting): stale, not live
    just_died = fleet_json(capsys, url, "--stale-after", "3600")
    assert just_died["liveness"] == "stale"
    with host_process(fleet_dirs, socket) as process:  # restarted: live again
        read_until_ready(process)
        assert fleet_json(capsys, url, "--stale-after", "3600")["liveness"] == "live"
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
    stopped = fleet_json(capsys, url, "--stale-after", "3600")
    assert (stopped["liveness"], stopped["heartbeatAt"]) == ("gone", None)  # a clean stop
    assert stopped["health"]["status"] == "stopped"


def test_fleet_errors_are_one_line(
    fleet_dirs: AgentsHostDirs, capsys: pytest.CaptureFixture[str]
) -> None:
    url = fleet_dirs.target
    assert url is not None
    code, out, err = cli(capsys, "agents-host", "fleet", "--target", url)
    assert (code, out) == (1, "")
    assert err.startswith("shedproto: error: no agents-host fleet in postgresql://postgres@")
    assert err.count("\n") == 1
    missing = "postgresql://postgres@/nowhere?host=" + os.path.join(str(fleet_dirs.root), "no")
    code, out, err = cli(capsys, "agents-host", "receipt", "x", "--target", missing)
    assert code == 1
    assert err.startswith("shedproto: error: target database unavailable: postgresql://")
    assert err.count("\n") == 1


def test_run_target_option_and_its_environment_fallback() -> None:
    from shedproto.connector import CliOptionsError
    from shedproto.connector._cli_options import resolve_target

    url = "postgresql://agents@db.example/fleet"
    env = {"SHEDPROTO_AGENTS_HOST_TARGET": url}
    for flag, environ, expected in [
        (None, {}, None),
        (None, env, url),
        ("sqlite", env, None),  # the flag wins over the environment
        (f" {url}x ", {}, url + "x"),
    ]:
        assert resolve_target(flag, environ) == expected
    with pytest.raises(CliOptionsError, match="--target must be sqlite or a postgresql:// URL"):
        resolve_target("mysql://x", {})


def test_the_spec_exact_parser_knows_no_target_option() -> None:
    """``--target`` is the reference host's addition: the real host's parser refuses it."""
    from shedproto.connector import CliOptionsError, parse_agents_host_cli_options

    base = ["--config", "a.jsonc", "--api-url", "http://x", "--identity", "k", "--space", "s"]
    with pytest.raises(CliOptionsError, match="unknown option: --target"):
        parse_agents_host_cli_options([*base, "--target", "sqlite"], {}, cwd="/")
