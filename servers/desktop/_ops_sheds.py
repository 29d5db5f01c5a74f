"""Shed lifecycle, create and terminal ops."""

from __future__ import annotations

import uuid
from typing import Any

from shedproto.desktop import (
    DesktopCode,
    DesktopError,
)
from shedproto.desktop import types as o

from ._base import AppBase, msgspec_to_builtins

__all__ = ["ShedOps"]


TERMINAL_PRESETS = (
    ("ghostty", "Ghostty", "Opens the ssh command in Ghostty."),
    ("roost", "Roost", "Opens a new Roost tab in a project named after the shed."),
    ("custom", "Custom", ""),
)
"""``terminal.presets``: shed-core ``TerminalPreset`` ids, labels and details
(terminal.rs:79-115@5a762e8); ``custom`` is the default."""


class ShedOps(AppBase):
    """Shed lifecycle, create and terminal ops."""

    def _shed_action(self, p: o.ShedActionParams, status: str | None) -> Any:
        server = self.model.hosts[self._server(p.host)]
        if not server.reachable:
            raise self._shed_server_error(server.last_error or "connection refused")
        shed = server.sheds.get(p.name)
        if shed is None:  # shed-server answers 404 for a name it does not hold
            raise self._shed_server_error("404")
        if status is None:
            del server.sheds[p.name]
        else:
            shed.status = status
        return o.Empty()

    def op_shed_start(self, p: o.ShedActionParams, raw: Any) -> Any:
        return self._shed_action(p, "running")

    def op_shed_stop(self, p: o.ShedActionParams, raw: Any) -> Any:
        return self._shed_action(p, "stopped")

    def op_shed_reset(self, p: o.ShedActionParams, raw: Any) -> Any:
        return self._shed_action(p, "running")

    def op_shed_delete(self, p: o.ShedActionParams, raw: Any) -> Any:
        return self._shed_action(p, None)

    def op_create_start(self, p: o.CreateStartParams, raw: Any) -> Any:
        server = self._server(p.host)
        create_id = f"create-{len(self.model.creates) + 1}"
        if self.is_mac:  # UUID().uuidString: upper-case (AppModel.swift:859-861@5a762e8,
            # charliek/shed desktop/Sources/ShedDesktopApp/AppModel.swift@5339dc4 startCreate)
            create_id = str(uuid.UUID(bytes=self.model.entropy(16), version=4)).upper()
        shed = self.model.add_shed(
            server,
            p.name,
            status="running",
            image=p.image,
            backend=p.backend,
            repo=p.repo,
            local_dir=p.local_dir,
            cpus=p.cpus,
            memory_mb=p.memory_mb,
        )
        row = (o.MacShed if self.is_mac else o.TauriShed)(**shed.fields())
        # the stand-in's create completes at once: the store's final snapshot
        self.model.creates[create_id] = {
            "id": create_id,
            "state": "complete",
            "messages": [],
            "shed": msgspec_to_builtins(row),
        }
        return o.CreateStarted(create_id=create_id)

    def op_create_status(self, p: o.CreateIdParams, raw: Any) -> Any:
        found = self.model.creates.get(p.create_id)
        if found is None:
            if self.is_mac:
                raise DesktopError(DesktopCode.NOT_FOUND, f"no create with id {p.create_id}")
            return o.CreateProgress(state="unknown")
        if self.is_mac:  # nil optionals omitted
            return o.CreateProgress(**{k: v for k, v in found.items() if v is not None})
        return o.CreateProgress(**{"shed": None, "error": None, **found})

    def op_create_cancel(self, p: o.CreateIdParams, raw: Any) -> Any:
        # both stores drop the entry (idempotent): a later status is unknown / not-found
        # (tauri backend.rs:237-239, mac AppModel.swift:905-909@5a762e8)
        self.model.creates.pop(p.create_id, None)
        return o.Empty()

    def _terminal(self, p: Any) -> o.TerminalCommand:
        if not self.is_mac and self.is_latest and p.machine is not None:
            raise DesktopError(
                DesktopCode.NOT_ENABLED_T, "terminal unavailable: attach is native-remote"
            )
        server = self.model.hosts[self._server(p.host)]
        # neither app checks the shed exists: the command is built from config
        self._preset(getattr(p, "preset", None))
        preset = getattr(p, "preset", None) or self.model.prefs["terminal"]["preset"]
        argv = ["ssh", "-t", "-p", str(server.ssh_port), f"{p.shed}@{server.host}"]
        if p.session:
            argv += ["tmux", "attach", "-t", p.session]
        return o.TerminalCommand(
            argv=argv, command=" ".join(argv), preset=preset, invocation="exec"
        )

    def op_terminal_preview(self, p: Any, raw: Any) -> Any:
        return self._terminal(p)

    def op_terminal_open(self, p: Any, raw: Any) -> Any:
        # the stand-in spawns nothing; it answers what the app reports having run
        opened = self._terminal(p)
        if self.is_mac:
            return o.MacTerminalOpened(argv=opened.argv, command=opened.command)
        return o.TauriTerminalOpened(command=opened.command)

    def op_terminal_presets(self, p: Any, raw: Any) -> Any:
        return o.PresetsResult(
            presets=[
                {"id": preset, "label": label, "detail": detail, "available": True}
                for preset, label, detail in TERMINAL_PRESETS
            ]
        )
