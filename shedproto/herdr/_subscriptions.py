"""Subscription filters and the event-kind naming rules of ``events.subscribe``.

A subscription *request* names a lifecycle kind with dots
(``{"type": "workspace.created"}``); the pushed line names the same kind in
snake_case (``{"event": "workspace_created", ...}``). The three parameterized
subscriptions (``pane.output_matched``, ``pane.agent_status_changed``,
``pane.scroll_changed``) push lines that keep their dotted names.
``pane.output_changed`` is a lifecycle kind that cannot be subscribed to.

Replay (:func:`replay_rule`): herdr keeps the last :data:`HUB_SIZE` lifecycle
events in a ring. Up to protocol 21 a plain subscription starts at sequence 0
(it replays what the ring still holds), sends at most one line per entry per
polling round, and silently skips what the ring lost. From protocol 22 the
server pins each subscription's cursor at the current sequence when it
accepts the request, drains every retained event without waiting a round,
and, when the ring has overwritten events the cursor had not reached yet,
answers one ``events_lost`` error line with the request id and closes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import types as t

__all__ = [
    "EVENTS_LOST",
    "EVENTS_LOST_MESSAGE",
    "HUB_SIZE",
    "LIFECYCLE_SUBSCRIPTIONS",
    "PARAMETERIZED_SUBSCRIPTIONS",
    "ReplayRule",
    "event_kind",
    "is_parameterized",
    "probe_id",
    "replay_rule",
    "subscription_type",
    "wants",
]

HUB_SIZE = 512
"""How many lifecycle events herdr's event hub retains."""

EVENTS_LOST = "events_lost"
"""The error code a protocol-22 subscription answers when its cursor fell out of the ring."""

EVENTS_LOST_MESSAGE = (
    "event subscription fell behind retained history; resubscribe and resync with "
    "session.snapshot"
)
"""herdr's message with :data:`EVENTS_LOST` (``src/api/subscriptions.rs``,
``subscription_events_after``, at commit 3f32b738)."""


@dataclass(frozen=True)
class ReplayRule:
    """How a protocol's lifecycle subscriptions start, pace and lose events."""

    start_at_current: bool
    """True: the cursor starts at the sequence current at subscribe time; False: at 0."""
    drain_bursts: bool
    """True: every retained event is sent at once; False: one line per entry per round."""
    reports_loss: bool
    """True: a cursor older than the ring's oldest event ends the stream with ``events_lost``."""

    def start(self, current_sequence: int) -> int:
        """Return the cursor a new plain subscription starts at."""
        return current_sequence if self.start_at_current else 0

    def lost(self, cursor: int, oldest_retained: int | None) -> bool:
        """Return whether events after ``cursor`` were overwritten before delivery.

        ``oldest_retained`` is the sequence of the oldest event still in the ring
        (``None`` when it is empty). Always False where the protocol does not report loss.
        """
        return self.reports_loss and oldest_retained is not None and oldest_retained > cursor + 1


_REPLAY_REPLAY = ReplayRule(start_at_current=False, drain_bursts=False, reports_loss=False)
_REPLAY_PINNED = ReplayRule(start_at_current=True, drain_bursts=True, reports_loss=True)


def replay_rule(protocol: int) -> ReplayRule:
    """Return the replay rule herdr applies at ``protocol`` (see the module notes)."""
    return _REPLAY_PINNED if protocol >= 22 else _REPLAY_REPLAY


def probe_id(request_id: str, index: int) -> str:
    """Return the id of subscription ``index``'s probe error: ``<id>:sub:<n>:probe``."""
    return f"{request_id}:sub:{index}:probe"


PARAMETERIZED_SUBSCRIPTIONS: frozenset[str] = frozenset(
    {"pane.output_matched", "pane.agent_status_changed", "pane.scroll_changed"}
)
"""Subscription types that take parameters and push dotted event names."""

LIFECYCLE_SUBSCRIPTIONS: dict[str, str] = {
    member.__struct_config__.tag: member.__struct_config__.tag.replace(".", "_")
    for member in t.Subscription.__args__
    if member.__struct_config__.tag not in PARAMETERIZED_SUBSCRIPTIONS
}
"""Plain subscription type (dotted) -> the snake_case ``event`` of its pushed lines."""


def subscription_type(subscription: Any) -> str:
    """Return the dotted ``type`` of a subscription Struct (``workspace.created``)."""
    tag: str = subscription.__struct_config__.tag
    return tag


def is_parameterized(subscription: Any) -> bool:
    """Return whether ``subscription`` takes a pane and pushes dotted event names."""
    return subscription_type(subscription) in PARAMETERIZED_SUBSCRIPTIONS


def event_kind(subscription: Any) -> str:
    """Return the ``event`` name of the lines ``subscription`` pushes.

    Plain kinds map to snake_case (``workspace.created`` -> ``workspace_created``);
    parameterized kinds keep their dotted name.
    """
    kind = subscription_type(subscription)
    return kind if kind in PARAMETERIZED_SUBSCRIPTIONS else LIFECYCLE_SUBSCRIPTIONS[kind]


def wants(subscription: Any, event: str) -> bool:
    """Return whether a plain ``subscription`` delivers lifecycle events named ``event``."""
    return not is_parameterized(subscription) and event_kind(subscription) == event
