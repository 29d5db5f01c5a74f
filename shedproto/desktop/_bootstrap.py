"""``roost.bootstrap``'s rules: consent, one run per host at a time, the 600 s budget.

Pure: time is ``now`` (any monotonic clock, seconds); the shell that runs the
install owns the waiting and asks this ledger what to answer.

Decisions where the digest names a refusal but not its words (the real
messages were not recovered): a second bootstrap of a host while one runs is
``action_failed`` ``"<origin>: roost.bootstrap is already running (started
<n> s ago)"``; a run that outlives the budget is ``action_failed``
``"<origin>: roost.bootstrap did not finish within 600 s"``. "Already
bootstrapping" is per host (origin), not global: the app installs on several
hosts independently. The budget counts from the moment the run starts (after
the consent and target checks).
"""

from __future__ import annotations

from ._codes import DesktopCode
from ._errors import DesktopError

__all__ = ["BOOTSTRAP_BUDGET", "BootstrapLedger", "require_consent"]

BOOTSTRAP_BUDGET = 600.0
"""Seconds a ``roost.bootstrap`` may run before it is answered ``action_failed``."""


def require_consent(target: str, consent: bool | None) -> None:
    """Refuse a bootstrap without ``consent: true`` (missing means false); nothing changes.

    Raises:
        DesktopError: ``consent_required``
            ``"<target>: roost.bootstrap needs consent: true — nothing was changed"``.

    """
    if consent is not True:
        raise DesktopError(
            DesktopCode.CONSENT_REQUIRED,
            f"{target}: roost.bootstrap needs consent: true \u2014 nothing was changed",
        )


class BootstrapLedger:
    """Which hosts have a ``roost.bootstrap`` running, and since when.

    ``begin`` before the install, ``end`` after it (whatever its outcome);
    ``remaining`` tells the shell how long it may still wait, ``over_budget``
    is the answer once that is spent. Not thread-safe.
    """

    def __init__(self, budget: float = BOOTSTRAP_BUDGET) -> None:
        self.budget = budget
        self._started: dict[str, float] = {}

    @property
    def running(self) -> dict[str, float]:
        """A copy of origin -> start time of every bootstrap in progress."""
        return dict(self._started)

    def begin(self, origin: str, now: float) -> None:
        """Record that a bootstrap of ``origin`` starts at ``now``.

        Raises:
            DesktopError: ``action_failed``: one is already running for ``origin``
                (the ledger is unchanged).

        """
        started = self._started.get(origin)
        if started is not None:
            raise DesktopError(
                DesktopCode.ACTION_FAILED,
                f"{origin}: roost.bootstrap is already running "
                f"(started {max(0, int(now - started))} s ago)",
            )
        self._started[origin] = now

    def remaining(self, origin: str, now: float) -> float:
        """Seconds the run of ``origin`` may still take (``0`` when spent or not running)."""
        started = self._started.get(origin)
        if started is None:
            return 0.0
        return max(0.0, started + self.budget - now)

    def over_budget(self, origin: str) -> DesktopError:
        """Return the answer for a run of ``origin`` that outlived the budget."""
        budget = f"{self.budget:g}"
        return DesktopError(
            DesktopCode.ACTION_FAILED,
            f"{origin}: roost.bootstrap did not finish within {budget} s",
        )

    def end(self, origin: str) -> None:
        """Forget the run of ``origin`` (idempotent)."""
        self._started.pop(origin, None)
