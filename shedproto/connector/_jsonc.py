"""JSONC: JSON with ``//`` and ``/* */`` comments and trailing commas (Deno ``@std/jsonc``).

The scanner rewrites JSONC text into plain JSON in one pass, outside string
literals only: comments become spaces (so they still separate tokens) and
a comma followed only by whitespace or comments before ``}`` or ``]`` is
dropped, unless it follows ``[``, ``{`` or another comma (``[,]`` stays an
error). Both keep every other character at its offset, so a syntax error in
the rewritten JSON points at the same line and column of the JSONC text.
The JSON that results is decoded strictly by msgspec; only when that fails
is it parsed again by the standard library, for the error's position.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

__all__ = ["JsoncSyntaxError", "js_json_parse", "jsonc_to_json", "parse_jsonc"]


class JsoncSyntaxError(ValueError):
    """The text is not valid JSONC.

    ``line`` and ``column`` (1-based, counted in characters, ``None`` when
    unknown) say where, ``detail`` what; ``str()`` is
    ``line L, column C: <detail>``, for humans only.
    """

    def __init__(self, detail: str, *, line: int | None = None, column: int | None = None) -> None:
        self.detail = detail
        self.line = line
        self.column = column
        where = f"line {line}, column {column}: " if line is not None else ""
        super().__init__(where + detail)

    @classmethod
    def at(cls, text: str, offset: int, detail: str) -> JsoncSyntaxError:
        """Build the error for character ``offset`` of ``text``."""
        offset = max(0, min(offset, len(text)))
        line_start = text.rfind("\n", 0, offset) + 1
        return cls(detail, line=text.count("\n", 0, offset) + 1, column=offset - line_start + 1)


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
                    raise JsoncSyntaxError.at(text, i, "unterminated string")
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
            begin = i
            if text[i + 1] == "/":
                j = i + 2
                while j < n and text[j] not in "\r\n":
                    j += 1
                i = j
            else:
                end = text.find("*/", i + 2)
                if end < 0:
                    raise JsoncSyntaxError.at(text, i, "unterminated block comment")
                i = end + 2
            out.append(" " * (i - begin))  # same length: offsets stay valid for errors
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


_BYTE_OFFSET = re.compile(r"\(byte (\d+)\)$")


def _syntax_error(text: str, data: bytes, error: msgspec.DecodeError) -> JsoncSyntaxError:
    """Locate msgspec's ``error`` in ``text`` (``data`` is its offset-preserving JSON form)."""
    try:
        json.loads(data.decode("utf-8", "surrogatepass"), parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        return JsoncSyntaxError.at(text, exc.pos, exc.msg)
    except (ValueError, RecursionError):
        pass
    detail = str(error)
    match = _BYTE_OFFSET.search(detail)  # for display only: where the stdlib parser agreed
    if match is None:
        return JsoncSyntaxError(detail)
    offset = len(data[: int(match.group(1))].decode("utf-8", "ignore"))
    return JsoncSyntaxError.at(text, offset, detail[: match.start()].rstrip())


def parse_jsonc(text: str) -> Any:
    """Parse JSONC ``text`` into plain Python values (dict, list, str, int, float, bool, None).

    A leading byte-order mark is ignored (columns are counted without it).

    Raises:
        JsoncSyntaxError: the text is not valid JSONC; it carries the line and column.

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
            raise _syntax_error(text, data, exc) from None
        return value
