"""Envelope rules of both dialects, pinned byte for byte."""

from __future__ import annotations

import pytest
from syrupy.assertion import SnapshotAssertion

from shedproto.desktop import (
    Dialect,
    canonical_mac_id,
    parse_request,
    render_error,
    render_ok,
)

from ._helpers import serve_bytes

MAC = Dialect.MAC
TAURI = Dialect.TAURI

# (name, dialect, request line(s), test_mode)
CASES: list[tuple[str, Dialect, bytes, bool]] = [
    ("mac-ok", MAC, b'{"id":"1","op":"ui.show_window","params":{}}\n', False),
    ("mac-id-rerendered-007", MAC, b'{"id":"007","op":"ui.show_window"}\n', False),
    ("mac-id-plus", MAC, b'{"id":"+5","op":"ui.show_window","params":null}\n', False),
    ("mac-id-negative", MAC, b'{"id":"-7","op":"ui.show_window"}\n', False),
    ("mac-id-number", MAC, b'{"id":1,"op":"ui.show_window"}\n', False),
    ("mac-id-space", MAC, b'{"id":" 1","op":"ui.show_window"}\n', False),
    ("mac-id-float", MAC, b'{"id":"1.0","op":"ui.show_window"}\n', False),
    ("mac-id-overflow", MAC, b'{"id":"9223372036854775808","op":"ui.show_window"}\n', False),
    ("mac-id-missing", MAC, b'{"op":"ui.show_window"}\n', False),
    (
        "mac-unknown-top-level",
        MAC,
        b'{"id":"1","op":"ui.show_window","zeta":1,"extra":true}\n',
        False,
    ),
    ("mac-bad-json", MAC, b"{nope\n", False),
    ("mac-empty-line", MAC, b"\n", False),
    ("mac-not-object", MAC, b"[1]\n", False),
    ("mac-op-missing", MAC, b'{"id":"1"}\n', False),
    ("mac-op-not-string", MAC, b'{"id":"1","op":3}\n', False),
    ("mac-unknown-op", MAC, b'{"id":"2","op":"rc.classify","params":{}}\n', False),
    (
        "mac-unknown-params",
        MAC,
        b'{"id":"3","op":"shed.start","params":{"name":"a","b":1,"a":2}}\n',
        False,
    ),
    ("mac-missing-param", MAC, b'{"id":"4","op":"shed.start","params":{}}\n', False),
    ("mac-wrong-type", MAC, b'{"id":"5","op":"shed.start","params":{"name":7}}\n', False),
    ("mac-params-array", MAC, b'{"id":"6","op":"shed.start","params":[1]}\n', False),
    (
        "mac-permission-mode",
        MAC,
        b'{"id":"7","op":"rc.launch","params":{"shed":"s","permission_mode":"x"}}\n',
        False,
    ),
    ("mac-gate", MAC, b'{"id":"8","op":"policy.set","params":{"rules":[]}}\n', False),
    # mac policy.set reads its params before the gate
    # (IPCHandlerImpl.swift:146-149,289-294@5a762e8, policySetOp)
    ("mac-params-before-gate", MAC, b'{"id":"9","op":"policy.set","params":{"bogus":1}}\n', False),
    ("mac-refused-in-test", MAC, b'{"id":"10","op":"terminal.open","params":{"shed":"s"}}\n', True),
    ("mac-slash-escaped", MAC, b'{"id":"11","op":"no/such/op"}\n', False),
    ("tauri-ok", TAURI, b'{"id":"1","op":"ui.show_window","params":{}}\n', False),
    ("tauri-id-number", TAURI, b'{"id":1,"op":"ui.show_window"}\n', False),
    ("tauri-id-object", TAURI, b'{"id":{"b":1,"a":[true]},"op":"ui.show_window"}\n', False),
    ("tauri-id-absent", TAURI, b'{"op":"ui.show_window"}\n', False),
    ("tauri-unknown-fields", TAURI, b'{"id":"2","op":"ui.show_window","extra":true}\n', False),
    ("tauri-bad-json", TAURI, b"{nope\n", False),
    ("tauri-not-object", TAURI, b"[1]\n", False),
    ("tauri-op-not-string", TAURI, b'{"id":"3","op":5}\n', False),
    ("tauri-unknown-op", TAURI, b'{"id":"4","op":"rc.classify"}\n', False),
    ("tauri-missing-param", TAURI, b'{"id":"5","op":"shed.start","params":{}}\n', False),
    (
        "tauri-required-wrong-type",
        TAURI,
        b'{"id":"6","op":"shed.start","params":{"name":7}}\n',
        False,
    ),
    (
        "tauri-unknown-params-ignored",
        TAURI,
        b'{"id":"7","op":"shed.start","params":{"name":"a","zz":1}}\n',
        False,
    ),
    ("tauri-params-array", TAURI, b'{"id":"8","op":"shed.start","params":[1]}\n', False),
    ("tauri-whitespace-line", TAURI, b"  \t \r\n", False),
    ("tauri-gate", TAURI, b'{"id":"9","op":"ui.show_roost_consent","params":{}}\n', False),
    (
        "tauri-gate-open-params",
        TAURI,
        b'{"id":"9","op":"ui.show_roost_consent","params":{}}\n',
        True,
    ),
    (
        "tauri-strict-optional",
        TAURI,
        b'{"id":"10","op":"craze.create","params":{"machine":"m","cwd":7}}\n',
        False,
    ),
    (
        "tauri-serde-typed",
        TAURI,
        b'{"id":"11","op":"approval.decide","params":{"id":1,"decision":"approve"}}\n',
        False,
    ),
    (
        "tauri-serde-missing",
        TAURI,
        b'{"id":"12","op":"approval.decide","params":{"decision":"approve"}}\n',
        False,
    ),
    (
        "tauri-kind-read-after-the-host",  # by the op (ipc.rs:1828-1843@2cd01ef)
        TAURI,
        b'{"id":"13","op":"rc.launch","params":{"shed":"web"}}\n',
        False,
    ),
    (
        "tauri-terminal-open-test",
        TAURI,
        b'{"id":"14","op":"terminal.open","params":{"shed":"web"}}\n',
        True,
    ),
    (
        "tauri-terminal-machine-first",
        TAURI,
        b'{"id":"15","op":"terminal.open","params":{"shed":"s","machine":"m"}}\n',
        True,
    ),
    (
        "tauri-terminal-test",
        TAURI,
        b'{"id":"16","op":"terminal.open","params":{"shed":"s"}}\n',
        True,
    ),
    ("tauri-slash-plain", TAURI, b'{"id":"17","op":"no/such/op"}\n', False),
    ("tauri-lossy-utf8", TAURI, b'{"id":"\xff","op":"ui.show_window"}\n', False),
]


@pytest.mark.parametrize(("name", "dialect", "line", "test_mode"), CASES, ids=[c[0] for c in CASES])
def test_envelope_rule_bytes(
    name: str, dialect: Dialect, line: bytes, test_mode: bool, snapshot: SnapshotAssertion
) -> None:
    reply = serve_bytes(dialect, line, test_mode=test_mode)
    assert reply == snapshot
    # feeding one byte at a time and with trailing bytes changes nothing
    assert serve_bytes(dialect, line, test_mode=test_mode, chunk=1) == reply


EXACT: list[tuple[Dialect, bytes, bytes]] = [
    (MAC, b'{"id":"007","op":"ui.show_window"}', b'{"id":"7","ok":true,"result":{}}\n'),
    (
        MAC,
        b'{"id":"2","op":"rc.classify"}',
        b'{"id":"2","ok":false,"error":{"code":"unknown-op",'
        b'"message":"no such op: rc.classify"}}\n',
    ),
    (
        MAC,
        b'{"id":"3","op":"shed.start","params":{"name":"a","b":1,"a":2}}',
        b'{"id":"3","ok":false,"error":{"code":"unknown-field",'
        b'"message":"unknown params: a, b"}}\n',
    ),
    (
        TAURI,
        b"[1]",
        b'{"error":{"code":"unknown_op","message":"unknown op: "},"id":null,"ok":false}\n',
    ),
    (
        TAURI,
        b'{"id":"5","op":"shed.start","params":{}}',
        b'{"error":{"code":"bad_request","message":"missing \'name\'"},"id":"5","ok":false}\n',
    ),
    (
        TAURI,
        b'{"id":{"b":1,"a":2},"op":"ui.show_window"}',
        b'{"id":{"a":2,"b":1},"ok":true,"result":{}}\n',
    ),
]


@pytest.mark.parametrize(("dialect", "line", "expected"), EXACT)
def test_exact_reply(dialect: Dialect, line: bytes, expected: bytes) -> None:
    assert serve_bytes(dialect, line + b"\n", result={}) == expected


def test_mac_parse_error_has_id_zero_and_stays_open() -> None:
    out = serve_bytes(
        MAC,
        b'{"id":"1","op":"ui.show_window","x":1}\n{"id":"2","op":"ui.show_window"}\n',
        result={},
    )
    first, second, _ = out.split(b"\n")
    assert first.startswith(
        b'{"id":"0","ok":false,"error":{"code":"parse-error","message":"envelope decode failed: '
    )
    assert b"unknown request fields: x" in first
    assert second == b'{"id":"2","ok":true,"result":{}}'


def test_tauri_bad_json_has_no_id_and_stays_open() -> None:
    out = serve_bytes(TAURI, b'{bad\n{"id":2,"op":"ui.show_window"}\n', result={})
    first, second, _ = out.split(b"\n")
    assert first.startswith(b'{"error":{"code":"bad_request","message":')
    assert b'"id"' not in first
    assert second == b'{"id":2,"ok":true,"result":{}}'


def test_mac_escapes_slashes_tauri_does_not() -> None:
    assert (
        render_ok(MAC, "1", {"path": "/a/b"})
        == b'{"id":"1","ok":true,"result":{"path":"\\/a\\/b"}}\n'
    )
    assert (
        render_ok(TAURI, "1", {"path": "/a/b"})
        == b'{"id":"1","ok":true,"result":{"path":"/a/b"}}\n'
    )


def test_tauri_sorts_nested_keys() -> None:
    line = render_error(TAURI, 3, "bad_request", "m")
    assert line == b'{"error":{"code":"bad_request","message":"m"},"id":3,"ok":false}\n'


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("42", "42"),
        ("-7", "-7"),
        ("+5", "5"),
        ("007", "7"),
        ("-0", "0"),
        ("9223372036854775807", "9223372036854775807"),
        ("-9223372036854775808", "-9223372036854775808"),
        ("9223372036854775808", None),
        ("abc", None),
        (" 1", None),
        ("1 ", None),
        ("1.0", None),
        ("", None),
        ("+", None),
        ("1_000", None),
        ("\u0661", None),  # a non-ASCII digit Python's int() would accept
    ],
)
def test_canonical_mac_id(raw: str, expected: str | None) -> None:
    assert canonical_mac_id(raw) == expected


def test_tauri_whitespace_only_lines_are_skipped() -> None:
    for line in (b"", b"   ", b"\t\r", b"\xc2\xa0", "\u3000".encode()):
        assert parse_request(TAURI, line) is None
    assert parse_request(MAC, b"") is not None


def test_mac_params_null_is_empty() -> None:
    out = serve_bytes(MAC, b'{"id":"1","op":"ui.show_window","params":null}\n', result={})
    assert out == b'{"id":"1","ok":true,"result":{}}\n'
