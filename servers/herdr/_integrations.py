"""The ``integration.*`` and ``command.invoke`` handlers.

``integration.install`` / ``uninstall`` edit agent configuration only under
the server's configured ``home`` (``HerdrServer(home=...)``; the fixtures
point it at a temp dir); without one they refuse, naming the option, and the
user's real home is never touched. The claude target is herdr's (hook script
plus ``settings.json`` entry); the other targets refuse as not yet built.
"""

from __future__ import annotations

import json
import shutil
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from shedproto.herdr import types as t
from shedproto.herdr._integrations import (
    CLAUDE_HOOK_NAME,
    CLAUDE_HOOK_SCRIPT,
    IntegrationError,
    claude_dir,
    claude_settings_install,
    claude_settings_uninstall,
)

from ._state import AnswerError, E, ServerState


def _settings(path: Path) -> tuple[Any, str | None]:
    if not path.is_file():
        return {}, None
    text = path.read_text(encoding="utf-8")
    try:
        return json.loads(text), text
    except ValueError as exc:
        raise IntegrationError(f"failed to parse {path}: {exc}") from None


def _sandboxed_claude_dir(environ: Mapping[str, str], home: str) -> Path:
    """Return claude's config dir, which must lie inside the server's ``home``.

    Raises:
        IntegrationError: ``$CLAUDE_CONFIG_DIR`` points outside ``home`` (a user's
            real claude config): the reference server edits nothing outside its sandbox.

    """
    directory = Path(claude_dir(environ, home)).resolve()
    if not directory.is_relative_to(Path(home).resolve()):
        raise IntegrationError(
            f"CLAUDE_CONFIG_DIR ({directory}) is outside the server's home ({home}): the "
            "reference server edits agent configuration only under its home"
        )
    return directory


def _install_claude(environ: Mapping[str, str], home: str) -> list[str]:
    """Install herdr's claude hook under ``home`` (herdr's messages; see the core module)."""
    directory = _sandboxed_claude_dir(environ, home)
    if not directory.is_dir():
        raise IntegrationError(
            f"claude directory not found at {directory}. install claude code first"
        )
    hook = directory / "hooks" / CLAUDE_HOOK_NAME
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(CLAUDE_HOOK_SCRIPT, encoding="utf-8")
    hook.chmod(0o755)
    settings_path = directory / "settings.json"
    settings, text = _settings(settings_path)
    updated = claude_settings_install(settings, str(settings_path), str(hook))
    if text is None or updated != settings:
        settings_path.write_text(json.dumps(updated, indent=2) + "\n", encoding="utf-8")
    return [
        f"installed claude integration hook to {hook}",
        f"ensured claude settings at {settings_path}",
    ]


def _uninstall_claude(environ: Mapping[str, str], home: str) -> list[str]:
    """Remove herdr's claude hook and settings entries (only herdr's own)."""
    directory = _sandboxed_claude_dir(environ, home)
    hook = directory / "hooks" / CLAUDE_HOOK_NAME
    settings_path = directory / "settings.json"
    changed = False
    if settings_path.is_file():
        settings, _ = _settings(settings_path)
        updated, changed = claude_settings_uninstall(settings, str(settings_path), str(hook))
        if changed:
            settings_path.write_text(json.dumps(updated, indent=2) + "\n", encoding="utf-8")
    removed = hook.is_file()
    if removed:
        hook.unlink()
    return [
        f"removed claude hook at {hook}" if removed else f"no claude hook found at {hook}",
        f"removed herdr claude hook entries from {settings_path}"
        if changed
        else f"no herdr claude hook entries found in {settings_path}",
    ]

HANDLERS: dict[str, str] = {
    "integration.list": "_integration_list",
    "integration.install": "_integration_install",
    "integration.uninstall": "_integration_uninstall",
    "command.invoke": "_command_invoke",
}
"""Method -> the name of the coroutine here that answers it."""


class IntegrationHandlers(ServerState):
    """The ``integration.*`` and ``command.invoke`` handlers.

    ``integration.install`` / ``uninstall`` edit agent configuration only under
    the server's configured ``home`` (``HerdrServer(home=...)``; the fixtures
    point it at a temp dir); without one they refuse, naming the option, and the
    user's real home is never touched. The claude target is herdr's (hook script
    plus ``settings.json`` entry); the other targets refuse as not yet built.
    """

    async def _integration_list(self, id: str, params: Any) -> t.IntegrationListReply:
        integrations = [
            t.IntegrationInfo(
                target=target,
                label=target,
                command=target,
                available=shutil.which(target, path=self.environ.get("PATH")) is not None,
                state="not_installed",
            )
            for target in typing.get_args(t.IntegrationTarget)
        ]
        return t.IntegrationListReply(integrations=integrations)

    def _integration_home(self, target: str, code: E) -> str:
        if self.home is None:
            raise AnswerError(
                code,
                f"the reference server edits {target}'s configuration only under a configured "
                "home (HerdrServer(home=...)); none is set, so the real home is left alone",
            )
        if target != "claude":
            raise AnswerError(
                code, f"the reference server does not install the {target} integration yet"
            )
        return self.home

    async def _integration_install(
        self, id: str, params: t.IntegrationInstallParams
    ) -> t.IntegrationInstallReply:
        home = self._integration_home(params.target, E.INTEGRATION_INSTALL_FAILED)
        try:
            messages = await anyio.to_thread.run_sync(_install_claude, self.environ, home)
        except (OSError, IntegrationError, ValueError) as exc:
            raise AnswerError(E.INTEGRATION_INSTALL_FAILED, str(exc)) from None
        return t.IntegrationInstallReply(
            target=params.target, details=t.IntegrationInstallResult(messages=messages)
        )

    async def _integration_uninstall(
        self, id: str, params: t.IntegrationUninstallParams
    ) -> t.IntegrationUninstallReply:
        home = self._integration_home(params.target, E.INTEGRATION_UNINSTALL_FAILED)
        try:
            messages = await anyio.to_thread.run_sync(_uninstall_claude, self.environ, home)
        except (OSError, IntegrationError, ValueError) as exc:
            raise AnswerError(E.INTEGRATION_UNINSTALL_FAILED, str(exc)) from None
        return t.IntegrationUninstallReply(
            target=params.target, details=t.IntegrationUninstallResult(messages=messages)
        )

    async def _command_invoke(self, id: str, params: t.CommandInvokeParams) -> t.OkReply:
        raise AnswerError(E.INVALID_PARAMS, f"unknown command {params.command_id}")
