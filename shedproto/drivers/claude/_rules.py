"""The claude-agent-sdk driver's rules: capabilities, modes, start checks, the desktop surface.

Platform, the clock (``now_ms``), path facts (is it a directory, is the app
installed) and the process cwd are inputs; nothing here looks them up.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from shedproto.agents_host import CommandExecutionResult, SessionSummary
from shedproto.connector import Capabilities, js_length
from shedproto.drivers._results import failed, unsupported_result

from ._paths import is_session_id

__all__ = [
    "BASE_MODES",
    "DANGER_MODE",
    "DESKTOP_PROMPT_LIMIT",
    "DESKTOP_APP",
    "PAIRING_SKEW_MS",
    "PAIRING_EXPIRY_MS",
    "claude_modes",
    "claude_surfaces",
    "claude_capabilities",
    "resolve_path",
    "StartPlan",
    "plan_start",
    "desktop_url",
    "desktop_start_problem",
    "DesktopStart",
    "DesktopPairing",
    "replace_summary",
]

BASE_MODES = ("default", "acceptEdits", "plan", "dontAsk", "auto")
"""The permission modes every claude source advertises."""
DANGER_MODE = "bypassPermissions"
"""Advertised (and accepted) only with ``allowDangerFullAccess``."""
DESKTOP_PROMPT_LIMIT = 14336
"""The longest prompt a ``claude://code/new`` link may carry (JavaScript length)."""
DESKTOP_APP = "/Applications/Claude.app"
"""The desktop app whose presence the desktop surface requires."""
PAIRING_SKEW_MS = 5_000
"""A session may be created up to this long before its desktop start was sent."""
PAIRING_EXPIRY_MS = 24 * 3600 * 1000
"""Pending desktop starts older than this are dropped."""


def claude_modes(*, allow_danger_full_access: bool) -> tuple[str, ...]:
    """Return the advertised modes: the base five, plus ``bypassPermissions`` when allowed."""
    return (*BASE_MODES, DANGER_MODE) if allow_danger_full_access else BASE_MODES


def claude_surfaces(platform: str) -> tuple[str, ...]:
    """Return ``headless``, plus ``desktop`` on macOS (``platform == "darwin"``)."""
    return ("headless", "desktop") if platform == "darwin" else ("headless",)


def claude_capabilities(*, allow_danger_full_access: bool, platform: str) -> Capabilities:
    """Return the source's capabilities: everything, the modes, surfaces and ``model`` option."""
    return Capabilities(
        inventory=True,
        read=True,
        prompt=True,
        cancel=True,
        rename=True,
        setMode=True,
        setConfigOption=True,
        startSession=True,
        modes=claude_modes(allow_danger_full_access=allow_danger_full_access),
        surfaces=claude_surfaces(platform),
        configOptions={"model": {"type": "string"}},
    )


def resolve_path(path: str, base: str) -> str:
    """Return ``path`` made absolute against ``base`` and normalised (no symlink lookup)."""
    return posixpath.normpath(posixpath.join(base, path))


@dataclass(frozen=True)
class StartPlan:
    """A start that passed validation: where it runs and on which surface."""

    session_id: str
    cwd: str
    surface: str
    mode: str | None
    title: str | None


def plan_start(
    session_id: str,
    *,
    cwd: str | None,
    mode: str | None,
    surface: str | None,
    title: str | None,
    source_cwd: str | None,
    process_cwd: str,
    modes: Iterable[str],
    surfaces: Iterable[str],
) -> StartPlan | CommandExecutionResult:
    """Validate a ``start`` and return its plan, or the failing result.

    In order: the id must be a UUID (``claude-session-id-invalid``); a mode
    must be advertised and a surface ``headless`` or an advertised ``desktop``
    (``unsupported``); with a source cwd the start runs there and another cwd
    fails with ``claude-start-cwd-not-source``; without one a cwd is required
    (``claude-start-cwd-required``) and resolved against ``process_cwd``.
    """
    if not is_session_id(session_id):
        return failed("claude-session-id-invalid", f"session id must be a UUID: {session_id}")
    if mode is not None and mode not in set(modes):
        return unsupported_result(f"mode is not supported: {mode}")
    chosen = surface or "headless"
    if chosen not in set(surfaces):
        return unsupported_result(f"surface is not supported: {chosen}")
    if source_cwd is not None:
        home = resolve_path(source_cwd, process_cwd)
        if cwd is not None and resolve_path(cwd, process_cwd) != home:
            return failed(
                "claude-start-cwd-not-source", f"start cwd must be the source cwd: {source_cwd}"
            )
        where = home
    elif cwd is None:
        return failed("claude-start-cwd-required", "start needs a cwd (the source has none)")
    else:
        where = resolve_path(cwd, process_cwd)
    return StartPlan(session_id=session_id, cwd=where, surface=chosen, mode=mode, title=title)


_URL_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789*-._")


def _form_encode(text: str) -> str:
    out: list[str] = []
    for byte in text.encode("utf-8", "surrogatepass"):
        if byte in _URL_SAFE:
            out.append(chr(byte))
        elif byte == 0x20:
            out.append("+")
        else:
            out.append(f"%{byte:02X}")
    return "".join(out)


def desktop_url(cwd: str, text: str) -> str:
    """Return ``claude://code/new?folder=<cwd>&q=<text>``, form-encoded as URLSearchParams does."""
    return f"claude://code/new?folder={_form_encode(cwd)}&q={_form_encode(text)}"


def desktop_start_problem(
    *, text: str, mode: str | None, cwd_is_directory: bool, app_installed: bool
) -> CommandExecutionResult | None:
    """Return why a desktop start cannot open, or ``None``; the checks run in the real order.

    A mode (``claude-desktop-mode-unsupported``), a prompt over 14336
    characters (``claude-desktop-prompt-too-long``), a cwd that is not a
    directory (``claude-desktop-cwd-not-directory``), a missing app
    (``claude-desktop-not-installed``, retryable).
    """
    if mode is not None:
        return failed("claude-desktop-mode-unsupported", "the desktop surface takes no mode")
    if js_length(text) > DESKTOP_PROMPT_LIMIT:
        return failed(
            "claude-desktop-prompt-too-long",
            f"desktop prompts are limited to {DESKTOP_PROMPT_LIMIT} characters",
        )
    if not cwd_is_directory:
        return failed("claude-desktop-cwd-not-directory", "the start cwd is not a directory")
    if not app_installed:
        return failed(
            "claude-desktop-not-installed", f"{DESKTOP_APP} is not installed", retryable=True
        )
    return None


@dataclass(frozen=True)
class DesktopStart:
    """A desktop start waiting for its session to appear."""

    session_id: str
    text: str
    cwd: str
    title: str | None
    sent_at_ms: int
    known_ids: frozenset[str]


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _raw_field(summary: SessionSummary, key: str) -> Any:
    return summary.raw.get(key)


@dataclass
class DesktopPairing:
    """Pending desktop starts and the sessions already paired with one (memory only)."""

    pending: list[DesktopStart] = field(default_factory=list)
    paired: dict[str, DesktopStart] = field(default_factory=dict)

    def record(self, start: DesktopStart) -> None:
        """Remember a start that was just opened."""
        self.pending.append(start)

    def _matches(self, summary: SessionSummary, start: DesktopStart) -> bool:
        if summary.nativeSessionId in start.known_ids or summary.cwd is None:
            return False
        if resolve_path(summary.cwd, "/") != resolve_path(start.cwd, "/"):
            return False
        created = _raw_field(summary, "createdAt")
        if isinstance(created, int) and created < start.sent_at_ms - PAIRING_SKEW_MS:
            return False
        prompt = _raw_field(summary, "firstPrompt")
        if not isinstance(prompt, str):
            return False
        head = _collapse(prompt.removesuffix("\u2026"))[:200]
        return bool(head) and _collapse(start.text)[:200].startswith(head)

    def apply(self, sessions: Iterable[SessionSummary], *, now_ms: int) -> list[SessionSummary]:
        """Return ``sessions`` with ``startedAs`` (and the start's title) on paired ones.

        Starts older than 24 h are dropped first. A session matching several
        starts with different texts stays unpaired; equal texts pair the
        newest start. A custom title beats the start's title.
        """
        self.pending = [s for s in self.pending if now_ms - s.sent_at_ms <= PAIRING_EXPIRY_MS]
        out: list[SessionSummary] = []
        for summary in sessions:
            start = self.paired.get(summary.nativeSessionId)
            if start is None:
                found = [s for s in self.pending if self._matches(summary, s)]
                if found and len({s.text for s in found}) == 1:
                    start = max(found, key=lambda s: s.sent_at_ms)
                    self.pending.remove(start)
                    self.paired[summary.nativeSessionId] = start
            if start is None:
                out.append(summary)
                continue
            title = summary.title
            if start.title and not _raw_field(summary, "customTitle"):
                title = start.title
            out.append(replace_summary(summary, startedAs=start.session_id, title=title))
        return out


def replace_summary(summary: SessionSummary, **changes: Any) -> SessionSummary:
    """Return ``summary`` with ``changes`` applied (a frozen Struct copy)."""
    return msgspec.structs.replace(summary, **changes)
