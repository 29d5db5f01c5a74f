"""The ``integration.*`` handlers.

``integration.install`` / ``uninstall`` edit agent configuration only under
the server's configured ``home`` (``HerdrServer(home=...)``; the fixtures
point it at a temp dir); without one they refuse, naming the option, and the
user's real home is never touched. Every target herdr ships is built
(``_integration_targets``), with herdr's files, entries and messages.
"""

from __future__ import annotations

import shutil
import typing
from typing import Any

import anyio
import anyio.to_thread

from shedproto.herdr import types as t
from shedproto.herdr._integration_assets import INTEGRATION_COMMANDS, INTEGRATION_LABELS
from shedproto.herdr._integrations import IntegrationError

from . import _integration_targets
from ._state import AnswerError, E, ServerState

HANDLERS: dict[str, str] = {
    "integration.list": "_integration_list",
    "integration.install": "_integration_install",
    "integration.uninstall": "_integration_uninstall",
}
"""Method -> the name of the coroutine here that answers it."""


class IntegrationHandlers(ServerState):
    """The ``integration.*`` handlers.

    ``integration.install`` / ``uninstall`` edit agent configuration only under
    the server's configured ``home`` (``HerdrServer(home=...)``; the fixtures
    point it at a temp dir); without one they refuse, naming the option, and the
    user's real home is never touched. Every target herdr ships is built
    (``_integration_targets``), with herdr's files, entries and messages.
    """

    async def _integration_list(self, id: str, params: Any) -> t.IntegrationListReply:
        return t.IntegrationListReply(
            integrations=await anyio.to_thread.run_sync(self._integration_infos)
        )

    def _integration_infos(self) -> list[t.IntegrationInfo]:
        """Return herdr's list: label, first command, available (on PATH or installed), state.

        The state is read under the server's ``home`` only; without one every
        target is ``not_installed`` (the real home is never looked at).
        """
        path = self.environ.get("PATH")
        infos = []
        for target in typing.get_args(t.IntegrationTarget):
            commands = INTEGRATION_COMMANDS.get(target, (target,))
            found = self.home and _integration_targets.state(target, self.environ, self.home)
            state = found or "not_installed"
            on_path = any(shutil.which(c, path=path) is not None for c in commands)
            infos.append(t.IntegrationInfo(
                target=target, label=INTEGRATION_LABELS.get(target, target),
                command=commands[0], available=on_path or state != "not_installed",
                state=state,  # type: ignore[arg-type]
            ))  # fmt: skip
        return infos

    def _integration_home(self, target: str, code: E) -> str:
        if self.home is None:
            raise AnswerError(
                code,
                f"the reference server edits {target}'s configuration only under a configured "
                "home (HerdrServer(home=...)); none is set, so the real home is left alone",
            )
        return self.home

    async def _integration_install(
        self, id: str, params: t.IntegrationInstallParams
    ) -> t.IntegrationInstallReply:
        home = self._integration_home(params.target, E.INTEGRATION_INSTALL_FAILED)
        try:
            messages = await anyio.to_thread.run_sync(
                _integration_targets.install, params.target, self.environ, home
            )
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
            messages = await anyio.to_thread.run_sync(
                _integration_targets.uninstall, params.target, self.environ, home
            )
        except (OSError, IntegrationError, ValueError) as exc:
            raise AnswerError(E.INTEGRATION_UNINSTALL_FAILED, str(exc)) from None
        return t.IntegrationUninstallReply(
            target=params.target, details=t.IntegrationUninstallResult(messages=messages)
        )
