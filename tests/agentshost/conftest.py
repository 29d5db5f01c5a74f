"""Shared pieces of the agents-host tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from shedproto.connector import Receipt, iso_from_epoch_ms
from shedproto.servers.agents_host import SqliteTarget

OWNER = "did:key:z6MkOwnerOwnerOwnerOwnerOwnerOwnerOwnerOwner"
CLOCK_START = 1_700_000_000_000


class Clock:
    """A deterministic ISO clock: every call is one millisecond later."""

    def __init__(self) -> None:
        self.ms = CLOCK_START

    def __call__(self) -> str:
        self.ms += 1
        return iso_from_epoch_ms(self.ms)


class FlakyTarget(SqliteTarget):
    """A SQLite target whose receipt publication fails while ``fail_when(receipt)`` is true."""

    fail_when: Callable[[Receipt], bool] = staticmethod(lambda receipt: False)

    def publish_receipt(self, receipt: Receipt, *, now: str) -> None:
        if self.fail_when(receipt):
            raise OSError(f"injected publication failure for {receipt.commandId}")
        super().publish_receipt(receipt, now=now)


_OPENED: list[SqliteTarget] = []
"""Targets opened by the current test; closed at its teardown."""


def open_target(path: Path) -> FlakyTarget:
    """Open a flaky (by default healthy) target file at ``path``; closed after the test."""
    target = FlakyTarget.open_path(str(path), owner_did=OWNER, space="did:key:space")
    _OPENED.append(target)
    return target


@pytest.fixture(autouse=True)
def _close_opened_targets() -> Iterator[None]:
    """Close every target a test opened (Python 3.13 warns about unclosed SQLite handles)."""
    yield
    while _OPENED:
        _OPENED.pop().close()


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``real_agents`` marker (the real ACP agents from npm)."""
    config.addinivalue_line(
        "markers",
        "real_agents: runs the real codex-acp and claude-agent-acp from npm "
        "($SHEDPROTO_ACP_AGENTS, else installed into the user cache; skipped without npm)",
    )
