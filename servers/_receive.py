"""The one receive step every server's byte pump uses: the next chunk, or ``b""`` at the end.

A peer that hangs up (EOF, a reset, a stream already closed) is the end of the
stream, which the sans-IO cores take as ``b""``: never an exception for a
shell to catch in its own way.
"""

from __future__ import annotations

import anyio
import anyio.abc

__all__ = ["RECEIVE_CHUNK", "receive_or_eof"]

RECEIVE_CHUNK = 65536
"""Bytes asked of the socket per read."""


async def receive_or_eof(
    stream: anyio.abc.ByteReceiveStream, max_bytes: int = RECEIVE_CHUNK
) -> bytes:
    """Return the next bytes from ``stream``, or ``b""`` when the peer is gone.

    EOF, a broken or closed stream and a socket error all read as the end of
    the stream; cancellation propagates.
    """
    try:
        return await stream.receive(max_bytes)
    except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        return b""
