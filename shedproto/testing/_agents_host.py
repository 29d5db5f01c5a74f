"""Test helpers for the agents-host: an in-memory driver, a stdlib ACP echo agent, commands.

* :class:`EchoDriver` -- a connector driver with no provider behind it: every
  prompt is echoed into an in-memory session, ``start`` creates the session
  the command names, and every call is recorded in ``calls`` (in order) so
  tests can check per-session ordering. ``gate`` (an ``anyio.Event``) holds
  prompts until set; ``fail`` makes operations raise.
* :func:`make_command` -- a valid command object for an owner.
* The ``agents_host`` fixtures (``_fixtures``) run a host on it through
  ``_agents_host_running``.
* ``python -m shedproto.testing._agents_host`` -- the example ACP agent
  (``python -m shedproto.servers.agents_host.example_agent``, no pytest needed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from shedproto.agents_host import (
    CommandExecutionResult,
    SessionPage,
    SessionSnapshot,
    SessionSummary,
    unsupported,
)
from shedproto.connector import (
    COMMAND_SCHEMA,
    AgentSourceConfig,
    Capabilities,
    PromptPayload,
    StartPayload,
)
from shedproto.drivers.acp import normalize_updates

__all__ = [
    "AGENTS_HOST_OWNER",
    "EchoDriver",
    "echo_host_run",
    "make_command",
    "serve_echo_agent",
]

AGENTS_HOST_OWNER = "did:key:z6MkTestOwner"
"""The owner DID of the ``agents_host`` fixture's host."""


def make_command(
    owner_did: str,
    command_id: str,
    *,
    source_id: str = "echo",
    session: str = "s1",
    type_: str = "prompt",
    payload: dict[str, Any] | None = None,
    created_at: str = "2026-01-01T00:00:00.000Z",
) -> dict[str, Any]:
    """Return a command object (``payload`` defaults to a prompt echoing the id)."""
    return {
        "schema": COMMAND_SCHEMA,
        "ownerDid": owner_did,
        "id": command_id,
        "createdAt": created_at,
        "sourceId": source_id,
        "nativeSessionId": session,
        "type": type_,
        "payload": {"text": f"prompt {command_id}"} if payload is None else payload,
    }


class EchoDriver:
    """An in-memory driver; see the module docstring. Use as a ``DriverFactory``."""

    def __init__(self, source: AgentSourceConfig) -> None:
        self.source = source
        self.version: str | None = "echo-1"
        self.capabilities = Capabilities(
            inventory=True,
            read=True,
            prompt=True,
            cancel=True,
            rename=True,
            setMode=False,
            setConfigOption=False,
            startSession=True,
        )
        self.sessions: dict[str, list[dict[str, Any]]] = {}
        self.titles: dict[str, str] = {}
        self.calls: list[tuple[str, str, str]] = []
        self.gate: anyio.Event | None = None
        self.fail: str | None = None
        self.started = False
        self.stopped = False
        self._running: dict[str, anyio.Event] = {}

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        """Mark the driver started (nothing to spawn)."""
        self.started = True

    async def stop(self) -> None:
        """Mark the driver stopped."""
        self.stopped = True

    async def list_sessions(self, cursor: str | None = None) -> SessionPage:
        """List every in-memory session on one page."""
        return SessionPage(sessions=tuple(self._summary(key) for key in sorted(self.sessions)))

    def _summary(self, key: str) -> SessionSummary:
        return SessionSummary(
            nativeSessionId=key,
            title=self.titles.get(key),
            updatedAt=f"2026-01-01T00:00:00.{len(self.sessions[key]):03d}Z",
            active=True if key in self._running else None,
        )

    async def read_session(self, native_session_id: str) -> SessionSnapshot:
        """Return a session's events and messages; raises ``KeyError`` for an unknown one."""
        events = self.sessions[native_session_id]
        return SessionSnapshot(
            summary=self._summary(native_session_id),
            events=tuple(events),
            normalizedMessages=tuple(normalize_updates(native_session_id, events)),
            complete=True,
        )

    async def _turn(self, session: str, text: str, options: Any) -> CommandExecutionResult:
        self.calls.append(("prompt", session, text))
        if self.fail is not None:
            raise RuntimeError(self.fail)
        events = self.sessions.setdefault(session, [])
        events.append(
            {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": text}}
        )
        cancelled = self._running[session] = anyio.Event()
        try:
            if options.on_cancellation_ready is not None:
                options.on_cancellation_ready()
            if self.gate is not None:
                with anyio.CancelScope() as scope:
                    async with anyio.create_task_group() as tg:

                        async def watch() -> None:
                            await cancelled.wait()
                            scope.cancel()

                        tg.start_soon(watch)
                        await self.gate.wait()
                        tg.cancel_scope.cancel()
                if scope.cancelled_caught or cancelled.is_set():
                    return CommandExecutionResult(
                        status="failed", result={"stopReason": "cancelled"}
                    )
        finally:
            del self._running[session]
        events.append(
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": f"echo: {text}"},
            }
        )
        return CommandExecutionResult(
            status="succeeded", providerOperationId=f"{session}:{len(events)}"
        )

    async def prompt(
        self, native_session_id: str, payload: PromptPayload, options: Any
    ) -> CommandExecutionResult:
        """Echo the prompt into the session (created on first use)."""
        return await self._turn(native_session_id, payload.text, options)

    async def start_session(
        self, native_session_id: str, payload: StartPayload, options: Any
    ) -> CommandExecutionResult:
        """Create the session the command names, then run its first prompt."""
        self.sessions.setdefault(native_session_id, [])
        if payload.title is not None:
            self.titles[native_session_id] = payload.title
        return await self._turn(native_session_id, payload.text, options)

    async def cancel(self, native_session_id: str) -> CommandExecutionResult:
        """Cancel the running turn of a session, if any."""
        self.calls.append(("cancel", native_session_id, ""))
        event = self._running.get(native_session_id)
        if event is None:
            return CommandExecutionResult(status="succeeded", result={"cancelled": False})
        event.set()
        return CommandExecutionResult(status="succeeded", result={"cancelled": True})

    async def rename_session(self, native_session_id: str, title: str) -> CommandExecutionResult:
        """Set a session's title."""
        self.calls.append(("rename", native_session_id, title))
        self.titles[native_session_id] = title
        return CommandExecutionResult(status="succeeded")

    async def set_mode(self, native_session_id: str, mode: str) -> CommandExecutionResult:
        """Unsupported."""
        return unsupported("set-mode", self.source.id)

    async def set_config_option(
        self, native_session_id: str, key: str, value: Any
    ) -> CommandExecutionResult:
        """Unsupported."""
        return unsupported("set-config-option", self.source.id)


def echo_host_run(
    root: Path,
    *,
    owner_did: str,
    space: str,
    target: str | None = None,
    driver_factory: Any = EchoDriver,
) -> Any:
    """Return a ``HostRun``: one ``echo`` source, files under ``root``, silent, no signals.

    ``target``: ``None`` for SQLite, or a ``postgresql://`` URL. The socket is
    ``root / "h.sock"``; ``root`` must exist.
    """
    from shedproto.connector import AgentsHostCliOptions, parse_agents_host_config
    from shedproto.servers.agents_host import HostRun

    (root / "operator.key").write_bytes(b"test")
    return HostRun(
        cli=AgentsHostCliOptions(
            config_path=str(root / "agents.jsonc"),
            api_url="http://localhost:8000",
            identity_path=str(root / "operator.key"),
            space=space,
            target=target,
        ),
        config=parse_agents_host_config(
            {
                "schema": "commonfabric.agents-host.config",
                "ownerDid": owner_did,
                "collectionIntervalMs": 0,
                "sources": [{"id": "echo", "driver": "acp", "enabled": True, "command": ["-"]}],
            }
        ),
        env={"XDG_STATE_HOME": str(root / "state"), "CF_AGENTS_HOST_LOCK_DIR": str(root / "run")},
        socket_path=str(root / "h.sock"),
        driver_factory=driver_factory,
        out=lambda line: None,
        err=lambda line: None,
        handle_signals=False,
    )


# --- the example ACP agent ------------------------------------------------------------------


def serve_echo_agent() -> None:
    """Serve :mod:`shedproto.servers.agents_host.example_agent` on stdin/stdout until EOF."""
    from shedproto.servers.agents_host.example_agent import main

    main()


if __name__ == "__main__":
    serve_echo_agent()
