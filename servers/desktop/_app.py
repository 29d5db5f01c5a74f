"""The stand-in shed-desktop app: every catalogue op, dispatched to its handler.

Each handler takes the decoded params (and the raw params, for rules that
look at mistyped values) and returns the result, or raises
:class:`~shedproto.desktop.DesktopError`. Protocol rules (launch fields, argv
splitting, host ids, craze params, the attempt) come from the core; what lives
in the op groups is the stand-in app's state changes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from shedproto.desktop import (
    CATALOGUE,
    DesktopError,
    Dialect,
    LaunchPolicy,
    Release,
    RequestReceived,
)

from ._model import DesktopModel
from ._ops_approvals import ApprovalOps
from ._ops_sheds import ShedOps
from ._ops_ui import UiOps
from ._ops_ui_truth import UiTruthOps

__all__ = ["DesktopApp"]

Handler = Callable[[Any, Any], Any]
AsyncHandler = Callable[[Any, Any], Awaitable[Any]]


class DesktopApp(UiOps, ShedOps, ApprovalOps, UiTruthOps):
    """The stand-in shed-desktop: dispatches valid requests to handlers over a model.

    An op in the catalogue with no handler of its own answers ``{}``, its
    documented result.
    """

    def __init__(
        self,
        model: DesktopModel,
        dialect: Dialect,
        *,
        test_mode: bool,
        socket_path: str,
        pid: int,
        mock_base_url: str | None = None,
        launch_policy: LaunchPolicy = LaunchPolicy.IGNORE_EXTRAS,
        release: Release = Release.LATEST,
    ) -> None:
        super().__init__(
            model,
            dialect,
            test_mode=test_mode,
            socket_path=socket_path,
            pid=pid,
            mock_base_url=mock_base_url,
            launch_policy=launch_policy,
            release=release,
        )
        self._handlers: dict[str, Handler] = {}
        self._async_handlers: dict[str, AsyncHandler] = {}
        for name, spec in CATALOGUE.items():
            target = (spec.alias_of or name).replace(".", "_")
            method = getattr(self, "op_" + target, None)
            if method is not None:
                self._handlers[name] = method
            slow = getattr(self, "aop_" + target, None)
            if slow is not None:
                self._async_handlers[name] = slow
        self.async_ops = frozenset(self._async_handlers)
        """Ops whose served form takes time (``roost.bootstrap``): use :meth:`handle_async`."""

    def handle(self, event: RequestReceived) -> Any:
        """Run the op of a valid request and return its result.

        Raises:
            DesktopError: the op's refusal, coded for the dialect.

        """
        handler = self._handlers.get(event.op)
        if handler is None:  # catalogue ops without state: answer the documented empty shape
            return {}
        try:
            return handler(event.params, event.raw_params)
        except DesktopError:
            raise
        except Exception as exc:  # a model bug must not kill the connection
            raise self._bug(exc) from exc

    async def handle_async(self, event: RequestReceived) -> Any:
        """Run the op of a valid request, waiting as the real app does (see :attr:`async_ops`).

        Ops without a served form of their own run as :meth:`handle`.

        Raises:
            DesktopError: the op's refusal, coded for the dialect.

        """
        handler = self._async_handlers.get(event.op)
        if handler is None:
            return self.handle(event)
        try:
            return await handler(event.params, event.raw_params)
        except DesktopError:
            raise
        except Exception as exc:
            raise self._bug(exc) from exc

    def _bug(self, exc: Exception) -> DesktopError:
        return DesktopError(
            self.dialect.internal, f"reference server bug: {type(exc).__name__}: {exc}"
        )
