"""The ``integration.*`` and ``command.invoke`` handlers."""

from __future__ import annotations

import shutil
import typing
from typing import Any

from shedproto.herdr import types as t

from ._state import AnswerError, E, ServerState

HANDLERS: dict[str, str] = {
    "integration.list": "_integration_list",
    "integration.install": "_integration_refused",
    "integration.uninstall": "_integration_refused",
    "command.invoke": "_command_invoke",
}
"""Method -> the name of the coroutine here that answers it."""


class IntegrationHandlers(ServerState):
    """The ``integration.*`` and ``command.invoke`` handlers."""

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

    async def _integration_refused(self, id: str, params: Any) -> Any:
        raise AnswerError(
            E.INTEGRATION_INSTALL_FAILED
            if isinstance(params, t.IntegrationInstallParams)
            else E.INTEGRATION_UNINSTALL_FAILED,
            f"the reference server never edits {params.target}'s configuration (decision notes)",
        )

    async def _command_invoke(self, id: str, params: t.CommandInvokeParams) -> t.OkReply:
        raise AnswerError(E.INVALID_PARAMS, f"unknown command {params.command_id}")
