"""The server and client-surface handlers of the herdr reference server.

``ping``, ``server.*``, ``session.snapshot``, notifications, dismissals, the window
title and the shell surface (popups and the config reload: ``_commands``).
"""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING, Any, cast

import anyio
import msgspec

from shedproto.herdr import types as t

from ._handoff import SUPPORTED as LIVE_HANDOFF
from ._handoff import HandoffFailed, live_handoff
from ._state import AnswerError, E, ServerState

if TYPE_CHECKING:
    from ._server import HerdrServer


class _CapabilitiesBefore092(msgspec.Struct, frozen=True, kw_only=True):
    """``ServerCapabilities`` as herdr 0.9.0 and 0.9.1 write it (no ``ssh_agent_registration``)."""

    live_handoff: bool
    detached_server_daemon: bool = False
    health_check: bool = False
    surface_interest: bool = False


HANDLERS: dict[str, str] = {
    "ping": "_ping",
    "server.stop": "_ok_handler",
    "session.snapshot": "_snapshot",
    "notification.show": "_notification_show",
    "release_notes.dismiss": "_dismiss",
    "product_announcement.dismiss": "_dismiss",
    "server.live_handoff": "_live_handoff",
    "client.window_title.set": "_window_title",
    "client.window_title.clear": "_window_title",
    "client_shell.surface.set": "_client_shell_surface",
    "server.ssh_agent.register": "_ssh_agent_check",
}
"""Method -> the name of the coroutine here that answers it."""


class SessionHandlers(ServerState):
    """The server, session and client-surface handlers."""

    handoff_gate: anyio.Event | None = None
    """Set while a live handoff runs: other requests wait for it (``_server``)."""
    handed_off = False
    """A live handoff passed the session to a successor: this server is to stop."""
    handoff_command: list[str] | None = None
    """The program a handoff without ``import_exe`` starts as herdr's binary
    (``... server --handoff-import``); None: ``shedproto herdr serve`` (:mod:`._handoff`)."""
    successor: subprocess.Popen[bytes] | None = None
    """The process a live handoff passed the session to."""

    async def _ping(self, id: str, params: Any) -> t.PongReply:
        capabilities: Any = t.ServerCapabilities(
            live_handoff=LIVE_HANDOFF,
            detached_server_daemon=False,
            ssh_agent_registration=self.release.ssh_agent_registration,
        )
        if self.protocol == 22 and not self.release.ssh_agent_registration:
            # a release before 0.9.2 has no such field: it is not written at all
            capabilities = _CapabilitiesBefore092(
                live_handoff=LIVE_HANDOFF, detached_server_daemon=False
            )
        return t.PongReply(version=self.version, protocol=self.protocol, capabilities=capabilities)

    async def _ssh_agent_check(self, id: str, params: t.ServerSshAgentRegisterParams) -> t.OkReply:
        """Accept an absolute agent socket path; :mod:`._server` then holds the connection.

        A relative path is herdr's ``invalid_ssh_agent`` (its registry's
        InvalidInput; src/api/server.rs handle_connection_with_stop@3f32b738).
        """
        if not params.socket_path.startswith("/"):
            raise AnswerError(E.INVALID_SSH_AGENT, "ssh agent socket path must be absolute")
        return t.OkReply()

    async def _ok_handler(self, id: str, params: Any) -> t.OkReply:
        return t.OkReply()

    async def _snapshot(self, id: str, params: Any) -> t.SessionSnapshotReply:
        tabs = [tab for ws in self.workspaces for tab in ws.tabs]
        panes = [pane for ws in self.workspaces for pane in ws.panes()]
        focused_tab = self.active.active_tab if self.active else None
        focused_pane = focused_tab.focused_pane if focused_tab else None
        snapshot = t.SessionSnapshot(
            version=self.version,
            protocol=self.protocol,
            focused_workspace_id=self.active.id if self.active else None,
            focused_tab_id=focused_tab.id if focused_tab else None,
            focused_pane_id=focused_pane.id if focused_pane else None,
            workspaces=[self._ws_info(ws) for ws in self.workspaces],
            tabs=[self._tab_info(tab) for tab in tabs],
            panes=[self._pane_info(pane) for pane in panes],
            layouts=[self._layout(tab) for tab in tabs],
            agents=[p.agent_info(self._pane_focused(p)) for p in panes if p.agent is not None],
        )
        return t.SessionSnapshotReply(snapshot=snapshot)

    async def _live_handoff(self, id: str, params: t.ServerLiveHandoffParams) -> t.OkReply:
        """Hand the session to a successor process (:mod:`._handoff`); ``ok`` once it owns it.

        Any failure is herdr's ``handoff_failed`` with herdr's message for the
        step (src/server/headless.rs:3636-3658@1c76079f); the server then
        serves on with its panes.
        """
        gate = self.handoff_gate = anyio.Event()
        try:
            await live_handoff(
                cast("HerdrServer", self),
                params.import_exe,
                params.expected_protocol,
                params.expected_version,
            )
        except HandoffFailed as failure:
            raise AnswerError(E.HANDOFF_FAILED, str(failure)) from None
        finally:
            self.handoff_gate = None
            gate.set()
        return t.OkReply()

    async def _window_title(self, id: str, params: Any) -> t.ClientWindowTitleReply:
        self.window_title = getattr(params, "title", None)
        return t.ClientWindowTitleReply(changed=False, reason="no_foreground_client")

    async def _client_shell_surface(
        self, id: str, params: t.ClientShellSurfaceSetParams
    ) -> t.ClientShellSurfaceSetReply:
        """Refuse it, as herdr does on its API socket (only a client-shell endpoint takes it).

        herdrdev/herdr src/api/server.rs handle_request@3f32b738; observed against 0.9.0
        and 0.9.1 by independent clients.
        """
        raise AnswerError(
            E.CONNECTION_LOCAL_ONLY,
            "client_shell.surface.set is only available through a client shell endpoint",
        )


    async def _dismiss(self, id: str, params: Any) -> t.OkReply:
        self.dismissed.append(msgspec.to_builtins(params))
        return t.OkReply()

    async def _notification_show(
        self, id: str, params: t.NotificationShowParams
    ) -> t.NotificationShowReply:
        title = " ".join(params.title.split())
        if not title:
            raise AnswerError(E.INVALID_PARAMS, "notification title must not be empty")
        self.notifications.append(params)
        # no TUI client is attached to a reference server: herdr's answer then
        return t.NotificationShowReply(shown=False, reason="no_foreground_client")
