"""``shedproto schemas export``: writes and removes only the files it owns (issue 11, item 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shedproto import json_schemas
from shedproto._schema_registry import MANIFEST_NAME, manifest_names, render_manifest
from shedproto.clients.cli import main


def export(target: Path, *extra: str) -> int:
    return main(["schemas", "export", *extra, "--dir", str(target)])


def test_schemas_export_then_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "schemas"
    assert export(target) == 0
    assert sorted(p.name for p in target.iterdir()) == sorted([*json_schemas(), MANIFEST_NAME])
    assert export(target, "--check") == 0
    capsys.readouterr()

    (target / "shedproto-error.json").write_text("{}\n")
    (target / "connector-config.json").unlink()
    (target / "old.json").write_text("{}\n")  # not ours: never reported, never removed
    assert export(target, "--check", "--json") == 1
    report = json.loads(capsys.readouterr().out)
    assert report == {
        "ok": False,
        "missing": ["connector-config.json"],
        "changed": ["shedproto-error.json"],
        "stale": [],
    }

    assert export(target) == 0
    assert export(target, "--check") == 0
    assert (target / "old.json").read_text() == "{}\n"


def test_export_keeps_a_users_own_json(tmp_path: Path) -> None:
    mine = tmp_path / "my-own.json"
    mine.write_text('{"mine": true}\n')
    assert export(tmp_path) == 0  # deleted my-own.json before
    assert export(tmp_path) == 0
    assert mine.read_text() == '{"mine": true}\n'
    assert export(tmp_path, "--check") == 0


def test_export_removes_only_what_its_manifest_lists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert export(tmp_path) == 0
    names = manifest_names((tmp_path / MANIFEST_NAME).read_bytes())
    assert names == set(json_schemas())
    # A schema an older release wrote and this one no longer publishes:
    (tmp_path / MANIFEST_NAME).write_bytes(render_manifest([*names, "retired.json"]))
    (tmp_path / "retired.json").write_text("{}\n")
    (tmp_path / "my-own.json").write_text("{}\n")
    capsys.readouterr()
    assert export(tmp_path, "--check", "--json") == 1
    assert json.loads(capsys.readouterr().out)["stale"] == ["retired.json"]
    assert export(tmp_path, "--json") == 0
    assert json.loads(capsys.readouterr().out)["removed"] == ["retired.json"]
    assert not (tmp_path / "retired.json").exists()
    assert (tmp_path / "my-own.json").exists()
    assert MANIFEST_NAME not in json.dumps(json_schemas())


def test_a_hostile_manifest_names_nothing_outside_the_directory(tmp_path: Path) -> None:
    target = tmp_path / "schemas"
    assert export(target) == 0
    outside = tmp_path / "outside.json"
    outside.write_text("{}\n")
    (target / ".hidden.json").write_text("{}\n")
    listed = ["../outside.json", str(outside), ".hidden.json", "sub/x.json", "not-json.txt"]
    (target / MANIFEST_NAME).write_bytes(render_manifest(listed) + b"\xff\xfe garbage\n")
    assert manifest_names((target / MANIFEST_NAME).read_bytes()) == set()
    assert export(target) == 0
    assert outside.exists()
    assert (target / ".hidden.json").exists()


@pytest.mark.parametrize("kind", ["empty", "missing", "others only", "manifest only"])
def test_check_without_the_files_is_one_line_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    target = tmp_path / "schemas"
    if kind != "missing":
        target.mkdir()
    if kind == "others only":
        (target / "my-own.json").write_text("{}\n")
    if kind == "manifest only":
        (target / MANIFEST_NAME).write_bytes(render_manifest(json_schemas()))
    assert export(target, "--check") == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"shedproto: error: no schemas in {target}: run shedproto schemas export --dir {target}\n"
    )
    if kind == "missing":
        assert not target.exists()
    else:
        expected = {"empty": [], "others only": ["my-own.json"], "manifest only": [MANIFEST_NAME]}
        assert sorted(p.name for p in target.iterdir()) == expected[kind]
