"""A small line-oriented terminal model for ``pane.read`` and output matching.

herdr runs a full terminal emulator per pane; the reference server needs only
what ``pane.read`` returns: the text of the last lines, with or without ANSI
styling. :class:`PaneScreen` is fed the PTY's output and keeps logical lines
(split at LF) in two forms:

* **text**: escape sequences removed; CR returns to column 0 and later
  characters overwrite; BS moves left; ``ESC[K`` erases to the end of the
  line; ``ESC[2J``/``ESC c`` clear everything seen so far (a ``clear``);
* **ansi**: the raw line with its SGR/CSI sequences kept (CR/LF pairs folded).

``visible`` is the last ``rows`` lines; ``recent`` wraps logical lines at
``cols`` and returns the last ``lines`` rows (80 by default);
``recent_unwrapped`` returns the last ``lines`` logical lines; ``detection``
is ``visible``. This is a deliberate simplification (no cursor addressing or
alternate screen), chosen over a terminal-emulator dependency because the
project may not add runtime dependencies and shells and line-oriented
programs are what the reference server runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DEFAULT_RECENT_LINES", "MAX_READ_LINES", "PaneScreen", "ReadOutcome", "strip_ansi"]

MAX_READ_LINES = 1000
"""herdr caps ``lines`` at 1000."""
DEFAULT_RECENT_LINES = 80
"""Rows ``recent`` sources return when ``lines`` is not given."""
MAX_SCROLLBACK = 10_000
"""Logical lines kept per pane."""

_ESCAPE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC, BEL or ST terminated
    r"|\x1b[PX^_][^\x1b]*\x1b\\"  # DCS/SOS/PM/APC
    r"|\x1b[()*+][0-9A-Za-z]"  # charset designation
    r"|\x1b[ -/]*[0-~]"  # other two-byte escapes
)
_PARTIAL_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*|[PX^_][^\x1b]*|[()*+])?$")


def strip_ansi(text: str) -> str:
    """Remove escape sequences from ``text`` (nothing else)."""
    return _ESCAPE.sub("", text)


@dataclass(frozen=True)
class ReadOutcome:
    """What :meth:`PaneScreen.read` returns: the text and whether lines were left out."""

    text: str
    truncated: bool
    lines: tuple[str, ...]
    """The plain-text lines the read covered (for line-by-line matching)."""


class _Line:
    __slots__ = ("ansi", "cells", "col")

    def __init__(self) -> None:
        self.cells: list[str] = []
        self.col = 0
        self.ansi: list[str] = []

    def put(self, ch: str) -> None:
        if self.col < len(self.cells):
            self.cells[self.col] = ch
        else:
            self.cells.extend(" " * (self.col - len(self.cells)))
            self.cells.append(ch)
        self.col += 1

    @property
    def text(self) -> str:
        return "".join(self.cells).rstrip()


class PaneScreen:
    """The text model of one pane; feed it output with :meth:`feed`. Never raises on input."""

    def __init__(self, *, cols: int = 80, rows: int = 24) -> None:
        self.cols = cols
        self.rows = rows
        self._done: list[_Line] = []
        self._current = _Line()
        self._pending = ""
        self._decoder_tail = b""
        self.revision = 0
        """Incremented on every :meth:`feed` that changed something."""

    def feed(self, data: bytes) -> None:
        """Apply PTY output ``data`` (any chunking; invalid UTF-8 becomes U+FFFD)."""
        if not data:
            return
        raw = self._decoder_tail + data
        cut = len(raw)
        # keep an incomplete UTF-8 sequence at the end for the next chunk
        for back in range(1, min(4, len(raw)) + 1):
            byte = raw[-back]
            if byte & 0xC0 == 0x80:
                continue
            if byte >= 0xC0:
                need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
                if back < need:
                    cut = len(raw) - back
            break
        self._decoder_tail = raw[cut:]
        text = self._pending + raw[:cut].decode("utf-8", "replace")
        partial = _PARTIAL_ESCAPE.search(text)
        if partial and len(text) - partial.start() < 4096:
            self._pending = text[partial.start() :]
            text = text[: partial.start()]
        else:
            self._pending = ""
        self._apply(text)
        self.revision += 1

    def _apply(self, text: str) -> None:
        position = 0
        for match in _ESCAPE.finditer(text):
            self._plain(text[position : match.start()])
            self._escape(match.group())
            position = match.end()
        self._plain(text[position:])

    def _escape(self, seq: str) -> None:
        line = self._current
        if seq in ("\x1b[2J", "\x1b[3J", "\x1bc"):
            self._done.clear()
            self._current = _Line()
            return
        if seq in ("\x1b[K", "\x1b[0K"):
            del line.cells[line.col :]
        elif seq == "\x1b[2K":
            line.cells.clear()
        line.ansi.append(seq)

    def _plain(self, text: str) -> None:
        if not text:
            return
        line = self._current
        for ch in text:
            if ch == "\n":
                self._done.append(line)
                if len(self._done) > MAX_SCROLLBACK:
                    del self._done[: len(self._done) - MAX_SCROLLBACK]
                line = self._current = _Line()
            elif ch == "\r":
                line.col = 0
            elif ch == "\b":
                line.col = max(0, line.col - 1)
            elif ch == "\t":
                line.col = (line.col // 8 + 1) * 8
            elif ch >= " ":
                line.put(ch)
                line.ansi.append(ch)
            # other C0 controls (BEL, SO/SI, ...) draw nothing

    def _logical(self) -> list[_Line]:
        lines = list(self._done)
        if self._current.cells or self._current.ansi:
            lines.append(self._current)
        return lines

    def read(self, source: str, *, lines: int | None = None, ansi: bool = False) -> ReadOutcome:
        """Return the text of ``source``: visible, recent, recent_unwrapped or detection.

        ``lines`` is clamped to :data:`MAX_READ_LINES`. Lines are joined with
        newlines; trailing blank lines are dropped.
        """
        limit = None if lines is None else max(0, min(lines, MAX_READ_LINES))
        logical = self._logical()
        while logical and not logical[-1].text and not (ansi and logical[-1].ansi):
            logical.pop()
        plain_rows: list[str]
        ansi_rows: list[str]
        if source == "recent":
            plain_rows, ansi_rows = [], []
            for line in logical:
                text = line.text or ""
                chunks = [text[i : i + self.cols] for i in range(0, len(text), self.cols)] or [""]
                plain_rows += chunks
                ansi_rows += chunks if not ansi else ["".join(line.ansi)] + [""] * (len(chunks) - 1)
            want = DEFAULT_RECENT_LINES if limit is None else limit
        else:
            plain_rows = [line.text for line in logical]
            ansi_rows = ["".join(line.ansi) for line in logical]
            if source == "recent_unwrapped":
                want = DEFAULT_RECENT_LINES if limit is None else limit
            else:  # visible / detection: the screen, or its last `lines` rows
                screen = min(self.rows, len(plain_rows))
                plain_rows = plain_rows[len(plain_rows) - screen :]
                ansi_rows = ansi_rows[len(ansi_rows) - screen :]
                want = len(plain_rows) if limit is None else limit
        truncated = len(plain_rows) > want
        start = len(plain_rows) - want if truncated else 0
        chosen_plain = plain_rows[start:] if want else []
        chosen = (ansi_rows if ansi else plain_rows)[start:] if want else []
        return ReadOutcome(text="\n".join(chosen), truncated=truncated, lines=tuple(chosen_plain))
