"""The connector's error types: every one carries the real program's exact message.

Each is a :class:`~shedproto.RemoteProtocolError` (bad data from a queue, a
ledger or a peer) or a :class:`~shedproto.LocalProtocolError` (the caller
passed a bad argument), so code that already handles the library's two
families handles these too; the configuration errors are ``ValueError``
(a local file is not a peer) carrying the same ``code``/``message``/``path``.
``str(error)`` is the agents-host message verbatim; branch on the class and
``code``, never on the text.
"""

from __future__ import annotations

from shedproto import ErrorCode, LocalProtocolError, RemoteProtocolError

__all__ = [
    "CliOptionsError",
    "ConfigError",
    "ConfigFileError",
    "LedgerError",
    "LedgerExhaustedError",
    "ReceiptError",
    "ReceiptIndexError",
    "TargetError",
]


class _LocalConfigError(ValueError):
    """A local configuration problem: a ``ValueError`` (a file is not a peer) with a code."""

    def __init__(self, code: ErrorCode, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.path = path


class ConfigFileError(_LocalConfigError):
    """A configuration file could not be read or is not valid JSONC.

    ``code`` is ``MALFORMED_FRAME`` for a syntax error and ``INVALID_ARGUMENT``
    for a missing or unreadable file.
    """


class ConfigError(_LocalConfigError):
    """An agents-host configuration value failed validation (``code`` ``SCHEMA_VIOLATION``).

    ``message`` is the real program's message (``configuration.sources must be
    a non-empty array``); ``path`` is the JSON path of the offending value when
    one applies (``$.sources[0].driver``).
    """

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(ErrorCode.SCHEMA_VIOLATION, message, path=path)


class CliOptionsError(LocalProtocolError):
    """The agents-host command line is invalid (``missing required option: --config``)."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.INVALID_ARGUMENT, message)


class ReceiptError(RemoteProtocolError):
    """A command receipt failed ``parseCommandReceipt`` validation.

    The message is prefixed by its context (``command receipt``,
    ``command ledger receipt``) and ends with ``: <commandId>``.
    """

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.SCHEMA_VIOLATION, message)


class ReceiptIndexError(RemoteProtocolError):
    """An existing command receipt index is malformed; it must be left untouched."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.SCHEMA_VIOLATION, message)


class LedgerError(RemoteProtocolError):
    """A command ledger file is malformed (``command ledger must contain an object``).

    ``code`` is ``MALFORMED_FRAME`` when the bytes are not JSON and
    ``SCHEMA_VIOLATION`` otherwise.
    """


class TargetError(LocalProtocolError):
    """A target location cannot be derived (``HOME is required to locate ...``)."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.INVALID_ARGUMENT, message)


class LedgerExhaustedError(LocalProtocolError):
    """The ledger generation reached ``Number.MAX_SAFE_INTEGER``; nothing more can be written."""

    def __init__(self) -> None:
        super().__init__(ErrorCode.INVALID_ARGUMENT, "command ledger generation is exhausted")
