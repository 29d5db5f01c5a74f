"""RFC 3339 timestamps as the agent writes them: UTC, whole seconds, ``Z`` suffix."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from functools import lru_cache

__all__ = ["format_timestamp"]


def format_timestamp(epoch_seconds: float) -> str:
    """Format Unix time ``epoch_seconds`` as ``2006-01-02T15:04:05Z`` (truncated to seconds).

    Truncation, not rounding, as Go's ``time.Format(time.RFC3339)`` does.

    Raises:
        ValueError: the time is outside the years 1..9999 or not finite.

    """
    if not math.isfinite(epoch_seconds):
        raise ValueError(f"not a finite time: {epoch_seconds!r}")
    return _format_second(math.floor(epoch_seconds))


@lru_cache(maxsize=64)
def _format_second(second: int) -> str:
    """Format one whole second; cached, since every frame of a second shares its text."""
    try:
        moment = datetime.fromtimestamp(second, tz=timezone.utc)
    except (OverflowError, OSError) as exc:
        raise ValueError(f"time out of range: {second!r}") from exc
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
        f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}Z"
    )
