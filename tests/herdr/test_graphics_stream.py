"""The core of ``pane.graphics.stream``: frame encoding and the server's frame reader.

Source: herdrdev/herdr src/api/server/pane_graphics_stream.rs:21-330@v0.8.2 (9eb5214).
"""

from __future__ import annotations

import json

import pytest

from shedproto import herdr
from shedproto._errors import LocalProtocolError, RemoteProtocolError

RGBA = herdr.GraphicsFrameHeader(format="rgba", image_width=1, image_height=1)


def _error_of(exc: RemoteProtocolError) -> tuple[str, str]:
    assert exc.reply_hint is not None
    answer = json.loads(exc.reply_hint)
    return answer["id"], answer["error"]["code"]


def test_inline_frames_split_anywhere_come_out_whole_with_herdr_answer_ids() -> None:
    wire = herdr.encode_frame(RGBA, b"\x00\n\x01\xff") + herdr.encode_frame(RGBA, b"abcd")
    for size in (1, 3, len(wire)):
        reader = herdr.GraphicsStreamReader("s1")
        frames = []
        for start in range(0, len(wire), size):
            frames += reader.feed(wire[start : start + size])
        assert [(f.data, f.answer_id) for f in frames] == [
            (b"\x00\n\x01\xff", "s1:frame:1"),
            (b"abcd", "s1:frame:2"),
        ]
        assert frames[0].header.data_length == 4


def test_file_frames_carry_no_data_and_answer_by_sequence() -> None:
    header = herdr.GraphicsFrameHeader(
        format="bgra",
        image_width=2,
        image_height=2,
        file=herdr.GraphicsFrameFile(path="/tmp/f"),
        sequence=7,
        revision=8,
    )
    reader = herdr.GraphicsStreamReader("s")
    (frame,) = reader.feed(b"\n" + herdr.encode_frame(header))  # a blank line is skipped
    assert (frame.data, frame.answer_id, frame.header.revision) == (b"", "s:file:7", 8)


@pytest.mark.parametrize(
    ("line", "code", "message"),
    [
        (b"{not json", "invalid_frame", "invalid frame header: "),
        (b'{"format":"png","image_width":1,"image_height":1,"file":{"path":"/x"}}',
         "invalid_frame", "file frames require rgba or bgra"),
        (b'{"format":"rgba","image_width":1,"image_height":1}',
         "invalid_frame", "frame requires data_length or file"),
        (b'{"format":"rgba","image_width":1,"image_height":1,"data_length":0}',
         "invalid_frame", "frame data_length must be greater than zero"),
        (b'{"format":"rgba","image_width":1,"image_height":1,"data_length":16777217}',
         "image_too_large", "frame data is too large"),
    ],
)  # fmt: skip
def test_bad_headers_end_the_stream_with_herdrs_error(line: bytes, code: str, message: str) -> None:
    reader = herdr.GraphicsStreamReader("s9")
    with pytest.raises(RemoteProtocolError) as ended:
        reader.feed(line + b"\n" + herdr.encode_frame(RGBA, b"more"))
    assert _error_of(ended.value) == ("s9", code)
    assert json.loads(ended.value.reply_hint or b"")["error"]["message"].startswith(message)
    assert reader.finished
    assert reader.feed(herdr.encode_frame(RGBA, b"late")) == []


def test_an_over_long_header_closes_without_an_answer() -> None:
    reader = herdr.GraphicsStreamReader("s")
    with pytest.raises(RemoteProtocolError) as ended:
        reader.feed(b"x" * (herdr.MAX_FRAME_HEADER_BYTES + 1))
    assert ended.value.reply_hint is None


def test_eof_drops_a_partial_frame() -> None:
    reader = herdr.GraphicsStreamReader("s")
    assert reader.feed(herdr.encode_frame(RGBA, b"abcd")[:-1]) == []
    assert reader.feed(b"") == []
    assert reader.finished


def test_encode_frame_refuses_frames_herdr_would_refuse() -> None:
    with pytest.raises(LocalProtocolError):
        herdr.encode_frame(RGBA)
    with pytest.raises(LocalProtocolError):
        herdr.encode_frame(herdr.GraphicsFrameHeader(
            format="png", image_width=1, image_height=1, file=herdr.GraphicsFrameFile(path="/x")
        ))  # fmt: skip
    with pytest.raises(LocalProtocolError):
        herdr.encode_frame(
            herdr.GraphicsFrameHeader(format="rgba", image_width=1, image_height=1, data_length=3),
            b"abcd",
        )


def test_the_server_connection_hands_over_the_bytes_after_the_request_line() -> None:
    conn = herdr.ServerConnection(protocol=22)
    frame = herdr.encode_frame(RGBA, b"\n\n\n\n")
    line = b'{"id":"g","method":"pane.graphics.stream","params":{"pane_id":"w1:p1"}}\n'
    (request,) = conn.receive_data(line + frame)
    assert isinstance(request, herdr.types.PaneGraphicsStreamRequest)
    assert conn.raw_stream
    assert conn.trailing == frame
    assert conn.receive_data(b"more") == []  # not ClientGone: the shell reads the stream
