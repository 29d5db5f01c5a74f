"""What the host adds to a session's index row before publishing it: git context, update time."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import msgspec

from shedproto.connector import Checkout, IndexEntry

__all__ = ["updated_ms", "with_checkout"]

_FRACTION = re.compile(r"(?<=:\d\d)\.(\d+)")
"""A fraction of a second: Python 3.10's ``fromisoformat`` reads only 3 or 6 digits."""


def with_checkout(row: IndexEntry, checkouts: list[Checkout]) -> IndexEntry:
    """Return ``row`` with the git fields of the checkout that holds its ``cwd``; never raises.

    The deepest checkout whose root is ``cwd`` or one of its parents wins; a
    row without ``cwd``, or outside every checkout, is returned unchanged.
    """
    cwd = row.cwd
    if cwd is None:
        return row
    best: Checkout | None = None
    for checkout in checkouts:
        root = checkout.root.rstrip("/")
        if (cwd == root or cwd.startswith(root + "/")) and (
            best is None or len(root) > len(best.root)
        ):
            best = checkout
    if best is None:
        return row
    return msgspec.structs.replace(
        row,
        gitRepo=best.gitRepo,
        gitBranch=best.gitBranch,
        gitWorktreeRoot=best.root,
        gitHeadSha=best.gitHeadSha,
        gitRemotes=best.gitRemotes or None,
        gitObservedAt=best.observedAt,
    )


def updated_ms(value: str | None) -> int | None:
    """Return an ISO 8601 time (``Z`` allowed) as epoch milliseconds; ``None`` when unreadable.

    A time without an offset is UTC (never the machine's local zone: the core
    reads no environment).
    """
    if value is None:
        return None
    try:
        iso = _FRACTION.sub(lambda m: "." + m[1][:6].ljust(6, "0"), value.replace("Z", "+00:00"))
        parsed = datetime.fromisoformat(iso)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return int(parsed.timestamp() * 1000)
