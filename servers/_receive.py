"""The byte pump every server uses, and the one set of hang-up errors.

A peer that hangs up (EOF, a reset, a stream already closed) is the end of the
stream, which the sans-IO cores take as ``b""``: never an exception for a
shell to catch in its own way. :data:`HANGUP_ERRORS` is the single
definition of "the peer went away": :func:`receive_or_eof` reads it as EOF
and :func:`~shedproto.servers.is_hangup` logs it at debug level only.

:class:`SocketPump` is the fast path (issue 16). anyio's socket streams take
a checkpoint (a full event-loop pass) at the start of every ``receive`` and
``send``; a request/response server pays three loop passes per frame that
way (the receive's checkpoint, its wait for data, the send's checkpoint).
The pump reads straight from the non-blocking socket and waits for
readability only when it is empty, and writes straight to it, handing only
what the socket did not take to ``stream.send`` (which waits for room): one
loop pass per frame. So that a peer whose data is always there cannot starve
the others, every :data:`EAGER_READS` reads that found data without waiting
take a checkpoint.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Generic, TypeVar

import anyio
import anyio.abc
import anyio.lowlevel
from anyio.abc import SocketAttribute

from ._loop import running_asyncio_loop

__all__ = [
    "EAGER_READS",
    "HANGUP_ERRORS",
    "RECEIVE_CHUNK",
    "ReadableWatch",
    "SocketPump",
    "WatchedReads",
    "raw_socket_of",
    "receive_or_eof",
    "send_all",
    "send_now",
    "wait_readable",
    "wait_writable",
]

T = TypeVar("T")

RECEIVE_CHUNK = 65536
"""Bytes asked of the socket per read."""

EAGER_READS = 16
"""Reads in a row that found data at once before :class:`SocketPump` yields to other tasks."""

HANGUP_ERRORS: tuple[type[Exception], ...] = (
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    anyio.EndOfStream,
    ConnectionError,  # ConnectionResetError, BrokenPipeError, ConnectionAbortedError
)
"""Exceptions that only say the peer is gone.

anyio already turns a socket's ``OSError`` into ``BrokenResourceError`` on
both backends; ``ConnectionError`` covers streams that raise the system's own
(test doubles, raw sockets). Other ``OSError`` s (a file a handler could not
open) are faults, not hang-ups, and are not in the set.
"""


async def receive_or_eof(
    stream: anyio.abc.ByteReceiveStream, max_bytes: int = RECEIVE_CHUNK
) -> bytes:
    """Return the next bytes from ``stream``, or ``b""`` when the peer is gone.

    Every error in :data:`HANGUP_ERRORS` reads as the end of the stream;
    anything else and cancellation propagate.
    """
    try:
        return await stream.receive(max_bytes)
    except HANGUP_ERRORS:
        return b""


def raw_socket_of(stream: anyio.abc.AnyByteStream) -> socket.socket | None:
    """Return the socket under ``stream``, or ``None`` when it is not a socket stream.

    Same answer as ``stream.extra(SocketAttribute.raw_socket, None)``, without
    its cost: anyio builds the whole attribute mapping on every ``extra`` call,
    with a ``getpeername`` system call (several µs, a visible share of a
    connection that lives for one status line). Every anyio socket stream
    (both backends) keeps its socket in the ``_raw_socket`` property the
    mapping reads; when a stream has none, ``extra`` answers. Never raises.
    """
    if isinstance(stream, anyio.abc.SocketStream):
        raw = getattr(stream, "_raw_socket", None)
        if isinstance(raw, socket.socket):
            return raw
    found: socket.socket | None = stream.extra(SocketAttribute.raw_socket, None)
    return found


class SocketPump:
    """Receive and send on one connection without anyio's per-call checkpoints.

    ``receive`` behaves like :func:`receive_or_eof` (``b""`` once the peer is
    gone; cancellation propagates while it waits) and ``send`` like
    ``stream.send`` (a socket error raises ``anyio.BrokenResourceError``). A
    stream that is not a socket (a test double) is used through its own
    methods. Only one task may receive and one task send at a time, as with
    the stream itself.
    """

    __slots__ = ("_eager", "raw", "stream")

    def __init__(self, stream: anyio.abc.ByteStream) -> None:
        self.stream = stream
        self.raw = raw_socket_of(stream)
        self._eager = 0

    async def receive(self, max_bytes: int = RECEIVE_CHUNK) -> bytes:
        """Return the next bytes, or ``b""`` at EOF or when the peer is gone."""
        raw = self.raw
        if raw is None:
            return await receive_or_eof(self.stream, max_bytes)
        if self._eager >= EAGER_READS:
            self._eager = 0
            await anyio.lowlevel.checkpoint()
        try:
            data = raw.recv(max_bytes)
        except BlockingIOError:
            self._eager = 0
        except OSError:  # anyio's BrokenResourceError: a hang-up
            return b""
        else:
            self._eager += 1
            return data
        while True:
            try:
                await wait_readable(raw)
                return raw.recv(max_bytes)
            except BlockingIOError:  # a spurious wake-up
                continue
            except (OSError, anyio.ClosedResourceError):
                return b""

    def receive_now(self, max_bytes: int = RECEIVE_CHUNK) -> bytes | None:
        """Return what the socket holds right now without waiting (``b""``: the peer is gone).

        ``None`` when nothing has arrived yet, or without a socket: then
        :meth:`receive` waits. A shell calls this first so that it arms a
        deadline only when it really has to wait.
        """
        raw = self.raw
        if raw is None:
            return None
        try:
            return raw.recv(max_bytes)
        except BlockingIOError:
            return None
        except OSError:  # anyio's BrokenResourceError: a hang-up
            return b""

    def send_now(self, data: bytes) -> bytes:
        """Write what the socket takes without waiting; return the rest (all without a socket).

        Raises:
            anyio.BrokenResourceError: the socket failed (the peer is gone).

        """
        raw = self.raw
        if raw is None:
            return data
        return send_now(raw, data)

    async def send(self, data: bytes) -> None:
        """Write all of ``data``; what the socket does not take at once goes via the stream.

        Raises:
            anyio.BrokenResourceError: the socket failed (the peer is gone).

        """
        rest = self.send_now(data)
        if not rest:
            return
        raw = self.raw
        if raw is None or running_asyncio_loop() is None:
            await self.stream.send(rest)
            return
        await send_all(raw, rest)


class _LoopWatch(Generic[T]):
    """One reader registration on the running asyncio loop, kept while waits recur.

    Shared by :class:`WatchedReads` and :class:`ReadableWatch`: :meth:`_arm`
    makes the waiter's future and registers the socket unless it still is;
    the loop's callback hands the waiter to :meth:`_wake` (which may leave it
    waiting), and with nobody waiting stops the watch until the next
    :meth:`_arm`, so a socket left readable never spins the loop.
    """

    __slots__ = ("_fd", "_loop", "_waiter", "_watched")

    def __init__(self, loop: asyncio.AbstractEventLoop | None, fd: int) -> None:
        self._loop = loop
        self._fd = fd
        self._waiter: asyncio.Future[T] | None = None
        self._watched = False

    def _arm(self, loop: asyncio.AbstractEventLoop) -> asyncio.Future[T]:
        waiter: asyncio.Future[T] = loop.create_future()
        self._waiter = waiter
        if not self._watched:
            loop.add_reader(self._fd, self._on_readable)
            self._watched = True
        return waiter

    def _disarm(self, waiter: asyncio.Future[T]) -> None:
        if self._waiter is waiter:
            self._waiter = None

    def _on_readable(self) -> None:
        waiter = self._waiter
        if waiter is None:
            self.unwatch()
        elif not waiter.done():
            self._wake(waiter)

    def _wake(self, waiter: asyncio.Future[T]) -> None:
        raise NotImplementedError

    def unwatch(self) -> None:
        """Stop the loop watching the socket (until the next wait); idempotent."""
        if self._watched:
            assert self._loop is not None
            self._loop.remove_reader(self._fd)
            self._watched = False


class WatchedReads(_LoopWatch[bytes]):
    """``receive()`` like :meth:`SocketPump.receive`, for a connection read all its life.

    The pump registers a reader for each wait and removes it after, first
    trying a read that usually fails; this registers once (asyncio, uvloop
    too): the loop's callback reads the bytes for the waiting receive and
    hands them over through one future. A readiness report with nothing to
    read (the stale one a level-triggered loop makes right after a wake-up)
    wakes nobody; with no receive waiting, the callback stops the watch until
    the next wait. Bytes read for a receive cancelled meanwhile are kept for
    the next one. Elsewhere (trio, a stream that is no socket) it is the pump.

    One task receives at a time. ``receive`` returns ``b""`` at EOF, when the
    peer is gone, or after :meth:`close` (call it before the socket closes);
    cancellation propagates.
    """

    __slots__ = ("_kept", "_pump")

    def __init__(self, pump: SocketPump) -> None:
        raw = pump.raw
        super().__init__(
            running_asyncio_loop() if raw is not None else None,
            -1 if raw is None else raw.fileno(),
        )
        self._pump = pump
        self._kept: bytes | None = None

    async def receive(self) -> bytes:
        """Return the next bytes, ``b""`` at EOF, when the peer is gone or after :meth:`close`."""
        loop = self._loop
        if loop is None:
            return await self._pump.receive()
        kept = self._kept
        if kept is not None:
            self._kept = None
            return kept
        if self._fd < 0:
            return b""
        waiter = self._arm(loop)
        try:
            return await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self._kept = waiter.result()  # read for us, then cancelled: nothing is lost
            raise
        finally:
            self._disarm(waiter)

    def _wake(self, waiter: asyncio.Future[bytes]) -> None:
        raw = self._pump.raw
        assert raw is not None
        try:
            data = raw.recv(RECEIVE_CHUNK)
        except BlockingIOError:
            return  # a stale report: keep waiting
        except OSError:  # a hang-up
            data = b""
        waiter.set_result(data)

    def close(self) -> None:
        """Stop watching for good and end a waiting receive with ``b""``; idempotent."""
        self.unwatch()
        self._fd = -1
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(b"")


class ReadableWatch(_LoopWatch[None]):
    """``wait()`` until a socket is readable, registered with the loop once while waits recur.

    For a socket waited on again and again (a listening socket): on asyncio
    (uvloop too) the reader stays registered between waits instead of being
    added and removed around each one (on uvloop every registration makes
    and destroys a poll handle, several µs of a connection that carries one
    request). A readiness report while nobody waits stops the watch until the
    next wait, so a socket left readable never spins the loop. Elsewhere
    (trio) each wait is ``anyio.wait_readable``.

    One task waits at a time; cancellation propagates. Call :meth:`close`
    (the same as :meth:`unwatch`) before the socket closes.
    """

    __slots__ = ("_raw",)

    def __init__(self, raw: socket.socket) -> None:
        super().__init__(running_asyncio_loop(), raw.fileno())
        self._raw = raw

    async def wait(self) -> None:
        """Return once the socket is readable (or may be: callers retry on ``BlockingIOError``)."""
        loop = self._loop
        if loop is None:
            await anyio.wait_readable(self._raw)
            return
        waiter = self._arm(loop)
        try:
            await waiter
        finally:
            self._disarm(waiter)

    def _wake(self, waiter: asyncio.Future[None]) -> None:
        waiter.set_result(None)

    def close(self) -> None:
        """Stop watching (a later :meth:`wait` watches again); idempotent."""
        self.unwatch()


async def wait_readable(raw: socket.socket) -> None:
    """Wait until ``raw`` is readable, as ``anyio.wait_readable`` on its own socket.

    On asyncio (uvloop too) this registers a reader on the running loop
    directly, as anyio's socket streams do: ``anyio.wait_readable`` finds the
    backend and its per-loop registry on every call, which costs a request
    round trip several µs (issue 16). Only one task may wait on a socket at a
    time. Elsewhere (trio) it is ``anyio.wait_readable``. Cancellation
    propagates, with the reader removed.
    """
    loop = running_asyncio_loop()
    if loop is None:
        await anyio.wait_readable(raw)
        return
    readable = loop.create_future()
    fd = raw.fileno()
    loop.add_reader(fd, _wake, readable)
    try:
        await readable
    finally:
        loop.remove_reader(fd)


async def wait_writable(raw: socket.socket) -> None:
    """Wait until ``raw`` is writable (asyncio and uvloop: a reader-style writer callback).

    Like :func:`wait_readable`: the loop's callback resolves the future only if it is
    not done yet, so a cancelled wait never makes the loop report an error.
    Cancellation propagates, with the writer removed.
    """
    loop = running_asyncio_loop()
    if loop is None:
        await anyio.wait_writable(raw)
        return
    writable = loop.create_future()
    fd = raw.fileno()
    loop.add_writer(fd, _wake, writable)
    try:
        await writable
    finally:
        loop.remove_writer(fd)


def send_now(raw: socket.socket, data: bytes) -> bytes:
    """Write what the non-blocking socket ``raw`` takes without waiting; return the rest.

    Raises:
        anyio.BrokenResourceError: the socket failed (the peer is gone).

    """
    try:
        sent = raw.send(data)
    except BlockingIOError:
        return data
    except OSError as exc:
        raise anyio.BrokenResourceError(f"the peer went away: {exc}") from exc
    return data[sent:] if sent < len(data) else b""


async def send_all(raw: socket.socket, data: bytes) -> None:
    """Write all of ``data`` to the non-blocking socket ``raw``, waiting with :func:`wait_writable`.

    The one slow-path send of both shells (the servers' :class:`SocketPump`, the
    clients' transport). Not an anyio stream's ``send``: anyio's asyncio socket
    stream resolves its writability future from an unguarded loop callback, so a
    cancellation (a deadline, a peer gone mid-burst) landing in the loop pass that
    reports the socket writable makes asyncio log ``InvalidStateError``.
    Cancellation propagates; what was written stays written.

    Raises:
        anyio.BrokenResourceError: the socket failed (the peer is gone).

    """
    rest = send_now(raw, data)
    while rest:
        await wait_writable(raw)
        rest = send_now(raw, rest)


def _wake(waiter: asyncio.Future[None]) -> None:
    """Resolve ``waiter`` unless it is already done (cancelled while the callback was queued)."""
    if not waiter.done():
        waiter.set_result(None)
