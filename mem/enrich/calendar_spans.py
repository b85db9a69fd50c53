"""Calendar arithmetic for date resolution (:mod:`mem.enrich.dates`), all in the anchor's own
timezone, so "yesterday" means the anchor's local yesterday: the period of a unit holding a moment,
a moment shifted by whole units (month ends clamped), spans of months, seasons and parts of a day,
and spelled or vague counts ("a few") as ranges. Weeks start on Monday. Stdlib only.

>>> from datetime import datetime, timezone
>>> [t.date().isoformat() for t in period("week", datetime(2023, 5, 10, tzinfo=timezone.utc))]
['2023-05-08', '2023-05-15']
>>> shift(datetime(2023, 1, 31), "month", 1).date().isoformat(), count_of("a few")
('2023-02-28', (2, 5))
"""

from __future__ import annotations

import calendar
from datetime import date, datetime, timedelta, tzinfo

# Meteorological seasons (northern hemisphere): first month and length; winter Y starts in Dec Y.
SEASONS = {"spring": (3, 3), "summer": (6, 3), "fall": (9, 3), "autumn": (9, 3), "winter": (12, 3)}
NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
    "thirty": 30,
}
# Vague counts become ranges, so "a few days ago" is a window of several days, not one guess.
_APPROX = {"a couple": (2, 3), "a couple of": (2, 3), "couple of": (2, 3), "a few": (2, 5),
           "few": (2, 5), "several": (3, 7)}
_UNITS = {
    "minute": "minute", "min": "minute", "hour": "hour", "hr": "hour", "day": "day", "night": "day",
    "week": "week", "weekend": "weekend", "fortnight": "fortnight", "month": "month",
    "year": "year", "yr": "year", "decade": "decade",
}
_PARTS_OF_DAY = {"morning": (6, 12), "afternoon": (12, 18), "evening": (18, 24), "night": (18, 30)}

Span = tuple[datetime, datetime]


def at(d: date, tz: tzinfo | None, hour: int = 0) -> datetime:
    """Local midnight (or ``hour`` o'clock, which may run past 24) of day ``d``."""
    if hour < 24:
        return datetime(d.year, d.month, d.day, hour, tzinfo=tz)
    return datetime(d.year, d.month, d.day, tzinfo=tz) + timedelta(hours=hour)


def monday(d: date) -> date:
    return d - timedelta(days=d.weekday())


def month_add(year: int, month: int, k: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + k
    return index // 12, index % 12 + 1


def month_span(year: int, month: int, tz: tzinfo | None) -> Span:
    ny, nm = month_add(year, month, 1)
    return at(date(year, month, 1), tz), at(date(ny, nm, 1), tz)


def months_span(year: int, month: int, count: int, tz: tzinfo | None) -> Span:
    ey, em = month_add(year, month, count)
    return at(date(year, month, 1), tz), at(date(ey, em, 1), tz)


def period(unit: str, moment: datetime) -> Span:
    """The calendar period of ``unit`` containing ``moment`` (a fortnight counts as its week)."""
    tz, d = moment.tzinfo, moment.date()
    if unit == "minute":
        start = moment.replace(second=0, microsecond=0)
        return start, start + timedelta(minutes=1)
    if unit == "hour":
        start = moment.replace(minute=0, second=0, microsecond=0)
        return start, start + timedelta(hours=1)
    if unit == "day":
        return at(d, tz), at(d + timedelta(days=1), tz)
    if unit in ("week", "fortnight"):
        return at(monday(d), tz), at(monday(d) + timedelta(days=7), tz)
    if unit == "weekend":  # the Saturday and Sunday of the week holding ``moment``
        saturday = monday(d) + timedelta(days=5)
        return at(saturday, tz), at(saturday + timedelta(days=2), tz)
    if unit == "month":
        return month_span(d.year, d.month, tz)
    if unit == "year":
        return at(date(d.year, 1, 1), tz), at(date(d.year + 1, 1, 1), tz)
    first = d.year - d.year % 10  # decade
    return at(date(first, 1, 1), tz), at(date(first + 10, 1, 1), tz)


def shift(moment: datetime, unit: str, n: int) -> datetime:
    """``moment`` moved by ``n`` units; month and year moves clamp the day (Jan 31 + 1 month = Feb 28)."""
    if unit in ("minute", "hour", "day"):
        return moment + timedelta(**{unit + "s": n})
    if unit in ("week", "weekend"):
        return moment + timedelta(weeks=n)
    if unit == "fortnight":
        return moment + timedelta(weeks=2 * n)
    months = {"month": n, "year": 12 * n}.get(unit, 120 * n)
    year, month = month_add(moment.year, moment.month, months)
    day = min(moment.day, calendar.monthrange(year, month)[1])
    return moment.replace(year=year, month=month, day=day)


def unit_of(word: str) -> str:
    word = word.lower()
    return _UNITS.get(word) or _UNITS[word[:-1]]  # plural: "weeks" -> "week"


def count_of(word: str) -> tuple[int, int]:
    """A spelled or digit count as a (low, high) range: "two" -> (2, 2), "a few" -> (2, 5)."""
    word = " ".join(word.lower().split())
    if word in _APPROX:
        return _APPROX[word]
    n = int(word) if word.isdigit() else NUMBERS[word]
    return n, n


def offset_span(anchor: datetime, unit: str, count: tuple[int, int], sign: int) -> Span:
    """Periods ``count`` units away from ``anchor`` (sign -1: back, +1: forward), range-aware."""
    near = period(unit, shift(anchor, unit, sign * count[0]))
    far = period(unit, shift(anchor, unit, sign * count[1]))
    return (far[0], near[1]) if sign < 0 else (near[0], far[1])


def closest_year(month: int, day: int, today: date) -> int:
    """Year that puts a yearless month/day nearest the anchor (ties go to the past)."""
    best: tuple[int, int] | None = None
    for year in (today.year - 1, today.year, today.year + 1):
        try:
            distance = abs((date(year, month, day) - today).days)
        except ValueError:  # Feb 29 in a non-leap year
            continue
        if best is None or distance < best[0]:
            best = (distance, year)
    if best is None:
        raise ValueError("no such day")
    return best[1]


def weekday_from(today: date, weekday: int, direction: int, allow_today: bool) -> date:
    """Nearest ``weekday`` going back (direction -1) or forward (+1) from ``today``."""
    delta = (today.weekday() - weekday) % 7 if direction < 0 else (weekday - today.weekday()) % 7
    if delta == 0 and not allow_today:
        delta = 7
    return today + timedelta(days=direction * delta)


def part_of_day(d: date, part: str, tz: tzinfo | None) -> Span:
    first, last = _PARTS_OF_DAY[part]
    return at(d, tz, first), at(d, tz, last)


def sub_month(span: Span, qualifier: str | None) -> Span:
    """Part of a month: early/mid/late May are days 1-10, 11-20, 21-end (and "end of" = late)."""
    if not qualifier:
        return span
    q = qualifier.split()[0].lower()
    start, end = span
    if q in ("early", "beginning", "start"):
        return start, start + timedelta(days=10)
    if q == "mid":
        return start + timedelta(days=10), start + timedelta(days=20)
    return start + timedelta(days=20), end


def sub_year(year: int, qualifier: str | None, tz: tzinfo | None) -> Span:
    """Part of a year: early = Jan-Apr, mid = May-Aug, late = Sep-Dec, end of = Nov-Dec, start of = Jan-Feb."""
    q = qualifier.split()[0].lower() if qualifier else ""
    first, count = {"early": (1, 4), "mid": (5, 4), "late": (9, 4), "end": (11, 2),
                    "beginning": (1, 2), "start": (1, 2)}.get(q, (1, 12))
    return months_span(year, first, count, tz)


def season_span(season: str, year: int, tz: tzinfo | None) -> Span:
    month, count = SEASONS[season.lower()]
    return months_span(year, month, count, tz)


def season_near(season: str, qualifier: str, anchor: datetime) -> Span:
    """Which summer "last/this/next summer" (or a bare "in the summer") means, seen from ``anchor``."""
    tz = anchor.tzinfo
    spans = [season_span(season, y, tz) for y in range(anchor.year - 2, anchor.year + 2)]
    if qualifier in ("last", "past", "previous", "this past"):
        return max((s for s in spans if s[1] <= anchor), key=lambda s: s[0])
    if qualifier in ("next", "coming", "upcoming"):
        return min((s for s in spans if s[0] > anchor), key=lambda s: s[0])
    for span in spans:  # "this summer", "in the summer": the one we are in, else the nearest
        if span[0] <= anchor < span[1]:
            return span
    return min(spans, key=lambda s: min(abs(s[0] - anchor), abs(s[1] - anchor)))
