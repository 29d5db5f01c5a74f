r"""Cassettes: the versioned NDJSON recording of relayed connections.

Format version 1. The first line is the header, every further line one record::

    {"cassette":"shedproto","format":1,"protocol":"herdr","dialect":null,"version":21}
    {"t":0.0,"conn":1,"ev":"open"}
    {"t":0.0012,"conn":1,"dir":"c2s","ev":"data","text":"{\"id\":\"1\",...}\n"}
    {"t":0.0031,"conn":1,"dir":"s2c","ev":"data","b64":"AAEC"}
    {"t":0.0040,"conn":1,"dir":"c2s","ev":"eof"}
    {"t":0.0041,"conn":1,"ev":"close"}

``t`` is monotonic seconds since the recording started (never decreasing),
``conn`` numbers connections from 1 in accept order, ``dir`` is ``c2s``
(client to server) or ``s2c``. A data record carries its bytes exactly:
``text`` when they are valid UTF-8, else ``b64``. Data records hold whole
lines (a trailing partial line only at end of stream), so that redaction
works on complete frames. ``redacted`` lists the JSON paths whose values were
replaced by ``"REDACTED"`` (the rules are in :mod:`shedproto.observe._redact`);
a line that could not be searched for secrets is replaced whole: its
``redacted`` is ``["$"]`` and ``withheld`` says why.

A ``gap`` record (no ``dir``) says the recording of that connection stops
there although the connection went on: the proxy's observers fell behind by
more than their bound, so the rest of it was relayed unrecorded (a partial
line waiting for its newline is written before the gap). Nothing more of that
connection follows, not even its ``close``. Readers older than the ``gap``
event refuse such a cassette, naming the line, rather than replay it as whole.
"""

from __future__ import annotations

import base64
from typing import Literal

import msgspec

from shedproto._errors import ErrorCode, RemoteProtocolError

from ._diagnostic import Direction
from ._factory import PROTOCOLS

__all__ = [
    "CASSETTE_FORMAT",
    "CassetteError",
    "CassetteHeader",
    "CassetteRecord",
    "decode_cassette",
    "encode_header",
    "encode_record",
]

CASSETTE_FORMAT = 1
"""The format version this library writes and reads."""

RecordEvent = Literal["open", "data", "eof", "close", "gap"]


class CassetteError(RemoteProtocolError):
    """A cassette that cannot be read: bad JSON, wrong format version, a broken record.

    ``line`` is the 1-based line number.
    """

    def __init__(self, line: int, message: str) -> None:
        super().__init__(ErrorCode.SCHEMA_VIOLATION, f"cassette line {line}: {message}")
        self.line = line


class CassetteHeader(msgspec.Struct, frozen=True, kw_only=True):
    """The first line: format version, protocol and its dialect or version."""

    cassette: Literal["shedproto"] = "shedproto"
    format: int = CASSETTE_FORMAT
    protocol: str
    dialect: str | None = None
    version: int | None = None


class CassetteRecord(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One event of one connection; ``data`` is the exact bytes of a ``data`` record.

    ``redacted`` lists the JSON paths replaced by ``"REDACTED"``; ``withheld``
    (with ``redacted`` ``("$",)``) says why the whole line was replaced.
    """

    t: float
    conn: int
    ev: RecordEvent
    dir: Direction | None = None
    data: bytes = b""
    redacted: tuple[str, ...] = ()
    withheld: str | None = None


class _WireRecord(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    t: float
    conn: int
    ev: RecordEvent
    dir: Direction | None = None
    text: str | None = None
    b64: str | None = None
    redacted: tuple[str, ...] = ()
    withheld: str | None = None


_ENCODER = msgspec.json.Encoder()
_HEADER = msgspec.json.Decoder(CassetteHeader)
_RECORD = msgspec.json.Decoder(_WireRecord)


def encode_header(header: CassetteHeader) -> bytes:
    """Return the header line (with its newline)."""
    return _ENCODER.encode(header) + b"\n"


def encode_record(record: CassetteRecord) -> bytes:
    """Return one record line (with its newline); bytes go as text when they are UTF-8."""
    text: str | None = None
    b64: str | None = None
    if record.ev == "data":
        try:
            text = record.data.decode("utf-8")
        except UnicodeDecodeError:
            b64 = base64.b64encode(record.data).decode("ascii")
    wire = _WireRecord(
        t=record.t,
        conn=record.conn,
        ev=record.ev,
        dir=record.dir,
        text=text,
        b64=b64,
        redacted=record.redacted,
        withheld=record.withheld,
    )
    return _ENCODER.encode(wire) + b"\n"


def decode_cassette(data: bytes) -> tuple[CassetteHeader, list[CassetteRecord]]:
    """Decode a whole cassette.

    Raises:
        CassetteError: no header, another format version, an unknown protocol,
            a line that is not a record, or time running backwards.

    """
    lines = [line for line in data.split(b"\n") if line.strip()]
    if not lines:
        raise CassetteError(1, "empty file; expected a cassette header")
    try:
        header = _HEADER.decode(lines[0])
    except msgspec.DecodeError as exc:
        raise CassetteError(1, f"not a cassette header: {exc}") from None
    if header.format != CASSETTE_FORMAT:
        raise CassetteError(
            1, f"format {header.format} is not supported (this library reads {CASSETTE_FORMAT})"
        )
    if header.protocol not in PROTOCOLS:
        raise CassetteError(1, f"unknown protocol {header.protocol!r}")
    records: list[CassetteRecord] = []
    last = 0.0
    for number, line in enumerate(lines[1:], start=2):
        try:
            wire = _RECORD.decode(line)
            payload = (
                base64.b64decode(wire.b64, validate=True)
                if wire.b64 is not None
                else (wire.text or "").encode("utf-8")
            )
        except (msgspec.DecodeError, ValueError) as exc:
            raise CassetteError(number, f"not a record: {exc}") from None
        if wire.t < last:
            raise CassetteError(number, f"time runs backwards ({wire.t} after {last})")
        if (wire.ev in ("data", "eof")) != (wire.dir is not None):
            wants = "needs" if wire.dir is None else "takes no"
            raise CassetteError(number, f"a {wire.ev!r} record {wants} dir")
        last = wire.t
        records.append(
            CassetteRecord(
                t=wire.t,
                conn=wire.conn,
                ev=wire.ev,
                dir=wire.dir,
                data=payload,
                redacted=wire.redacted,
                withheld=wire.withheld,
            )
        )
    return header, records
