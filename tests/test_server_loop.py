"""The one event-loop runner of the CLI servers and fixtures (issue 16: uvloop when installed)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shedproto.servers import _loop
from shedproto.servers._loop import LOOP_ENV, LoopChoiceError, loop_options


@pytest.fixture
def uvloop_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: object() if name == "uvloop" else real(name, *a),
    )


@pytest.fixture
def uvloop_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "uvloop" else real(name, *a),
    )


@pytest.mark.usefixtures("uvloop_installed")
@pytest.mark.parametrize(
    ("value", "expected"), [("", True), ("auto", True), ("uvloop", True), ("asyncio", False)]
)
def test_uvloop_is_used_when_installed_unless_asyncio_is_asked(value: str, expected: bool) -> None:
    options = loop_options({LOOP_ENV: value} if value else {})
    assert options == ({"use_uvloop": True} if expected else {})


@pytest.mark.usefixtures("uvloop_absent")
def test_without_uvloop_auto_falls_back_and_uvloop_is_an_error() -> None:
    assert loop_options({}) == {}
    assert loop_options({LOOP_ENV: "asyncio"}) == {}
    with pytest.raises(LoopChoiceError, match="uvloop is not installed"):
        loop_options({LOOP_ENV: "uvloop"})


def test_an_unknown_loop_is_an_error() -> None:
    with pytest.raises(LoopChoiceError, match="SHEDPROTO_LOOP=trio is not one of"):
        loop_options({LOOP_ENV: "trio"})


def test_run_returns_what_the_loop_returned() -> None:
    async def answer(value: int) -> int:
        return value + 1

    assert _loop.run(answer, 41) == 42


def test_a_bad_loop_choice_is_one_line_from_a_cli_server(tmp_path: Path) -> None:
    env = {**os.environ, LOOP_ENV: "trio"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "shedproto.clients.cli",
            "desktop",
            "serve",
            "--dialect",
            "tauri",
            "--socket",
            str(tmp_path / "d.sock"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert "Traceback" not in done.stderr
    assert lines[-1].endswith("SHEDPROTO_LOOP=trio is not one of auto, asyncio, uvloop"), lines
    assert not (tmp_path / "d.sock").exists()
