"""What the async and blocking herdr clients share: deadlines, results, the base class.

Both clients resolve the socket as herdr does (:func:`~shedproto.herdr.api_socket_path`),
open a new connection for every request, drive a
:class:`~shedproto.herdr.ClientConnection` with the bytes, and raise
:class:`~shedproto.herdr.HerdrApiError` for an error answer. A request that
can wait (``agent.wait``, ``pane.wait_for_output``, ...) gets no client
deadline unless it carries ``timeout_ms`` (then ``timeout_ms`` + 5 s);
every other request gets ``timeout`` seconds, connect included (the connect
itself at most :data:`CONNECT_TIMEOUT`). Subscriptions never time out on a
quiet stream.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec
from typing_extensions import Self

from shedproto import ErrorCode, LocalProtocolError, RemoteProtocolError
from shedproto.clients._unreachable import UnreachableSocketError, other_protocol
from shedproto.herdr import (
    DEFAULT_PROTOCOL,
    HOLDING_METHODS,
    MAX_REQUEST_BYTES,
    ErrorResponse,
    HerdrApiError,
    LifecycleEvent,
    RawRequest,
    SubscriptionEvent,
    api_socket_path,
    make_request,
)
from shedproto.herdr import types as t

__all__ = [
    "CONNECT_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "STREAMED",
    "WAIT_SLACK",
    "ClientBase",
    "RuntimeStatus",
    "StreamEvent",
    "connect_timeout",
    "deadline_for",
    "foreign_error",
    "over_cap",
    "result_of",
    "streamed",
    "subscription_params",
]

DEFAULT_TIMEOUT = 30.0
"""Seconds an ordinary request may take, connect included."""
WAIT_SLACK = 5.0
"""Extra seconds granted beyond a wait's own ``timeout_ms``."""
CONNECT_TIMEOUT = 5.0
"""Seconds a connect may take at most (less when the call's own budget is smaller)."""

StreamEvent = LifecycleEvent | SubscriptionEvent
"""One pushed line of a subscription."""


@dataclass(frozen=True)
class RuntimeStatus:
    """What ``herdr status`` reports, filled from a ``ping`` answer.

    ``compatible`` is herdr's rule: the server's protocol equals the client's.
    """

    version: str
    protocol: int
    client_protocol: int
    capabilities: t.ServerCapabilities | None

    @property
    def compatible(self) -> bool:
        """True when the protocols are equal (herdr's exact rule)."""
        return self.protocol == self.client_protocol


def deadline_for(method: str, params: Any, default: float | None) -> float | None:
    if method not in HOLDING_METHODS:
        return default
    timeout_ms = getattr(params, "timeout_ms", None)
    wait = getattr(params, "wait", None)
    if method == "agent.prompt":
        if wait is None:
            return default
        timeout_ms = wait.timeout_ms
    return None if timeout_ms is None else timeout_ms / 1000 + WAIT_SLACK


def subscription_params(items: Iterable[Any]) -> t.EventsSubscribeParams:
    subs: list[Any] = [
        msgspec.to_builtins(item) if isinstance(item, msgspec.Struct) else item
        for item in (({"type": i} if isinstance(i, str) else i) for i in items)
    ]
    try:
        return msgspec.convert({"subscriptions": subs}, t.EventsSubscribeParams)
    except msgspec.ValidationError as exc:
        raise LocalProtocolError(ErrorCode.INVALID_ARGUMENT, f"bad subscription: {exc}") from None


def foreign_error(path: str, answer: ErrorResponse, data: bytes) -> UnreachableSocketError | None:
    """Return ``other-protocol`` when an error answer is a shed-desktop reply, else ``None``.

    A Tauri desktop server answers a herdr request ``{"id", "ok": false,
    "error": {...}}``; herdr's answers never carry ``ok`` (``{id, result}`` or
    ``{id, error}``: herdr's ``src/api/schema/response.rs``), so that key in the
    raw line marks a server of another protocol. Inside a JSON string the key
    would be escaped, so it cannot match.
    """
    if b'"ok":' in data or b'"ok" :' in data:
        return other_protocol(path, f"it answered with a shed-desktop error ({answer.error.code})")
    return None


def over_cap(request_line: bytes) -> bool:
    """Whether herdr closes without a word on ``request_line``: its own answer, no stranger's."""
    return len(request_line) > MAX_REQUEST_BYTES


def _same_tag(result: Any, expected: Any) -> bool:
    mine = getattr(type(result), "__struct_config__", None)
    theirs = getattr(expected, "__struct_config__", None)
    return mine is not None and theirs is not None and mine.tag == theirs.tag


def result_of(answer: Any, expected: Any) -> Any:
    if isinstance(answer, ErrorResponse):
        raise HerdrApiError(answer.error.code, answer.error.message, id=answer.id)
    result = answer.result
    if expected is not None and not isinstance(result, expected):
        if _same_tag(result, expected):
            # an older protocol's twin (PongReplyP20): the typed method returns the
            # newest type, with the fields that protocol lacks at their defaults
            return msgspec.convert(msgspec.to_builtins(result), expected)
        raise RemoteProtocolError(
            ErrorCode.UNEXPECTED_EVENT,
            f"expected a {expected} result, got {type(result).__name__}",
        )
    return result


class ClientBase:
    """Socket, protocol, request ids and request building, shared by both clients."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        protocol: int = DEFAULT_PROTOCOL,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> None:
        self.path = os.fspath(path)
        self.protocol = protocol
        self.timeout = timeout
        self._ids = 0

    @classmethod
    def for_socket(
        cls,
        path: str | os.PathLike[str],
        *,
        protocol: int = DEFAULT_PROTOCOL,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> Self:
        """Return a client for the API socket at ``path`` (nothing is connected yet)."""
        return cls(path, protocol=protocol, timeout=timeout)

    @classmethod
    def local(
        cls,
        *,
        session: str | None = None,
        env: Mapping[str, str] | None = None,
        protocol: int = DEFAULT_PROTOCOL,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> Self:
        """Return a client for the active session's socket, resolved as herdr does.

        ``session`` is the CLI's ``--session``; ``env`` defaults to ``os.environ``.

        Raises:
            LocalProtocolError: ``session`` is not a valid session name.

        """
        path = api_socket_path(os.environ if env is None else env, session=session)
        return cls(path, protocol=protocol, timeout=timeout)

    def _next_id(self) -> str:
        self._ids += 1
        return f"shedproto_{self._ids}"

    def _build(self, method: str, params: Any) -> tuple[t.Request | RawRequest, Any]:
        request_id = self._next_id()
        if method in t.PROTOCOL_TABLES[self.protocol][0]:
            request = make_request(method, params, id=request_id, protocol=self.protocol)
            return request, request.params  # type: ignore[attr-defined]
        raw = RawRequest(id=request_id, method=method, params=dict(params or {}))
        return raw, None

    def _status(self, pong: t.PongReply) -> RuntimeStatus:
        return RuntimeStatus(
            version=pong.version,
            protocol=pong.protocol,
            client_protocol=self.protocol,
            capabilities=pong.capabilities,
        )




def connect_timeout(timeout: float | None) -> float:
    """Return how long a connect may take within a call's ``timeout`` (``None``: no limit)."""
    return CONNECT_TIMEOUT if timeout is None else min(timeout, CONNECT_TIMEOUT)


STREAMED = (LifecycleEvent, SubscriptionEvent, ErrorResponse)


def streamed(item: Any) -> StreamEvent:
    """Return a streamed event; an error line (protocol 22's ``events_lost``) raises.

    Raises:
        HerdrApiError: the server ended the stream with an error; it is the last line.

    """
    if isinstance(item, ErrorResponse):
        raise HerdrApiError(item.error.code, item.error.message, id=item.id)
    result: StreamEvent = item
    return result
