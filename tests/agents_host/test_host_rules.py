"""The host's pure collection rules in the core: the inventory walk, git context, update times."""

from __future__ import annotations

import pytest

from shedproto.agents_host import (
    MAX_LISTED_SESSIONS,
    InventoryError,
    InventoryWalk,
    SessionPage,
    SessionSummary,
    row_for,
    updated_ms,
    with_checkout,
)
from shedproto.connector import Capabilities, Checkout, IndexEntry


def page(*ids: str, cursor: str | None = None) -> SessionPage:
    return SessionPage(
        sessions=tuple(SessionSummary(nativeSessionId=i) for i in ids), nextCursor=cursor
    )


def test_the_walk_follows_cursors_until_none() -> None:
    assert InventoryWalk().cursor is None
    walk = InventoryWalk()
    assert walk.add(page("a", "b", cursor="c1"))
    assert walk.cursor == "c1"
    assert walk.add(page(cursor="c2"))  # an empty page with a cursor goes on
    assert not walk.add(page("c"))
    assert [s.nativeSessionId for s in walk.sessions] == ["a", "b", "c"]
    assert MAX_LISTED_SESSIONS == 100_000


def test_a_session_listed_twice_is_refused() -> None:
    walk = InventoryWalk()
    walk.add(page("a", cursor="c1"))
    with pytest.raises(InventoryError, match="session listed twice: a"):
        walk.add(page("a"))


def test_a_repeated_cursor_is_refused_instead_of_looping() -> None:
    walk = InventoryWalk()
    walk.add(page("a", cursor="c1"))
    with pytest.raises(InventoryError, match="inventory repeated cursor: c1"):
        walk.add(page("b", cursor="c1"))


def test_an_inventory_over_the_limit_is_refused() -> None:
    walk = InventoryWalk(limit=2)
    assert not walk.add(page("a", "b"))
    with pytest.raises(InventoryError, match="inventory exceeds 2 sessions"):
        InventoryWalk(limit=2).add(page("a", "b", "c"))
    assert issubclass(InventoryError, ValueError)


def row(cwd: str | None) -> IndexEntry:
    return row_for(
        owner_did="did:key:o",
        source_id="s",
        driver="acp",
        summary=SessionSummary(nativeSessionId="n", cwd=cwd),
        capabilities=Capabilities(
            inventory=True,
            read=True,
            prompt=False,
            cancel=False,
            rename=False,
            setMode=False,
            setConfigOption=False,
        ),
        messages=(),
        manifest_hash=None,
        content_hash=None,
        sync_status="complete",
    )


CHECKOUTS = [
    Checkout(root="/w/", gitRepo="outer", gitBranch="main", observedAt="t0"),
    Checkout(root="/w/inner", gitRepo="inner", gitHeadSha="abc", observedAt="t1"),
]


@pytest.mark.parametrize(
    ("cwd", "repo"),
    [
        ("/w/inner/src", "inner"),  # the deepest checkout wins
        ("/w/inner", "inner"),
        ("/w/innerness", "outer"),  # a prefix of the name is not a parent
        ("/w", "outer"),
        ("/elsewhere", None),
        (None, None),
    ],
)
def test_with_checkout_takes_the_deepest_checkout_holding_cwd(
    cwd: str | None, repo: str | None
) -> None:
    original = row(cwd)
    enriched = with_checkout(original, CHECKOUTS)
    assert enriched.gitRepo == repo
    if repo is None:
        assert enriched is original
    if repo == "inner":
        assert (enriched.gitWorktreeRoot, enriched.gitHeadSha) == ("/w/inner", "abc")
        assert (enriched.gitBranch, enriched.gitRemotes, enriched.gitObservedAt) == (
            None,
            None,
            "t1",
        )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1970-01-01T00:00:01Z", 1000),
        ("1970-01-01T01:00:01+01:00", 1000),
        ("1970-01-01T00:00:01.5", 1500),  # no offset: UTC, never the machine's zone
        ("1970-01-01T01:00:01.25+01:00", 1250),  # any number of digits, on every Python
        ("1970-01-01T00:00:01.123456789Z", 1123),
        ("yesterday", None),
        (None, None),
    ],
)
def test_updated_ms_reads_iso_times(value: str | None, expected: int | None) -> None:
    assert updated_ms(value) == expected
