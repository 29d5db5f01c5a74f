"""The observer interface every protocol adapter implements, and its bookkeeping."""

from __future__ import annotations

from abc import ABC, abstractmethod

from shedproto._errors import ProtocolError

from ._diagnostic import Diagnostic, DiagnosticKind, Direction, kind_of

__all__ = ["Observer"]


class Observer(ABC):
    """Watches one connection: feed it each direction's bytes, get diagnostics back.

    ``feed(direction, data)`` takes the bytes exactly as relayed (``b""`` =
    that direction reached end of stream) and returns the deviations they
    completed. It never raises for anything on the wire; once a direction's
    framing is broken (an over-cap line) further bytes of that direction are
    ignored. Adapters use the core's decoders and connection objects only.
    """

    protocol: str = ""

    def __init__(self, connection: int) -> None:
        self.connection = connection
        self.frames: dict[Direction, int] = {"c2s": 0, "s2c": 0}
        """Complete frames seen so far per direction (the next frame's index)."""
        self._out: list[Diagnostic] = []

    def feed(self, direction: Direction, data: bytes) -> list[Diagnostic]:
        """Observe ``data`` going ``direction``; return the new diagnostics (never raises)."""
        if direction == "c2s":
            self._client_bytes(data)
        else:
            self._server_bytes(data)
        out, self._out = self._out, []
        return out

    @abstractmethod
    def _client_bytes(self, data: bytes) -> None: ...

    @abstractmethod
    def _server_bytes(self, data: bytes) -> None: ...

    def _frame(self, direction: Direction) -> int:
        """Count one complete frame of ``direction``; return its index."""
        index = self.frames[direction]
        self.frames[direction] = index + 1
        return index

    def _last(self, direction: Direction) -> int:
        return max(self.frames[direction] - 1, 0)

    def report(
        self,
        kind: DiagnosticKind,
        direction: Direction,
        message: str,
        *,
        path: str | None = None,
        frame: int | None = None,
    ) -> None:
        """Record one diagnostic (``frame`` defaults to the last frame of ``direction``)."""
        self._out.append(
            Diagnostic(
                kind=kind,
                protocol=self.protocol,
                connection=self.connection,
                direction=direction,
                frame=self._last(direction) if frame is None else frame,
                message=message,
                path=path,
            )
        )

    def report_error(
        self, direction: Direction, error: ProtocolError, *, frame: int | None = None
    ) -> None:
        """Record the diagnostic a core error stands for (kind from its code)."""
        self.report(kind_of(error), direction, error.message, path=error.path, frame=frame)
