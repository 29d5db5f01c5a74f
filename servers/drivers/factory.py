"""A :data:`~shedproto.servers.agents_host.DriverFactory` that builds every driver the host knows.

``acp`` sources get the host's :class:`~shedproto.servers.drivers.AcpDriver`;
``codex-app-server`` and ``claude-agent-sdk`` get the drivers of this package.
"""

from __future__ import annotations

from collections.abc import Mapping

from shedproto.connector import AgentSourceConfig
from shedproto.servers.agents_host import AgentDriver, DriverFactory

from .acp import AcpDriver
from .claude import ClaudeAgentSdkDriver
from .codex import CodexAppServerDriver

__all__ = ["driver_factory", "make_driver_factory"]


def make_driver_factory(base_env: Mapping[str, str] | None = None) -> DriverFactory:
    """Return a factory whose native drivers inherit ``base_env`` (default: this process's).

    The factory raises ``ValueError`` for a driver name it does not know.
    """

    def build(source: AgentSourceConfig) -> AgentDriver:
        if source.driver == "codex-app-server":
            return CodexAppServerDriver(source, base_env=base_env)
        if source.driver == "claude-agent-sdk":
            return ClaudeAgentSdkDriver(source, base_env=base_env)
        if source.driver == "acp":
            return AcpDriver(source)
        raise ValueError(f"driver {source.driver} is not available in this host")

    return build


driver_factory: DriverFactory = make_driver_factory()
"""The factory with this process's environment as the children's baseline."""
