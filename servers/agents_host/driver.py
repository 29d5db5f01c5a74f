"""The driver interface the host calls (connector ``AgentDriver``, spec section 7.1).

Every method exists on every driver; operations a provider lacks return an
``unsupported`` :class:`~shedproto.agents_host.CommandExecutionResult`
instead of raising. A method that raises is a provider failure: the worker
turns it into a ``failed`` / ``provider-call-failed`` receipt.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import anyio.abc

from shedproto.agents_host import CommandExecutionResult, SessionPage, SessionSnapshot
from shedproto.connector import AgentSourceConfig, Capabilities, PromptPayload, StartPayload

__all__ = [
    "AgentDriver",
    "DriverFactory",
    "LifecycleListener",
    "OperationOptions",
    "SupervisedDriver",
]

LifecycleListener = Callable[[str, str, bool], None]
"""``listener(kind, message, healthy)``: an activity type, its message, whether the source is up."""


@dataclass(frozen=True)
class OperationOptions:
    """Options of ``prompt`` and ``start_session``.

    ``on_cancellation_ready`` is called (synchronously) once a ``cancel`` can
    reach the turn; ``on_session_active`` is awaited before the driver
    consumes the turn's output, so a refresh can observe ``active: true``.
    """

    force: bool = False
    on_cancellation_ready: Callable[[], None] | None = None
    on_session_active: Callable[[], Awaitable[None]] | None = None


class AgentDriver(Protocol):
    """One configured source's driver; see the module docstring."""

    source: AgentSourceConfig
    capabilities: Capabilities
    version: str | None

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Start the provider (its tasks live in ``task_group``); raise when it cannot."""

    async def stop(self) -> None:
        """Stop the provider; idempotent; raise when it did not stop cleanly."""

    async def list_sessions(self, cursor: str | None = None) -> SessionPage:
        """Return one page of the inventory."""

    async def read_session(self, native_session_id: str) -> SessionSnapshot:
        """Read one session whole."""

    async def prompt(
        self, native_session_id: str, payload: PromptPayload, options: OperationOptions
    ) -> CommandExecutionResult:
        """Run one prompt turn in an existing session."""

    async def start_session(
        self, native_session_id: str, payload: StartPayload, options: OperationOptions
    ) -> CommandExecutionResult:
        """Start a new session with its first prompt."""

    async def cancel(self, native_session_id: str) -> CommandExecutionResult:
        """Cancel the session's running turn."""

    async def rename_session(self, native_session_id: str, title: str) -> CommandExecutionResult:
        """Rename a session."""

    async def set_mode(self, native_session_id: str, mode: str) -> CommandExecutionResult:
        """Set a session's mode."""

    async def set_config_option(
        self, native_session_id: str, key: str, value: Any
    ) -> CommandExecutionResult:
        """Set one of a session's configuration options."""


@runtime_checkable
class SupervisedDriver(Protocol):
    """A driver that restarts its provider on its own and reports it (the ACP driver)."""

    def set_lifecycle_listener(self, listener: LifecycleListener) -> None:
        """Register the host's listener for provider deaths and restarts."""

    @property
    def supervision_error(self) -> str | None:
        """Why the provider is down and when it restarts, or ``None`` while it runs."""


DriverFactory = Callable[[AgentSourceConfig], AgentDriver]
"""Builds the driver of one enabled source (tests inject their own)."""
