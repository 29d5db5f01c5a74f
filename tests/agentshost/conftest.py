"""Shared pieces of the agents-host tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

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


def open_target(path: Path) -> FlakyTarget:
    """Open a flaky (by default healthy) target file at ``path``."""
    return FlakyTarget.open_path(str(path), owner_did=OWNER, space="did:key:space")
