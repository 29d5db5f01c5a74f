r"""Pure helpers for ``pane.read``: line caps, the read window, text assembly, ANSI stripping.

The screen itself (a terminal emulator per pane) lives in the reference
server (``shedproto.servers.herdr``), because the core stays free of
third-party dependencies. What herdr does around the emulator is arithmetic,
and it lives here so that clients and the server agree on it:

* ``lines`` is capped at :data:`MAX_READ_LINES`; ``recent`` and
  ``recent_unwrapped`` default to :data:`DEFAULT_RECENT_LINES` rows;
* a screen's text is its rows with trailing whitespace trimmed, trailing
  blank rows dropped, joined with ``\\n`` and ended with one ``\\n`` unless
  empty (:func:`join_rows`);
* ``visible``/``detection`` with ``lines`` keep the last ``lines`` lines of
  that text (:func:`limit_lines`);
* ``recent*`` read a window of rows ending at the last non-blank row of the
  screen or the cursor row, whichever is lower (:func:`recent_window`), and
  are ``truncated`` whenever the terminal holds more rows than asked for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "DEFAULT_RECENT_LINES",
    "MAX_READ_LINES",
    "ReadOutcome",
    "clamp_lines",
    "join_rows",
    "limit_lines",
    "recent_window",
    "split_lines",
    "strip_ansi",
    "stripped_terminal_title",
    "trim_trailing_blank_rows",
]

MAX_READ_LINES = 1000
"""herdr caps ``lines`` at 1000."""
DEFAULT_RECENT_LINES = 80
"""Rows ``recent`` sources return when ``lines`` is not given."""

_ESCAPE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC, BEL or ST terminated
    r"|\x1b[PX^_][^\x1b]*\x1b\\"  # DCS/SOS/PM/APC
    r"|\x1b[()*+][0-9A-Za-z]"  # charset designation
    r"|\x1b[ -/]*[0-~]"  # other two-byte escapes
)


def strip_ansi(text: str) -> str:
    """Remove escape sequences from ``text`` (nothing else); never raises."""
    return _ESCAPE.sub("", text)


_ACTIVITY_GLYPHS = frozenset("·✢✳✶✻✽")


def stripped_terminal_title(title: str) -> str | None:
    """Return ``title`` as herdr's ``terminal_title_stripped``: trimmed, one activity glyph off.

    An agent's spinner (a braille cell or one of Claude Code's star glyphs)
    is dropped when it stands alone at the start, followed by whitespace or
    nothing. ``None`` for a title that ends up empty.
    """
    title = title.strip()
    glyph = bool(title) and (title[0] in _ACTIVITY_GLYPHS or "\u2800" <= title[0] <= "\u28ff")
    if glyph and (len(title) == 1 or title[1].isspace()):
        title = title[1:].strip()
    return title or None


@dataclass(frozen=True)
class ReadOutcome:
    """What a pane screen read returns: the text and whether rows were left out."""

    text: str
    truncated: bool


def clamp_lines(lines: int | None) -> int | None:
    """Return ``lines`` capped at :data:`MAX_READ_LINES` (None stays None, negatives become 0)."""
    return None if lines is None else max(0, min(lines, MAX_READ_LINES))


def trim_trailing_blank_rows(rows: list[str]) -> list[str]:
    """Drop rows at the end of ``rows`` that are empty or whitespace only (in place; returned)."""
    while rows and not rows[-1].strip():
        rows.pop()
    return rows


def join_rows(rows: Sequence[str]) -> str:
    r"""Join ``rows`` with ``\\n`` and end the text with ``\\n`` unless it is empty (herdr)."""
    text = "\n".join(rows)
    return f"{text}\n" if text else text


def split_lines(text: str) -> list[str]:
    r"""Split ``text`` into lines at ``\\n`` without a final empty line (Rust's ``str::lines``)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def limit_lines(text: str, limit: int | None) -> ReadOutcome:
    """Keep the last ``limit`` lines of ``text`` (line endings kept); ``truncated`` if any left out.

    ``None`` keeps everything. The count includes a final unterminated line.
    """
    if limit is None:
        return ReadOutcome(text=text, truncated=False)
    pieces = _split_inclusive(text)
    kept = pieces[max(0, len(pieces) - limit) :] if limit else []
    return ReadOutcome(text="".join(kept), truncated=len(pieces) > limit)


def _split_inclusive(text: str) -> list[str]:
    pieces = text.split("\n")
    out = [piece + "\n" for piece in pieces[:-1]]
    if pieces[-1]:
        out.append(pieces[-1])
    return out


def recent_window(
    *,
    total_rows: int,
    screen_rows: int,
    cursor_row: int,
    last_content_row: int | None,
    lines: int,
    alternate: bool,
) -> range:
    """Return the row indexes (into scrollback + screen) a ``recent`` read covers.

    On the alternate screen that is the last ``lines`` rows. On the primary
    screen the window ends at the lower of the cursor row and the last
    non-blank screen row (or at the last row when the screen is blank) and
    reaches back ``lines`` rows. ``cursor_row`` and ``last_content_row`` are
    screen-relative. An empty range when there is nothing to read.
    """
    if total_rows <= 0 or lines <= 0 or screen_rows <= 0:
        return range(0)
    if alternate:
        return range(max(0, total_rows - lines), total_rows)
    viewport_start = max(0, total_rows - screen_rows)
    cursor = min(viewport_start + cursor_row, total_rows - 1)
    if last_content_row is None:
        end = total_rows - 1
    else:
        end = max(viewport_start + last_content_row, cursor)
    return range(max(0, end + 1 - lines), end + 1)
