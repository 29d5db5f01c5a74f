"""A real third-party client (PyPI ``herdr-client``) works unchanged through the proxy.

Reuses the herdr interop test's script and discovery (``SHEDPROTO_HERDR_CLIENT``,
a Python >= 3.13); skips cleanly, saying why, when either is missing. The
script covers one-request connections, a long ``pane.wait_for_output``, a
subscription stream and an error answer.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

from shedproto.servers.herdr import HerdrServer
from tests.herdr._interop import CLIENT_DIR, CLIENT_READY, CLIENT_SKIP
from tests.herdr.test_interop import PYTHON, SCRIPT

from ._helpers import proxied


@pytest.mark.skipif(PYTHON is None, reason="no working Python >= 3.13")
@pytest.mark.skipif(not CLIENT_READY, reason=CLIENT_SKIP)
async def test_herdr_client_works_unchanged_through_the_proxy(short_socket_dir: Path) -> None:
    assert PYTHON is not None
    cassette = short_socket_dir / "interop.ndjson"
    with anyio.fail_after(60):
        server = HerdrServer(short_socket_dir / "herdr.sock", shell=["/bin/sh"], cwd="/tmp")
        async with anyio.create_task_group() as tasks:
            upstream = await tasks.start(server.serve)
            async with proxied(
                short_socket_dir / "proxy.sock", upstream, "herdr", record=cassette
            ) as run:
                env = {**os.environ, "PYTHONPATH": str(CLIENT_DIR)}
                env.pop("HERDR_SOCKET_PATH", None)
                result = await anyio.run_process(
                    [PYTHON, "-c", SCRIPT, str(run.path)], env=env, check=False
                )
            server.shutdown()
    assert result.returncode == 0, result.stderr.decode()
    out = json.loads(result.stdout)
    assert out["pong"]["protocol"] == 22
    assert out["matched"].endswith("INTEROP-42")
    assert out["event"]["event"] == "workspace_created"
    assert "pane_not_found" in out["error"]
    assert [d.human() for d in run.diagnostics] == []
    assert run.proxy.connections >= 8
    assert b"subscription_started" in cassette.read_bytes()
