"""Conformance probe cases: the specs' edge cases, with outcomes computed by the core.

Each :class:`ProbeCase` is bytes to send on a fresh connection. What a
conforming server must do is not written down here a second time: it is
what the core's own server side does with those bytes (herdr's and the
desktop's ``ServerConnection``, the agents-host request decoder, the
host-agent's ``AgentConnection``): answer (``answer``), answer a given error
code (``error``), or close without a byte (``close``). :func:`judge` compares
what a live server did, after the observer has checked every frame it sent.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from shedproto._errors import FramingError, RemoteProtocolError
from shedproto._framing import LineBuffer
from shedproto.agents_host import API_FRAMING, API_MAX_FRAME_BYTES
from shedproto.agents_host import decode_reply as decode_api_reply
from shedproto.agents_host import decode_request as decode_api_request
from shedproto.desktop import (
    Dialect,
    RequestReceived,
    RequestRejected,
    codes_match,
    parse_response,
    request_line,
)
from shedproto.desktop import ServerConnection as DesktopServer
from shedproto.herdr import (
    HIDDEN_METHODS,
    MAX_REQUEST_BYTES,
    ErrorResponse,
    decode_response,
    request_id_of,
)
from shedproto.herdr import ServerConnection as HerdrServer
from shedproto.herdr.types import NEWEST_PROTOCOL, PROTOCOL_TABLES
from shedproto.host_agent import (
    MAX_LINE_BYTES,
    AgentConnection,
    CloseReason,
    ConnectionClosed,
    Hello,
    Pong,
    encode_frame,
)

from ._diagnostic import Diagnostic

__all__ = ["Outcome", "ProbeCase", "judge", "outcome_of", "probe_cases"]

OutcomeKind = Literal["answer", "ok", "error", "close", "version"]


class Outcome(msgspec.Struct, frozen=True):
    """One thing a server does: ``answer`` (any answer to ``id``), ``ok``, ``error``, ``close``.

    ``version``: an answer in another protocol version (``code`` is its number).
    """

    kind: OutcomeKind
    id: Any = None
    code: str | None = None


class ProbeCase(msgspec.Struct, frozen=True, kw_only=True):
    """One edge case: a name, the bytes to send, whether it changes server state, the outcomes."""

    name: str
    payload: bytes
    expected: tuple[Outcome, ...]
    mutation: bool = False


def _json(value: Any) -> bytes:
    return msgspec.json.encode(value) + b"\n"


def probe_cases(protocol: str, *, dialect: str | None, version: int | None) -> list[ProbeCase]:
    """Return the cases for ``protocol`` (options as :func:`resolve_options` returns them)."""
    if protocol == "herdr":
        return _herdr_cases(version or 0)
    if protocol == "desktop":
        return _desktop_cases(Dialect(dialect or "tauri"))
    if protocol == "agents-host":
        return _agents_host_cases()
    if protocol == "host-agent":
        return _host_agent_cases()
    return [ProbeCase(name="status document, then close", payload=b"", expected=(Outcome("ok"),))]


def _herdr_cases(version: int) -> list[ProbeCase]:
    payloads = {
        "ping answers": _json({"id": "c1", "method": "ping", "params": {}}),
        "unknown method": _json({"id": "c2", "method": "no.such.method", "params": {}}),
        "bad JSON": b"{not json\n",
        "unknown params field": _json({"id": "c3", "method": "ping", "params": {"zz": 1}}),
        "missing params": _json({"id": "c4", "method": "ping"}),
        "blank line closes": b"\n",
        "over-cap line closes": b'{"id":"c5","method":"ping","params":{"x":"'
        + b"a" * MAX_REQUEST_BYTES
        + b'"}}\n',
    }
    own = PROTOCOL_TABLES.get(version, PROTOCOL_TABLES[NEWEST_PROTOCOL])[0]
    hidden = HIDDEN_METHODS  # parsed by every release though 20/21's schemas skip them
    newer = [m for m in PROTOCOL_TABLES[NEWEST_PROTOCOL][0] if m not in own and m not in hidden]
    if newer:  # a method of a newer protocol: this one's herdr does not parse it
        payloads[f"newer method {newer[0]} is unknown"] = _json(
            {"id": "c6", "method": newer[0], "params": {}}
        )
    cases = []
    for name, payload in payloads.items():
        server = HerdrServer(protocol=version, request_timeout=float("inf"))
        try:
            events = server.receive_data(payload)
        except RemoteProtocolError as exc:
            if exc.reply_hint is None:
                expected: tuple[Outcome, ...] = (Outcome("close"),)
            else:
                hint = decode_response(exc.reply_hint.rstrip(b"\n"), version)
                assert isinstance(hint, ErrorResponse)
                echoed = request_id_of(payload.split(b"\n", 1)[0]) if version >= 22 else ""
                # herdr up to 0.9.1 answers id "", 0.9.2 and later the line's string id
                ids: Any = (hint.id, echoed) if echoed else hint.id
                expected = (Outcome("error", ids, hint.error.code),)
        else:
            expected = tuple(Outcome("answer", e.id) for e in events if hasattr(e, "id"))
        cases.append(ProbeCase(name=name, payload=payload, expected=expected))
    return cases


def _desktop_cases(dialect: Dialect) -> list[ProbeCase]:
    cap = dialect.frame_cap
    payloads = {
        "identify answers": request_line("c1", "identify", {}),
        "unknown op": request_line("c2", "no.such.op", {}),
        "bad JSON": b"{not json\n",
        "unknown params field": _json({"id": "c3", "op": "identify", "params": {"zz": 1}}),
        "unknown envelope field": _json({"id": "c4", "op": "identify", "params": {}, "zz": 1}),
        "missing id": _json({"op": "identify", "params": {}}),
        "pipelining answers in order": request_line("c5", "identify", {})
        + request_line("c6", "identify", {}),
        "over-cap line": b'{"id":"c7","op":"identify","params":"' + b"a" * cap + b'"}\n',
    }
    cases = []
    for name, payload in payloads.items():
        server = DesktopServer(dialect)
        expected: list[Outcome] = []
        for event in server.receive_data(payload):
            if isinstance(event, RequestReceived):
                expected.append(Outcome("answer", event.id))
            elif isinstance(event, RequestRejected):
                reply = parse_response(event.reply.rstrip(b"\n"))
                code = reply.error.code if reply.error else None
                expected.append(Outcome("error", reply.id if reply.has_id else None, code))
            elif event.reason == "frame_too_large":
                if event.reply is not None:
                    reply = parse_response(event.reply.rstrip(b"\n"))
                    expected.append(
                        Outcome("error", None, reply.error.code if reply.error else None)
                    )
                expected.append(Outcome("close"))
        cases.append(ProbeCase(name=name, payload=payload, expected=tuple(expected)))
    return cases


def _agents_host_cases() -> list[ProbeCase]:
    payloads = {
        "health answers": _json({"id": 1, "op": "health"}),
        "unknown op": _json({"id": 2, "op": "no-such-op"}),
        "bad JSON": b"{not json\n",
        "unknown field": _json({"id": 3, "op": "health", "zz": 1}),
        "pipelining": _json({"id": 4, "op": "health"})
        + _json({"id": 5, "op": "receipts", "limit": 1}),
        "over-cap line": b"{" + b" " * API_MAX_FRAME_BYTES + b"}\n",
    }
    cases = []
    for name, payload in payloads.items():
        expected: list[Outcome] = []
        try:
            lines, over = LineBuffer(API_FRAMING).feed(payload), False
        except FramingError as exc:
            lines, over = list(exc.frames_before), True
        for line in lines:
            try:
                request = decode_api_request(line)
            except RemoteProtocolError as exc:
                hint = decode_api_reply((exc.reply_hint or b"{}").rstrip(b"\n"))
                expected.append(Outcome("error", hint.id, hint.error.code if hint.error else None))
            else:
                expected.append(Outcome("answer", request.id))
        if over:
            expected += [Outcome("error", None, "frame-too-large"), Outcome("close")]
        cases.append(ProbeCase(name=name, payload=payload, expected=tuple(expected)))
    return cases


def _host_agent_cases() -> list[ProbeCase]:
    payloads = {
        "first line not hello closes silently": (encode_frame(Pong()), False),
        "bad JSON first line closes silently": (b"{not json\n", False),
        "empty first line closes silently": (b"\n", False),
        "over-cap first line closes silently": (b"x" * MAX_LINE_BYTES + b"\n", False),
        "hello is acknowledged (supersedes the consumer)": (encode_frame(Hello(id="c1")), True),
    }
    cases = []
    for name, (payload, mutation) in payloads.items():
        events = AgentConnection(accepted_at=0.0).receive_data(payload)
        closes = any(
            isinstance(e, ConnectionClosed) and e.reason is not CloseReason.EOF for e in events
        )
        expected = (Outcome("close"),) if closes else (Outcome("ok"),)
        cases.append(ProbeCase(name=name, payload=payload, expected=expected, mutation=mutation))
    return cases


def outcome_of(protocol: str, line: bytes, *, version: int | None) -> Outcome:
    """Classify one line a server sent (after the observer validated it).

    Raises:
        RemoteProtocolError: the line is not a valid answer of ``protocol``.

    """
    if protocol == "herdr":
        answer = decode_response(line, version or 0)
        if isinstance(answer, ErrorResponse):
            return Outcome("error", answer.id, answer.error.code)
        result = answer.result  # each protocol has its own pong type (PongReplyP21 ...)
        if result.__struct_config__.tag == "pong" and result.protocol != version:
            return Outcome("version", answer.id, str(answer.result.protocol))
        return Outcome("ok", answer.id)
    if protocol == "desktop":
        response = parse_response(line)
        request_id = response.id if response.has_id else None
        if response.error is not None:
            return Outcome("error", request_id, response.error.code)
        return Outcome("ok", request_id)
    if protocol == "agents-host":
        reply = decode_api_reply(line)
        if reply.error is not None:
            return Outcome("error", reply.id, reply.error.code)
        return Outcome("ok", reply.id)
    return Outcome("ok")


def _matches(expected: Outcome, got: Outcome) -> bool:
    if expected.kind == "close" or got.kind == "close":
        return expected.kind == got.kind
    accepted = expected.id if isinstance(expected.id, tuple) else (expected.id,)
    if expected.id is not None and str(got.id) not in map(str, accepted):
        return False
    if expected.kind == "answer":
        return got.kind in ("ok", "error")
    if expected.kind == "ok":
        return got.kind == "ok"
    return got.kind == "error" and codes_match(got.code or "", expected.code or "")


def judge(case: ProbeCase, got: list[Outcome], diagnostics: list[Diagnostic]) -> str | None:
    """Return why the server failed ``case`` (``None``: it passed).

    ``got`` is what the server did, in order (answers, then ``close`` if it
    closed); ``diagnostics`` are the observer's findings on its frames.
    """
    server_side = [d for d in diagnostics if d.direction == "s2c"]
    if server_side:
        return server_side[0].human()
    answers = [outcome for outcome in got if outcome.kind != "close"]
    if not case.expected and answers:
        return f"expected no answer, got {_show(answers[0])}"
    for index, expected in enumerate(case.expected):
        if index >= len(got):
            return f"expected {_show(expected)}, got nothing more"
        if not _matches(expected, got[index]):
            return f"expected {_show(expected)}, got {_show(got[index])}"
    return None


def _show(outcome: Outcome) -> str:
    if outcome.kind == "close":
        return "a silent close"
    if outcome.kind == "version":
        return f"an answer id {outcome.id!r} in protocol {outcome.code}"
    parts: list[str] = [outcome.kind]
    if outcome.id is not None:
        parts.append(f"id {outcome.id!r}")
    if outcome.code is not None:
        parts.append(f"code {outcome.code!r}")
    return " ".join(parts)
