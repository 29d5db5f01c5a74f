"""The newer Tauri app's RC kinds, and ``rc.inject_test``'s reading of its params.

The app's socket handler (charliek/shed ``desktop/tauri/src-tauri/src/ipc.rs@2cd01ef``,
``rc_inject_test`` and ``build_inject_row``) and the roost host layer it hands the
row to (``roost_hosts.rs:1709-1742@9668981``, ``RoostHosts::inject_test``) decide,
after the test-mode gate, the ``shed`` and the ``host``:

1. ``slug``: a string (else ``missing 'slug'``) that parses as Rust's ``i64`` as
   sent, untrimmed (else ``slug "<s>" is not a roost tab id``);
2. ``kind``: absent is ``claude-rc``; present, it is read as every launch reads it
   (``rc_kind``): ``null`` or not a string ``missing or invalid 'kind'``, a string
   that is no ``RcKind`` ``unknown rc kind '<k>'``;
3. ``lifecycle``, when a string, must be one of roost's ``agent_lifecycle`` words
   (``InjectedRow::into_session``, ``roost_hosts.rs:3391-3414@9668981``: else
   ``"<w>" is not a roost agent_lifecycle``);
4. the kind must have a roost adapter (``roost_source``,
   ``roost_hosts.rs:3428-3434@9668981``): only ``claude-rc`` (roost's ``claude``)
   and ``opencode`` do; any other known kind would inject a tab nobody owns, and
   an unowned tab is no session row, so it is refused by name.

Every refusal is ``bad_request``. The row's ``kind`` is the tab's owner read back
as an ``RcKind`` (shed-core ``RoostSession::agent_kind``: roost's ``claude`` is
``claude-rc``), so it is the kind asked for. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._codes import DesktopCode
from ._errors import DesktopError
from ._rules import rust_debug

__all__ = [
    "INJECT_DEFAULT_KIND",
    "LAUNCH_RECIPE_KINDS",
    "ROOST_LIFECYCLES",
    "ROOST_SOURCES",
    "TAURI_RC_KINDS",
    "inject_kind",
    "parse_i64",
    "rc_tab_id",
]

TAURI_RC_KINDS: tuple[str, ...] = ("claude-rc", "claude-broker", "opencode", "craze", "shell")
"""The newer Tauri app's known ``RcKind`` wire values. Read off ``roost_source``'s
exhaustive match (``roost_hosts.rs:3428-3434@9668981``: ``ClaudeRc``, ``Opencode``,
``ClaudeBroker``, ``Craze``, ``Shell``, then ``Other``); the stored shed-core ``rc.rs``
versions are older (they still have ``codex`` and ``cursor``, which left shed in plan
025), so ``craze``'s spelling is the kebab-case of its case name, as the others'."""
ROOST_SOURCES: Mapping[str, str] = {"claude-rc": "claude", "opencode": "opencode"}
"""The ``ownership.source`` roost's own adapter writes, per RC kind (``roost_source``);
a kind missing here has no roost adapter."""
LAUNCH_RECIPE_KINDS: frozenset[str] = frozenset(ROOST_SOURCES)
"""The kinds ``roost.launch``/``rc.launch`` have a recipe for: the two with a roost adapter.
``roost_source`` (``roost_hosts.rs:3417-3427@9668981``, its doc) says every kind without
an adapter is one ``launch_argv`` refuses; ``open_params`` then answers ``unknown kind
"<k>": roost has no launch recipe for it``."""
ROOST_LIFECYCLES: tuple[str, ...] = ("inactive", "working", "waiting", "finished", "failed")
"""roost's ``AgentLifecycle`` on the wire (charliek/roost
``crates/roost-ipc/src/agent.rs:38-49@7ed439a``, snake_case; the stored version, which
the app at ``9668981`` may not pin exactly)."""
INJECT_DEFAULT_KIND = "claude-rc"
"""``build_inject_row``'s kind when the params have no ``kind`` key."""


def parse_i64(text: str) -> int | None:
    """Return ``text`` parsed as Rust's ``str::parse::<i64>`` does, or ``None``.

    Leading zeros are allowed; more than 19 significant digits overflow (and are
    never handed to ``int``, which refuses strings past 4,300 digits).
    """
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isascii() or not body.isdigit() or len(body.lstrip("0")) > 19:
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def rc_tab_id(slug: str | None) -> str:
    """Return the roost tab id ``slug`` names, as the row's ``slug`` (``build_inject_row``).

    Raises:
        DesktopError: ``bad_request`` ``missing 'slug'`` or ``slug "<s>" is not a roost tab id``.

    """
    if slug is None:
        raise DesktopError(DesktopCode.BAD_REQUEST, "missing 'slug'")
    tab_id = parse_i64(slug)
    if tab_id is None:
        raise DesktopError(
            DesktopCode.BAD_REQUEST, f"slug {rust_debug(slug)} is not a roost tab id"
        )
    return str(tab_id)


def inject_kind(raw: Any, lifecycle: str | None = None) -> str:
    """Return the RC kind an inject's params name, after checking ``lifecycle``.

    ``raw`` is the params as received (an absent ``kind`` key and a ``null`` differ);
    the kind returned has a roost adapter.

    Raises:
        DesktopError: ``bad_request``: ``missing or invalid 'kind'``, ``unknown rc kind
            '<k>'``, ``"<w>" is not a roost agent_lifecycle``, or the unowned-tab
            refusal (``roost_hosts.rs:1713-1718@9668981``).

    """
    params: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
    kind = params.get("kind", INJECT_DEFAULT_KIND)
    if not isinstance(kind, str):
        raise DesktopError(DesktopCode.BAD_REQUEST, "missing or invalid 'kind'")
    if kind not in TAURI_RC_KINDS:
        raise DesktopError(DesktopCode.BAD_REQUEST, f"unknown rc kind '{kind}'")
    if lifecycle is not None and lifecycle not in ROOST_LIFECYCLES:
        raise DesktopError(
            DesktopCode.BAD_REQUEST, f"{rust_debug(lifecycle)} is not a roost agent_lifecycle"
        )
    if kind not in ROOST_SOURCES:
        raise DesktopError(
            DesktopCode.BAD_REQUEST,
            f"roost has no adapter for kind {rust_debug(kind)}, so an injected {kind} tab"
            " is unowned — and an unowned tab is not a session row",
        )
    return kind
