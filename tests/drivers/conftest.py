"""Drivers test configuration: the opt-in ``real_binaries`` marker.

Tests marked ``real_binaries`` run the real ``codex`` and ``claude`` programs
from an npm prefix named by ``SHEDPROTO_REAL_BINARIES`` (see the README's
drivers section for the exact install command) and are skipped when it is
unset. They need no network: every model endpoint points at a closed port.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REAL_BINARIES_ENV = "SHEDPROTO_REAL_BINARIES"


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker so ``--strict-markers`` accepts it."""
    config.addinivalue_line(
        "markers",
        f"real_binaries: runs the real codex and claude binaries from ${REAL_BINARIES_ENV} "
        "(skipped unless it is set)",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Skip ``real_binaries`` tests unless the npm prefix is given."""
    prefix = os.environ.get(REAL_BINARIES_ENV)
    reason = f"set {REAL_BINARIES_ENV} to an npm prefix holding the pinned binaries"
    for item in items:
        if item.get_closest_marker("real_binaries") is not None and not prefix:
            item.add_marker(pytest.mark.skip(reason=reason))


def real_prefix() -> Path:
    """The npm prefix with ``@openai/codex`` and ``@anthropic-ai/claude-agent-sdk``."""
    return Path(os.environ[REAL_BINARIES_ENV])
