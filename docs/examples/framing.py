"""Framing and errors, with no socket at all: the sans-IO core on its own."""

from shedproto import (
    ErrorCode,
    FramingError,
    FramingPolicy,
    LineBuffer,
    OverCap,
    RemoteProtocolError,
)

lines = LineBuffer(FramingPolicy(max_frame_bytes=64, over_cap=OverCap.RAISE))

# Feed whatever the socket delivered; complete lines come out, the tail waits.
assert lines.feed(b'{"type":"ping"}\n{"type":') == [b'{"type":"ping"}']
assert lines.feed(b'"pong"}\n') == [b'{"type":"pong"}']

# The cap is counted while bytes are buffered, not only once a newline arrives.
try:
    lines.feed(b'{"type":"ok"}\n' + b"x" * 100)
except FramingError as exc:
    assert isinstance(exc, RemoteProtocolError)  # the peer's fault, not yours
    print(exc.code, exc.frames_before)  # the good frame before the bad bytes is kept
    assert exc.code is ErrorCode.FRAME_TOO_LARGE
    assert exc.frames_before == (b'{"type":"ok"}',)
else:
    raise AssertionError("an over-cap line must raise")
