"""Every state machine of the desktop core, as transition tables (h11's rule 1).

* :data:`SERVER_TRANSITIONS`: a server connection (read side, and the answers
  it may still send), the contract table of :class:`ServerConnection`.
* :data:`CLIENT_TRANSITIONS`: a client connection.
* :data:`ATTEMPT_TRANSITIONS`: the app's ``craze.create`` attempt (send, one
  retry under the same id, then ``outcome_unknown``).
* :data:`TICKET_TRANSITIONS`: the client's request-id lifecycle (keep the id
  only while the outcome is unknown).

Anything not in a table is an error; :func:`transition` (the contract's
:func:`shedproto._contract.step`) raises it.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum

from shedproto._contract import TableEnum, TransitionTable, step

__all__ = [
    "ATTEMPT_TRANSITIONS",
    "SERVER_TABLE",
    "SERVER_TRANSITIONS",
    "TICKET_TRANSITIONS",
    "AttemptInput",
    "AttemptState",
    "CLIENT_TABLE",
    "CLIENT_TRANSITIONS",
    "ClientInput",
    "ClientState",
    "ConnInput",
    "ConnState",
    "TicketInput",
    "TicketState",
    "transition",
]


class ConnState(TableEnum):
    """A server connection's read side."""

    OPEN = "open"
    """Reading requests."""
    PEER_CLOSED = "peer_closed"
    """The client sent EOF; requests already read are still answered."""
    CLOSED = "closed"
    """An over-cap frame ended the connection; answers already owed are still sent."""


class ConnInput(TableEnum):
    """What the peer did (``DATA``, ``EOF``, ``OVERSIZE``) or this side sends (``ANSWER``)."""

    DATA = "data"
    EOF = "eof"
    OVERSIZE = "oversize"
    ANSWER = "answer"
    """An answer (success or failure) to the oldest unanswered request."""


SERVER_TRANSITIONS: Mapping[tuple[ConnState, ConnInput], ConnState] = {
    (ConnState.OPEN, ConnInput.DATA): ConnState.OPEN,
    (ConnState.OPEN, ConnInput.EOF): ConnState.PEER_CLOSED,
    (ConnState.OPEN, ConnInput.OVERSIZE): ConnState.CLOSED,
    # answers already owed still go out after EOF or an over-cap line
    **{(state, ConnInput.ANSWER): state for state in ConnState},
}

SERVER_TABLE = TransitionTable("desktop server", SERVER_TRANSITIONS, error=ConnState.CLOSED)
"""The contract table of :class:`~shedproto.desktop.ServerConnection`."""


class ClientState(TableEnum):
    """A client connection."""

    OPEN = "open"
    """Requests go out, replies come in."""
    CLOSED = "closed"
    """The server closed with nothing pending."""
    ERROR = "error"
    """The server broke the protocol (a bad, stray or mismatched reply, EOF while
    requests were pending, an over-cap line): sticky."""


class ClientInput(TableEnum):
    """What moves a client connection."""

    REQUEST = "request"
    """This side sends a request."""
    DATA = "data"
    """Bytes or a line from the server."""
    EOF = "eof"
    """The server closed its side."""


CLIENT_TRANSITIONS: Mapping[tuple[ClientState, ClientInput], ClientState] = {
    (ClientState.OPEN, ClientInput.REQUEST): ClientState.OPEN,
    (ClientState.OPEN, ClientInput.DATA): ClientState.OPEN,
    (ClientState.OPEN, ClientInput.EOF): ClientState.CLOSED,
}

CLIENT_TABLE = TransitionTable("desktop client", CLIENT_TRANSITIONS, error=ClientState.ERROR)
"""The contract table of :class:`~shedproto.desktop.ClientConnection`."""


class AttemptState(Enum):
    """The app's ``craze.create`` attempt against the hub."""

    SEND = "send"
    """First send under the request id."""
    RETRY = "retry"
    """The answer was lost once; resent exactly once under the same id."""
    OK = "ok"
    """A session came back (possibly replayed)."""
    REFUSED = "refused"
    """A definite refusal came back (possibly replayed)."""
    OUTCOME_UNKNOWN = "outcome_unknown"
    """Lost twice: the create may have run."""


class AttemptInput(Enum):
    """What the hub did."""

    SESSION = "session"
    REFUSAL = "refusal"
    LOST = "lost"
    """The connection dropped, or the 120 s deadline passed without an answer."""


ATTEMPT_TRANSITIONS: Mapping[tuple[AttemptState, AttemptInput], AttemptState] = {
    (AttemptState.SEND, AttemptInput.SESSION): AttemptState.OK,
    (AttemptState.SEND, AttemptInput.REFUSAL): AttemptState.REFUSED,
    (AttemptState.SEND, AttemptInput.LOST): AttemptState.RETRY,
    (AttemptState.RETRY, AttemptInput.SESSION): AttemptState.OK,
    (AttemptState.RETRY, AttemptInput.REFUSAL): AttemptState.REFUSED,
    (AttemptState.RETRY, AttemptInput.LOST): AttemptState.OUTCOME_UNKNOWN,
}


class TicketState(Enum):
    """The client's request-id lifecycle for one create form."""

    FORM_CLEAN = "form_clean"
    """No id; the next submit mints one."""
    IN_FLIGHT = "in_flight"
    """A create under the id is running."""
    CREATED = "created"
    """A session came back; the id is discarded."""
    REFUSED = "refused"
    """A definite refusal came back; the id is discarded."""
    UNKNOWN = "unknown"
    """``outcome_unknown``: the id is kept for "Try again"."""


class TicketInput(Enum):
    """What the caller or the server did."""

    SUBMIT = "submit"
    OK = "ok"
    REFUSED = "refused"
    OUTCOME_UNKNOWN = "outcome_unknown"
    EDIT = "edit"


TICKET_TRANSITIONS: Mapping[tuple[TicketState, TicketInput], TicketState] = {
    (TicketState.FORM_CLEAN, TicketInput.SUBMIT): TicketState.IN_FLIGHT,
    (TicketState.CREATED, TicketInput.SUBMIT): TicketState.IN_FLIGHT,
    (TicketState.REFUSED, TicketInput.SUBMIT): TicketState.IN_FLIGHT,
    (TicketState.UNKNOWN, TicketInput.SUBMIT): TicketState.IN_FLIGHT,
    (TicketState.IN_FLIGHT, TicketInput.OK): TicketState.CREATED,
    (TicketState.IN_FLIGHT, TicketInput.REFUSED): TicketState.REFUSED,
    (TicketState.IN_FLIGHT, TicketInput.OUTCOME_UNKNOWN): TicketState.UNKNOWN,
    (TicketState.FORM_CLEAN, TicketInput.EDIT): TicketState.FORM_CLEAN,
    (TicketState.CREATED, TicketInput.EDIT): TicketState.FORM_CLEAN,
    (TicketState.REFUSED, TicketInput.EDIT): TicketState.FORM_CLEAN,
    (TicketState.UNKNOWN, TicketInput.EDIT): TicketState.FORM_CLEAN,
}

transition = step
"""``transition(table, state, event)``: the state after ``event``, or a
:class:`~shedproto.LocalProtocolError` (``UNEXPECTED_EVENT``) for a pair not in ``table``."""
