"""The one receive step every server's byte pump uses, and the one set of hang-up errors.

A peer that hangs up (EOF, a reset, a stream already closed) is the end of the
stream, which the sans-IO cores take as ``b""``: never an exception for a
shell to catch in its own way. :data:`HANGUP_ERRORS` is the single
definition of "the peer went away": :func:`receive_or_eof` reads it as EOF
and :func:`~shedproto.servers.is_hangup` logs it at debug level only.
"""

from __future__ import annotations

import anyio
import anyio.abc

__all__ = ["HANGUP_ERRORS", "RECEIVE_CHUNK", "receive_or_eof"]

RECEIVE_CHUNK = 65536
"""Bytes asked of the socket per read."""

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
