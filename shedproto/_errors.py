"""The error model shared by every protocol core.

Two families, after h11: :class:`LocalProtocolError` means *this side* misused
the API (sent an event in the wrong state, built an invalid frame);
:class:`RemoteProtocolError` means *the peer* sent bad data. Both carry a
stable :class:`ErrorCode`, a human message, the JSON path of a schema error
(msgspec's ``$.a.b[0]`` form) and an optional reply hint: the already-encoded
frame the I/O shell should write back before it acts on the error. Code that
reacts to an error branches on ``code``, never on the message text.
"""

from __future__ import annotations

import re
from enum import Enum

import msgspec

__all__ = [
    "ErrorCode",
    "ErrorReport",
    "ProtocolError",
    "LocalProtocolError",
    "RemoteProtocolError",
    "FramingError",
    "remote_error_from_msgspec",
]


class ErrorCode(str, Enum):
    """Stable, protocol-neutral error codes; values are the wire-safe spelling.

    Protocols map these onto their own wire codes (``parse-error``,
    ``invalid_request``, ...) in their reply hints; these codes are the
    library's own vocabulary and never change meaning between releases.
    """

    MALFORMED_FRAME = "malformed_frame"
    """The bytes are not valid JSON (or not valid UTF-8)."""
    SCHEMA_VIOLATION = "schema_violation"
    """Valid JSON whose shape or values do not match the frame type."""
    UNKNOWN_TYPE = "unknown_type"
    """A frame discriminator (type, op, method) the protocol does not know."""
    FRAME_TOO_LARGE = "frame_too_large"
    """A frame exceeded the protocol's ``max_frame_bytes``."""
    TRUNCATED_FRAME = "truncated_frame"
    """The stream ended inside a frame (no terminating newline)."""
    UNEXPECTED_EVENT = "unexpected_event"
    """An event that the connection's state does not allow."""
    VERSION_UNSUPPORTED = "version_unsupported"
    """The peer speaks a protocol version this library does not."""
    CONNECTION_CLOSED = "connection_closed"
    """The peer closed the connection before the exchange completed."""
    INVALID_ARGUMENT = "invalid_argument"
    """The caller passed a value the API cannot accept."""


class ProtocolError(Exception):
    """Base class of both error families; never raised directly.

    Attributes:
        code: the stable :class:`ErrorCode`.
        message: a human-readable explanation (also ``str(error)``).
        path: for schema errors, the msgspec JSON path (``$.params.id``), else ``None``.
        reply_hint: the encoded frame (with its newline) the shell should send
            back to the peer, or ``None`` when the protocol answers nothing.

    """

    code: ErrorCode
    message: str
    path: str | None
    reply_hint: bytes | None

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        path: str | None = None,
        reply_hint: bytes | None = None,
    ) -> None:
        if type(self) is ProtocolError:
            raise TypeError("ProtocolError is abstract; raise Local- or RemoteProtocolError")
        super().__init__(message)
        self.code = code
        self.message = message
        self.path = path
        self.reply_hint = reply_hint

    def __repr__(self) -> str:
        extra = f", path={self.path!r}" if self.path is not None else ""
        return f"{type(self).__name__}({self.code.value!r}, {self.message!r}{extra})"


class LocalProtocolError(ProtocolError):
    """The caller misused the API: an event sent in the wrong state, a bad argument.

    The connection that raised it is left unchanged unless its docstring says otherwise.
    """


class RemoteProtocolError(ProtocolError):
    """The peer sent data that violates the protocol.

    ``reply_hint``, when set, is what the real program answers before it acts
    (closes the connection, skips the line, ...).
    """


class FramingError(RemoteProtocolError):
    """A framing violation (over-cap or truncated frame) found by a :class:`LineBuffer`.

    ``frames_before`` holds the complete frames that preceded the violation in
    the same ``feed`` call, so that raising never loses data the peer sent
    correctly: process them first, then act on the error.
    """

    frames_before: tuple[bytes, ...]

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        frames_before: tuple[bytes, ...] = (),
        reply_hint: bytes | None = None,
    ) -> None:
        super().__init__(code, message, reply_hint=reply_hint)
        self.frames_before = frames_before


_PATH_SUFFIX = re.compile(r" - at `(\$[^`]*)`$")


def remote_error_from_msgspec(
    exc: msgspec.DecodeError, *, reply_hint: bytes | None = None
) -> RemoteProtocolError:
    """Translate a msgspec decode failure into a :class:`RemoteProtocolError`.

    ``msgspec.ValidationError`` (valid JSON, wrong shape) becomes
    ``SCHEMA_VIOLATION`` with the JSON path split out of msgspec's message;
    any other ``DecodeError`` (bad JSON, bad UTF-8) becomes ``MALFORMED_FRAME``.
    This never raises.
    """
    text = str(exc)
    match = _PATH_SUFFIX.search(text)
    path = match.group(1) if match else None
    message = text[: match.start()] if match else text
    if isinstance(exc, msgspec.ValidationError):
        return RemoteProtocolError(
            ErrorCode.SCHEMA_VIOLATION, message, path=path, reply_hint=reply_hint
        )
    return RemoteProtocolError(ErrorCode.MALFORMED_FRAME, message, path=path, reply_hint=reply_hint)


class ErrorReport(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The JSON shape in which the CLI and servers report a library error.

    ``code`` is an :class:`ErrorCode` value or a protocol's own wire code.
    """

    code: str
    message: str
    path: str | None = None

    @classmethod
    def from_error(cls, exc: ProtocolError) -> ErrorReport:
        """Build the report for ``exc``; never raises."""
        return cls(code=exc.code.value, message=exc.message, path=exc.path)
