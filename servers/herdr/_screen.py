"""Pane screens for the reference server: a real terminal emulator per pane (pyte).

pyte provides the VT100/xterm grid; this module adds what herdr's emulator has
and pyte lacks: scrollback, the alternate screen, soft-wrap marks, resize and
replies to terminal queries (:meth:`PaneScreen.take_replies`), plus herdr's
text and ANSI renderings of a read. Each of these is described in the
documentation: ``docs/architecture/decisions/herdr.rst`` (*Pane screens*).
"""

from __future__ import annotations

import functools
import unicodedata
from collections import defaultdict, deque
from collections.abc import Iterator
from typing import Any

import pyte
from pyte import graphics, modes
from pyte.screens import Char, Margins, StaticDefaultDict
from wcwidth import wcwidth

from shedproto.herdr._screen import (
    DEFAULT_RECENT_LINES,
    ReadOutcome,
    clamp_lines,
    join_rows,
    limit_lines,
    recent_window,
    trim_trailing_blank_rows,
)

__all__ = ["MAX_SCROLLBACK", "PaneScreen"]

MAX_SCROLLBACK = 10_000
"""Rows of scrollback kept per pane."""

_ALT_MODES = (47, 1047, 1049)
_BRACKETED_PASTE = 2004 << 5
_FG = {name: code for code, name in graphics.FG_ANSI.items() if name != "default"}
_FG.update({name: code for code, name in graphics.FG_AIXTERM.items()})
_BG = {name: code for code, name in graphics.BG_ANSI.items() if name != "default"}
_BG.update({name: code for code, name in graphics.BG_AIXTERM.items()})

Row = StaticDefaultDict[int, Char]


class _Row(StaticDefaultDict[int, Char]):
    """A pyte row that remembers whether the cursor auto-wrapped out of it."""

    wrapped = False


class _Terminal(pyte.Screen):
    """pyte's screen plus scrollback, the alternate screen, soft wraps and replies."""

    def __init__(self, columns: int, lines: int) -> None:
        self.scrollback: deque[Row] = deque(maxlen=MAX_SCROLLBACK)
        self.alternate = False
        self.replies = bytearray()
        self._drawing = False
        self._glyphs: dict[tuple[Any, ...], dict[str, Char]] = {}
        self._primary: Any = None
        self._saved_cursor: tuple[int, int, Char] | None = None
        super().__init__(columns, lines)
        self.buffer = self._new_buffer()

    def _new_buffer(self) -> defaultdict[int, Row]:
        return defaultdict(lambda: _Row(self.default_char))

    # -- replies to the program
    def write_process_input(self, data: str) -> None:
        self.replies += data.encode()

    # -- full reset clears scrollback and leaves the alternate screen
    def reset(self) -> None:
        if getattr(self, "alternate", False):
            self.alternate = False
            self._primary = None
        if hasattr(self, "scrollback"):
            self.scrollback.clear()
        super().reset()

    # -- soft wraps: pyte auto-wraps in draw() via carriage_return() + linefeed()
    def draw(self, data: str) -> None:
        if data.isascii() and data.isprintable():
            if modes.DECAWM in self.mode and modes.IRM not in self.mode:
                charset = self.g1_charset if self.charset else self.g0_charset
                self._draw_narrow(data.translate(charset))
                return
        else:
            # pyte stops drawing the whole run at the first character it
            # cannot place (a C0 control, a zero-width joiner, a variation
            # selector); a terminal skips just that character
            data = "".join(char for char in data if _drawable(char))
        self._drawing = True
        try:
            super().draw(data)
        finally:
            self._drawing = False

    def _draw_narrow(self, data: str) -> None:
        """Draw single-width characters with auto-wrap, a row segment at a time.

        What pyte's ``draw`` does for this (by far the commonest) case, without
        its per-character width lookup and attribute copy.
        """
        cursor = self.cursor
        columns = self.columns
        style = cursor.attrs[1:]
        cache = self._glyphs.get(style)
        if cache is None:
            if len(self._glyphs) > 64:
                self._glyphs.clear()
            cache = self._glyphs[style] = {}
        position = 0
        end = len(data)
        while position < end:
            if cursor.x >= columns:
                self.dirty.add(cursor.y)
                row = self.buffer[cursor.y]
                if isinstance(row, _Row):
                    row.wrapped = True
                super().carriage_return()
                self.linefeed()
            row = self.buffer[cursor.y]
            take = min(end - position, columns - cursor.x)
            segment = data[position : position + take]
            for char in set(segment).difference(cache):
                cache[char] = Char(char, *style)
            glyphs = map(cache.__getitem__, segment)
            row.update(zip(range(cursor.x, cursor.x + take), glyphs, strict=True))
            cursor.x += take
            position += take
        self.dirty.add(cursor.y)

    def carriage_return(self) -> None:
        if self._drawing:
            row = self.buffer[self.cursor.y]
            if isinstance(row, _Row):
                row.wrapped = True
        super().carriage_return()

    def erase_in_line(self, how: int = 0, private: bool = False) -> None:
        super().erase_in_line(how, private)
        if how in (0, 2):
            _unwrap(self.buffer[self.cursor.y])

    def erase_in_display(self, how: int = 0, *args: Any, **kwargs: Any) -> None:
        if how == 3:  # xterm/ghostty: clear the scrollback only
            self.scrollback.clear()
            return
        super().erase_in_display(how, *args, **kwargs)
        rows = range(self.lines) if how == 2 else range(self.cursor.y, self.lines)
        if how in (0, 2):
            for y in rows:
                if y in self.buffer:
                    _unwrap(self.buffer[y])

    # -- scrollback
    def index(self) -> None:
        top, bottom = self.margins or Margins(0, self.lines - 1)
        full = top == 0 and bottom == self.lines - 1
        if self.cursor.y == bottom and full and not self.alternate:
            self.scrollback.append(self.buffer[0])
        super().index()

    # -- the alternate screen
    def set_mode(self, *modes_: int, **kwargs: Any) -> None:
        super().set_mode(*modes_, **kwargs)
        if kwargs.get("private") and not self.alternate:
            if 1049 in modes_:
                self._saved_cursor = (self.cursor.x, self.cursor.y, self.cursor.attrs)
            if any(mode in modes_ for mode in _ALT_MODES):
                self._primary = self.buffer
                self.buffer = self._new_buffer()
                self.alternate = True
                self.dirty.update(range(self.lines))

    def reset_mode(self, *modes_: int, **kwargs: Any) -> None:
        super().reset_mode(*modes_, **kwargs)
        if kwargs.get("private") and self.alternate and any(mode in modes_ for mode in _ALT_MODES):
            self.buffer = self._primary
            self._primary = None
            self.alternate = False
            self.dirty.update(range(self.lines))
            if 1049 in modes_ and self._saved_cursor is not None:
                x, y, attrs = self._saved_cursor
                self.cursor.x, self.cursor.y, self.cursor.attrs = x, y, attrs
                self.ensure_hbounds()
                self.ensure_vbounds()

    # -- resize
    def resize(self, lines: int | None = None, columns: int | None = None) -> None:
        lines = lines or self.lines
        columns = columns or self.columns
        if lines == self.lines and columns == self.columns:
            return
        if lines < self.lines:
            self._shrink(self.lines - lines)
        elif lines > self.lines and not self.alternate:
            self._grow(lines - self.lines)
        if columns < self.columns:
            for buffer in (self.buffer, self._primary):
                for row in (buffer or {}).values():
                    for x in range(columns, self.columns):
                        row.pop(x, None)
        self.lines, self.columns = lines, columns
        self.tabstops = {stop for stop in self.tabstops if stop < columns} | set(
            range(8 * ((self.columns - 1) // 8 + 1), columns, 8)
        )
        self.set_margins()
        self.cursor.x = min(self.cursor.x, columns - 1)
        self.cursor.y = min(self.cursor.y, lines - 1)
        self.dirty.update(range(lines))

    def _shrink(self, count: int) -> None:
        buffer = self.buffer
        blank_below = 0
        for y in range(self.lines - 1, self.cursor.y, -1):
            if blank_below == count or _row_text(buffer.get(y)):
                break
            blank_below += 1
        for y in range(self.lines - blank_below, self.lines):
            buffer.pop(y, None)
        lift = count - blank_below
        if lift:
            self._lift(buffer, lift, keep=not self.alternate)
            self.cursor.y = max(0, self.cursor.y - lift)
        if self.alternate and self._primary is not None:
            self._lift(self._primary, count, keep=True)

    def _lift(self, buffer: Any, count: int, *, keep: bool) -> None:
        for y in range(count):
            if keep:
                self.scrollback.append(buffer[y])
            buffer.pop(y, None)
        for y in range(count, self.lines):
            if y in buffer:
                buffer[y - count] = buffer.pop(y)

    def _grow(self, count: int) -> None:
        pulled = min(count, len(self.scrollback))
        if not pulled:
            return
        for y in range(self.lines - 1, -1, -1):
            if y in self.buffer:
                self.buffer[y + pulled] = self.buffer.pop(y)
        for y in range(pulled - 1, -1, -1):
            self.buffer[y] = self.scrollback.pop()
        self.cursor.y += pulled


@functools.lru_cache(maxsize=4096)
def _drawable(char: str) -> bool:
    width = wcwidth(char)
    return width > 0 or (width == 0 and unicodedata.combining(char) > 0)


def _unwrap(row: Row) -> None:
    if isinstance(row, _Row):
        row.wrapped = False


def _is_wrapped(row: Row | None) -> bool:
    return isinstance(row, _Row) and row.wrapped


def _cells(row: Row | None) -> Iterator[Char]:
    if not row:
        return
    default = row.default
    for x in range(max(row) + 1):
        yield row.get(x, default)


def _row_text(row: Row | None) -> str:
    """Return the row's characters, trailing whitespace trimmed (wide-char stubs skipped)."""
    if not row:
        return ""
    return "".join(cell.data for cell in _cells(row)).rstrip()


def _style(cell: Char) -> tuple[Any, ...]:
    return cell[1:]


_PLAIN = Char(" ")[1:]


def _sgr(style: tuple[Any, ...]) -> str:
    fg, bg, bold, italics, underscore, strikethrough, reverse, blink = style
    params: list[str] = []
    if bold:
        params.append("1")
    if italics:
        params.append("3")
    if underscore:
        params.append("4")
    if blink:
        params.append("5")
    if reverse:
        params.append("7")
    if strikethrough:
        params.append("9")
    params += _colour(fg, _FG, "38")
    params += _colour(bg, _BG, "48")
    return f"\x1b[{';'.join(params)}m"


def _colour(value: str, named: dict[str, int], extended: str) -> list[str]:
    if value == "default":
        return []
    if value in named:
        return [str(named[value])]
    try:
        r, g, b = (int(value[i : i + 2], 16) for i in (0, 2, 4))
    except ValueError:
        return []
    return [extended, "2", str(r), str(g), str(b)]


def _row_ansi(row: Row | None, *, trim: bool = True) -> str:
    """Return the row rendered with SGR; trailing unstyled blanks trimmed if ``trim``."""
    cells = [cell for cell in _cells(row) if cell.data]
    while trim and cells and cells[-1].data.isspace() and _style(cells[-1]) == _PLAIN:
        cells.pop()
    out: list[str] = []
    current = _PLAIN
    for cell in cells:
        style = _style(cell)
        if style != current:
            if current != _PLAIN:
                out.append("\x1b[0m")
            if style != _PLAIN:
                out.append(_sgr(style))
            current = style
        out.append(cell.data)
    if current != _PLAIN:
        out.append("\x1b[0m")
    return "".join(out)


class PaneScreen:
    """The emulated terminal of one pane; feed it the program's output with :meth:`feed`.

    Never raises on input: any bytes, in any chunking (invalid UTF-8 reads
    as U+FFFD).
    """

    def __init__(self, *, cols: int = 80, rows: int = 24) -> None:
        self._terminal = _Terminal(cols, rows)
        self._stream = pyte.ByteStream(self._terminal)
        self._carry = b""
        self._in_string = False
        self.revision = 0
        """Incremented on every :meth:`feed` with data."""
        self._scroll = 0
        self._viewport: tuple[tuple[int, ...], tuple[list[str], tuple[int, int], bool]] | None = (
            None
        )

    @property
    def cols(self) -> int:
        """Columns of the screen."""
        return int(self._terminal.columns)

    @property
    def rows(self) -> int:
        """Rows of the screen."""
        return int(self._terminal.lines)

    @property
    def alternate(self) -> bool:
        """Whether the program switched to the alternate screen."""
        return self._terminal.alternate

    @property
    def bracketed_paste(self) -> bool:
        """Whether the program enabled bracketed paste (DECSET 2004)."""
        return _BRACKETED_PASTE in self._terminal.mode

    @property
    def cursor(self) -> tuple[int, int]:
        """The cursor's (column, row), 0-based."""
        return self._terminal.cursor.x, self._terminal.cursor.y

    @property
    def scrollback_rows(self) -> int:
        """Rows held above the screen (0 on the alternate screen, which has none)."""
        return 0 if self.alternate else len(self._terminal.scrollback)

    @property
    def title(self) -> str:
        """The terminal title the program set (OSC 0/2), or ``""``."""
        return str(self._terminal.title)

    def feed(self, data: bytes) -> None:
        """Apply the program's output ``data``."""
        if not data:
            return
        try:
            self._stream.feed(self._drop_strings(data))
        except Exception:  # pyte must never take a pane down; keep what it drew
            self._stream = pyte.ByteStream(self._terminal)
        self.revision += 1

    def _drop_strings(self, data: bytes) -> bytes:
        """Remove DCS/SOS/PM/APC strings (``ESC P`` to ``ST``), which pyte would draw.

        Queries such as XTGETTCAP and kitty graphics arrive this way; herdr's
        emulator consumes them. Works across chunk boundaries.
        """
        data = self._carry + data
        self._carry = b""
        out = bytearray()
        position = 0
        end = len(data)
        while position < end:
            if self._in_string:
                stop = data.find(b"\x1b\\", position)
                if stop < 0:
                    if data.endswith(b"\x1b"):
                        self._carry = b"\x1b"
                    return bytes(out)
                self._in_string = False
                position = stop + 2
                continue
            escape = data.find(b"\x1b", position)
            if escape < 0:
                out += data[position:]
                break
            if escape == end - 1:
                out += data[position:escape]
                self._carry = b"\x1b"
                break
            if data[escape + 1] in b"PX^_":
                out += data[position:escape]
                self._in_string = True
                position = escape + 2
            else:
                out += data[position : escape + 2]
                position = escape + 2
        return bytes(out)

    # -- the viewport (what a terminal stream shows)
    @property
    def scroll_offset(self) -> int:
        """Rows the viewport is scrolled up from the bottom (0 on the alternate screen)."""
        return min(self._scroll, self.scrollback_rows)

    def scroll(self, lines: int) -> bool:
        """Scroll the viewport ``lines`` rows up (negative: down), within the scrollback.

        Returns whether the viewport moved.
        """
        before = self.scroll_offset
        self._scroll = max(0, min(before + lines, self.scrollback_rows))
        return self._scroll != before

    def scroll_reset(self) -> bool:
        """Return the viewport to the bottom (herdr does on input); whether it moved."""
        moved = self.scroll_offset != 0
        self._scroll = 0
        return moved

    @property
    def mouse_reporting(self) -> bool:
        """Whether the program asked for mouse reports (DECSET 1000, 1002 or 1003)."""
        mode = self._terminal.mode
        return any(code << 5 in mode for code in (1000, 1002, 1003))

    @property
    def application_cursor_keys(self) -> bool:
        """Whether the program set application cursor keys (DECCKM)."""
        return 1 << 5 in self._terminal.mode

    def viewport(self, width: int) -> tuple[list[str], tuple[int, int], bool]:
        """Return the viewport: rows as ANSI cut to ``width`` cells, the cursor, its visibility.

        The viewport is the screen, or the rows :attr:`scroll_offset` above it
        (then the cursor is hidden).
        """
        offset = self.scroll_offset
        cursor = self._terminal.cursor
        key = (self.revision, offset, width, self.cols, self.rows, cursor.x, cursor.y)
        cached = self._viewport
        if cached is not None and cached[0] == key:  # another stream on this pane just asked
            return cached[1]
        rows = self._all_rows()
        bottom = len(rows) - offset
        shown = rows[max(0, bottom - self.rows) : bottom]
        visible = offset == 0 and not cursor.hidden
        view = [_row_ansi_cut(row, width) for row in shown], (cursor.x, cursor.y), visible
        self._viewport = (key, view)
        return view

    def clear(self) -> None:
        """Clear the screen and the scrollback and home the cursor (CSI H, 2 J, 3 J)."""
        self.feed(b"\x1b[H\x1b[2J\x1b[3J")  # a new revision: streams repaint

    def replay(self) -> bytes:
        """Return output that redraws this screen on a fresh one of the same size.

        The scrollback and the primary screen (soft wraps kept), the alternate
        screen when the program is on it, the title, the input modes a client
        depends on (bracketed paste, application cursor keys, mouse reports)
        and the cursor. A live handoff feeds it to the successor's screen.
        """
        term = self._terminal
        primary = term._primary if self.alternate else term.buffer
        rows: list[Row | None] = [*term.scrollback]
        rows += [(primary or {}).get(y) for y in range(term.lines)]
        out: list[str] = []
        if self.title:
            out.append(f"\x1b]2;{self.title}\x07")
        for index, row in enumerate(rows):
            if _is_wrapped(row):
                out.append(_row_ansi(row, trim=False))  # the next row continues it
                continue
            out.append(_row_ansi(row))
            if index < len(rows) - 1:
                out.append("\r\n")
        if self.alternate:
            saved = term._saved_cursor
            if saved is not None:
                out.append(f"\x1b[{saved[1] + 1};{saved[0] + 1}H")
            out.append("\x1b[?1049h")
            out += [f"\x1b[{y + 1};1H{_row_ansi(term.buffer.get(y))}" for y in range(term.lines)]
        x, y = self.cursor
        out.append(f"\x1b[{y + 1};{x + 1}H")
        modes_on = [code for code in (1, 1000, 1002, 1003, 2004) if code << 5 in term.mode]
        out += [f"\x1b[?{code}h" for code in modes_on]
        if term.cursor.hidden:
            out.append("\x1b[?25l")
        return "".join(out).encode()

    def take_replies(self) -> bytes:
        """Return (and forget) what the terminal answered to the program's queries."""
        replies = bytes(self._terminal.replies)
        self._terminal.replies.clear()
        return replies

    def resize(self, cols: int, rows: int) -> None:
        """Resize to ``cols`` x ``rows`` (each at least 1)."""
        self._terminal.resize(max(1, rows), max(1, cols))

    # -- rows
    def _screen_rows(self) -> list[Row | None]:
        buffer = self._terminal.buffer
        return [buffer.get(y) for y in range(self._terminal.lines)]

    def _all_rows(self) -> list[Row | None]:
        rows: list[Row | None] = [] if self.alternate else list(self._terminal.scrollback)
        return rows + self._screen_rows()

    def screen_lines(self) -> list[str]:
        """Return the screen's rows as text, trailing whitespace trimmed, blank rows kept."""
        return [_row_text(row) for row in self._screen_rows()]

    # -- reads
    def read(self, source: str, *, lines: int | None = None, ansi: bool = False) -> ReadOutcome:
        """Return ``source`` (visible, recent, recent_unwrapped, detection) as herdr would.

        ``lines`` is capped at 1000; ``ansi`` renders SGR styling except for
        ``detection``. An unknown ``source`` reads as ``visible``.
        """
        limit = clamp_lines(lines)
        if source in ("recent", "recent_unwrapped"):
            return self._recent(DEFAULT_RECENT_LINES if limit is None else limit, source, ansi)
        if source == "detection":
            text = self._recent(self.rows, "recent", False).text
            return limit_lines(text, limit)
        render = _row_ansi if ansi else _row_text
        rows = trim_trailing_blank_rows([render(row) for row in self._screen_rows()])
        return limit_lines(join_rows(rows), limit)

    def _recent(self, lines: int, source: str, ansi: bool) -> ReadOutcome:
        rows = self._all_rows()
        screen = self._screen_rows()
        last_content = next(
            (y for y in range(len(screen) - 1, -1, -1) if _row_text(screen[y])), None
        )
        window = recent_window(
            total_rows=len(rows),
            screen_rows=len(screen),
            cursor_row=self._terminal.cursor.y,
            last_content_row=last_content,
            lines=lines,
            alternate=self.alternate,
        )
        truncated = len(rows) > lines
        chosen = [rows[i] for i in window]
        render = _row_ansi if ansi else _row_text
        if source == "recent":
            rendered = trim_trailing_blank_rows([render(row) for row in chosen])
            return ReadOutcome(join_rows(rendered), truncated)
        logical: list[str] = []
        pending: list[str] = []
        for row in chosen:
            if _is_wrapped(row):
                pending.append(_row_ansi(row, trim=False) if ansi else _row_full(row))
                continue
            pending.append(render(row))
            logical.append("".join(pending))
            pending = []
        if pending:
            logical.append("".join(pending).rstrip() if not ansi else "".join(pending))
        return ReadOutcome(join_rows(trim_trailing_blank_rows(logical)), truncated)


def _row_ansi_cut(row: Row | None, width: int) -> str:
    """Return the row's first ``width`` cells with SGR (a wide glyph cut in half is dropped)."""
    if row and max(row) >= width:
        cut = _Row(row.default)
        for x, cell in row.items():
            if x < width and not (x == width - 1 and wcwidth(cell.data) == 2):
                cut[x] = cell
        row = cut
    return _row_ansi(row)


def _row_full(row: Row | None) -> str:
    """Return a soft-wrapped row's characters untrimmed (it continues on the next row)."""
    return "".join(cell.data for cell in _cells(row))
