"""Codec conventions shared by every protocol core.

* Frames are frozen, keyword-only msgspec Structs. :class:`StrictFrame`
  rejects unknown fields, :class:`LenientFrame` ignores them; each protocol
  picks per direction what the real program does, then adds its own tag
  field. Subclasses repeat ``frozen=True`` so that type checkers see it
  (msgspec inherits it at runtime; mypy's dataclass_transform does not):
  ``class Ping(LenientFrame, frozen=True, tag_field="type", tag="ping")``.
* One :class:`msgspec.json.Decoder` per type, built once: :func:`decoder_for`.
* :func:`encode_line` returns one NDJSON line including its newline; msgspec
  never emits a raw newline inside JSON, so the result is always one line.
* :func:`decode_frame` decodes one line and maps msgspec failures onto
  :class:`~shedproto.RemoteProtocolError` codes with the JSON path kept.

Frame Structs set ``gc=False``: decoded frames cannot form reference cycles,
and keeping them out of the cyclic GC avoids the 2-3x slowdown measured when
many decoded frames are retained (perf-baseline bench 2).
"""

from __future__ import annotations

import functools
from typing import Any, TypeVar

import msgspec

from ._errors import remote_error_from_msgspec

__all__ = [
    "LenientFrame",
    "StrictFrame",
    "decode_frame",
    "decoder_for",
    "encode",
    "encode_line",
]

T = TypeVar("T")


class StrictFrame(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, gc=False):
    """Base for frames whose reader rejects unknown fields (e.g. mac desktop dialect)."""


class LenientFrame(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Base for frames whose reader ignores unknown fields (host-agent, herdr, Tauri)."""


_ENCODER = msgspec.json.Encoder()


@functools.cache
def decoder_for(type_: Any) -> msgspec.json.Decoder[Any]:
    """Return the shared JSON decoder for ``type_`` (a Struct, union or any msgspec type).

    Decoders are built on first use and cached for the life of the process.

    Raises:
        TypeError: ``type_`` is not a type msgspec can decode into.

    """
    return msgspec.json.Decoder(type_)


def decode_frame(
    decoder: msgspec.json.Decoder[T], line: bytes, *, reply_hint: bytes | None = None
) -> T:
    """Decode one frame with ``decoder``.

    Raises:
        RemoteProtocolError: ``MALFORMED_FRAME`` for invalid JSON or UTF-8,
            ``SCHEMA_VIOLATION`` (with ``path``) for a shape mismatch. The
            error carries ``reply_hint`` when one is given.

    """
    try:
        return decoder.decode(line)
    except msgspec.DecodeError as exc:
        raise remote_error_from_msgspec(exc, reply_hint=reply_hint) from None


def encode(obj: Any) -> bytes:
    """Encode ``obj`` to compact JSON with the shared encoder (no newline).

    Raises:
        TypeError: ``obj`` holds a value msgspec cannot encode.

    """
    return _ENCODER.encode(obj)


def encode_line(obj: Any) -> bytes:
    """Encode ``obj`` as one NDJSON line, terminated by a newline.

    Raises:
        TypeError: ``obj`` holds a value msgspec cannot encode.

    """
    return _ENCODER.encode(obj) + b"\n"
