r"""How the mac server words decode failures: Swift ``DecodingError`` descriptions.

The mac server answers ``"\(error)"`` for a failed ``JSONDecoder`` decode,
which prints the error case, the coding path and a debug description. These
helpers produce that text in its classic Foundation form for the cases the
envelope and params layers meet (a missing key, a null, a type mismatch).
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Any

__all__ = [
    "SwiftEnum",
    "swift_bad_enum",
    "swift_context",
    "swift_enum",
    "swift_index",
    "swift_key",
    "swift_kind",
    "swift_mismatch",
    "swift_missing",
    "swift_null",
    "swift_type",
]


@dataclass(frozen=True)
class SwiftEnum:
    """Marks a ``Literal`` params field as a Swift ``String``-backed enum named ``name``.

    Put it in ``Annotated[Literal[...], SwiftEnum("RcKind")]``; the mac
    decoder then words a value outside the literal as Swift's ``dataCorrupted``.
    """

    name: str


def swift_enum(annotation: Any) -> tuple[str, tuple[str, ...]] | None:
    """Return ``(Swift enum name, raw values)`` for a :class:`SwiftEnum` field, else ``None``.

    An optional field (``Annotated[...] | None``) is its enum's ``Optional``.
    """
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        return swift_enum(members[0]) if len(members) == 1 else None
    if typing.get_origin(annotation) is not typing.Annotated:
        return None
    base, *extras = typing.get_args(annotation)
    for extra in extras:
        if isinstance(extra, SwiftEnum):
            return extra.name, tuple(typing.get_args(base))
    return None


def swift_bad_enum(name: str, value: str, path: list[str]) -> str:
    """Describe ``dataCorrupted`` for a raw value no case of enum ``name`` has."""
    description = f"Cannot initialize {name} from invalid String value {value}"
    return f"dataCorrupted({swift_context(path, description)})"


def swift_kind(value: Any) -> str:
    """Name a JSON value's type as JSONDecoder does (numbers and booleans are NSNumber)."""
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a dictionary"
    return "a number"


class _IndexKey(str):
    """An array position in a coding path (see :func:`swift_index`)."""

    __slots__ = ("position",)

    position: int


def swift_index(index: int) -> str:
    """Return a coding-path entry for array element ``index`` (for ``swift_context``).

    Rendered as swift-foundation's ``JSONDecoder`` names it,
    ``_CodingKey(stringValue: "Index 0", intValue: 0)`` (older Foundation said
    ``_JSONKey``: the stand-in follows the current one).
    """
    key = _IndexKey(f"Index {index}")
    key.position = index
    return key


def swift_key(key: str) -> str:
    """Describe a synthesized coding key (or an array index from :func:`swift_index`)."""
    if isinstance(key, _IndexKey):
        return f'_CodingKey(stringValue: "{key}", intValue: {key.position})'
    return f'CodingKeys(stringValue: "{key}", intValue: nil)'


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def swift_context(path: list[str], description: str) -> str:
    """Describe a ``DecodingError.Context`` at ``path`` (key names)."""
    keys = ", ".join(swift_key(key) for key in path)
    return (
        f"Swift.DecodingError.Context(codingPath: [{keys}], "
        f"debugDescription: {_quoted(description)}, underlyingError: nil)"
    )


def swift_type(annotation: Any) -> tuple[str, str] | None:
    """Return (qualified, short) Swift type names for a params annotation, or ``None``."""
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        return swift_type(members[0]) if len(members) == 1 else None
    if annotation is str:
        return "Swift.String", "String"
    if annotation is bool:
        return "Swift.Bool", "Bool"
    if annotation is int:
        return "Swift.Int", "Int"
    if annotation is list or origin is list:
        return "Swift.Array<Any>", "Array<Any>"
    if annotation is dict or origin is dict:
        return "Swift.Dictionary<Swift.String, Any>", "Dictionary<String, Any>"
    return None


def swift_missing(key: str, path: list[str]) -> str:
    """Describe ``keyNotFound`` for ``key``."""
    description = f'No value associated with key {swift_key(key)} ("{key}").'
    return f"keyNotFound({swift_key(key)}, {swift_context(path, description)})"


def swift_null(qualified: str, short: str, path: list[str]) -> str:
    """Describe ``valueNotFound`` (a null where a value is required)."""
    description = f"Expected {short} value but found null instead."
    return f"valueNotFound({qualified}, {swift_context(path, description)})"


def swift_mismatch(qualified: str, short: str, value: Any, path: list[str]) -> str:
    """Describe ``typeMismatch`` for ``value``."""
    description = f"Expected to decode {short} but found {swift_kind(value)} instead."
    return f"typeMismatch({qualified}, {swift_context(path, description)})"
