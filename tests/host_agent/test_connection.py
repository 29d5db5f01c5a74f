from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from shedproto import ErrorCode, LocalProtocolError
from shedproto.host_agent import (
    AgentConnection,
    AgentState,
    ApprovalRequest,
    ApprovalResponse,
    ClientInfo,
    CloseReason,
    ConnectionClosed,
    ConsumerConnection,
    ConsumerState,
    CredentialGet,
    Event,
    Hello,
    HelloAck,
    LineSkipped,
    Ping,
    PingDue,
    Pong,
    TokenGet,
    encode_frame,
)

HELLO = (
    b'{"v":2,"type":"hello","id":"h","client":{"name":"app","version":"1","pid":7},'
    b'"replay_events":3}\n'
)


def accepted_ack(**kw: object) -> HelloAck:
    return HelloAck.accepted_ack(
        id="a",
        ts="t",
        version="v",
        gate_namespaces=("ssh-agent",),
        request_timeout_ms=25000,
        **kw,  # type: ignore[arg-type]
    )


def state(conn: AgentConnection | ConsumerConnection) -> object:
    """Read the state without letting mypy narrow it across calls."""
    return conn.state


Chunker = Callable[[bytes], Sequence[bytes]]
CHUNKINGS: list[tuple[str, Chunker]] = [
    ("whole", lambda data: [data]),
    ("bytewise", lambda data: [data[i : i + 1] for i in range(len(data))]),
    ("halves", lambda data: [data[: len(data) // 2], data[len(data) // 2 :]]),
]


def feed(conn: AgentConnection | ConsumerConnection, data: bytes, chunker: Chunker) -> list[object]:
    events: list[object] = []
    for chunk in chunker(data):
        events += conn.receive_data(chunk)
    return events


# ---------------------------------------------------------------- agent side


@pytest.mark.parametrize(("name", "chunker"), CHUNKINGS)
def test_agent_handshake_any_chunking(name: str, chunker: Chunker) -> None:
    conn = AgentConnection(accepted_at=0.0)
    events = feed(conn, HELLO, chunker)
    assert events == [
        Hello(id="h", client=ClientInfo(name="app", version="1", pid=7), replay_events=3)
    ]
    assert state(conn) is AgentState.HELLO_RECEIVED
    assert conn.hello is not None
    assert conn.hello.replay_events == 3
    assert conn.next_deadline() is None
    wire = conn.accept(accepted_ack(), now=5.0)
    assert wire.startswith(b'{"v":2,"type":"hello_ack"')
    assert state(conn) is AgentState.ACTIVE
    assert conn.next_deadline() == 15.0  # the first ping at +10 s


@pytest.mark.parametrize(("name", "chunker"), CHUNKINGS)
@pytest.mark.parametrize(
    "first",
    [
        b'{"type":"pong"}\n',
        b"not json\n",
        b"\n",
        b"   \n",
        b'{"v":2}\n',
        b'{"type":"approval_response","request_id":"x","decision":"approve"}\n',
        b'{"type":"hello","replay_events":"x"}\n',
        b'{"type":"mystery"}\n',
        b"[1,2]\n",
    ],
)
def test_agent_first_line_not_hello_closes_silently(
    name: str, chunker: Chunker, first: bytes
) -> None:
    conn = AgentConnection(accepted_at=0.0)
    events = feed(conn, first + HELLO, chunker)
    assert len(events) == 1
    closed = events[0]
    assert isinstance(closed, ConnectionClosed)
    assert closed.reason is CloseReason.NOT_HELLO
    assert closed.error is not None
    assert state(conn) is AgentState.CLOSED
    assert conn.receive_data(HELLO) == []  # nothing more, ever
    with pytest.raises(LocalProtocolError):
        conn.accept(accepted_ack(), now=0)


def test_agent_crlf_is_tolerated() -> None:
    conn = AgentConnection(accepted_at=0.0)
    assert isinstance(conn.receive_data(HELLO[:-1] + b"\r\n")[0], Hello)


def test_agent_hello_timeout() -> None:
    conn = AgentConnection(accepted_at=100.0)
    assert conn.next_deadline() == 102.0
    assert conn.handle_timeout(101.9) == []
    conn.receive_data(HELLO[:10])  # a partial line does not count
    assert conn.handle_timeout(102.0) == [ConnectionClosed(CloseReason.HELLO_TIMEOUT)]
    assert state(conn) is AgentState.CLOSED
    assert conn.receive_data(HELLO[10:]) == []


def test_agent_eof_before_hello_and_partial_tail_dropped() -> None:
    conn = AgentConnection(accepted_at=0.0)
    assert conn.receive_data(HELLO[:-1]) == []
    assert conn.receive_data(b"") == [ConnectionClosed(CloseReason.EOF)]


def test_agent_oversize_first_line_closes() -> None:
    conn = AgentConnection(accepted_at=0.0)
    events = conn.receive_data(b"x" * (1 << 20))
    assert len(events) == 1
    assert isinstance(events[0], ConnectionClosed)
    assert events[0].reason is CloseReason.LINE_TOO_LONG
    assert events[0].error is not None
    assert events[0].error.code is ErrorCode.FRAME_TOO_LARGE


def handshaken() -> AgentConnection:
    conn = AgentConnection(accepted_at=0.0)
    conn.receive_data(HELLO)
    conn.accept(accepted_ack(), now=0.0)
    return conn


def test_agent_line_cap_counts_the_newline() -> None:
    body = b'{"type":"pong","pad":"' + b"x" * ((1 << 20) - 1 - 24) + b'"}'
    assert len(body) + 1 == 1 << 20  # exactly 1 MiB with its newline: accepted
    conn = handshaken()
    assert conn.receive_data(body + b"\n") == [Pong()]
    bigger = body[:-2] + b'x"}\n'
    events = conn.receive_data(bigger)
    assert [type(e) for e in events] == [ConnectionClosed]
    assert state(conn) is AgentState.CLOSED


def test_agent_frames_before_an_oversize_line_are_kept() -> None:
    conn = handshaken()
    events = conn.receive_data(b'{"type":"pong"}\n' + b"y" * (2 << 20))
    assert events[0] == Pong()
    assert isinstance(events[1], ConnectionClosed)
    assert events[1].reason is CloseReason.LINE_TOO_LONG


def test_agent_after_handshake_skips_bad_lines_and_delivers_good_ones() -> None:
    conn = handshaken()
    stream = (
        b"garbage\n"
        b"\n"
        b'{"type":"unknown.future","x":1}\n'
        b'{"type":"hello"}\n'
        b'{"type":"approval_response","request_id":"r1","decision":"approve","extra":[1]}\n'
        b'{"type":"pong","id":"p"}\r\n'
        b'{"type":"token.get","id":"q1","server":"prod"}\n'
        b'{"type":"credential.get","id":"q2","server":"prod","csr":"abc"}\n'
    )
    for _, chunker in CHUNKINGS:
        conn = handshaken()
        events = feed(conn, stream, chunker)
        skipped = [e for e in events if isinstance(e, LineSkipped)]
        assert [e.error.code for e in skipped] == [
            ErrorCode.MALFORMED_FRAME,
            ErrorCode.MALFORMED_FRAME,
            ErrorCode.UNKNOWN_TYPE,
            ErrorCode.UNEXPECTED_EVENT,
        ]
        frames = [e for e in events if not isinstance(e, LineSkipped)]
        assert frames == [
            ApprovalResponse(request_id="r1", decision="approve"),
            Pong(id="p"),
            TokenGet(id="q1", server="prod"),
            CredentialGet(id="q2", server="prod", csr="abc"),
        ]
        assert state(conn) is AgentState.ACTIVE


def test_agent_lines_with_the_hello_come_after_it() -> None:
    conn = AgentConnection(accepted_at=0.0)
    events = conn.receive_data(HELLO + b'{"type":"pong"}\n')
    assert [type(e) for e in events] == [Hello, Pong]
    with pytest.raises(LocalProtocolError):
        conn.send(Ping(id="p", ts="t"))  # nothing is written before the ack


def test_agent_ping_schedule() -> None:
    conn = handshaken()
    assert conn.handle_timeout(9.99) == []
    assert conn.handle_timeout(10.0) == [PingDue(10.0)]
    assert conn.next_deadline() == 20.0
    assert conn.handle_timeout(45.0) == [PingDue(20.0)]  # missed intervals collapse
    assert conn.next_deadline() == 50.0
    assert conn.send(Ping(id="p", ts="t")) == b'{"v":2,"type":"ping","id":"p","ts":"t"}\n'


def test_agent_supersede_then_silence() -> None:
    conn = handshaken()
    wire = conn.supersede(HelloAck.superseded_ack(id="s", ts="t"))
    assert b'"reason":"superseded"' in wire
    assert state(conn) is AgentState.SUPERSEDED
    assert conn.next_deadline() is None
    assert conn.receive_data(b'{"type":"approval_response","request_id":"r"}\n') == []
    with pytest.raises(LocalProtocolError) as info:
        conn.send(Event(id="e", ts="t", result="ok"))
    assert info.value.code is ErrorCode.UNEXPECTED_EVENT
    assert conn.receive_data(b"") == [ConnectionClosed(CloseReason.EOF)]


def test_agent_local_misuse() -> None:
    conn = AgentConnection(accepted_at=0.0)
    with pytest.raises(LocalProtocolError):
        conn.accept(accepted_ack(), now=0.0)  # no hello yet
    conn.receive_data(HELLO)
    with pytest.raises(LocalProtocolError):
        conn.accept(HelloAck.superseded_ack(id="x", ts="t"), now=0.0)
    with pytest.raises(LocalProtocolError):
        conn.supersede(HelloAck.superseded_ack(id="x", ts="t"))  # not active yet
    assert state(conn) is AgentState.HELLO_RECEIVED  # unchanged by the errors
    conn.accept(accepted_ack(), now=0.0)
    with pytest.raises(LocalProtocolError):
        conn.send(accepted_ack())  # type: ignore[arg-type]
    with pytest.raises(LocalProtocolError):
        conn.send(Pong())  # type: ignore[arg-type]
    conn.close()
    assert state(conn) is AgentState.CLOSED
    conn.close()  # idempotent


# ---------------------------------------------------------------- consumer side


def test_consumer_pair_with_agent() -> None:
    """Client core -> bytes -> server core, and back."""
    agent = AgentConnection(accepted_at=0.0)
    app = ConsumerConnection()
    hello = Hello(
        id="h", ts="t", client=ClientInfo(name="app", version="2", pid=9), replay_events=5
    )
    assert agent.receive_data(app.send(hello)) == [hello]
    assert state(app) is ConsumerState.HELLO_SENT
    ack = accepted_ack()
    assert app.receive_data(agent.accept(ack, now=0.0)) == [ack]
    assert state(app) is ConsumerState.ACTIVE
    assert app.ack == ack
    request = ApprovalRequest(
        id="r1",
        ts="t",
        namespace="ssh-agent",
        op="sign",
        shed="web",
        detail="SSH sign request",
        expires_at="e",
    )
    event = Event(id="e1", ts="t", shed="web", ns="ssh-agent", op="list", result="ok")
    ping = Ping(id="p", ts="t")
    wire = agent.send(request) + agent.send(event) + agent.send(ping)
    for _, chunker in CHUNKINGS:
        fresh = ConsumerConnection()
        fresh.send(hello)
        fresh.receive_data(encode_frame(ack))
        assert feed(fresh, wire, chunker) == [request, event, ping]
    assert app.receive_data(wire) == [request, event, ping]
    assert app.outstanding == {"r1": request}
    response = ApprovalResponse(
        id="x", ts="t", request_id="r1", decision="approve", scope="per-request"
    )
    assert agent.receive_data(app.send(response) + app.send(Pong(id="p", ts="t"))) == [
        response,
        Pong(id="p", ts="t"),
    ]
    assert app.outstanding == {}


def active_app() -> ConsumerConnection:
    app = ConsumerConnection()
    app.send(Hello(id="h"))
    app.receive_data(encode_frame(accepted_ack()))
    return app


def test_consumer_refuses_unknown_and_duplicate_responses() -> None:
    app = active_app()
    with pytest.raises(LocalProtocolError) as info:
        app.send(ApprovalResponse(request_id="nope", decision="deny"))
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    app.receive_data(encode_frame(ApprovalRequest(id="r", namespace="ssh-agent", op="sign")))
    app.send(ApprovalResponse(request_id="r", decision="deny"))
    with pytest.raises(LocalProtocolError):
        app.send(ApprovalResponse(request_id="r", decision="deny"))


def test_consumer_before_hello_and_before_ack() -> None:
    app = ConsumerConnection()
    with pytest.raises(LocalProtocolError) as info:
        app.send(Pong())
    assert info.value.code is ErrorCode.UNEXPECTED_EVENT
    app.send(Hello())
    with pytest.raises(LocalProtocolError):
        app.send(Hello())
    events = app.receive_data(encode_frame(Ping(id="p")))
    assert [type(e) for e in events] == [LineSkipped]
    assert state(app) is ConsumerState.HELLO_SENT


def test_consumer_superseded() -> None:
    app = active_app()
    app.receive_data(encode_frame(ApprovalRequest(id="r")))
    notice = HelloAck.superseded_ack(id="s", ts="t")
    assert app.receive_data(encode_frame(notice)) == [notice]
    assert state(app) is ConsumerState.SUPERSEDED
    assert app.outstanding == {}
    with pytest.raises(LocalProtocolError):
        app.send(Pong())
    assert [type(e) for e in app.receive_data(encode_frame(Ping()))] == [LineSkipped]
    assert app.receive_data(b"") == [ConnectionClosed(CloseReason.EOF)]
    assert state(app) is ConsumerState.CLOSED


def test_consumer_skips_garbage_and_survives() -> None:
    app = active_app()
    events = app.receive_data(b'nope\n{"type":"zzz"}\n\n{"v":2,"type":"ping","id":"p"}\n')
    assert [type(e) for e in events] == [LineSkipped, LineSkipped, Ping]


def test_consumer_credential_get_needs_the_capability() -> None:
    old = ConsumerConnection()
    old.send(Hello())
    old.receive_data(encode_frame(accepted_ack(agent_capabilities=())))
    with pytest.raises(LocalProtocolError) as info:
        old.send(CredentialGet(id="q", server="prod"))
    assert info.value.code is ErrorCode.VERSION_UNSUPPORTED
    app = active_app()
    assert app.send(CredentialGet(id="q", server="prod")).endswith(b'"server":"prod"}\n')
    with pytest.raises(LocalProtocolError):
        app.send(CredentialGet(id="q", server="prod", csr="MIGHAgEAMBMGByqGSM49" + "A" * 10))
    with pytest.raises(LocalProtocolError):
        app.send(CredentialGet(id="q", server="prod", csr="-----begin private key-----"))
    with pytest.raises(LocalProtocolError):
        app.send(CredentialGet(id="q", server="prod", csr="A" * 16385))
    assert app.send(TokenGet(id="q", server="prod"))


def test_consumer_oversize_line_closes() -> None:
    app = active_app()
    events = app.receive_data(b"z" * ((1 << 20) + 5))
    assert [type(e) for e in events] == [ConnectionClosed]
    assert state(app) is ConsumerState.CLOSED


def test_consumer_answers_pings_from_its_outbox() -> None:
    app = active_app()
    events = app.receive_data(
        encode_frame(Ping(id="p1", ts="x")) + encode_frame(Ping(id="p2", ts="x")), wall=0.0
    )
    assert [type(e) for e in events] == [Ping, Ping]  # still delivered
    assert app.data_to_send() == (
        b'{"v":2,"type":"pong","id":"p1","ts":"1970-01-01T00:00:00Z"}\n'
        b'{"v":2,"type":"pong","id":"p2","ts":"1970-01-01T00:00:00Z"}\n'
    )
    assert app.data_to_send() == b""
    app.receive_data(encode_frame(Ping(id="p3", ts="x")))  # no wall time: no answer
    assert app.data_to_send() == b""


def test_consumer_fatal_line_is_kept_as_the_sticky_error() -> None:
    app = active_app()
    events = app.receive_data(encode_frame(Ping(id="p")) + b"x" * (1 << 20) + b"\n")
    assert [type(e) for e in events] == [Ping, ConnectionClosed]
    closed = events[-1]
    assert isinstance(closed, ConnectionClosed)
    assert closed.reason is CloseReason.LINE_TOO_LONG
    assert app.error is closed.error is not None
    assert app.state is ConsumerState.CLOSED
    with pytest.raises(LocalProtocolError, match="failed earlier"):
        app.send(Pong(id="p"))
