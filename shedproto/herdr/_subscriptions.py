"""Subscription filters and the event-kind naming rules of ``events.subscribe``.

A subscription *request* names a lifecycle kind with dots
(``{"type": "workspace.created"}``); the pushed line names the same kind in
snake_case (``{"event": "workspace_created", ...}``). The three parameterized
subscriptions (``pane.output_matched``, ``pane.agent_status_changed``,
``pane.scroll_changed``) push lines that keep their dotted names.
``pane.output_changed`` is a lifecycle kind that cannot be subscribed to.
"""

from __future__ import annotations

from typing import Any

from . import types as t

__all__ = [
    "LIFECYCLE_SUBSCRIPTIONS",
    "PARAMETERIZED_SUBSCRIPTIONS",
    "event_kind",
    "is_parameterized",
    "subscription_type",
    "wants",
]

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
