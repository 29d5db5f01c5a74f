"""The ``pane.graphics.*`` handlers: image layers kept per pane (no terminal draws them)."""

from __future__ import annotations

import base64

from shedproto.herdr import types as t

from ._state import AnswerError, E, ServerState

HANDLERS: dict[str, str] = {
    "pane.graphics.set": "_graphics_set",
    "pane.graphics.clear": "_graphics_clear",
    "pane.graphics.info": "_graphics_info",
}
"""Method -> the name of the coroutine here that answers it."""


class GraphicsHandlers(ServerState):
    """The ``pane.graphics.*`` handlers: image layers kept per pane (no terminal draws them)."""

    async def _graphics_set(self, id: str, params: t.PaneGraphicsSetParams) -> t.OkReply:
        pane = self._find_pane(params.pane_id)
        try:
            data = base64.b64decode(params.data_base64, validate=True)
        except ValueError:
            raise AnswerError(E.INVALID_IMAGE, "data_base64 is not base64") from None
        channels = {"rgb": 3, "rgba": 4, "bgra": 4}.get(params.format)
        pixels = params.image_width * params.image_height
        if channels is not None and len(data) != pixels * channels:
            raise AnswerError(E.INVALID_IMAGE, "pixel data does not match the image size")
        self.graphics.setdefault(pane.id, {})[params.layer_id or ""] = params
        return t.OkReply()

    async def _graphics_clear(self, id: str, params: t.PaneGraphicsClearParams) -> t.OkReply:
        pane = self._find_pane(params.pane_id)
        layers = self.graphics.get(pane.id, {})
        if params.layer_id is None:
            layers.clear()
        else:
            layers.pop(params.layer_id, None)
        return t.OkReply()

    async def _graphics_info(self, id: str, params: t.PaneTarget) -> t.PaneGraphicsInfoReply:
        pane = self._find_pane(params.pane_id)
        # no terminal client: no cell size in pixels, no file frames
        return t.PaneGraphicsInfoReply(
            cell_width_px=0, cell_height_px=0, pane_visible=self._pane_focused(pane)
        )
