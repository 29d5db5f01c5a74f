"""The op-level error: a failure answered as ``{"ok": false, "error": {code, message}}``."""

from __future__ import annotations

from typing import Any

from ._codes import DesktopCode, codes_match, normalize_code

__all__ = ["DesktopError"]


class DesktopError(Exception):
    """An ``ok: false`` answer: the wire ``code`` (either spelling) and its ``message``.

    Servers raise it from op handlers to answer an error; clients raise it
    when the server answered one. ``request_id`` is the id the answer carried
    (``None`` when it carried none, as Tauri's ``bad_request`` for bad JSON).
    Compare codes with :meth:`matches`, which ignores the dialect's spelling.
    """

    code: str
    message: str
    request_id: Any

    def __init__(self, code: str | DesktopCode, message: str, *, request_id: Any = None) -> None:
        wire = code.value if isinstance(code, DesktopCode) else code
        super().__init__(f"{wire}: {message}")
        self.code = wire
        self.message = message
        self.request_id = request_id

    @property
    def normalized(self) -> str:
        """The code folded to snake_case (``not-enabled`` -> ``not_enabled``)."""
        return normalize_code(self.code)

    def matches(self, *codes: str | DesktopCode) -> bool:
        """Return whether the code is any of ``codes`` in either dialect's spelling."""
        return any(codes_match(self.code, c) for c in codes)

    def __repr__(self) -> str:
        return f"DesktopError({self.code!r}, {self.message!r})"
