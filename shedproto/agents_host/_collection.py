"""Collection decisions (spec section 6): what to re-read, row states, the two indexes.

Pure functions over the connector core's shapes; the host gathers provider
data and publishes what these return.

* :func:`should_retain` -- the six-part retain predicate of section 6.2.
* :func:`session_manifest` -- a session's manifest document and its hashes.
  Hashes are ``sha256:`` of canonical JSON (sorted keys); they cannot match
  Fabric's ``stableFabricValue`` hashes (spec 8.1). Chunks are not split
  out: the manifest carries the events inline in one chunk object.
* :func:`merge_full_collection` / :func:`merge_refresh` -- the ``syncStatus``
  transitions (complete, partial, stale, deleted) with observation
  sequence numbers: a row written by a newer observation is never
  overwritten by an older one, and a session a newer complete inventory
  dropped is not resurrected.
* :func:`build_indexes` -- ``recent`` (non-deleted rows updated in the last
  7 days) and ``all`` (every row), generation = max of both previous + 1.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from shedproto.connector import (
    Capabilities,
    Checkout,
    IndexEntry,
    IndexSource,
    NormalizedMessage,
    SessionIndex,
    SourceError,
    build_session_index,
    session_key,
)

from ._driver import SessionSnapshot, SessionSummary

__all__ = [
    "RECENT_MESSAGES",
    "RECENT_WINDOW_MS",
    "SESSION_SCHEMA",
    "SourceCollection",
    "build_indexes",
    "merge_full_collection",
    "merge_refresh",
    "row_for",
    "session_manifest",
    "should_retain",
]

RECENT_MESSAGES = 12
"""Normalised messages kept in a row's ``recentMessages``."""
RECENT_WINDOW_MS = 7 * 24 * 3600 * 1000
"""A row belongs to the ``recent`` index when updated within this window."""
SESSION_SCHEMA = "commonfabric.agent-connector.session"
"""The manifest document's schema string."""

_CANONICAL = msgspec.json.Encoder(order="sorted")


def _hash(value: Any) -> str:
    return "sha256:" + hashlib.sha256(_CANONICAL.encode(value)).hexdigest()


def should_retain(
    prior: IndexEntry | None,
    summary: SessionSummary,
    *,
    driver: str,
    read_since_start: bool,
) -> bool:
    """Return whether a listed session may keep its published copy without a read."""
    return (
        prior is not None
        and prior.syncStatus == "complete"
        and read_since_start
        and prior.driver == driver
        and (summary.startedAs is None or summary.startedAs == prior.startedAs)
        and summary.updatedAt is not None
        and summary.updatedAt == prior.updatedAt
        and prior.archived == summary.archived
        and prior.active == summary.active
    )


def session_manifest(
    *,
    owner_did: str,
    source_id: str,
    driver: str,
    snapshot: SessionSnapshot,
    observed_at: str,
) -> tuple[bytes, str, str]:
    """Return ``(manifest bytes, manifestHash, contentHash)`` of one read session."""
    key = session_key(source_id, snapshot.summary.nativeSessionId)
    events = [msgspec.to_builtins(event) for event in snapshot.events]
    messages = msgspec.to_builtins(snapshot.normalizedMessages)
    content_hash = _hash({"events": events, "messages": messages})
    chunk = {"part": 0, "contentHash": content_hash, "eventCount": len(events)}
    manifest = {
        "schema": SESSION_SCHEMA,
        "ownerDid": owner_did,
        "key": key,
        "sourceId": source_id,
        "driver": driver,
        "nativeSessionId": snapshot.summary.nativeSessionId,
        "metadata": snapshot.summary.raw,
        "summary": msgspec.to_builtins(snapshot.summary),
        "normalized": {"messages": messages},
        "chunks": [{**chunk, "byteLength": len(_CANONICAL.encode(events)), "events": events}],
        "snapshotHash": content_hash,
        "revision": snapshot.revision,
        "observedAt": observed_at,
        "complete": snapshot.complete,
    }
    body = _CANONICAL.encode(manifest)
    return body, "sha256:" + hashlib.sha256(body).hexdigest(), content_hash


def row_for(
    *,
    owner_did: str,
    source_id: str,
    driver: str,
    summary: SessionSummary,
    capabilities: Capabilities,
    messages: Iterable[NormalizedMessage],
    manifest_hash: str | None,
    content_hash: str | None,
    sync_status: str,
    started_as: str | None = None,
) -> IndexEntry:
    """Build one index row from a listed (and possibly read) session."""
    key = session_key(source_id, summary.nativeSessionId)
    recent = tuple(messages)[-RECENT_MESSAGES:]
    return IndexEntry(
        ownerDid=owner_did,
        key=key,
        sourceId=source_id,
        driver=driver,
        nativeSessionId=summary.nativeSessionId,
        title=summary.title,
        cwd=summary.cwd,
        createdAt=summary.createdAt,
        updatedAt=summary.updatedAt,
        archived=summary.archived,
        active=summary.active,
        startedAs=summary.startedAs or started_as,
        capabilities=capabilities,
        recentMessages=recent,
        manifest=None if manifest_hash is None else f"sessions/{key}",
        manifestVersioned=None if manifest_hash is None else f"sessions/{key}@{manifest_hash}",
        manifestHash=manifest_hash,
        contentHash=content_hash,
        syncStatus=sync_status,  # type: ignore[arg-type]
    )


@dataclass
class SourceCollection:
    """One source's result in a collection: rows listed, and whether its inventory completed."""

    source_id: str
    driver: str
    capabilities: Capabilities
    rows: dict[str, IndexEntry] = field(default_factory=dict)
    complete: bool = True
    errors: list[SourceError] = field(default_factory=list)


def merge_full_collection(
    prior: Mapping[str, IndexEntry],
    prior_observations: Mapping[str, int],
    results: Iterable[SourceCollection],
    *,
    observation: int,
    now: str,
) -> tuple[dict[str, IndexEntry], dict[str, int]]:
    """Apply a complete collection; return the new rows and their observation numbers.

    Every prior row starts ``stale``; listed rows take their new state; for a
    source whose inventory completed, unlisted prior rows become ``deleted``
    (keeping an earlier ``deletedAt``). Rows whose stored observation is
    newer than ``observation`` are left as they are.
    """
    rows: dict[str, IndexEntry] = {}
    observations = dict(prior_observations)
    for key, row in prior.items():
        newer = prior_observations.get(key, 0) > observation
        rows[key] = row if newer or row.syncStatus == "deleted" else _with_status(row, "stale")
    for result in results:
        listed = set(result.rows)
        for key, row in result.rows.items():
            if prior_observations.get(key, 0) > observation:
                continue
            rows[key] = row
            observations[key] = observation
        if result.complete:
            for key, row in prior.items():
                if (
                    row.sourceId == result.source_id
                    and key not in listed
                    and prior_observations.get(key, 0) <= observation
                    and row.syncStatus != "deleted"
                ):
                    rows[key] = msgspec.structs.replace(row, syncStatus="deleted", deletedAt=now)
                    observations[key] = observation
        else:
            failed = {e.nativeSessionId for e in result.errors if e.nativeSessionId}
            for key, row in rows.items():
                if row.sourceId == result.source_id and row.nativeSessionId in failed:
                    rows[key] = _with_status(row, "partial")
    return rows, observations


def merge_refresh(
    prior: Mapping[str, IndexEntry],
    prior_observations: Mapping[str, int],
    row: IndexEntry,
    *,
    observation: int,
) -> tuple[dict[str, IndexEntry], dict[str, int]] | None:
    """Apply a targeted refresh of one row (other rows untouched); ``None`` if superseded."""
    if prior_observations.get(row.key, 0) > observation:
        return None
    rows = dict(prior)
    previous = rows.get(row.key)
    if previous is not None and previous.startedAs is not None and row.startedAs is None:
        row = msgspec.structs.replace(row, startedAs=previous.startedAs)
    rows[row.key] = row
    observations = dict(prior_observations)
    observations[row.key] = observation
    return rows, observations


def _with_status(row: IndexEntry, status: str) -> IndexEntry:
    return msgspec.structs.replace(row, syncStatus=status, deletedAt=None)


def build_indexes(
    rows: Mapping[str, IndexEntry],
    *,
    owner_did: str,
    sources: Iterable[IndexSource],
    checkouts: Iterable[Checkout],
    generated_at: str,
    now_ms: int,
    previous_generation: int,
    updated_ms: Mapping[str, int | None],
) -> tuple[SessionIndex, SessionIndex]:
    """Return ``(recent, all)``; ``updated_ms`` maps keys to ``updatedAt`` in ms (or ``None``)."""
    source_list = list(sources)
    checkout_list = list(checkouts)
    live = [row for row in rows.values() if row.syncStatus != "deleted"]
    recent_rows = [
        row
        for row in live
        if (ms := updated_ms.get(row.key)) is not None and now_ms - ms <= RECENT_WINDOW_MS
    ]
    generation = previous_generation + 1
    common: dict[str, Any] = {
        "owner_did": owner_did,
        "generated_at": generated_at,
        "generation": generation,
        "total_session_count": len(live),
        "older_session_count": len(live) - len(recent_rows),
        "sources": source_list,
        "checkouts": checkout_list,
    }
    recent = build_session_index(bucket="recent", sessions=recent_rows, **common)
    everything = build_session_index(bucket="all", sessions=rows.values(), **common)
    return recent, everything
