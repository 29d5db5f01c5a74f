"""Each observer detects a mutated frame of each deviation kind, with the right diagnostic.

Sans-IO: bytes are fed to the observers directly, as the proxy feeds them.
A clean exchange is checked first for every protocol, so a diagnostic below
is caused by the mutation alone.
"""

from __future__ import annotations

import msgspec
import pytest

from shedproto.host_agent import (
    ApprovalRequest,
    ApprovalResponse,
    Hello,
    HelloAck,
    LiveStatus,
    Ping,
    Pong,
    TokenGet,
    TokenResponse,
    encode_frame,
    encode_live_status,
)
from shedproto.observe import Diagnostic, Direction, Observer, observer_factory

Exchange = list[tuple[Direction, bytes]]


def run(observer: Observer, exchange: Exchange) -> list[Diagnostic]:
    """Feed every chunk of ``exchange`` whole; return all diagnostics."""
    found: list[Diagnostic] = []
    for direction, data in exchange:
        found += observer.feed(direction, data)
    return found


def run_bytewise(observer: Observer, exchange: Exchange) -> list[Diagnostic]:
    """Feed ``exchange`` one byte at a time (EOF markers stay whole)."""
    found: list[Diagnostic] = []
    for direction, data in exchange:
        if not data:
            found += observer.feed(direction, b"")
        for index in range(len(data)):
            found += observer.feed(direction, data[index : index + 1])
    return found


def kinds(found: list[Diagnostic]) -> list[str]:
    return [d.kind for d in found]


# ----------------------------------------------------------------- herdr

PING = b'{"id":"1","method":"ping","params":{}}\n'
PONG = (
    b'{"id":"1","result":{"type":"pong","version":"0.8.0","protocol":21,'
    b'"capabilities":{"live_handoff":false,"detached_server_daemon":false}}}\n'
)


def herdr() -> Observer:
    return observer_factory("herdr", version=21)(7)


@pytest.mark.parametrize("feed", [run, run_bytewise])
def test_herdr_clean_exchange_has_no_diagnostic(feed: object) -> None:
    exchange: Exchange = [("c2s", PING), ("s2c", PONG), ("s2c", b""), ("c2s", b"")]
    assert feed(herdr(), exchange) == []  # type: ignore[operator]


@pytest.mark.parametrize(
    ("exchange", "kind", "direction", "path"),
    [
        ([("c2s", b'{"id":"1","method":"nope","params":{}}\n')], "unknown_op", "c2s", "$.method"),
        (
            [("c2s", b'{"id":"1","method":"pane.get","params":{"pane_id":5}}\n')],
            "schema",
            "c2s",
            "$.params.pane_id",
        ),
        ([("c2s", b"{not json\n")], "malformed", "c2s", None),
        ([("c2s", b'{"id":"1","method":"ping","params":{"x":"' + b"a" * (1 << 20) + b'"}}\n')],
         "over_cap", "c2s", None),
        ([("c2s", PING), ("s2c", PONG.replace(b'"id":"1"', b'"id":"2"'))],
         "unsolicited_answer", "s2c", "$.id"),
        ([("c2s", PING), ("s2c", b'{"id":"1","error":{"code":"bogus","message":"m"}}\n')],
         "unknown_error_code", "s2c", "$.error.code"),
        ([("c2s", PING), ("s2c", PONG.replace(b'"protocol":21', b'"protocol":"x"'))],
         "schema", "s2c", "$.result.protocol"),
        ([("c2s", PING), ("s2c", PONG + PONG)], "illegal_state", "s2c", None),
        ([("s2c", PONG)], "unsolicited_answer", "s2c", None),
    ],
)  # fmt: skip
def test_herdr_deviation_kinds(
    exchange: Exchange, kind: str, direction: str, path: str | None
) -> None:
    found = run(herdr(), exchange)
    assert [(d.kind, d.direction, d.path, d.connection) for d in found] == [
        (kind, direction, path, 7)
    ], [d.human() for d in found]


# ----------------------------------------------------------------- desktop


def desktop(dialect: str) -> Observer:
    return observer_factory("desktop", dialect=dialect)(1)


def request(request_id: str, op: str = "identify") -> bytes:
    return msgspec.json.encode({"id": request_id, "op": op, "params": {}}) + b"\n"


BAD_CODE = b'{"id":"1","ok":false,"error":{"code":"weird","message":"m"}}\n'


def ok(request_id: str) -> bytes:
    return msgspec.json.encode({"id": request_id, "ok": True, "result": {}}) + b"\n"


@pytest.mark.parametrize("dialect", ["mac", "tauri"])
def test_desktop_clean_pipelined_exchange(dialect: str) -> None:
    exchange: Exchange = [
        ("c2s", request("1") + request("2")),
        ("s2c", ok("1") + ok("2")),
        ("c2s", b""),
        ("s2c", b""),
    ]
    assert run(desktop(dialect), exchange) == []
    assert run_bytewise(desktop(dialect), exchange) == []


@pytest.mark.parametrize("dialect", ["mac", "tauri"])
@pytest.mark.parametrize(
    ("exchange", "kind", "direction"),
    [
        ([("c2s", request("1", "no.such.op"))], "unknown_op", "c2s"),
        ([("c2s", request("1") + request("2")), ("s2c", ok("2"))], "out_of_order", "s2c"),
        ([("c2s", request("1")), ("s2c", ok("9"))], "unsolicited_answer", "s2c"),
        ([("s2c", ok("1"))], "unsolicited_answer", "s2c"),
        (
            [("c2s", request("1")), ("s2c", BAD_CODE)],
            "unknown_error_code",
            "s2c",
        ),
        ([("c2s", request("1")), ("s2c", b'{"id":"1"}\n')], "schema", "s2c"),
        ([("c2s", request("1")), ("s2c", b"")], "truncated", "s2c"),
        ([("c2s", b'{"id":"1","op":"identify","params":"' + b"a" * (17 << 20))], "over_cap", "c2s"),
    ],
)  # fmt: skip
def test_desktop_deviation_kinds(
    dialect: str, exchange: Exchange, kind: str, direction: str
) -> None:
    found = run(desktop(dialect), exchange)
    assert [(d.kind, d.direction) for d in found] == [(kind, direction)], [d.human() for d in found]


# ----------------------------------------------------------------- host-agent

HELLO = encode_frame(Hello(id="h1"))
ACK = encode_frame(
    HelloAck.accepted_ack(
        id="a1", ts="t", version="1", gate_namespaces=("ssh-agent",), request_timeout_ms=1000
    )
)
ASK = encode_frame(ApprovalRequest(id="r1", namespace="ssh-agent", op="sign", shed="web"))


def host_agent() -> Observer:
    return observer_factory("host-agent")(3)


def test_host_agent_clean_exchange() -> None:
    exchange: Exchange = [
        ("c2s", HELLO),
        ("s2c", ACK + ASK + encode_frame(Ping(id="p"))),
        ("c2s", encode_frame(ApprovalResponse(request_id="r1", decision="approve"))),
        ("c2s", encode_frame(Pong(id="p")) + encode_frame(TokenGet(id="t1", server="web"))),
        ("s2c", encode_frame(TokenResponse(in_reply_to="t1", server="web", token="x"))),
        ("c2s", b""),
        ("s2c", b""),
    ]
    assert run(host_agent(), exchange) == []
    assert run_bytewise(host_agent(), exchange) == []


@pytest.mark.parametrize(
    ("exchange", "kind", "direction"),
    [
        ([("c2s", encode_frame(Pong()))], "illegal_state", "c2s"),
        ([("c2s", HELLO), ("s2c", ASK)], "illegal_state", "s2c"),
        ([("c2s", HELLO), ("s2c", ACK), ("c2s", b'{"v":2,"type":"bogus"}\n')], "unknown_op", "c2s"),
        ([("c2s", HELLO), ("s2c", ACK), ("c2s", b'{"type":"pong","id":5}\n')], "schema", "c2s"),
        ([("c2s", HELLO), ("s2c", ACK),
          ("c2s", encode_frame(ApprovalResponse(request_id="nope", decision="approve")))],
         "unsolicited_answer", "c2s"),
        ([("c2s", HELLO), ("s2c", ACK),
          ("s2c", encode_frame(TokenResponse(in_reply_to="t9", server="web")))],
         "unsolicited_answer", "s2c"),
        ([("c2s", HELLO), ("s2c", ACK), ("c2s", b"x" * (1 << 20) + b"\n")], "over_cap", "c2s"),
    ],
)  # fmt: skip
def test_host_agent_deviation_kinds(exchange: Exchange, kind: str, direction: str) -> None:
    found = run(host_agent(), exchange)
    assert [(d.kind, d.direction) for d in found] == [(kind, direction)], [d.human() for d in found]


@pytest.mark.parametrize("feed", [run, run_bytewise])
def test_host_agent_status_clean_document_has_no_diagnostic(feed: object) -> None:
    document = encode_live_status(LiveStatus(schema=1, policies={"ssh-agent": "shed-desktop"}))
    exchange: Exchange = [("s2c", document), ("s2c", b""), ("c2s", b"")]
    assert feed(observer_factory("host-agent-status")(1), exchange) == []  # type: ignore[operator]


def test_host_agent_status_checks_the_document() -> None:
    good = observer_factory("host-agent-status")(1)
    assert run(good, [("c2s", b"hi")])[0].kind == "illegal_state"
    found = run(
        observer_factory("host-agent-status")(1), [("s2c", b'{"schema":2}\n'), ("s2c", b"")]
    )
    assert kinds(found) == ["version_mismatch"]
    found = run(observer_factory("host-agent-status")(1), [("s2c", b"{oops"), ("s2c", b"")])
    assert kinds(found) == ["malformed"]


# ----------------------------------------------------------------- agents-host


def agents_host() -> Observer:
    return observer_factory("agents-host")(2)


HEALTH = b'{"id":1,"op":"health"}\n'


@pytest.mark.parametrize("feed", [run, run_bytewise])
def test_agents_host_clean_pipelined_exchange(feed: object) -> None:
    exchange: Exchange = [
        ("c2s", HEALTH + b'{"id":2,"op":"receipts","limit":5}\n'),
        ("s2c", b'{"id":1,"ok":true,"result":{"health":null}}\n'),
        ("s2c", b'{"id":2,"ok":true,"result":{"receipts":[]}}\n'),
        ("c2s", b""),
        ("s2c", b""),
    ]
    assert feed(agents_host(), exchange) == []  # type: ignore[operator]


@pytest.mark.parametrize(
    ("exchange", "kind", "direction", "path"),
    [
        ([("c2s", b'{"id":1,"op":"nope"}\n')], "unknown_op", "c2s", None),
        ([("c2s", b'{"id":1,"op":"health","extra":1}\n')], "schema", "c2s", None),
        ([("s2c", b'{"id":4,"ok":true,"result":{}}\n')], "unsolicited_answer", "s2c", "$.id"),
        ([("c2s", HEALTH), ("s2c", b'{"id":1,"ok":false,"error":{"code":"odd","message":"m"}}\n')],
         "unknown_error_code", "s2c", "$.error.code"),
        ([("s2c", b'{"event":"health","data":{}}\n')], "illegal_state", "s2c", "$.event"),
        ([("c2s", b'{"id":1,"op":"receipts","limit":5}\n'),
          ("s2c", b'{"id":1,"ok":true,"result":{"receipts":5}}\n')],
         "schema", "s2c", "$.result.receipts"),
        ([("c2s", b"{" + b"a" * (1 << 20) + b"\n")], "over_cap", "c2s", None),
    ],
)  # fmt: skip
def test_agents_host_deviation_kinds(
    exchange: Exchange, kind: str, direction: str, path: str | None
) -> None:
    found = run(agents_host(), exchange)
    assert [(d.kind, d.direction, d.path) for d in found] == [(kind, direction, path)], [
        d.human() for d in found
    ]


def test_diagnostic_renders_one_human_line_and_ndjson() -> None:
    (found,) = run(herdr(), [("c2s", b'{"id":"1","method":"pane.get","params":{"pane_id":5}}\n')])
    assert found.human().startswith("herdr conn 7 c2s frame 0: schema: ")
    assert found.human().endswith(" at $.params.pane_id")
    assert "\n" not in found.human()
    line = found.ndjson()
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    assert msgspec.json.decode(line, type=Diagnostic) == found
