"""Agents-host drivers, sans-IO: the codex app-server dialect and Claude Code's sessions and CLI.

:mod:`shedproto.drivers.codex` and :mod:`shedproto.drivers.claude` hold the
protocol logic; :mod:`shedproto.servers.drivers` runs the real children
(``codex app-server``, ``claude``) with anyio. The shapes every driver returns
are the host's (:mod:`shedproto.agents_host`); the
helpers that build them live here.

The decisions taken where the spec is ambiguous or the versions differ are in
the documentation: ``docs/architecture/decisions/drivers.rst``.
"""

from __future__ import annotations

from ._results import (
    PREVIEW_LIMIT,
    failed,
    needs_confirmation,
    succeeded,
    text_preview,
    unknown,
    unsupported_result,
)

__all__ = [
    "succeeded",
    "failed",
    "unsupported_result",
    "unknown",
    "needs_confirmation",
    "text_preview",
    "PREVIEW_LIMIT",
]
