"""LineBuffer plus typed decode over a 64 MiB NDJSON stream, against bytes.split plus decode.

Target: ratio >= 0.75 (the library keeps at least 75% of the bare pipeline's throughput).
"""

from __future__ import annotations

from shedproto import FramingPolicy, LineBuffer, decoder_for

from ._frames import BenchFrame, ndjson_stream
from ._harness import Case, timed

CHUNK = 65536


def cases(quick: bool) -> list[Case]:
    size = (8 if quick else 64) << 20
    data = ndjson_stream(size)
    chunks = [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]
    decoder = decoder_for(BenchFrame)
    frames = data.count(b"\n")
    policy = FramingPolicy(max_frame_bytes=1 << 20)

    def baseline() -> None:
        decode = decoder.decode
        for line in data.split(b"\n"):
            if line:
                decode(line)

    def candidate() -> None:
        decode = decoder.decode
        lines = LineBuffer(policy)
        for chunk in chunks:
            for line in lines.feed(chunk):
                decode(line)
        for line in lines.feed(b""):
            decode(line)

    return [
        Case(
            name=f"framing: LineBuffer+decode {len(data) >> 20} MiB vs split+decode",
            baseline=timed(baseline),
            candidate=timed(candidate),
            target=0.75,
            units=frames,
            unit="frame",
            repeat=3 if quick else 5,
        )
    ]
