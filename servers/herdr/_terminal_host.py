"""The server's side of the terminal streams: target lookup, layout size, PTY writes.

:class:`TerminalHostHandlers` gives :class:`~shedproto.servers.herdr.HerdrServer`
what :class:`~shedproto.servers.herdr._terminal.TerminalStreams` needs
(:class:`~shedproto.servers.herdr._terminal.TerminalHost`); the streams
themselves have no socket-API method.
"""

from __future__ import annotations

from ._model import Pane
from ._state import AnswerError, ServerState
from ._terminal import resolve_target

HANDLERS: dict[str, str] = {}
"""No socket-API methods: the streams are served on the client socket."""


class TerminalHostHandlers(ServerState):
    """Target lookup, layout size and PTY writes for the terminal streams."""

    def find_terminal(self, target: str) -> Pane | None:
        """Return the live pane a stream target names (terminal id, pane id, agent)."""
        return resolve_target(target, self._all_panes(), self._pane_or_none)

    def _all_panes(self) -> list[Pane]:
        return [pane for ws in self.workspaces for pane in ws.panes()]

    def _pane_or_none(self, ref: str) -> Pane | None:
        try:
            return self._find_pane(ref)
        except AnswerError:
            return None

    def layout_size(self, pane: Pane) -> tuple[int, int]:
        """Return the (cols, rows) the pane's tab layout gives it."""
        return self._pane_rect(pane)

    async def write_terminal(self, pane: Pane, data: bytes) -> None:
        """Write ``data`` to the pane's PTY (``OSError`` when the program does not read)."""
        await pane.process.write(data, timeout=self.input_timeout)
