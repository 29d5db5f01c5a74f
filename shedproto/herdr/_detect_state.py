"""herdr's rule for when a pane's screen-detected state is published.

herdr re-reads a pane's screen every 300 ms (100 ms while an idle is being
confirmed) and publishes a new state when the state or one of its visible
flags changes. A rule with ``skip_state_update`` (a transcript viewer, a
model picker) leaves the state alone. A fall from ``working`` to an idle the
screen does not show outright (no ``visible_idle``, no blocker) is held
until it has been seen three more times or 700 ms have passed, so a
spinner's gap between frames never flickers the state
(herdrdev/herdr src/pane/agent_detection.rs:3-75,160-260@1c76079f). When
the agent's process exits, herdr publishes ``idle`` with visible idle.

:class:`DetectionTracker` holds that rule for one pane; the caller's clock
is an argument.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._manifests import Detection, ManifestState

__all__ = [
    "DETECTION_TICK_SECONDS",
    "IDLE_CONFIRMATIONS",
    "IDLE_HOLD_CAP_SECONDS",
    "IDLE_RECHECK_SECONDS",
    "UNIDENTIFIED_TICK_SECONDS",
    "DetectionTracker",
]

DETECTION_TICK_SECONDS = 0.3
"""How often herdr re-reads an identified agent's screen."""
UNIDENTIFIED_TICK_SECONDS = 0.5
"""How often herdr looks for an agent in a pane that has none."""
IDLE_RECHECK_SECONDS = 0.1
IDLE_CONFIRMATIONS = 3
IDLE_HOLD_CAP_SECONDS = 0.7


@dataclass
class DetectionTracker:
    """The published screen state of one pane's agent and the idle hold in progress."""

    state: ManifestState = "unknown"
    visible_idle: bool = False
    visible_blocker: bool = False
    visible_working: bool = False
    hold_started: float | None = None
    confirmations: int = 0

    @property
    def holding(self) -> bool:
        """Return whether a working -> idle fall is being confirmed (recheck sooner)."""
        return self.hold_started is not None

    def reset(self) -> None:
        """Forget everything (the agent left the pane)."""
        self.state = "unknown"
        self.visible_idle = self.visible_blocker = self.visible_working = False
        self._clear_hold()

    def _clear_hold(self) -> None:
        self.hold_started = None
        self.confirmations = 0

    def observe(
        self, detection: Detection, now: float, *, agent_changed: bool = False
    ) -> ManifestState | None:
        """Take one screen reading; return the state to publish, or None for no change."""
        if detection.skip_state_update:
            return None
        plain_idle_fall = (
            self.state == "working"
            and detection.state == "idle"
            and not detection.visible_idle
            and not detection.visible_blocker
            and not agent_changed
        )
        if plain_idle_fall and self._hold(now):
            return None
        if not plain_idle_fall:
            self._clear_hold()
        flags = (detection.visible_idle, detection.visible_blocker, detection.visible_working)
        if (
            detection.state == self.state
            and flags == (self.visible_idle, self.visible_blocker, self.visible_working)
            and not agent_changed
        ):
            return None
        self.state = detection.state
        self.visible_idle, self.visible_blocker, self.visible_working = flags
        return self.state

    def _hold(self, now: float) -> bool:
        if self.hold_started is None:
            self.hold_started = now
            self.confirmations = 0
            return True
        if now - self.hold_started >= IDLE_HOLD_CAP_SECONDS:
            self._clear_hold()
            return False
        self.confirmations += 1
        if self.confirmations >= IDLE_CONFIRMATIONS:
            self._clear_hold()
            return False
        return True

    def process_exited(self) -> ManifestState:
        """Record herdr's reading when the agent's process exits: a visible idle."""
        self._clear_hold()
        self.state = "idle"
        self.visible_idle, self.visible_blocker, self.visible_working = True, False, False
        return self.state
