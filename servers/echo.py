"""The framing echo server: the smallest complete reference shell.

It exercises every shared shell part (bind ceremony, serve loop, framing with
a cap, deadlines) and nothing protocol-specific: each complete line it
receives is written back with a newline. ``shedproto demo`` and the
round-trip benchmark drive it; protocol servers follow the same shape.
"""

from __future__ import annotations

import os

import anyio
import anyio.abc

from shedproto import FramingError, FramingPolicy, LineBuffer

from ._idle import IdleDeadline
from ._receive import SocketPump
from ._unix import UnixServer

__all__ = ["ECHO_POLICY", "IDLE_TIMEOUT", "echo_server", "serve_echo_connection"]

ECHO_POLICY = FramingPolicy(max_frame_bytes=1 << 20)
"""1 MiB cap; blank lines skipped; the tail at EOF echoed as a final frame."""

IDLE_TIMEOUT = 30.0
"""Seconds a connection may stay silent before the server closes it."""


async def serve_echo_connection(
    stream: anyio.abc.ByteStream, *, policy: FramingPolicy = ECHO_POLICY
) -> None:
    """Echo every frame on ``stream`` until EOF, idle timeout or a framing error.

    An over-cap frame closes the connection after the frames before it were
    echoed; nothing is raised to the caller for peer misbehaviour.
    """
    lines = LineBuffer(policy)
    pump = SocketPump(stream)
    idle = IdleDeadline(IDLE_TIMEOUT)
    with idle.scope:
        while True:
            data = await pump.receive()
            idle.touch()
            try:
                frames = lines.feed(data)
            except FramingError as exc:  # echo what came before the bad frame, then hang up
                if exc.frames_before:
                    await pump.send(b"\n".join(exc.frames_before) + b"\n")
                return
            if frames:
                await pump.send(b"\n".join(frames) + b"\n")
            if not data:
                return


def echo_server(path: str | os.PathLike[str], *, grace: float = 1.0) -> UnixServer:
    """Return a :class:`~shedproto.servers.UnixServer` echoing frames on ``path``; run ``serve``."""
    return UnixServer(path, serve_echo_connection, grace=grace)
