"""A typed client for herdr's terminal streams (``terminal session control|observe``).

The source of the blocking client (``tools/unasync.py`` writes ``_stream_blocking.py``).
The stream runs on the session's client socket (``herdr-client.sock`` beside
the API socket); see :mod:`shedproto.herdr._terminal` for the records and
commands, and ``docs/protocols/herdr.md`` (*Terminal streams*).
"""

from __future__ import annotations

import base64
import os
from collections.abc import AsyncIterator
from typing import Literal

from typing_extensions import Self

from shedproto import ErrorCode, RemoteProtocolError
from shedproto.clients._misuse import used_after_close, used_before_open
from shedproto.clients._transport import AsyncClosing, AsyncLineTransport
from shedproto.herdr import derive_client_socket_path
from shedproto.herdr._terminal import (
    DEFAULT_SESSION_COLS,
    DEFAULT_SESSION_ROWS,
    SessionMode,
    TerminalClosed,
    TerminalCommand,
    TerminalFrame,
    TerminalInput,
    TerminalOpen,
    TerminalRecord,
    TerminalRelease,
    TerminalResize,
    TerminalScroll,
    decode_record,
    encode_command,
)

__all__ = ["AsyncTerminalSession"]


class AsyncTerminalSession(AsyncClosing):
    """One live terminal stream; ``async with`` opens it, iterating yields its records.

    ``path`` is the API socket (the stream uses the client socket beside it)
    or, with ``client_socket=True``, the client socket itself. Iteration
    yields :class:`~shedproto.herdr.TerminalFrame` records (the first is a full redraw) and
    ends after the one :class:`~shedproto.herdr.TerminalClosed`, kept in :attr:`closed`. A
    controller (``mode="control"`` or ``"attach"``) sends with
    :meth:`send_input`, :meth:`resize`, :meth:`scroll` and :meth:`release`.

    Errors: ``ConnectError`` when the socket cannot be reached, ``TimeoutError``
    when opening takes longer than ``timeout``; a refused target or a refused
    second controller is not an error but a :class:`~shedproto.herdr.TerminalClosed` with
    herdr's reason. Sending on a stream that ended raises ``OSError``-family
    errors of the socket. Reading before the stream was opened, and sending
    before it was opened or after :meth:`aclose`, raise
    :class:`~shedproto.LocalProtocolError` (``CONNECTION_CLOSED``) saying so;
    reading after :meth:`aclose` finds the stream ended (``None``).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        target: str,
        *,
        mode: SessionMode = "control",
        takeover: bool = False,
        cols: int = DEFAULT_SESSION_COLS,
        rows: int = DEFAULT_SESSION_ROWS,
        timeout: float = 5.0,
        client_socket: bool = False,
    ) -> None:
        raw = os.fspath(path)
        self.path = raw if client_socket else derive_client_socket_path(raw)
        """The client socket the stream connects to."""
        self.opening = TerminalOpen(
            mode=mode, target=target, takeover=takeover, cols=cols, rows=rows
        )
        self.timeout = timeout
        self.closed: TerminalClosed | None = None
        """The stream's closing record, once it arrived."""
        self._transport: AsyncLineTransport | None = None
        self._opened = False

    async def __aenter__(self) -> Self:
        if self._transport is None:
            await self.open()
        return self

    async def open(self) -> None:
        """Connect and send the opening line (``async with`` does this).

        Raises:
            ConnectError: the client socket cannot be reached.
            TimeoutError: connecting or sending took longer than ``timeout``.

        """
        transport = await AsyncLineTransport.connect(self.path, timeout=self.timeout)
        self._transport = transport
        self._opened = True
        self.closed = None
        try:
            transport.set_timeout(self.timeout)
            await transport.send(encode_command(self.opening))
            transport.set_timeout(None)
        except BaseException:
            await self.aclose()
            raise

    def __aiter__(self) -> AsyncIterator[TerminalRecord]:
        return self

    async def __anext__(self) -> TerminalRecord:
        record = await self.next_record()
        if record is None:
            raise StopAsyncIteration
        return record

    async def next_record(self, *, timeout: float | None = None) -> TerminalRecord | None:
        """Return the next record, or ``None`` after the close (or when the server hung up).

        Raises:
            TimeoutError: nothing arrived within ``timeout`` seconds (``None``: no limit).
            RemoteProtocolError: the server sent a line that is not a record.
            LocalProtocolError: ``CONNECTION_CLOSED``: the stream was never opened.

        """
        transport = self._transport
        if transport is None and not self._opened:
            self._open_transport()  # raises: the stream was never opened
        if transport is None or self.closed is not None:
            return None
        try:
            line = await transport.receive_frame(timeout=timeout)
        except RemoteProtocolError as exc:
            if exc.code is not ErrorCode.CONNECTION_CLOSED:
                raise
            return None
        finally:
            transport.set_timeout(None)
        record = decode_record(line)
        if isinstance(record, TerminalClosed):
            self.closed = record
        return record

    async def next_frame(self, *, timeout: float | None = None) -> TerminalFrame | None:
        """Return the next frame, or ``None`` once the stream closed (see :attr:`closed`)."""
        while True:
            record = await self.next_record(timeout=timeout)
            if record is None or isinstance(record, TerminalFrame):
                return record

    async def frames(self) -> AsyncIterator[TerminalFrame]:
        """Yield the frames until the stream closes (then :attr:`closed` holds the close)."""
        while True:
            frame = await self.next_frame()
            if frame is None:
                return
            yield frame

    async def send(self, command: TerminalCommand) -> None:
        """Send one command as it is (the server skips one that is not valid).

        Raises:
            LocalProtocolError: ``CONNECTION_CLOSED``: the stream is not open.

        """
        await self._open_transport().send(encode_command(command))

    def _open_transport(self) -> AsyncLineTransport:
        """Return the stream's connection; raise when it was never opened or was closed."""
        transport = self._transport
        if transport is None:
            if self._opened:
                raise used_after_close("the terminal session", "open a new one")
            raise used_before_open(
                "the terminal session", "async with client.terminal_session(...) as term:"
            )
        return transport

    async def send_input(self, text: str | None = None, *, data: bytes | None = None) -> None:
        """Type ``text`` (UTF-8) or send raw ``data`` bytes to the terminal."""
        if data is not None:
            await self.send(TerminalInput(bytes=base64.b64encode(data).decode("ascii")))
        else:
            await self.send(TerminalInput(text=text or ""))

    async def resize(self, cols: int, rows: int) -> None:
        """Resize this controller's viewport, and so the terminal, to ``cols`` x ``rows``."""
        await self.send(TerminalResize(cols=cols, rows=rows))

    async def scroll(
        self,
        direction: Literal["up", "down"],
        lines: int = 3,
        *,
        source: Literal["wheel", "page_key"] = "wheel",
    ) -> None:
        """Scroll the terminal ``lines`` rows (a wheel notch or a page key)."""
        await self.send(TerminalScroll(direction=direction, lines=lines, source=source))

    async def release(self) -> None:
        """Give the terminal back; the stream then closes with ``detached``."""
        await self.send(TerminalRelease())

    async def aclose(self) -> None:
        """Close the connection (a controller's terminal is released); idempotent."""
        if self._transport is not None:
            transport, self._transport = self._transport, None
            await transport.aclose()
