"""Diagnostics: one deviation from a protocol, found in one frame of one connection."""

from __future__ import annotations

from typing import Literal

import msgspec

from shedproto._errors import ErrorCode, ProtocolError

__all__ = [
    "Diagnostic",
    "DiagnosticKind",
    "Direction",
    "kind_of",
]

Direction = Literal["c2s", "s2c"]
"""Which way the bytes went: client to server or server to client."""

DiagnosticKind = Literal[
    "malformed",
    "unknown_op",
    "schema",
    "illegal_state",
    "unknown_error_code",
    "over_cap",
    "unsolicited_answer",
    "out_of_order",
    "version_mismatch",
    "truncated",
]
"""Every kind of deviation an observer reports."""

_KINDS: dict[ErrorCode, DiagnosticKind] = {
    ErrorCode.MALFORMED_FRAME: "malformed",
    ErrorCode.UNKNOWN_TYPE: "unknown_op",
    ErrorCode.SCHEMA_VIOLATION: "schema",
    ErrorCode.UNEXPECTED_EVENT: "illegal_state",
    ErrorCode.FRAME_TOO_LARGE: "over_cap",
    ErrorCode.TRUNCATED_FRAME: "truncated",
    ErrorCode.CONNECTION_CLOSED: "truncated",
    ErrorCode.VERSION_UNSUPPORTED: "version_mismatch",
    ErrorCode.INVALID_ARGUMENT: "illegal_state",
}


def kind_of(error: ProtocolError) -> DiagnosticKind:
    """Return the diagnostic kind for a core error (by its stable code, never its text)."""
    return _KINDS[error.code]


class Diagnostic(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One deviation: what kind, where (connection, direction, frame index), and why.

    ``frame`` counts the complete lines of that direction from 0; ``path`` is
    the JSON path of a schema violation when the decoder named one.
    """

    kind: DiagnosticKind
    protocol: str
    connection: int
    direction: Direction
    frame: int
    message: str
    path: str | None = None

    def human(self) -> str:
        """Return the one-line human rendering (no newline)."""
        where = f" at {self.path}" if self.path else ""
        return (
            f"{self.protocol} conn {self.connection} {self.direction} frame {self.frame}: "
            f"{self.kind}: {self.message}{where}"
        )

    def ndjson(self) -> bytes:
        """Return the diagnostic as one NDJSON line (with its newline)."""
        return msgspec.json.encode(self) + b"\n"
