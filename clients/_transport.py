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
  peer closes first, or :class:`~shedproto.FramingError` for an over-cap frame;
* :func:`first_reply` wraps where a client receives and decodes a reply: until
  one reply of its protocol has arrived on the connection, a reply that is not
  one (or a close without any) raises ``UnreachableSocketError`` with reason
  ``other-protocol``, once, instead of a decoding error.

The blocking form is a plain socket loop, not a wrapped event loop.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Iterator
from types import TracebackType

import anyio
import anyio.abc
from typing_extensions import Self

from shedproto import ErrorCode, FrameQueue, FramingPolicy, RemoteProtocolError
from shedproto._framing import DEFAULT_POLICY

from ._unreachable import ConnectError, other_protocol, unreachable

__all__ = [
    "RECEIVE_CHUNK",
    "AsyncLineTransport",
    "BlockingLineTransport",
    "ConnectError",
    "first_reply",
]

RECEIVE_CHUNK = 65536
"""Bytes asked of the socket per receive call."""

DEFAULT_CONNECT_TIMEOUT = 5.0


_NOT_A_REPLY = frozenset(
    {
        ErrorCode.MALFORMED_FRAME,
        ErrorCode.SCHEMA_VIOLATION,
        ErrorCode.UNKNOWN_TYPE,
        ErrorCode.FRAME_TOO_LARGE,
        ErrorCode.TRUNCATED_FRAME,
        ErrorCode.UNEXPECTED_EVENT,
        ErrorCode.CONNECTION_CLOSED,
    }
)
"""Codes saying the bytes are no reply of the protocol (``VERSION_UNSUPPORTED`` is its own)."""

_HANGUPS = (BrokenPipeError, ConnectionResetError, anyio.BrokenResourceError)
"""What sending a request raises when the server already hung up."""


@contextlib.contextmanager
def first_reply(
    transport: AsyncLineTransport | BlockingLineTransport, *, silent_close: bool = False
) -> Iterator[None]:
    """Receive and decode a reply inside this block; mark ``transport`` answered after it.

    Until a block on ``transport`` has once ended without error, a
    :class:`~shedproto.RemoteProtocolError` raised in it that says the bytes
    are no reply of the protocol (not JSON, wrong shape, unknown type, a close
    with no reply), or a hang-up while the request is sent, means a server of
    another protocol listens there: it is re-raised as
    ``UnreachableSocketError`` (reason ``other-protocol``, one line naming the
    path once). Later, or for a transport without a path, errors pass through
    unchanged, as do the protocol's own typed errors. ``silent_close=True``
    says this protocol's own server may close without a reply here (a mac
    desktop server past its frame cap): then a close or hang-up stays as it is.
    """
    try:
        yield
    except (RemoteProtocolError, *_HANGUPS) as exc:
        if transport.answered or transport.path is None:
            raise
        closed = not isinstance(exc, RemoteProtocolError) or exc.code is ErrorCode.CONNECTION_CLOSED
        if silent_close and closed:
            raise
        if isinstance(exc, RemoteProtocolError):
            if exc.code not in _NOT_A_REPLY:
                raise
            raise other_protocol(transport.path, exc.message) from exc
        raise other_protocol(transport.path, "it hung up before replying") from exc
    transport.answered = True


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
        self.answered = False
        """Whether a reply of the protocol arrived (set by :func:`first_reply`)."""

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
        self.answered = False
        """Whether a reply of the protocol arrived (set by :func:`first_reply`)."""

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
