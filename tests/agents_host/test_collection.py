"""Collection decisions: retain predicate, syncStatus transitions, observations, indexes."""

from __future__ import annotations

import msgspec

from shedproto.agents_host import (
    SessionSummary,
    SourceCollection,
    build_indexes,
    merge_full_collection,
    merge_refresh,
    row_for,
    should_retain,
)
from shedproto.connector import NO_CAPABILITIES, IndexEntry, SourceError

from .conftest import OWNER


def row(
    session: str,
    *,
    status: str = "complete",
    updated: str | None = "2026-01-01T00:00:00.000Z",
    source: str = "echo",
) -> IndexEntry:
    return row_for(
        owner_did=OWNER,
        source_id=source,
        driver="acp",
        summary=SessionSummary(nativeSessionId=session, updatedAt=updated),
        capabilities=NO_CAPABILITIES,
        messages=(),
        manifest_hash="sha256:x",
        content_hash="sha256:y",
        sync_status=status,
    )


def test_retain_predicate() -> None:
    prior = row("s1")
    summary = SessionSummary(nativeSessionId="s1", updatedAt="2026-01-01T00:00:00.000Z")
    assert should_retain(prior, summary, driver="acp", read_since_start=True)
    assert not should_retain(prior, summary, driver="acp", read_since_start=False)
    assert not should_retain(prior, summary, driver="codex-app-server", read_since_start=True)
    assert not should_retain(None, summary, driver="acp", read_since_start=True)
    partial = msgspec.structs.replace(prior, syncStatus="partial")
    assert not should_retain(partial, summary, driver="acp", read_since_start=True)
    newer = msgspec.structs.replace(summary, updatedAt="2026-01-02T00:00:00.000Z")
    assert not should_retain(prior, newer, driver="acp", read_since_start=True)
    no_time = msgspec.structs.replace(summary, updatedAt=None)
    assert not should_retain(
        msgspec.structs.replace(prior, updatedAt=None), no_time, driver="acp", read_since_start=True
    )
    active = msgspec.structs.replace(summary, active=True)
    assert not should_retain(prior, active, driver="acp", read_since_start=True)
    paired = msgspec.structs.replace(summary, startedAs="x")
    assert not should_retain(prior, paired, driver="acp", read_since_start=True)


def test_full_collection_transitions() -> None:
    prior = {
        "echo/kept": row("kept"),
        "echo/gone": row("gone"),
        "other/o1": row("o1", source="other"),
        "flaky/f1": row("f1", source="flaky"),
    }
    complete = SourceCollection(source_id="echo", driver="acp", capabilities=NO_CAPABILITIES)
    complete.rows["echo/kept"] = row("kept")
    complete.rows["echo/new"] = row("new")
    incomplete = SourceCollection(
        source_id="flaky",
        driver="acp",
        capabilities=NO_CAPABILITIES,
        complete=False,
        errors=[SourceError(nativeSessionId="f1", message="read failed")],
    )
    rows, observations = merge_full_collection(
        prior, {}, [complete, incomplete], observation=5, now="2026-01-03T00:00:00.000Z"
    )
    assert {k: (v.syncStatus, v.deletedAt) for k, v in rows.items()} == {
        "echo/kept": ("complete", None),
        "echo/new": ("complete", None),
        "echo/gone": ("deleted", "2026-01-03T00:00:00.000Z"),
        "other/o1": ("stale", None),  # its source was not collected
        "flaky/f1": ("partial", None),  # named in an incomplete source's errors
    }
    assert observations["echo/new"] == 5
    assert observations["echo/gone"] == 5


def test_newer_refresh_wins_over_an_older_collection() -> None:
    prior = {"echo/s1": row("s1")}
    refreshed = merge_refresh(
        prior, {}, row("s1", updated="2026-01-05T00:00:00.000Z"), observation=9
    )
    assert refreshed is not None
    rows, observations = refreshed
    older = SourceCollection(source_id="echo", driver="acp", capabilities=NO_CAPABILITIES)
    older.rows["echo/s1"] = row("s1", updated="2026-01-04T00:00:00.000Z")
    merged, _ = merge_full_collection(rows, observations, [older], observation=7, now="x")
    assert merged["echo/s1"].updatedAt == "2026-01-05T00:00:00.000Z"
    # and a collection older than the refresh does not delete it either
    empty = SourceCollection(source_id="echo", driver="acp", capabilities=NO_CAPABILITIES)
    kept, _ = merge_full_collection(rows, observations, [empty], observation=7, now="x")
    assert kept["echo/s1"].syncStatus == "complete"
    assert merge_refresh(rows, observations, row("s1"), observation=8) is None


def test_indexes_split_recent_and_all() -> None:
    rows = {
        "echo/new": row("new", updated="2026-01-10T00:00:00.000Z"),
        "echo/old": row("old", updated="2025-01-01T00:00:00.000Z"),
        "echo/gone": msgspec.structs.replace(
            row("gone"), syncStatus="deleted", deletedAt="2026-01-09T00:00:00.000Z"
        ),
    }
    now_ms = 1768003200000  # 2026-01-10T00:00:00Z
    recent, everything = build_indexes(
        rows,
        owner_did=OWNER,
        sources=(),
        checkouts=(),
        generated_at="2026-01-10T00:00:00.000Z",
        now_ms=now_ms,
        previous_generation=6,
        updated_ms={"echo/new": now_ms, "echo/old": 1735689600000, "echo/gone": now_ms},
    )
    assert [r.key for r in recent.sessions] == ["echo/new"]
    assert [r.key for r in everything.sessions] == ["echo/gone", "echo/new", "echo/old"]
    assert (recent.generation, everything.generation) == (7, 7)
    assert (everything.totalSessionCount, everything.olderSessionCount) == (2, 1)
