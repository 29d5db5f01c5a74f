"""The ACP client connection's state machine, as one transition table.

States: ``IDLE`` (nothing sent; only ``initialize`` may be sent),
``INITIALIZING`` (waiting for the ``initialize`` answer; no other request
may be sent), ``READY`` (any request), ``CLOSED`` (the peer ended the
stream, or the handshake failed; nothing may be sent). Anything not in
:data:`TRANSITIONS` is a protocol error.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["AcpInput", "AcpState", "TRANSITIONS", "next_state"]


class AcpState(Enum):
    """Where the client side of an ACP connection stands."""

    IDLE = "idle"
    INITIALIZING = "initializing"
    READY = "ready"
    CLOSED = "closed"


class AcpInput(Enum):
    """What moves the state: a send by this side or something from the peer."""

    SEND_INITIALIZE = "send-initialize"
    SEND_REQUEST = "send-request"
    INITIALIZE_ACCEPTED = "initialize-accepted"
    INITIALIZE_REJECTED = "initialize-rejected"
    PEER_MESSAGE = "peer-message"
    EOF = "eof"


TRANSITIONS: dict[tuple[AcpState, AcpInput], AcpState] = {
    (AcpState.IDLE, AcpInput.SEND_INITIALIZE): AcpState.INITIALIZING,
    (AcpState.IDLE, AcpInput.EOF): AcpState.CLOSED,
    (AcpState.INITIALIZING, AcpInput.INITIALIZE_ACCEPTED): AcpState.READY,
    (AcpState.INITIALIZING, AcpInput.INITIALIZE_REJECTED): AcpState.CLOSED,
    (AcpState.INITIALIZING, AcpInput.PEER_MESSAGE): AcpState.INITIALIZING,
    (AcpState.INITIALIZING, AcpInput.EOF): AcpState.CLOSED,
    (AcpState.READY, AcpInput.SEND_REQUEST): AcpState.READY,
    (AcpState.READY, AcpInput.PEER_MESSAGE): AcpState.READY,
    (AcpState.READY, AcpInput.EOF): AcpState.CLOSED,
    (AcpState.CLOSED, AcpInput.EOF): AcpState.CLOSED,
}
"""Every allowed (state, input) pair and the state it leads to."""


def next_state(state: AcpState, event: AcpInput) -> AcpState | None:
    """Return the state after ``event`` in ``state``, or ``None`` when it is not allowed."""
    return TRANSITIONS.get((state, event))
