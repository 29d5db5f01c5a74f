"""The agents-host socket API's server connection, on the connection contract.

:class:`ApiServerConnection` turns request bytes into events: each valid
request is its frame (:data:`~shedproto.agents_host.ApiRequest`), a line that
is not one is :class:`~shedproto.LineSkipped` with its error reply queued in
the outbox, and the end is :class:`ApiConnectionClosed` (``"eof"``, or
``"frame_too_large"`` with the error, its reply queued, after which the shell
closes). Every request owes one reply: the shell answers with
:meth:`ApiServerConnection.send` in request order, or hands a request's reply
to a task of its own with :meth:`ApiServerConnection.detach` (a ``submit``
with ``wait``). Error lines wait in the outbox behind the replies owed before
them; the shell writes :meth:`~shedproto.Contract.data_to_send` after every
event it handles.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shedproto._contract import (
    ConnectionClosed,
    Contract,
    LineSkipped,
    TableEnum,
    TransitionTable,
)
from shedproto._errors import RemoteProtocolError
from shedproto._framing import LineBuffer

from .types import API_FRAMING, ApiRequest, decode_request, encode_error

__all__ = [
    "API_SERVER_TABLE",
    "ApiConnectionClosed",
    "ApiInput",
    "ApiServerConnection",
    "ApiServerEvent",
    "ApiState",
]


class ApiState(TableEnum):
    """An API server connection."""

    OPEN = "open"
    """Reading requests."""
    PEER_CLOSED = "peer_closed"
    """The client sent EOF; replies owed still go out."""
    CLOSED = "closed"
    """An over-cap line ended the connection; replies owed still go out, then close."""


class ApiInput(TableEnum):
    """What moves an API server connection."""

    DATA = "data"
    EOF = "eof"
    OVERSIZE = "oversize"
    REPLY = "reply"
    """This side answers (or detaches) the oldest request."""


API_SERVER_TABLE = TransitionTable(
    "agents-host API server",
    {
        (ApiState.OPEN, ApiInput.DATA): ApiState.OPEN,
        (ApiState.OPEN, ApiInput.EOF): ApiState.PEER_CLOSED,
        (ApiState.OPEN, ApiInput.OVERSIZE): ApiState.CLOSED,
        **{(state, ApiInput.REPLY): state for state in ApiState},
    },
    error=ApiState.CLOSED,
)
"""The contract table of :class:`ApiServerConnection`."""


@dataclass(frozen=True)
class ApiConnectionClosed(ConnectionClosed):
    """The read side is over: ``reason`` ``"eof"`` or ``"frame_too_large"`` (with ``error``)."""

    reason: str


ApiServerEvent = ApiRequest | LineSkipped | ApiConnectionClosed
"""What :meth:`ApiServerConnection.receive_data` returns."""


class ApiServerConnection(Contract[ApiState]):
    """The host side of one API connection. Not thread-safe; one per connection."""

    def __init__(self) -> None:
        super().__init__(API_SERVER_TABLE, ApiState.OPEN)
        self._lines = LineBuffer(API_FRAMING)

    @property
    def owed(self) -> int:
        """Requests received and neither answered nor detached."""
        return self.outbox.owed

    def receive_data(self, data: bytes) -> list[ApiServerEvent]:
        """Feed bytes from the client (``b""`` = EOF) and return the events they complete.

        Never raises for the peer's bytes.

        Raises:
            LocalProtocolError: data after the read side ended.

        """
        if self.state is not ApiState.OPEN:
            self._local(ApiInput.DATA)  # raises: the read side ended
        lines, error = self._split(self._lines, data)
        events: list[ApiServerEvent] = []
        for line in lines:
            try:
                request = decode_request(line)
            except RemoteProtocolError as exc:
                if exc.reply_hint is not None:
                    self.outbox.put(exc.reply_hint)
                events.append(LineSkipped(exc, line=line))
                continue
            self.outbox.owe(request.id)
            events.append(request)
        if error is not None:
            self._remote(ApiInput.OVERSIZE)
            self.outbox.put(encode_error(None, "frame-too-large", error.message))
            events.append(ApiConnectionClosed("frame_too_large", self._fail(error)))
        elif not data:
            self._remote(ApiInput.EOF)
            events.append(ApiConnectionClosed("eof"))
        return events

    def send(self, reply: bytes) -> bytes:
        """Return ``reply`` (an encoded reply line) as the answer to the oldest request.

        Error lines held behind it become due (:meth:`data_to_send`).

        Raises:
            LocalProtocolError: no request is awaiting a reply.

        """
        self._local(ApiInput.REPLY)
        self.outbox.settle()
        return reply

    def detach(self) -> Any:
        """Release the oldest request's reply slot: a task of the shell answers it later.

        Returns the request's id.

        Raises:
            LocalProtocolError: no request is awaiting a reply.

        """
        self._local(ApiInput.REPLY)
        request_id = self.outbox.oldest()
        self.outbox.settle()
        return request_id
