"""shed-desktop v0.0.14's RC pane classifier: a tmux pane capture -> a session state and URL.

Backs ``rc.classify`` (v0.0.14 only; the newer app dropped it with the RC
session model). Both v0.0.14 apps carry the same rules, the Tauri app in
charliek/shed-desktop ``core/shed-core/src/rc.rs:397-486@5a762e8`` and the mac
app in ``Sources/ShedKit/RC/RemoteControl.swift:262-321@5a762e8`` (the Swift
version's extra ``Connected``/``Remote Control active`` branches reach the same
answers: a URL means ready). Pure: no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal, get_args

__all__ = [
    "MAC_RC_KINDS",
    "MAC_TYPED_INPUT_KINDS",
    "RC_KINDS",
    "RC_STATES",
    "RcKindName",
    "RcStateName",
    "classify_pane",
    "is_safe_rc_value",
    "normalize_rc_prompt",
]

RcKindName = Literal["claude-rc", "claude-broker", "shell"]
"""An RC session kind's wire value (``RcKind``, kebab-case; ``rc.rs:26-34@5a762e8``)."""
RcStateName = Literal["starting", "ready", "reconnecting", "needs-trust", "needs-auth", "dead"]
"""An RC session state's wire value (``RcState``; ``rc.rs:53-63@5a762e8``)."""

RC_KINDS: tuple[str, ...] = get_args(RcKindName)
"""The kinds, in the apps' declaration order (serde and Swift list them so)."""
RC_STATES: tuple[str, ...] = get_args(RcStateName)
"""The states, in declaration order."""
MAC_RC_KINDS: tuple[str, ...] = (
    "claude-rc",
    "claude-broker",
    "codex",
    "opencode",
    "cursor",
    "shell",
)
"""The newer mac app's known ``RcKind`` cases (charliek/shed
``desktop/Sources/ShedKit/RC/RemoteControl.swift:19-111@1545191`` ``RcKind``). Its decoder
is open: any other string is kept verbatim as ``.other`` (no URL, no prompt), so
``rc.launch``/``rc.inject_test`` accept every string ``kind`` there; v0.0.14 knows
:data:`RC_KINDS` only and refuses the rest (``dataCorrupted``)."""
MAC_TYPED_INPUT_KINDS: frozenset[str] = frozenset(
    {"claude-rc", "codex", "opencode", "cursor", "shell"}
)
"""mac ``RcKind.acceptsTypedInput``: every known kind but ``claude-broker``; an unknown
kind takes no prompt (``RemoteControl.swift:75-80@1545191``; v0.0.14: ``claude-rc``, ``shell``)."""

_TRUST_FOLDER = re.compile(r"Yes,\s*I trust this folder", re.IGNORECASE)
_RECONNECTING = re.compile(r"\bReconnecting\b")
_URLS = {
    "claude-broker": re.compile(r"https?://claude\.ai/code\?environment=env_[A-Za-z0-9_-]+"),
    "claude-rc": re.compile(r"https?://claude\.ai/code/session_[A-Za-z0-9_-]+"),
}
WHITE_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""Unicode ``White_Space``: what Rust's ``str::trim`` strips (Python's ``strip()`` strips more)."""
_NEEDS_TRUST = ("workspace not trusted", "quick safety check")
_NEEDS_AUTH = ("requires a claude.ai subscription", "not logged in", "claude auth login")


def _url(kind: str, pane: str) -> str | None:
    pattern = _URLS.get(kind)
    if pattern is None:
        return None
    found = pattern.search(pane)
    return found.group(0) if found else None


def classify_pane(kind: str, pane: str) -> tuple[str, str | None]:
    """Return ``(state, url)`` for a pane capture of a session of ``kind``.

    Trust prompts, then sign-in prompts win (not for ``shell``); a broker's
    ``Reconnecting`` wins over its URL; otherwise a claude.ai URL of the
    kind's form means ``ready`` and its absence ``starting``; a ``shell`` pane
    is ``starting`` while blank. Raises ``ValueError`` for an unknown kind.
    """
    if kind not in RC_KINDS:
        raise ValueError(f"unknown RC kind: {kind!r}")
    if kind != "shell":
        lower = pane.lower()
        if any(text in lower for text in _NEEDS_TRUST) or _TRUST_FOLDER.search(pane):
            return "needs-trust", _url(kind, pane)
        if any(text in lower for text in _NEEDS_AUTH):
            return "needs-auth", _url(kind, pane)
    if kind == "shell":
        return ("starting" if not pane.strip(WHITE_SPACE) else "ready"), None
    url = _url(kind, pane)
    if kind == "claude-broker" and _RECONNECTING.search(pane):
        return "reconnecting", url
    return ("ready", url) if url is not None else ("starting", None)


PROMPT_CAP = 2000
"""The kickoff line's cap in UTF-8 bytes (shed-core ``rc.rs:233-239@5a762e8``)."""


def is_safe_rc_value(text: str, *, swift: bool = False) -> bool:
    """Whether ``text`` has no control character.

    shed-core (Tauri) refuses Unicode ``Cc`` (C0, DEL, C1); the mac app refuses
    ``CharacterSet.controlCharacters``, ``Cc`` and ``Cf`` (format characters such as
    U+200B or U+202E too; ``RemoteControl.isSafeRCValue``, ``RemoteControl.swift:166-168``
    @5a762e8 and charliek/shed ``:527-529@1545191``): ``swift=True``.
    """
    if swift:
        return not any(unicodedata.category(c) in ("Cc", "Cf") for c in text)
    return not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in text)


def normalize_rc_prompt(raw: str | None, kind: str, *, swift: bool = False) -> str | None:
    """Trim a launch's ``initial_prompt``; blank means none (shed-core ``rc.rs:210-241@5a762e8``).

    Raises ``ValueError`` with the apps' reason (without the Tauri ``invalid rc
    request:`` prefix) for a prompt on a kind that takes none, a control character,
    or more than 2000 UTF-8 bytes, checked in that order. shed-core refuses a prompt
    on ``claude-broker``; the mac app (``swift=True``, ``RemoteControl.normalizeRcPrompt``)
    on every kind outside :data:`MAC_TYPED_INPUT_KINDS` and counts ``Cf`` as control.
    """
    prompt = "" if raw is None else raw.strip(WHITE_SPACE)
    if not prompt:
        return None
    refused = kind not in MAC_TYPED_INPUT_KINDS if swift else kind == "claude-broker"
    if refused:
        raise ValueError(f"kind {kind} does not accept an initial prompt")
    if not is_safe_rc_value(prompt, swift=swift):
        raise ValueError("initial prompt must not contain control characters")
    if len(prompt.encode()) > PROMPT_CAP:
        raise ValueError(f"initial prompt exceeds {PROMPT_CAP} bytes")
    return prompt
