"""Connection cores: pair tests, ordering, framing caps, chunking, fuzz."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shedproto import LocalProtocolError, RemoteProtocolError
from shedproto.desktop import (
    MAC_FRAME_CAP,
    TAURI_FRAME_CAP,
    Answer,
    ClientConnection,
    ConnectionEnded,
    ConnState,
    DesktopError,
    Dialect,
    EnvelopeRejection,
    Failure,
    Request,
    RequestReceived,
    RequestRejected,
    ServerConnection,
    parse_request,
    parse_response,
)
from tests._hypothesis import examples

from ._helpers import serve_bytes


@pytest.mark.parametrize("dialect", list(Dialect))
@pytest.mark.parametrize("chunk", [None, 1, 7])
def test_pair_client_to_server_and_back(dialect: Dialect, chunk: int | None) -> None:
    client = ClientConnection()
    server = ServerConnection(dialect)
    wire = b""
    sent = []
    for op, params in (
        ("ui.navigate", {"pane": "sheds"}),
        ("rc.list", None),
        ("sheds.list", {"host": "h"}),
    ):
        request_id, line = client.send_request(op, params)
        sent.append((request_id, op))
        wire += line
    pieces = [wire] if chunk is None else [wire[i : i + chunk] for i in range(0, len(wire), chunk)]
    events: list[Any] = []
    for piece in pieces:
        events += server.receive_data(piece)
    assert [(e.id, e.op) for e in events] == sent
    assert all(isinstance(e, RequestReceived) for e in events)
    assert server.owed == 3
    answers = b"".join(server.send(Answer(id=e.id, result={"n": i})) for i, e in enumerate(events))
    replies = client.receive_data(answers)
    assert [(r.request_id, r.op, r.result()) for r in replies] == [
        (rid, op, {"n": i}) for i, (rid, op) in enumerate(sent)
    ]
    assert client.pending == 0


def test_server_answers_strictly_in_order() -> None:
    server = ServerConnection(Dialect.MAC)
    events = server.receive_data(b'{"id":"1","op":"identify"}\n{"id":"2","op":"identify"}\n')
    assert len(events) == 2
    with pytest.raises(LocalProtocolError):
        server.send(Answer(id="2", result={}))
    assert server.owed == 2  # unchanged after the refusal
    server.send(Failure(id="1", code="internal", message="x"))
    server.send(Answer(id="2", result={}))
    with pytest.raises(LocalProtocolError):
        server.send(Answer(id="3", result={}))


def test_tauri_id_type_matters_for_ordering() -> None:
    server = ServerConnection(Dialect.TAURI)
    server.receive_data(b'{"id":1,"op":"identify"}\n')
    with pytest.raises(LocalProtocolError):
        server.send(Answer(id=True, result={}))
    assert server.send(Answer(id=1, result={})) == b'{"id":1,"ok":true,"result":{}}\n'


def test_mac_over_cap_closes_without_reply_after_earlier_answers() -> None:
    good = b'{"id":"1","op":"ui.show_window"}\n'
    data = good + b"x" * (MAC_FRAME_CAP + 1) + b"\n" + good
    out = serve_bytes(Dialect.MAC, data, result={})
    assert out == b'{"id":"1","ok":true,"result":{}}\n'


def test_mac_exact_cap_is_accepted() -> None:
    server = ServerConnection(Dialect.MAC)
    line = b'{"id":"1","op":"ui.show_window","params":{"pad":"'
    line += b"a" * (MAC_FRAME_CAP - len(line) - 3) + b'"}}'
    assert len(line) == MAC_FRAME_CAP
    events = server.receive_data(line + b"\n")
    assert isinstance(events[0], RequestRejected)
    assert events[0].code == "unknown-field"
    assert server.state is ConnState.OPEN


def test_tauri_over_cap_sends_one_idless_line_then_closes() -> None:
    good = b'{"id":1,"op":"ui.show_window"}\n'
    server = ServerConnection(Dialect.TAURI)
    events = server.receive_data(good + b"y" * (TAURI_FRAME_CAP + 1))  # no newline needed
    assert isinstance(events[0], RequestReceived)
    end = events[-1]
    assert isinstance(end, ConnectionEnded)
    assert end.reason == "frame_too_large"
    assert end.reply == (
        b'{"error":{"code":"frame_too_large","message":"request exceeds 1 MiB"},"ok":false}\n'
    )
    assert server.state is ConnState.CLOSED
    assert server.send(Answer(id=1, result={})).startswith(b'{"id":1')  # owed answers still go out
    with pytest.raises(LocalProtocolError):
        server.receive_data(b"more")


def test_tauri_exact_cap_is_accepted_and_tail_processed_at_eof() -> None:
    line = b'{"id":1,"op":"ui.show_window","pad":"'
    line += b"b" * (TAURI_FRAME_CAP - len(line) - 2) + b'"}'
    assert len(line) == TAURI_FRAME_CAP
    assert serve_bytes(Dialect.TAURI, line, result={}) == b'{"id":1,"ok":true,"result":{}}\n'


def test_mac_drops_unterminated_tail_at_eof() -> None:
    assert serve_bytes(Dialect.MAC, b'{"id":"1","op":"ui.show_window"}', result={}) == b""


def test_client_pairs_idless_reply_with_oldest_request() -> None:
    client = ClientConnection()
    client.send_request("identify")
    (reply,) = client.receive_data(b'{"error":{"code":"bad_request","message":"m"},"ok":false}\n')
    assert reply.request_id == "1"
    assert not reply.ok
    with pytest.raises(DesktopError) as info:
        reply.result()
    assert info.value.code == "bad_request"
    assert info.value.request_id is None


def test_client_rejects_stray_and_mismatched_replies() -> None:
    client = ClientConnection()
    with pytest.raises(RemoteProtocolError):
        client.receive_data(b'{"id":"1","ok":true,"result":{}}\n')
    client = ClientConnection()
    client.send_request("identify")
    with pytest.raises(RemoteProtocolError):
        client.receive_data(b'{"id":"9","ok":true,"result":{}}\n')
    client = ClientConnection()
    client.send_request("identify")
    with pytest.raises(RemoteProtocolError) as info:
        client.receive_data(b"")
    assert info.value.code.value == "connection_closed"


def test_client_null_result_reads_as_empty_object() -> None:
    client = ClientConnection()
    client.send_request("ui.show_window")
    (reply,) = client.receive_data(b'{"id":"1","ok":true,"result":null}\n')
    assert reply.result() == {}


@pytest.mark.parametrize(
    "line",
    [
        b"nope",
        b"[]",
        b'{"ok":"yes"}',
        b'{"ok":false}',
        b'{"ok":false,"error":{"code":1}}',
        b"[" * 100_000,
    ],
)
def test_parse_response_rejects_non_responses(line: bytes) -> None:
    with pytest.raises(RemoteProtocolError):
        parse_response(line)


def test_deep_nesting_is_a_parse_error_not_a_crash() -> None:
    deep = b"[" * 200_000
    assert serve_bytes(Dialect.MAC, deep + b"\n").startswith(b'{"id":"0","ok":false')
    assert serve_bytes(Dialect.TAURI, deep + b"\n").startswith(b'{"error":{"code":"bad_request"')


@pytest.mark.parametrize("dialect", list(Dialect))
@settings(max_examples=examples(150), deadline=None)
@given(data=st.binary(max_size=300), cut=st.integers(min_value=1, max_value=17))
def test_fuzz_server_core_never_raises(dialect: Dialect, data: bytes, cut: int) -> None:
    whole = serve_bytes(dialect, data)
    chunked = serve_bytes(dialect, data, chunk=cut)
    assert whole == chunked
    for line in whole.splitlines():
        parse_response(line)  # every reply is a well-formed response


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


@pytest.mark.parametrize("dialect", list(Dialect))
@settings(max_examples=examples(150), deadline=None)
@given(
    request_id=json_values,
    op=st.sampled_from(["identify", "shed.start", "craze.create", "policy.set", "x", "roost.run"]),
    params=json_values,
)
def test_fuzz_structured_requests_get_exactly_one_answer(
    dialect: Dialect, request_id: Any, op: str, params: Any
) -> None:
    import msgspec

    line = msgspec.json.encode({"id": request_id, "op": op, "params": params})
    parsed = parse_request(dialect, line)
    out = serve_bytes(dialect, line + b"\n")
    assert out.count(b"\n") == 1
    response = parse_response(out[:-1])
    if dialect is Dialect.TAURI:
        assert response.id == request_id
    elif parsed is not None and not hasattr(parsed, "reply"):
        assert isinstance(response.id, str)


@given(data=st.binary(max_size=200))
@settings(max_examples=examples(200), deadline=None)
def test_fuzz_client_core(data: bytes) -> None:
    client = ClientConnection()
    client.send_request("identify")
    try:
        client.receive_data(data)
        client.receive_data(b"")
    except RemoteProtocolError:
        pass


def test_core_imports_without_io_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = ("socket", "asyncio", "anyio", "threading", "subprocess", "selectors", "trio")
    for name in list(sys.modules):
        if name.startswith("shedproto") and not name.startswith(
            ("shedproto.servers", "shedproto.clients", "shedproto.testing")
        ):
            monkeypatch.delitem(sys.modules, name)
    for name in blocked:
        monkeypatch.setitem(sys.modules, name, None)
    module = importlib.import_module("shedproto.desktop")
    assert module.ServerConnection is not None


@pytest.mark.parametrize("dialect", list(Dialect))
def test_trailing_partial_line_waits_for_more(dialect: Dialect) -> None:
    good = b'{"id":"1","op":"ui.show_window"}\n'
    tail = b'{"id":"2","op":"ui.sh'
    out = serve_bytes(dialect, good + tail, result={}, eof=False)
    assert out.count(b"\n") == 1
    conn = ServerConnection(dialect)
    events = conn.receive_data(good + tail)
    assert len(events) == 1
    events = conn.receive_data(b'ow_window"}\n')
    assert isinstance(events[0], RequestReceived)
    assert events[0].id == "2"


def _reference_tauri(line: bytes) -> tuple[Any, str, Any] | None:
    """The Rust reader, spelled out over a plain dict (the fast path must agree)."""
    import msgspec

    text = line.decode("utf-8", "replace").strip(
        "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
        "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
    )
    if not text:
        return None
    try:
        obj = msgspec.json.decode(text.encode())
    except (msgspec.DecodeError, RecursionError):
        return ("<bad json>", "", None)
    if not isinstance(obj, dict):
        return (None, "", {})
    op = obj.get("op")
    return (obj.get("id"), op if isinstance(op, str) else "", obj.get("params", {}))


def _reference_mac_ok(line: bytes) -> tuple[str, str, Any] | None:
    import msgspec

    try:
        obj = msgspec.json.decode(line)
    except (msgspec.DecodeError, RecursionError):
        return None
    if not isinstance(obj, dict) or set(obj) - {"id", "op", "params"}:
        return None
    raw_id, op = obj.get("id"), obj.get("op")
    if not isinstance(raw_id, str) or not isinstance(op, str):
        return None
    from shedproto.desktop import canonical_mac_id

    request_id = canonical_mac_id(raw_id)
    if request_id is None:
        return None
    params = obj.get("params")
    return (request_id, op, {} if params is None else params)


envelopes = (
    st.dictionaries(st.sampled_from(["id", "op", "params", "extra"]), json_values, max_size=4)
    | json_values
)


@settings(max_examples=examples(300), deadline=None)
@given(value=envelopes, pad=st.sampled_from([b"", b" ", b"\t", b"\r", "\u00a0".encode()]))
def test_fast_envelope_paths_agree_with_the_plain_reading(value: Any, pad: bytes) -> None:
    import msgspec

    line = pad + msgspec.json.encode(value) + pad
    tauri = parse_request(Dialect.TAURI, line)
    expected = _reference_tauri(line)
    if expected is None:
        assert tauri is None
    elif expected[0] == "<bad json>":
        assert isinstance(tauri, EnvelopeRejection)
    else:
        assert isinstance(tauri, Request)
        assert (tauri.id, tauri.op, tauri.params) == expected
    mac = parse_request(Dialect.MAC, msgspec.json.encode(value))
    mac_expected = _reference_mac_ok(msgspec.json.encode(value))
    if mac_expected is None:
        assert isinstance(mac, EnvelopeRejection)
    else:
        assert isinstance(mac, Request)
        assert (mac.id, mac.op, mac.params) == mac_expected


def test_client_reply_before_a_bad_line_in_one_chunk_is_not_lost() -> None:
    """Regression (issue 13): a good reply and a bad line in one chunk lost the reply.

    The reply was popped from the pending requests, then the error was raised,
    so the caller never saw it (pending 2 -> 1, nothing returned).
    """
    client = ClientConnection()
    client.send_request("identify")
    client.send_request("ui.show_window")
    (reply,) = client.receive_data(b'{"id":"1","ok":true,"result":{"v":1}}\nnot json\n')
    assert (reply.request_id, reply.result()) == ("1", {"v": 1})
    assert client.pending == 1
    with pytest.raises(RemoteProtocolError) as info:  # the error comes after the good reply
        client.receive_data(b"")
    assert info.value.code.value == "malformed_frame"
    with pytest.raises(LocalProtocolError):  # sticky: the connection is over
        client.receive_data(b"")


_PIPELINE = b'nope\n{"id":1,"op":"ui.show_window"}\nnope\n{"id":2,"op":"ui.show_window"}\n'


def test_server_error_lines_wait_in_the_outbox_behind_owed_answers() -> None:
    server = ServerConnection(Dialect.TAURI)
    events = server.receive_data(_PIPELINE)
    kinds = [type(e) for e in events]
    assert kinds == [RequestRejected, RequestReceived, RequestRejected, RequestReceived]
    wire = bytearray()
    for event in events:  # the shell: due lines after each event, answers in order
        wire += server.data_to_send()
        if isinstance(event, RequestReceived):
            wire += server.send(Answer(id=event.id, result={}))
    wire += server.data_to_send()
    rejected = [e.reply for e in events if isinstance(e, RequestRejected)]
    assert bytes(wire) == (
        rejected[0]
        + b'{"id":1,"ok":true,"result":{}}\n'
        + rejected[1]
        + b'{"id":2,"ok":true,"result":{}}\n'
    )
    assert bytes(wire) == serve_bytes(Dialect.TAURI, _PIPELINE, result={}, eof=False)
