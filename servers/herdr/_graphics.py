"""The ``pane.graphics.*`` handlers: image layers kept per pane (no terminal draws them).

``pane.graphics.stream`` (the connection is in :mod:`._server`) opens a layer
here, applies each frame and clears the layer when the stream ends. The rules
are herdr's (src/app/api/pane_graphics.rs:195-400, 508-520@v0.8.2): a layer
id is 1-64 of ``[A-Za-z0-9._:-]``, a pane holds at most 16 layers, a layer has
at most one open stream, pixel data must match the image size, and a file
frame names an rgba/bgra file of exactly that size.
"""

from __future__ import annotations

import base64
import re

from shedproto.herdr import GraphicsFrame, HerdrErrorCode
from shedproto.herdr import types as t

from ._state import AnswerError, E, ServerState

MAX_LAYERS_PER_PANE = 16
"""herdr's ``PANE_GRAPHICS_MAX_LAYERS_PER_PANE``."""
_LAYER_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
_CHANNELS = {"rgb": 3, "rgba": 4, "bgra": 4}

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
        channels = _CHANNELS.get(params.format)
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

    def _graphics_stream_open(self, params: t.PaneGraphicsStreamParams) -> tuple[str, str]:
        """Claim the stream's layer; return (pane id, layer id).

        Raises:
            AnswerError: ``pane_not_found``, ``invalid_layer_id``,
                ``stream_conflict`` or ``layer_limit``, as herdr answers them.

        """
        pane = self._find_pane(params.pane_id)
        layer = params.layer_id or ""  # "": the primary layer, as ``pane.graphics.set`` keeps it
        if params.layer_id is not None and _LAYER_ID.fullmatch(layer) is None:
            message = (
                "layer_id must contain between 1 and 64 characters"
                if not layer or len(layer) > 64
                else "layer_id contains unsupported characters"
            )
            raise AnswerError(HerdrErrorCode.INVALID_LAYER_ID, message)
        key = (pane.id, layer)
        if key in self.graphics_streams:
            raise AnswerError(E.STREAM_CONFLICT, "pane graphics layer has an active stream")
        layers = self.graphics.get(pane.id, {})
        if layer not in layers and len(layers) >= MAX_LAYERS_PER_PANE:
            raise AnswerError(HerdrErrorCode.LAYER_LIMIT, "pane graphics layer limit reached")
        self.graphics_streams.add(key)
        return key

    def _graphics_stream_frame(
        self, key: tuple[str, str], z_index: int, frame: GraphicsFrame
    ) -> t.PaneGraphicsFrameAckReply | None:
        """Apply one frame to the stream's layer; a file frame's acknowledgement is returned.

        Raises:
            AnswerError: (with the frame's answer id) ``invalid_image`` or
                ``invalid_frame_file``; the stream then ends.

        """
        header = frame.header
        channels = _CHANNELS.get(header.format)
        data = frame.data
        if header.file is not None:
            try:
                with open(header.file.path, "rb") as pixels:
                    data = pixels.read(header.image_width * header.image_height * 4 + 1)
            except OSError as exc:
                raise AnswerError(
                    HerdrErrorCode.INVALID_FRAME_FILE, str(exc), id=frame.answer_id
                ) from None
        pixels_count = header.image_width * header.image_height
        if pixels_count == 0:
            raise AnswerError(
                E.INVALID_IMAGE, "image dimensions must be non-zero", id=frame.answer_id
            )
        if channels is not None and len(data) != pixels_count * channels:
            raise AnswerError(
                E.INVALID_IMAGE, "pixel data does not match the image size", id=frame.answer_id
            )
        pane_id, layer = key
        self.graphics.setdefault(pane_id, {})[layer] = t.PaneGraphicsSetParams(
            pane_id=pane_id,
            layer_id=layer or None,
            z_index=z_index,
            format=header.format,
            image_width=header.image_width,
            image_height=header.image_height,
            data_base64=base64.b64encode(data).decode(),
            placement=header.placement,
        )
        if header.file is None:
            return None
        return t.PaneGraphicsFrameAckReply(sequence=header.sequence, revision=header.revision)

    def _graphics_stream_close(self, key: tuple[str, str]) -> None:
        """End the stream: release the layer and clear what it drew."""
        self.graphics_streams.discard(key)
        pane_id, layer = key
        self.graphics.get(pane_id, {}).pop(layer, None)
