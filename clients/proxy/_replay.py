"""The replay server: serve a cassette's recorded server side to a client.

Each accepted connection plays one recorded connection (an *episode*) as a
script, in recorded order: server data is written, each recorded client line
is awaited and compared, a recorded half-close is awaited or sent. Episodes
are chosen in order, except that when the client speaks first its first line
picks the first unplayed episode with the same key (so a client that opens
connections in another order still gets the right answers).

Lines are compared by their *key*, the decoded JSON value with the fields a
client legitimately changes between runs removed (host-agent: ``id``,
``ts`` and ``client.pid``) and secrets redacted as in the cassette; a
line that is not JSON is compared byte for byte.
A mismatch is reported with the expected and the received frame; a
received request is answered with the protocol's own error where it has one
(:func:`~shedproto.observe.not_in_cassette_answer`) and the connection is
closed; the server stays up. A connection beyond the cassette's recordings
is closed at once, without waiting for the client to speak (a status client
waits for the server). A recorded connection with a ``gap`` (the recording
proxy's observers fell behind) is played up to the gap, then closed, and
reported as a mismatch (``gap`` set): the cassette cannot say what followed.
"""

from __future__ import annotations

import contextlib
import os
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import msgspec

from shedproto import FrameQueue, FramingError, FramingPolicy
from shedproto._framing import BlankLines, EofTail
from shedproto.observe import (
    CassetteHeader,
    CassetteRecord,
    decode_cassette,
    not_in_cassette_answer,
    redact,
)
from shedproto.servers._receive import SocketPump
from shedproto.servers._unix import UnixServer

from ._relay import RECEIVE_CHUNK

__all__ = ["Episode", "ReplayMismatch", "ReplayServer", "episodes_of", "frame_key"]

_LINES = FramingPolicy(
    max_frame_bytes=256 << 20, blank_lines=BlankLines.SKIP_WHITESPACE, eof_tail=EofTail.FRAME
)
_GONE = (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError)
_VOLATILE: dict[str, tuple[str, ...]] = {"host-agent": ("id", "ts")}


@dataclass
class Episode:
    """One recorded connection: its id in the cassette and its records in order."""

    conn: int
    records: list[CassetteRecord] = field(default_factory=list)

    def first_client_line(self) -> bytes | None:
        """Return the first non-blank client line (``None``: the server speaks first)."""
        for record in self.records:
            if record.ev == "data" and record.dir == "s2c":
                return None
            if record.ev == "data" and record.dir == "c2s" and record.data.strip():
                return record.data
        return None


class ReplayMismatch(msgspec.Struct, frozen=True, kw_only=True):
    """A client frame the cassette did not expect (``expected`` ``None``: nothing more).

    ``gap``: the recorded connection has a gap (nothing was recorded past it);
    the replay played it up to there and closed the connection.
    """

    connection: int
    episode: int | None
    expected: str | None
    received: str | None
    gap: bool = False

    def human(self) -> str:
        """Return the one-line rendering."""
        where = f"recorded connection {self.episode}" if self.episode else "no recorded connection"
        if self.gap:
            return (
                f"replay connection {self.connection} ({where}): the cassette has a gap here "
                "(the recording proxy's observers fell behind, the rest was not recorded); "
                "played up to it, then closed"
            )
        return (
            f"replay connection {self.connection} ({where}): expected "
            f"{self.expected or 'nothing more'}, received {self.received or 'end of stream'}"
        )


def episodes_of(records: list[CassetteRecord]) -> list[Episode]:
    """Group a cassette's records by connection, in order of their first record."""
    episodes: dict[int, Episode] = {}
    for record in records:
        episodes.setdefault(record.conn, Episode(record.conn)).records.append(record)
    return list(episodes.values())


def frame_key(protocol: str, line: bytes) -> Any:
    """Return what must be equal for a received client line to match a recorded one.

    The line is redacted first, as the recorder redacted the recorded one.
    """
    line = _redacted_line(protocol, line)
    try:
        value = msgspec.json.decode(line)
    except msgspec.DecodeError:
        return line.strip()
    if isinstance(value, dict):
        for name in _VOLATILE.get(protocol, ()):
            value.pop(name, None)
        client = value.get("client")
        if protocol == "host-agent" and isinstance(client, dict):
            client.pop("pid", None)
    return value


def _redacted_line(protocol: str, line: bytes) -> bytes:
    """Return a received client line as a mismatch shows it: its secrets redacted."""
    return redact(protocol, "c2s", line).line


def _show(line: bytes | None) -> str | None:
    if line is None:
        return None
    text = line.rstrip(b"\n").decode("utf-8", "backslashreplace")
    return text if len(text) <= 300 else text[:300] + "..."


class ReplayServer:
    """Serve the cassette at ``cassette`` on ``listen``; mismatches go to ``on_mismatch``.

    Raises (from the constructor):
        CassetteError: the cassette cannot be read.
        OSError: the file cannot be opened.

    """

    def __init__(
        self,
        cassette: str | os.PathLike[str],
        listen: str | os.PathLike[str],
        *,
        on_mismatch: Callable[[ReplayMismatch], None] = lambda mismatch: None,
    ) -> None:
        header, records = decode_cassette(Path(cassette).read_bytes())
        self.header: CassetteHeader = header
        self.unplayed: deque[Episode] = deque(episodes_of(records))
        self.mismatches: list[ReplayMismatch] = []
        self.on_mismatch = on_mismatch
        self.server = UnixServer(listen, self._handle, grace=1.0)
        self._connections = 0

    async def serve(
        self, *, task_status: anyio.abc.TaskStatus[Path] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Bind ``listen``, report readiness with its path, serve until :meth:`shutdown`."""
        await self.server.serve(task_status=task_status)

    def shutdown(self) -> None:
        """Stop accepting; open connections get a second to finish."""
        self.server.shutdown()

    def _mismatch(
        self,
        conn: int,
        episode: Episode | None,
        expected: bytes | None,
        received: bytes | None,
        *,
        gap: bool = False,
    ) -> ReplayMismatch:
        mismatch = ReplayMismatch(
            connection=conn,
            episode=episode.conn if episode else None,
            expected=_show(expected),
            received=_show(received and _redacted_line(self.header.protocol, received)),
            gap=gap,
        )
        self.mismatches.append(mismatch)
        self.on_mismatch(mismatch)
        return mismatch

    def _choose(self, first: bytes | None) -> Episode:
        if first is not None:
            key = frame_key(self.header.protocol, first)
            for episode in self.unplayed:
                line = episode.first_client_line()
                if line is not None and frame_key(self.header.protocol, line) == key:
                    self.unplayed.remove(episode)
                    return episode
        return self.unplayed.popleft()

    async def _handle(self, stream: anyio.abc.SocketStream) -> None:
        self._connections += 1
        conn = self._connections
        frames = FrameQueue(_LINES)
        pump = SocketPump(stream)  # guarded waits: see shedproto.servers._receive.send_all
        first: bytes | None = None
        if not self.unplayed:  # beyond the cassette: close at once, never wait for the client
            self._mismatch(conn, None, None, None)
            return
        if self.unplayed[0].first_client_line() is not None:
            first = await _next_line(pump, frames)
        episode = self._choose(first)
        await self._play(conn, episode, pump, frames, first)

    async def _refuse(
        self,
        conn: int,
        episode: Episode,
        pump: SocketPump,
        expected: bytes | None,
        received: bytes | None,
    ) -> None:
        """Report a mismatch; answer ``received`` with the protocol's error (then the close)."""
        mismatch = self._mismatch(conn, episode, expected, received)
        if received is None:
            return
        header = self.header
        message = (
            f"replay: this request is not in the cassette (recorded connection {episode.conn} "
            f"expected {mismatch.expected or 'nothing more'})"
        )
        answer = not_in_cassette_answer(header.protocol, header.dialect, received, message)
        if answer is not None:
            with contextlib.suppress(*_GONE):
                await pump.send(answer)

    async def _play(
        self,
        conn: int,
        episode: Episode,
        pump: SocketPump,
        frames: FrameQueue,
        first: bytes | None,
    ) -> None:
        protocol = self.header.protocol
        pending = first
        for record in episode.records:
            if record.ev == "data" and record.dir == "s2c":
                with contextlib.suppress(*_GONE):
                    await pump.send(record.data)
            elif record.ev == "data" and record.dir == "c2s":
                if not record.data.strip():
                    continue
                received = pending if pending is not None else await _next_line(pump, frames)
                pending = None
                if received is None or frame_key(protocol, received) != frame_key(
                    protocol, record.data
                ):
                    await self._refuse(conn, episode, pump, record.data, received)
                    return
            elif record.ev == "eof" and record.dir == "s2c":
                with contextlib.suppress(*_GONE):
                    await pump.stream.send_eof()
            elif record.ev == "eof" and record.dir == "c2s":
                received = await _next_line(pump, frames)
                if received is not None:
                    await self._refuse(conn, episode, pump, None, received)
                    return
            elif record.ev == "gap":
                self._mismatch(conn, episode, None, None, gap=True)
                return


async def _next_line(pump: SocketPump, frames: FrameQueue) -> bytes | None:
    """Return the client's next line (without its newline), or ``None`` at end of stream."""
    while True:
        try:
            line = frames.next_frame()
        except FramingError:
            return None
        if line is not None:
            return line
        if frames.eof:
            return None
        frames.feed(await pump.receive(RECEIVE_CHUNK))  # b"": the end, or the client is gone
