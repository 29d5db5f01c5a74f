"""Shared pieces of the agents-host tests."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Protocol

import pytest

from shedproto.connector import Receipt, iso_from_epoch_ms
from shedproto.servers.agents_host import AgentsHostTarget, SqliteTarget
from shedproto.testing._connector import AgentsHostDirs

OWNER = "did:key:z6MkOwnerOwnerOwnerOwnerOwnerOwnerOwnerOwner"
CLOCK_START = 1_700_000_000_000


class Clock:
    """A deterministic ISO clock: every call is one millisecond later."""

    def __init__(self) -> None:
        self.ms = CLOCK_START

    def __call__(self) -> str:
        self.ms += 1
        return iso_from_epoch_ms(self.ms)


def _injected_failure(fail_when: Callable[[Receipt], bool], receipts: Sequence[Receipt]) -> None:
    """Raise the injected failure when any receipt of a batch meets ``fail_when``."""
    for receipt in receipts:
        if fail_when(receipt):
            raise OSError(f"injected publication failure for {receipt.commandId}")


class FlakyTarget(SqliteTarget):
    """A SQLite target whose receipt publication fails while ``fail_when(receipt)`` is true.

    A batch fails whole when one of its receipts meets ``fail_when`` (as one
    transaction would); ``publish_receipt`` is a batch of one.
    """

    fail_when: Callable[[Receipt], bool] = staticmethod(lambda receipt: False)

    def publish_receipts(self, receipts: Sequence[Receipt], *, now: str) -> None:
        _injected_failure(self.fail_when, receipts)
        super().publish_receipts(receipts, now=now)


class Flaky(AgentsHostTarget, Protocol):
    """A target of either kind whose receipt publication fails while ``fail_when(receipt)``."""

    fail_when: Callable[[Receipt], bool]


_OPENED: list[AgentsHostTarget] = []
"""Targets opened by the current test; closed at its teardown."""

_POSTGRES_URL: list[str] = []
"""The database ``open_any_target`` uses while ``both_targets`` runs the PostgreSQL case."""


def open_target(path: Path) -> FlakyTarget:
    """Open a flaky (by default healthy) target file at ``path``; closed after the test."""
    target = FlakyTarget.open_path(str(path), owner_did=OWNER, space="did:key:space")
    _OPENED.append(target)
    return target


@pytest.fixture(params=["sqlite", "postgres"])
def both_targets(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run a test once per target kind; :func:`open_any_target` follows it.

    Use with ``pytestmark = pytest.mark.usefixtures("both_targets")``. The
    PostgreSQL case takes a fresh database and skips where none can exist.
    """
    if request.param == "postgres":
        _POSTGRES_URL.append(str(request.getfixturevalue("postgres_url")))
    try:
        yield str(request.param)
    finally:
        _POSTGRES_URL.clear()


def open_any_target(path: Path) -> Flaky:
    """Open a flaky target of the kind ``both_targets`` selects (SQLite at ``path`` by default).

    The PostgreSQL target's key is derived from ``path``, so one path is one host key.
    """
    if not _POSTGRES_URL:
        return open_target(path)
    from shedproto.servers.agents_host.target_postgres import PostgresTarget

    class FlakyPostgresTarget(PostgresTarget):
        fail_when: Callable[[Receipt], bool] = staticmethod(lambda receipt: False)

        def publish_receipts(self, receipts: Sequence[Receipt], *, now: str) -> None:
            _injected_failure(self.fail_when, receipts)
            super().publish_receipts(receipts, now=now)

    key = hashlib.sha256(str(path).encode()).hexdigest()
    target = FlakyPostgresTarget.open(_POSTGRES_URL[0], key, owner_did=OWNER, space="did:key:space")
    _OPENED.append(target)
    return target


@pytest.fixture(params=["sqlite", "postgres"])
def agents_host_dirs(
    request: pytest.FixtureRequest, agents_host_dirs: AgentsHostDirs
) -> AgentsHostDirs:
    """The plugin's directories, once per target: SQLite, and a fresh PostgreSQL database.

    The PostgreSQL case sets ``target`` and ``SHEDPROTO_AGENTS_HOST_TARGET`` (which
    ``agents-host run`` reads); it skips where no PostgreSQL binaries exist.
    """
    if request.param == "sqlite":
        return agents_host_dirs
    url = str(request.getfixturevalue("postgres_url"))
    env = {**agents_host_dirs.env, "SHEDPROTO_AGENTS_HOST_TARGET": url}
    return dataclasses.replace(agents_host_dirs, env=env, target=url)


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
        "(opt-in: $SHEDPROTO_ACP_AGENTS names the npm prefix; skipped without it)",
    )
