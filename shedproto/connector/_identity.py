"""Identity parts: command ids, source ids, native session ids, session keys.

These are the real program's ``session-contract`` rules: trim (JavaScript
``trim``), refuse empty values and ASCII control characters, lowercase source
ids; a session key is ``encodeURIComponent(sourceId) + "/" +
encodeURIComponent(nativeSessionId)`` of the normalised parts.
"""

from __future__ import annotations

from ._text import encode_uri_component, has_control_character, js_trim

__all__ = [
    "IdentityError",
    "command_identity",
    "normalize_command_id",
    "normalize_native_session_id",
    "normalize_source_id",
    "session_key",
    "split_command_identity",
]

IDENTITY_SEPARATOR = "\x00"


class IdentityError(ValueError):
    """An identity part is empty or holds a control character.

    The message is the real program's (``sourceId must not be empty``,
    ``commandId must not contain control characters``).
    """


def _required_part(value: str, field: str) -> str:
    normalized = js_trim(value)
    if not normalized:
        raise IdentityError(f"{field} must not be empty")
    if has_control_character(normalized):
        raise IdentityError(f"{field} must not contain control characters")
    return normalized


def normalize_source_id(source_id: str) -> str:
    """Trim and lowercase a source id.

    Raises:
        IdentityError: empty after trimming, or holds a control character.

    """
    return _required_part(source_id, "sourceId").lower()


def normalize_command_id(command_id: str) -> str:
    """Trim a command id (case is kept).

    Raises:
        IdentityError: empty after trimming, or holds a control character.

    """
    return _required_part(command_id, "commandId")


def normalize_native_session_id(native_session_id: str) -> str:
    """Trim a provider's native session id (case is kept).

    Raises:
        IdentityError: empty after trimming, or holds a control character.

    """
    return _required_part(native_session_id, "nativeSessionId")


def session_key(source_id: str, native_session_id: str) -> str:
    """Return the session key ``pct(lower(trim(sourceId))) + "/" + pct(trim(nativeSessionId))``.

    ``pct`` is JavaScript's ``encodeURIComponent``, so the key is safe in a URL
    path segment pair and in a file name once ``/`` is handled.

    Raises:
        IdentityError: a part is empty or holds a control character.
        ValueError: a part holds a lone surrogate (``URI malformed``).

    """
    source = normalize_source_id(source_id)
    session = normalize_native_session_id(native_session_id)
    return f"{encode_uri_component(source)}/{encode_uri_component(session)}"


def command_identity(command_id: str, producer: str | None = None) -> str:
    r"""Return the ledger key of a command: its id, or ``producer + "\x00" + id`` (producer queue).

    Command ids and producer ids never hold control characters, so the key is
    unambiguous: the same id on two queues gives two keys.
    """
    if producer is None:
        return command_id
    return f"{producer}{IDENTITY_SEPARATOR}{command_id}"


def split_command_identity(key: str) -> tuple[str | None, str]:
    """Split a ledger key into ``(producer, command_id)``; inverse of :func:`command_identity`."""
    producer, separator, command_id = key.partition(IDENTITY_SEPARATOR)
    if not separator:
        return None, key
    return producer, command_id
