"""shedproto: the local control protocols of the AI-agent tooling stack, sans-IO.

This package is the core: bytes in, typed frames and events out, and back. It
never opens a socket, starts a task, reads a clock or touches the environment
on its own; those are the jobs of :mod:`shedproto.servers` and
:mod:`shedproto.clients`. Protocol cores live in sub-packages
(``shedproto.host_agent``, ``shedproto.desktop``, ``shedproto.herdr``,
``shedproto.connector``); this top level holds what they share.
"""

from __future__ import annotations

from ._codec import LenientFrame, StrictFrame, decode_frame, decoder_for, encode, encode_line
from ._contract import (
    ConnectionClosed,
    Contract,
    LineSkipped,
    Outbox,
    Role,
    TableEnum,
    TransitionTable,
)
from ._errors import (
    ErrorCode,
    ErrorReport,
    FramingError,
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
    remote_error_from_msgspec,
)
from ._framing import BlankLines, EofTail, FrameQueue, FramingPolicy, LineBuffer, OverCap
from ._schema_registry import json_schemas
from ._version import __version__

__all__ = [
    "__version__",
    # errors
    "ErrorCode",
    "ErrorReport",
    "ProtocolError",
    "LocalProtocolError",
    "RemoteProtocolError",
    "FramingError",
    "remote_error_from_msgspec",
    # the connection contract
    "Contract",
    "TransitionTable",
    "Role",
    "TableEnum",
    "Outbox",
    "ConnectionClosed",
    "LineSkipped",
    # framing
    "LineBuffer",
    "FrameQueue",
    "FramingPolicy",
    "BlankLines",
    "EofTail",
    "OverCap",
    # codec
    "StrictFrame",
    "LenientFrame",
    "decoder_for",
    "decode_frame",
    "encode",
    "encode_line",
    # schemas
    "json_schemas",
]
