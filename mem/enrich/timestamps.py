"""Timestamps as records carry them: ISO-8601 (``Z``, offsets, date-only) or LoCoMo's "1:56 pm on 8 May,
2023" read as tz-aware UTC (:func:`parse_datetime`), and written back as ISO-8601 UTC with milliseconds
and ``Z`` (:func:`format_datetime`). Every CLI run parses timestamps; the date expressions inside a
memory's text are :mod:`mem.enrich.dates`' work. Stdlib only.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone, tzinfo
from functools import lru_cache

from mem.enrich.lazy_regex import LazyRe, trie

UTC = timezone.utc
MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
    "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9,
    "sept": 9, "sep": 9, "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12,
    "dec": 12,
}
MONTH_WORD = "(?:" + trie(MONTHS) + r")(?![a-z])"  # any month name, as a whole word


def aware(moment: datetime) -> datetime:
    """``moment`` with a timezone: a naive one is taken as UTC, the store's convention for created_at."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


_ISO = re.compile(
    r"(\d{4})-(\d{1,2})-(\d{1,2})(?:[Tt ](\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?"
    r"\s*(Z|z|UTC|[+-]\d{2}(?::?\d{2})?)?")
_CLOCK = r"(?:(?P<hh>\d{1,2}):(?P<mm>\d{2})(?::(?P<ss>\d{2}))?\s*(?P<ap>[ap]\.?m\.?)?\s*(?:on\s+|,\s*)?)?"
_HUMAN = [
    LazyRe(_CLOCK + rf"(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>{MONTH_WORD})\.?,?\s+(?P<y>\d{{4}})",
           re.IGNORECASE),
    LazyRe(_CLOCK + rf"(?P<m>{MONTH_WORD})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y>\d{{4}})",
           re.IGNORECASE),
]


def _offset(text: str | None) -> tzinfo | None:
    if not text:
        return None
    if text.upper() in ("Z", "UTC"):
        return UTC
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:4] or 0)
    return timezone(sign * timedelta(hours=hours, minutes=minutes))


def parse_iso(value: str, default_tz: tzinfo | None) -> datetime:
    m = _ISO.fullmatch(value.strip())
    if not m:
        raise ValueError(value)
    y, mo, d, hh, mi, ss, frac, off = m.groups()
    micro = int((frac or "0")[:6].ljust(6, "0"))  # nanoseconds and beyond are dropped
    tz = _offset(off) or default_tz
    return datetime(int(y), int(mo), int(d), int(hh or 0), int(mi or 0), int(ss or 0), micro, tzinfo=tz)


def clock_hour(hour: int, ampm: str | None) -> int:
    """``hour`` on the 24-hour clock, read as a 12-hour one after "pm" or "a.m." (ValueError outside 1-12)."""
    if not ampm:
        return hour
    if not 1 <= hour <= 12:
        raise ValueError(f"not a 12-hour clock hour: {hour}")
    return hour % 12 + (12 if ampm[0].lower() == "p" else 0)


def _parse_human(value: str) -> datetime:
    for pattern in _HUMAN:
        m = pattern.fullmatch(value.strip())
        if not m:
            continue
        hour, minute, second = clock_hour(int(m["hh"] or 0), m["ap"]), int(m["mm"] or 0), int(m["ss"] or 0)
        month = MONTHS[m["m"].lower().rstrip(".")]
        return datetime(int(m["y"]), month, int(m["d"]), hour, minute, second, tzinfo=UTC)
    raise ValueError(value)


def parse_datetime(value: str) -> datetime:
    """ISO-8601 (``Z``, offsets, date-only) or LoCoMo's "1:56 pm on 8 May, 2023", as tz-aware UTC.

    Naive values are taken as UTC. Raises ValueError naming the value when it cannot be read.

    >>> parse_datetime("2023-05-08T15:56:00+02:00").isoformat()
    '2023-05-08T13:56:00+00:00'
    >>> parse_datetime("1:56 pm on 8 May, 2023").isoformat()
    '2023-05-08T13:56:00+00:00'
    """
    if isinstance(value, datetime):
        return aware(value).astimezone(UTC)
    if not isinstance(value, str):
        raise ValueError(f"not a date-time: {value!r}")
    return _parse_text(value)


@lru_cache(maxsize=256)
def _parse_text(value: str) -> datetime:
    """``parse_datetime`` of a string, remembered: a batch's records mostly share one ``created_at``
    (datetimes are immutable; a failure is not remembered and raises each time)."""
    try:
        if _ISO.fullmatch(value.strip()):
            return parse_iso(value, default_tz=UTC).astimezone(UTC)
        return _parse_human(value)
    except (ValueError, OverflowError):
        raise ValueError(f"not a date-time: {value!r}") from None



def format_datetime(dt: datetime) -> str:
    """ISO-8601 UTC with milliseconds and ``Z``; naive values are taken as UTC.

    >>> from datetime import datetime, timezone
    >>> format_datetime(datetime(2026, 11, 30, 17, 58, 2, 123456, tzinfo=timezone.utc))
    '2026-11-30T17:58:02.123Z'
    """
    try:
        u = aware(dt).astimezone(UTC)
    except OverflowError:
        raise ValueError(f"date-time out of range: {dt!r}") from None
    # Hand-formatted: strftime does not zero-pad years below 1000 on every platform.
    return (f"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:{u.second:02d}"
            f".{u.microsecond // 1000:03d}Z")
