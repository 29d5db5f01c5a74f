"""Shed lifecycle, create and terminal ops."""

from __future__ import annotations

import re
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


MAC_HOME = "/Users/shed"
"""The stand-in mac app's ``NSHomeDirectory()`` (set ``model.ui["home"]``): unspecified."""
MAC_SCRIPTS_DIR = "/Applications/ShedDesktop.app/Contents/Resources/bin"
"""The stand-in's ``Bundle.main.resourceURL/bin`` for the opener scripts: unspecified."""
MAC_PRESET_HELPERS = {
    "ghostty": ("/bin/bash", "shed-open-ghostty"),
    "iterm2": ("/bin/bash", "shed-open-iterm2"),
    "warp": ("/bin/bash", "shed-open-warp"),
    "roost": ("/usr/bin/python3", "shed-open-roost.py"),
}
"""mac ``TerminalPreset.helper`` (``TerminalLauncher.swift:99-106@5a762e8``)."""
_SAFE_SHELL = "-_./@:"


def swift_shell_quote(text: str) -> str:
    """Quote one argument as ShedKit's ``shellQuote`` (``Shell.swift:8-12@5a762e8``).

    ``''`` for empty; a bareword of letters, digits and ``-_./@:`` as is; anything
    else single-quoted, an embedded quote closed, escaped and reopened.
    """
    if not text:
        return "''"
    if all(c.isalpha() or c.isnumeric() or c in _SAFE_SHELL for c in text):
        return text
    return "'" + text.replace("'", "'\\''") + "'"


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
            # charliek/shed desktop/Sources/ShedDesktopApp/AppModel.swift:869-901@5339dc4)
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

    def _mac_terminal(self, p: o.MacTerminalParams) -> o.MacTerminalOpened:
        """Build the mac ``TerminalCommand`` for ``p``'s shed.

        ``ssh -t <host-key options> <shed>@<host> -p <port>`` (then ``tmux attach -t
        <session>``), ``command`` its shell-quoted line (``TerminalLauncher.sshCommand``,
        ``SSHOptions.swift:17-22``, ``Shell.swift:8-12@5a762e8``; unchanged in charliek/shed
        ``TerminalLauncher.swift:124-130@94585e5``).

        Raises:
            DesktopError: ``not-found`` for a host that is not configured.

        """
        server = self.model.hosts[self._server(p.host)]
        known_hosts = f"{self.model.ui.get('home', MAC_HOME)}/.shed/known_hosts"
        argv = ["ssh", "-t", "-o", "StrictHostKeyChecking=yes"]
        argv += ["-o", f"UserKnownHostsFile={known_hosts}", f"{p.shed}@{server.host}"]
        argv += ["-p", str(server.ssh_port)]
        if p.session:
            argv += ["tmux", "attach", "-t", p.session]
        return o.MacTerminalOpened(argv=argv, command=" ".join(swift_shell_quote(a) for a in argv))

    def _mac_invocation(self, command: str, shed: str, preset: str) -> o.LaunchInvocation:
        """Resolve the preset's launch as ``TerminalLauncher.resolveLaunch`` does.

        ``terminal-app`` (and ``custom`` with a blank template, and a script preset
        without a bundle) drive Terminal.app through osascript; ``custom`` runs
        ``/bin/sh -c`` with ``{cmd}`` raw and ``{shed}`` shell-quoted (the newer
        one-pass expansion, charliek/shed ``TerminalLauncher.swift:186-209@94585e5``); the other
        presets run their bundled opener script (the stand-in's bundle path is
        :data:`MAC_SCRIPTS_DIR`).
        """
        template = (self.model.prefs["terminal"].get("template") or "").strip(" \t")
        helper = MAC_PRESET_HELPERS.get(preset)
        if preset == "custom" and template:
            expanded = template
            if self.is_latest:
                parts = re.split(r"(\{cmd\}|\{shed\})", template)
                expanded = "".join(
                    command if part == "{cmd}" else swift_shell_quote(shed)
                    if part == "{shed}" else part
                    for part in parts
                )
            else:  # v0.0.14: two plain replacements (TerminalLauncher.swift:160-163@5a762e8)
                expanded = template.replace("{cmd}", command).replace("{shed}", shed)
            return o.LaunchInvocation(executable="/bin/sh", arguments=["-c", expanded])
        if helper is not None:
            interpreter, script = helper
            return o.LaunchInvocation(
                executable=interpreter, arguments=[f"{MAC_SCRIPTS_DIR}/{script}", shed, command]
            )
        escaped = command.replace("\\", "\\\\").replace('"', '\\"')
        script_text = (
            f'tell application "Terminal"\n    activate\n    do script "{escaped}"\nend tell'
        )
        return o.LaunchInvocation(executable="/usr/bin/osascript", arguments=["-e", script_text])

    def op_terminal_preview(self, p: Any, raw: Any) -> Any:
        if self.is_mac:
            cmd = self._mac_terminal(p)
            preset = self.model.ui.get("terminal_preset", "terminal-app")
            return o.MacTerminalPreview(
                argv=cmd.argv,
                command=cmd.command,
                preset=preset,
                invocation=self._mac_invocation(cmd.command, p.shed, preset),
            )
        return self._terminal(p)

    def op_terminal_open(self, p: Any, raw: Any) -> Any:
        # the stand-in spawns nothing; it answers what the app reports having run
        if self.is_mac:
            return self._mac_terminal(p)
        return o.TauriTerminalOpened(command=self._terminal(p).command)

    def op_terminal_presets(self, p: Any, raw: Any) -> Any:
        return o.PresetsResult(
            presets=[
                {"id": preset, "label": label, "detail": detail, "available": True}
                for preset, label, detail in TERMINAL_PRESETS
            ]
        )
