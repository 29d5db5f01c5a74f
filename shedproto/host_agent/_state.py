"""Every state transition of both approval-channel roles, in one place (h11's rule 1).

Each table maps ``(state, event type) -> next state`` and is a contract
:class:`~shedproto.TransitionTable`. An event type is a frame class
(``Hello``, ``ApprovalRequest``, ...) or, for what has no frame class of its
own, an input: EOF, an oversize line, the hello deadline, ``close()``, and the
two ``hello_ack`` kinds (accepted, superseded). A *local* pair that is not in
the table is a :class:`~shedproto.LocalProtocolError` and changes nothing; a
*remote* pair that is not in the table is a
:class:`~shedproto.RemoteProtocolError` the connection reports as
:class:`~shedproto.LineSkipped` (the real programs skip the line) or, before
the hello, as the silent close. A superseded agent connection is *quiet*:
whatever the peer still says is dropped without an event.

Agent side (one per accepted connection)::

    AWAITING_HELLO --hello--> HELLO_RECEIVED --send accepted ack--> ACTIVE
          |  other first line, EOF, oversize, 2 s timeout: CLOSED (silently)
    ACTIVE --send superseded ack--> SUPERSEDED --EOF/close--> CLOSED

Consumer side::

    IDLE --send hello--> HELLO_SENT --accepted ack--> ACTIVE --superseded ack--> SUPERSEDED
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shedproto._contract import TableEnum, TransitionTable

from .types import (
    ApprovalRequest,
    ApprovalResponse,
    CredentialGet,
    CredentialResponse,
    Event,
    Hello,
    Ping,
    Pong,
    TokenGet,
    TokenResponse,
)

__all__ = [
    "AGENT_TABLE",
    "AGENT_TRANSITIONS",
    "CONSUMER_TABLE",
    "CONSUMER_TRANSITIONS",
    "AgentInput",
    "AgentState",
    "ConsumerInput",
    "ConsumerState",
]


class AgentState(TableEnum):
    """States of the agent side of one approval-channel connection."""

    AWAITING_HELLO = "awaiting_hello"
    HELLO_RECEIVED = "hello_received"
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    CLOSED = "closed"


class AgentInput(TableEnum):
    """Agent-side inputs without a frame class (``ACCEPT``/``SUPERSEDE``/``CLOSE`` are local)."""

    EOF = "eof"
    OVERSIZE = "oversize"
    HELLO_TIMEOUT = "hello_timeout"
    ACCEPT = "accept"
    """This side sends the accepted ``hello_ack``."""
    SUPERSEDE = "supersede"
    """This side sends the superseded ``hello_ack``."""
    CLOSE = "close"


class ConsumerState(TableEnum):
    """States of the consumer (app) side of the approval channel."""

    IDLE = "idle"
    HELLO_SENT = "hello_sent"
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    CLOSED = "closed"


class ConsumerInput(TableEnum):
    """Consumer-side inputs without a frame class of their own (``CLOSE`` is local)."""

    ACCEPTED = "accepted"
    """The agent's accepted ``hello_ack``."""
    SUPERSEDED = "superseded"
    """The agent's superseded ``hello_ack``."""
    EOF = "eof"
    OVERSIZE = "oversize"
    CLOSE = "close"


CONSUMER_SENDS = (ApprovalResponse, Pong, TokenGet, CredentialGet)
"""What a consumer sends after its hello (and the agent reads once the hello is in)."""
AGENT_SENDS = (ApprovalRequest, Event, Ping, TokenResponse, CredentialResponse)
"""What the agent sends to its active consumer, ``hello_ack`` aside."""

_A = AgentState
_AI = AgentInput
_ENDS = (_AI.EOF, _AI.OVERSIZE, _AI.CLOSE)

AGENT_TRANSITIONS: Mapping[tuple[AgentState, Any], AgentState] = {
    (_A.AWAITING_HELLO, Hello): _A.HELLO_RECEIVED,
    (_A.AWAITING_HELLO, _AI.HELLO_TIMEOUT): _A.CLOSED,
    # Lines that arrive with the hello are read after the ack, in order.
    **{(_A.HELLO_RECEIVED, frame): _A.HELLO_RECEIVED for frame in CONSUMER_SENDS},
    (_A.HELLO_RECEIVED, _AI.ACCEPT): _A.ACTIVE,
    **{(_A.ACTIVE, frame): _A.ACTIVE for frame in CONSUMER_SENDS + AGENT_SENDS},
    (_A.ACTIVE, _AI.SUPERSEDE): _A.SUPERSEDED,
    **{(state, end): _A.CLOSED for state in _A for end in _ENDS},
}

AGENT_TABLE = TransitionTable(
    "host-agent agent", AGENT_TRANSITIONS, error=_A.CLOSED, quiet=(_A.SUPERSEDED,)
)
"""The contract table of :class:`~shedproto.host_agent.AgentConnection`.

``CLOSED`` is terminal (only ``close()``, EOF and oversize map it to itself);
a superseded connection is demoted: whatever it still says is ignored.
"""

_C = ConsumerState
_CI = ConsumerInput
_CENDS = (_CI.EOF, _CI.OVERSIZE, _CI.CLOSE)

CONSUMER_TRANSITIONS: Mapping[tuple[ConsumerState, Any], ConsumerState] = {
    (_C.IDLE, Hello): _C.HELLO_SENT,
    (_C.HELLO_SENT, _CI.ACCEPTED): _C.ACTIVE,
    **{(_C.ACTIVE, frame): _C.ACTIVE for frame in AGENT_SENDS + CONSUMER_SENDS},
    (_C.ACTIVE, _CI.SUPERSEDED): _C.SUPERSEDED,
    **{(state, end): _C.CLOSED for state in _C for end in _CENDS},
}

CONSUMER_TABLE = TransitionTable("host-agent consumer", CONSUMER_TRANSITIONS, error=_C.CLOSED)
"""The contract table of :class:`~shedproto.host_agent.ConsumerConnection`."""
