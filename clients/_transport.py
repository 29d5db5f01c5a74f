"""Framed NDJSON transports over Unix sockets, async (anyio) and blocking.

Both forms share one core, :class:`shedproto.FrameQueue`, so they frame,
cap and report errors identically:

* connecting has a timeout; failure raises
  :class:`~shedproto.clients.UnreachableSocketError` (a :class:`ConnectError`,
  an ``OSError`` that keeps the errno) whose one-line message names the path
  once and says what is there: nothing, a directory, a regular file, a socket
  nobody listens on, no permission (its ``reason``);
* ``receive_frame`` returns one frame without its newline, within a deadline
  (``TimeoutError`` when it passes), and raises
  :class:`~shedproto.RemoteProtocolError` (``CONNECTION_CLOSED``) when the
  peer closes first, or :class:`~shedproto.FramingError` for an over-cap frame.

The blocking form is a plain socket loop, not a wrapped event loop.
"""

from __future__ import annotations

import os
import socket
import time
from types import TracebackType

import anyio
import anyio.abc
from typing_extensions import Self

from shedproto import ErrorCode, FrameQueue, FramingPolicy, RemoteProtocolError
from shedproto._framing import DEFAULT_POLICY

from ._unreachable import ConnectError, unreachable

__all__ = ["RECEIVE_CHUNK", "AsyncLineTransport", "BlockingLineTransport", "ConnectError"]

RECEIVE_CHUNK = 65536
"""Bytes asked of the socket per receive call."""

DEFAULT_CONNECT_TIMEOUT = 5.0


def _closed_error() -> RemoteProtocolError:
    return RemoteProtocolError(
        ErrorCode.CONNECTION_CLOSED, "the peer closed the connection before a complete frame"
    )


class AsyncLineTransport:
    """An anyio byte stream that sends raw frames and receives framed lines.

    One task may receive and one may send at a time; a second concurrent
    sender or receiver gets ``anyio.BusyResourceError`` from the stream
    rather than interleaved bytes.
    """

    def __init__(
        self,
        stream: anyio.abc.ByteStream,
        *,
        policy: FramingPolicy = DEFAULT_POLICY,
        path: str | None = None,
    ) -> None:
        self.stream = stream
        self.frames = FrameQueue(policy)
        self.path = path
        """The socket path :meth:`connect` used (``None`` for a stream from elsewhere)."""

    @classmethod
    async def connect(
        cls,
        path: str | os.PathLike[str],
        *,
        timeout: float = DEFAULT_CONNECT_TIMEOUT,
        policy: FramingPolicy = DEFAULT_POLICY,
    ) -> Self:
        """Connect to the Unix socket at ``path`` within ``timeout`` seconds.

        Raises:
            UnreachableSocketError: connecting failed; ``reason`` says what is at the path.

        """
        target = os.fspath(path)
        try:
            with anyio.fail_after(timeout):
                stream = await anyio.connect_unix(target)
        except (OSError, TimeoutError) as exc:
            raise unreachable(target, exc) from exc
        return cls(stream, policy=policy, path=target)

    async def send(self, frame: bytes) -> None:
        """Write ``frame`` (already newline-terminated) in full.

        Raises:
            anyio.BrokenResourceError: the peer closed the connection.

        """
        await self.stream.send(frame)

    async def receive_frame(self, *, timeout: float | None = None) -> bytes:
        """Return the next frame, waiting at most ``timeout`` seconds in total.

        Raises:
            TimeoutError: the deadline passed; the partial frame stays buffered.
            RemoteProtocolError: ``CONNECTION_CLOSED`` when the peer closed first.
            FramingError: the peer's frame exceeded the cap.

        """
        frame = self.frames.next_frame()
        if frame is not None:
            return frame
        if timeout is None:  # no cancel scope: it costs a timer per call
            return await self._receive_until_frame()
        with anyio.fail_after(timeout):
            return await self._receive_until_frame()

    async def _receive_until_frame(self) -> bytes:
        while True:
            if self.frames.eof:
                raise _closed_error()
            try:
                data = await self.stream.receive(RECEIVE_CHUNK)
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                data = b""
            self.frames.feed(data)
            frame = self.frames.next_frame()
            if frame is not None:
                return frame

    async def request(self, frame: bytes, *, timeout: float | None = None) -> bytes:
        """Send ``frame`` and return the next frame received (one round trip)."""
        await self.send(frame)
        return await self.receive_frame(timeout=timeout)

    async def aclose(self) -> None:
        """Close the stream; idempotent."""
        await self.stream.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class BlockingLineTransport:
    """The blocking twin of :class:`AsyncLineTransport`, over a plain socket."""

    def __init__(
        self,
        sock: socket.socket,
        *,
        policy: FramingPolicy = DEFAULT_POLICY,
        path: str | None = None,
    ) -> None:
        self.sock = sock
        self.frames = FrameQueue(policy)
        self.path = path
        """The socket path :meth:`connect` used (``None`` for a socket from elsewhere)."""

    @classmethod
    def connect(
        cls,
        path: str | os.PathLike[str],
        *,
        timeout: float = DEFAULT_CONNECT_TIMEOUT,
        policy: FramingPolicy = DEFAULT_POLICY,
    ) -> Self:
        """Connect to the Unix socket at ``path`` within ``timeout`` seconds.

        Raises:
            UnreachableSocketError: connecting failed; ``reason`` says what is at the path.

        """
        target = os.fspath(path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(target)
        except OSError as exc:
            sock.close()
            raise unreachable(target, exc) from exc
        return cls(sock, policy=policy, path=target)

    def send(self, frame: bytes) -> None:
        """Write ``frame`` in full (no deadline beyond the socket's).

        Raises:
            OSError: the peer closed the connection (``BrokenPipeError``).

        """
        self.sock.settimeout(None)
        self.sock.sendall(frame)

    def receive_frame(self, *, timeout: float | None = None) -> bytes:
        """Return the next frame, waiting at most ``timeout`` seconds in total.

        Raises:
            TimeoutError: the deadline passed; the partial frame stays buffered.
            RemoteProtocolError: ``CONNECTION_CLOSED`` when the peer closed first.
            FramingError: the peer's frame exceeded the cap.

        """
        frame = self.frames.next_frame()
        if frame is not None:
            return frame
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self.frames.eof:
                raise _closed_error()
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError("no complete frame before the deadline")
                self.sock.settimeout(remaining)
            else:
                self.sock.settimeout(None)
            try:
                data = self.sock.recv(RECEIVE_CHUNK)
            except ConnectionResetError:
                data = b""
            self.frames.feed(data)
            frame = self.frames.next_frame()
            if frame is not None:
                return frame

    def request(self, frame: bytes, *, timeout: float | None = None) -> bytes:
        """Send ``frame`` and return the next frame received (one round trip)."""
        self.send(frame)
        return self.receive_frame(timeout=timeout)

    def close(self) -> None:
        """Close the socket; idempotent."""
        self.sock.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
