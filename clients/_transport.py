"""Framed NDJSON transports over Unix sockets, async (anyio) and blocking.

Both forms share one core, :class:`shedproto.FrameQueue`, so they frame,
cap and report errors identically:

* connecting has a timeout; failure raises
  :class:`~shedproto.clients.UnreachableSocketError` (a :class:`ConnectError`,
  an ``OSError`` that keeps the errno) whose one-line message names the path
  once and says what is there: nothing, a directory, a regular file, a socket
  nobody listens on, no permission (its ``reason``);
* each connection has one deadline that a client moves once per call
  (``set_timeout``), as the servers slide theirs; every wait of the call ends
  at it (``TimeoutError``);
* ``receive_some`` is the one receive helper: the next bytes, ``b""`` at EOF
  (for cores that frame bytes themselves);
* ``receive_frame`` returns one frame without its newline and raises
  :class:`~shedproto.RemoteProtocolError` (``CONNECTION_CLOSED``) when the
  peer closes first, or :class:`~shedproto.FramingError` for an over-cap frame;
* ``first_reply()`` wraps where a client receives and decodes a reply: until
  one reply of its protocol has arrived on the connection, a reply that is not
  one (or a close without any) raises ``UnreachableSocketError`` with reason
  ``other-protocol``, once, instead of a decoding error.

The blocking form is a plain socket loop, not a wrapped event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import socket
import threading
import time
from types import TracebackType

import anyio
import anyio.abc
import anyio.lowlevel
from anyio.abc import SocketAttribute
from typing_extensions import Self

from shedproto import ErrorCode, FrameQueue, FramingPolicy, RemoteProtocolError
from shedproto._framing import DEFAULT_POLICY

from ._unreachable import ConnectError, other_protocol, unreachable
from ._waits import CallLock, LoopDeadlines, running_asyncio_loop

__all__ = [
    "RECEIVE_CHUNK",
    "SEND_FAILURES",
    "AsyncClosing",
    "AsyncLineTransport",
    "BlockingClosing",
    "BlockingLineTransport",
    "CallLock",
    "ConnectError",
    "first_reply",
    "not_a_reply",
]

RECEIVE_CHUNK = 65536
"""Bytes asked of the socket per receive call."""

DEFAULT_CONNECT_TIMEOUT = 5.0

_NONBLOCK_FLAG: int = getattr(socket, "SOCK_NONBLOCK", 0)
_NONBLOCKING_STREAM = socket.SOCK_STREAM | _NONBLOCK_FLAG
"""A stream socket made non-blocking at birth where the OS can (Linux: one syscall fewer)."""


SEND_FAILURES = (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError)
"""What either transport's ``send`` raises when the peer went away (or the transport closed)."""

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

_REPLY_FAILURES = (RemoteProtocolError, *_HANGUPS)


def first_reply(
    transport: AsyncLineTransport | BlockingLineTransport, *, silent_close: bool = False
) -> _FirstReply:
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
    return _FirstReply(transport, silent_close)


class _FirstReply:
    """The context manager ``first_reply()`` returns (a plain class: no generator per call)."""

    __slots__ = ("silent_close", "transport")

    def __init__(
        self, transport: AsyncLineTransport | BlockingLineTransport, silent_close: bool
    ) -> None:
        self.transport = transport
        self.silent_close = silent_close

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            self.transport.answered = True
            return
        not_a_reply(self.transport, exc, silent_close=self.silent_close)


def not_a_reply(
    transport: AsyncLineTransport | BlockingLineTransport,
    exc: BaseException,
    *,
    silent_close: bool = False,
) -> None:
    """Apply ``first_reply()``'s rule to ``exc``, raised getting the first reply; else return.

    For a client that catches the error itself, so its success path runs no
    context manager (the herdr client: a connection per call, issue 16).

    Raises:
        UnreachableSocketError: ``other-protocol``, when ``exc`` says another
            protocol's server listens at the transport's path.

    """
    path = transport.path
    if transport.answered or path is None or not isinstance(exc, _REPLY_FAILURES):
        return
    closed = not isinstance(exc, RemoteProtocolError) or exc.code is ErrorCode.CONNECTION_CLOSED
    if silent_close and closed:
        return
    if isinstance(exc, RemoteProtocolError):
        if exc.code not in _NOT_A_REPLY:
            return
        raise other_protocol(path, exc.message) from exc
    raise other_protocol(path, "it hung up before replying") from exc


def _closed_error() -> RemoteProtocolError:
    return RemoteProtocolError(
        ErrorCode.CONNECTION_CLOSED, "the peer closed the connection before a complete frame"
    )


class AsyncClosing:
    """Mixin for things closed by ``aclose()``: ``async with`` closes them on the way out."""

    async def aclose(self) -> None:
        """Close; idempotent."""
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class BlockingClosing:
    """Mixin for things closed by ``close()``: ``with`` closes them on the way out."""

    def close(self) -> None:
        """Close; idempotent."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AsyncLineTransport(AsyncClosing):
    """An anyio byte stream that sends raw frames and receives framed lines.

    The connection has one deadline (:attr:`deadline`) that a client moves
    once per call with :meth:`set_timeout`; every wait of the call
    (:meth:`receive_some`, :meth:`receive_frame`, a send that must wait)
    ends at it with ``TimeoutError``. One task may receive at a time;
    senders queue behind each other.

    How a wait is bounded, cheaply:

    * on asyncio, over a socket, a receive that must wait awaits one future
      that the loop's reader callback resolves with the bytes it read itself
      (so the loop's stale report of the same readiness, which a level-triggered
      selector makes right after the wake-up, finds nothing to read and wakes
      nobody: no spurious wake-up per receive; bytes read for a receive that
      was cancelled meanwhile are kept for the next one); the loop keeps
      watching the socket after the wait (no registration per call) until
      it reports bytes nobody waits for, or the transport closes; deadlines
      slide as the servers' do: moving one later only changes
      :attr:`deadline`, and one timer per event loop, shared by every
      waiting receive, re-arms itself at the earliest deadline still
      waiting when it fires early, and fails a receive whose deadline has
      passed with ``TimeoutError`` (:class:`~shedproto.clients._waits.LoopDeadlines`). No cancel
      scope, no checkpoint, no timer per call or per connection;
    * the socket is read directly (no anyio stream, no event-loop round)
      right after a receive that got data, at most once in a row, so a peer
      that never stops sending cannot starve the event loop;
    * elsewhere (trio, a stream that is no socket) a wait that really blocks
      arms one bare cancel scope at the deadline.

    On asyncio a connection made by :meth:`connect` has no anyio stream
    until a write has to wait (most never do): it costs nothing to make or
    to close. A connection per request (herdr, the status socket) pays for
    little else either, which matters most on uvloop, where the socket
    work is about twice as fast as on asyncio (issue 16): the socket is
    non-blocking from birth (no extra syscall), :attr:`frames` is made on
    first use, the loop's :class:`~shedproto.clients._waits.LoopDeadlines` are found through a
    one-entry cache, and the wait runs in :meth:`receive_some`'s own frame.
    """

    def __init__(
        self,
        stream: anyio.abc.ByteStream | None,
        *,
        policy: FramingPolicy = DEFAULT_POLICY,
        path: str | None = None,
        sock: socket.socket | None = None,
    ) -> None:
        """Wrap ``stream``; or, with ``stream=None``, ``sock``: a connected non-blocking socket.

        ``sock`` (when given with a stream) is the socket under it, saving a lookup.

        Raises:
            ValueError: neither ``stream`` nor ``sock`` was given.

        """
        self._stream = stream
        self._frames: FrameQueue | None = None
        self._policy = policy
        self.path = path
        """The socket path :meth:`connect` used (``None`` for a stream from elsewhere)."""
        self.answered = False
        """Whether a reply of the protocol arrived (set by ``first_reply()``)."""
        self.deadline = math.inf
        """When the current call's waits end (``anyio.current_time()`` clock; inf: never)."""
        if sock is None:
            if stream is None:
                raise ValueError("AsyncLineTransport needs a stream or a socket")
            try:
                sock = stream.extra(SocketAttribute.raw_socket)
            except anyio.TypedAttributeLookupError:  # not a socket (a test double)
                sock = None
        self._raw: socket.socket | None = sock
        self._loop = None if sock is None else running_asyncio_loop()
        """The asyncio loop when the fast waits apply (asyncio and a socket), else None."""
        self._fd = -1 if sock is None else sock.fileno()
        self._waiter: asyncio.Future[bytes] | None = None
        """The future a waiting receive awaits (resolved with what the loop read for it)."""
        self._kept: bytes | None = None
        """Bytes the loop read for a receive that was cancelled before it got them."""
        self._watched = False
        """Whether the loop watches the socket for reading (from the first wait on, while
        the peer's bytes are awaited or read promptly: no registration per call)."""
        self._deadlines: LoopDeadlines | None = None
        """The loop's deadlines, once a wait with a deadline used them."""
        self._direct = sock is not None
        self._closed = False
        self._peer_sending = False
        """Whether the last receive got data (then the next one reads directly first)."""
        self._unsettled = False
        """Whether anyio's connect may still have a writer callback queued (see :meth:`aclose`)."""
        self._send_lock: CallLock | None = None
        """Made on the first write that has to wait (most connections never need it)."""
        self._writing: anyio.Event | None = None
        """Set while a write waits for room on the socket itself (asyncio): :meth:`aclose`
        wakes it and lets it unregister before the socket closes."""

    @property
    def frames(self) -> FrameQueue:
        """The frames received and not yet returned.

        Made on first use: clients whose core frames the bytes itself never need it.
        """
        frames = self._frames
        if frames is None:
            frames = self._frames = FrameQueue(self._policy)
        return frames

    @property
    def stream(self) -> anyio.abc.ByteStream | None:
        """The anyio stream (``None`` for a socket that never needed one)."""
        return self._stream

    @classmethod
    async def connect(
        cls,
        path: str | os.PathLike[str],
        *,
        timeout: float = DEFAULT_CONNECT_TIMEOUT,
        policy: FramingPolicy = DEFAULT_POLICY,
    ) -> Self:
        """Connect to the Unix socket at ``path`` within ``timeout`` seconds.

        The common case costs no timer: a Unix socket connects at once unless
        the server's backlog is full; only then does a deadline wait.

        Raises:
            UnreachableSocketError: connecting failed; ``reason`` says what is at the path.

        """
        target = os.fspath(path)
        sock = socket.socket(socket.AF_UNIX, _NONBLOCKING_STREAM)
        if not _NONBLOCK_FLAG:
            sock.setblocking(False)
        try:
            sock.connect(target)  # a Unix socket connects at once unless the backlog is full
        except BlockingIOError:
            sock.close()
            try:
                with anyio.fail_after(timeout):
                    stream: anyio.abc.SocketStream = await anyio.connect_unix(target)
            except (OSError, TimeoutError) as exc:
                raise unreachable(target, exc) from exc
            transport = cls(stream, policy=policy, path=target)
            transport._unsettled = True
            return transport
        except OSError as exc:
            sock.close()
            raise unreachable(target, exc) from exc
        transport = cls(None, policy=policy, path=target, sock=sock)
        if transport._loop is None:  # not asyncio: the waits go through an anyio stream
            transport._stream = await anyio.abc.UNIXSocketStream.from_socket(sock)
        return transport

    @staticmethod
    def new_lock() -> CallLock:
        """Return a lock for a client's calls (they may outlive one connection)."""
        return CallLock()

    def set_timeout(self, timeout: float | None) -> None:
        """Move the connection's deadline to ``timeout`` seconds from now (``None``, inf: none)."""
        if timeout is None or timeout == math.inf:
            self.deadline = math.inf
        else:
            loop = self._loop
            self.deadline = (anyio.current_time() if loop is None else loop.time()) + timeout

    async def _stream_for_waits(self) -> anyio.abc.ByteStream:
        """Return the anyio stream, wrapping the socket on first need."""
        stream = self._stream
        if stream is None:
            assert self._raw is not None
            stream = self._stream = await anyio.abc.UNIXSocketStream.from_socket(self._raw)
        return stream

    async def send(self, frame: bytes) -> None:
        """Write ``frame`` (already newline-terminated) in full.

        A frame the socket takes at once is written straight to it: no
        event-loop round, no lock. Once a write had to wait, every later
        one waits its turn under a lock, and the turn and the write end at
        the deadline. On asyncio the wait for room is the servers' guarded
        one (``shedproto.servers._receive.send_all``), never anyio's
        stream ``send``, whose loop callback fails when the deadline's
        cancellation lands in the pass that reports the socket writable.

        Raises:
            anyio.BrokenResourceError: the peer closed the connection.
            anyio.ClosedResourceError: this transport was closed.
            TimeoutError: a write that had to wait passed the deadline; part of
                the frame may have been written (close the connection).

        """
        if self._closed:
            raise anyio.ClosedResourceError
        self._peer_sending = False  # a request was sent: its answer is not there yet
        raw = self._raw
        if raw is not None and self._direct:
            try:
                sent = raw.send(frame)
            except BlockingIOError:
                sent = 0
            except OSError as exc:
                raise anyio.BrokenResourceError(f"the peer went away: {exc}") from exc
            if sent == len(frame):
                return
            self._direct = False  # bytes may now wait in the stream's buffer: keep order
            frame = frame[sent:]
        lock = self._send_lock
        if lock is None:
            lock = self._send_lock = self.new_lock()
        with anyio.CancelScope(deadline=self.deadline):
            async with lock:
                await self._send_waiting(frame)
            return
        raise TimeoutError("the peer did not take the frame before the deadline")

    async def _send_waiting(self, data: bytes) -> None:
        """Write ``data`` in full, waiting for room (the caller holds the send lock).

        Raises:
            anyio.BrokenResourceError: the peer closed the connection.

        """
        raw = self._raw
        if raw is None or self._loop is None:
            stream = await self._stream_for_waits()
            await stream.send(data)
            return
        # Imported here: the servers' package costs a client ~30 ms to import, and only a
        # write that finds the socket full needs it (the layers allow clients -> servers).
        from shedproto.servers._receive import send_all

        if self._closed:  # closed while this write queued for its turn
            raise anyio.ClosedResourceError
        writing = self._writing = anyio.Event()
        try:
            await send_all(raw, data)
        except anyio.BrokenResourceError:
            if self._closed:  # aclose() shut the socket down to wake this write
                raise anyio.ClosedResourceError from None
            raise
        finally:
            self._writing = None
            writing.set()

    async def receive_some(self) -> bytes:
        """Return the next bytes the peer sent, ``b""`` once it closed (the one receive helper).

        For clients whose core connection frames the bytes itself. Right
        after a receive that got data (the peer is sending: more, or its
        close, is likely there already) it first reads the socket directly;
        at most once in a row (see the class docstring). On asyncio a wait
        is one future the loop's reader callback resolves with the bytes it
        read (in this method's own frame: no helper coroutine per wait).

        Raises:
            TimeoutError: nothing arrived before the deadline.

        """
        raw = self._raw
        if raw is not None and self._peer_sending:
            self._peer_sending = False
            try:
                return raw.recv(RECEIVE_CHUNK)
            except BlockingIOError:
                pass
            except OSError:  # reset, or closed by us: both mean no more data
                return b""
        loop = self._loop
        if loop is None:
            return await self._receive_from_stream()
        kept = self._kept
        if kept is not None:
            self._kept = None
            return kept
        if self._closed:
            return b""
        if self._waiter is not None:
            raise anyio.BusyResourceError("reading from")
        waiter: asyncio.Future[bytes] = loop.create_future()
        self._waiter = waiter
        if not self._watched:
            loop.add_reader(self._fd, self._on_readable)
            self._watched = True
        deadline = self.deadline
        deadlines = None
        if deadline != math.inf:
            deadlines = self._deadlines = LoopDeadlines.of(loop)
            deadlines.watch(self, deadline, loop)
        try:
            data = await waiter  # b"" at EOF, on a socket error, or when aclose() closed us
        except BaseException:
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                self._kept = waiter.result()  # read for us, then cancelled: nothing is lost
            raise
        finally:
            if deadlines is not None:
                deadlines.waiting.discard(self)
            if self._waiter is waiter:
                self._waiter = None
        self._peer_sending = True
        return data

    async def _receive_from_stream(self) -> bytes:
        """Receive through the anyio stream (trio, or no socket), bounded by a cancel scope.

        Raises:
            TimeoutError: nothing arrived before the deadline.

        """
        stream = self._stream if self._stream is not None else await self._stream_for_waits()
        deadline = self.deadline
        try:
            if deadline == math.inf:
                data = await stream.receive(RECEIVE_CHUNK)
            else:
                with anyio.CancelScope(deadline=deadline):
                    data = await stream.receive(RECEIVE_CHUNK)
                    self._peer_sending = True
                    return data
                raise TimeoutError("nothing from the peer before the deadline")
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
            return b""
        self._peer_sending = True
        return data

    def _on_readable(self) -> None:
        """Read for the waiting receive and wake it; with none waiting, stop watching.

        A report with nothing to read (the stale one after a wake-up) wakes nobody.
        """
        waiter = self._waiter
        if waiter is None:
            assert self._loop is not None
            self._loop.remove_reader(self._fd)
            self._watched = False
        elif not waiter.done():
            assert self._raw is not None
            try:
                data = self._raw.recv(RECEIVE_CHUNK)
            except BlockingIOError:
                return
            except OSError:  # reset, or closed by us: both mean no more data
                data = b""
            waiter.set_result(data)

    def _time_out(self) -> None:
        """Fail the waiting receive with ``TimeoutError`` (its deadline passed)."""
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(TimeoutError("nothing from the peer before the deadline"))

    async def receive_frame(self, *, timeout: float | None = None) -> bytes:
        """Return the next frame, waiting until the deadline.

        ``timeout`` (seconds) first moves the deadline as :meth:`set_timeout` does.

        Raises:
            TimeoutError: the deadline passed; the partial frame stays buffered.
            RemoteProtocolError: ``CONNECTION_CLOSED`` when the peer closed first.
            FramingError: the peer's frame exceeded the cap.

        """
        if timeout is not None:
            self.set_timeout(timeout)
        frames = self.frames
        while True:
            frame = frames.next_frame()
            if frame is not None:
                return frame
            if frames.eof:
                raise _closed_error()
            frames.feed(await self.receive_some())

    async def request(self, frame: bytes, *, timeout: float | None = None) -> bytes:
        """Send ``frame`` and return the next frame received (one round trip)."""
        if timeout is not None:
            self.set_timeout(timeout)
        await self.send(frame)
        return await self.receive_frame()

    async def aclose(self) -> None:
        """Close the connection, even inside a cancelled scope; idempotent.

        A receive waiting in another task returns ``b""``; a write waiting for
        room raises ``anyio.ClosedResourceError``. A socket that
        never needed an anyio stream is closed directly. After a connect
        that had to wait, it first lets the event loop run once: with direct
        writes there may have been no checkpoint since, and anyio's queued
        writer callback must see the socket before it closes (its asyncio
        backend fails otherwise).
        """
        self._closed = True
        if self._deadlines is not None:
            self._deadlines.waiting.discard(self)
        if self._watched:
            assert self._loop is not None
            self._loop.remove_reader(self._fd)
            self._watched = False
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(b"")
        writing = self._writing
        if writing is not None:  # wake the write (the socket turns writable) and let it
            assert self._raw is not None  # unregister before its descriptor closes
            with contextlib.suppress(OSError):
                self._raw.shutdown(socket.SHUT_RDWR)
            with anyio.CancelScope(shield=True):
                await writing.wait()
        stream = self._stream
        if stream is None:
            assert self._raw is not None
            self._raw.close()
            return
        with anyio.CancelScope(shield=True):
            if self._unsettled:
                await anyio.lowlevel.checkpoint()
            await stream.aclose()


class BlockingLineTransport(BlockingClosing):
    """The blocking twin of :class:`AsyncLineTransport`, over a plain socket.

    The deadline is the socket's timeout, set from :attr:`deadline` before each receive.
    """

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
        """Whether a reply of the protocol arrived (set by ``first_reply()``)."""
        self.deadline = math.inf
        """When the current call's waits end (``time.monotonic()`` clock; inf: never)."""

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

    @staticmethod
    def new_lock() -> threading.Lock:
        """Return a lock for a client's calls (they may outlive one connection)."""
        return threading.Lock()

    def set_timeout(self, timeout: float | None) -> None:
        """Move the connection's deadline to ``timeout`` seconds from now (``None``, inf: none)."""
        if timeout is None or timeout == math.inf:
            self.deadline = math.inf
        else:
            self.deadline = time.monotonic() + timeout

    def send(self, frame: bytes) -> None:
        """Write ``frame`` in full, by the deadline (see the async form).

        Raises:
            OSError: the peer closed the connection (``BrokenPipeError``).
            TimeoutError: the peer did not take the frame before the deadline;
                part of it may have been written (close the connection).

        """
        sock = self.sock
        deadline = self.deadline
        if deadline != math.inf:
            sock.settimeout(max(deadline - time.monotonic(), 0.0))
        elif sock.gettimeout() is not None:
            sock.settimeout(None)
        try:
            sock.sendall(frame)
        except (BlockingIOError, TimeoutError):  # a zero timeout makes the socket non-blocking
            raise TimeoutError("the peer did not take the frame before the deadline") from None

    def receive_some(self) -> bytes:
        """Return the next bytes the peer sent, ``b""`` once it closed (see the async form).

        Past the deadline it still takes what is already there.

        Raises:
            TimeoutError: nothing arrived before the deadline.

        """
        sock = self.sock
        deadline = self.deadline
        if deadline != math.inf:
            sock.settimeout(max(deadline - time.monotonic(), 0.0))
        elif sock.gettimeout() is not None:
            sock.settimeout(None)
        try:
            return sock.recv(RECEIVE_CHUNK)
        except BlockingIOError:  # a zero timeout makes the socket non-blocking
            raise TimeoutError("nothing from the peer before the deadline") from None
        except ConnectionResetError:
            return b""

    def receive_frame(self, *, timeout: float | None = None) -> bytes:
        """Return the next frame, waiting until the deadline (see the async form).

        Raises:
            TimeoutError: the deadline passed; the partial frame stays buffered.
            RemoteProtocolError: ``CONNECTION_CLOSED`` when the peer closed first.
            FramingError: the peer's frame exceeded the cap.

        """
        if timeout is not None:
            self.set_timeout(timeout)
        frames = self.frames
        while True:
            frame = frames.next_frame()
            if frame is not None:
                return frame
            if frames.eof:
                raise _closed_error()
            frames.feed(self.receive_some())

    def request(self, frame: bytes, *, timeout: float | None = None) -> bytes:
        """Send ``frame`` and return the next frame received (one round trip)."""
        if timeout is not None:
            self.set_timeout(timeout)
        self.send(frame)
        return self.receive_frame()

    def close(self) -> None:
        """Close the socket; idempotent."""
        self.sock.close()
