"""Redaction fails closed: no secret reaches a cassette, whatever else is wrong with the frame.

Regression for issue 27 item 1: a host-agent ``token.response`` whose
``expires_at`` had the wrong type was recorded with its token in clear,
because redaction ran on the typed decode and returned the line unchanged
when that failed. Each redacted field is checked with a frame that fails
validation in another field, split across writes, as a non-JSON line and as
a tail cut off by the end of the stream; a fuzz test then checks that no
secret of the corpus ever appears in a cassette.
"""

from __future__ import annotations

import base64
import itertools
from pathlib import Path
from typing import NamedTuple

import msgspec
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from shedproto.clients.proxy import Recorder
from shedproto.host_agent import TokenResponse, decode_agent_frame, encode_frame
from shedproto.observe import (
    REDACTED,
    CassetteHeader,
    CassetteRecord,
    Direction,
    decode_cassette,
    redact,
)
from tests._hypothesis import examples

SECRET = "sk-live-Zq81secretvalue"


def _obj(value: object) -> bytes:
    return msgspec.json.encode(value) + b"\n"


class Field(NamedTuple):
    """A secret field: a valid frame with SECRET in it, its path, a frame bad in another field."""

    protocol: str
    direction: Direction
    good: bytes
    path: str
    bad: bytes


_ROWS: list[tuple[str, Direction, bytes, str, bytes]] = [
    (
        "host-agent", "s2c",
        _obj({"v": 2, "type": "token.response", "id": "a1", "ts": "t", "in_reply_to": "t1",
              "server": "web", "token": SECRET, "expires_at": "2030-01-01T00:00:00Z"}),
        "$.token",
        # the issue's frame: expires_at as an integer fails the typed decode
        _obj({"v": 2, "type": "token.response", "id": "a1", "ts": "t", "in_reply_to": "t1",
              "server": "web", "token": SECRET, "expires_at": 1893456000}),
    ),
    (
        "host-agent", "s2c",
        _obj({"v": 2, "type": "credential.response", "id": "a2", "ts": "t", "in_reply_to": "c1",
              "server": "web", "auth_mode": "token", "token": SECRET}),
        "$.token",
        _obj({"v": 2, "type": "credential.response", "id": "a2", "ts": "t", "in_reply_to": 7,
              "server": "web", "auth_mode": "token", "token": SECRET}),
    ),
    (
        "host-agent", "s2c",
        _obj({"type": "credential.response", "id": "a3", "ts": "t", "in_reply_to": "c1",
              "server": "web", "auth_mode": "mtls", "client_cert": SECRET,
              "cert_serial": "01"}),
        "$.client_cert",
        _obj({"type": "credential.response", "id": "a3", "ts": "t", "in_reply_to": "c1",
              "server": ["web"], "auth_mode": "mtls", "client_cert": SECRET}),
    ),
    (
        "agents-host", "c2s",
        _obj({"id": 1, "op": "submit", "command": {"payload": {"env": {"API_KEY": SECRET}}}}),
        "$.command.payload.env.API_KEY",
        _obj({"id": 1, "op": "submit", "wait": "yes",
              "command": {"payload": {"env": {"API_KEY": SECRET}}}}),
    ),
    (
        "agents-host", "c2s",
        _obj({"id": 2, "op": "submit",
              "command": msgspec.json.encode({"env": {"API_KEY": SECRET}}).decode()}),
        "$.command.env.API_KEY",
        _obj({"id": 2, "op": "sbumit",
              "command": msgspec.json.encode({"env": {"API_KEY": SECRET}}).decode()}),
    ),
    (
        "herdr", "c2s",
        _obj({"id": "h1", "method": "workspace.create", "params": {"env": {"TOKEN": SECRET}}}),
        "$.params.env.TOKEN",
        _obj({"id": "h1", "method": "workspace.create",
              "params": {"env": {"TOKEN": SECRET}, "focus": "no"}}),
    ),
    (
        "herdr", "c2s",
        _obj({"id": "h2", "method": "pane.split",
              "params": {"direction": "right", "env": {"TOKEN": SECRET}}}),
        "$.params.env.TOKEN",
        _obj({"id": "h2", "method": "pane.split",
              "params": {"direction": "sideways", "env": {"TOKEN": SECRET}}}),
    ),
    # herdr answers echo env: a layout's panes (PaneLayoutNode.env in shedproto/herdr/types.py)
    (
        "herdr", "s2c",
        _obj({"id": "h3", "result": {"type": "layout_export", "layout": {
            "type": "pane", "cwd": "/w", "env": {"TOKEN": SECRET}}}}),
        "$.result.layout.env.TOKEN",
        _obj({"id": "h3", "result": {"type": "layout_export", "layout": {
            "type": "pane", "cwd": 7, "env": {"TOKEN": SECRET}}}}),
    ),
    (
        "herdr", "s2c",
        _obj({"event": "layout_updated", "data": {"type": "layout_updated", "layout": {
            "type": "split", "children": [{"type": "pane", "env": {"TOKEN": SECRET}}]}}}),
        "$.data.layout.children[0].env.TOKEN",
        _obj({"event": "layout_updated", "data": {"type": "layout_updated", "layout": {
            "type": "split", "ratio": "half",
            "children": [{"type": "pane", "env": {"TOKEN": SECRET}}]}}}),
    ),
]  # fmt: skip
FIELDS = [Field(*row) for row in _ROWS]
IDS = [f"{field.protocol}-{field.path}-{index}" for index, field in enumerate(FIELDS)]


def record(
    tmp_path: Path, protocol: str, chunks: list[tuple[Direction, bytes]], *, close: bool = True
) -> tuple[bytes, list[CassetteRecord]]:
    """Record ``chunks`` on one connection; return the cassette file and its records."""
    path = tmp_path / f"{protocol}.ndjson"
    recorder = Recorder(path, CassetteHeader(protocol=protocol), overwrite=True)
    recorder.event(0.0, 1, "open")
    for direction, data in chunks:
        recorder.data(0.1, 1, direction, data)
    if close:
        recorder.event(0.2, 1, "close")
    recorder.close()
    data = path.read_bytes()
    return data, decode_cassette(data)[1]


def assert_no_secret(cassette: bytes, secret: str = SECRET) -> None:
    assert secret.encode() not in cassette
    for line in cassette.splitlines():  # nor inside a base64 record
        value = msgspec.json.decode(line)
        if isinstance(value, dict) and "b64" in value:
            assert secret.encode() not in base64.b64decode(value["b64"])


@pytest.mark.parametrize("field", FIELDS, ids=IDS)
def test_a_valid_frame_is_redacted_at_its_path(
    field: Field,
) -> None:
    protocol, direction, good, path, _ = field
    result = redact(protocol, direction, good)
    assert SECRET not in result.line.decode()
    assert result.paths == (path,)
    assert result.withheld is None
    assert result.line.endswith(b"\n")


@pytest.mark.parametrize("field", FIELDS, ids=IDS)
def test_a_frame_failing_validation_elsewhere_is_still_redacted(
    field: Field, tmp_path: Path
) -> None:
    protocol, direction, _good, path, bad = field
    cassette, records = record(tmp_path, protocol, [(direction, bad)])
    assert_no_secret(cassette)
    (data,) = [r for r in records if r.ev == "data"]
    assert data.redacted == (path,)
    assert data.withheld is None
    # only the secret changed: the field that failed validation is recorded as it was
    assert data.data == bad.replace(SECRET.encode(), REDACTED.encode())


@pytest.mark.parametrize("field", FIELDS, ids=IDS)
def test_a_frame_split_across_writes_is_redacted(
    field: Field, tmp_path: Path
) -> None:
    protocol, direction, good, path, bad = field
    middle = bad.index(SECRET.encode()) + len(SECRET) // 2  # cut inside the secret
    chunks: list[tuple[Direction, bytes]] = [
        (direction, bad[:middle]),
        (direction, bad[middle : middle + 3]),
        (direction, bad[middle + 3 :] + good[:5]),
        (direction, good[5:]),
    ]
    cassette, records = record(tmp_path, protocol, chunks)
    assert_no_secret(cassette)
    assert SECRET[: len(SECRET) // 2].encode() not in cassette
    assert [r.redacted for r in records if r.ev == "data"] == [(path,), (path,)]


@pytest.mark.parametrize("field", FIELDS, ids=IDS)
def test_a_line_that_is_not_json_is_withheld_whole(
    field: Field, tmp_path: Path
) -> None:
    protocol, direction, good, path, bad = field
    broken = bad.replace(b"{", b"{{", 1)
    cassette, records = record(tmp_path, protocol, [(direction, broken), (direction, good)])
    assert_no_secret(cassette)
    withheld, kept = [r for r in records if r.ev == "data"]
    assert (withheld.data, withheld.redacted) == (b"REDACTED\n", ("$",))
    assert withheld.withheld is not None
    assert "not JSON" in withheld.withheld
    assert f"{len(broken) - 1} bytes" in withheld.withheld
    assert kept.redacted == (path,)


@pytest.mark.parametrize("field", FIELDS, ids=IDS)
def test_a_tail_cut_off_by_the_end_of_the_stream_is_withheld(
    field: Field, tmp_path: Path
) -> None:
    protocol, direction, good, _path, _bad = field
    cut = good[: good.index(SECRET.encode()) + len(SECRET)]  # the secret, then the stream ends
    cassette, records = record(tmp_path, protocol, [(direction, cut)])
    assert_no_secret(cassette)
    (withheld,) = [r for r in records if r.ev == "data"]
    assert (withheld.data, withheld.redacted) == (b"REDACTED", ("$",))
    assert withheld.withheld is not None
    assert "partial line" in withheld.withheld


def test_a_line_that_is_not_utf8_is_withheld(tmp_path: Path) -> None:
    line = b'{"type":"token.response","token":"' + SECRET.encode() + b'\xff"}\n'
    cassette, records = record(tmp_path, "host-agent", [("s2c", line)])
    assert_no_secret(cassette)
    assert [r.redacted for r in records if r.ev == "data"] == [("$",)]


def test_a_secret_in_a_frame_of_an_unknown_type_or_nested_is_redacted() -> None:
    line = _obj({"type": "token.respons", "data": [{"token": SECRET}], "client_cert": SECRET})
    result = redact("host-agent", "s2c", line)
    assert SECRET not in result.line.decode()
    assert result.paths == ("$.data[0].token", "$.client_cert")


def test_an_unknown_field_of_a_credential_answer_is_redacted() -> None:
    """A misspelt or new field of a credential answer may hold the secret: an allowlist."""
    line = _obj(
        {"type": "credential.response", "in_reply_to": "c1", "server": "web", "Token": SECRET,
         "client_key": SECRET, "error": "", "expires_at": 5}
    )  # fmt: skip
    result = redact("host-agent", "s2c", line)
    assert SECRET not in result.line.decode()
    assert result.paths == ("$.Token", "$.client_key")
    assert msgspec.json.decode(result.line)["expires_at"] == 5  # known fields are kept


def test_a_type_that_is_not_a_string_never_breaks_redaction() -> None:
    """Regression (found by the fuzz test): an unhashable ``type`` raised TypeError."""
    result = redact("host-agent", "s2c", _obj({"type": [], "token": SECRET}))
    assert result.paths == ("$.token",)


def test_an_env_of_the_wrong_type_is_redacted_whole() -> None:
    line = _obj({"id": 1, "op": "submit", "command": {"env": [f"API_KEY={SECRET}"]}})
    result = redact("agents-host", "c2s", line)
    assert SECRET not in result.line.decode()
    assert result.paths == ("$.command.env",)


def test_a_command_string_that_is_not_json_but_may_hold_env_is_redacted() -> None:
    command = '{"env":{"API_KEY":"' + SECRET + '"'  # truncated inside the string
    result = redact("agents-host", "c2s", _obj({"id": 1, "op": "submit", "command": command}))
    assert SECRET not in result.line.decode()
    assert result.paths == ("$.command",)


def test_a_redacted_valid_frame_still_decodes_with_the_core() -> None:
    good = FIELDS[0][2]
    frame = decode_agent_frame(redact("host-agent", "s2c", good).line.rstrip(b"\n"))
    assert isinstance(frame, TokenResponse)
    assert (frame.token, frame.in_reply_to, frame.expires_at) == (
        REDACTED,
        "t1",
        "2030-01-01T00:00:00Z",
    )


def test_directions_without_secrets_and_blank_lines_are_untouched() -> None:
    line = encode_frame(TokenResponse(in_reply_to="t1", server="web", token=SECRET))
    assert redact("host-agent", "c2s", line) == (line, (), None)
    assert redact("desktop", "s2c", b"{not json\n") == (b"{not json\n", (), None)
    assert redact("host-agent", "s2c", b"  \n") == (b"  \n", (), None)
    empty = _obj({"type": "token.response", "in_reply_to": "t1", "token": "", "error": "denied"})
    assert redact("host-agent", "s2c", empty) == (empty, (), None)


# ------------------------------------------------------------------ fuzz

_secrets = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=12, max_size=24).map(
    lambda tail: "SECRET" + tail
)
_junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=2),
)


@st.composite
def _frame(draw: st.DrawFn) -> tuple[str, Direction, bytes, str]:
    """A frame of the corpus, its secret, and any other field replaced by junk."""
    protocol, direction, good, path, _ = draw(st.sampled_from(FIELDS))
    secret = draw(_secrets)
    value = msgspec.json.decode(
        good.replace(SECRET.encode(), secret.encode()), type=dict[str, object]
    )
    others = sorted(key for key in value if secret.encode() not in msgspec.json.encode(value[key]))
    spoil: bool = draw(st.booleans())
    if others and spoil:  # a wrong type or value in some other field
        value[draw(st.sampled_from(others))] = draw(_junk)
    line = msgspec.json.encode(value) + draw(st.sampled_from([b"\n", b"\r\n"]))
    mangle = draw(st.sampled_from(["none", "truncate", "garble", "prefix"]))
    if mangle == "truncate":
        line = line[: draw(st.integers(1, len(line) - 1))]
    elif mangle == "garble":
        at = draw(st.integers(0, len(line) - 1))
        line = line[:at] + draw(st.binary(min_size=1, max_size=3)) + line[at:]
        # a garble that leaves valid JSON must leave the secret in its field: one that
        # renames the field (`"e nv"`) makes a frame without that secret field at all
        assume(_holds_or_unreadable(line, path, secret))
    elif mangle == "prefix":
        line = draw(st.binary(max_size=4)) + line
    return protocol, direction, line, secret


def _holds_or_unreadable(line: bytes, path: str, secret: str) -> bool:
    """Whether ``line`` is not JSON, or holds ``secret`` at ``path`` (JSON strings entered)."""
    try:
        value: object = msgspec.json.decode(line)
    except msgspec.DecodeError:
        return True
    for key in path.split(".")[1:]:
        if isinstance(value, str):
            try:
                value = msgspec.json.decode(value)
            except msgspec.DecodeError:
                return False
        if not isinstance(value, dict) or key not in value:
            return False
        value = value[key]
    return value == secret


@settings(
    max_examples=examples(300),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    frames=st.lists(_frame(), min_size=1, max_size=4),
    cuts=st.lists(st.integers(0, 400), max_size=6),
)
def test_fuzz_no_secret_of_the_corpus_ever_reaches_a_cassette(
    frames: list[tuple[str, Direction, bytes, str]], cuts: list[int], tmp_path: Path
) -> None:
    protocol, direction = frames[0][0], frames[0][1]
    stream = b"".join(line for p, d, line, _ in frames if (p, d) == (protocol, direction))
    secrets = [secret for p, d, line, secret in frames if (p, d) == (protocol, direction)]
    points = sorted({0, len(stream), *(cut for cut in cuts if cut < len(stream))})
    chunks: list[tuple[Direction, bytes]] = [
        (direction, stream[a:b]) for a, b in itertools.pairwise(points)
    ]
    cassette, _ = record(tmp_path, protocol, chunks)
    for secret in secrets:
        assert_no_secret(cassette, secret)


async def test_proxy_records_the_issue_frame_without_its_token(short_socket_dir: Path) -> None:
    """End to end: the agent answers with a bad ``expires_at``; the client gets it as sent."""
    import anyio
    import anyio.abc

    from shedproto.servers import UnixServer

    from ._helpers import proxied

    bad = FIELDS[0][4]

    async def agent(stream: anyio.abc.SocketStream) -> None:
        await stream.send(bad[:40])
        await stream.send(bad[40:])
        await stream.send_eof()

    cassette = short_socket_dir / "c.ndjson"
    async with anyio.create_task_group() as tasks:
        upstream = UnixServer(short_socket_dir / "agent.sock", agent)
        agent_path = await tasks.start(upstream.serve)
        listen = short_socket_dir / "p.sock"
        async with proxied(listen, agent_path, "host-agent", record=cassette) as run:
            received = await _read_all(run.path)
        upstream.shutdown()
    assert received == bad  # relayed unchanged
    assert [d.kind for d in run.diagnostics] == ["schema"]
    assert_no_secret(cassette.read_bytes())
    (data,) = [r for r in decode_cassette(cassette.read_bytes())[1] if r.ev == "data"]
    assert data.redacted == ("$.token",)


async def _read_all(path: Path) -> bytes:
    import anyio

    received = b""
    with anyio.fail_after(10):
        async with await anyio.connect_unix(path) as stream:
            while True:
                try:
                    received += await stream.receive()
                except anyio.EndOfStream:
                    return received
