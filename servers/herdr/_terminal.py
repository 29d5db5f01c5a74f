"""Live terminal streams of the reference server, served on herdr's client socket.

herdr serves ``terminal session control|observe`` and ``terminal attach`` on
its second socket (``herdr-client.sock``) in its binary thin-client protocol;
this server speaks shedproto's JSON lines there instead
(:mod:`shedproto.herdr._terminal`): the client sends :class:`TerminalOpen`,
then (a controller) commands; the server sends frames and, last, one
``terminal.closed``. What follows herdr (``src/server/headless.rs@1c76079f``):

* A target is a terminal id, a pane id or a unique agent name or label
  (``src/app/terminal_targets.rs:33``); ``attach`` takes terminal ids only.
* One controller a terminal (``control`` and ``attach`` share the lock): a
  second one without ``takeover`` is closed with herdr's *already has an
  attached client* reason; with it, the first is closed with *terminal attach
  taken over* (lines 2854-2874). A controller resizes the pane's PTY and
  screen to its size and holds it there while it stays (herdr's
  ``direct_attach_resize_locks``); when it leaves, the pane gets its layout
  size back. Observers render the terminal at their own size and never
  write, resize or scroll.
* Frames are pushed when the pane's screen changes (each PTY read wakes the
  stream; bursts coalesce) and at most one is sent per wake-up; none is sent
  when the screen did not change (:class:`~shedproto.herdr.FrameEncoder`).
* Input returns the viewport to the bottom, then goes to the PTY. A wheel
  scroll moves the viewport through the scrollback on the primary screen,
  becomes SGR mouse-wheel reports when the program asked for mouse reports,
  and arrow keys on the alternate screen; a page-key scroll moves the
  viewport on the primary screen and sends the page key otherwise
  (``apply_terminal_attach_scroll``, line 345). The viewport is the
  terminal's, so every stream on it follows.
* The pane closing ends every stream on it with ``terminal <id> exited``;
  a release with ``detached``; the server stopping with ``server is shutting
  down``.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import anyio
import anyio.abc

from shedproto import FramingError, FramingPolicy, LineBuffer, OverCap, RemoteProtocolError
from shedproto.herdr._terminal import (
    CloseReason,
    FrameEncoder,
    InvalidCommandError,
    TerminalClosed,
    TerminalInput,
    TerminalOpen,
    TerminalRelease,
    TerminalResize,
    TerminalScroll,
    decode_open,
    encode_record,
    input_bytes,
    parse_command,
)
from shedproto.servers._receive import SocketPump
from shedproto.servers._unix import UnixServer

from ._model import Pane

__all__ = ["OPEN_TIMEOUT", "TerminalHost", "TerminalStreams", "resolve_target"]

log = logging.getLogger(__name__)

OPEN_TIMEOUT = 5.0
"""Seconds a new stream connection has to send its opening line (herdr's handshake bound)."""
WRITE_TIMEOUT = 5.0
"""Seconds a frame may wait for a client that does not read; then the stream ends."""
_POLICY = FramingPolicy(max_frame_bytes=1 << 20, over_cap=OverCap.SKIP)


class TerminalHost(Protocol):
    """What the streams need from the server that owns the panes."""

    def find_terminal(self, target: str) -> Pane | None:
        """Return the live pane whose terminal ``target`` names, or ``None``."""

    def layout_size(self, pane: Pane) -> tuple[int, int]:
        """Return the (cols, rows) the pane's layout gives it."""

    async def write_terminal(self, pane: Pane, data: bytes) -> None:
        """Write ``data`` to the pane's PTY; raise ``OSError`` when it cannot."""


def resolve_target(
    target: str, panes: Iterable[Pane], find_pane: Callable[[str], Pane | None]
) -> Pane | None:
    """Resolve a stream target as herdr's ``resolve_terminal_target`` does.

    A terminal id, else a pane id (``find_pane``), else the one pane whose
    agent name or agent label is ``target``; an ambiguous agent is not found.
    """
    live = [pane for pane in panes if not pane.closed]
    for pane in live:
        if pane.terminal_id == target:
            return pane
    by_id = find_pane(target)
    if by_id is not None and not by_id.closed:
        return by_id
    agents = [
        pane
        for pane in live
        if pane.agent is not None and target in (pane.agent_name, pane.display_agent or pane.agent)
    ]
    return agents[0] if len(agents) == 1 else None


@dataclass(eq=False)
class _Stream:
    pane: Pane
    opened: TerminalOpen
    pump: SocketPump
    """The connection (guarded waits: see ``shedproto.servers._receive.send_all``)."""
    scope: anyio.CancelScope
    cols: int
    rows: int
    encoder: FrameEncoder = field(default_factory=FrameEncoder)
    wake: anyio.Event = field(default_factory=anyio.Event)
    closed: bool = False
    ending: str | None = None
    """A reason another task decided this stream ends with (takeover, shutdown)."""

    @property
    def controls(self) -> bool:
        return self.opened.mode != "observe"

    def kick(self) -> None:
        self.wake.set()


class TerminalStreams:
    """Serve terminal streams on ``path`` for the panes ``host`` owns.

    Start with ``await task_group.start(streams.serve)``; :meth:`shutdown`
    closes every stream (``server is shutting down``) and stops accepting.
    :meth:`locked_size` tells the server which panes a controller sizes.
    """

    def __init__(self, path: str | os.PathLike[str], host: TerminalHost) -> None:
        self.path = Path(path)
        self.host = host
        self.owners: dict[str, _Stream] = {}
        """Terminal id -> its controller."""
        self._streams: set[_Stream] = set()
        self.frames_sent = 0
        """Frames written, over all streams (instrumentation)."""
        self._unix = UnixServer(self.path, self._handle, grace=1.0)

    async def serve(
        self, *, task_status: anyio.abc.TaskStatus[Path] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Bind (herdr's ceremony: 0600, stale file replaced), report the path, serve.

        Raises:
            BindError: the socket path is refused.

        """
        await self._unix.serve(task_status=task_status)

    def shutdown(self) -> None:
        """End every stream with ``server is shutting down`` and stop accepting.

        The closing record is written at once, without waiting (the server's
        tasks are cancelled right after); a client that does not read loses it.
        """
        record = encode_record(TerminalClosed(reason=CloseReason.SHUTTING_DOWN.value))
        for entry in list(self._streams):
            if entry.closed:
                continue
            entry.closed = True
            sock = entry.pump.raw
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.send(record)
            entry.scope.cancel()
        self._unix.shutdown()

    def locked_size(self, pane: Pane) -> tuple[int, int] | None:
        """Return the (cols, rows) the pane's controller holds it at, or ``None``."""
        owner = self.owners.get(pane.terminal_id)
        return None if owner is None else (owner.cols, owner.rows)

    def streams_of(self, pane: Pane) -> list[_Stream]:
        """Return the open streams on ``pane``'s terminal."""
        return [entry for entry in self._streams if entry.pane is pane]

    # ------------------------------------------------------------------ connection
    async def _handle(self, stream: anyio.abc.SocketStream) -> None:
        buffer = LineBuffer(_POLICY)
        pump = SocketPump(stream)
        received = await self._read_open(pump, buffer)
        if received is None:
            return
        opened, pending = received
        pane, refusal = self._resolve(opened)
        if pane is None:
            await self._send(pump, encode_record(TerminalClosed(reason=refusal)))
            return
        with anyio.CancelScope() as scope:
            entry = _Stream(pane, opened, pump, scope, opened.cols, opened.rows)
            if entry.controls and not self._claim(entry):
                reason = CloseReason.busy(pane.terminal_id)
                await self._send(pump, encode_record(TerminalClosed(reason=reason)))
                return
            self._streams.add(entry)
            try:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._watch_output, entry)
                    tg.start_soon(self._read_commands, entry, buffer, pending)
                    await self._render(entry)
                    tg.cancel_scope.cancel()
            finally:
                self._leave(entry)

    async def _read_open(
        self, pump: SocketPump, buffer: LineBuffer
    ) -> tuple[TerminalOpen, list[bytes]] | None:
        """Return the opening line and the command lines that came with it, or ``None``."""
        with anyio.move_on_after(OPEN_TIMEOUT):
            while True:
                data = await pump.receive()
                try:
                    lines = buffer.feed(data)
                except FramingError:
                    return None
                if lines:
                    try:
                        return decode_open(lines[0]), lines[1:]
                    except RemoteProtocolError as exc:
                        reason = f"invalid terminal stream request: {exc.message}"
                        await self._send(pump, encode_record(TerminalClosed(reason=reason)))
                        return None
                if not data:
                    return None
        return None

    def _resolve(self, opened: TerminalOpen) -> tuple[Pane | None, str]:
        pane = self.host.find_terminal(opened.target)
        if opened.mode == "attach":
            if pane is None or pane.terminal_id != opened.target:
                return None, CloseReason.attach_not_found(opened.target)
            return pane, ""
        if pane is None:
            return None, CloseReason.not_found(opened.mode, opened.target)
        return pane, ""

    def _claim(self, entry: _Stream) -> bool:
        terminal = entry.pane.terminal_id
        current = self.owners.get(terminal)
        if current is not None and not entry.opened.takeover:
            return False
        if current is not None:
            self._finish_soon(current, CloseReason.TAKEN_OVER.value)
            self.owners.pop(terminal, None)
        self.owners[terminal] = entry
        self._apply_size(entry.pane, entry.cols, entry.rows)
        return True

    def _leave(self, entry: _Stream) -> None:
        self._streams.discard(entry)
        terminal = entry.pane.terminal_id
        if self.owners.get(terminal) is entry:
            del self.owners[terminal]
            if not entry.pane.closed:
                self._apply_size(entry.pane, *self.host.layout_size(entry.pane))

    def _apply_size(self, pane: Pane, cols: int, rows: int) -> None:
        if (pane.screen.cols, pane.screen.rows) != (cols, rows):
            pane.screen.resize(cols, rows)
            with contextlib.suppress(OSError):
                pane.process.resize(cols, rows)
        self._wake_all(pane)

    def _wake_all(self, pane: Pane) -> None:
        for other in self.streams_of(pane):
            other.kick()

    # ------------------------------------------------------------------ output
    async def _watch_output(self, entry: _Stream) -> None:
        """Wake the stream each time the pane reports new output (or closes)."""
        while True:
            await entry.pane.output.wait()
            entry.kick()

    async def _render(self, entry: _Stream) -> None:
        pane = entry.pane
        while not entry.closed:
            if entry.ending is not None:
                await self._finish(entry, entry.ending)
                return
            if pane.closed:
                await self._finish(entry, CloseReason.exited(pane.terminal_id))
                return
            rows, cursor, visible = pane.screen.viewport(entry.cols)
            frame = entry.encoder.encode(
                rows, width=entry.cols, height=entry.rows, cursor=cursor, cursor_visible=visible
            )
            if frame is not None:
                self.frames_sent += 1
                if not await self._send(entry.pump, encode_record(frame)):
                    entry.closed = True
                    return
            await entry.wake.wait()
            entry.wake = anyio.Event()

    # ------------------------------------------------------------------ commands
    async def _read_commands(self, entry: _Stream, buffer: LineBuffer, lines: list[bytes]) -> None:
        """Apply a controller's commands; an observer's bytes are read and dropped."""
        while True:
            for line in lines:
                if entry.controls and not await self._apply(entry, line):
                    return
            data = await entry.pump.receive()
            if not data:
                entry.closed = True
                entry.kick()
                return
            try:
                lines = buffer.feed(data)
            except FramingError:
                lines = []

    async def _apply(self, entry: _Stream, line: bytes) -> bool:
        """Apply one command line; return False when the stream ends (a release)."""
        try:
            command = parse_command(line)
        except InvalidCommandError:
            return True  # herdr's CLI never forwards such a line; a raw client's is skipped
        pane = entry.pane
        if isinstance(command, TerminalRelease):
            self._finish_soon(entry, CloseReason.DETACHED.value)
            return False
        if isinstance(command, TerminalInput):
            data = input_bytes(command)
            if pane.screen.scroll_reset():
                self._wake_all(pane)
            if data:
                with contextlib.suppress(OSError):
                    await self.host.write_terminal(pane, data)
        elif isinstance(command, TerminalResize):
            entry.cols, entry.rows = command.cols, command.rows
            self._apply_size(pane, command.cols, command.rows)
        elif isinstance(command, TerminalScroll):
            await self._scroll(entry, command)
        return True

    async def _scroll(self, entry: _Stream, command: TerminalScroll) -> None:
        pane = entry.pane
        screen = pane.screen
        up = command.direction == "up"
        data = b""
        if command.source == "page_key":
            if screen.alternate:
                data = b"\x1b[5~" if up else b"\x1b[6~"
            elif screen.scroll(command.lines if up else -command.lines):
                self._wake_all(pane)
        elif screen.mouse_reporting:
            screen.scroll_reset()
            button = 64 if up else 65
            col, row = (command.column or 0) + 1, (command.row or 0) + 1
            data = f"\x1b[<{button + (command.modifiers & 0x1C)};{col};{row}M".encode()
        elif screen.alternate:
            arrow = "A" if up else "B"
            key = f"\x1bO{arrow}" if screen.application_cursor_keys else f"\x1b[{arrow}"
            data = key.encode() * command.lines
        elif screen.scroll(command.lines if up else -command.lines):
            self._wake_all(pane)
        if data:
            with contextlib.suppress(OSError):
                await self.host.write_terminal(pane, data)

    # ------------------------------------------------------------------ ending
    async def _finish(self, entry: _Stream, reason: str) -> None:
        if entry.closed:
            return
        entry.closed = True
        await self._send(entry.pump, encode_record(TerminalClosed(reason=reason)))
        entry.scope.cancel()

    def _finish_soon(self, entry: _Stream, reason: str) -> None:
        """End ``entry`` from another task: its own task writes the closing record."""
        if entry.ending is None:
            entry.ending = reason
        entry.kick()

    async def _send(self, pump: SocketPump, data: bytes) -> bool:
        with anyio.move_on_after(WRITE_TIMEOUT) as deadline:
            try:
                await pump.send(data)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                return False
        return not deadline.cancelled_caught

