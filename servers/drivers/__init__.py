"""The agents-host's native drivers as anyio shells: ``codex-app-server`` and ``claude-agent-sdk``.

Both implement :class:`shedproto.servers.agents_host.AgentDriver`; the
protocol logic lives in :mod:`shedproto.drivers`.
"""

from __future__ import annotations

from ._child import ChildError, ChildProcess
from .claude import ClaudeAgentSdkDriver, ClaudeDriverError, Opener
from .codex import CLIENT_NAME, CodexAppServerDriver, CodexDriverError, CodexRpcError
from .factory import driver_factory, make_driver_factory

__all__ = [
    "CLIENT_NAME",
    "ChildError",
    "ChildProcess",
    "ClaudeAgentSdkDriver",
    "ClaudeDriverError",
    "Opener",
    "CodexAppServerDriver",
    "CodexDriverError",
    "CodexRpcError",
    "driver_factory",
    "make_driver_factory",
]
