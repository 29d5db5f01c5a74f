"""``herdr terminal``: ``session control|observe``, ``attach`` and ``title set|clear``.

As herdr's CLI (herdrdev/herdr ``src/cli.rs:397-720`` and
``src/client/mod.rs:929-1215@1c76079f``):

* ``session control|observe TARGET [--takeover] [--cols N] [--rows N]``
  (default 120 x 40) print the stream's JSON records on stdout, flushed one
  a line, and exit 0 when it closes, whatever the reason. ``control`` reads
  JSON commands on stdin: a bad line is reported on stderr (``herdr: terminal
  session control input ignored: <why>``) and skipped, blank lines are
  ignored, ``terminal.release`` and the end of stdin release the terminal.
  ``observe`` never reads stdin. An unknown option is ``unknown terminal
  session control option: X`` plus the usage (exit 2); a size that is not a
  ``u16`` > 0 is Rust's ``Error: Custom { kind: InvalidInput, .. }`` (exit 1).
* ``attach TERMINAL_ID [--takeover]`` is direct attach: the terminal's
  frames go to the real terminal (raw mode), its keys to the pane; ``ctrl+b
  q`` detaches, ``ctrl+b ctrl+b`` sends ``ctrl+b``. It needs a terminal, as
  herdr's (its ``ratatui::init``): without one it exits 1 with ``herdr:
  failed to set up terminal: <os error>``.
* ``title set TITLE`` / ``title clear`` send ``client.window_title.set`` /
  ``.clear`` on the API socket and print the answer line.
* Without a server: ``herdr: failed to connect to server: <os error>``, then
  herdr's two hint lines, exit 1.

The stream travels over the client socket beside the API socket (see
:mod:`shedproto.herdr._terminal`).
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ._runtime import CliError, Context, Usage

if TYPE_CHECKING:
    from shedproto.clients.herdr import BlockingTerminalSession
    from shedproto.herdr._terminal import TerminalScroll

__all__ = ["TERMINAL", "agent_attach"]

Handler = Callable[[Context, Sequence[str]], int]

OBSERVE_USAGE = "usage: herdr terminal session observe <target> [--cols N] [--rows N]"
CONTROL_USAGE = (
    "usage: herdr terminal session control <target> [--takeover] [--cols N] [--rows N]"
)
ATTACH_USAGE = "usage: herdr terminal attach <terminal_id> [--takeover]"
TITLE_USAGE = ["usage: herdr terminal title set <title>", "       herdr terminal title clear"]
HELP = [
    "herdr terminal commands:",
    "  herdr terminal attach <terminal_id> [--takeover]",
    "  herdr terminal session control <target> [--takeover] [--cols N] [--rows N]",
    "  herdr terminal session observe <target> [--cols N] [--rows N]",
    "  herdr terminal title set <title>",
    "  herdr terminal title clear",
    "  detach from direct attach with ctrl+b q; send literal ctrl+b with ctrl+b ctrl+b",
]
_HELP_WORDS = ("help", "--help", "-h")
_PREFIX = 0x02  # ctrl+b


class InvalidInputError(CliError):
    """A value herdr rejects with ``io::ErrorKind::InvalidInput`` from ``main``."""

    kind = "InvalidInput"


def _options(args: Sequence[str], usage: str, command: str, takeover_allowed: bool) -> Any:
    from shedproto.herdr._terminal import (
        DEFAULT_SESSION_COLS,
        DEFAULT_SESSION_ROWS,
        parse_dimension,
    )

    if not args:
        raise Usage(usage)
    if args[0] in _HELP_WORDS:
        raise Usage(usage, 0)
    target, cols, rows, takeover = args[0], DEFAULT_SESSION_COLS, DEFAULT_SESSION_ROWS, False
    index = 1
    while index < len(args):
        arg = args[index]
        if arg == "--takeover" and takeover_allowed:
            takeover, index = True, index + 1
        elif arg in ("--cols", "--rows"):
            if index + 1 >= len(args):
                raise Usage(usage)
            try:
                value = parse_dimension(args[index + 1], arg)
            except ValueError as exc:
                raise InvalidInputError(str(exc)) from None
            cols, rows = (value, rows) if arg == "--cols" else (cols, value)
            index += 2
        elif arg in _HELP_WORDS:
            raise Usage(usage, 0)
        else:
            raise Usage(f"unknown terminal session {command} option: {arg}\n{usage}")
    return target, cols, rows, takeover


def _open(ctx: Context, target: str, **kwargs: Any) -> BlockingTerminalSession:
    """Open the stream, or raise :class:`ConnectFailedError` with herdr's failure text."""
    from shedproto.clients.herdr import BlockingTerminalSession
    from shedproto.herdr import client_socket_path

    path = client_socket_path(ctx.env, session=ctx.session)
    session = BlockingTerminalSession(path, target, client_socket=True, **kwargs)
    try:
        session.open()
    except OSError as exc:
        raise ConnectFailedError(path, exc) from None
    return session


class ConnectFailedError(Exception):
    """herdr's ``ClientError::ConnectionFailed``: printed as three lines, exit 1."""

    def __init__(self, path: str, error: OSError) -> None:
        # Rust's io::Error display: the C library's text and the errno
        reason = str(error)
        if error.errno:
            reason = f"{os.strerror(error.errno)} (os error {error.errno})"
        super().__init__(
            f"herdr: failed to connect to server: {reason}\n"
            "Is herdr server running? Start it with `herdr server`.\n"
            f"Socket path: {path}"
        )


def _pump_records(ctx: Context, session: BlockingTerminalSession) -> int:
    """Print each record as one flushed line until the stream closes; exit 0 (herdr's)."""
    from shedproto.herdr._terminal import encode_record

    for record in session:
        ctx.stdout.write(encode_record(record).decode())
        ctx.stdout.flush()
    return 0


def _forward_stdin(ctx: Context, session: BlockingTerminalSession, stdin: Any) -> None:
    """Send each valid command line; release at ``terminal.release`` or the end of stdin."""
    from shedproto.herdr._terminal import InvalidCommandError, TerminalRelease, parse_command

    try:
        for line in stdin:
            if not line.strip():
                continue
            try:
                command = parse_command(line)
            except InvalidCommandError as exc:
                ctx.err(f"herdr: terminal session control input ignored: {exc.message}")
                ctx.stderr.flush()
                continue
            session.send(command)
            if isinstance(command, TerminalRelease):
                return
        session.release()
    except (OSError, ValueError):
        return  # the stream ended meanwhile (herdr's input thread stops the same way)


def session_command(ctx: Context, args: Sequence[str]) -> int:
    """``terminal session control|observe ...``."""
    verb = args[0] if args else None
    if verb not in ("control", "observe"):
        raise Usage(f"{CONTROL_USAGE}\n{OBSERVE_USAGE}", 0 if verb in _HELP_WORDS else 2)
    control = verb == "control"
    usage = CONTROL_USAGE if control else OBSERVE_USAGE
    target, cols, rows, takeover = _options(args[1:], usage, verb, control)
    try:
        session = _open(ctx, target, mode=verb, takeover=takeover, cols=cols, rows=rows)
    except ConnectFailedError as exc:
        ctx.err(str(exc))
        return 1
    with session:
        if control:
            thread = threading.Thread(
                target=_forward_stdin, args=(ctx, session, ctx.stdin), daemon=True
            )
            thread.start()
        return _pump_records(ctx, session)


def _attach_target(args: Sequence[str], usage: str) -> tuple[str, bool]:
    """Parse ``TARGET [--takeover]`` as herdr's ``parse_attach_target`` (``src/cli.rs:716``).

    The first argument is the target whatever it is; ``--help`` after it is the usage
    (exit 0); any other option is ``unknown option: X`` alone (exit 2).
    """
    if not args:
        raise Usage(usage)
    takeover = False
    for arg in args[1:]:
        if arg == "--takeover":
            takeover = True
        elif arg in _HELP_WORDS:
            raise Usage(usage, 0)
        else:
            raise Usage(f"unknown option: {arg}")
    return args[0], takeover


def attach(ctx: Context, args: Sequence[str]) -> int:
    """``terminal attach TERMINAL_ID [--takeover]``: direct attach on a real terminal."""
    terminal_id, takeover = _attach_target(args, ATTACH_USAGE)
    return direct_attach(ctx, terminal_id, takeover)


def agent_attach(ctx: Context, args: Sequence[str]) -> int:
    """``agent attach TARGET [--takeover]``: ``agent.get`` the target, attach its terminal.

    As herdr's ``src/cli/agent.rs:472-490``: an error answer is printed on stderr
    (exit 1); an answer without ``terminal_id`` is ``agent attach failed: response did
    not include terminal_id`` (exit 1).
    """
    from ._runtime import dumps

    target, takeover = _attach_target(args, "usage: herdr agent attach <target> [--takeover]")
    response = ctx.request("cli:agent:attach:resolve", "agent.get", {"target": target})
    if "error" in response:
        ctx.err(dumps(response))
        return 1
    agent = response.get("result", {}).get("agent")
    terminal_id = agent.get("terminal_id") if isinstance(agent, dict) else None
    if not isinstance(terminal_id, str):
        ctx.err("agent attach failed: response did not include terminal_id")
        return 1
    return direct_attach(ctx, terminal_id, takeover)


def direct_attach(ctx: Context, terminal_id: str, takeover: bool) -> int:
    """Attach ``terminal_id`` on this process's terminal until it closes or detaches."""
    tty = _terminal_fd()
    size = _size(tty) if tty is not None else (80, 24)
    try:
        session = _open(
            ctx, terminal_id, mode="attach", takeover=takeover, cols=size[0], rows=size[1]
        )
    except ConnectFailedError as exc:
        ctx.err(str(exc))
        return 1
    with session:
        if tty is None:
            ctx.err("herdr: failed to set up terminal: No such device or address (os error 6)")
            return 1
        try:
            reason = _attach_loop(session, tty)
        finally:
            if tty != 0:
                os.close(tty)
    return _attach_outcome(ctx, reason)


def _terminal_fd() -> int | None:
    """Return the terminal crossterm would use: stdin when a tty, else ``/dev/tty``."""
    if os.isatty(0):
        return 0
    try:
        return os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return None


def _size(fd: int) -> tuple[int, int]:
    try:
        size = os.get_terminal_size(fd)
    except OSError:
        return 80, 24
    return (size.columns or 80), (size.lines or 24)


class AttachEscape:
    """herdr's direct-attach prefix (``AttachEscapeState``, ``src/client/mod.rs:131``).

    ``ctrl+b q`` detaches, ``ctrl+b ctrl+b`` is one ``ctrl+b``, ``ctrl+b``
    before anything else passes both bytes; a trailing ``ctrl+b`` waits for
    the next read.
    """

    def __init__(self) -> None:
        self.pending = False

    def filter(self, data: bytes) -> tuple[bytes, bool]:
        """Return the bytes to forward and whether the user asked to detach."""
        out = bytearray()
        for byte in data:
            if self.pending:
                self.pending = False
                if byte == ord("q"):
                    return bytes(out), True
                out.append(_PREFIX)
                if byte != _PREFIX:
                    out.append(byte)
            elif byte == _PREFIX:
                self.pending = True
            else:
                out.append(byte)
        return bytes(out), False


_SGR_MOUSE = re.compile(rb"\x1b\[<(\d+);(\d+);(\d+)([Mm])")
_MOUSE_CAPTURE_ON = b"\x1b[?1000h\x1b[?1002h\x1b[?1003h\x1b[?1015h\x1b[?1006h"
_MOUSE_CAPTURE_OFF = b"\x1b[?1006l\x1b[?1015l\x1b[?1003l\x1b[?1002l\x1b[?1000l"
MOUSE_SCROLL_LINES = 3
"""Rows one wheel notch scrolls (herdr's ``ui.mouse_scroll_lines`` default)."""


def attach_scroll(data: bytes, rows: int) -> TerminalScroll | bytes | None:
    """Turn one read of direct-attach input into a scroll, as herdr's ``attach_scroll_action``.

    A lone SGR wheel report scrolls :data:`MOUSE_SCROLL_LINES` rows at its cell, another
    lone mouse report is dropped (``None``), a lone ``PageUp``/``PageDown`` scrolls a page
    (``rows - 1``); anything else is returned as bytes to forward
    (herdrdev/herdr ``src/client/mod.rs:183-236@1c76079f``).
    """
    from shedproto.herdr._terminal import TerminalScroll

    page = {b"\x1b[5~": "up", b"\x1b[6~": "down"}.get(data)
    if page is not None:
        return TerminalScroll(
            direction="up" if page == "up" else "down", lines=max(rows - 1, 1), source="page_key"
        )
    match = _SGR_MOUSE.fullmatch(data)
    if match is None:
        return data
    button, column, row = (int(match.group(i)) for i in (1, 2, 3))
    if not button & 64 or button & 3 > 1:
        return None
    # SGR modifier bits (shift 4, alt 8, ctrl 16) as crossterm's KeyModifiers (1, 4, 2)
    modifiers = (1 if button & 4 else 0) | (4 if button & 8 else 0) | (2 if button & 16 else 0)
    return TerminalScroll(
        direction="down" if button & 1 else "up",
        lines=MOUSE_SCROLL_LINES,
        source="wheel",
        column=max(column - 1, 0),
        row=max(row - 1, 0),
        modifiers=modifiers,
    )


def _attach_loop(session: BlockingTerminalSession, tty: int) -> str | None:
    """Run direct attach until the stream closes; return its close reason."""
    import base64
    import signal
    import termios
    import tty as ttymod

    from shedproto.herdr._terminal import TerminalFrame, TerminalInput, TerminalRelease

    saved = termios.tcgetattr(tty)
    resized = threading.Event()
    previous = signal.signal(signal.SIGWINCH, lambda *_: resized.set())
    out = 1 if os.isatty(1) else tty
    escape = AttachEscape()
    stop = threading.Event()

    def send_bytes(data: bytes) -> None:
        if data:
            session.send(TerminalInput(bytes=base64.b64encode(data).decode("ascii")))

    def reader() -> None:
        try:
            while not stop.is_set():
                ready, _, _ = select.select([tty], [], [], 0.1)
                if resized.is_set():
                    resized.clear()
                    session.resize(*_size(tty))
                if not ready:
                    continue
                data = os.read(tty, 4096)
                forward, detach = escape.filter(data)
                action = attach_scroll(forward, _size(tty)[1]) if forward else b""
                if isinstance(action, bytes):
                    send_bytes(action)
                elif action is not None:
                    session.send(action)
                if detach or not data:
                    session.send(TerminalRelease())
                    return
        except (OSError, ValueError):
            return

    ttymod.setraw(tty)
    os.write(out, _MOUSE_CAPTURE_ON)  # herdr's direct attach captures the mouse
    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    try:
        for record in session:
            if isinstance(record, TerminalFrame):
                os.write(out, record.data())
    finally:
        stop.set()
        thread.join(1.0)
        termios.tcsetattr(tty, termios.TCSADRAIN, saved)
        signal.signal(signal.SIGWINCH, previous)
        with contextlib.suppress(OSError):
            os.write(out, _MOUSE_CAPTURE_OFF + b"\x1b[?25h\x1b[0m\r\n")
    return session.closed.reason if session.closed is not None else None


def _attach_outcome(ctx: Context, reason: str | None) -> int:
    """Report the end of direct attach as herdr's ``ClientError::ServerShutdown`` does."""
    if reason == "detached":
        name = ctx.active_session()
        command = f"herdr session attach {name}" if name and name != "default" else "herdr"
        ctx.err("herdr: detached from server")
        ctx.err(f"Run `{command}` to reattach")
        return 0
    ctx.err("herdr: server shut down" + (f": {reason}" if reason else ""))
    return 1


def title(ctx: Context, args: Sequence[str]) -> int:
    """``terminal title set TITLE`` / ``terminal title clear``."""
    verb = args[0] if args else None
    if verb == "set":
        if len(args) != 2:
            raise Usage(TITLE_USAGE[0])
        return ctx.call(
            "cli:terminal:title:set", "client.window_title.set", {"title": args[1]}
        )
    if verb == "clear":
        if len(args) != 1:
            raise Usage("usage: herdr terminal title clear")
        return ctx.call("cli:terminal:title:clear", "client.window_title.clear", {})
    raise Usage("\n".join(TITLE_USAGE), 0 if verb in _HELP_WORDS else 2)


TERMINAL: tuple[dict[str, Handler], list[str]] = (
    {"attach": attach, "session": session_command, "title": title},
    HELP,
)
