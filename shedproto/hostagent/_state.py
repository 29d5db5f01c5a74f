"""Every state transition of both approval-channel roles, in one place (h11's rule 1).

Each table maps ``(state, input) -> (next state, deliver)``; ``deliver``
says whether a received frame is handed to the caller (``False``: the line
is skipped, as the real program skips it). A *local* input that is not in
the table is a :class:`~shedproto.LocalProtocolError` and changes nothing.
Remote inputs are total: every state says what the peer's bytes do.

Agent side (one per accepted connection)::

    AWAITING_HELLO --hello line--> HELLO_RECEIVED --send accepted ack--> ACTIVE
          |  other first line, EOF, oversize, 2 s timeout: CLOSED (silently)
    ACTIVE --send superseded ack--> SUPERSEDED --EOF/close--> CLOSED

Consumer side::

    IDLE --send hello--> HELLO_SENT --accepted ack--> ACTIVE --superseded ack--> SUPERSEDED
"""

from __future__ import annotations

from enum import Enum

from shedproto import ErrorCode, LocalProtocolError

__all__ = [
    "AGENT_TRANSITIONS",
    "CONSUMER_TRANSITIONS",
    "AgentInput",
    "AgentState",
    "ConsumerInput",
    "ConsumerState",
    "agent_transition",
    "consumer_transition",
]


class AgentState(Enum):
    """States of the agent side of one approval-channel connection."""

    __hash__ = object.__hash__  # members are singletons: identity hashing is exact

    AWAITING_HELLO = "awaiting_hello"
    HELLO_RECEIVED = "hello_received"
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    CLOSED = "closed"


class AgentInput(Enum):
    """What can happen to an agent-side connection (``SEND_*``/``CLOSE`` are local)."""

    __hash__ = object.__hash__  # members are singletons: identity hashing is exact

    HELLO_LINE = "hello_line"
    BAD_FIRST_LINE = "bad_first_line"
    LINE = "line"
    EOF = "eof"
    OVERSIZE = "oversize"
    HELLO_TIMEOUT = "hello_timeout"
    SEND_ACCEPT = "send_accept"
    SEND_SUPERSEDE = "send_supersede"
    SEND_FRAME = "send_frame"
    CLOSE = "close"


class ConsumerState(Enum):
    """States of the consumer (app) side of the approval channel."""

    __hash__ = object.__hash__  # members are singletons: identity hashing is exact

    IDLE = "idle"
    HELLO_SENT = "hello_sent"
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    CLOSED = "closed"


class ConsumerInput(Enum):
    """What can happen to a consumer-side connection (``SEND_*``/``CLOSE`` are local)."""

    __hash__ = object.__hash__  # members are singletons: identity hashing is exact

    SEND_HELLO = "send_hello"
    RECV_ACCEPTED = "recv_accepted"
    RECV_SUPERSEDED = "recv_superseded"
    RECV_FRAME = "recv_frame"
    SEND_FRAME = "send_frame"
    EOF = "eof"
    OVERSIZE = "oversize"
    CLOSE = "close"


_A = AgentState
_AI = AgentInput

AGENT_TRANSITIONS: dict[tuple[AgentState, AgentInput], tuple[AgentState, bool]] = {
    (_A.AWAITING_HELLO, _AI.HELLO_LINE): (_A.HELLO_RECEIVED, True),
    (_A.AWAITING_HELLO, _AI.BAD_FIRST_LINE): (_A.CLOSED, False),
    (_A.AWAITING_HELLO, _AI.EOF): (_A.CLOSED, False),
    (_A.AWAITING_HELLO, _AI.OVERSIZE): (_A.CLOSED, False),
    (_A.AWAITING_HELLO, _AI.HELLO_TIMEOUT): (_A.CLOSED, False),
    (_A.AWAITING_HELLO, _AI.CLOSE): (_A.CLOSED, False),
    # Lines that arrive with the hello are read after the ack, in order.
    (_A.HELLO_RECEIVED, _AI.LINE): (_A.HELLO_RECEIVED, True),
    (_A.HELLO_RECEIVED, _AI.EOF): (_A.CLOSED, False),
    (_A.HELLO_RECEIVED, _AI.OVERSIZE): (_A.CLOSED, False),
    (_A.HELLO_RECEIVED, _AI.SEND_ACCEPT): (_A.ACTIVE, False),
    (_A.HELLO_RECEIVED, _AI.CLOSE): (_A.CLOSED, False),
    (_A.ACTIVE, _AI.LINE): (_A.ACTIVE, True),
    (_A.ACTIVE, _AI.EOF): (_A.CLOSED, False),
    (_A.ACTIVE, _AI.OVERSIZE): (_A.CLOSED, False),
    (_A.ACTIVE, _AI.SEND_FRAME): (_A.ACTIVE, False),
    (_A.ACTIVE, _AI.SEND_SUPERSEDE): (_A.SUPERSEDED, False),
    (_A.ACTIVE, _AI.CLOSE): (_A.CLOSED, False),
    # A superseded connection is demoted: whatever it still says is ignored.
    (_A.SUPERSEDED, _AI.LINE): (_A.SUPERSEDED, False),
    (_A.SUPERSEDED, _AI.EOF): (_A.CLOSED, False),
    (_A.SUPERSEDED, _AI.OVERSIZE): (_A.CLOSED, False),
    (_A.SUPERSEDED, _AI.CLOSE): (_A.CLOSED, False),
    (_A.CLOSED, _AI.CLOSE): (_A.CLOSED, False),
}

_C = ConsumerState
_CI = ConsumerInput

CONSUMER_TRANSITIONS: dict[tuple[ConsumerState, ConsumerInput], tuple[ConsumerState, bool]] = {
    (_C.IDLE, _CI.SEND_HELLO): (_C.HELLO_SENT, False),
    (_C.IDLE, _CI.RECV_FRAME): (_C.IDLE, False),
    (_C.IDLE, _CI.RECV_ACCEPTED): (_C.IDLE, False),
    (_C.IDLE, _CI.RECV_SUPERSEDED): (_C.IDLE, False),
    (_C.IDLE, _CI.EOF): (_C.CLOSED, False),
    (_C.IDLE, _CI.OVERSIZE): (_C.CLOSED, False),
    (_C.IDLE, _CI.CLOSE): (_C.CLOSED, False),
    (_C.HELLO_SENT, _CI.RECV_ACCEPTED): (_C.ACTIVE, True),
    (_C.HELLO_SENT, _CI.RECV_SUPERSEDED): (_C.HELLO_SENT, False),
    (_C.HELLO_SENT, _CI.RECV_FRAME): (_C.HELLO_SENT, False),
    (_C.HELLO_SENT, _CI.EOF): (_C.CLOSED, False),
    (_C.HELLO_SENT, _CI.OVERSIZE): (_C.CLOSED, False),
    (_C.HELLO_SENT, _CI.CLOSE): (_C.CLOSED, False),
    (_C.ACTIVE, _CI.RECV_FRAME): (_C.ACTIVE, True),
    (_C.ACTIVE, _CI.RECV_ACCEPTED): (_C.ACTIVE, False),
    (_C.ACTIVE, _CI.RECV_SUPERSEDED): (_C.SUPERSEDED, True),
    (_C.ACTIVE, _CI.SEND_FRAME): (_C.ACTIVE, False),
    (_C.ACTIVE, _CI.EOF): (_C.CLOSED, False),
    (_C.ACTIVE, _CI.OVERSIZE): (_C.CLOSED, False),
    (_C.ACTIVE, _CI.CLOSE): (_C.CLOSED, False),
    (_C.SUPERSEDED, _CI.RECV_FRAME): (_C.SUPERSEDED, False),
    (_C.SUPERSEDED, _CI.RECV_ACCEPTED): (_C.SUPERSEDED, False),
    (_C.SUPERSEDED, _CI.RECV_SUPERSEDED): (_C.SUPERSEDED, False),
    (_C.SUPERSEDED, _CI.EOF): (_C.CLOSED, False),
    (_C.SUPERSEDED, _CI.OVERSIZE): (_C.CLOSED, False),
    (_C.SUPERSEDED, _CI.CLOSE): (_C.CLOSED, False),
    (_C.CLOSED, _CI.CLOSE): (_C.CLOSED, False),
}


def agent_transition(state: AgentState, event: AgentInput) -> tuple[AgentState, bool]:
    """Look up ``(state, event)`` in :data:`AGENT_TRANSITIONS`.

    Raises:
        LocalProtocolError: ``UNEXPECTED_EVENT`` when the pair is not in the table.

    """
    try:
        return AGENT_TRANSITIONS[state, event]
    except KeyError:
        raise LocalProtocolError(
            ErrorCode.UNEXPECTED_EVENT,
            f"{event.value} is not allowed in agent state {state.value}",
        ) from None


def consumer_transition(state: ConsumerState, event: ConsumerInput) -> tuple[ConsumerState, bool]:
    """Look up ``(state, event)`` in :data:`CONSUMER_TRANSITIONS`.

    Raises:
        LocalProtocolError: ``UNEXPECTED_EVENT`` when the pair is not in the table.

    """
    try:
        return CONSUMER_TRANSITIONS[state, event]
    except KeyError:
        raise LocalProtocolError(
            ErrorCode.UNEXPECTED_EVENT,
            f"{event.value} is not allowed in consumer state {state.value}",
        ) from None
