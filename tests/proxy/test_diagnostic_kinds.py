"""Every diagnostic kind docs/proxy.md lists is reported by the proxy, per protocol (issue 27).

Each case is played through a real :class:`Proxy` between a scripted client
and a scripted upstream: the upstream sends its lines only after it has
received the client's, so the proxy sees the exchange in the script's order.
A kind that cannot occur in a protocol is listed in ``NOT_APPLICABLE`` with
the reason, and the table in docs/proxy.md must say the same. Regression:
``--protocol herdr --version 22`` in front of a herdr whose ``ping`` answers
20 printed nothing.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, get_args

import anyio
import anyio.abc
import msgspec
import pytest

from shedproto.host_agent import (
    CredentialGet,
    Hello,
    HelloAck,
    Pong,
    TokenGet,
    TokenResponse,
    encode_frame,
)
from shedproto.observe import PROTOCOLS, DiagnosticKind, Direction
from shedproto.servers import UnixServer

from ._helpers import proxied

Exchange = list[tuple[Direction, bytes]]

# ------------------------------------------------------------------ herdr

PING = b'{"id":"1","method":"ping","params":{}}\n'


def pong(protocol: int, request_id: str = "1") -> bytes:
    result = {
        "type": "pong",
        "version": "0.8.0",
        "protocol": protocol,
        "capabilities": {"live_handoff": False, "detached_server_daemon": False},
    }
    return msgspec.json.encode({"id": request_id, "result": result}) + b"\n"


HERDR: dict[str, tuple[Exchange, dict[str, Any]]] = {
    "malformed": ([("c2s", b"{not json\n")], {}),
    "unknown_op": ([("c2s", b'{"id":"1","method":"nope","params":{}}\n')], {}),
    "schema": ([("c2s", b'{"id":"1","method":"pane.get","params":{"pane_id":5}}\n')], {}),
    "illegal_state": ([("c2s", PING), ("s2c", pong(21) + pong(21))], {}),
    "unknown_error_code": (
        [("c2s", PING), ("s2c", b'{"id":"1","error":{"code":"bogus","message":"m"}}\n')],
        {},
    ),
    "over_cap": (
        [("c2s", b'{"id":"1","method":"ping","params":{"x":"' + b"a" * (1 << 20) + b'"}}\n')],
        {},
    ),
    "unsolicited_answer": ([("c2s", PING), ("s2c", pong(21, "2"))], {}),
    # the case: --version 22 in front of a server whose ping answers 20
    "version_mismatch": ([("c2s", PING), ("s2c", pong(20))], {"version": 22}),
    "truncated": ([("c2s", PING), ("s2c", b"")], {}),
}

# ------------------------------------------------------------------ desktop


def request(request_id: str, op: str = "identify") -> bytes:
    return msgspec.json.encode({"id": request_id, "op": op, "params": {}}) + b"\n"


def ok(request_id: str) -> bytes:
    return msgspec.json.encode({"id": request_id, "ok": True, "result": {}}) + b"\n"


DESKTOP: dict[str, Exchange] = {
    "malformed": [("c2s", request("1")), ("s2c", b"{oops\n")],
    "unknown_op": [("c2s", request("1", "no.such.op"))],
    "schema": [("c2s", request("1")), ("s2c", b'{"id":"1"}\n')],
    "unknown_error_code": [
        ("c2s", request("1")),
        ("s2c", b'{"id":"1","ok":false,"error":{"code":"weird","message":"m"}}\n'),
    ],
    "over_cap": [("c2s", b'{"id":"1","op":"identify","params":"' + b"a" * (17 << 20))],
    "unsolicited_answer": [("c2s", request("1")), ("s2c", ok("9"))],
    "out_of_order": [("c2s", request("1") + request("2")), ("s2c", ok("2"))],
    "truncated": [("c2s", request("1")), ("s2c", b"")],
}

# ------------------------------------------------------------------ host-agent

HELLO = encode_frame(Hello(id="h1"))


def ack(*capabilities: str) -> bytes:
    frame = HelloAck.accepted_ack(
        id="a1", ts="t", version="1", gate_namespaces=("ssh-agent",), request_timeout_ms=1000
    )
    if capabilities != ("default",):
        frame = msgspec.structs.replace(frame, agent_capabilities=capabilities)
    return encode_frame(frame)


ACK = ack("default")
HOST_AGENT: dict[str, Exchange] = {
    "malformed": [("c2s", HELLO), ("s2c", ACK), ("c2s", b"{oops\n")],
    "unknown_op": [("c2s", HELLO), ("s2c", ACK), ("c2s", b'{"v":2,"type":"bogus"}\n')],
    "schema": [("c2s", HELLO), ("s2c", ACK), ("c2s", b'{"type":"pong","id":5}\n')],
    "illegal_state": [("c2s", encode_frame(Pong()))],
    "over_cap": [("c2s", HELLO), ("s2c", ACK), ("c2s", b"x" * (1 << 20) + b"\n")],
    "unsolicited_answer": [
        ("c2s", HELLO),
        ("s2c", ACK),
        ("s2c", encode_frame(TokenResponse(in_reply_to="t9", server="web"))),
    ],
    # the channel's versioning is the ack's capability list: credential.get needs it
    "version_mismatch": [
        ("c2s", HELLO),
        ("s2c", ack()),
        ("c2s", encode_frame(CredentialGet(id="c1", server="web"))),
    ],
    "truncated": [
        ("c2s", HELLO),
        ("s2c", ACK),
        ("c2s", encode_frame(TokenGet(id="t1", server="web"))),
        ("s2c", b""),
    ],
}

STATUS: dict[str, Exchange] = {
    "malformed": [("s2c", b"{oops"), ("s2c", b"")],
    "schema": [("s2c", b'{"schema":1,"policies":5}\n'), ("s2c", b"")],
    "illegal_state": [("c2s", b"hi")],
    "over_cap": [("s2c", b'{"schema":1,"x":"' + b"a" * (16 << 20) + b'"}\n')],
    "version_mismatch": [("s2c", b'{"schema":2}\n'), ("s2c", b"")],
    "truncated": [("s2c", b"")],
}

# ------------------------------------------------------------------ agents-host

HEALTH = b'{"id":1,"op":"health"}\n'
AGENTS_HOST: dict[str, Exchange] = {
    "malformed": [("c2s", b"{oops\n")],
    "unknown_op": [("c2s", b'{"id":1,"op":"nope"}\n')],
    "schema": [("c2s", b'{"id":1,"op":"health","extra":1}\n')],
    "illegal_state": [("s2c", b'{"event":"health","data":{}}\n')],
    "unknown_error_code": [
        ("c2s", HEALTH),
        ("s2c", b'{"id":1,"ok":false,"error":{"code":"odd","message":"m"}}\n'),
    ],
    "over_cap": [("c2s", b"{" + b"a" * (1 << 20) + b"\n")],
    "unsolicited_answer": [("s2c", b'{"id":4,"ok":true,"result":{}}\n')],
    "truncated": [("c2s", HEALTH), ("s2c", b"")],
}

NOT_APPLICABLE: dict[tuple[str, str], str] = {
    ("herdr", "out_of_order"): "one request per connection",
    ("desktop", "illegal_state"): "any request is legal at any time on a control socket",
    ("desktop", "version_mismatch"): "the control socket carries no version",
    ("host-agent", "unknown_error_code"): "the approval channel has no error-code registry",
    ("host-agent", "out_of_order"): "answers name the request they answer (in_reply_to)",
    ("host-agent-status", "unknown_op"): "one document, no ops",
    ("host-agent-status", "unknown_error_code"): "no errors on the status socket",
    ("host-agent-status", "unsolicited_answer"): "no requests on the status socket",
    ("host-agent-status", "out_of_order"): "one document",
    ("agents-host", "out_of_order"): "replies may overtake each other (submit with wait)",
    ("agents-host", "version_mismatch"): "the socket API carries no version",
}

CASES: list[tuple[str, str, Exchange, dict[str, Any]]] = [
    *(("herdr", kind, exchange, options) for kind, (exchange, options) in HERDR.items()),
    *(
        ("desktop", kind, exchange, {"dialect": dialect})
        for dialect in ("mac", "tauri")
        for kind, exchange in DESKTOP.items()
    ),
    *(("host-agent", kind, exchange, {}) for kind, exchange in HOST_AGENT.items()),
    *(("host-agent-status", kind, exchange, {}) for kind, exchange in STATUS.items()),
    *(("agents-host", kind, exchange, {}) for kind, exchange in AGENTS_HOST.items()),
]


def _case_id(case: tuple[str, str, Exchange, dict[str, Any]]) -> str:
    protocol, kind, _, options = case
    return "-".join([protocol, *map(str, options.values()), kind])


async def _read(stream: anyio.abc.SocketStream, count: int) -> None:
    """Read ``count`` bytes, or to the end of the stream when ``count`` is 0."""
    got = 0
    while count == 0 or got < count:
        try:
            got += len(await stream.receive())
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            return


async def _play(stream: anyio.abc.SocketStream, exchange: Exchange, mine: Direction) -> None:
    for direction, data in exchange:
        if direction == mine and data:
            await stream.send(data)
        elif direction == mine:
            await stream.send_eof()
        else:
            await _read(stream, len(data))


async def _client_side(path: Path, exchange: Exchange) -> None:
    async with await anyio.connect_unix(path) as client:
        await _play(client, exchange, "c2s")


@pytest.mark.parametrize("case", CASES, ids=list(map(_case_id, CASES)))
async def test_the_proxy_reports_each_kind(
    case: tuple[str, str, Exchange, dict[str, Any]], short_socket_dir: Path
) -> None:
    protocol, kind, exchange, options = case

    async def upstream_side(stream: anyio.abc.SocketStream) -> None:
        await _play(stream, exchange, "s2c")

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tasks:
            upstream = UnixServer(short_socket_dir / "up.sock", upstream_side)
            path = await tasks.start(upstream.serve)
            listen = short_socket_dir / "p.sock"
            async with proxied(listen, path, protocol, **options) as run:
                await _client_side(run.path, exchange)
            upstream.shutdown()
    found = [(d.kind, d.protocol) for d in run.diagnostics]
    assert (kind, protocol) in found, [d.human() for d in run.diagnostics]


def test_every_kind_is_tested_or_not_applicable_for_every_protocol() -> None:
    tested = {(protocol, kind) for protocol, kind, _, _ in CASES}
    for protocol in PROTOCOLS:
        for kind in get_args(DiagnosticKind):
            assert ((protocol, kind) in tested) != ((protocol, kind) in NOT_APPLICABLE), (
                protocol,
                kind,
            )


def test_the_docs_table_of_kinds_per_protocol_matches() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "proxy.md").read_text()
    header = "| kind | host-agent | host-agent-status | desktop | herdr | agents-host |"
    assert header in docs
    table = docs.split(header, 1)[1].split("\n\n", 1)[0]
    columns = header.strip("|").split("|")[1:]
    rows = [line for line in table.splitlines() if re.match(r"\| `", line)]
    seen: dict[tuple[str, str], str] = {}
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        kind = cells[0].strip("`")
        for protocol, cell in zip(columns, cells[1:], strict=True):
            seen[(protocol.strip(), kind)] = cell
    assert {key for key, cell in seen.items() if cell == "yes"} == {
        (protocol, kind) for protocol, kind, _, _ in CASES
    }
    assert {key for key, cell in seen.items() if cell == "no"} == set(NOT_APPLICABLE)
