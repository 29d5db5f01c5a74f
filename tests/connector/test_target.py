"""Target identity: WHATWG origin, key, state and lock directories; text and time helpers."""

from __future__ import annotations

import hashlib
import urllib.parse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shedproto.connector import (
    InvalidUrlError,
    TargetError,
    TargetIdentity,
    encode_uri_component,
    is_iso_timestamp,
    iso_from_epoch_ms,
    iso_from_seconds,
    js_length,
    js_trim,
    ledger_lock_path,
    ledger_path,
    lock_directory,
    origin_href,
    session_key,
    state_directory,
    target_key,
    target_lock_path,
)

ORIGINS = [
    ("https://user:secret@FABRIC.example.test:443/x?y", "https://fabric.example.test/"),
    ("https://fabric.example.test", "https://fabric.example.test/"),
    ("http://Example.COM:80/a/b#frag", "http://example.com/"),
    ("http://example.com:8080", "http://example.com:8080/"),
    ("HTTPS://example.com:0443/", "https://example.com/"),
    ("wss://h.test:443", "wss://h.test/"),
    ("ws://h.test:443", "ws://h.test:443/"),
    ("  https://h.test/\n", "https://h.test/"),
    ("ht\ttps://h.te\nst/", "https://h.test/"),
    ("https:\\\\h.test\\x", "https://h.test/"),
    ("http:example.com/path", "http://example.com/"),
    ("https:///h.test", "https://h.test/"),
    ("http://0x7f.1/", "http://127.0.0.1/"),
    ("http://0300.0250.0.1/", "http://192.168.0.1/"),
    ("http://3232235521/", "http://192.168.0.1/"),
    ("http://[2001:DB8:0:0:0:0:0:1]:8080/", "http://[2001:db8::1]:8080/"),
    ("http://[::ffff:192.168.0.1]/", "http://[::ffff:c0a8:1]/"),
    ("http://[1:0:0:2:0:0:0:3]/", "http://[1:0:0:2::3]/"),
    ("http://%45xample.com/", "http://example.com/"),
    ("http://example.com.:80/", "http://example.com./"),
    ("http://münchen.de/", "http://xn--mnchen-3ya.de/"),
    ("https://h.test:/", "https://h.test/"),
    ("foo://Host.Test:99/p?q", "foo://Host.Test:99/"),
    ("mailto:x@y.test?subject=s", "mailto:x@y.test"),
    ("file:///etc/passwd", "file:///"),
]


@pytest.mark.parametrize(("url", "origin"), ORIGINS)
def test_origin_href(url: str, origin: str) -> None:
    assert origin_href(url) == origin


@pytest.mark.parametrize(
    "url",
    [
        "",
        "fabric.example.test",
        "http://",
        "https://exa mple/",
        "http://1.2.3.4.5/",
        "http://256.0.0.1/",
        "http://999999999999/",
        "https://h.test:65536/",
        "https://h.test:8o/",
        "http://[::1/",
        "http://[1::2::3]/",
        "https://user@/",
        "https://h<t>/",
        "1http://x/",
    ],
)
def test_invalid_urls(url: str) -> None:
    with pytest.raises(InvalidUrlError):
        origin_href(url)


def test_target_key_and_credentials_never_leak() -> None:
    origin = "https://fabric.example.test/"
    expected = hashlib.sha256(f"{origin}\ndid:key:space\ndid:key:owner".encode()).hexdigest()
    assert (
        target_key(
            "https://user:secret@FABRIC.example.test:443/x?y", "did:key:space", "did:key:owner"
        )
        == expected
    )
    assert target_key(origin, "did:key:space", "did:key:owner") == expected
    assert target_key(origin, "did:key:other", "did:key:owner") != expected
    identity = TargetIdentity("https://fabric.example.test/api", "did:key:space", "did:key:owner")
    assert identity.key == expected
    assert len(identity.key) == 64
    assert "secret" not in repr(identity)
    with pytest.raises(TargetError) as caught:
        target_key("https://operator:credential-that-must-not-appear@[invalid", "s", "o")
    assert str(caught.value) == "Common Fabric API URL is not valid"
    assert "credential" not in str(caught.value)
    assert caught.value.__cause__ is None


def test_state_directory() -> None:
    assert (
        state_directory({"XDG_STATE_HOME": " /state ", "HOME": "/h"}, platform="linux")
        == "/state/commonfabric/agents-host"
    )
    assert (
        state_directory({"XDG_STATE_HOME": "rel"}, platform="linux", cwd="/cwd")
        == "/cwd/rel/commonfabric/agents-host"
    )
    assert (
        state_directory({"XDG_STATE_HOME": "  ", "HOME": "/h"}, platform="linux")
        == "/h/.local/state/commonfabric/agents-host"
    )
    assert (
        state_directory({"HOME": "/Users/me"}, platform="darwin")
        == "/Users/me/Library/Application Support/CommonFabric/agents-host"
    )
    assert (
        state_directory(
            {"LOCALAPPDATA": "C:\\Users\\me\\AppData\\Local"}, platform="win32", cwd="C:\\"
        )
        == "C:\\Users\\me\\AppData\\Local\\CommonFabric\\agents-host"
    )
    with pytest.raises(TargetError, match=r"^HOME is required to locate durable agent host state$"):
        state_directory({}, platform="linux")
    with pytest.raises(
        TargetError, match=r"^LOCALAPPDATA is required to locate durable agent host state$"
    ):
        state_directory({"HOME": "/h"}, platform="win32")


def test_lock_directory() -> None:
    env = {"CF_AGENTS_HOST_LOCK_DIR": " /locks ", "XDG_RUNTIME_DIR": "/run/user/1", "TMPDIR": "/t"}
    assert lock_directory(env, platform="linux", uid=1) == "/locks"
    del env["CF_AGENTS_HOST_LOCK_DIR"]
    assert lock_directory(env, platform="linux", uid=1) == "/run/user/1/commonfabric/agents-host"
    del env["XDG_RUNTIME_DIR"]
    assert lock_directory(env, platform="linux", uid=1000) == "/t/commonfabric-agents-host-1000"
    assert (
        lock_directory({"TMPDIR": " "}, platform="darwin", uid=501)
        == "/tmp/commonfabric-agents-host-501"
    )
    assert (
        lock_directory({"TEMP": "C:\\Temp"}, platform="win32", uid=None, cwd="C:\\")
        == "C:\\Temp\\CommonFabric\\agents-host"
    )
    message = "^CF_AGENTS_HOST_LOCK_DIR is required when no Windows runtime directory is available$"
    with pytest.raises(TargetError, match=message):
        lock_directory({}, platform="win32", uid=None)
    with pytest.raises(TargetError, match=message):
        lock_directory(
            {"LOCALAPPDATA": " ", "TEMP": "C:\\Temp"}, platform="win32", uid=None
        )  # ?? takes the first set


def test_paths() -> None:
    key = "ab" * 32
    ledger = ledger_path("/state", key)
    assert ledger == f"/state/target-{key}.command-ledger.json"
    assert ledger_lock_path(ledger) == f"{ledger}.lock"
    assert target_lock_path("/locks", key) == f"/locks/target-{key}.lock"


# --- JavaScript text semantics ------------------------------------------------------------------


def test_js_trim_and_length() -> None:
    assert js_trim("\ufeff\u00a0 x \u2028\u3000") == "x"
    assert js_trim("\x1cx\x85") == "\x1cx\x85"  # str.strip would remove these
    assert js_length("a\U0001f600") == 3
    assert js_length("é") == 1


def test_encode_uri_component() -> None:
    assert (
        encode_uri_component("a b/ü€😀!*'()~-_.") == "a%20b%2F%C3%BC%E2%82%AC%F0%9F%98%80!*'()~-_."
    )
    assert encode_uri_component(";,/?:@&=+$#") == "%3B%2C%2F%3F%3A%40%26%3D%2B%24%23"
    with pytest.raises(ValueError, match="URI malformed"):
        encode_uri_component("\udc00")
    assert session_key(" Codex ", " A/B ") == "codex/A%2FB"


@given(st.text())
def test_encode_uri_component_matches_quote(text: str) -> None:
    assert encode_uri_component(text) == urllib.parse.quote(text, safe="!*'()~")


def test_iso_timestamps() -> None:
    assert iso_from_epoch_ms(0) == "1970-01-01T00:00:00.000Z"
    assert iso_from_epoch_ms(1784505901000) == "2026-07-20T00:05:01.000Z"
    assert iso_from_epoch_ms(-1) == "1969-12-31T23:59:59.999Z"
    assert iso_from_epoch_ms(253402300800000) == "+010000-01-01T00:00:00.000Z"
    assert iso_from_epoch_ms(-62198755200000) == "-000001-01-01T00:00:00.000Z"
    assert iso_from_seconds(1.9999) == "1970-01-01T00:00:01.999Z"
    with pytest.raises(ValueError, match="Invalid time value"):
        iso_from_epoch_ms(8_640_000_000_000_001)
    for good in [
        "2024-02-29T23:59:59.999Z",
        "0000-01-01T00:00:00.000Z",
        "+275760-09-13T00:00:00.000Z",
    ]:
        assert is_iso_timestamp(good)
    for bad in [
        "2023-02-29T00:00:00.000Z",
        "2026-07-20T24:00:00.000Z",
        "2026-07-20T00:05:01Z",
        "2026-07-20T00:05:01.0000Z",
        "2026-7-20T00:05:01.000Z",
        "-000000-01-01T00:00:00.000Z",
        "+002026-07-20T00:05:01.000Z",
        "+275760-09-13T00:00:00.001Z",
        5,
        None,
    ]:
        assert not is_iso_timestamp(bad)


@given(st.integers(-8_640_000_000_000_000, 8_640_000_000_000_000))
def test_iso_round_trip(ms: int) -> None:
    assert is_iso_timestamp(iso_from_epoch_ms(ms))
