"""The connection state machines of both roles, as contract transition tables.

herdr serves exactly one request per connection. The client sends one
request line and reads one answer; an ``events.subscribe`` whose answer is
the ``subscription_started`` acknowledgement then streams event lines until
either side closes. The server reads one line, answers it, and closes (or
streams, after the acknowledgement).

Each table maps ``(state, event type) -> next state`` (h11's rule): an event
type is a frame class (:class:`~shedproto.herdr.SuccessResponse`,
:class:`~shedproto.herdr.ErrorResponse`, a lifecycle or subscription event)
or, for what has no class of its own, an :class:`Input` (any request, the
acknowledgement, end of stream, the client's bytes after its request, the
request deadline, bytes fed after a failure). Everything not in a table is a
protocol error; a peer's error leaves the connection in the sticky ``ERROR``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shedproto._contract import TableEnum, TransitionTable

from ._envelope import ErrorResponse, LifecycleEvent, SubscriptionEvent, SuccessResponse

__all__ = [
    "CLIENT_TABLE",
    "CLIENT_TRANSITIONS",
    "SERVER_TABLE",
    "SERVER_TRANSITIONS",
    "Input",
    "State",
]


class State(TableEnum):
    """Connection states shared by both roles."""

    IDLE = "idle"
    """Client: nothing sent yet. Server: waiting for the request line."""
    AWAITING = "awaiting"
    """Client: request sent. Server: request received, answer not yet sent."""
    STREAMING = "streaming"
    """Subscription acknowledged; event lines flow from server to client."""
    LEAVING = "leaving"
    """Server: the client sent bytes (or half-closed) after its request line
    before the answer. herdr only notices at its next socket probe, so one
    answer or acknowledgement may still be written; no event may follow."""
    DONE = "done"
    """The one answer has passed; the connection only closes from here."""
    CLOSED = "closed"
    """The peer's end of stream was seen, the client went away, or the request
    line missed its deadline."""
    ERROR = "error"
    """A protocol violation; sticky."""


class Input(TableEnum):
    """Event types without a frame class of their own."""

    REQUEST = "request"
    """Any request (every method has its own class)."""
    ACK = "ack"
    """The ``subscription_started`` success answer: it starts the stream."""
    EOF = "eof"
    CLIENT_DATA = "client_data"
    """Server: bytes (or a half-close) from the client after its request line."""
    TIMEOUT = "timeout"
    """Server: the request line did not arrive by the deadline."""
    DATA = "data"
    """Bytes fed to a failed connection (never legal: names the earlier failure)."""


_S = State
ANSWERS = (SuccessResponse, ErrorResponse)
STREAMED = (LifecycleEvent, SubscriptionEvent)

CLIENT_TRANSITIONS: Mapping[tuple[State, Any], State] = {
    (_S.IDLE, Input.REQUEST): _S.AWAITING,
    **{(_S.AWAITING, answer): _S.DONE for answer in ANSWERS},
    (_S.AWAITING, Input.ACK): _S.STREAMING,
    **{(_S.STREAMING, event): _S.STREAMING for event in STREAMED},
    (_S.STREAMING, ErrorResponse): _S.DONE,
    (_S.STREAMING, Input.EOF): _S.CLOSED,
    (_S.DONE, Input.EOF): _S.CLOSED,
    (_S.CLOSED, Input.EOF): _S.CLOSED,
}
"""An error line while streaming is protocol 22's ``events_lost``: it ends the stream."""

CLIENT_TABLE = TransitionTable("herdr client", CLIENT_TRANSITIONS, error=_S.ERROR)
"""The contract table of :class:`~shedproto.herdr.ClientConnection`."""

_GONE = (Input.CLIENT_DATA, Input.EOF)

SERVER_TRANSITIONS: Mapping[tuple[State, Any], State] = {
    (_S.IDLE, Input.REQUEST): _S.AWAITING,
    (_S.IDLE, Input.EOF): _S.CLOSED,
    (_S.IDLE, Input.TIMEOUT): _S.CLOSED,
    **{(_S.AWAITING, answer): _S.DONE for answer in ANSWERS},
    (_S.AWAITING, Input.ACK): _S.STREAMING,
    **{(_S.AWAITING, gone): _S.LEAVING for gone in _GONE},
    **{(_S.LEAVING, answer): _S.CLOSED for answer in (*ANSWERS, Input.ACK)},
    **{(_S.LEAVING, gone): _S.LEAVING for gone in _GONE},
    **{(_S.STREAMING, event): _S.STREAMING for event in STREAMED},
    (_S.STREAMING, ErrorResponse): _S.DONE,
    **{(_S.STREAMING, gone): _S.CLOSED for gone in _GONE},
    (_S.DONE, Input.CLIENT_DATA): _S.DONE,
    (_S.DONE, Input.EOF): _S.CLOSED,
    **{(_S.CLOSED, gone): _S.CLOSED for gone in _GONE},
}
"""A server's ``CLIENT_DATA`` while it works on an answer or streams means
"the client is gone" (herdr's rule: any byte after the request line, or a
half-close, ends a stream or drops a wait's answer). herdr sees it only when
it probes the socket, between stream rounds and wait polls, so while
answering (``LEAVING``) the one answer or the subscription acknowledgement it
writes before its first probe still goes out, and then the connection is
over (``CLOSED``). An error answer while streaming is protocol 22's
``events_lost``: it ends the stream (``DONE``)."""

SERVER_TABLE = TransitionTable("herdr server", SERVER_TRANSITIONS, error=_S.ERROR)
"""The contract table of :class:`~shedproto.herdr.ServerConnection`."""
