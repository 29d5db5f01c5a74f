"""Interop: an independent herdr client (PyPI ``herdr-client``) against the reference server.

``herdr-client`` needs Python 3.13 and is not a dependency of this project, so
the test runs it in a ``python3.13`` subprocess from an unpacked wheel named
by ``SHEDPROTO_HERDR_CLIENT`` (default ``/tmp/interop/herdr_client``), e.g.::

    pip download --no-deps --python-version 3.13 --only-binary=:all: herdr-client -d /tmp/interop
    cd /tmp/interop && unzip herdr_client-*.whl -d herdr_client

It skips cleanly when either is missing. The client is used unchanged.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

from shedproto.servers.herdr import HerdrServer

from ._interop import CLIENT_DIR, python313

PYTHON = python313() if (CLIENT_DIR / "herdr_client").is_dir() else None

SCRIPT = r"""
import json, sys
from herdr_client import HerdrClient, HerdrApiError

client = HerdrClient(socket_path=sys.argv[1], timeout=10.0)
out = {}
out["pong"] = client.ping()
created = client.request("workspace.create", {"label": "interop"})
pane = created["root_pane"]["pane_id"]
out["created"] = created["workspace"]["workspace_id"]
client.pane_send_text(pane, "echo INTEROP-$((6*7))\r")
want = {"type": "substring", "value": "INTEROP-42"}
matched = client.pane_wait_for_output(pane, want, timeout_ms=10000)
out["matched"] = matched["matched_line"]
out["read"] = client.pane_read(pane, source="recent", lines=10)["read"]["text"]
out["workspaces"] = [w["workspace_id"] for w in client.workspace_list()["workspaces"]]
with client.subscribe([{"type": "workspace.created"}]) as stream:
    client.request("workspace.create", {"label": "later"})  # protocol 22: no history replay
    for event in stream.events():
        out["event"] = event
        break
try:
    client.request("pane.get", {"pane_id": "w9:p9"})
except HerdrApiError as exc:
    out["error"] = str(exc)
client.request("workspace.close", {"workspace_id": "w1"})
print(json.dumps(out))
"""


@pytest.mark.skipif(PYTHON is None, reason="no working Python >= 3.13")
@pytest.mark.skipif(
    not (CLIENT_DIR / "herdr_client").is_dir(), reason="herdr-client is not unpacked"
)
async def test_herdr_client_package_works_unchanged(short_socket_dir: Path) -> None:
    assert PYTHON is not None
    with anyio.fail_after(60):
        server = HerdrServer(short_socket_dir / "herdr.sock", shell=["/bin/sh"], cwd="/tmp")
        async with anyio.create_task_group() as tg:
            path = await tg.start(server.serve)
            env = {**os.environ, "PYTHONPATH": str(CLIENT_DIR)}
            env.pop("HERDR_SOCKET_PATH", None)
            result = await anyio.run_process(
                [PYTHON, "-c", SCRIPT, str(path)], env=env, check=False
            )
            server.shutdown()
    assert result.returncode == 0, result.stderr.decode()
    out = json.loads(result.stdout)
    assert out["pong"]["type"] == "pong"
    assert (out["pong"]["protocol"], out["pong"]["version"]) == (22, "0.9.5")
    assert out["created"] == "w1"
    assert out["matched"].endswith("INTEROP-42")
    assert "INTEROP-42" in out["read"]
    assert out["workspaces"] == ["w1"]
    assert out["event"]["data"]["workspace"]["label"] == "later"
    assert out["event"]["event"] == "workspace_created"
    assert "pane_not_found" in out["error"]
