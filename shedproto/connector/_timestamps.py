"""Timestamps in JavaScript ``Date.prototype.toISOString`` form (``YYYY-MM-DDTHH:MM:SS.sssZ``).

The real program validates a timestamp by parsing it and checking that
``toISOString`` gives the same text back; :func:`is_iso_timestamp` accepts
exactly those strings: a valid proleptic-Gregorian date and time with
milliseconds and ``Z``, the year as four digits (0000-9999) or, outside that
range, as a sign and six digits, within JavaScript's +-8.64e15 ms range.
"""

from __future__ import annotations

import re

__all__ = ["MAX_EPOCH_MS", "is_iso_timestamp", "iso_from_epoch_ms", "iso_from_seconds"]

MAX_EPOCH_MS = 8_640_000_000_000_000
"""The largest absolute millisecond value a JavaScript ``Date`` can hold."""

_ISO = re.compile(r"(?:(\d{4})|([+-]\d{6}))-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})Z\Z")
_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm)."""
    year -= month <= 2
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(days: int) -> tuple[int, int, int]:
    days += 719468
    era = days // 146097
    doe = days - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    year = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return year + (month <= 2), month, day


def is_iso_timestamp(value: object) -> bool:
    """Return whether ``value`` is a string that round-trips through ``Date``/``toISOString``."""
    if not isinstance(value, str):
        return False
    match = _ISO.match(value)
    if match is None:
        return False
    four, six, month_s, day_s, hour_s, minute_s, second_s, _ms = match.groups()
    if six is not None:
        year = int(six)
        if six == "-000000" or 0 <= year <= 9999:
            return False
    else:
        year = int(four)
    month, day = int(month_s), int(day_s)
    if not 1 <= month <= 12:
        return False
    limit = 29 if month == 2 and _leap(year) else _DAYS[month - 1]
    if not 1 <= day <= limit:
        return False
    if int(hour_s) > 23 or int(minute_s) > 59 or int(second_s) > 59:
        return False
    epoch_ms = (
        _days_from_civil(year, month, day) * 86_400_000
        + (int(hour_s) * 3600 + int(minute_s) * 60 + int(second_s)) * 1000
        + int(_ms)
    )
    return abs(epoch_ms) <= MAX_EPOCH_MS


def iso_from_epoch_ms(epoch_ms: int) -> str:
    """Format milliseconds since the Unix epoch exactly as ``new Date(ms).toISOString()``.

    Raises:
        ValueError: ``epoch_ms`` is outside JavaScript's Date range
            (``RangeError: Invalid time value`` there).

    """
    if abs(epoch_ms) > MAX_EPOCH_MS:
        raise ValueError("Invalid time value")
    days, ms_of_day = divmod(epoch_ms, 86_400_000)
    year, month, day = _civil_from_days(days)
    seconds, ms = divmod(ms_of_day, 1000)
    hour, rest = divmod(seconds, 3600)
    minute, second = divmod(rest, 60)
    sign = "-" if year < 0 else "+"
    year_text = f"{year:04d}" if 0 <= year <= 9999 else f"{sign}{abs(year):06d}"
    return f"{year_text}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}.{ms:03d}Z"


def iso_from_seconds(seconds: float) -> str:
    """Format a POSIX time (``time.time()``) as ``toISOString``, truncated to milliseconds.

    Raises:
        ValueError: the time is outside JavaScript's Date range.

    """
    return iso_from_epoch_ms(int(seconds * 1000 // 1))
