"""The core's fast paths (ids, timestamps) agree with the general code they short-cut."""

from __future__ import annotations

import os
import uuid

import pytest

from shedproto.host_agent import (
    AuditRecord,
    EventLines,
    IdSource,
    encode_frame,
    format_timestamp,
)


def test_id_source_makes_uuid4_strings() -> None:
    ids = IdSource(bytes, block=3)
    first = [ids() for _ in range(7)]  # crosses two refills
    assert first[0] == "00000000-0000-4000-8000-000000000000"
    real = IdSource(os.urandom)
    seen = {real() for _ in range(1000)}
    assert len(seen) == 1000
    for text in seen:
        parsed = uuid.UUID(text)
        assert (parsed.version, parsed.variant, str(parsed)) == (4, uuid.RFC_4122, text)


def test_id_source_errors() -> None:
    with pytest.raises(ValueError, match="block"):
        IdSource(bytes, block=0)
    short = IdSource(lambda n: b"\x00" * (n - 1))
    with pytest.raises(ValueError, match="expected"):
        short()


def test_id_source_variant_bits() -> None:
    ids = IdSource(lambda n: b"\xff" * n, block=1)
    assert ids() == "ffffffff-ffff-4fff-bfff-ffffffffffff"


def test_format_timestamp_cache_is_exact() -> None:
    assert [format_timestamp(t) for t in (0.0, 0.999, 1.0, -0.5, 1783641600.7)] == [
        "1970-01-01T00:00:00Z",
        "1970-01-01T00:00:00Z",
        "1970-01-01T00:00:01Z",
        "1969-12-31T23:59:59Z",
        "2026-07-10T00:00:00Z",
    ]
    for bad in (float("nan"), float("inf"), 1e20):
        with pytest.raises(ValueError, match="time"):
            format_timestamp(bad)


class _Recorded:
    """``os.urandom`` that keeps what it handed out, to replay or check against."""

    def __init__(self) -> None:
        self.drawn: list[bytes] = []

    def __call__(self, n: int) -> bytes:
        self.drawn.append(os.urandom(n))
        return self.drawn[-1]


def test_id_source_matches_uuid_version_4_of_the_same_entropy() -> None:
    entropy = _Recorded()
    ids = IdSource(entropy, block=5)
    made = [ids() for _ in range(12)]  # three refills, the last one partly used
    raw = b"".join(entropy.drawn)
    expected = [str(uuid.UUID(bytes=raw[i : i + 16], version=4)) for i in range(0, 16 * 12, 16)]
    assert made == expected


_RECORDS = [
    AuditRecord(ts="2026-07-10T00:00:00Z", shed="w", ns="n", op="o", result="ok", approval="a"),
    AuditRecord(ts="2026-07-10T00:00:01Z", shed="w", ns="n", op="o", result="ok", approval="a"),
    AuditRecord(ts="t", ns="egress", op="tcp", result="allow"),  # general path: no shed
    AuditRecord(ts='q"', server="s", shed="w", ns="n", op="o", result="r", approval="a", ttl="1h"),
    AuditRecord(ts="2026-07-10T00:00:00Z", shed="w", ns="n", op="o", result="ok", approval="a"),
]


def test_event_lines_match_event_line_with_id_source_ids() -> None:
    entropy = _Recorded()
    lines = EventLines(entropy, block=3)
    made = [lines.line(record) for record in _RECORDS * 2]  # four refills; ts back and forth
    replayed = iter(entropy.drawn)
    ids = IdSource(lambda n: next(replayed), block=3)
    for record, line in zip(_RECORDS * 2, made, strict=True):
        assert line == encode_frame(record.to_event(ids())), record


def test_event_lines_errors() -> None:
    with pytest.raises(ValueError, match="block"):
        EventLines(bytes, block=0)
    short = EventLines(lambda n: b"\x00" * (n - 1))
    with pytest.raises(ValueError, match="expected"):
        short.line(_RECORDS[0])
