from __future__ import annotations

import json

import msgspec
import pytest

from shedproto import ErrorCode, RemoteProtocolError
from shedproto.host_agent import (
    ApprovalRequest,
    ApprovalResponse,
    ClientInfo,
    CredentialGet,
    CredentialResponse,
    Event,
    Hello,
    HelloAck,
    Ping,
    Pong,
    TokenGet,
    TokenResponse,
    decode_agent_frame,
    decode_consumer_frame,
    encode_frame,
)
from tests.conftest import requires_shared

from ._shared import golden

# Exact bytes of every frame type (field order, omit/null/[] rules, v first).
EXACT = [
    (
        HelloAck.accepted_ack(
            id="a2",
            ts="2026-07-25T00:00:00Z",
            version="v0.8.0",
            gate_namespaces=("ssh-agent",),
            request_timeout_ms=25000,
        ),
        b'{"v":2,"type":"hello_ack","id":"a2","ts":"2026-07-25T00:00:00Z",'
        b'"agent":{"version":"v0.8.0","approval_method":"shed-desktop"},'
        b'"namespaces":["ssh-agent","aws-credentials","docker-credentials","egress"],'
        b'"gate_namespaces":["ssh-agent"],"agent_capabilities":["credential.get"],'
        b'"request_timeout_ms":25000,"accepted":true}\n',
    ),
    (
        HelloAck.superseded_ack(id="i", ts="t"),
        b'{"v":2,"type":"hello_ack","id":"i","ts":"t","agent":{"version":"","approval_method":""},'
        b'"namespaces":null,"gate_namespaces":null,"request_timeout_ms":0,"accepted":false,'
        b'"reason":"superseded"}\n',
    ),
    # Nothing delegated: [] (the real consumers cannot decode the real agent's null; see
    # tests/host_agent/test_real_consumers.py for the sources).
    (
        HelloAck.accepted_ack(
            id="i", ts="t", version="v", gate_namespaces=(), request_timeout_ms=1000
        ),
        b'{"v":2,"type":"hello_ack","id":"i","ts":"t","agent":{"version":"v",'
        b'"approval_method":"shed-desktop"},"namespaces":["ssh-agent","aws-credentials",'
        b'"docker-credentials","egress"],"gate_namespaces":[],'
        b'"agent_capabilities":["credential.get"],"request_timeout_ms":1000,"accepted":true}\n',
    ),
    # ...and the real agent's null on request
    # (charliek/shed crates/shed-host-agent/src/desktop_protocol.rs:223@861fedae).
    (
        HelloAck.accepted_ack(
            id="i",
            ts="t",
            version="v",
            gate_namespaces=(),
            request_timeout_ms=1000,
            null_when_empty=True,
        ),
        b'{"v":2,"type":"hello_ack","id":"i","ts":"t","agent":{"version":"v",'
        b'"approval_method":"shed-desktop"},"namespaces":["ssh-agent","aws-credentials",'
        b'"docker-credentials","egress"],"gate_namespaces":null,'
        b'"agent_capabilities":["credential.get"],"request_timeout_ms":1000,"accepted":true}\n',
    ),
    (
        ApprovalRequest(
            id="0190",
            ts="2026-07-10T00:00:00Z",
            namespace="ssh-agent",
            op="sign",
            shed="web",
            detail="SSH sign request",
            expires_at="2026-07-10T00:00:25Z",
        ),
        b'{"v":2,"type":"approval_request","id":"0190","ts":"2026-07-10T00:00:00Z",'
        b'"namespace":"ssh-agent","op":"sign","shed":"web","detail":"SSH sign request",'
        b'"expires_at":"2026-07-10T00:00:25Z"}\n',
    ),
    (
        ApprovalRequest(
            id="r",
            ts="t",
            namespace="aws-credentials",
            op="get_credentials",
            server="prod",
            shed="",
            detail="AWS credentials request",
            expires_at="e",
        ),
        b'{"v":2,"type":"approval_request","id":"r","ts":"t","namespace":"aws-credentials",'
        b'"op":"get_credentials","server":"prod","shed":"","detail":"AWS credentials request",'
        b'"expires_at":"e"}\n',
    ),
    (
        Event(
            id="e",
            ts="t",
            shed="web",
            ns="ssh-agent",
            op="sign",
            result="ok",
            detail="ssh-ed25519",
            approval="shed-desktop",
            decided_by="user",
        ),
        b'{"v":2,"type":"event","id":"e","ts":"t","kind":"audit","shed":"web","ns":"ssh-agent",'
        b'"op":"sign","result":"ok","detail":"ssh-ed25519","approval":"shed-desktop",'
        b'"decided_by":"user"}\n',
    ),
    (
        Event(id="e", ts="t", ns="egress", op="tcp", result="allow", detail="h:443 (1.2.3.4)"),
        b'{"v":2,"type":"event","id":"e","ts":"t","kind":"audit","ns":"egress","op":"tcp",'
        b'"result":"allow","detail":"h:443 (1.2.3.4)"}\n',
    ),
    (Ping(id="p", ts="t"), b'{"v":2,"type":"ping","id":"p","ts":"t"}\n'),
    (
        TokenResponse(
            id="r",
            ts="t",
            in_reply_to="q1",
            server="prod",
            token="tok",
            expires_at="2030-01-01T00:00:00Z",
        ),
        b'{"v":2,"type":"token.response","id":"r","ts":"t","in_reply_to":"q1","server":"prod",'
        b'"token":"tok","expires_at":"2030-01-01T00:00:00Z"}\n',
    ),
    (
        TokenResponse(
            id="r",
            ts="t",
            in_reply_to="q1",
            server="prod",
            error="control-token minting is not available",
        ),
        b'{"v":2,"type":"token.response","id":"r","ts":"t","in_reply_to":"q1","server":"prod",'
        b'"error":"control-token minting is not available"}\n',
    ),
    (
        Hello(id="h", ts="t", client=ClientInfo(name="shed-desktop", version="1.2.0", pid=4242)),
        b'{"v":2,"type":"hello","id":"h","ts":"t","client":{"name":"shed-desktop",'
        b'"version":"1.2.0","pid":4242},"capabilities":[],"replay_events":0}\n',
    ),
    (
        ApprovalResponse(
            id="x",
            ts="t",
            request_id="0190",
            decision="approve",
            decided_by="touchid",
            scope="per-session",
            ttl="1h",
        ),
        b'{"v":2,"type":"approval_response","id":"x","ts":"t","request_id":"0190",'
        b'"decision":"approve","decided_by":"touchid","scope":"per-session","ttl":"1h"}\n',
    ),
    (
        ApprovalResponse(id="x", ts="t", request_id="r", decision="deny"),
        b'{"v":2,"type":"approval_response","id":"x","ts":"t","request_id":"r","decision":"deny"}\n',
    ),
    (Pong(id="p", ts="t"), b'{"v":2,"type":"pong","id":"p","ts":"t"}\n'),
    (TokenGet(id="q1", server="prod"), b'{"v":2,"type":"token.get","id":"q1","server":"prod"}\n'),
    (
        CredentialGet(id="q1", server="prod", csr=""),
        b'{"v":2,"type":"credential.get","id":"q1","server":"prod"}\n',
    ),
]


@pytest.mark.parametrize(("frame", "wire"), EXACT, ids=lambda v: v.__class__.__name__)
def test_exact_bytes(frame: object, wire: bytes) -> None:
    assert encode_frame(frame) == wire  # type: ignore[arg-type]


@pytest.mark.parametrize(("frame", "wire"), EXACT, ids=lambda v: v.__class__.__name__)
def test_round_trip(frame: object, wire: bytes) -> None:
    decode = decode_agent_frame if type(frame).__name__ in _AGENT else decode_consumer_frame
    assert decode(wire[:-1]) == frame


_AGENT = {"HelloAck", "ApprovalRequest", "Event", "Ping", "TokenResponse", "CredentialResponse"}


def test_encode_rejects_non_frames() -> None:
    with pytest.raises(TypeError):
        encode_frame(ClientInfo())  # type: ignore[arg-type]


def test_minimal_hello_and_zero_fill() -> None:
    hello = decode_consumer_frame(b'{"type":"hello"}')
    assert hello == Hello()
    assert isinstance(hello, Hello)
    assert hello.client == ClientInfo(name="", version="", pid=0)
    assert hello.replay_events == 0


def test_inbound_v_is_ignored_and_unknown_fields_too() -> None:
    for v in (b'"v":1,', b'"v":"x",', b'"v":null,', b""):
        frame = decode_consumer_frame(b"{" + v + b'"type":"pong","future":{"a":[1]}}')
        assert frame == Pong()


def test_missing_decision_zero_fills_to_a_denial() -> None:
    frame = decode_consumer_frame(b'{"type":"approval_response","request_id":"r"}')
    assert isinstance(frame, ApprovalResponse)
    assert frame.decision == ""


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b'{"type":"nope"}', ErrorCode.UNKNOWN_TYPE),
        (b'{"type":"hello_ack"}', ErrorCode.UNKNOWN_TYPE),  # an agent frame sent to the agent
        (b"{", ErrorCode.MALFORMED_FRAME),
        (b"\xff", ErrorCode.MALFORMED_FRAME),
        (b"[]", ErrorCode.SCHEMA_VIOLATION),
        (b"{}", ErrorCode.SCHEMA_VIOLATION),
        (b'{"type":7}', ErrorCode.SCHEMA_VIOLATION),
        (b'{"type":"hello","replay_events":"10"}', ErrorCode.SCHEMA_VIOLATION),
    ],
)
def test_consumer_decode_errors(line: bytes, code: ErrorCode) -> None:
    with pytest.raises(RemoteProtocolError) as info:
        decode_consumer_frame(line)
    assert info.value.code is code


def test_schema_error_keeps_the_path() -> None:
    with pytest.raises(RemoteProtocolError) as info:
        decode_consumer_frame(b'{"type":"hello","client":{"pid":"x"}}')
    assert info.value.path == "$.client.pid"


def test_hello_ack_none_is_null_and_an_empty_tuple_is_a_list() -> None:
    assert b'"namespaces":null,"gate_namespaces":null' in encode_frame(HelloAck())
    ack = HelloAck(namespaces=(), gate_namespaces=())
    assert ack.namespaces == ()
    assert b'"namespaces":[],"gate_namespaces":[]' in encode_frame(ack)


@requires_shared
def test_hello_ack_fixture_vectors_decode_and_capability() -> None:
    data = golden("hello_ack.json")
    for vector in data["vectors"]:
        line = json.dumps(vector["frame"]).encode()
        ack = decode_agent_frame(line)
        assert isinstance(ack, HelloAck)
        expected = vector["expected_capability"] == "supported"
        assert ack.supports_credential_get is expected, vector["name"]


@requires_shared
def test_our_accepted_ack_matches_the_new_agent_vector_byte_for_byte() -> None:
    data = golden("hello_ack.json")
    vector = next(v for v in data["vectors"] if v["name"] == "new_agent_credential_get")
    ack = HelloAck.accepted_ack(
        id="a2",
        ts="2026-07-25T00:00:00Z",
        version="v0.8.0",
        gate_namespaces=("ssh-agent",),
        request_timeout_ms=25000,
    )
    # the fixture's key order is the agent's: compare the compact encodings
    assert encode_frame(ack) == json.dumps(vector["frame"], separators=(",", ":")).encode() + b"\n"


@requires_shared
def test_credential_get_vectors() -> None:
    data = golden("credential_get.json")
    for vector in data["vectors"]:
        request = vector["request"]
        frame = CredentialGet(id="q-1", server=request["server"], csr=request["csr"] or "")
        wire = json.loads(encode_frame(frame))
        assert sorted(wire) == sorted(vector["expected_keys"]), vector["name"]
        assert {k: v for k, v in wire.items() if k != "id"} == vector["expected_frame"]
        decoded = decode_consumer_frame(encode_frame(frame)[:-1])
        assert isinstance(decoded, CredentialGet)
        assert decoded.csr == (request["csr"] or "")


@requires_shared
def test_credential_response_agent_emitted_vectors_are_exact() -> None:
    data = golden("credential_response.json")
    emitted = [v for v in data["vectors"] if v.get("agent_emits")]
    assert len(emitted) == 4
    for vector in emitted:
        wire = json.dumps(vector["frame"], separators=(",", ":"), ensure_ascii=False).encode()
        frame = decode_agent_frame(wire)
        assert isinstance(frame, CredentialResponse)
        assert encode_frame(frame) == wire + b"\n", vector["name"]


@requires_shared
def test_credential_response_every_vector_decodes() -> None:
    data = golden("credential_response.json")
    for vector in data["vectors"]:
        frame = decode_agent_frame(json.dumps(vector["frame"]).encode())
        assert isinstance(frame, CredentialResponse)
        assert frame.in_reply_to == vector["frame"]["in_reply_to"]


def test_frames_are_frozen() -> None:
    with pytest.raises(AttributeError):
        Ping().id = "x"  # type: ignore[misc]
    assert msgspec.structs.asdict(Ping(id="a")) == {"id": "a", "ts": ""}


@requires_shared
def test_credential_response_arms_follow_the_fixture() -> None:
    from shedproto.host_agent import (
        CertificateCredential,
        CredentialRefused,
        TokenCredential,
        classify_credential,
    )

    data = golden("credential_response.json")
    for vector in data["vectors"]:
        frame_data = dict(vector["frame"])
        if "oversize_field" in vector:
            field = vector["oversize_field"]
            frame_data[field] = vector["oversize_char"] * (data["limits"][f"{field}_bytes"] + 1)
        frame = decode_agent_frame(json.dumps(frame_data).encode())
        assert isinstance(frame, CredentialResponse)
        arm = classify_credential(frame, server=data["server"])
        expected = vector["expected"]
        name = vector["name"]
        if expected["arm"] == "token":
            assert arm == TokenCredential(expected["token"], expected["expires_at_unix"]), name
        elif expected["arm"] == "certificate":
            assert arm == CertificateCredential(
                expected["cert_pem"], expected["serial"], expected["expires_at_unix"]
            ), name
        else:
            assert isinstance(arm, CredentialRefused), name
            assert expected["message_contains"] in arm.message, (name, arm.message)


@pytest.mark.parametrize(
    ("text", "unix"),
    [
        ("2099-01-02T15:04:05Z", 4071049445),
        ("1970-01-01T00:00:00Z", 0),
        ("1970-01-01T01:00:00+01:00", 0),
        ("1970-01-01T00:00:00.999Z", 0),
        ("2099-13-45T99:99:99Z", None),
        ("next tuesday", None),
        ("2099-01-02 15:04:05Z", None),
    ],
)
def test_parse_timestamp(text: str, unix: int | None) -> None:
    from shedproto.host_agent import parse_timestamp

    assert parse_timestamp(text) == unix
