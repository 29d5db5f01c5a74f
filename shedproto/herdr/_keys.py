"""herdr key names (``pane.send_keys``) and the bytes a pane receives for them.

A key is ``mod+mod+key``: modifiers ``ctrl``/``control``, ``shift``,
``alt``/``option``/``meta``, ``cmd``/``command``/``super``, ``hyper``
(case-insensitive); the key is a name (``enter``/``return``, ``esc``/``escape``,
``tab``, ``backspace``/``bs``, ``space``, the arrows, ``minus``, ``plus``,
``comma``, ``period``, ``slash``, ``backslash``, ``quote``, ``double_quote``,
``semicolon``, ``colon``, ``percent``, ``ampersand``, ``backtick``, ``f<n>``)
or one character (an upper-case letter implies shift). ``C-c`` is an alias of
``ctrl+c`` and ``+`` of ``plus``. Anything else is an unknown key, which herdr
answers with ``invalid_key`` ("unsupported key X").

The bytes are those of herdr's legacy (non-Kitty) keyboard encoding, which is
what a pane that never enabled the Kitty protocol (a shell) receives.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["UnsupportedKeyError", "encode_key", "encode_keys", "parse_key"]

CTRL, SHIFT, ALT, SUPER, HYPER = 1, 2, 4, 8, 16

_MODIFIERS = {
    "ctrl": CTRL,
    "control": CTRL,
    "shift": SHIFT,
    "alt": ALT,
    "option": ALT,
    "meta": ALT,
    "cmd": SUPER,
    "command": SUPER,
    "super": SUPER,
    "hyper": HYPER,
}

_NAMED_CHARS = {
    "space": " ",
    " ": " ",
    "minus": "-",
    "comma": ",",
    "period": ".",
    "slash": "/",
    "backslash": "\\",
    "quote": "'",
    "double_quote": '"',
    "double-quote": '"',
    "semicolon": ";",
    "colon": ":",
    "percent": "%",
    "ampersand": "&",
    "backtick": "`",
    "plus": "+",
}

_NAMED_KEYS = {
    "enter": "enter",
    "return": "enter",
    "esc": "esc",
    "escape": "esc",
    "tab": "tab",
    "backspace": "backspace",
    "bs": "backspace",
    "left": "left",
    "right": "right",
    "up": "up",
    "down": "down",
}

_PLAIN = {
    "enter": b"\r",
    "backspace": b"\x7f",
    "tab": b"\t",
    "backtab": b"\x1b[Z",
    "esc": b"\x1b",
    "left": b"\x1b[D",
    "right": b"\x1b[C",
    "up": b"\x1b[A",
    "down": b"\x1b[B",
}

_ARROW_LETTER = {"up": "A", "down": "B", "right": "C", "left": "D"}
_F_LEGACY = {
    1: b"\x1bOP",
    2: b"\x1bOQ",
    3: b"\x1bOR",
    4: b"\x1bOS",
    5: b"\x1b[15~",
    6: b"\x1b[17~",
    7: b"\x1b[18~",
    8: b"\x1b[19~",
    9: b"\x1b[20~",
    10: b"\x1b[21~",
    11: b"\x1b[23~",
    12: b"\x1b[24~",
}
_F_MODIFIED = {1: "1;{m}P", 2: "1;{m}Q", 3: "1;{m}R", 4: "1;{m}S"}
_F_TILDE = {5: 15, 6: 17, 7: 18, 8: 19, 9: 20, 10: 21, 11: 23, 12: 24}
_SHIFTED_PUNCTUATION = frozenset('!@#$%^&*()_+{}|:"<>?~')

Key = tuple[str, int]
"""A parsed key: (``char:<c>`` / a key name / ``f<n>``, modifier bits)."""


def parse_key(text: str) -> Key | None:
    """Parse one herdr key combo; ``None`` when herdr would call it unsupported."""
    stripped = text.strip()
    alias = {"C-c": "ctrl+c", "c-c": "ctrl+c", "+": "plus"}.get(stripped, stripped)
    modifiers = 0
    key: str | None = None
    for part in alias.split("+"):
        token = part.strip()
        if not token:
            return None
        bit = _MODIFIERS.get(token.lower())
        if bit is not None:
            modifiers |= bit
        elif key is not None:
            return None
        else:
            key = token
    if key is None:
        return None
    lower = key.lower()
    if lower in _NAMED_CHARS:
        return f"char:{_NAMED_CHARS[lower]}", modifiers
    if lower == "tab" and modifiers & SHIFT:
        return "backtab", modifiers & ~SHIFT
    if lower in _NAMED_KEYS:
        return _NAMED_KEYS[lower], modifiers
    if len(key) == 1:
        if key.isascii() and key.isupper():
            return f"char:{key.lower()}", modifiers | SHIFT
        return f"char:{key}", modifiers
    if lower.startswith("f") and lower[1:].isascii() and lower[1:].isdigit():
        number = int(lower[1:])
        return (f"f{number}", modifiers) if number <= 255 else None
    return None


def _xterm_modifier(modifiers: int) -> int:
    return (
        1
        + (1 if modifiers & SHIFT else 0)
        + (2 if modifiers & ALT else 0)
        + (4 if modifiers & CTRL else 0)
    )


def _ctrl_char(ch: str) -> bytes:
    upper = ch.upper() if ch.isascii() else ch
    if "A" <= upper <= "Z":
        return bytes([ord(upper) - 64])
    table = {" ": 0, "@": 0, "2": 0, "[": 27, "3": 27, "\\": 28, "4": 28, "]": 29, "5": 29}
    table |= {"^": 30, "6": 30, "_": 31, "/": 31, "7": 31, "-": 31}
    if ch in table:
        return bytes([table[ch]])
    return ch.encode()


def _legacy_inner(code: str, modifiers: int) -> bytes:
    if code.startswith("char:"):
        ch = code[5:]
        if modifiers & CTRL:
            return _ctrl_char(ch)
        if modifiers == SHIFT and ch.isascii() and ch.islower():
            ch = ch.upper()
        return ch.encode()
    if code.startswith("f"):
        return _F_LEGACY.get(int(code[1:]), b"")
    return _PLAIN[code]


def encode_key(key: Key) -> bytes:
    """Return the bytes herdr writes to a (non-Kitty) pane for the parsed ``key``."""
    code, modifiers = key
    if code.startswith("char:") and modifiers in (0, SHIFT):
        ch = code[5:]
        if modifiers == 0:
            return ch.encode()
        if ch.isascii() and ch.islower():
            return ch.upper().encode()
        if ch.isupper() or ch in _SHIFTED_PUNCTUATION:
            return ch.encode()
    m = _xterm_modifier(modifiers)
    if m > 1:
        if code in _ARROW_LETTER:
            return f"\x1b[1;{m}{_ARROW_LETTER[code]}".encode()
        if code.startswith("f") and not code.startswith("char:"):
            number = int(code[1:])
            if number in _F_MODIFIED:
                return ("\x1b[" + _F_MODIFIED[number].format(m=m)).encode()
            if number in _F_TILDE:
                return f"\x1b[{_F_TILDE[number]};{m}~".encode()
    if modifiers & ALT:
        return b"\x1b" + _legacy_inner(code, modifiers & ~ALT)
    return _legacy_inner(code, modifiers)


class UnsupportedKeyError(ValueError):
    """A key name herdr does not know; ``key`` is the name as given.

    herdr answers it with ``invalid_key`` and the message ``unsupported key <key>``
    (``str(error)``).
    """

    def __init__(self, key: str) -> None:
        super().__init__(f"unsupported key {key}")
        self.key = key


def encode_keys(keys: Iterable[str]) -> bytes:
    """Encode every key name in order and return the concatenated bytes.

    Raises:
        UnsupportedKeyError: for the first name herdr does not know; nothing is encoded.

    """
    out = bytearray()
    for name in keys:
        parsed = parse_key(name)
        if parsed is None:
            raise UnsupportedKeyError(name)
        out += encode_key(parsed)
    return bytes(out)
