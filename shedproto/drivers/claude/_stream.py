"""The ``claude`` CLI's stream-json protocol: argv, environment, control requests, outcome.

:class:`ClaudeStreamConnection` is the host side of one ``claude -p
--input-format stream-json --output-format stream-json`` child: it builds the
user message and control requests, turns stdout into events, answers the
CLI's own control requests (tool permission is always denied; unknown
subtypes get an error response, never silence) and maps the last message to
the receipt status with the connector's ``claudeTerminalResult`` rule.

The connection is built on the connection contract (:class:`shedproto.Contract`,
table :data:`STREAM_TABLE`): its answers to the CLI's control requests wait in
the outbox (:meth:`~shedproto.Contract.data_to_send`); an over-cap stdout line
ends the stream after the lines before it, :class:`StreamClosed` carrying the error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from shedproto._codec import decoder_for, encode_line
from shedproto._contract import (
    ConnectionClosed,
    Contract,
    LineSkipped,
    TableEnum,
    TransitionTable,
)
from shedproto._errors import ErrorCode, LocalProtocolError, RemoteProtocolError
from shedproto._framing import EofTail, FramingPolicy, LineBuffer, OverCap
from shedproto.agents_host import CommandExecutionResult
from shedproto.drivers._results import failed, succeeded, unknown

__all__ = [
    "CLAUDE_FRAMING",
    "STREAM_TABLE",
    "StreamInput",
    "StreamState",
    "build_argv",
    "build_env",
    "result_outcome",
    "ClaudeStreamConnection",
    "StreamEvent",
    "StreamMessage",
    "ControlResponse",
    "ControlRequest",
    "StreamMalformedLine",
    "StreamClosed",
]

CLAUDE_FRAMING = FramingPolicy(
    max_frame_bytes=64 << 20, eof_tail=EofTail.DROP, over_cap=OverCap.RAISE
)
"""stdout lines may carry whole tool results; a line cut off by the child's death is dropped."""

_ANY = decoder_for(Any)


def build_argv(
    binary: str,
    *,
    resume: str | None = None,
    session_id: str | None = None,
    title: str | None = None,
    permission_mode: str | None = None,
    model: str | None = None,
) -> tuple[str, ...]:
    """Return the CLI argv for one connector query (the prompt goes on stdin).

    ``--resume=<id>`` is one argument, so an id starting with ``-`` cannot be
    read as a flag; a new session is ``--session-id <uuid>`` plus ``-n <title>``.
    ``bypassPermissions`` also passes ``--allow-dangerously-skip-permissions``
    (the SDK's ``allowDangerouslySkipPermissions``).

    Raises:
        LocalProtocolError: ``INVALID_ARGUMENT`` unless exactly one of
            ``resume`` and ``session_id`` is given, or when ``title`` is given
            with ``resume``.

    """
    if (resume is None) == (session_id is None):
        raise LocalProtocolError(
            ErrorCode.INVALID_ARGUMENT, "exactly one of resume and session_id is required"
        )
    if resume is not None and title is not None:
        raise LocalProtocolError(ErrorCode.INVALID_ARGUMENT, "a title applies to new sessions only")
    argv = [
        binary,
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--input-format",
        "stream-json",
    ]
    if resume is not None:
        argv.append(f"--resume={resume}")
    else:
        argv += ["--session-id", str(session_id)]
        if title is not None:
            argv += ["-n", title]
    if permission_mode is not None:
        argv += ["--permission-mode", permission_mode]
        if permission_mode == "bypassPermissions":
            argv.append("--allow-dangerously-skip-permissions")
    if model is not None:
        argv += ["--model", model]
    return tuple(argv)


def build_env(
    base_env: Mapping[str, str],
    source_env: Mapping[str, str] | None,
    config_dir: str | None,
) -> dict[str, str]:
    """Return the child's environment: the baseline, the source's env, then ``CLAUDE_CONFIG_DIR``.

    The baseline is a copy taken once by the caller, so concurrent sources
    never leak into each other.
    """
    env = dict(base_env)
    if source_env:
        env.update(source_env)
    if config_dir:
        env["CLAUDE_CONFIG_DIR"] = config_dir
    return env


def result_outcome(last: Any) -> CommandExecutionResult:
    """Map the stream's last message to the query's result (``claudeTerminalResult``).

    ``succeeded`` only for ``type: result``, ``subtype: success`` and
    ``is_error`` not true. Another ``result`` is ``failed`` with
    ``claude-<subtype>`` and a message from ``errors[]``, else
    ``terminal_reason``, else ``result``. No final ``result`` (a crash, a
    stream that ends early) is ``unknown`` / ``claude-query-outcome-unknown``.
    """
    if not isinstance(last, Mapping) or last.get("type") != "result":
        return unknown("claude-query-outcome-unknown", "the query ended without a result")
    subtype = last.get("subtype")
    subtype_text = subtype if isinstance(subtype, str) and subtype else "error"
    session = last.get("session_id")
    result = {"nativeSessionId": session} if isinstance(session, str) else None
    if subtype == "success" and last.get("is_error") is not True:
        return succeeded(result)
    errors = last.get("errors")
    texts = [e for e in errors if isinstance(e, str) and e] if isinstance(errors, list) else []
    reason = last.get("terminal_reason")
    text = last.get("result")
    if texts:
        message = "; ".join(texts)
    elif isinstance(reason, str) and reason:
        message = reason
    elif isinstance(text, str) and text:
        message = text
    else:
        message = f"the query ended with {subtype_text}"
    return failed(f"claude-{subtype_text}", message, result=result)


# --- events -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StreamMessage:
    """A message line (``system``, ``assistant``, ``user``, ``result``, ...), kept whole."""

    type: str
    subtype: str | None
    raw: dict[str, Any]


@dataclass(frozen=True)
class ControlResponse:
    """The CLI's answer to one of our control requests."""

    request_id: str | None
    success: bool
    response: Any
    error: str | None


@dataclass(frozen=True)
class ControlRequest:
    """A control request from the CLI; ``reply`` is its answer, queued in the outbox."""

    request_id: str
    subtype: str | None
    request: Any
    reply: bytes


@dataclass(frozen=True)
class StreamMalformedLine(LineSkipped):
    """A stdout line that is not a JSON object (kept in ``line``); skipped."""


@dataclass(frozen=True)
class StreamClosed(ConnectionClosed):
    """stdout ended: ``reason`` ``"eof"``, or ``"frame_too_large"`` with ``error``.

    ``outcome`` is final.
    """

    reason: str = "eof"
    outcome: CommandExecutionResult = field(kw_only=True)


StreamEvent = StreamMessage | ControlResponse | ControlRequest | StreamMalformedLine | StreamClosed
"""Everything :meth:`ClaudeStreamConnection.receive_data` returns."""


class StreamState(TableEnum):
    """The host side's view of the child's stdout."""

    OPEN = "open"
    CLOSED = "closed"
    """stdout ended."""
    ERROR = "error"
    """An over-cap line killed the stream (sticky)."""


class StreamInput(TableEnum):
    """What moves a stream connection."""

    EOF = "eof"
    SEND = "send"
    """This side writes a line to stdin (allowed while stdin may still be open)."""


STREAM_TABLE = TransitionTable(
    "claude stream",
    {
        (StreamState.OPEN, StreamInput.EOF): StreamState.CLOSED,
        **{(state, StreamInput.SEND): state for state in StreamState},
    },
    error=StreamState.ERROR,
)
"""The contract table of :class:`ClaudeStreamConnection`."""


class ClaudeStreamConnection(Contract[StreamState]):
    """The host side of one stream-json child.

    ``request_token`` is the random part of control request ids
    (``req_<n>_<token>``); the shell passes a fresh one per child.
    """

    def __init__(
        self,
        *,
        session_id: str,
        request_token: str = "00000000",
        framing: FramingPolicy = CLAUDE_FRAMING,
    ) -> None:
        super().__init__(STREAM_TABLE, StreamState.OPEN)
        self.session_id = session_id
        self.last_message: dict[str, Any] | None = None
        """The last message line seen (control traffic excluded)."""
        self._token = request_token
        self._counter = 0
        self._lines = LineBuffer(framing)

    @property
    def closed(self) -> bool:
        """True once stdout ended (cleanly or not)."""
        return self.state is not StreamState.OPEN

    def user_message(self, text: str) -> bytes:
        """Return the stdin line carrying the prompt text."""
        self._local(StreamInput.SEND)
        return encode_line(
            {
                "type": "user",
                "message": {"role": "user", "content": text},
                "parent_tool_use_id": None,
                "session_id": self.session_id,
            }
        )

    def control_request(self, subtype: str, **fields: Any) -> tuple[str, bytes]:
        """Return ``(request_id, line)`` for a control request of ``subtype`` with ``fields``."""
        self._local(StreamInput.SEND)
        self._counter += 1
        request_id = f"req_{self._counter}_{self._token}"
        request = {"subtype": subtype, **fields}
        return request_id, encode_line(
            {"type": "control_request", "request_id": request_id, "request": request}
        )

    def interrupt(self) -> tuple[str, bytes]:
        """Return the ``interrupt`` control request (the CLI then ends the turn with a result)."""
        return self.control_request("interrupt")

    def set_permission_mode(self, mode: str) -> tuple[str, bytes]:
        """Return the ``set_permission_mode`` control request."""
        return self.control_request("set_permission_mode", mode=mode)

    def set_model(self, model: str | None) -> tuple[str, bytes]:
        """Return the ``set_model`` control request (``None`` restores the default)."""
        return self.control_request("set_model", model=model)

    def outcome(self) -> CommandExecutionResult:
        """Return the result the stream so far implies (``unknown`` until a final result)."""
        return result_outcome(self.last_message)

    def receive_data(self, data: bytes) -> list[StreamEvent]:
        """Feed bytes from stdout (``b""`` = EOF) and return the events.

        Raises:
            LocalProtocolError: data after the stream closed.

        """
        lines, error = self._split(self._lines, data)
        events = [event for line in lines for event in self._line(line)]
        if error is not None:
            self._fail(error)
            events.append(StreamClosed("frame_too_large", error, outcome=self.outcome()))
            return events
        if not data:
            self._remote(StreamInput.EOF)
            events.append(StreamClosed(outcome=self.outcome()))
        return events

    def _line(self, line: bytes) -> list[StreamEvent]:
        try:
            value = _ANY.decode(line)
        except msgspec.DecodeError as exc:
            error = RemoteProtocolError(ErrorCode.MALFORMED_FRAME, str(exc))
            return [StreamMalformedLine(line=line, error=error)]
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            error = RemoteProtocolError(ErrorCode.SCHEMA_VIOLATION, "line is not a typed object")
            return [StreamMalformedLine(line=line, error=error)]
        kind = value["type"]
        if kind == "control_response":
            body = value.get("response")
            body = body if isinstance(body, dict) else {}
            request_id = body.get("request_id")
            error_text = body.get("error")
            return [
                ControlResponse(
                    request_id=request_id if isinstance(request_id, str) else None,
                    success=body.get("subtype") == "success",
                    response=body.get("response"),
                    error=error_text if isinstance(error_text, str) else None,
                )
            ]
        if kind == "control_request":
            return [self._answer(value)]
        if kind == "control_cancel_request":
            return []
        subtype = value.get("subtype")
        self.last_message = value
        return [
            StreamMessage(
                type=kind, subtype=subtype if isinstance(subtype, str) else None, raw=value
            )
        ]

    def _answer(self, value: dict[str, Any]) -> ControlRequest:
        raw_id = value.get("request_id")
        request_id = raw_id if isinstance(raw_id, str) else str(raw_id)
        request = value.get("request")
        subtype = request.get("subtype") if isinstance(request, dict) else None
        if subtype == "can_use_tool":
            body: dict[str, Any] = {
                "subtype": "success",
                "request_id": request_id,
                "response": {
                    "behavior": "deny",
                    "message": "the connector has no approval surface",
                },
            }
        else:
            body = {
                "subtype": "error",
                "request_id": request_id,
                "error": f"unsupported control request: {subtype}",
            }
        reply = encode_line({"type": "control_response", "response": body})
        self.outbox.put(reply)
        return ControlRequest(
            request_id=request_id,
            subtype=subtype if isinstance(subtype, str) else None,
            request=request,
            reply=reply,
        )
