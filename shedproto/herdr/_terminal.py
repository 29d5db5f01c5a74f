r"""herdr's terminal session streams: the JSON-lines records, the commands, the frame encoder.

``herdr terminal session control|observe TARGET`` prints one JSON record a
line on stdout and (control only) reads one JSON command a line on stdin
(herdrdev/herdr ``src/client/mod.rs:1061-1215@1c76079f``):

* stdout: ``terminal.frame`` (``seq``, ``encoding`` ``"ansi"``, ``width``,
  ``height``, ``full``, base64 ``bytes``) and, last, ``terminal.closed``
  (``reason``, ``null`` when the server gave none). herdr builds them with
  ``serde_json::json!``, whose map sorts its keys, so the keys come out in
  alphabetical order (:func:`encode_record`).
* stdin: ``terminal.input`` (``text`` or base64 ``bytes``, not both; neither
  sends nothing), ``terminal.resize`` (``cols``/``rows`` > 0, optional
  ``cell_width_px``/``cell_height_px``), ``terminal.scroll`` (``direction``
  ``up``/``down``, ``lines`` > 0, ``source`` ``wheel``/``page_key``, optional
  ``column``/``row``/``modifiers``) and ``terminal.release``. A bad line is
  skipped with ``herdr: terminal session control input ignored: <why>`` on
  stderr (:func:`parse_command` raises :class:`InvalidCommandError` with that
  ``why``); blank lines are ignored; the end of stdin releases.

herdr sends errors on the same channel as closes: a target that does not
resolve, a refused second controller and a takeover all end the stream with
``terminal.closed`` and herdr's reason (:class:`CloseReason`), and the CLI
exits 0. herdr has no ``terminal.error`` record (``git log -S`` over every
branch of herdrdev/herdr finds none), so neither has this module.

Between the shim and the reference server the records travel over the
client socket (``herdr-client.sock``, :func:`~shedproto.herdr.client_socket_path`)
where herdr speaks its binary thin-client protocol; shedproto speaks these
same JSON lines there, after one opening line, :class:`TerminalOpen`. The
server's frames are the CLI's records byte for byte, so the CLI copies them.

:class:`FrameEncoder` turns successive screens (rows already rendered as ANSI
text) into frame bytes the way herdr's blit encoder does
(``src/protocol/render_ansi.rs:447-509@1c76079f``): synchronized output, the
cursor hidden while painting, a full redraw on the first frame and on a size
change, otherwise only the rows that changed, and no frame at all when
nothing changed (``src/server/render_stream.rs:82@1c76079f``).
"""

from __future__ import annotations

import base64
import binascii
import builtins
from collections.abc import Sequence
from enum import Enum
from typing import Final, Literal

import msgspec

from shedproto._errors import (
    ErrorCode,
    LocalProtocolError,
    RemoteProtocolError,
    remote_error_from_msgspec,
)

__all__ = [
    "DEFAULT_SESSION_COLS",
    "DEFAULT_SESSION_ROWS",
    "MAX_DIMENSION",
    "CloseReason",
    "InvalidCommandError",
    "FrameEncoder",
    "SessionMode",
    "TerminalClosed",
    "TerminalCommand",
    "TerminalFrame",
    "TerminalInput",
    "TerminalOpen",
    "TerminalRecord",
    "TerminalRelease",
    "TerminalResize",
    "TerminalScroll",
    "decode_open",
    "decode_record",
    "encode_command",
    "encode_record",
    "input_bytes",
    "parse_command",
    "parse_dimension",
]

DEFAULT_SESSION_COLS: Final = 120
"""``--cols`` when not given (herdrdev/herdr ``src/cli.rs:620@1c76079f``)."""
DEFAULT_SESSION_ROWS: Final = 40
"""``--rows`` when not given (``src/cli.rs:621@1c76079f``)."""
MAX_DIMENSION: Final = 65535
"""herdr's sizes are ``u16``."""

SessionMode = Literal["control", "observe", "attach"]
"""``terminal session control``, ``terminal session observe``, ``terminal attach``."""


class _Record(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    pass


class TerminalFrame(_Record, frozen=True, tag="terminal.frame"):
    """One rendered frame: ANSI ``bytes`` (base64) for a ``width`` x ``height`` viewport.

    ``seq`` counts this stream's frames from 1; ``full`` marks a full redraw.
    """

    seq: int
    width: int
    height: int
    full: bool
    bytes: str
    encoding: str = "ansi"

    def data(self) -> builtins.bytes:
        """Return the decoded ANSI bytes (``b""`` if ``bytes`` is not valid base64)."""
        try:
            return base64.b64decode(self.bytes, validate=True)
        except (binascii.Error, ValueError):
            return b""


class TerminalClosed(_Record, frozen=True, tag="terminal.closed"):
    """The stream ended; ``reason`` is herdr's (see :class:`CloseReason`)."""

    reason: str | None = None


TerminalRecord = TerminalFrame | TerminalClosed
"""What the stream prints on stdout."""


class TerminalInput(_Record, frozen=True, tag="terminal.input"):
    """Bytes for the terminal: ``text`` (UTF-8) or base64 ``bytes``, not both."""

    text: str | None = None
    bytes: str | None = None


class TerminalResize(_Record, frozen=True, tag="terminal.resize"):
    """Resize the controller's viewport (and so the terminal) to ``cols`` x ``rows``."""

    cols: int
    rows: int
    cell_width_px: int = 0
    cell_height_px: int = 0


class TerminalScroll(_Record, frozen=True, tag="terminal.scroll"):
    """Scroll the terminal ``lines`` rows ``up`` or ``down`` (wheel or page key)."""

    direction: Literal["up", "down"]
    lines: int
    source: Literal["wheel", "page_key"] = "wheel"
    column: int | None = None
    row: int | None = None
    modifiers: int = 0


class TerminalRelease(_Record, frozen=True, tag="terminal.release"):
    """Give the terminal back and end the stream (``terminal.closed`` ``detached``)."""


TerminalCommand = TerminalInput | TerminalResize | TerminalScroll | TerminalRelease
"""What a controller writes on stdin."""


class TerminalOpen(_Record, frozen=True, tag="terminal.open"):
    """The first line a stream client sends on the client socket (shedproto's wire).

    ``target`` is a terminal id, pane id or agent name (a terminal id for
    ``attach``); ``cols``/``rows`` the client's viewport.
    """

    mode: SessionMode
    target: str
    cols: int = DEFAULT_SESSION_COLS
    rows: int = DEFAULT_SESSION_ROWS
    takeover: bool = False


class CloseReason(str, Enum):
    """herdr's ``terminal.closed`` reasons that are fixed strings (``src/server/headless.rs``)."""

    DETACHED = "detached"
    """The controller released (``terminal.release`` or end of stdin); line 2774."""
    TAKEN_OVER = "terminal attach taken over"
    """Another controller took over with ``--takeover``; line 2870."""
    SHUTTING_DOWN = "server is shutting down"
    """The server stopped; line 1771."""

    @staticmethod
    def not_found(action: str, target: str) -> str:
        """Return the reason for a session target that resolves to no terminal (line 1874)."""
        return f"terminal session {action} failed: terminal target {target} not found"

    @staticmethod
    def attach_not_found(terminal_id: str) -> str:
        """Return the reason for ``terminal attach`` of an unknown terminal id (line 2827)."""
        return f"terminal attach failed: terminal {terminal_id} not found"

    @staticmethod
    def busy(terminal_id: str) -> str:
        """Return the reason a second controller without ``--takeover`` gets (line 2858)."""
        return (
            f"terminal attach failed: terminal {terminal_id} already has an attached client; "
            "retry with --takeover"
        )

    @staticmethod
    def exited(terminal_id: str) -> str:
        """Return the reason when the terminal's pane closed or its program exited (line 2598)."""
        return f"terminal {terminal_id} exited"


class InvalidCommandError(LocalProtocolError):
    """A stdin line herdr's CLI skips; ``message`` is herdr's reason (after ``input ignored:``)."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.INVALID_ARGUMENT, message)


_COMMANDS = msgspec.json.Decoder(TerminalCommand)
_RECORDS = msgspec.json.Decoder(TerminalRecord)
_OPEN = msgspec.json.Decoder(TerminalOpen)
_ENCODER = msgspec.json.Encoder(order="sorted")


def _u16(value: int | None) -> bool:
    return value is None or 0 <= value <= MAX_DIMENSION


def parse_command(line: bytes | str) -> TerminalCommand:
    """Decode and check one stdin line as herdr's CLI does (``terminal_control_command_from_json``).

    Raises:
        InvalidCommandError: the line is not a valid command; ``message`` is herdr's
            reason (``invalid json command: ...``, ``terminal.input accepts text
            or bytes, not both``, ...). Nothing is sent for such a line.

    """
    try:
        command = _COMMANDS.decode(line)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise InvalidCommandError(f"invalid json command: {exc}") from None
    if isinstance(command, TerminalInput):
        input_bytes(command)
    elif isinstance(command, TerminalResize):
        if not (_u16(command.cols) and _u16(command.rows)):
            raise InvalidCommandError("invalid json command: terminal.resize cols and rows are u16")
        if not (0 <= command.cell_width_px < 2**32 and 0 <= command.cell_height_px < 2**32):
            raise InvalidCommandError("invalid json command: terminal.resize cell sizes are u32")
        if command.cols == 0 or command.rows == 0:
            raise InvalidCommandError("terminal.resize cols and rows must be greater than 0")
    elif isinstance(command, TerminalScroll):
        if not (_u16(command.lines) and _u16(command.column) and _u16(command.row)):
            raise InvalidCommandError("invalid json command: terminal.scroll values are u16")
        if not 0 <= command.modifiers <= 255:
            raise InvalidCommandError("invalid json command: terminal.scroll modifiers is a u8")
        if command.lines == 0:
            raise InvalidCommandError("terminal.scroll lines must be greater than 0")
    return command


def input_bytes(command: TerminalInput) -> bytes:
    """Return the bytes a ``terminal.input`` sends (``b""`` for neither field).

    Raises:
        InvalidCommandError: both fields are set, or ``bytes`` is not base64.

    """
    if command.text is not None and command.bytes is not None:
        raise InvalidCommandError("terminal.input accepts text or bytes, not both")
    if command.text is not None:
        return command.text.encode()
    if command.bytes is None:
        return b""
    try:
        return base64.b64decode(command.bytes, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidCommandError(f"invalid terminal.input bytes: {exc}") from None


def encode_command(command: TerminalCommand | TerminalOpen) -> bytes:
    """Encode a command (or the opening line) as one JSON line with its newline."""
    return _ENCODER.encode(command) + b"\n"


def encode_record(record: TerminalRecord) -> bytes:
    """Encode a record as herdr prints it: keys sorted, ``reason`` kept as ``null``, newline."""
    return _ENCODER.encode(record) + b"\n"


def decode_record(line: bytes | str) -> TerminalRecord:
    """Decode one stdout record.

    Raises:
        RemoteProtocolError: ``MALFORMED_FRAME`` (not JSON) or ``SCHEMA_VIOLATION``.

    """
    try:
        return _RECORDS.decode(line)
    except msgspec.DecodeError as exc:
        raise remote_error_from_msgspec(exc) from None


def decode_open(line: bytes | str) -> TerminalOpen:
    """Decode the opening line of a stream connection.

    Raises:
        RemoteProtocolError: ``MALFORMED_FRAME`` (not JSON) or ``SCHEMA_VIOLATION``
            (not ``terminal.open``, or a size outside 1..65535).

    """
    try:
        opened = _OPEN.decode(line)
    except msgspec.DecodeError as exc:
        raise remote_error_from_msgspec(exc) from None
    if not (0 < opened.cols <= MAX_DIMENSION and 0 < opened.rows <= MAX_DIMENSION):
        raise RemoteProtocolError(
            ErrorCode.SCHEMA_VIOLATION, "cols and rows must be between 1 and 65535"
        )
    return opened


def parse_dimension(raw: str, flag: str) -> int:
    """Parse ``--cols``/``--rows`` as herdr's ``parse_terminal_dimension`` (``src/cli.rs:663``).

    Raises:
        ValueError: herdr's message (``--cols must be greater than 0``, ...).

    """
    if not raw.isascii() or not raw.lstrip("+").isdigit() or int(raw) > MAX_DIMENSION:
        raise ValueError(f"{flag} must be an integer between 1 and {MAX_DIMENSION}")
    value = int(raw)
    if value == 0:
        raise ValueError(f"{flag} must be greater than 0")
    return value


_SYNC_START: Final = "\x1b[?2026h\x1b[?25l\x1b]8;;\x1b\\"
_SYNC_END: Final = "\x1b[?2026l"


class FrameEncoder:
    r"""Encode successive screens as herdr's terminal frames; one encoder per stream.

    :meth:`encode` takes the viewport's rows (ANSI text, one string a row,
    already cut to ``width`` cells) and the cursor, and returns the next
    :class:`TerminalFrame`, or ``None`` when the screen is what the last frame
    showed. :meth:`repaint` makes the next frame a full redraw.
    """

    __slots__ = ("_cursor", "_full_next", "_rows", "_size", "seq")

    def __init__(self) -> None:
        self.seq = 0
        """The ``seq`` of the last frame returned (0 before the first)."""
        self._rows: list[str] | None = None
        self._size = (0, 0)
        self._cursor: tuple[int, int, bool] | None = None
        self._full_next = False

    def repaint(self) -> None:
        """Make the next :meth:`encode` a full redraw even if nothing changed."""
        self._full_next = True

    def encode(
        self,
        rows: Sequence[str],
        *,
        width: int,
        height: int,
        cursor: tuple[int, int] = (0, 0),
        cursor_visible: bool = True,
    ) -> TerminalFrame | None:
        """Return the frame that brings the last screen to ``rows``, or ``None`` if equal.

        ``rows`` beyond ``height`` are ignored and missing rows are blank; the
        cursor is clamped into the viewport. The first frame and a frame after
        a size change are full redraws (the first one clears the screen first).
        """
        shown = [rows[y] if y < len(rows) else "" for y in range(height)]
        x = min(max(cursor[0], 0), max(width - 1, 0))
        y = min(max(cursor[1], 0), max(height - 1, 0))
        state = (x, y, cursor_visible)
        first = self._rows is None
        full = first or self._full_next or self._size != (width, height)
        if not full and shown == self._rows and state == self._cursor:
            return None
        out = [_SYNC_START]
        if first:
            out.append("\x1b[2J")
        previous = self._rows or []
        for row, text in enumerate(shown):
            if full or row >= len(previous) or previous[row] != text:
                out.append(f"\x1b[{row + 1};1H\x1b[0m\x1b[2K{text}\x1b[0m")
        cup = f"\x1b[{y + 1};{x + 1}H"
        show = "\x1b[?25h" if cursor_visible else "\x1b[?25l"
        out += [cup, show, _SYNC_END, cup, show]
        self._rows, self._size, self._cursor, self._full_next = shown, (width, height), state, False
        self.seq += 1
        data = "".join(out).encode()
        return TerminalFrame(
            seq=self.seq,
            width=width,
            height=height,
            full=full,
            bytes=base64.b64encode(data).decode("ascii"),
        )
