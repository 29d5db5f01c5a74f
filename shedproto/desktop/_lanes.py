"""Agent-lane verbs: the 30 s answer deadline and the 10 s reconnect wait.

The digest's contract for a verb sent down a craze lane (``lane.send``,
``cancel``, ``stop``, ``answer``, ``set``):

* its answer lost with the connection (in flight at a drop, or unanswered
  within :data:`LANE_VERB_DEADLINE`) fails ``outcome_unknown``: it may have
  run, and it is never resent;
* issued while the lane is reconnecting, it waits up to
  :data:`LANE_RECONNECT_WAIT`, then fails ``unavailable``: it was never sent,
  so a retry is safe.

Pure: the time until the lane is back is an input. The messages are ours
(the app's were not recovered); the codes are the contract's.
"""

from __future__ import annotations

from ._codes import DesktopCode
from ._errors import DesktopError

__all__ = [
    "LANE_RECONNECT_WAIT",
    "LANE_VERBS",
    "LANE_VERB_DEADLINE",
    "lane_answer_lost",
    "lane_verb_wait",
]

LANE_VERB_DEADLINE = 30.0
"""Seconds a lane verb's answer may take before it counts as lost (``outcome_unknown``)."""
LANE_RECONNECT_WAIT = 10.0
"""Seconds a verb issued on a reconnecting lane waits before failing ``unavailable``."""
LANE_VERBS = frozenset({"lane.send", "lane.cancel", "lane.stop", "lane.answer", "lane.set"})
"""The ops that send a verb down the lane (the reads answer from the app's own state)."""


def lane_verb_wait(
    verb: str, reconnect_in: float | None, *, wait: float = LANE_RECONNECT_WAIT
) -> float:
    """Return how long ``verb`` waits before it is sent (``0`` on a live lane).

    ``reconnect_in`` is ``None`` for a live lane, else the seconds until the
    lane is back (``math.inf``: not coming back).

    Raises:
        DesktopError: ``unavailable`` when the lane will not be back within
            ``wait`` seconds; nothing was sent.

    """
    if reconnect_in is None or reconnect_in <= 0:
        return 0.0
    if reconnect_in > wait:
        raise DesktopError(
            DesktopCode.UNAVAILABLE,
            f"{verb}: the lane is reconnecting and was not back within {wait:g} s; "
            "nothing was sent (a retry is safe)",
        )
    return reconnect_in


def lane_answer_lost(verb: str) -> DesktopError:
    """Return the failure for a verb whose answer was lost (it may have run; never resent)."""
    return DesktopError(
        DesktopCode.OUTCOME_UNKNOWN,
        f"{verb}: the lane's answer was lost; it may have run and was not resent",
    )
