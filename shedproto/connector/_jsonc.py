"""JSONC: JSON with ``//`` and ``/* */`` comments and trailing commas (Deno ``@std/jsonc``).

The scanner rewrites JSONC text into plain JSON in one pass, outside string
literals only: comments become one space (so they still separate tokens) and
a comma followed only by whitespace or comments before ``}`` or ``]`` is
dropped, unless it follows ``[``, ``{`` or another comma (``[,]`` stays an
error). The JSON that results is decoded strictly by msgspec.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

__all__ = ["JsoncSyntaxError", "js_json_parse", "jsonc_to_json", "parse_jsonc"]


class JsoncSyntaxError(ValueError):
    """The text is not valid JSONC; the message says where, for humans only."""


_SKIP = frozenset(" \t\r\n")


def jsonc_to_json(text: str) -> str:  # noqa: PLR0915 - one scanning loop
    """Return ``text`` with comments and trailing commas removed (strings untouched).

    Raises:
        JsoncSyntaxError: an unterminated block comment or string.

    """
    if "/" not in text and "," not in text:
        return text
    out: list[str] = []
    n = len(text)
    i = 0
    start = 0
    last_significant = ""
    pending_comma = -1  # index in ``out`` of a comma that may be trailing
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while True:
                if j >= n:
                    raise JsoncSyntaxError(f"unterminated string at offset {i}")
                d = text[j]
                if d == "\\":
                    j += 2
                    continue
                if d == '"':
                    break
                j += 1
            i = j + 1
            last_significant = '"'
            pending_comma = -1
            continue
        if c == "/" and i + 1 < n and text[i + 1] in "/*":
            out.append(text[start:i])
            if text[i + 1] == "/":
                j = i + 2
                while j < n and text[j] not in "\r\n":
                    j += 1
                i = j
            else:
                end = text.find("*/", i + 2)
                if end < 0:
                    raise JsoncSyntaxError(f"unterminated block comment at offset {i}")
                i = end + 2
            out.append(" ")
            start = i
            continue
        if c in _SKIP:
            i += 1
            continue
        if c in "}]" and pending_comma >= 0:
            out.append(text[start:i])
            out[pending_comma] = out[pending_comma][:-1] + " "
            start = i
            pending_comma = -1
        elif c == ",":
            if last_significant not in ("[", "{", ",", ""):
                out.append(text[start : i + 1])
                start = i + 1
                pending_comma = len(out) - 1
            else:
                pending_comma = -1
        else:
            pending_comma = -1
        last_significant = c
        i += 1
    out.append(text[start:])
    return "".join(out)


_DECODER = msgspec.json.Decoder()
_NOT_JSON: Any = object()


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def js_json_parse(data: bytes, error: msgspec.DecodeError, missing: Any = None) -> Any:
    r"""Retry JSON msgspec refused with ``JSON.parse``'s rules; return ``missing`` if still invalid.

    msgspec rejects escaped lone surrogates (``"\ud800"``) that JavaScript's
    ``JSON.parse`` accepts; the stdlib parser accepts them too. ``NaN`` and
    ``Infinity``, which only Python accepts, stay invalid. Only called after
    msgspec failed, so valid input never pays for it.
    """
    del error
    if b"\\u" not in data:
        return missing
    try:
        return json.loads(data.decode("utf-8", "surrogatepass"), parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return missing


def parse_jsonc(text: str) -> Any:
    """Parse JSONC ``text`` into plain Python values (dict, list, str, int, float, bool, None).

    A leading byte-order mark is ignored.

    Raises:
        JsoncSyntaxError: the text is not valid JSONC.

    """
    if text.startswith("\ufeff"):
        text = text[1:]
    data = jsonc_to_json(text).encode("utf-8", "surrogatepass")
    try:
        return _DECODER.decode(data)
    except RecursionError:
        raise JsoncSyntaxError("JSON is nested too deeply") from None
    except msgspec.DecodeError as exc:
        value = js_json_parse(data, exc, _NOT_JSON)
        if value is _NOT_JSON:
            raise JsoncSyntaxError(str(exc)) from None
        return value
