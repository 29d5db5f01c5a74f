"""Agent-lane ops over craze rows (``lane.*``), with the lane contract's failures.

The reads (``lane.open``, ``lane.messages``, ``lane.approvals``,
``lane.settings``) answer from the app's own state. The verbs go down the
lane: on a reconnecting lane they wait (up to 10 s) for it to come back or
fail ``unavailable`` unsent; with a lost answer they apply and fail
``outcome_unknown``. The served form really waits
(:meth:`LaneOps.lane_verb_async`); the synchronous form compresses the wait.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio

from shedproto.desktop import (
    DesktopCode,
    DesktopError,
    craze_host,
    lane_answer_lost,
    lane_verb_wait,
    rust_debug,
)
from shedproto.desktop import types as o

from ._base import BAD, AppBase
from ._model import Lane, Session

__all__ = ["LaneOps"]


class LaneOps(AppBase):
    """Agent-lane ops over craze rows (``lane.*``)."""

    def _lane_session(self, p: Any) -> Session:
        """Return the row whose ``agent_lane`` stamp is ``(kind, session_id)``.

        Raises:
            DesktopError: ``no_lane`` ``session "<id>" on machine "<m>" carries no
                agent_lane (its tab reported no agent server)`` (lane.rs ``lane_stamp``,
                charliek/shed desktop/tauri/src-tauri/src/lane.rs, the 150k version).

        """
        host = craze_host(p.machine)
        for session in self.model.sessions:
            lane = session.extra.get("agent_lane")
            if session.origin == host.origin and lane == {
                "kind": p.kind,
                "session_id": p.session_id,
            }:
                return session
        raise DesktopError(
            DesktopCode.NO_LANE,
            f"session {rust_debug(p.session_id)} on machine {rust_debug(p.machine)} carries "
            "no agent_lane (its tab reported no agent server)",
        )

    def _lane(self, p: Any) -> Lane:
        session = self._lane_session(p)
        key = f"{session.origin}#{p.session_id}"
        lane = self.model.lanes.get(key)
        if lane is None:
            lane = self.model.lanes[key] = Lane(session=session.row())
        return lane

    def _verb(self, verb: str, p: Any, apply: Callable[[Lane], None]) -> Any:
        """Send ``verb``: refuse it unsent on a lane that stays down, else apply it."""
        lane = self._lane(p)
        if lane_verb_wait(verb, lane.reconnect_in, wait=self.model.lane_reconnect_wait) > 0:
            lane.reconnected()  # it came back within the wait
        apply(lane)
        if lane.lost_answers > 0:
            lane.lost_answers -= 1
            raise lane_answer_lost(verb)
        return o.Empty()

    async def lane_verb_async(self, verb: str, p: Any) -> None:
        """Wait as the app does for a reconnecting lane before ``verb`` is sent (served form)."""
        lane = self._lane(p)
        limit = self.model.lane_reconnect_wait
        try:
            wait = lane_verb_wait(verb, lane.reconnect_in, wait=limit)
        except DesktopError:
            await anyio.sleep(limit)  # the app waits its full patience, then refuses
            raise
        if wait > 0:
            await anyio.sleep(wait)
            lane.reconnected()

    def op_lane_open(self, p: o.LaneParams, raw: Any) -> Any:
        return o.LaneOpenResult(session=self._lane(p).session)

    def op_lane_messages(self, p: o.LaneParams, raw: Any) -> Any:
        lane = self._lane(p)
        return o.LaneMessages(
            messages=list(lane.messages),
            generation=lane.generation,
            stale=lane.stale,
            ended=lane.ended,
            capabilities=lane.capabilities,
            settings=lane.settings,
            session=lane.session,
        )

    def op_lane_approvals(self, p: o.LaneParams, raw: Any) -> Any:
        return o.LaneApprovals(approvals=list(self._lane(p).approvals))

    def op_lane_send(self, p: o.LaneSendParams, raw: Any) -> Any:
        if p.mode is not None and p.mode not in ("queue", "interject"):
            raise DesktopError(BAD, f'unknown mode: "{p.mode}"')

        def apply(lane: Lane) -> None:
            lane.messages.append({"role": "user", "text": p.text, "mode": p.mode or "queue"})

        return self._verb("lane.send", p, apply)

    def op_lane_cancel(self, p: o.LaneParams, raw: Any) -> Any:
        return self._verb("lane.cancel", p, lambda lane: None)

    def op_lane_stop(self, p: o.LaneParams, raw: Any) -> Any:
        return self._verb("lane.stop", p, lambda lane: None)

    def op_lane_close(self, p: o.LaneParams, raw: Any) -> Any:
        # Lanes::close (lane.rs): evict whatever is open under the key; closing a lane
        # that is not open is success, so nothing is looked up
        try:
            origin = craze_host(p.machine).origin
        except DesktopError:
            return o.Empty()
        self.model.lanes.pop(f"{origin}#{p.session_id}", None)
        return o.Empty()

    def op_lane_answer(self, p: o.LaneAnswerParams, raw: Any) -> Any:
        lane = self._lane(p)
        forms = [k for k in ("choice", "permission", "question", "reject") if k in p.answer]
        if len(forms) != 1:
            raise DesktopError(
                BAD, "'answer' must hold exactly one of choice, permission, question, reject"
            )
        pending = [a for a in lane.approvals if a.get("id") == p.approval_id]
        if not pending:
            raise DesktopError(DesktopCode.UNKNOWN_APPROVAL, f"no pending approval {p.approval_id}")
        return self._verb("lane.answer", p, lambda lane: lane.approvals.remove(pending[0]))

    def op_lane_settings(self, p: o.LaneParams, raw: Any) -> Any:
        return o.LaneSettings(settings=self._lane(p).settings)

    def op_lane_set(self, p: o.LaneSetParams, raw: Any) -> Any:
        lane = self._lane(p)
        if p.change.get("kind") not in ("model", "mode", "config") or "id" not in p.change:
            raise DesktopError(BAD, "'change' must be {kind: model|mode|config, id, ...}")
        settings = lane.settings
        if settings is None:
            raise DesktopError(DesktopCode.NOT_ACCEPTING, "this session has no settings to change")

        def apply(lane: Lane) -> None:
            settings[p.change["kind"]] = p.change["id"]

        return self._verb("lane.set", p, apply)

    async def aop_lane_send(self, p: o.LaneSendParams, raw: Any) -> Any:
        await self.lane_verb_async("lane.send", p)
        return self.op_lane_send(p, raw)

    async def aop_lane_cancel(self, p: o.LaneParams, raw: Any) -> Any:
        await self.lane_verb_async("lane.cancel", p)
        return self.op_lane_cancel(p, raw)

    async def aop_lane_stop(self, p: o.LaneParams, raw: Any) -> Any:
        await self.lane_verb_async("lane.stop", p)
        return self.op_lane_stop(p, raw)

    async def aop_lane_answer(self, p: o.LaneAnswerParams, raw: Any) -> Any:
        await self.lane_verb_async("lane.answer", p)
        return self.op_lane_answer(p, raw)

    async def aop_lane_set(self, p: o.LaneSetParams, raw: Any) -> Any:
        await self.lane_verb_async("lane.set", p)
        return self.op_lane_set(p, raw)
