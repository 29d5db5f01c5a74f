"""The agents-host's drivers as anyio shells: ``acp``, ``codex-app-server``, ``claude-agent-sdk``.

Each implements :class:`shedproto.servers.agents_host.AgentDriver`; the
protocol logic lives in :mod:`shedproto.drivers`.
"""

from __future__ import annotations

from ._child import ChildError, ChildProcess
from .acp import (
    DEFAULT_PROMPT_TIMEOUT_MS,
    AcpAgentExitedError,
    AcpDriver,
    AcpDriverError,
    AcpProcess,
    AcpRequestError,
    AcpTurnAbandonedError,
)
from .claude import ClaudeAgentSdkDriver, ClaudeDriverError, Opener
from .codex import CLIENT_NAME, CodexAppServerDriver, CodexDriverError, CodexRpcError
from .factory import driver_factory, make_driver_factory

__all__ = [
    "DEFAULT_PROMPT_TIMEOUT_MS",
    "AcpAgentExitedError",
    "AcpDriver",
    "AcpDriverError",
    "AcpProcess",
    "AcpRequestError",
    "AcpTurnAbandonedError",
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
