"""The benchmark harness: paired baseline/candidate timings, medians and ratios.

A :class:`Case` times a *baseline* (the bare thing: ``bytes.split`` plus
msgspec, a raw anyio echo) and a *candidate* (the library doing the same job)
alternately, ``repeat`` times each, in one process. The reported ratio is
``median(baseline seconds) / median(candidate seconds)``: relative throughput,
so 1.0 means "as fast as the baseline" and the target is a floor. Absolute
times are printed for context only; the machine is noisy, so only medians and
ratios mean anything.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import msgspec

__all__ = ["Case", "CaseResult", "run_case", "timed"]

Timer = Callable[[], float]
"""A callable that performs one run and returns the seconds it took."""


def timed(function: Callable[[], object]) -> Timer:
    """Wrap ``function`` into a :data:`Timer` measured with ``perf_counter``."""

    def run() -> float:
        start = time.perf_counter()
        function()
        return time.perf_counter() - start

    return run


@dataclass
class Case:
    """One benchmark: a baseline and a candidate doing the same work ``units`` times."""

    name: str
    baseline: Timer
    candidate: Timer
    target: float
    """Minimum acceptable ratio baseline/candidate (relative throughput)."""
    units: int
    """Work items per run (frames, round trips) for the per-unit figures."""
    unit: str = "op"
    repeat: int = 5
    notes: list[str] = field(default_factory=list)
    measure: str = "seconds"
    """What the timers return: ``seconds`` (printed in us per unit), ``bytes`` or ``count``."""


class CaseResult(msgspec.Struct, kw_only=True):
    """Medians of one case and its verdict against the target."""

    name: str
    baseline_median_s: float
    candidate_median_s: float
    ratio: float
    target: float
    meets_target: bool
    units: int
    unit: str
    repeat: int
    measure: str = "seconds"
    """``seconds`` (the ``*_median_s`` fields are seconds) or ``bytes`` (they are bytes)."""


def run_case(case: Case) -> CaseResult:
    """Run ``case`` (one warm-up pair, then ``repeat`` alternating pairs) and summarise it."""
    case.baseline()
    case.candidate()
    base: list[float] = []
    cand: list[float] = []
    for _ in range(case.repeat):
        base.append(case.baseline())
        cand.append(case.candidate())
    base_median = statistics.median(base)
    cand_median = statistics.median(cand)
    ratio = base_median / cand_median
    return CaseResult(
        name=case.name,
        baseline_median_s=base_median,
        candidate_median_s=cand_median,
        ratio=ratio,
        target=case.target,
        meets_target=ratio >= case.target,
        units=case.units,
        unit=case.unit,
        repeat=case.repeat,
        measure=case.measure,
    )
