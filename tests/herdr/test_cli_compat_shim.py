"""A shell script drives ``herdr`` through the shim against the reference server.

The script calls the ``herdr`` on PATH (the ``herdr_shim`` fixture's) for every
client subcommand family and records each step's stdout, stderr and exit
code; the test checks herdr's output forms: JSON answer lines, read text,
the text and JSON of ``status``, and usage exits. Methods the reference
server does not model yet may answer with an error line (exit 1); their
request construction is covered by ``test_cli_compat.py``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from shedproto.testing import HerdrShim

SCRIPT = r"""
set -u
OUT=$1
step() { name=$1; shift; "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"; echo $? >"$OUT/$name.rc"; }
step which command -v herdr
step status herdr status
step status_json herdr status --json
step status_client herdr status client --json
step ws_create herdr workspace create --cwd /tmp --label demo --focus
step ws_list herdr workspace list
step ws_get herdr workspace get w1
step ws_focus herdr workspace focus w1
step ws_rename herdr workspace rename w1 the demo
step tab_create herdr tab create --workspace w1 --label two
step tab_list herdr tab list --workspace w1
step tab_get herdr tab get w1:t2
step tab_focus herdr tab focus w1:t1
step tab_rename herdr tab rename w1:t2 second
step tab_close herdr tab close w1:t2
step pane_list herdr pane list
step pane_get herdr pane get w1:p1
step pane_split herdr pane split w1:p1 --direction down
step pane_send_text herdr pane send-text w1:p1 echo shim-ok
step pane_send_keys herdr pane send-keys w1:p1 enter
step pane_wait herdr pane wait-output w1:p1 --match shim-ok --timeout 15000
step pane_read herdr pane read w1:p1 --source recent
step pane_run herdr pane run w1:p3 echo ran-$((40 + 2))
step pane_wait_run herdr pane wait-output w1:p3 --match ran-42 --timeout 15000
step pane_missing herdr pane get w9:p9
step pane_usage herdr pane split
step agent_list herdr agent list
step agent_missing herdr agent get nobody
step api_snapshot herdr api snapshot
step api_schema herdr api schema
step api_schema_json herdr api schema --json
step help herdr workspace help
step pane_close herdr pane close w1:p3
step pane_zoom herdr pane zoom w1:p1 --on
step pane_process_info herdr pane process-info --pane w1:p1
step pane_layout herdr pane layout --pane w1:p1
step notification herdr notification show hello --body world
step worktree_list herdr worktree list --workspace w1
step integration_status herdr integration status
step plugin_list herdr plugin list --json
step server_reload herdr server reload-config
step agent_manifests herdr server agent-manifests --json
step ws_close herdr workspace close w1
"""

# Steps whose method the reference server may not model yet: an answer line either way.
EITHER = [
    "pane_zoom", "pane_process_info", "pane_layout", "notification", "worktree_list",
    "plugin_list", "server_reload", "agent_manifests",
]  # fmt: skip


def load(out: Path, name: str) -> tuple[int, str, str]:
    code = int((out / f"{name}.rc").read_text())
    return code, (out / f"{name}.out").read_text(), (out / f"{name}.err").read_text()


def answer(text: str) -> dict[str, Any]:
    lines = text.splitlines()
    assert len(lines) == 1, text  # herdr prints one compact JSON line
    decoded: dict[str, Any] = json.loads(lines[0])
    return decoded


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX sh to run the script")
def test_script_drives_every_subcommand_through_the_shim(
    herdr_shim: HerdrShim, tmp_path: Path
) -> None:
    script = tmp_path / "drive.sh"
    script.write_text(SCRIPT)
    out = tmp_path / "out"
    out.mkdir()
    subprocess.run(["sh", str(script), str(out)], check=True, timeout=300)

    assert load(out, "which")[1].strip() == str(herdr_shim.executable)
    code, text, _ = load(out, "status")
    assert code == 0
    assert "server:\n  status: running\n" in text
    assert "  compatible: yes\n" in text
    assert f"  socket: {herdr_shim.socket}\n" in text
    status = answer(load(out, "status_json")[1])
    assert status["server"]["running"] is True
    assert status["update"]["restart_needed"] is False
    assert status["client"]["binary"] == str(herdr_shim.executable)

    created = answer(load(out, "ws_create")[1])
    assert created["id"] == "cli:workspace:create"
    assert created["result"]["type"] == "workspace_created"
    assert created["result"]["workspace"]["label"] == "demo"
    result_types = {
        "ws_list": "workspace_list",
        "ws_get": "workspace_info",
        "ws_focus": "workspace_info",
        "ws_rename": "workspace_info",
        "tab_create": "tab_created",
        "tab_list": "tab_list",
        "tab_get": "tab_info",
        "tab_focus": "tab_info",
        "tab_rename": "tab_info",
        "tab_close": "ok",
        "pane_list": "pane_list",
        "pane_get": "pane_info",
        "pane_split": "pane_info",
        "pane_wait": "output_matched",
        "pane_wait_run": "output_matched",
        "agent_list": "agent_list",
        "api_snapshot": "session_snapshot",
        "pane_close": "ok",
        "ws_close": "ok",
    }
    for name, result_type in result_types.items():
        code, text, err = load(out, name)
        assert (code, err) == (0, ""), name
        assert answer(text)["result"]["type"] == result_type, name
    assert answer(load(out, "ws_rename")[1])["result"]["workspace"]["label"] == "the demo"
    assert answer(load(out, "pane_split")[1])["result"]["pane"]["pane_id"] == "w1:p3"

    for name in ("pane_send_text", "pane_send_keys", "pane_run"):
        assert load(out, name) == (0, "", ""), name  # herdr's send_ok: silent
    code, text, _ = load(out, "pane_read")
    assert code == 0
    assert "shim-ok" in text
    assert not text.lstrip().startswith("{")  # the text itself, not the JSON answer

    check_failures(out)


def check_failures(out: Path) -> None:
    """Error answers, usage exits, help, the schema and the steps that may be unmodelled."""
    for name, error in (("pane_missing", "pane_not_found"), ("agent_missing", "agent_not_found")):
        code, text, err = load(out, name)
        assert (code, text) == (1, ""), name
        assert answer(err)["error"]["code"] == error, name
    code, text, err = load(out, "pane_usage")
    assert (code, text) == (2, "")
    assert err.startswith("usage: herdr pane split")
    code, _, err = load(out, "help")
    assert code == 0
    assert err.startswith("herdr workspace commands:\n")

    code, text, _ = load(out, "api_schema")
    assert code == 0
    assert text.startswith("Herdr API schema\nprotocol: ")
    assert json.loads(load(out, "api_schema_json")[1])["title"] == "Herdr API"

    for name in EITHER:
        code, text, err = load(out, name)
        if code == 0:
            assert "result" in answer(text), name
        else:
            assert (code, text) == (1, ""), name
            assert answer(err)["error"]["code"], name
    code, text, err = load(out, "integration_status")
    assert code in (0, 1)
    if code == 1:
        assert answer(err)["error"]["code"]


def test_herdr_shim_run_reaches_the_fixtures_server(herdr_shim: HerdrShim) -> None:
    created = herdr_shim.run("workspace", "create", "--label", "via-run")
    assert created.returncode == 0, created.stderr
    listed = herdr_shim.run("workspace", "list")
    labels = [w["label"] for w in answer(listed.stdout)["result"]["workspaces"]]
    assert labels == ["via-run"]
    assert herdr_shim.handle.server.path == Path(herdr_shim.socket)
