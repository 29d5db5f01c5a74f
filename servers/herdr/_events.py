"""``events.wait`` and the entries an ``events.subscribe`` stream polls each round."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio

from shedproto.herdr import (
    LifecycleEvent,
    ReplayRule,
    SubscriptionEvent,
    event_kind,
    probe_id,
)
from shedproto.herdr import types as t

from ._model import Pane
from ._state import AnswerError, E, ServerState, probe_client

HANDLERS: dict[str, str] = {
    "events.wait": "_events_wait",
}
"""Method -> the name of the coroutine here that answers it."""


class EventHandlers(ServerState):
    """The ``events.wait`` handler and the builder of ``events.subscribe`` entries."""

    def _status_event(self, pane: Pane) -> t.PaneAgentStatusChangedEventData:
        return t.PaneAgentStatusChangedEventData(
            pane_id=pane.id,
            workspace_id=pane.workspace.id,
            agent_status=pane.agent_status,
            agent=pane.agent,
        )

    async def _events_wait(self, id: str, params: t.EventsWaitParams) -> t.WaitMatchedReply:
        match = params.match_event
        if not isinstance(match, t.PaneAgentStatusChangedEventMatch):
            raise AnswerError(
                E.UNSUPPORTED_EVENT_WAIT_MATCH,
                f"events.wait does not support {match.__struct_config__.tag}",
            )
        try:
            pane = self._find_pane(match.pane_id)
        except AnswerError as failure:
            raise AnswerError(failure.code, failure.message, id=f"{id}:sub:0:probe") from None
        deadline = (
            None if params.timeout_ms is None else anyio.current_time() + params.timeout_ms / 1000
        )
        while True:
            if pane.closed:
                raise AnswerError(E.PANE_NOT_FOUND, f"pane {match.pane_id} not found")
            if pane.agent_status == match.agent_status:
                data = self._status_event(pane)
                return t.WaitMatchedReply(
                    event=LifecycleEvent(event="pane_agent_status_changed", data=data)
                )
            probe_client()
            remaining = None if deadline is None else deadline - anyio.current_time()
            if remaining is not None and remaining <= 0:
                raise AnswerError(E.TIMEOUT, "timed out waiting for event match")
            with anyio.move_on_after(remaining if remaining is not None else float("inf")):
                await pane.output.wait()

    def _entry(self, id: str, index: int, sub: Any) -> Entry:
        probe = probe_id(id, index)
        if isinstance(sub, t.PaneOutputMatchedSubscription):
            test = self._matcher(sub.match, probe)
            try:
                pane = self._find_pane(sub.pane_id)
            except AnswerError as failure:
                raise AnswerError(failure.code, failure.message, id=probe) from None
            return _OutputEntry(pane, sub, test)
        if isinstance(sub, (t.PaneAgentStatusChangedSubscription, t.PaneScrollChangedSubscription)):
            try:
                pane = self._find_pane(sub.pane_id)
            except AnswerError as failure:
                raise AnswerError(failure.code, failure.message, id=probe) from None
            if isinstance(sub, t.PaneScrollChangedSubscription):
                return _ScrollEntry(pane)
            return _StatusEntry(pane, sub.agent_status)
        return _LifecycleEntry(event_kind(sub), self.replay, self.replay.start(self.hub.seq))


class Entry:
    def poll(self, server: ServerState) -> LifecycleEvent | SubscriptionEvent | None:
        raise NotImplementedError


class EventsLostError(Exception):
    """A protocol-22 subscription's cursor fell out of the event hub."""


class _LifecycleEntry(Entry):
    """A plain subscription: a cursor into the hub, started and checked by the protocol's rule."""

    def __init__(self, kind: str, rule: ReplayRule, start: int) -> None:
        self.kind = kind
        self.rule = rule
        self.seq = start

    def poll(self, server: ServerState) -> LifecycleEvent | None:
        if self.rule.lost(self.seq, server.hub.oldest()):
            raise EventsLostError
        found = server.hub.after(self.seq, self.kind)
        if found is None:
            self.seq = server.hub.seq  # nothing of this kind up to here
            return None
        self.seq, event = found
        return event


class _StatusEntry(Entry):
    def __init__(self, pane: Pane, wanted: str | None) -> None:
        self.pane = pane
        self.wanted = wanted
        self.last: tuple[str, str | None] | None = (
            None if wanted is not None else (pane.agent_status, pane.agent)
        )

    def poll(self, server: ServerState) -> SubscriptionEvent | None:
        pane = self.pane
        current = (pane.agent_status, pane.agent)
        if current == self.last or pane.closed:
            return None
        self.last = current
        if self.wanted is not None and pane.agent_status != self.wanted:
            return None
        data = t.PaneAgentStatusChangedEvent(
            pane_id=pane.id,
            workspace_id=pane.workspace.id,
            agent_status=pane.agent_status,
            agent=pane.agent,
        )
        return SubscriptionEvent(event="pane.agent_status_changed", data=data)


class _ScrollEntry(Entry):
    """Fires when the pane's scroll metrics differ from the last ones seen (no initial event).

    The viewport never scrolls here, so changes come from scrollback growing,
    resizes and alternate-screen switches.
    """

    def __init__(self, pane: Pane) -> None:
        self.pane = pane
        self.last = pane.scroll()

    def poll(self, server: ServerState) -> SubscriptionEvent | None:
        if self.pane.closed:
            return None
        scroll = self.pane.scroll()
        if scroll == self.last:
            return None
        self.last = scroll
        data = t.PaneScrollChangedEvent(
            pane_id=self.pane.id, workspace_id=self.pane.workspace.id, scroll=scroll
        )
        return SubscriptionEvent(event="pane.scroll_changed", data=data)


class _OutputEntry(Entry):
    """Edge-triggered: fires when a match appears, re-arms after a poll without one."""

    def __init__(
        self, pane: Pane, sub: t.PaneOutputMatchedSubscription, test: Callable[[str], bool]
    ) -> None:
        self.pane = pane
        self.sub = sub
        self.test = test
        self.armed = True

    def poll(self, server: ServerState) -> SubscriptionEvent | None:
        if self.pane.closed:
            return None
        matched, read = server._match_read(self.pane, self.sub.source, self.sub.lines, self.test)
        if matched is None:
            self.armed = True
            return None
        if not self.armed:
            return None
        self.armed = False
        data = t.PaneOutputMatchedEvent(pane_id=self.pane.id, matched_line=matched, read=read)
        return SubscriptionEvent(event="pane.output_matched", data=data)
