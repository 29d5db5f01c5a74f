"""The wheel: one top-level package, py.typed, the mapped sub-packages, no tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from importlib.metadata import distribution
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
IGNORED = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis"
)


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    shutil.copytree(ROOT, source, symlinks=True, ignore=IGNORED)
    out = work / "dist"
    build = "import sys; from setuptools import build_meta as b; print(b.build_wheel(sys.argv[1]))"
    result = subprocess.run(
        [sys.executable, "-c", build, str(out)],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    wheel = out / result.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def test_only_shedproto_at_top_level(wheel_names: list[str]) -> None:
    top = {name.split("/")[0] for name in wheel_names if not name.endswith(".dist-info/")}
    dist_info = {t for t in top if t.endswith(".dist-info")}
    assert len(dist_info) == 1
    assert top - dist_info == {"shedproto"}


def test_py_typed_and_mapped_packages_are_shipped(wheel_names: list[str]) -> None:
    assert "shedproto/py.typed" in wheel_names
    assert "shedproto/servers/_unix.py" in wheel_names
    assert "shedproto/clients/_transport.py" in wheel_names
    assert "shedproto/clients/cli/__init__.py" in wheel_names
    assert "shedproto/testing/__init__.py" in wheel_names


def test_no_tests_or_benchmarks_in_the_wheel(wheel_names: list[str]) -> None:
    assert not [n for n in wheel_names if n.startswith(("tests/", "benchmarks/"))]
    assert not [n for n in wheel_names if "/tests/" in n or "/benchmarks/" in n]
    assert not [n for n in wheel_names if n.endswith((".pyc", "setup.py"))]


def test_entry_points_are_declared(wheel_names: list[str]) -> None:
    assert any(n.endswith("entry_points.txt") for n in wheel_names)
    eps = distribution("shedproto").entry_points
    assert {(e.group, e.name, e.value) for e in eps} >= {
        ("console_scripts", "shedproto", "shedproto.clients.cli:main"),
        ("pytest11", "shedproto", "shedproto.testing"),
    }
