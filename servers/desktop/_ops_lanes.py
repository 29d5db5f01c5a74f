"""Agent-lane ops over craze rows (``lane.*``), with the lane contract's failures.

A lane is opened by ``lane.open`` (the row looked up in the namespace its
``kind`` names) and every other op but ``lane.close`` needs it open. The
reads (``lane.open``, ``lane.messages``, ``lane.approvals``, ``lane.settings``)
answer from the app's own state. The verbs go down the
lane: on a reconnecting craze lane they wait (up to 10 s) for it to come back or
fail ``unavailable`` unsent; with a lost answer they apply and fail
``outcome_unknown``. The served form really waits
(:meth:`LaneOps.lane_verb_async`); the synchronous form compresses the wait.
An opencode lane's verbs do not wait: each is one request, ``unavailable`` in
shed-opencode's ``dial_error`` words when it goes unanswered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio

from shedproto.desktop import (
    CRAZE_LANE,
    LANE_KINDS,
    OPENCODE_LANE,
    OPENCODE_URL,
    DesktopCode,
    DesktopError,
    craze_host,
    lane_answer_lost,
    lane_error,
    lane_verb_wait,
    no_lane_stamp,
    no_open_lane,
    opencode_unreachable,
    opencode_verb_path,
    parse_lane_answer,
    parse_lane_setting,
    parse_send_mode,
    unsupported_lane,
)
from shedproto.desktop import types as o

from ._base import AppBase
from ._model import Lane, Session

__all__ = ["LaneOps"]


class LaneOps(AppBase):
    """Agent-lane ops over craze and roost rows (``lane.*``).

    As lane.rs@9a84ddf answers them (``Lanes::open`` 836-963, ``open_entry``
    1303-1324, ``lane_stamp`` 1332-1359): the row is looked up in the namespace the
    ``kind`` names (:func:`~shedproto.desktop.no_lane_stamp`), ``lane.open``
    refuses a kind no adapter speaks, and every other op needs a lane
    ``lane.open`` opened (:func:`~shedproto.desktop.no_open_lane`); a verb's
    payload is read before the lane is looked up (ipc.rs@2cd01ef: ``lane_send``
    1635-1644, ``lane_set`` 1686-1696, ``lane_answer`` 1706-1717).
    """

    def _lane_session(self, p: Any) -> Session:
        """Return the row the address names (lane.rs ``lane_stamp``).

        A craze kind names a craze session of the machine's craze source; any
        other kind a roost row whose ``agent_lane`` has that kind and session id.
        A machine that does not parse names nothing.

        Raises:
            DesktopError: ``no_lane`` in lane.rs's words.

        """
        try:
            host = craze_host(p.machine)
        except DesktopError:
            raise no_lane_stamp(p.machine, p.kind, p.session_id) from None
        origin = host.origin
        if p.kind == CRAZE_LANE and self._craze_of(host) is None:
            # a host with no craze source lists no craze rows (RoostHosts::craze_lanes)
            raise no_lane_stamp(p.machine, p.kind, p.session_id)
        for session in self.model.sessions:
            if session.origin != origin:
                continue
            if p.kind == CRAZE_LANE:
                if session.source == "craze" and session.slug == p.session_id:
                    return session
                continue
            lane = session.extra.get("agent_lane")
            if (
                session.source != "craze"
                and isinstance(lane, dict)
                and lane.get("kind") == p.kind
                and lane.get("session_id") == p.session_id
            ):
                return session
        raise no_lane_stamp(p.machine, p.kind, p.session_id)

    def _craze_of(self, host: Any) -> Any:
        machine = self.model.machines.get(host.name) if host.kind == "machine" else None
        return None if machine is None else machine.craze

    @staticmethod
    def _key(session: Session, p: Any) -> str:
        return f"{session.origin}#{p.session_id}"

    def _open(self, p: Any) -> Lane:
        """``Lanes::open``: the row, then the kind's adapter; idempotent."""
        session = self._lane_session(p)
        if p.kind not in LANE_KINDS:
            raise unsupported_lane(p.kind)
        key = self._key(session, p)
        lane = self.model.lanes.get(key)
        if lane is None:
            lane = self.model.lanes[key] = Lane(session=session.row())
        return lane

    def _lane(self, p: Any) -> Lane:
        """``Lanes::open_entry``: the open lane, or why there is none."""
        session = self._lane_session(p)
        lane = self.model.lanes.get(self._key(session, p))
        if lane is None:
            raise no_open_lane(p.machine, p.session_id)
        return lane

    def _verb(self, verb: str, p: Any, apply: Callable[[Lane], None]) -> Any:
        """Send ``verb``: refuse it unsent on a lane that stays down, else apply it."""
        lane = self._lane(p)
        unanswered = self._opencode_failure(verb, p, lane)
        if unanswered is not None:  # opencode's adapter: one request, no wait
            if lane.reconnect_in is not None and lane.reconnect_in > 0:
                raise unanswered
        elif lane_verb_wait(verb, lane.reconnect_in, wait=self.model.lane_reconnect_wait) > 0:
            lane.reconnected()  # it came back within the wait
        apply(lane)
        if lane.lost_answers > 0:
            lane.lost_answers -= 1
            raise lane_answer_lost(verb) if unanswered is None else unanswered
        return o.Empty()

    @staticmethod
    def _opencode_failure(verb: str, p: Any, lane: Lane) -> DesktopError | None:
        """Return an opencode verb's ``dial_error`` (``None``: a craze lane, or a verb not read)."""
        if p.kind != OPENCODE_LANE:
            return None
        try:
            path = opencode_verb_path(
                verb, p.session_id, getattr(p, "approval_id", ""), getattr(p, "answer", None)
            )
        except KeyError:
            return None
        stamp = lane.session.get("agent_lane")
        url = stamp.get("server_url") if isinstance(stamp, dict) else None
        return opencode_unreachable(path, url or OPENCODE_URL)

    def _check_payload(self, verb: str, p: Any) -> None:
        """Read the verb's payload as ipc.rs does, before the lane is looked up."""
        if verb == "lane.send":
            parse_send_mode(p.mode)
        elif verb == "lane.answer":
            parse_lane_answer(p.answer)
        elif verb == "lane.set":
            parse_lane_setting(p.change)

    async def lane_verb_async(self, verb: str, p: Any) -> None:
        """Wait as the app does for a reconnecting lane before ``verb`` is sent (served form)."""
        self._check_payload(verb, p)
        lane = self._lane(p)
        if self._opencode_failure(verb, p, lane) is not None:
            return  # opencode's adapter does not wait
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
        return o.LaneOpenResult(session=self._open(p).session)

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
        mode = parse_send_mode(p.mode)
        if mode == "interject" and p.kind == OPENCODE_LANE:
            self._lane(p)  # shed-opencode ``send``: no interject, refused before the wire
            raise lane_error(DesktopCode.NOT_ACCEPTING)

        def apply(lane: Lane) -> None:
            lane.messages.append({"role": "user", "text": p.text, "mode": mode})

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
        parse_lane_answer(p.answer)
        lane = self._lane(p)
        pending = [a for a in lane.approvals if a.get("id") == p.approval_id]
        if not pending:
            raise lane_error(DesktopCode.UNKNOWN_APPROVAL)
        return self._verb("lane.answer", p, lambda lane: lane.approvals.remove(pending[0]))

    def op_lane_settings(self, p: o.LaneParams, raw: Any) -> Any:
        return o.LaneSettings(settings=self._lane(p).settings)

    def op_lane_set(self, p: o.LaneSetParams, raw: Any) -> Any:
        change = parse_lane_setting(p.change)
        lane = self._lane(p)
        settings = lane.settings
        if settings is None:
            raise lane_error(DesktopCode.NOT_ACCEPTING)

        def apply(lane: Lane) -> None:
            settings[change["kind"]] = change["id"]

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
