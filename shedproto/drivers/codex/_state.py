"""The client side's connection state, as one transition table (h11's Rule 1).

::

    NEW --send initialize--> INITIALIZING --initialize result--> READY
    INITIALIZING --initialize error--> ERROR
    any --EOF--> CLOSED (ERROR stays)   an over-cap line: ERROR (the contract's sticky state)

Requests other than ``initialize`` may be sent only in ``READY``; anything not
in the table raises :class:`~shedproto.LocalProtocolError` and leaves the
state unchanged. :data:`TABLE` is the contract table of the connection.
"""

from __future__ import annotations

from shedproto._contract import TableEnum, TransitionTable, step

__all__ = ["CodexState", "CodexInput", "TABLE", "TRANSITIONS", "transition"]


class CodexState(TableEnum):
    """Where a :class:`CodexClientConnection` is in its life."""

    NEW = "new"
    INITIALIZING = "initializing"
    READY = "ready"
    CLOSED = "closed"
    ERROR = "error"


class CodexInput(TableEnum):
    """What moves the state: something sent, received, or the end of the stream."""

    SEND_INITIALIZE = "send_initialize"
    INITIALIZE_RESULT = "initialize_result"
    INITIALIZE_ERROR = "initialize_error"
    SEND_REQUEST = "send_request"
    EOF = "eof"


_S = CodexState
_I = CodexInput

TRANSITIONS: dict[tuple[CodexState, CodexInput], CodexState] = {
    (_S.NEW, _I.SEND_INITIALIZE): _S.INITIALIZING,
    (_S.INITIALIZING, _I.INITIALIZE_RESULT): _S.READY,
    (_S.INITIALIZING, _I.INITIALIZE_ERROR): _S.ERROR,
    (_S.READY, _I.SEND_REQUEST): _S.READY,
    **{(state, _I.EOF): _S.CLOSED for state in (_S.NEW, _S.INITIALIZING, _S.READY)},
    (_S.ERROR, _I.EOF): _S.ERROR,
}
"""``(state, input) -> next state``; every pair not listed is a protocol error."""

TABLE = TransitionTable("codex client", TRANSITIONS, error=_S.ERROR)
"""The contract table of :class:`~shedproto.drivers.codex.CodexClientConnection`."""


def transition(state: CodexState, event: CodexInput) -> CodexState:
    """Return the state after ``event``.

    Raises:
        LocalProtocolError: ``UNEXPECTED_EVENT``; ``(state, event)`` is not in the table.

    """
    return step(TRANSITIONS, state, event, name=TABLE.name)
