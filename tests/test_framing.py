from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shedproto import (
    BlankLines,
    EofTail,
    ErrorCode,
    FrameQueue,
    FramingError,
    FramingPolicy,
    LineBuffer,
    LocalProtocolError,
    OverCap,
    RemoteProtocolError,
)

STREAM = b'{"a":1}\n{"b":2}\r\n\n{"c":"x y"}\n'
FRAMES = [b'{"a":1}', b'{"b":2}', b'{"c":"x y"}']


def feed_all(buffer: LineBuffer, chunks: list[bytes]) -> list[bytes]:
    out: list[bytes] = []
    for chunk in chunks:
        out += buffer.feed(chunk)
    return out + buffer.feed(b"")


def test_whole_stream() -> None:
    assert feed_all(LineBuffer(), [STREAM]) == FRAMES


def test_one_byte_at_a_time() -> None:
    buffer = LineBuffer()
    seen: list[list[bytes]] = [buffer.feed(bytes([b])) for b in STREAM]
    # a frame appears exactly when its newline arrives, never earlier
    newline_positions = [i for i, b in enumerate(STREAM) if b == 0x0A]
    produced_at = [i for i, frames in enumerate(seen) if frames]
    assert produced_at == [p for p in newline_positions if STREAM[p - 1 : p] not in (b"\n",)]
    assert [f for frames in seen for f in frames] == FRAMES
    assert buffer.feed(b"") == []


def test_trailing_data_stays_buffered() -> None:
    buffer = LineBuffer()
    assert buffer.feed(STREAM + b'{"partial":') == FRAMES
    assert buffer.buffered == len(b'{"partial":')
    assert buffer.feed(b"true}\n") == [b'{"partial":true}']
    assert buffer.buffered == 0


def test_many_lines_in_one_chunk_after_a_tail() -> None:
    buffer = LineBuffer()
    assert buffer.feed(b"ab") == []
    assert buffer.feed(b"c\nd\ne\nf") == [b"abc", b"d", b"e"]
    assert buffer.feed(b"\n") == [b"f"]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        (FramingPolicy(strip_cr=True), [b"a", b"b\r\rc"]),
        (FramingPolicy(strip_cr=False), [b"a\r", b"b\r\rc"]),
    ],
)
def test_cr_before_lf(policy: FramingPolicy, expected: list[bytes]) -> None:
    assert feed_all(LineBuffer(policy), [b"a\r\nb\r\rc\n"]) == expected


def test_cr_split_across_chunks_is_stripped() -> None:
    assert feed_all(LineBuffer(), [b"abc\r", b"\n"]) == [b"abc"]


@pytest.mark.parametrize(
    ("blank", "expected"),
    [
        (BlankLines.KEEP, [b"a", b"", b"  \t", b"b"]),
        (BlankLines.SKIP_EMPTY, [b"a", b"  \t", b"b"]),
        (BlankLines.SKIP_WHITESPACE, [b"a", b"b"]),
    ],
)
def test_blank_lines(blank: BlankLines, expected: list[bytes]) -> None:
    policy = FramingPolicy(blank_lines=blank)
    assert feed_all(LineBuffer(policy), [b"a\n\n  \t\nb\n"]) == expected


@pytest.mark.parametrize(
    ("blank", "expected"),
    [
        (BlankLines.KEEP, [b"a", b"", b"", b"  \t", b" ", b"b"]),
        (BlankLines.SKIP_EMPTY, [b"a", b"  \t", b" ", b"b"]),
        (BlankLines.SKIP_WHITESPACE, [b"a", b"b"]),
    ],
)
def test_blank_lines_read_one_line_at_a_time(blank: BlankLines, expected: list[bytes]) -> None:
    """A read holding one whole line takes a shorter path; the blank and CR rules still hold."""
    policy = FramingPolicy(blank_lines=blank)
    chunks = [b"a\n", b"\n", b"\r\n", b"  \t\n", b" \r\n", b"b\n"]
    assert feed_all(LineBuffer(policy), chunks) == expected


def test_eof_tail_frame_drop_raise() -> None:
    assert feed_all(LineBuffer(FramingPolicy(eof_tail=EofTail.FRAME)), [b"a\nb\r"]) == [b"a", b"b"]
    assert feed_all(LineBuffer(FramingPolicy(eof_tail=EofTail.DROP)), [b"a\nb"]) == [b"a"]
    buffer = LineBuffer(FramingPolicy(eof_tail=EofTail.RAISE))
    assert buffer.feed(b"a\nb") == [b"a"]
    with pytest.raises(FramingError) as info:
        buffer.feed(b"")
    assert info.value.code is ErrorCode.TRUNCATED_FRAME
    with pytest.raises(LocalProtocolError):
        buffer.feed(b"more")


def test_eof_is_idempotent_and_final() -> None:
    buffer = LineBuffer()
    assert buffer.feed(b"x") == []
    assert buffer.feed(b"") == [b"x"]
    assert buffer.feed(b"") == []
    with pytest.raises(LocalProtocolError) as info:
        buffer.feed(b"y\n")
    assert info.value.code is ErrorCode.UNEXPECTED_EVENT


def test_cap_exceeded_mid_buffer_without_newline() -> None:
    buffer = LineBuffer(FramingPolicy(max_frame_bytes=10))
    assert buffer.feed(b"12345") == []
    assert buffer.feed(b"67890") == []  # exactly at the cap is fine
    assert buffer.buffered == 10
    with pytest.raises(FramingError) as info:
        buffer.feed(b"1")  # one more byte, still no newline: fails now, not at the newline
    assert info.value.code is ErrorCode.FRAME_TOO_LARGE
    assert info.value.frames_before == ()
    assert buffer.buffered == 0  # the oversized bytes were released
    with pytest.raises(LocalProtocolError):
        buffer.feed(b"\n")


def test_cap_counts_without_the_newline() -> None:
    buffer = LineBuffer(FramingPolicy(max_frame_bytes=3))
    assert buffer.feed(b"abc\n") == [b"abc"]
    with pytest.raises(FramingError):
        buffer.feed(b"abcd\n")


def test_cap_exceeded_keeps_the_frames_before() -> None:
    buffer = LineBuffer(FramingPolicy(max_frame_bytes=4))
    with pytest.raises(FramingError) as info:
        buffer.feed(b"ok\nfine\ntoo long\nlost\n")
    assert info.value.frames_before == (b"ok", b"fine")


def test_cap_exceeded_by_the_tail_keeps_complete_frames() -> None:
    buffer = LineBuffer(FramingPolicy(max_frame_bytes=4))
    with pytest.raises(FramingError) as info:
        buffer.feed(b"ok\n123456789")
    assert info.value.frames_before == (b"ok",)


def test_cap_exceeded_by_tail_plus_head() -> None:
    buffer = LineBuffer(FramingPolicy(max_frame_bytes=4))
    assert buffer.feed(b"123") == []
    with pytest.raises(FramingError) as info:
        buffer.feed(b"45\nok\n")
    assert info.value.frames_before == ()


def test_over_cap_skip_discards_the_line_and_goes_on() -> None:
    buffer = LineBuffer(FramingPolicy(max_frame_bytes=4, over_cap=OverCap.SKIP))
    assert buffer.feed(b"ok\n1234567") == [b"ok"]
    assert buffer.feed(b"89") == []  # still discarding, nothing buffered
    assert buffer.buffered == 0
    assert buffer.feed(b"0\nnext\nxxxxxxxx\nlast\n") == [b"next", b"last"]
    assert buffer.frames_dropped == 2
    assert buffer.feed(b"") == []


def test_policy_rejects_non_positive_cap() -> None:
    with pytest.raises(ValueError, match="positive"):
        FramingPolicy(max_frame_bytes=0)


def test_accepts_bytearray_and_memoryview() -> None:
    buffer = LineBuffer()
    assert buffer.feed(bytearray(b"a\n")) == [b"a"]
    assert buffer.feed(memoryview(b"b\n")) == [b"b"]


# -- no rescanning: counted, not timed -------------------------------------------


def test_byte_at_a_time_without_newline_scans_each_byte_once() -> None:
    size = 200_000
    buffer = LineBuffer(FramingPolicy(max_frame_bytes=size))
    for _ in range(size):
        buffer.feed(b"x")
    assert buffer.bytes_scanned == size  # a rescanning framer would need ~size**2/2
    assert buffer.feed(b"\n") == [b"x" * size]
    assert buffer.bytes_scanned == size + 1


def test_small_chunks_with_lines_scan_linearly() -> None:
    data = b"".join(b"%d-" % i * 50 + b"\n" for i in range(2000))
    buffer = LineBuffer(FramingPolicy(max_frame_bytes=len(data)))
    frames: list[bytes] = []
    for i in range(0, len(data), 7):
        frames += buffer.feed(data[i : i + 7])
    assert frames == data.split(b"\n")[:-1]
    assert buffer.bytes_scanned <= len(data)


# -- properties --------------------------------------------------------------------


@st.composite
def chunked(draw: st.DrawFn, data: bytes) -> list[bytes]:
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=20)))
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds) if b > a]


@given(st.data(), st.binary(max_size=400), st.integers(1, 64), st.sampled_from(list(OverCap)))
def test_arbitrary_chunkings_yield_frames_or_remote_errors(
    data: st.DataObject, payload: bytes, cap: int, over_cap: OverCap
) -> None:
    chunks = data.draw(chunked(payload))
    policy = FramingPolicy(max_frame_bytes=cap, over_cap=over_cap, eof_tail=EofTail.RAISE)
    buffer = LineBuffer(policy)
    try:
        for chunk in [*chunks, b""]:
            for frame in buffer.feed(chunk):
                assert isinstance(frame, bytes)
                assert b"\n" not in frame
                assert 0 < len(frame) <= cap
    except RemoteProtocolError as exc:
        assert exc.code in (ErrorCode.FRAME_TOO_LARGE, ErrorCode.TRUNCATED_FRAME)
    assert buffer.buffered <= cap


@given(
    st.data(), st.lists(st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"")), max_size=30)
)
def test_chunking_never_changes_the_frames(data: st.DataObject, lines: list[bytes]) -> None:
    payload = b"".join(line + b"\n" for line in lines)
    policy = FramingPolicy(strip_cr=False, blank_lines=BlankLines.KEEP)
    expected = feed_all(LineBuffer(policy), [payload])
    assert expected == lines
    assert feed_all(LineBuffer(policy), data.draw(chunked(payload))) == lines


# -- FrameQueue --------------------------------------------------------------------


def test_frame_queue_hands_out_frames_then_the_error() -> None:
    queue = FrameQueue(FramingPolicy(max_frame_bytes=3))
    assert queue.next_frame() is None
    queue.feed(b"a\nbb\ntoolong\n")
    assert queue.next_frame() == b"a"
    assert queue.next_frame() == b"bb"
    with pytest.raises(FramingError):
        queue.next_frame()
    with pytest.raises(LocalProtocolError):
        queue.feed(b"x\n")


def test_frame_queue_eof() -> None:
    queue = FrameQueue()
    queue.feed(b"a\nb")
    eof_before = queue.eof
    assert queue.next_frame() == b"a"
    queue.feed(b"")
    assert (eof_before, queue.eof) == (False, True)
    assert queue.next_frame() == b"b"
    assert queue.next_frame() is None


# -- the whole-lines fast path (nothing held, chunk ends in LF) ----------------------


def test_fast_path_keeps_policy_semantics() -> None:
    keep = LineBuffer(FramingPolicy(blank_lines=BlankLines.KEEP))
    assert keep.feed(b"a\r\n\nb\n") == [b"a", b"", b"b"]
    assert keep.feed(b"par") == []
    assert keep.feed(b"tial\r\n") == [b"partial"]  # held tail: the general path
    assert keep.feed(b"\n") == [b""]
    assert LineBuffer().feed(b"a\r\n\nb\n") == [b"a", b"b"]
    assert LineBuffer(FramingPolicy(strip_cr=False)).feed(b"a\r\n") == [b"a\r"]


def test_fast_path_never_admits_an_over_cap_line() -> None:
    at_cap = LineBuffer(FramingPolicy(max_frame_bytes=5))
    assert at_cap.feed(b"12345\n") == [b"12345"]  # 6 bytes > cap: the general path
    assert at_cap.feed(b"1234\n") == [b"1234"]  # 5 bytes <= cap: the fast path
    over = LineBuffer(FramingPolicy(max_frame_bytes=4))
    with pytest.raises(FramingError):
        over.feed(b"12345\n")
    assert at_cap.bytes_scanned == 11
