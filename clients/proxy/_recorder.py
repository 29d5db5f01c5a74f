"""Writing a cassette file while a proxy relays: whole lines, secrets redacted."""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

from shedproto.observe import (
    CassetteHeader,
    CassetteRecord,
    Direction,
    encode_header,
    encode_record,
    redact,
)

__all__ = ["MAX_RECORD_BYTES", "Recorder"]

MAX_RECORD_BYTES = 64 << 20
"""A partial line longer than this is recorded as it stands (redacted like any line)."""


class Recorder:
    """Append connection events to a cassette; data is split into whole lines first.

    ``overwrite`` False (the CLI) refuses an existing file; True (the pytest
    fixture's ``all``/``new_episodes`` modes) replaces the cassette it manages.

    Raises:
        FileExistsError: the file exists and ``overwrite`` is False (nothing written).
        OSError: the file cannot be created.

    """

    def __init__(self, path: str | os.PathLike[str], header: CassetteHeader, *, overwrite: bool):
        self.path = Path(path)
        self.protocol = header.protocol
        self._file: BinaryIO = self.path.open("wb" if overwrite else "xb")
        self._file.write(encode_header(header))
        self.bytes_written = 0
        """Bytes of records written so far (the header not counted)."""
        self._forgotten: set[int] = set()
        self._partial: dict[tuple[int, Direction], bytearray] = {}
        self._last = 0.0

    def _write(self, record: CassetteRecord) -> None:
        if record.conn in self._forgotten:
            return
        self.bytes_written += self._file.write(encode_record(record))

    def forget(self, conn: int) -> None:
        """Record nothing more of ``conn`` (its pending partial lines are dropped unwritten)."""
        self._forgotten.add(conn)
        for key in [key for key in self._partial if key[0] == conn]:
            del self._partial[key]

    def gap(self, t: float, conn: int) -> None:
        """Record that ``conn`` goes on unrecorded from here (partial lines first); forget it."""
        t = self._last = max(t, self._last)
        for key in [key for key in self._partial if key[0] == conn]:
            tail = self._partial.pop(key)
            if tail:
                self._data(t, conn, key[1], bytes(tail))
        self._write(CassetteRecord(t=t, conn=conn, ev="gap"))
        self.forget(conn)

    def event(self, t: float, conn: int, ev: str, direction: Direction | None = None) -> None:
        """Record ``open``/``eof``/``close`` (an ``eof`` first flushes that direction's tail)."""
        t = self._last = max(t, self._last)
        if ev == "eof" and direction is not None:
            tail = self._partial.pop((conn, direction), None)
            if tail:
                self._data(t, conn, direction, bytes(tail))
            self._write(CassetteRecord(t=t, conn=conn, ev="eof", dir=direction))
        elif ev == "open":
            self._write(CassetteRecord(t=t, conn=conn, ev="open"))
        else:
            for key in [key for key in self._partial if key[0] == conn]:
                tail = self._partial.pop(key)
                if tail:
                    self._data(t, conn, key[1], bytes(tail))
            self._write(CassetteRecord(t=t, conn=conn, ev="close"))

    def data(self, t: float, conn: int, direction: Direction, chunk: bytes) -> None:
        """Record ``chunk``: each completed line becomes one (possibly redacted) record."""
        t = self._last = max(t, self._last)
        buffer = self._partial.setdefault((conn, direction), bytearray())
        buffer += chunk
        end = buffer.rfind(b"\n")
        if end < 0:
            if len(buffer) > MAX_RECORD_BYTES:
                self._data(t, conn, direction, bytes(buffer))
                buffer.clear()
            return
        complete = bytes(buffer[: end + 1])
        del buffer[: end + 1]
        start = 0
        while start < len(complete):
            stop = complete.index(b"\n", start) + 1
            self._data(t, conn, direction, complete[start:stop])
            start = stop

    def _data(self, t: float, conn: int, direction: Direction, line: bytes) -> None:
        line, paths, withheld = redact(self.protocol, direction, line)
        self._write(
            CassetteRecord(
                t=t,
                conn=conn,
                ev="data",
                dir=direction,
                data=line,
                redacted=paths,
                withheld=withheld,
            )
        )

    def close(self) -> None:
        """Flush every partial line and close the file."""
        for (conn, direction), tail in list(self._partial.items()):
            if tail:
                self._data(self._last, conn, direction, bytes(tail))
        self._partial.clear()
        self._file.close()
