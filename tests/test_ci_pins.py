"""``.ci/run`` installs exactly the real programs the opt-in tests pin.

A pin bumped in a test but not in CI (or the reverse) would make CI test one
version while the test claims another; the pins live in ``tests/_pins.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._pins import ACP_AGENT_PACKAGES, CLAUDE_SDK_VERSION, CODEX_VERSION

CI_RUN = Path(__file__).resolve().parents[1] / ".ci" / "run"


@pytest.mark.parametrize(
    "package",
    [
        *ACP_AGENT_PACKAGES,
        f"@openai/codex@{CODEX_VERSION}",
        f"@anthropic-ai/claude-agent-sdk@{CLAUDE_SDK_VERSION}",
    ],
)
def test_ci_installs_the_pinned_version(package: str) -> None:
    assert f'"{package}"' in CI_RUN.read_text()
