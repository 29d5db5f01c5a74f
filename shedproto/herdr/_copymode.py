"""Copy-mode text rules over a pane's lines (screen plus scrollback).

Selections, vi motions, literal search and link detection.

Coordinates are herdr's ``PaneTextPoint``: ``row`` counts from the oldest
retained line (row 0) down to the last screen row, ``col`` is a cell column.
A selection runs from the earlier of its two points to the later one, both
ends included, like vi's visual mode: the first line from its column, whole
lines between, the last line up to its column. Trailing blanks of each line
are dropped and lines join with a newline. Points past the text are clamped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = [
    "MAX_MATCHES",
    "clamp_point",
    "copy_motion",
    "current_match",
    "links",
    "search",
    "select_text",
]


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


# ---------------------------------------------------------------- motions
def _class(char: str, big: bool) -> int:
    """0 blank, 1 word character (or any non-blank for WORDs), 2 other non-blank."""
    if not char.strip():
        return 0
    if big or char.isalnum() or char == "_":
        return 1
    return 2


def _cells(lines: Sequence[str], big: bool) -> tuple[list[tuple[int, int]], list[int]]:
    """Every cell in reading order plus one blank per line end, with its class."""
    cells: list[tuple[int, int]] = []
    kinds: list[int] = []
    for row, line in enumerate(lines):
        for col, char in enumerate(line):
            cells.append((row, col))
            kinds.append(_class(char, big))
        cells.append((row, len(line)))
        kinds.append(0)
    return cells, kinds


def _index(cells: list[tuple[int, int]], point: tuple[int, int]) -> int:
    for index, cell in enumerate(cells):
        if cell >= point:
            return index
    return len(cells) - 1


def _word_start(kinds: list[int], i: int) -> int:
    start_kind = kinds[i]
    while i < len(kinds) and kinds[i] == start_kind and start_kind:
        i += 1
    while i < len(kinds) and not kinds[i]:
        i += 1
    return i


def _word_end(kinds: list[int], i: int) -> int:
    i += 1
    while i < len(kinds) and not kinds[i]:
        i += 1
    while i + 1 < len(kinds) and kinds[i + 1] == kinds[i] and kinds[i]:
        i += 1
    return i


def _word_back(kinds: list[int], i: int) -> int:
    i -= 1
    while i > 0 and not kinds[i]:
        i -= 1
    while i > 0 and kinds[i - 1] == kinds[i] and kinds[i]:
        i -= 1
    return max(i, 0)


def copy_motion(lines: Sequence[str], point: tuple[int, int], motion: str) -> tuple[int, int]:
    """Return where vi's ``motion`` moves a copy-mode cursor at ``point`` (``(row, col)``).

    Words are runs of letters, digits and ``_`` or runs of other non-blanks;
    big words are runs of non-blanks; line ends separate words. Paragraph
    motions stop at blank lines. A motion with nowhere to go stays.

    Raises:
        ValueError: ``motion`` is not one of herdr's ``PaneCopyMotion`` names.

    """
    if not lines:
        return 0, 0
    row, col = clamp_point(lines, *point)
    line = lines[row]
    if motion == "line_end":
        return row, max(len(line.rstrip()) - 1, 0)
    if motion == "first_non_blank":
        return row, len(line) - len(line.lstrip()) if line.strip() else 0
    if motion in ("previous_paragraph", "next_paragraph"):
        step = -1 if motion == "previous_paragraph" else 1
        probe = row
        while 0 <= probe < len(lines) and not lines[probe].strip():
            probe += step  # start from the paragraph the cursor is in or next to
        while 0 <= probe < len(lines) and lines[probe].strip():
            probe += step
        return min(max(probe, 0), len(lines) - 1), 0
    big = "big" in motion
    cells, kinds = _cells(lines, big)
    i = _index(cells, (row, col))
    if motion in ("next_word_start", "next_big_word_start"):
        j = _word_start(kinds, i)
    elif motion in ("next_word_end", "next_big_word_end"):
        j = _word_end(kinds, i)
    elif motion in ("previous_word_start", "previous_big_word_start"):
        j = _word_back(kinds, i)
    else:
        raise ValueError(f"unknown copy motion {motion!r}")
    if j >= len(cells) or not kinds[j]:
        return row, col
    return cells[j]


# ---------------------------------------------------------------- search
MAX_MATCHES = 1000
"""The most matches one search reports (``total`` still counts every one)."""


def search(lines: Sequence[str], query: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Return every occurrence of ``query`` as ``(start, end)`` points, ends included.

    The match is literal and case-sensitive; occurrences do not overlap and
    never span lines. An empty query matches nothing.
    """
    found: list[tuple[tuple[int, int], tuple[int, int]]] = []
    if not query:
        return found
    for row, line in enumerate(lines):
        at = line.find(query)
        while at >= 0:
            found.append(((row, at), (row, at + len(query) - 1)))
            at = line.find(query, at + len(query))
    return found


def current_match(
    matches: Sequence[tuple[tuple[int, int], tuple[int, int]]],
    cursor: tuple[int, int],
    forward: bool,
    previous: tuple[int, int] | None = None,
) -> int | None:
    """Return the index of the match a search from ``cursor`` lands on, or None.

    Forward: the first match starting after ``cursor`` (after ``previous``'s
    start when repeating), wrapping to the first. Backward: the last match
    starting before it, wrapping to the last.
    """
    if not matches:
        return None
    origin = previous or cursor
    starts = [start for start, _ in matches]
    if forward:
        after = [i for i, start in enumerate(starts) if start > origin]
        return after[0] if after else 0
    before = [i for i, start in enumerate(starts) if start < origin]
    return before[-1] if before else len(matches) - 1


# ---------------------------------------------------------------- links
_URL = re.compile(r"\b(?:https?|file|ftp)://[^\s<>\"'`]+")
_TRAILING = ".,;:!?)]}'\""


def links(line: str) -> list[tuple[int, int, str]]:
    """Return the URLs in ``line`` as ``(start col, end col (included), url)``.

    A URL is ``http(s)://``, ``file://`` or ``ftp://`` up to a blank or quote,
    without trailing sentence punctuation.
    """
    found = []
    for match in _URL.finditer(line):
        url = match.group(0).rstrip(_TRAILING)
        found.append((match.start(), match.start() + len(url) - 1, url))
    return found
