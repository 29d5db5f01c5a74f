"""``roost.bootstrap``'s rules: consent, one run per host at a time, the 600 s budget.

Pure: time is ``now`` (any monotonic clock, seconds); the shell that runs the
install owns the waiting and asks this ledger what to answer.

The words are the newer Tauri app's (charliek/shed
desktop/tauri/src-tauri/src/roost_hosts.rs:358-388,1406-1539@0041e17 ``Refusal`` and
``RoostHosts::bootstrap``; ipc.rs:1538-1569@2cd01ef ``roost_bootstrap``): a second
bootstrap of a target while one runs is ``already_bootstrapping`` ``"<token> is
already being bootstrapped — nothing was changed; wait for that one to
finish"``; a run that outlives the budget is ``action_failed`` ``"<target>: the
bootstrap did not finish within 10 minutes"`` (``target`` as the caller sent
it). The gate is per target, not global. The budget counts from the moment the
run starts (after the consent and target checks). A re-probe that no longer
matches the consent card's fingerprint is the ``fingerprint`` stage's sentence
(:func:`fingerprint_changed`, shed-core's own copy).
"""

from __future__ import annotations

from ._codes import DesktopCode
from ._errors import DesktopError

__all__ = ["BOOTSTRAP_BUDGET", "BootstrapLedger", "fingerprint_changed", "require_consent"]

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


def fingerprint_changed(token: str) -> str:
    """Return the ``fingerprint`` stage's message for host ``token`` (its grammar token).

    charliek/shed crates/shed-core/src/roost/bootstrap/copy.rs:340-345@0041e17
    ``fingerprint_changed``, which roost_hosts.rs ``bootstrap`` answers with the
    re-probed target's token. Never raises.
    """
    return f"{token} changed since you were asked \u2014 nothing was changed; look again."


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
            DesktopError: ``already_bootstrapping``: one is already running for
                ``origin`` (the ledger is unchanged).

        """
        if origin in self._started:
            raise DesktopError(
                DesktopCode.ALREADY_BOOTSTRAPPING,
                f"{origin} is already being bootstrapped \u2014 nothing was changed; "
                "wait for that one to finish",
            )
        self._started[origin] = now

    def remaining(self, origin: str, now: float) -> float:
        """Seconds the run of ``origin`` may still take (``0`` when spent or not running)."""
        started = self._started.get(origin)
        if started is None:
            return 0.0
        return max(0.0, started + self.budget - now)

    def over_budget(self, target: str) -> DesktopError:
        """Return the answer for a run that outlived the budget (``target`` as sent).

        The budget is worded in whole minutes, as the app's ``as_secs() / 60``.
        """
        minutes = int(self.budget) // 60
        return DesktopError(
            DesktopCode.ACTION_FAILED,
            f"{target}: the bootstrap did not finish within {minutes} minutes",
        )

    def end(self, origin: str) -> None:
        """Forget the run of ``origin`` (idempotent)."""
        self._started.pop(origin, None)
