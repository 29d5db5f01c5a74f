"""Clients (async and blocking) and the ``shedproto`` command line.

The transports here are protocol-neutral; protocol clients live in
sub-modules and are built on :class:`AsyncLineTransport` and
:class:`BlockingLineTransport`.
"""

from __future__ import annotations

from ._transport import AsyncLineTransport, BlockingLineTransport, ConnectError
from ._unreachable import ConnectReason, UnreachableSocketError

__all__ = [
    "AsyncLineTransport",
    "BlockingLineTransport",
    "ConnectError",
    "ConnectReason",
    "UnreachableSocketError",
]
