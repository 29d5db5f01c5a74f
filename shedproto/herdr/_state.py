"""The connection state machines of both roles, as one transition table.

herdr serves exactly one request per connection. The client sends one
request line and reads one answer; an ``events.subscribe`` whose answer is
the ``subscription_started`` acknowledgement then streams event lines until
either side closes. The server reads one line, answers it, and closes (or
streams, after the acknowledgement). Everything not in :data:`TRANSITIONS`
is a protocol error and leaves the connection in ``ERROR``.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["Input", "Role", "State", "TRANSITIONS", "next_state"]


class Role(Enum):
    """Which side of the connection a state machine tracks."""

    CLIENT = "client"
    SERVER = "server"


class State(Enum):
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
    """The peer's end of stream was seen, or the client went away."""
    ERROR = "error"
    """A protocol violation; sticky."""


class Input(Enum):
    """What happened: something sent or received."""

    REQUEST = "request"
    ANSWER = "answer"
    ACK = "ack"
    EVENT = "event"
    EOF = "eof"
    CLIENT_DATA = "client_data"
    STREAM_ERROR = "stream_error"
    """An error answer while streaming (protocol 22's ``events_lost``)."""


TRANSITIONS: dict[tuple[Role, State, Input], State] = {
    (Role.CLIENT, State.IDLE, Input.REQUEST): State.AWAITING,
    (Role.CLIENT, State.AWAITING, Input.ANSWER): State.DONE,
    (Role.CLIENT, State.AWAITING, Input.ACK): State.STREAMING,
    (Role.CLIENT, State.STREAMING, Input.EVENT): State.STREAMING,
    (Role.CLIENT, State.STREAMING, Input.STREAM_ERROR): State.DONE,
    (Role.CLIENT, State.STREAMING, Input.EOF): State.CLOSED,
    (Role.CLIENT, State.DONE, Input.EOF): State.CLOSED,
    (Role.CLIENT, State.CLOSED, Input.EOF): State.CLOSED,
    (Role.SERVER, State.IDLE, Input.REQUEST): State.AWAITING,
    (Role.SERVER, State.IDLE, Input.EOF): State.CLOSED,
    (Role.SERVER, State.AWAITING, Input.ANSWER): State.DONE,
    (Role.SERVER, State.AWAITING, Input.ACK): State.STREAMING,
    (Role.SERVER, State.AWAITING, Input.CLIENT_DATA): State.LEAVING,
    (Role.SERVER, State.AWAITING, Input.EOF): State.LEAVING,
    (Role.SERVER, State.LEAVING, Input.ANSWER): State.CLOSED,
    (Role.SERVER, State.LEAVING, Input.ACK): State.CLOSED,
    (Role.SERVER, State.LEAVING, Input.CLIENT_DATA): State.LEAVING,
    (Role.SERVER, State.LEAVING, Input.EOF): State.LEAVING,
    (Role.SERVER, State.STREAMING, Input.EVENT): State.STREAMING,
    (Role.SERVER, State.STREAMING, Input.STREAM_ERROR): State.DONE,
    (Role.SERVER, State.STREAMING, Input.CLIENT_DATA): State.CLOSED,
    (Role.SERVER, State.STREAMING, Input.EOF): State.CLOSED,
    (Role.SERVER, State.DONE, Input.CLIENT_DATA): State.DONE,
    (Role.SERVER, State.DONE, Input.EOF): State.CLOSED,
    (Role.SERVER, State.CLOSED, Input.CLIENT_DATA): State.CLOSED,
    (Role.SERVER, State.CLOSED, Input.EOF): State.CLOSED,
}
"""(role, state, input) -> next state. A server's ``CLIENT_DATA`` while it
works on an answer or streams means "the client is gone" (herdr's rule: any
byte after the request line, or a half-close, ends a stream or drops a wait's
answer). herdr sees it only when it probes the socket, between stream rounds
and wait polls, so while answering (``LEAVING``) the one answer or the
subscription acknowledgement it writes before its first probe still goes
out, and then the connection is over (``CLOSED``). An error answer while
streaming is protocol 22's ``events_lost``: it ends the stream (``DONE``)."""


def next_state(role: Role, state: State, event: Input) -> State | None:
    """Return the state after ``event``, or ``None`` when the table forbids it."""
    return TRANSITIONS.get((role, state, event))
