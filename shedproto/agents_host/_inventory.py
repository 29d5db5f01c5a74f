"""A source's inventory, page by page (spec 6.2): the rules a collection applies to it.

:class:`InventoryWalk` is fed the pages a driver returns and says which
cursor to ask for next. It refuses a session listed twice, a cursor repeated
(a driver that would loop forever) and an inventory longer than
:data:`MAX_LISTED_SESSIONS`.
"""

from __future__ import annotations

from ._driver import SessionPage, SessionSummary

__all__ = ["MAX_LISTED_SESSIONS", "InventoryError", "InventoryWalk"]

MAX_LISTED_SESSIONS = 100_000
"""An inventory longer than this is an error (spec 6.2)."""


class InventoryError(ValueError):
    """A driver's inventory breaks a rule; the message names which (one line)."""


class InventoryWalk:
    """Collects one source's inventory; :attr:`cursor` is the next page to ask for.

    Usage: ``while walk.add(await driver.list_sessions(walk.cursor)): pass``,
    then :attr:`sessions`. After an :class:`InventoryError` the walk is over
    (the sessions gathered so far stay in :attr:`sessions`).
    """

    __slots__ = ("_ids", "_limit", "_seen_cursors", "cursor", "sessions")

    def __init__(self, limit: int = MAX_LISTED_SESSIONS) -> None:
        self.cursor: str | None = None
        """The cursor to pass to the next ``listSessions`` (``None``: the first page)."""
        self.sessions: list[SessionSummary] = []
        """Every session listed so far, in order."""
        self._limit = limit
        self._ids: set[str] = set()
        self._seen_cursors: set[str] = set()

    def add(self, page: SessionPage) -> bool:
        """Take one page; return whether another page is to be fetched (at :attr:`cursor`).

        Raises:
            InventoryError: a session was listed twice, the inventory exceeds
                the limit, or the page's ``nextCursor`` was seen before.

        """
        for summary in page.sessions:
            if summary.nativeSessionId in self._ids:
                raise InventoryError(f"session listed twice: {summary.nativeSessionId}")
            self._ids.add(summary.nativeSessionId)
            self.sessions.append(summary)
            if len(self.sessions) > self._limit:
                raise InventoryError(f"inventory exceeds {self._limit} sessions")
        cursor = page.nextCursor
        if cursor is None:
            return False
        if cursor in self._seen_cursors:
            raise InventoryError(f"inventory repeated cursor: {cursor}")
        self._seen_cursors.add(cursor)
        self.cursor = cursor
        return True
