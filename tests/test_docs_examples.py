"""Every program in docs/examples runs, and every one of them is shown in the docs.

The documentation includes these files (``literalinclude``) instead of copying code, so a
page can only show code that this test ran. Programs run as scripts; ``test_*.py`` files
run under pytest in a subprocess, as a user's test suite would run them.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
EXAMPLES = sorted((DOCS / "examples").glob("*.py"))
INCLUDE = re.compile(r"^```\{literalinclude\}\s+(\S+)", re.MULTILINE)


def _included() -> set[Path]:
    """Resolve every ``literalinclude`` target of every Markdown page."""
    found: set[Path] = set()
    for page in DOCS.rglob("*.md"):
        for target in INCLUDE.findall(page.read_text(encoding="utf-8")):
            found.add((page.parent / target).resolve())
    return found


def test_the_examples_folder_has_programs() -> None:
    assert len(EXAMPLES) >= 5, f"docs/examples holds only {[p.name for p in EXAMPLES]}"


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(example: Path) -> None:
    if example.name.startswith("test_"):
        pytest = [sys.executable, "-m", "pytest", "-q", "-n0", "-p", "no:cacheprovider"]
        command = [*pytest, str(example)]
    else:
        command = [sys.executable, str(example)]
    result = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, f"{example.name} failed:\n{result.stdout}\n{result.stderr}"
    if example.name.startswith("test_"):
        assert re.search(r"\d+ passed", result.stdout), result.stdout
        assert not re.search(r"(skipped|failed|error)", result.stdout.splitlines()[-1])


def test_every_example_is_shown_in_a_page() -> None:
    shown = _included()
    missing = [p.name for p in EXAMPLES if p.resolve() not in shown]
    assert not missing, f"examples no page includes: {missing}"


def test_every_included_file_exists() -> None:
    absent = sorted(str(p.relative_to(ROOT)) for p in _included() if not p.is_file())
    assert not absent, f"pages include files that do not exist: {absent}"


def test_pages_show_python_only_from_examples() -> None:
    """A Python block written into a page is code no test runs: include an example instead."""
    inline = [
        f"{page.relative_to(DOCS)}:{number}"
        for page in DOCS.rglob("*.md")
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if re.match(r"^\s*```+\s*(python|py|pycon)\b", line)
    ]
    assert not inline, f"Python blocks in pages (use literalinclude): {inline}"
