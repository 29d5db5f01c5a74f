"""``command.invoke``, ``server.reload_config`` and ``popup.close``: herdr's custom commands.

The server reads ``[[keys.command]]`` from ``<config_dir>/config.toml`` when it
starts and on ``server.reload_config`` (rules in
:mod:`shedproto.herdr._commands`); each load issues fresh opaque ids, which
herdr hands its own terminal client and this server hands its embedder
(:meth:`CommandHandlers.command_manifest`). ``command.invoke`` first focuses
the pane, tab or workspace named (herdr's ``pane_not_found`` /
``command_target_mismatch`` answers), then runs the command as herdr does:
``shell`` detached under ``/bin/sh -lc`` with stdio closed, ``pane`` in a new
pane beside the focused one (focused, tab zoomed) under ``/bin/sh -c``,
``popup`` the same as the server's one popup (``popup.close`` closes it), and
``plugin_action`` through the plugin runtime with source ``keybinding``.
Any failure to start answers ``command_failed`` with the reason.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import msgspec

from shedproto.herdr import select_text
from shedproto.herdr import types as t
from shedproto.herdr._codes import HerdrErrorCode
from shedproto.herdr._commands import (
    CustomCommand,
    command_id,
    custom_command_env,
    parse_custom_commands,
)
from shedproto.herdr._manifests import _toml_loads
from shedproto.herdr._plugins import PluginError, find_action, platform_error
from shedproto.herdr._screen import split_lines

from ._model import Pane
from ._plugins import HOST_PLATFORM, PluginHandlers
from ._state import AnswerError, E

HANDLERS: dict[str, str] = {
    "command.invoke": "_command_invoke",
    "server.reload_config": "_reload_config",
    "popup.close": "_popup_close",
}
"""Method -> the name of the coroutine here that answers it."""

CONFIG_MAX_BYTES = 1024 * 1024
_namespaces = iter(range(1, 1 << 62))


@dataclass(frozen=True)
class CommandEntry:
    """A loaded custom command as a client sees it (herdr's ``ClientShellCommand``)."""

    command_id: str
    binding_label: str
    binding_labels: tuple[str, ...]
    action: str
    description: str | None
    command: CustomCommand


def _namespace() -> str:
    """Return herdr's load namespace: ``<pid>-<nanos>-<counter>``."""
    return f"{os.getpid()}-{time.time_ns()}-{next(_namespaces)}"


def load_commands(config_dir: str) -> tuple[list[CommandEntry], list[str]]:
    """Read ``<config_dir>/config.toml``'s custom commands; ([], diagnostics) on a bad file."""
    path = Path(config_dir) / "config.toml"
    try:
        data = path.read_bytes()[: CONFIG_MAX_BYTES + 1] if path.is_file() else b""
    except OSError as exc:
        return [], [f"failed to read {path}: {exc}"]
    if not data:
        return [], []
    if len(data) > CONFIG_MAX_BYTES:
        return [], [f"{path} is larger than 1 MiB; custom commands not loaded"]
    loads = _toml_loads()
    if loads is None:
        return [], [f"cannot read {path}: TOML needs Python 3.11+ or the tomli package"]
    try:
        config = loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        return [], [f"failed to parse {path}: {exc}"]
    commands, diagnostics = parse_custom_commands(config)
    namespace = _namespace()
    entries = [
        CommandEntry(
            command_id=command_id(namespace, index), binding_label=c.label,
            binding_labels=c.labels, action=c.action, description=c.description, command=c,
        )
        for index, c in enumerate(commands)
    ]  # fmt: skip
    return entries, diagnostics


class CommandHandlers(PluginHandlers):
    """Custom commands from herdr's config, the config reload and the popup they open."""

    commands: list[CommandEntry]
    config_diagnostics: list[str]
    popup_pane: Pane | None

    def _load_commands(self) -> list[str]:
        self.commands, self.config_diagnostics = load_commands(self.config_dir)
        return self.config_diagnostics

    def command_manifest(self) -> list[CommandEntry]:
        """Return the loaded custom commands with their ids (herdr sends these to its client).

        The ids change on every ``server.reload_config``; an old id then answers
        ``command_not_found``.
        """
        return list(self.commands)

    async def _reload_config(self, id: str, params: Any) -> t.ConfigReloadReply:
        diagnostics = await anyio.to_thread.run_sync(self._load_commands)
        return t.ConfigReloadReply(status="partial" if diagnostics else "applied",
                                   diagnostics=diagnostics)  # fmt: skip

    async def _popup_close(self, id: str, params: Any) -> t.OkReply:
        popup = self.popup_pane
        self.popup_pane = None
        if popup is None or popup.closed:
            raise AnswerError(E.POPUP_NOT_OPEN, "no popup is open")
        await self._close_pane(popup)
        return t.OkReply()

    def _focus_command_target(self, params: t.CommandInvokeParams) -> None:
        mismatch = HerdrErrorCode.COMMAND_TARGET_MISMATCH
        if params.pane_id is not None:
            try:
                pane = self._find_pane(params.pane_id)
            except AnswerError:
                raise AnswerError(E.PANE_NOT_FOUND, f"pane not found: {params.pane_id}") from None
            self._check_workspace(params, pane.workspace.id)
            if params.tab_id is not None and params.tab_id != pane.tab.id:
                raise AnswerError(mismatch, "command pane does not belong to the requested tab")
            self._focus_pane(pane)
            return
        if params.tab_id is not None:
            try:
                tab = self._find_tab(params.tab_id)
            except AnswerError:
                raise AnswerError(E.TAB_NOT_FOUND, f"tab not found: {params.tab_id}") from None
            self._check_workspace(params, tab.workspace.id)
            if tab.focused_pane is not None:
                self._focus_pane(tab.focused_pane)
            return
        if params.workspace_id is not None:
            try:
                ws = self._find_workspace(params.workspace_id)
            except AnswerError:
                raise AnswerError(
                    E.WORKSPACE_NOT_FOUND, f"workspace not found: {params.workspace_id}"
                ) from None
            active = ws.active_tab
            if active is not None and active.focused_pane is not None:
                self._focus_pane(active.focused_pane)

    @staticmethod
    def _check_workspace(params: t.CommandInvokeParams, workspace_id: str) -> None:
        if params.workspace_id is not None and params.workspace_id != workspace_id:
            raise AnswerError(
                HerdrErrorCode.COMMAND_TARGET_MISMATCH,
                "command target does not belong to the requested workspace",
            )

    async def _command_invoke(self, id: str, params: t.CommandInvokeParams) -> t.OkReply:
        entry = next((e for e in self.commands if e.command_id == params.command_id), None)
        if entry is None:
            raise AnswerError(
                HerdrErrorCode.COMMAND_NOT_FOUND,
                "custom command manifest is stale; reload configuration",
            )
        self._focus_command_target(params)
        selected: str | None = None
        if entry.action == "plugin_action" and params.selection is not None:
            if params.pane_id != params.selection.pane_id:
                raise AnswerError(
                    HerdrErrorCode.COMMAND_TARGET_MISMATCH,
                    "command selection does not belong to the requested pane",
                )
            selected = self._selection_text(params.selection)
        try:
            await self._run_custom_command(entry.command, selected)
        except (OSError, AnswerError, PluginError) as exc:
            message = exc.message if isinstance(exc, AnswerError | PluginError) else str(exc)
            raise AnswerError(HerdrErrorCode.COMMAND_FAILED, message) from None
        return t.OkReply()

    def _selection_text(self, selection: t.PaneSelectionReadParams) -> str:
        """Return the text a client selection covers (as ``pane.selection.read``)."""
        pane = self._find_pane(selection.pane_id)
        total = pane.screen.scrollback_rows + pane.screen.rows
        lines = split_lines(pane.screen.read("recent", lines=total).text)
        anchor, cursor = selection.anchor, selection.cursor
        return select_text(lines, (anchor.row, anchor.col), (cursor.row, cursor.col))

    def _command_env(self) -> tuple[dict[str, str], str | None]:
        """Return herdr's custom-command variables and the focused pane's cwd (if a dir)."""
        pane = None
        if self.active is not None and self.active.active_tab is not None:
            pane = self.active.active_tab.focused_pane
        cwd = pane.cwd if pane is not None else None
        env = custom_command_env(
            str(self.path),
            workspace_id=self.active.id if self.active is not None else None,
            tab_id=pane.tab.id if pane is not None else None,
            pane_id=pane.id if pane is not None else None,
            pane_cwd=cwd,
        )
        return env, cwd if cwd is not None and os.path.isdir(cwd) else None

    async def _run_custom_command(self, command: CustomCommand, selected: str | None) -> None:
        if command.action == "plugin_action":
            await self._invoke_keybinding_action(command.command, selected)
            return
        env, cwd = self._command_env()
        if command.action == "shell":
            await self._spawn_detached(command.command, env, cwd)
            return
        anchor = self._focused_pane()
        pane = self._spawn(anchor.workspace, anchor.tab, cwd or anchor.cwd, env,
                           ["/bin/sh", "-c", command.command])  # fmt: skip
        self._place_beside(anchor.tab, anchor, pane, "right")
        self.hub.emit(t.PaneCreatedEventData(pane=self._pane_info(pane)))
        self._focus_pane(pane)
        anchor.tab.zoomed = True
        self._emit_layout(anchor.tab)
        if command.action == "popup":
            previous = self.popup_pane
            self.popup_pane = pane
            if previous is not None and not previous.closed:
                await self._close_pane(previous)

    async def _spawn_detached(self, command: str, env: dict[str, str], cwd: str | None) -> None:
        """Start ``/bin/sh -lc command`` detached, stdio closed, as herdr's shell commands.

        A launcher shell backgrounds it and exits at once, so the command is nobody's
        child here (it outlives the server, as herdr's detached commands do).

        Raises:
            OSError: ``/bin/sh`` cannot start.

        """
        launcher = '/bin/sh -lc "$1" </dev/null >/dev/null 2>&1 &'
        done = await anyio.run_process(
            ["/bin/sh", "-c", launcher, "sh", command], env={**self.environ, **env}, cwd=cwd,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise OSError(f"/bin/sh exited with status {done.returncode}")

    async def _invoke_keybinding_action(self, action_id: str, selected: str | None) -> None:
        """Run a plugin action as herdr's keybinding path does (source ``keybinding``)."""
        plugin, action = find_action(self.plugins, None, action_id)
        if not plugin.enabled:
            raise AnswerError(HerdrErrorCode.PLUGIN_DISABLED,
                              f"plugin {plugin.plugin_id} is disabled")  # fmt: skip
        failure = platform_error(
            action.platforms, f"{plugin.plugin_id}.{action.action_id}", HOST_PLATFORM
        )  # herdr names the bare qualified id here (no "action '...'")
        if failure is not None:
            raise failure
        context = self._context(None, "keybinding")
        if selected is not None:
            context = msgspec.structs.replace(context, selected_text=selected)
        await self._start_plugin_action(plugin, action, context)
