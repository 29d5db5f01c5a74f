"""Session index shapes (``commonfabric.agent-connector.session-index``) and row keys.

Two index cells share the schema: ``recent`` (non-deleted rows updated in the
last 7 days) and ``all`` (every row, deleted ones included). Rows are sorted
by ``key``, sources by id, checkouts by root (``localeCompare`` order). A
row's ``key`` is :func:`session_key` of its source and native session ids,
which is ``encodeURIComponent``-compatible by construction.

Readers ignore unknown fields: new fields are optional so older writers can
omit them without changing the meaning of existing ones.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

import msgspec

from ._collation import locale_sort_key
from ._health import Capabilities, SourceError
from ._identity import (
    IdentityError,
    normalize_native_session_id,
    normalize_source_id,
    session_key,
)

__all__ = [
    "SESSION_INDEX_SCHEMA",
    "Checkout",
    "GitRemote",
    "IndexBucket",
    "IndexEntry",
    "IndexSource",
    "MessageRole",
    "NormalizedMessage",
    "SessionIndex",
    "SyncState",
    "build_session_index",
    "check_index_entry",
]

SESSION_INDEX_SCHEMA = "commonfabric.agent-connector.session-index"
"""The session index schema string (both buckets)."""
IndexBucket = Literal["recent", "all"]
"""Which index cell."""
SyncState = Literal["complete", "partial", "stale", "deleted"]
"""A row's ``syncStatus``."""
MessageRole = Literal["user", "assistant", "system", "tool", "unknown"]
"""A normalised message's role."""


class GitRemote(msgspec.Struct, frozen=True, kw_only=True):
    """A Git remote and its URLs."""

    name: str
    urls: tuple[str, ...]


class NormalizedMessage(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A message preview: ``textPreview`` is at most 500 characters."""

    id: str
    parentId: str | None = None  # noqa: N815 - wire name
    role: MessageRole
    kind: str
    createdAt: str | None  # noqa: N815 - wire name
    textPreview: str | None  # noqa: N815 - wire name
    rawIndex: int  # noqa: N815 - wire name


class IndexEntry(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One session row. Nullable fields are always written (as ``null`` when unknown)."""

    ownerDid: str  # noqa: N815 - wire name
    key: str
    sourceId: str  # noqa: N815 - wire name
    driver: str
    nativeSessionId: str  # noqa: N815 - wire name
    title: str | None
    cwd: str | None
    createdAt: str | None  # noqa: N815 - wire name
    updatedAt: str | None  # noqa: N815 - wire name
    archived: bool | None
    active: bool | None
    startedAs: str | None = None  # noqa: N815 - wire name
    gitRepo: str | None = None  # noqa: N815 - wire name
    gitBranch: str | None = None  # noqa: N815 - wire name
    gitWorktreeRoot: str | None = None  # noqa: N815 - wire name
    gitHeadSha: str | None = None  # noqa: N815 - wire name
    gitRemotes: tuple[GitRemote, ...] | None = None  # noqa: N815 - wire name
    gitObservedAt: str | None = None  # noqa: N815 - wire name
    capabilities: Capabilities
    recentMessages: tuple[NormalizedMessage, ...]  # noqa: N815 - wire name
    manifest: Any = None
    manifestVersioned: Any = None  # noqa: N815 - wire name
    manifestHash: str | None = None  # noqa: N815 - wire name
    contentHash: str | None = None  # noqa: N815 - wire name
    syncStatus: SyncState  # noqa: N815 - wire name
    deletedAt: str | None = None  # noqa: N815 - wire name


class IndexSource(msgspec.Struct, frozen=True, kw_only=True):
    """A source's summary in an index."""

    id: str
    driver: str
    capabilities: Capabilities
    complete: bool
    sessionCount: int  # noqa: N815 - wire name
    errors: tuple[SourceError, ...] = ()


class Checkout(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A Git checkout found below a configured root."""

    root: str
    gitRepo: str | None = None  # noqa: N815 - wire name
    gitBranch: str | None = None  # noqa: N815 - wire name
    gitHeadSha: str | None = None  # noqa: N815 - wire name
    gitRemotes: tuple[GitRemote, ...] = ()  # noqa: N815 - wire name
    observedAt: str  # noqa: N815 - wire name


class SessionIndex(msgspec.Struct, frozen=True, kw_only=True):
    """One index cell's value."""

    schema: str = SESSION_INDEX_SCHEMA
    ownerDid: str  # noqa: N815 - wire name
    bucket: IndexBucket
    generatedAt: str  # noqa: N815 - wire name
    generation: int
    totalSessionCount: int  # noqa: N815 - wire name
    olderSessionCount: int  # noqa: N815 - wire name
    sources: tuple[IndexSource, ...]
    checkouts: tuple[Checkout, ...]
    sessions: tuple[IndexEntry, ...]


def check_index_entry(entry: IndexEntry, *, owner_did: str) -> str | None:
    """Return why ``entry`` is not a valid row for ``owner_did``, or ``None``.

    The key must equal ``session_key(sourceId, nativeSessionId)``, the ids
    must already be normalised, ``deletedAt`` appears only with ``deleted``.
    """
    if entry.ownerDid != owner_did:
        return f"session index row belongs to another owner: {entry.key}"
    try:
        expected = session_key(entry.sourceId, entry.nativeSessionId)
    except (IdentityError, ValueError) as exc:
        return f"session index row is invalid: {exc}"
    if (
        entry.sourceId != normalize_source_id(entry.sourceId)
        or entry.nativeSessionId != normalize_native_session_id(entry.nativeSessionId)
        or expected != entry.key
    ):
        return f"session index row key does not match its session: {entry.key}"
    if (entry.deletedAt is not None) != (entry.syncStatus == "deleted"):
        return f"session index row deletedAt does not match its status: {entry.key}"
    return None


def build_session_index(
    *,
    owner_did: str,
    bucket: IndexBucket,
    generated_at: str,
    generation: int,
    total_session_count: int,
    older_session_count: int,
    sources: Iterable[IndexSource],
    checkouts: Iterable[Checkout],
    sessions: Iterable[IndexEntry],
) -> SessionIndex:
    """Return an index with rows sorted by key, sources by id and checkouts by root."""
    return SessionIndex(
        ownerDid=owner_did,
        bucket=bucket,
        generatedAt=generated_at,
        generation=generation,
        totalSessionCount=total_session_count,
        olderSessionCount=older_session_count,
        sources=tuple(sorted(sources, key=lambda s: locale_sort_key(s.id))),
        checkouts=tuple(sorted(checkouts, key=lambda c: locale_sort_key(c.root))),
        sessions=tuple(sorted(sessions, key=lambda e: locale_sort_key(e.key))),
    )
