"""Copy-mode text rules over a pane's lines (screen plus scrollback): selections.

Coordinates are herdr's ``PaneTextPoint``: ``row`` counts from the oldest
retained line (row 0) down to the last screen row, ``col`` is a cell column.
A selection runs from the earlier of its two points to the later one, both
ends included, like vi's visual mode: the first line from its column, whole
lines between, the last line up to its column. Trailing blanks of each line
are dropped and lines join with a newline. Points past the text are clamped.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["clamp_point", "select_text"]


def clamp_point(lines: Sequence[str], row: int, col: int) -> tuple[int, int]:
    """Return ``(row, col)`` clamped to the text (an empty text clamps to ``(0, 0)``)."""
    if not lines:
        return 0, 0
    row = min(max(row, 0), len(lines) - 1)
    return row, max(col, 0)


def select_text(lines: Sequence[str], anchor: tuple[int, int], cursor: tuple[int, int]) -> str:
    """Return the text between ``anchor`` and ``cursor`` (``(row, col)`` each), ends included."""
    if not lines:
        return ""
    start, end = sorted((clamp_point(lines, *anchor), clamp_point(lines, *cursor)))
    out = []
    for row in range(start[0], end[0] + 1):
        line = lines[row]
        first = start[1] if row == start[0] else 0
        last = end[1] + 1 if row == end[0] else len(line)
        out.append(line[first:last].rstrip())
    return "\n".join(out)
