"""herdr's public ids: ``w1``, ``w1:t1``, ``w1:p2``, numbered in bijective base 32.

The alphabet is ``123456789ABCDEFGHJKMNPQRSTVWXYZ0`` (no I, L, O, U), so the
numbers 1..32 are ``1``..``0`` and 33 is ``11``. Legacy spellings herdr still
accepts on input are parsed too: workspace ``w_<n>`` or ``<n>`` (1-based
position), tab ``t_<ws>_<n>`` or ``<ws>:<n>`` (1-based position), pane
``<ws>-<n>`` (public pane number).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "PUBLIC_ID_ALPHABET",
    "PaneRef",
    "TabRef",
    "WorkspaceRef",
    "decode_public_number",
    "encode_public_number",
    "pane_id",
    "parse_pane_ref",
    "parse_tab_ref",
    "parse_workspace_ref",
    "tab_id",
    "workspace_id",
]

PUBLIC_ID_ALPHABET = "123456789ABCDEFGHJKMNPQRSTVWXYZ0"
"""The 32 digits of herdr's bijective numbering, for the values 1..32."""

_DIGIT = {ch: index + 1 for index, ch in enumerate(PUBLIC_ID_ALPHABET)}


def encode_public_number(value: int) -> str:
    """Encode ``value`` (>= 1) in bijective base 32; 0 encodes as ``"0"`` as in herdr.

    Raises:
        ValueError: ``value`` is negative.

    """
    if value < 0:
        raise ValueError(f"public numbers are not negative, got {value}")
    if value == 0:
        return "0"
    digits = []
    while value > 0:
        value -= 1
        digits.append(PUBLIC_ID_ALPHABET[value % 32])
        value //= 32
    return "".join(reversed(digits))


def decode_public_number(text: str) -> int | None:
    """Decode bijective base 32; ``None`` for a character outside the alphabet.

    As in herdr, the empty string decodes to 0 (which names nothing).
    """
    value = 0
    for ch in text:
        digit = _DIGIT.get(ch)
        if digit is None:
            return None
        value = value * 32 + digit
    return value


def workspace_id(number: int) -> str:
    """Return the public id of the ``number``-th workspace ever created (``w1``)."""
    return "w" + encode_public_number(number)


def tab_id(workspace: str, number: int) -> str:
    """Return the public id of tab ``number`` of ``workspace`` (``w1:t1``)."""
    return f"{workspace}:t{encode_public_number(number)}"


def pane_id(workspace: str, number: int) -> str:
    """Return the public id of pane ``number`` of ``workspace`` (``w1:p2``)."""
    return f"{workspace}:p{encode_public_number(number)}"


@dataclass(frozen=True)
class WorkspaceRef:
    """A parsed workspace reference: an exact id, or a 0-based position (legacy forms)."""

    id: str
    index: int | None = None
    """0-based position from ``w_<n>`` / ``<n>``, tried when no id matches."""


@dataclass(frozen=True)
class TabRef:
    """A parsed tab reference: its workspace plus a tab number or a 0-based position."""

    workspace: WorkspaceRef
    number: int | None = None
    """The public tab number (``:t<n>``)."""
    index: int | None = None
    """0-based position (``t_<ws>_<n>`` or ``<ws>:<n>``)."""


@dataclass(frozen=True)
class PaneRef:
    """A parsed pane reference: its workspace plus the public pane number."""

    workspace: WorkspaceRef
    number: int


def _legacy_index(text: str) -> int | None:
    raw = text[2:] if text.startswith("w_") else text
    if raw.isascii() and raw.isdigit():
        value = int(raw)
        return value - 1 if value >= 1 else None
    return None


def parse_workspace_ref(text: str) -> WorkspaceRef:
    """Parse a workspace reference; resolution (id first, then position) is the caller's."""
    return WorkspaceRef(id=text, index=_legacy_index(text))


def parse_tab_ref(text: str) -> TabRef | None:
    """Parse ``<ws>:t<n>``, ``<ws>:<n>`` or ``t_<ws>_<n>``; ``None`` if it is none of them."""
    if text.startswith("t_"):
        ws_raw, sep, tab_raw = text[2:].rpartition("_")
        if not sep or not (tab_raw.isascii() and tab_raw.isdigit()) or int(tab_raw) < 1:
            return None
        return TabRef(workspace=parse_workspace_ref(ws_raw), index=int(tab_raw) - 1)
    ws_raw, sep, tab_raw = text.rpartition(":")
    if not sep:
        return None
    workspace = parse_workspace_ref(ws_raw)
    if tab_raw.startswith("t"):
        number = decode_public_number(tab_raw[1:])
        return None if number is None else TabRef(workspace=workspace, number=number)
    if tab_raw.isascii() and tab_raw.isdigit() and int(tab_raw) >= 1:
        return TabRef(workspace=workspace, index=int(tab_raw) - 1)
    return None


def parse_pane_ref(text: str) -> PaneRef | None:
    """Parse ``<ws>:p<n>`` or the legacy ``<ws>-<n>``; ``None`` if it is neither."""
    ws_raw, sep, number_raw = text.rpartition(":p")
    if sep:
        number = decode_public_number(number_raw)
        return None if number is None else PaneRef(parse_workspace_ref(ws_raw), number)
    ws_raw, sep, number_raw = text.rpartition("-")
    if sep and number_raw.isascii() and number_raw.isdigit():
        return PaneRef(parse_workspace_ref(ws_raw), int(number_raw))
    return None
