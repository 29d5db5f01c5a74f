"""``shedproto agents-host ...`` commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shedproto.clients.cli import main
from shedproto.connector import in_flight_receipt
from shedproto.servers.connector import CommandLedger

from ._helpers import OWNER, config, source

JSONC = """{
  // the owner's sessions
  "schema": "commonfabric.agents-host.config",
  "ownerDid": "OWNER",
  /* two sources, */
  "sources": [
    { "id": "codex", "driver": "codex-app-server", "enabled": true,
      "env": { "URL": "http://x//y" } },
    { "id": "gemini", "driver": "acp", "enabled": true,
      "command": ["gemini", "--experimental-acp"] },
  ],
}
""".replace("OWNER", OWNER)


def test_check_config_valid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "agents.jsonc"
    path.write_text(JSONC)
    assert main(["agents-host", "check-config", str(path)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    printed = json.loads(out)
    assert printed["collectionIntervalMs"] == 900000
    assert printed["sources"][0]["env"] == {"URL": "http://x//y"}
    assert printed["sources"][1]["command"] == ["gemini", "--experimental-acp"]
    assert out.startswith('{\n  "schema": "commonfabric.agents-host.config",\n')


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            json.dumps(config(sources=[source(id="Codex")])),
            'sources[0].id must already be normalized as "codex"',
        ),
        (json.dumps(config(extra=1)), "configuration has an unknown field: extra"),
        (
            "{ invalid",
            "configuration file is not valid JSONC: {path}\n"
            "line 1, column 3: Expecting property name enclosed in double quotes",
        ),
    ],
)
def test_check_config_invalid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], document: str, message: str
) -> None:
    path = tmp_path / "agents.jsonc"
    path.write_text(document)
    assert main(["agents-host", "check-config", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"shedproto: error: {message.format(path=path)}\n"
    assert main(["agents-host", "check-config", "--json", str(path)]) == 1
    _, err = capsys.readouterr()
    assert json.loads(err)["error"]["message"] == message.format(path=path)


def test_check_config_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.jsonc"
    assert main(["agents-host", "check-config", str(missing)]) == 1
    assert (
        capsys.readouterr().err
        == f"shedproto: error: configuration file does not exist: {missing}\n"
    )


def test_check_options(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CF_API_URL", "https://fabric.test")
    monkeypatch.setenv("CF_IDENTITY", "/k")
    monkeypatch.setenv("CF_SPACE", "s")
    assert (
        main(["agents-host", "check-options", "--json", "--", "--config", "/a.jsonc", "--once"])
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    assert printed == {
        "config_path": "/a.jsonc",
        "api_url": "https://fabric.test",
        "identity_path": "/k",
        "space": "s",
        "once": True,
        "debug_view": True,
        "target": None,
    }
    # no "--" needed; the real host's message; exit 1 as run would
    assert main(["agents-host", "check-options", "--config", "/a.jsonc", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["config_path"] == "/a.jsonc"
    assert main(["agents-host", "check-options", "--bogus"]) == 1
    assert capsys.readouterr().err == "shedproto: error: unknown option: --bogus\n"
    assert main(["agents-host", "check-options", "--config", "/a.jsonc", "extra"]) == 1
    assert capsys.readouterr().err == ("shedproto: error: unexpected positional argument: extra\n")


def test_target_and_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("CF_AGENTS_HOST_LOCK_DIR", str(tmp_path / "locks"))
    assert (
        main(
            [
                "agents-host",
                "target",
                "--json",
                "--api-url",
                "https://u:p@F.test:443/x",
                "--space",
                "did:key:s",
                "--owner",
                OWNER,
            ]
        )
        == 0
    )
    target = json.loads(capsys.readouterr().out)
    assert target["origin"] == "https://f.test/"
    assert target["ledger"] == str(
        tmp_path
        / "state"
        / "commonfabric"
        / "agents-host"
        / f"target-{target['key']}.command-ledger.json"
    )
    assert target["targetLock"] == str(tmp_path / "locks" / f"target-{target['key']}.lock")
    ledger = CommandLedger.open(target["ledger"])
    ledger.put(
        in_flight_receipt(
            owner_did=OWNER,
            command_id="c1",
            source_id="codex",
            native_session_id="s",
            claimed_at="2026-07-20T00:00:00.000Z",
        )
    )
    assert main(["agents-host", "ledger", "--json", target["ledger"]]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["generation"] == 1
    assert summary["statuses"] == {"in-flight": 1}
    assert summary["pending"] == ["c1"]
    Path(target["ledger"]).chmod(0o644)
    assert main(["agents-host", "ledger", target["ledger"]]) == 1
    assert "command ledger file permits access by other users" in capsys.readouterr().err
