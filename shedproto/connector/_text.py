"""JavaScript string semantics the connector's rules are written in.

The real program is TypeScript: its limits count UTF-16 code units
(``String.prototype.length``), it trims with ``String.prototype.trim`` (a
different whitespace set from :meth:`str.strip`), and session keys use
``encodeURIComponent``. These helpers reproduce those exactly so that a value
accepted or rejected here is accepted or rejected there.
"""

from __future__ import annotations

import re

__all__ = [
    "CONTROL_CHARACTER",
    "encode_uri_component",
    "has_control_character",
    "js_length",
    "js_trim",
]

_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)

CONTROL_CHARACTER = re.compile("[\u0000-\u001f\u007f]")
"""ASCII control characters, which identity parts (ids, source ids) reject."""

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_URI_UNRESERVED = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.!~*'()"
)


def js_trim(value: str) -> str:
    r"""Return ``value`` trimmed as JavaScript's ``String.prototype.trim`` does.

    Unlike :meth:`str.strip`, this keeps ``\x1c``-``\x1f`` and ``\x85`` and
    removes ``\ufeff``. Never raises.
    """
    return value.strip(_JS_WHITESPACE)


def js_length(value: str) -> int:
    """Return the JavaScript ``length`` of ``value``: its count of UTF-16 code units."""
    if value.isascii():
        return len(value)
    return len(value) + len(_ASTRAL.findall(value))


def has_control_character(value: str) -> bool:
    """Return whether ``value`` holds an ASCII control character (U+0000-U+001F, U+007F)."""
    return CONTROL_CHARACTER.search(value) is not None


def encode_uri_component(value: str) -> str:
    """Percent-encode ``value`` exactly as JavaScript's ``encodeURIComponent``.

    Raises:
        ValueError: ``value`` holds a lone surrogate (JavaScript throws
            ``URIError: URI malformed``); the message is ``URI malformed``.

    """
    if value.isascii():
        if all(c in _URI_UNRESERVED for c in value):
            return value
    elif _LONE_SURROGATE.search(value):
        raise ValueError("URI malformed")
    out: list[str] = []
    for char in value:
        if char in _URI_UNRESERVED:
            out.append(char)
        else:
            out.extend(f"%{byte:02X}" for byte in char.encode("utf-8"))
    return "".join(out)
