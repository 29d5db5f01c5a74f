from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from shedproto import (
    ErrorCode,
    ErrorReport,
    LenientFrame,
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
    StrictFrame,
    decode_frame,
    decoder_for,
    encode,
    encode_line,
    remote_error_from_msgspec,
)


class Inner(StrictFrame, frozen=True):
    n: int


class Strict(StrictFrame, frozen=True, tag_field="type", tag="strict"):
    name: str
    inner: Inner


class Lenient(LenientFrame, frozen=True, tag_field="type", tag="lenient"):
    name: str
    note: str | None = None


def test_protocol_error_is_abstract() -> None:
    with pytest.raises(TypeError):
        ProtocolError(ErrorCode.MALFORMED_FRAME, "x")


def test_error_fields_and_repr() -> None:
    exc = RemoteProtocolError(
        ErrorCode.SCHEMA_VIOLATION, "bad", path="$.a", reply_hint=b'{"e":1}\n'
    )
    assert (exc.code, exc.message, exc.path, exc.reply_hint) == (
        ErrorCode.SCHEMA_VIOLATION,
        "bad",
        "$.a",
        b'{"e":1}\n',
    )
    assert str(exc) == "bad"
    assert repr(exc) == "RemoteProtocolError('schema_violation', 'bad', path='$.a')"
    assert isinstance(LocalProtocolError(ErrorCode.INVALID_ARGUMENT, "x"), ProtocolError)


def test_validation_error_maps_to_schema_violation_with_path() -> None:
    with pytest.raises(RemoteProtocolError) as info:
        decode_frame(decoder_for(Strict), b'{"type":"strict","name":"a","inner":{"n":"x"}}')
    assert info.value.code is ErrorCode.SCHEMA_VIOLATION
    assert info.value.path == "$.inner.n"
    assert info.value.message == "Expected `int`, got `str`"


def test_unknown_field_is_rejected_by_strict_and_ignored_by_lenient() -> None:
    with pytest.raises(RemoteProtocolError) as info:
        decode_frame(decoder_for(Strict), b'{"type":"strict","name":"a","inner":{"n":1},"x":0}')
    assert info.value.code is ErrorCode.SCHEMA_VIOLATION
    frame = decode_frame(decoder_for(Lenient), b'{"type":"lenient","name":"a","x":[1,2]}')
    assert frame == Lenient(name="a")


def test_bad_json_maps_to_malformed_frame() -> None:
    hint = b'{"error":"parse"}\n'
    with pytest.raises(RemoteProtocolError) as info:
        decode_frame(decoder_for(Lenient), b'{"type":', reply_hint=hint)
    assert info.value.code is ErrorCode.MALFORMED_FRAME
    assert info.value.reply_hint == hint


def test_mapping_keeps_message_without_path() -> None:
    error = remote_error_from_msgspec(msgspec.DecodeError("Input data was truncated"))
    assert (error.code, error.message, error.path) == (
        ErrorCode.MALFORMED_FRAME,
        "Input data was truncated",
        None,
    )


def test_decoder_is_cached_per_type() -> None:
    assert decoder_for(Strict) is decoder_for(Strict)
    assert decoder_for(Strict | Lenient) is decoder_for(Strict | Lenient)
    assert decoder_for(Strict) is not decoder_for(Lenient)


def test_encode_keeps_field_order_and_tag_first() -> None:
    frame = Strict(name="n", inner=Inner(n=1))
    assert encode(frame) == b'{"type":"strict","name":"n","inner":{"n":1}}'
    assert encode_line(frame) == encode(frame) + b"\n"


def test_frames_are_frozen() -> None:
    frame = Lenient(name="a")
    with pytest.raises(AttributeError):
        frame.name = "b"  # type: ignore[misc]


@given(st.text())
def test_encode_line_is_always_exactly_one_line(text: str) -> None:
    line = encode_line(Lenient(name=text, note=text))
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    assert decode_frame(decoder_for(Lenient), line[:-1]) == Lenient(name=text, note=text)


@given(st.binary(max_size=200))
def test_decode_frame_fuzz_only_frames_or_remote_errors(data: bytes) -> None:
    try:
        frame = decode_frame(decoder_for(Strict | Lenient), data)
    except RemoteProtocolError as exc:
        assert exc.code in (ErrorCode.MALFORMED_FRAME, ErrorCode.SCHEMA_VIOLATION)
    else:
        assert isinstance(frame, (Strict, Lenient))


def test_error_report_from_error() -> None:
    exc = RemoteProtocolError(ErrorCode.SCHEMA_VIOLATION, "bad", path="$.x")
    assert msgspec.json.encode(ErrorReport.from_error(exc)) == (
        b'{"code":"schema_violation","message":"bad","path":"$.x"}'
    )
    local = LocalProtocolError(ErrorCode.INVALID_ARGUMENT, "no")
    assert msgspec.json.encode(ErrorReport.from_error(local)) == (
        b'{"code":"invalid_argument","message":"no"}'
    )
