"""The drivers' demo step lists and reads its fixture transcripts."""

from __future__ import annotations

from pathlib import Path

from shedproto.clients.cli._drivers_demo import demo_step


async def test_demo_step_lists_and_reads(tmp_path: Path) -> None:
    step = await demo_step(tmp_path)
    assert step.ok
    assert step.name == "drivers"
    assert any("Fix the parser" in line for line in step.lines)
    assert not any("(abandoned branch)" in line for line in step.lines)
