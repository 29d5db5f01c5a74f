"""Agent-lane ops over craze rows (``lane.*``)."""

from __future__ import annotations

from typing import Any

from shedproto.desktop import (
    DesktopCode,
    DesktopError,
    craze_host,
)
from shedproto.desktop import _ops as o

from ._base import BAD, AppBase
from ._model import Session

__all__ = ["LaneOps"]


class LaneOps(AppBase):
    """Agent-lane ops over craze rows (``lane.*``)."""

    def _lane_session(self, p: Any) -> Session:
        host = craze_host(p.machine)
        for session in self.model.sessions:
            lane = session.extra.get("agent_lane")
            if session.origin == host.origin and lane == {
                "kind": p.kind,
                "session_id": p.session_id,
            }:
                return session
        raise DesktopError(
            DesktopCode.UNKNOWN_SESSION, f'{host.origin} lists no {p.kind} session "{p.session_id}"'
        )

    def _lane(self, p: Any) -> dict[str, Any]:
        session = self._lane_session(p)
        lanes: dict[str, dict[str, Any]] = self.model.ui.setdefault("lanes", {})
        return lanes.setdefault(
            f"{session.origin}#{p.session_id}",
            {"session": session.row(), "messages": [], "approvals": [], "settings": None},
        )

    def op_lane_open(self, p: o.LaneParams, raw: Any) -> Any:
        return o.LaneOpenResult(session=self._lane(p)["session"])

    def op_lane_messages(self, p: o.LaneParams, raw: Any) -> Any:
        lane = self._lane(p)
        return o.LaneMessages(
            messages=list(lane["messages"]),
            generation=1,
            stale=None,
            ended=False,
            settings=lane["settings"],
            session=lane["session"],
        )

    def op_lane_approvals(self, p: o.LaneParams, raw: Any) -> Any:
        return o.LaneApprovals(approvals=list(self._lane(p)["approvals"]))

    def op_lane_send(self, p: o.LaneSendParams, raw: Any) -> Any:
        if p.mode is not None and p.mode not in ("queue", "interject"):
            raise DesktopError(BAD, f'unknown mode: "{p.mode}"')
        self._lane(p)["messages"].append(
            {"role": "user", "text": p.text, "mode": p.mode or "queue"}
        )
        return o.Empty()

    def _lane_noop(self, p: Any, raw: Any) -> Any:
        self._lane(p)
        return o.Empty()

    op_lane_cancel = _lane_noop
    op_lane_stop = _lane_noop
    op_lane_close = _lane_noop

    def op_lane_answer(self, p: o.LaneAnswerParams, raw: Any) -> Any:
        lane = self._lane(p)
        forms = [k for k in ("choice", "permission", "question", "reject") if k in p.answer]
        if len(forms) != 1:
            raise DesktopError(
                BAD, "'answer' must hold exactly one of choice, permission, question, reject"
            )
        pending = [a for a in lane["approvals"] if a.get("id") == p.approval_id]
        if not pending:
            raise DesktopError(DesktopCode.UNKNOWN_APPROVAL, f"no pending approval {p.approval_id}")
        lane["approvals"].remove(pending[0])
        return o.Empty()

    def op_lane_settings(self, p: o.LaneParams, raw: Any) -> Any:
        return o.LaneSettings(settings=self._lane(p)["settings"])

    def op_lane_set(self, p: o.LaneSetParams, raw: Any) -> Any:
        lane = self._lane(p)
        if p.change.get("kind") not in ("model", "mode", "config") or "id" not in p.change:
            raise DesktopError(BAD, "'change' must be {kind: model|mode|config, id, ...}")
        if lane["settings"] is None:
            raise DesktopError(DesktopCode.NOT_ACCEPTING, "this session has no settings to change")
        lane["settings"][p.change["kind"]] = p.change["id"]
        return o.Empty()
