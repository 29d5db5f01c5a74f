"""``String.prototype.localeCompare`` order, which the real ledger sorts its keys by.

``localeCompare`` uses ICU's root collation, not code-point order: punctuation
and symbols sort before digits, digits before letters, letters compare
case-insensitively first (``a`` < ``B``) and lowercase wins only a tie
(``a`` < ``A``). :func:`locale_sort_key` reproduces the root collation
exactly for printable ASCII, which command ids in practice are; other
characters sort by their canonical decomposition's base letter, then accents,
then code point (an approximation of ICU, documented in the package).
"""

from __future__ import annotations

import functools
import unicodedata

__all__ = ["locale_sort_key", "locale_sorted"]

# CLDR root order of the printable ASCII non-alphanumerics (space first).
_PUNCTUATION = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"
_PRIMARY: dict[str, int] = {"\x00": 0}
for _index, _char in enumerate(_PUNCTUATION):
    _PRIMARY[_char] = 10 + _index
for _index, _char in enumerate("0123456789"):
    _PRIMARY[_char] = 100 + _index
for _index, _char in enumerate("abcdefghijklmnopqrstuvwxyz"):
    _PRIMARY[_char] = 200 + _index
    _PRIMARY[_char.upper()] = 200 + _index


@functools.lru_cache(maxsize=4096)
def locale_sort_key(value: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], str]:
    """Return a key that orders strings as ICU root collation (``localeCompare``) does.

    Levels: primary (base characters), secondary (accents), tertiary (case),
    then code points to make the order total. Never raises.
    """
    primary: list[int] = []
    secondary: list[int] = []
    tertiary: list[int] = []
    text = value if value.isascii() else unicodedata.normalize("NFD", value)
    for char in text:
        weight = _PRIMARY.get(char)
        if weight is not None:
            primary.append(weight)
            secondary.append(0)
            tertiary.append(1 if char.isupper() else 0)
        elif unicodedata.combining(char):
            if secondary:
                secondary[-1] = secondary[-1] * 1024 + ord(char) - 0x2FF
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            continue  # completely ignorable in ICU
        else:
            lower = char.lower()
            primary.append(1000 + ord(lower[0]) if lower else 1000 + ord(char))
            secondary.append(0)
            tertiary.append(0 if char == lower else 1)
    return tuple(primary), tuple(secondary), tuple(tertiary), value


def locale_sorted(values: list[str] | tuple[str, ...] | set[str] | frozenset[str]) -> list[str]:
    """Return ``values`` sorted as ``[...].sort((a, b) => a.localeCompare(b))`` would."""
    return sorted(values, key=locale_sort_key)
