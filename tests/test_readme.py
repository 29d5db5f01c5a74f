"""Every fenced ``python`` block in README.md runs as written.

A block that defines ``test_`` functions runs under pytest in a fresh
directory and must pass (a skip fails); any other block runs as a program
(``python block.py``) in a venv holding only the wheel and its runtime
dependencies (no pytest: a user's plain install) and must exit 0. A block preceded on the line right
before it by ``<!-- not run: <reason> -->`` is only compiled, and counted.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)
NOT_RUN = re.compile(r"<!-- not run: (?P<reason>.*\S.*?) -->")
TIMEOUT = 120
ISOLATED_ENV = ("SHED_DESKTOP_SOCKET", "SHED_HOST_AGENT_SOCKET_DIR", "HERDR_SOCKET_PATH")
"""Variables that would point an example at a real program instead of its own server."""


@dataclass(frozen=True)
class Block:
    """One fenced python block: where it starts, its code, and its not-run reason if marked."""

    line: int
    code: str
    not_run: str | None

    @property
    def is_test_module(self) -> bool:
        return re.search(r"^def test_", self.code, re.M) is not None


def readme_blocks(text: str) -> list[Block]:
    """Return every fenced python block of ``text`` in order."""
    blocks = []
    for match in FENCE.finditer(text):
        before = text[: match.start()]
        previous = before.rstrip("\n").rsplit("\n", 1)[-1] if before.endswith("\n") else ""
        marker = NOT_RUN.fullmatch(previous.strip())
        blocks.append(
            Block(
                line=before.count("\n") + 1,
                code=match.group(1),
                not_run=marker.group("reason") if marker else None,
            )
        )
    return blocks


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))
RUNNABLE = [b for b in BLOCKS if b.not_run is None]
NOT_RUN_BLOCKS = [b for b in BLOCKS if b.not_run is not None]


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ISOLATED_ENV}
    # The `shedproto` command beside this interpreter, even when its venv is not activated.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )


def test_every_python_fence_is_found_and_most_run() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(BLOCKS) == text.count("```python\n") >= 4
    assert len(RUNNABLE) >= len(BLOCKS) - 1, [b.line for b in NOT_RUN_BLOCKS]


def test_every_not_run_marker_sits_right_before_a_block() -> None:
    text = README.read_text(encoding="utf-8")
    markers = [line for line in text.splitlines() if NOT_RUN.fullmatch(line.strip())]
    assert len(markers) == len(NOT_RUN_BLOCKS)


def test_blocks_not_run_have_a_reason_and_compile() -> None:
    for block in NOT_RUN_BLOCKS:
        assert block.not_run
        compile(block.code, f"README.md:{block.line}", "exec")


def test_the_readme_is_an_on_ramp() -> None:
    # Issue 29 item 4: the two set-up commands first, then a short README (at most
    # about 300 lines) whose reference material lives in docs/.
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    first_block = text.split("```")[1]
    assert first_block.startswith("sh\n")
    assert re.findall(r"^pip install -e '\.\[test\]' && (\S+)", first_block, re.M) == [
        "shedproto",
        "pytest",
    ]
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert headings[:3] == ["Install", "Quick start", "Testing your tool"]
    assert "Contents" in headings


@pytest.mark.parametrize("block", RUNNABLE, ids=lambda b: f"README.md:{b.line}")
def test_readme_block_runs(block: Block, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if block.is_test_module:
        (tmp_path / "test_readme_block.py").write_text(block.code, encoding="utf-8")
        args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "-q"]
        result = _run([*args, "test_readme_block.py"], tmp_path)
        report = result.stdout + result.stderr
        assert result.returncode == 0, report[-4000:]
        assert re.search(r"\b\d+ passed\b", result.stdout), report[-4000:]
        assert not re.search(r"\b(skipped|xfailed|deselected)\b", result.stdout), report[-4000:]
    else:
        (tmp_path / "readme_block.py").write_text(block.code, encoding="utf-8")
        python = request.getfixturevalue("bare_python")  # a plain install: no pytest
        result = _run([str(python), "readme_block.py"], tmp_path)
        assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]


def test_the_block_parser_sees_markers_and_tests() -> None:
    sample = (
        "text\n<!-- not run: needs a GPU -->\n```python\nimport gpu\n```\n\n"
        "```python\ndef test_x():\n    assert True\n```\n"
    )
    first, second = readme_blocks(sample)
    assert (first.not_run, first.is_test_module) == ("needs a GPU", False)
    assert (second.not_run, second.is_test_module) == (None, True)
    assert second.line == 7
