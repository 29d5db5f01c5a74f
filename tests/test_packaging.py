"""Packaging: the wheel's contents, and a user's mypy sees the package (editable and wheel).

The mypy tests type-check a tiny user project with ``mypy --strict`` run from
a temporary directory (so the source tree is not on the path): once against
this test environment's install (``pip install -e '.[test]'`` in CI: the
static ``.pth`` of the src layout) and once against the wheel, built offline
and installed with ``--no-deps`` into a fresh venv whose dependencies come from
this environment through a ``.pth`` line.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import zipfile
from importlib.metadata import distribution
from pathlib import Path

import pytest

from tests._bare_venv import build, build_wheel, copy_checkout

USER_MODULE = """\
from pathlib import Path

from shedproto.clients.herdr import BlockingHerdrClient
from shedproto.clients.host_agent import read_status
from shedproto.host_agent import LiveStatus
from shedproto.servers.host_agent import HostAgentServer


def gates(directory: Path) -> tuple[str, ...]:
    status: LiveStatus = read_status(directory)
    return status.gate_namespaces


def server(directory: Path) -> HostAgentServer:
    return HostAgentServer(directory)


def herdr_version(socket: str) -> str:
    return BlockingHerdrClient.for_socket(socket).runtime_status().version
"""

WRONG_MODULE = """\
from shedproto.clients.host_agent import read_status

count: int = read_status().gate_namespaces
"""
"""A typing error mypy can only report if it sees shedproto's real annotations."""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def wheel_names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def _user_project(directory: Path) -> Path:
    directory.mkdir()
    (directory / "user_tool.py").write_text(USER_MODULE, encoding="utf-8")
    (directory / "wrong_tool.py").write_text(WRONG_MODULE, encoding="utf-8")
    return directory


def _mypy(project: Path, python: str) -> tuple[list[str], str]:
    """Run ``mypy --strict -v`` on the user project for ``python``'s environment.

    Returns its error lines and its log (which names every file it parsed).
    """
    result = subprocess.run(
        [
            sys.executable, "-m", "mypy", "--strict", "--no-incremental", "-v",
            "--python-executable", python, "--cache-dir", str(project / ".mypy_cache"),
            "user_tool.py", "wrong_tool.py",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )  # fmt: skip
    return [line for line in result.stdout.splitlines() if ": error:" in line], result.stderr


def _assert_only_the_planted_error(errors: list[str]) -> None:
    assert len(errors) == 1, errors
    assert errors[0].startswith("wrong_tool.py:3:"), errors
    assert 'expression has type "tuple[str, ...]"' in errors[0], errors


def test_user_mypy_sees_the_installed_package(tmp_path: Path) -> None:
    errors, _ = _mypy(_user_project(tmp_path / "user"), sys.executable)
    _assert_only_the_planted_error(errors)


def test_user_mypy_sees_the_wheel(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    python = str(venv / "bin" / "python")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps",
         "--no-index", str(wheel)],
        check=True,
        timeout=300,
    )  # fmt: skip
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    # The wheel's dependencies: this environment's site-packages, after the venv's own.
    (Path(site) / "_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    where = subprocess.run(
        [python, "-c", "import shedproto; print(shedproto.__file__)"],
        cwd=tmp_path, capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    assert Path(where).is_relative_to(venv)
    errors, log = _mypy(_user_project(tmp_path / "user"), python)
    _assert_only_the_planted_error(errors)
    assert f"{Path(where).parent}/servers/host_agent/__init__.py" in log  # the wheel's copy


def test_the_install_adds_no_top_level_project_folders(tmp_path: Path) -> None:
    names = ["tests", "benchmarks", "servers", "clients", "src"]
    probe = "import sys, importlib.util as u; print([n for n in sys.argv[1:] if u.find_spec(n)])"
    result = subprocess.run(
        [sys.executable, "-c", probe, *names],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert result.stdout.strip() == "[]"


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
        ("pytest11", "shedproto", "shedproto.testing.plugin"),
    }


def test_the_sdist_is_test_free_licensed_and_builds_the_wheel(tmp_path: Path) -> None:
    # Regression (issue 29 item 5): the sdist shipped test files without their conftest
    # or subfolders (unrunnable) and no LICENSE. It is test-free now, and complete.
    import tarfile

    sdist = build("sdist", copy_checkout(tmp_path), tmp_path / "dist")
    with tarfile.open(sdist) as archive:
        names = [name.partition("/")[2] for name in archive.getnames()]
        archive.extractall(tmp_path / "unpacked", filter="data")
    assert {"LICENSE", "README.md", "CHANGELOG.md", "pyproject.toml"} <= set(names)
    assert not [n for n in names if n.startswith(("tests/", "benchmarks/", "tools/", "docs/"))]
    assert "src/shedproto/testing/plugin.py" in names
    (unpacked,) = (tmp_path / "unpacked").iterdir()
    with zipfile.ZipFile(build("wheel", unpacked, tmp_path / "wheel")) as archive:
        wheel_names = archive.namelist()
    assert "shedproto/servers/_unix.py" in wheel_names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in wheel_names), wheel_names


def test_the_metadata_names_the_license_and_urls() -> None:
    meta = distribution("shedproto").metadata
    assert meta["License-Expression"] == "MIT"
    assert meta.get_all("Project-URL")
