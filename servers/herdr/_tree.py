"""Pure functions over a tab's split tree and the rectangles its layout gives each pane."""

from __future__ import annotations

from shedproto.herdr import types as t

from ._model import Pane, Split, Tab


def divide(
    rect: t.PaneLayoutRect, direction: str, ratio: float
) -> tuple[t.PaneLayoutRect, t.PaneLayoutRect]:
    if direction == "right":
        first = max(1, min(rect.width - 1, round(rect.width * ratio)))
        return (
            t.PaneLayoutRect(x=rect.x, y=rect.y, width=first, height=rect.height),
            t.PaneLayoutRect(
                x=rect.x + first, y=rect.y, width=rect.width - first, height=rect.height
            ),
        )
    first = max(1, min(rect.height - 1, round(rect.height * ratio)))
    return (
        t.PaneLayoutRect(x=rect.x, y=rect.y, width=rect.width, height=first),
        t.PaneLayoutRect(x=rect.x, y=rect.y + first, width=rect.width, height=rect.height - first),
    )


def replace_leaf(node: Split | Pane | None, old: Pane, new: Split | Pane) -> Split | Pane:
    if node is old or node is None:
        return new
    if isinstance(node, Split):
        node.first = replace_leaf(node.first, old, new)
        node.second = replace_leaf(node.second, old, new)
    return node


def remove_leaf(node: Split | Pane, pane: Pane) -> Split | Pane | None:
    if node is pane:
        return None
    if isinstance(node, Split):
        first = remove_leaf(node.first, pane)
        second = remove_leaf(node.second, pane)
        if first is None:
            return second
        if second is None:
            return first
        node.first, node.second = first, second
    return node


def beside(
    own: t.PaneLayoutRect, other: t.PaneLayoutRect, direction: str
) -> tuple[int, int] | None:
    """``(overlap, -gap)`` when ``other`` lies in ``direction`` of ``own``, else None."""
    if direction in ("left", "right"):
        overlap = min(own.y + own.height, other.y + other.height) - max(own.y, other.y)
        after, before = other.x - (own.x + own.width), own.x - (other.x + other.width)
        gap = after if direction == "right" else before
    else:
        overlap = min(own.x + own.width, other.x + other.width) - max(own.x, other.x)
        after, before = other.y - (own.y + own.height), own.y - (other.y + other.height)
        gap = after if direction == "down" else before
    if overlap <= 0 or gap < 0:
        return None
    return overlap, -gap


def move_edge(node: Split | Pane | None, pane: Pane, direction: str, amount: float) -> bool:
    """Move the nearest enclosing split edge of ``pane`` towards ``direction``; True if moved."""
    axis = "right" if direction in ("left", "right") else "down"
    path: list[tuple[Split, bool]] = []

    def find(current: Split | Pane | None) -> bool:
        if current is pane:
            return True
        if isinstance(current, Split):
            for second, child in ((False, current.first), (True, current.second)):
                path.append((current, second))
                if find(child):
                    return True
                path.pop()
        return False

    if not find(node):
        return False
    for split, _ in reversed(path):
        if split.direction != axis:
            continue
        grow = direction in ("right", "down")
        delta = amount if grow else -amount
        ratio = min(0.95, max(0.05, split.ratio + delta))
        if ratio == split.ratio:
            return False
        split.ratio = ratio
        return True
    return False


def swap_leaves(tab: Tab, a: Pane, b: Pane) -> None:
    """Exchange two panes' places in ``tab``'s layout tree."""

    def replace(node: Split | Pane | None) -> Split | Pane | None:
        if node is a:
            return b
        if node is b:
            return a
        if isinstance(node, Split):
            node.first = replace(node.first)  # type: ignore[assignment]
            node.second = replace(node.second)  # type: ignore[assignment]
        return node

    tab.root = replace(tab.root)
