"""The layer contracts of pyproject's [tool.importlinter] hold, over every file exactly once.

Both checks run in a subprocess whose working directory is this checkout, so they analyse
the files beside this test (import-linter puts the working directory first on sys.path),
not whatever copy of shedproto happens to be installed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip(
    "importlinter", reason="import-linter 2.17 needs Python 3.11 (pyproject's test extra)"
)

ROOT = Path(__file__).resolve().parents[1]

LINT = (
    "import sys\n"
    "from importlinter.cli import lint_imports\n"
    "sys.exit(lint_imports(no_cache=True, no_logo=True))\n"
)

# The graph import-linter builds (grimp is its graph library): every module it analyses.
GRAPH = (
    "import json, grimp\n"
    "graph = grimp.build_graph('shedproto', cache_dir=None)\n"
    "print(json.dumps(sorted(graph.modules)))\n"
)


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_layer_contracts_are_kept() -> None:
    declared = (ROOT / "pyproject.toml").read_text().count("[[tool.importlinter.contracts]]")
    assert declared >= 4
    result = _run(LINT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Contracts: {declared} kept, 0 broken." in result.stdout, result.stdout


def _real_python_files(package: Path) -> set[str]:
    """Every .py file under package, symlinked folders followed, by its resolved path."""
    found: set[str] = set()
    for folder, _dirs, files in os.walk(package, followlinks=True):
        found.update(os.path.realpath(Path(folder, name)) for name in files if name.endswith(".py"))
    return found


def test_contracts_see_servers_and_clients_through_the_symlinks_once() -> None:
    # shedproto/servers and shedproto/clients are symlinks: a walk that skipped them would
    # leave the shells out and the contracts would pass vacuously; one that also reached
    # them another way would count files twice.
    result = _run(GRAPH)
    assert result.returncode == 0, result.stderr
    modules: list[str] = json.loads(result.stdout)
    assert len(modules) == len(set(modules))
    assert len(modules) == len(_real_python_files(ROOT / "shedproto"))
    for shell in ("shedproto.servers", "shedproto.clients", "shedproto.testing"):
        assert any(re.fullmatch(re.escape(shell) + r"\.\w+", m) for m in modules), shell
