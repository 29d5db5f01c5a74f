"""Hypothesis example counts: a quick default for a contributor's ``pytest``, full counts in CI.

``SHEDPROTO_HYPOTHESIS_PROFILE=ci`` (``.ci/run`` sets it) runs every property
test with the count written at it; the default profile, ``dev``, runs a
quarter of it (at least 10, never more than written). Tests without a count
use the profile's: Hypothesis' own 100 in ``ci``, 25 in ``dev``.
"""

from __future__ import annotations

import os

from hypothesis import settings

__all__ = ["PROFILE", "examples", "load_profile"]

PROFILE = os.environ.get("SHEDPROTO_HYPOTHESIS_PROFILE", "dev")
"""The selected profile: ``ci`` (full counts) or ``dev`` (the default, a quarter)."""

_PROFILES = {"ci": 100, "dev": 25}


def examples(count: int) -> int:
    """Return the ``max_examples`` to run for a test written with ``count``.

    ``count`` itself under the ``ci`` profile, else a quarter of it (at least
    10, at most ``count``).
    """
    if PROFILE == "ci":
        return count
    return min(count, max(10, count // 4))


def load_profile() -> None:
    """Register both profiles and load the selected one.

    Raises:
        ValueError: ``SHEDPROTO_HYPOTHESIS_PROFILE`` names neither profile.

    """
    if PROFILE not in _PROFILES:
        raise ValueError(
            f"SHEDPROTO_HYPOTHESIS_PROFILE={PROFILE!r}: expected one of {sorted(_PROFILES)}"
        )
    for name, count in _PROFILES.items():
        settings.register_profile(name, max_examples=count)
    settings.load_profile(PROFILE)
