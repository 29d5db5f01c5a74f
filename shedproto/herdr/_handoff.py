"""herdr's live-handoff facts: the stream's limits and timeouts, and the successor's checks.

A live handoff (``server.live_handoff``) moves a herdr server's session to a
successor process over a private Unix socket; these are the rules both ends
follow (herdrdev/herdr src/server/handoff.rs@1c76079f). The exchange itself
runs in the reference server (``shedproto.servers.herdr``).
"""

from __future__ import annotations

__all__ = [
    "HANDOFF_FORMAT_VERSION",
    "HANDOFF_MAX_LINE",
    "HANDOFF_MAX_PANES",
    "HANDOFF_OLD_SOCKETS_TIMEOUT",
    "HANDOFF_OWNED_ACK_TIMEOUT",
    "HANDOFF_STEP_TIMEOUT",
    "handoff_refusal",
    "too_many_panes_message",
]

HANDOFF_FORMAT_VERSION = 1
"""The manifest's format version (src/server/handoff.rs:20@1c76079f)."""
HANDOFF_MAX_PANES = 64
"""Panes (PTY masters) in one handoff at most (src/server/handoff.rs:26@1c76079f)."""
HANDOFF_STEP_TIMEOUT = 30.0
"""Seconds each step of the exchange may take (src/server/handoff.rs:22@1c76079f)."""
HANDOFF_OWNED_ACK_TIMEOUT = 0.5
"""Seconds the source waits for ``owned`` after ``committed`` (handoff.rs:24@1c76079f)."""
HANDOFF_OLD_SOCKETS_TIMEOUT = 5.0
"""Seconds the successor waits for the old sockets to go (src/server/headless.rs:5222@1c76079f)."""
HANDOFF_MAX_LINE = 16 * 1024 * 1024
"""Bytes in one line of the handoff stream at most (src/server/handoff.rs:374@1c76079f)."""


def handoff_refusal(
    format_version: int,
    expected_protocol: int | None,
    expected_version: str | None,
    *,
    protocol: int,
    version: str,
) -> str | None:
    """Return why a successor speaking ``protocol`` as ``version`` refuses a manifest, or None.

    herdr's three checks and messages, in its order
    (src/server/handoff.rs:241-267@1c76079f).
    """
    if format_version != HANDOFF_FORMAT_VERSION:
        return f"unsupported handoff version {format_version}"
    if expected_protocol is not None and expected_protocol != protocol:
        return (
            f"handoff expected protocol {expected_protocol}, "
            f"but this server speaks protocol {protocol}"
        )
    if expected_version is not None and expected_version != version:
        return f"handoff expected herdr v{expected_version}, but this server is v{version}"
    return None


def too_many_panes_message(limit: int = HANDOFF_MAX_PANES) -> str:
    """Return the refusal of a handoff of over ``limit`` panes (herdr handoff.rs@1c76079f)."""
    return (
        f"live handoff supports at most {limit} panes in one update; "
        "close panes or restart herdr normally"
    )
