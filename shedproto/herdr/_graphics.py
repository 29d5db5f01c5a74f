"""``pane.graphics.stream``: the raw frame stream that follows the request's ``ok``.

herdr answers ``pane.graphics.stream`` with ``{"result":{"type":"ok"}}`` (or an
error line, then closes) and then reads frames from the same connection until
the client closes it. A frame is one JSON header line followed by
``data_length`` raw bytes (inline) or, with ``file``, by nothing (the pixels
are in a file the server reads). The server answers only:

- a file frame: its ``pane_graphics_frame_ack`` (``sequence``, ``revision``) or
  an error, with id ``<request id>:file:<sequence>``;
- an inline frame the pane refuses: the error, with id ``<request id>:frame:<n>``
  (``n`` counts inline frames from 1), and the stream ends;
- a malformed header: ``invalid_frame`` (``image_too_large`` past 16 MiB) with
  the request id, and the stream ends.

A header line over 64 KiB ends the stream with no answer; blank header lines
are skipped. The layer the stream drew is cleared when it ends. Source:
herdrdev/herdr src/api/server/pane_graphics_stream.rs:21-330@v0.8.2 (9eb5214)
and src/api/schema/panes.rs:6, 356 (the same in the protocol-22 releases).

:class:`GraphicsStreamReader` is the server's sans-IO side; :func:`encode_frame`
the client's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn

import msgspec

from shedproto._codec import LenientFrame, encode
from shedproto._errors import ErrorCode, LocalProtocolError, RemoteProtocolError

from . import types as t
from ._codes import HerdrErrorCode
from ._envelope import ErrorResponse

__all__ = [
    "GRAPHICS_FILE_FORMATS",
    "MAX_FRAME_BYTES",
    "MAX_FRAME_HEADER_BYTES",
    "GraphicsFrame",
    "GraphicsFrameFile",
    "GraphicsFrameHeader",
    "GraphicsStreamReader",
    "encode_frame",
]

MAX_FRAME_HEADER_BYTES = 64 * 1024
"""herdr's cap on one frame header line (``MAX_STREAM_FRAME_HEADER_BYTES``)."""
MAX_FRAME_BYTES = 16 * 1024 * 1024
"""herdr's cap on one inline frame's data (``PANE_GRAPHICS_STREAM_MAX_BYTES``)."""
GRAPHICS_FILE_FORMATS: frozenset[str] = frozenset({"rgba", "bgra"})
"""The formats a file frame may carry."""


class GraphicsFrameFile(LenientFrame, frozen=True, kw_only=True):
    """A file frame's ``file``: the path of the pixels the server reads."""

    path: str


def _no_placement() -> t.PaneGraphicsPlacementParams:
    return t.PaneGraphicsPlacementParams(grid_cols=0, grid_rows=0, viewport_col=0, viewport_row=0)


class GraphicsFrameHeader(LenientFrame, frozen=True, kw_only=True, omit_defaults=True):
    """One frame's header line (herdr's ``FrameHeader``; unknown fields are ignored)."""

    format: t.PaneGraphicsFormat
    image_width: t.UInt32
    image_height: t.UInt32
    data_length: t.UInt | None = None
    file: GraphicsFrameFile | None = None
    sequence: t.UInt64 = 0
    revision: t.UInt64 = 0
    placement: t.PaneGraphicsPlacementParams = msgspec.field(default_factory=_no_placement)


@dataclass(frozen=True)
class GraphicsFrame:
    """A complete frame: its header, its inline data (``b""`` for a file frame) and answer id.

    ``answer_id`` is the id herdr puts on this frame's answer:
    ``<request id>:file:<sequence>`` or ``<request id>:frame:<n>``.
    """

    header: GraphicsFrameHeader
    data: bytes
    answer_id: str


_HEADER = msgspec.json.Decoder(GraphicsFrameHeader)


def encode_frame(header: GraphicsFrameHeader, data: bytes = b"") -> bytes:
    """Return one frame's bytes: the header line, then ``data``.

    Raises:
        LocalProtocolError: ``INVALID_ARGUMENT``: a file frame with data or a
            format other than rgba/bgra, an inline frame without data, or a
            ``data_length`` that is not ``len(data)`` (it is filled in when unset).

    """
    if header.file is not None:
        if data or header.format not in GRAPHICS_FILE_FORMATS:
            raise LocalProtocolError(
                ErrorCode.INVALID_ARGUMENT, "a file frame carries no data and is rgba or bgra"
            )
        return encode(header) + b"\n"
    if not data:
        raise LocalProtocolError(ErrorCode.INVALID_ARGUMENT, "an inline frame needs data")
    if header.data_length is None:
        header = msgspec.structs.replace(header, data_length=len(data))
    elif header.data_length != len(data):
        raise LocalProtocolError(
            ErrorCode.INVALID_ARGUMENT,
            f"data_length {header.data_length} is not the data's length {len(data)}",
        )
    return b"".join((encode(header), b"\n", data))


class GraphicsStreamReader:
    """The server side of one stream: feed the client's bytes, get complete frames.

    A framer like :class:`~shedproto.LineBuffer` (``feed``), not a connection:
    the stream has no states beyond "open" and "finished" and sends nothing.
    :meth:`feed` returns the frames completed so far. A frame herdr
    refuses raises :class:`~shedproto.RemoteProtocolError` whose ``reply_hint`` is herdr's
    error line (``None``: herdr closes without a word); the reader is then
    finished and every later call returns ``[]``. ``b""`` ends the stream (a
    partial frame is dropped, as herdr drops it).
    """

    def __init__(self, request_id: str) -> None:
        self.request_id = request_id
        self.finished = False
        self.inline_frames = 0
        self._buffer = bytearray()
        self._header: GraphicsFrameHeader | None = None

    def feed(self, data: bytes) -> list[GraphicsFrame]:
        """Feed ``data`` (``b""`` = the client closed); return the frames it completed.

        Raises:
            RemoteProtocolError: a malformed or refused header (see the class).

        """
        if self.finished:
            return []
        if not data:
            self.finished = True
            return []
        self._buffer += data
        frames: list[GraphicsFrame] = []
        while not self.finished:
            frame = self._next()
            if frame is None:
                break
            frames.append(frame)
        return frames

    def _next(self) -> GraphicsFrame | None:
        if self._header is None:
            end = self._buffer.find(b"\n")
            if end < 0:
                if len(self._buffer) > MAX_FRAME_HEADER_BYTES:
                    self._end(None, "stream frame header is too large")
                return None
            if end + 1 > MAX_FRAME_HEADER_BYTES:
                self._end(None, "stream frame header is too large")
            line = bytes(self._buffer[:end]).strip()
            del self._buffer[: end + 1]
            if not line:
                return None if not self._buffer else self._next()
            self._header = self._parse(line)
            if self._header.file is not None:
                header, self._header = self._header, None
                return GraphicsFrame(header, b"", f"{self.request_id}:file:{header.sequence}")
        length = self._header.data_length or 0
        if len(self._buffer) < length:
            return None
        data = bytes(self._buffer[:length])
        del self._buffer[:length]
        header, self._header = self._header, None
        self.inline_frames += 1
        return GraphicsFrame(header, data, f"{self.request_id}:frame:{self.inline_frames}")

    def _parse(self, line: bytes) -> GraphicsFrameHeader:
        try:
            header = _HEADER.decode(line)
        except msgspec.DecodeError as exc:
            self._end(HerdrErrorCode.INVALID_FRAME, f"invalid frame header: {exc}")
        if header.file is not None:
            if header.format not in GRAPHICS_FILE_FORMATS:
                self._end(HerdrErrorCode.INVALID_FRAME, "file frames require rgba or bgra")
            return header
        if header.data_length is None:
            self._end(HerdrErrorCode.INVALID_FRAME, "frame requires data_length or file")
        if header.data_length == 0:
            self._end(HerdrErrorCode.INVALID_FRAME, "frame data_length must be greater than zero")
        if header.data_length > MAX_FRAME_BYTES:
            self._end(HerdrErrorCode.IMAGE_TOO_LARGE, "frame data is too large")
        return header

    def _end(self, code: HerdrErrorCode | None, message: str) -> NoReturn:
        """Finish the stream and raise; ``code`` None: herdr closes without answering."""
        self.finished = True
        self._buffer.clear()
        hint = None
        if code is not None:
            hint = encode(ErrorResponse.of(self.request_id, code, message)) + b"\n"
        raise RemoteProtocolError(
            ErrorCode.SCHEMA_VIOLATION if code is not None else ErrorCode.FRAME_TOO_LARGE,
            message,
            reply_hint=hint,
        )
