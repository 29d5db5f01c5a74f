"""The ACP client connection's state machine, as one contract table (h11's ``_state.py``).

::

    IDLE --send initialize--> INITIALIZING --initialize accepted--> READY
    INITIALIZING --initialize rejected--> CLOSED
    any --EOF--> CLOSED             the agent breaks ACP: CLOSED (sticky, with the error)

The table is keyed by ``(state, input)``; the peer's inputs are the kind of
JSON-RPC message it sent (request, notification, response), EOF, and the two
outcomes of the ``initialize`` answer. ``CLOSED`` is also the contract's
sticky error state: nothing leaves it, and the connection's ``error`` tells a
fatal close from a clean one. Anything not in :data:`TRANSITIONS` is a
:class:`~shedproto.LocalProtocolError` when this side caused it (nothing is
sent, the state is unchanged) and a :class:`~shedproto.RemoteProtocolError`
when the agent did (the connection closes).
"""

from __future__ import annotations

from shedproto._contract import TableEnum, TransitionTable

__all__ = ["AcpInput", "AcpState", "TABLE", "TRANSITIONS"]


class AcpState(TableEnum):
    """Where the client side of an ACP connection stands."""

    IDLE = "idle"
    INITIALIZING = "initializing"
    READY = "ready"
    CLOSED = "closed"


class AcpInput(TableEnum):
    """What moves the state: a send by this side or something from the agent."""

    SEND_INITIALIZE = "send-initialize"
    SEND_REQUEST = "send-request"
    INITIALIZE_ACCEPTED = "initialize-accepted"
    INITIALIZE_REJECTED = "initialize-rejected"
    PEER_REQUEST = "peer-request"
    PEER_NOTIFICATION = "peer-notification"
    PEER_RESPONSE = "peer-response"
    EOF = "eof"


_S = AcpState
_I = AcpInput

TRANSITIONS: dict[tuple[AcpState, AcpInput], AcpState] = {
    (_S.IDLE, _I.SEND_INITIALIZE): _S.INITIALIZING,
    (_S.INITIALIZING, _I.INITIALIZE_ACCEPTED): _S.READY,
    (_S.INITIALIZING, _I.INITIALIZE_REJECTED): _S.CLOSED,
    (_S.READY, _I.SEND_REQUEST): _S.READY,
    **{
        (state, peer): state
        for state in (_S.INITIALIZING, _S.READY)
        for peer in (_I.PEER_REQUEST, _I.PEER_NOTIFICATION, _I.PEER_RESPONSE)
    },
    **{(state, _I.EOF): _S.CLOSED for state in AcpState},
}
"""Every allowed (state, input) pair and the state it leads to."""

TABLE = TransitionTable("acp client", TRANSITIONS, error=_S.CLOSED)
"""The contract table of :class:`~shedproto.drivers.acp.AcpConnection`."""
