"""Zero-LLM date resolution: turn "yesterday", "two weeks ago", "8 May, 2023" into time windows.

Used at intake (a memory's ``event_at`` is the start of the most specific window its text names,
resolved against the memory's ``created_at``) and at query time (:mod:`mem.enrich.query_time`,
against now). The calendar arithmetic is :mod:`mem.enrich.calendar_spans`', in the anchor's own
timezone, so "yesterday" means the anchor's local yesterday; every returned datetime is tz-aware
UTC. Stdlib only.

>>> from datetime import datetime, timezone
>>> anchor = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
>>> [(w.surface, w.start.date().isoformat()) for w in resolve_dates("Met her yesterday", anchor)]
[('yesterday', '2023-05-07')]
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from functools import lru_cache, partial
from typing import TYPE_CHECKING

from mem.enrich.calendar_spans import (NUMBERS, SEASONS, Span, at, closest_year, count_of, monday, month_add,
                                       month_span, months_span, offset_span, part_of_day, period, season_near,
                                       season_span, shift, sub_month, sub_year, unit_of, weekday_from)
from mem.enrich.lazy_regex import LazyRe, trie
from mem.enrich.timestamps import MONTH_WORD, MONTHS, UTC, aware, clock_hour, parse_datetime, parse_iso

if TYPE_CHECKING:  # only for annotations
    from collections.abc import Callable

__all__ = [
    "TimeWindow",
    "event_at",
    "parse_time_bound",
    "resolve_dates",
]


@dataclass(frozen=True)
class TimeWindow:
    """A half-open span of time named by some text: ``start <= t < end``, both tz-aware UTC."""

    start: datetime
    end: datetime
    surface: str


# Month words that are also everyday English ("you may", "march on", "mar the finish"): they only
# count as a month when capitalised or pinned down by a day or a year.
_AMBIGUOUS_MONTHS = frozenset({"may", "march", "mar", "dec"})
WEEKDAYS = {
    "monday": 0, "mon": 0, "tuesday": 1, "tues": 1, "tue": 1, "wednesday": 2, "wed": 2,
    "thursday": 3, "thurs": 3, "thur": 3, "thu": 3, "friday": 4, "fri": 4, "saturday": 5,
    "sat": 5, "sunday": 6, "sun": 6,
}


def _words(names) -> str:
    """Any of ``names`` as a whole word."""
    return "(?:" + trie(names) + r")(?![a-z])"


_MON = MONTH_WORD
_WD = _words(WEEKDAYS)
_WD_FULL = _words(w for w in WEEKDAYS if w.endswith("day"))
_SEASON = _words(SEASONS)
_NUM = (r"(?:\d{1,3}|a\s+couple(?:\s+of)?|couple\s+of|a\s+few|few|several|one|two|three|four|five"
        r"|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|an?)(?![a-z])")
_UNIT = (r"(?:minutes?|mins?|hours?|hrs?|days?|nights?|weekends?|weeks?|fortnights?|months?"
         r"|years?|yrs?|decades?)(?![a-z])")
_DAYNUM = r"(?:[12]\d|3[01]|0?[1-9])"
_ORD = r"(?:st|nd|rd|th)?(?!\d)"
_YEAR = r"[12]\d{3}(?!\d)"
_BARE_YEAR = r"(?:19|20)\d\d(?!\d)"
_QUAL = r"(?:the\s+)?(?P<{0}>early|mid|late|end\s+of|beginning\s+of|start\s+of)[\s-]+"
# A bare month or year ("in May", "since 2020") needs a preposition in front; a lookbehind keeps
# the preposition out of the surface so query_windows can still read "before"/"after" there.
_PREPS = ("in", "of", "by", "to", "and", "from", "since", "until", "till", "before", "after",
          "during", "between")
_AFTER_PREP = "(?:" + "|".join(rf"(?<=\b{p}\s)" for p in _PREPS) + ")"


def _time_prefix(p: str) -> str:
    """Optional clock time in front of a date, as in LoCoMo's "1:56 pm on 8 May, 2023"."""
    return (rf"(?:(?P<{p}_hh>\d{{1,2}}):(?P<{p}_mm>[0-5]\d)\s*(?P<{p}_ap>[ap]\.?m\.?)?"
            rf"\s*(?:on\s+|,\s*)?)?")


# One entry per kind of expression: (name, regex, kinds of word it can start with). Order
# matters: at a position the first alternative that matches wins, so longer and more specific
# forms come first ("the day before yesterday" before "the day before X").
_ALTS: list[tuple[str, str, str]] = [
    ("daybefore", r"\b(?:the\s+)?day\s+(?P<db>before\s+yesterday|after\s+tomorrow)(?![a-z])",
     "the day"),
    # A relative reference that applies to the date right after it, or else to the previous one.
    ("ref", rf"\bthe\s+(?:(?P<ref_u>day|night|weekend|week|month|year|{_WD})\s+"
     r"(?P<ref_d>before|after|prior\s+to)"
     rf"|(?P<ref_d2>following|next|previous|prior)\s+(?P<ref_u2>day|night|weekend|week|month|year|{_WD}))"
     rf"(?![a-z])|\b(?P<ref_n>{_NUM})\s+(?P<ref_nu>{_UNIT})\s+"
     r"(?P<ref_nd>before|after|earlier|later|prior\s+to|afterwards?)(?![a-z])", "the num digit"),
    ("iso", r"(?<![\d-])(?P<iso_y>\d{4})-(?P<iso_m>\d{1,2})(?:-(?P<iso_d>\d{1,2})"
     r"(?:[T ](?P<iso_t>\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:\s?(?:Z|[+-]\d{2}(?::?\d{2})?))?))?)?"
     r"(?![\d])", "digit"),
    ("us", r"(?<![\d/.])(?P<us_a>\d{1,2})/(?P<us_b>\d{1,2})/(?P<us_y>\d{4}|\d{2})(?![\d/])", "digit"),
    ("dmy", rf"(?<![\d.:/]){_time_prefix('dmy')}(?:(?P<dmy_wd>{_WD}),?\s+)?(?:the\s+)?"
     rf"(?P<dmy_d>{_DAYNUM}){_ORD}(?:\s+of)?\s+(?P<dmy_m>{_MON})\.?(?:,?\s+(?P<dmy_y>{_YEAR}))?",
     "digit weekday the"),
    ("mdy", rf"(?<![\d.:/]){_time_prefix('mdy')}(?:(?P<mdy_wd>{_WD}),?\s+)?\b(?P<mdy_m>{_MON})\.?\s+"
     rf"(?:the\s+)?(?P<mdy_d>{_DAYNUM}){_ORD}(?:,?\s+(?P<mdy_y>{_YEAR}))?(?![\w:])",
     "digit month weekday"),
    ("my", rf"\b(?:{_QUAL.format('my_q')})?(?P<my_m>{_MON})\.?,?\s+(?:of\s+)?(?P<my_y>{_YEAR})",
     "month qual the"),
    ("qtr", rf"\bQ(?P<q_n>[1-4])\s*(?:of\s+)?(?P<q_y>{_YEAR})", "q"),
    ("sy", rf"\b(?:(?P<sy_q>early|mid|late)[\s-]+)?(?P<sy_s>{_SEASON})\s+(?:of\s+)?(?P<sy_y>{_YEAR})",
     "season qual"),
    ("named", r"\b(?:(?:earlier|later)\s+)?(?P<nd>the\s+other\s+day|yesterday|today|tonight|tomorrow"
     r"|last\s+night|this\s+(?:morning|afternoon|evening))(?![a-z])"
     r"(?:\s+(?P<nd_part>morning|afternoon|evening|night)(?![a-z]))?", "named the rel"),
    ("dom", rf"\bon\s+the\s+(?P<dom_d>{_DAYNUM})(?:st|nd|rd|th)(?![\w])(?!\s+(?:of\s+)?{_MON})", "on"),
    ("ago", rf"\b(?P<ago_n>{_NUM})\s+(?P<ago_u>{_UNIT})\s+(?:ago|back)(?![a-z])", "num digit"),
    ("inn", rf"\bin\s+(?P<in_n>{_NUM})\s+(?P<in_u>{_UNIT})|\b(?P<fn_n>{_NUM})\s+(?P<fn_u>{_UNIT})"
     r"\s+from\s+now(?![a-z])", "in num digit"),
    ("roll", rf"\bthe\s+(?:past|last|previous)\s+(?:(?P<roll_n>{_NUM})\s+)?(?P<roll_u>{_UNIT})"
     rf"|\b(?:past|last|previous)\s+(?P<roll_n2>{_NUM})\s+(?P<roll_u2>{_UNIT})", "the rel"),
    ("rel", rf"\b(?P<rel_q>last|this\s+past|this|next|coming|upcoming|past|previous)\s+"
     rf"(?P<rel_u>weekend|week|month|year|decade|{_WD}|{_MON}|{_SEASON})(?![a-z])", "rel"),
    ("wkend", r"\bthe\s+weekend(?![a-z])", "the"),
    ("bmonth", rf"(?:\b{_QUAL.format('bm_q')}|{_AFTER_PREP})(?P<bm_m>{_MON})", "month qual the"),
    # "in the summer", but not "in the summer of 2022" (that is the "sy" form, from "summer").
    ("bseason", rf"{_AFTER_PREP}(?:the\s+)?(?P<bs_s>{_SEASON})(?!\s+(?:of\s+)?{_YEAR})",
     "season the"),
    ("byear", rf"(?:\b{_QUAL.format('by_q')}|{_AFTER_PREP}|(?<=\byear\s))(?P<by_y>{_BARE_YEAR})"
     r"(?![%]|[.,:/-]\d)", "digit qual the"),
    ("decade", r"(?<![\w'])(?:the\s+)?(?P<dec4>(?:19|20)\d)0s(?![a-z])"
     r"|\bthe\s+'?(?P<dec2a>[3-9])0s(?![a-z])|(?<![\w'])'(?P<dec2b>[3-9])0s(?![a-z])",
     "digit the apos"),
    ("wd", rf"\b(?P<wd_w>{_WD_FULL})", "weekday"),
]
# Which kind of word each token is, for the words that can start a date expression.
_STARTERS: dict[str, str] = {
    **{w: "month" for w in MONTHS}, **{w: "weekday" for w in WEEKDAYS},
    **{w: "season" for w in SEASONS}, **{w: "num" for w in NUMBERS},
    "few": "num", "several": "num", "couple": "num", "the": "the", "day": "day", "in": "in",
    "q": "q", "yesterday": "named", "today": "named", "tonight": "named", "tomorrow": "named",
    "earlier": "named", "later": "named", "last": "rel", "this": "rel", "next": "rel",
    "coming": "rel", "upcoming": "rel", "on": "on", "past": "rel", "previous": "rel", "early": "qual",
    "mid": "qual", "late": "qual", "end": "qual", "beginning": "qual", "start": "qual",
}


# Words that can start a date expression, found in the lower-cased text. Scanning only from these
# keeps the big patterns off most positions (the difference between ~600 and ~30 us per text).
# Digits inside "7.2", "5,000" or "1:56" never start a date (the "1" of "1:56 pm on 8 May" does).
_CANDIDATE = LazyRe(r"\b(?:(?<![.:])\d+(?![.,]\d)|(?:" + trie(_STARTERS) + r")\b|q(?=[1-4]\b))|'(?=\d)")
_CANDIDATE_ANYCASE = LazyRe(_CANDIDATE.pattern, re.IGNORECASE)
# Frequent starters only worth a full match when the next word can continue a date.
_FOLLOW = {
    "the": LazyRe(rf"\s+(?:day|night|week|weekend|month|year|past|last|previous|following|next"
                 rf"|prior|other|end|beginning|start|early|mid|late|\d|'|{_WD}|{_SEASON})", re.I),
    "num": LazyRe(rf"\s+(?:couple|few|of\s|{_UNIT})", re.I),
    "on": LazyRe(r"\s+the\s+\d", re.I),
}


@lru_cache(maxsize=None)
def _scanner(kind: str) -> re.Pattern:
    """The alternatives that can start with a ``kind`` word, compiled on first use (import stays cheap)."""
    alts = [f"(?P<{name}>{pattern})" for name, pattern, kinds in _ALTS if kind in kinds.split()]
    return re.compile("|".join(alts), re.IGNORECASE)


# Words right after a bare number that make it a quantity ("in 2048 bytes"), not a year.
_QUANTITY_AFTER = LazyRe(
    r"\s*(?:%|percent|ms|s|secs?|seconds?|minutes?|hours?|days?|bytes?|kb|mb|gb|tokens?|rows?"
    r"|lines?|items?|users?|people|times|x|words?|chars?|characters?|records?|requests?|points?"
    r"|dollars?|usd|files?|tests?)(?![a-z])", re.IGNORECASE)
# Anything in the text suggesting the future: bare weekdays then resolve forwards, not back.
_FUTURE_HINT = LazyRe(
    r"\b(?:will|shall|gonna|going\s+to|plan(?:s|ning|ned)?\s+to|next|upcoming|tomorrow)\b|['’]ll\b",
    re.IGNORECASE)


# --------------------------------------------------------------------------------------------
# One handler per pattern alternative; each returns a local-time span or None (not a date)
# --------------------------------------------------------------------------------------------


class _Ctx:
    """What handlers need besides the match: the anchor and the whole text (for tense hints)."""

    __slots__ = ("anchor", "text", "_future")

    def __init__(self, anchor: datetime, text: str) -> None:
        self.anchor = anchor
        self.text = text
        self._future: bool | None = None

    @property
    def today(self) -> date:
        return self.anchor.date()

    @property
    def future(self) -> bool:
        # Computed lazily: only bare weekdays ask, and most texts have none.
        if self._future is None:
            self._future = bool(_FUTURE_HINT.search(self.text))
        return self._future


def _capitalised(word: str) -> bool:
    return word[:1].isupper()


def _month_ok(word: str, pinned: bool) -> bool:
    """Everyday words spelled like months count only when capitalised or next to a day/year."""
    return pinned or _capitalised(word) or word.lower().rstrip(".") not in _AMBIGUOUS_MONTHS


def _clock(m: re.Match, p: str) -> tuple[int, int] | None:
    if not m.group(p + "_hh"):
        return None
    return clock_hour(int(m.group(p + "_hh")), m.group(p + "_ap")), int(m.group(p + "_mm"))


def _day_or_minute(d: date, clock: tuple[int, int] | None, tz: tzinfo | None) -> Span:
    if clock is None:
        return at(d, tz), at(d + timedelta(days=1), tz)
    start = datetime(d.year, d.month, d.day, clock[0], clock[1], tzinfo=tz)
    return start, start + timedelta(minutes=1)


def _h_iso(m: re.Match, c: _Ctx) -> Span | None:
    year, month, tz = int(m["iso_y"]), int(m["iso_m"]), c.anchor.tzinfo
    if m["iso_d"] is None:
        return month_span(year, month, tz)
    if m["iso_t"]:
        start = parse_iso(m.group("iso"), default_tz=tz)
        return start, start + timedelta(minutes=1)
    return _day_or_minute(date(year, month, int(m["iso_d"])), None, tz)


def _h_us(m: re.Match, c: _Ctx) -> Span | None:
    month, day, year = int(m["us_a"]), int(m["us_b"]), int(m["us_y"])
    if month > 12 >= day:  # "25/12/2023" can only be day-first
        month, day = day, month
    if year < 100:
        year += 2000 if year < 70 else 1900
    return _day_or_minute(date(year, month, day), None, c.anchor.tzinfo)


def _dated(m: re.Match, c: _Ctx, p: str) -> Span | None:
    """"8 May 2023" (``p`` "dmy") and "May 8th, 2023" ("mdy")."""
    month_word, year = m[p + "_m"], m[p + "_y"]
    if not _month_ok(month_word, pinned=bool(year)):
        return None
    month, day = MONTHS[month_word.lower().rstrip(".")], int(m[p + "_d"])
    y = int(year) if year else closest_year(month, day, c.today)
    return _day_or_minute(date(y, month, day), _clock(m, p), c.anchor.tzinfo)


def _h_my(m: re.Match, c: _Ctx) -> Span | None:
    month = MONTHS[m["my_m"].lower().rstrip(".")]
    return sub_month(month_span(int(m["my_y"]), month, c.anchor.tzinfo), m["my_q"])


def _h_qtr(m: re.Match, c: _Ctx) -> Span | None:
    return months_span(int(m["q_y"]), 3 * int(m["q_n"]) - 2, 3, c.anchor.tzinfo)


def _h_sy(m: re.Match, c: _Ctx) -> Span | None:
    start, end = season_span(m["sy_s"], int(m["sy_y"]), c.anchor.tzinfo)
    q = (m["sy_q"] or "").lower()
    if q:  # a season is three months: early/mid/late picks one of them
        first = {"early": 0, "mid": 1, "late": 2}[q]
        start, end = months_span(start.year, start.month, 1, start.tzinfo)
        for _ in range(first):
            start, end = months_span(end.year, end.month, 1, end.tzinfo)
    return start, end


def _h_daybefore(m: re.Match, c: _Ctx) -> Span | None:
    days = -2 if m["db"].lower().startswith("before") else 2
    return period("day", c.anchor + timedelta(days=days))


def _h_named(m: re.Match, c: _Ctx) -> Span | None:
    word = " ".join(m["nd"].lower().split())
    part, tz, today = (m["nd_part"] or "").lower(), c.anchor.tzinfo, c.today
    if word == "the other day":  # vaguely "within the past week", excluding today
        return at(today - timedelta(days=7), tz), at(today, tz)
    if word == "last night":
        return part_of_day(today - timedelta(days=1), "night", tz)
    if word.startswith("this "):
        return part_of_day(today, word[5:], tz)
    if word == "tonight":
        return part_of_day(today, "night", tz)
    d = today + timedelta(days={"yesterday": -1, "today": 0, "tomorrow": 1}[word])
    return part_of_day(d, part, tz) if part else period("day", at(d, tz))


def _h_dom(m: re.Match, c: _Ctx) -> Span | None:
    """"on the 15th": that day of this month, or of the month before (the next, for plans) when
    this month's is still ahead (behind)."""
    day, today = int(m["dom_d"]), c.today
    year, month = today.year, today.month
    if c.future and day < today.day:
        year, month = month_add(year, month, 1)
    elif not c.future and day > today.day:
        year, month = month_add(year, month, -1)
    if day > calendar.monthrange(year, month)[1]:
        return None
    return period("day", at(date(year, month, day), c.anchor.tzinfo))


def _h_ago(m: re.Match, c: _Ctx) -> Span | None:
    return offset_span(c.anchor, unit_of(m["ago_u"]), count_of(m["ago_n"]), -1)


def _h_inn(m: re.Match, c: _Ctx) -> Span | None:
    n, u = (m["in_n"], m["in_u"]) if m["in_n"] else (m["fn_n"], m["fn_u"])
    return offset_span(c.anchor, unit_of(u), count_of(n), +1)


def _h_roll(m: re.Match, c: _Ctx) -> Span | None:
    """Rolling windows: "the past 3 days" runs from the start of the day 3 days back to the end of today."""
    n, u = (m["roll_n"], m["roll_u"]) if m["roll_u"] else (m["roll_n2"], m["roll_u2"])
    unit = unit_of(u)
    count = count_of(n)[1] if n else 1
    grain = unit if unit in ("minute", "hour") else "day"
    return period(grain, shift(c.anchor, unit, -count))[0], period(grain, c.anchor)[1]


def _h_rel(m: re.Match, c: _Ctx) -> Span | None:
    q = " ".join(m["rel_q"].lower().split())
    word = m["rel_u"]
    w = word.lower().rstrip(".")
    step = {"last": -1, "past": -1, "previous": -1, "this past": -1, "this": 0}.get(q, 1)
    if w in WEEKDAYS:
        if len(w) <= 4 and not _capitalised(word):  # "this sat", "next sun": not weekdays
            return None
        wd = WEEKDAYS[w]
        if step == 0:
            d = monday(c.today) + timedelta(days=wd)
        else:
            d = weekday_from(c.today, wd, step, allow_today=False)
        return period("day", at(d, c.anchor.tzinfo))
    if w in MONTHS:
        if not _capitalised(word):  # "this may change", "next march"... too risky lowercase
            return None
        month, today = MONTHS[w], c.today
        if step == 0:
            year = today.year
        elif step < 0:
            year = today.year if month < today.month else today.year - 1
        else:
            year = today.year if month > today.month else today.year + 1
        return month_span(year, month, c.anchor.tzinfo)
    if w in SEASONS:
        return season_near(w, q, c.anchor)
    return period(w, shift(c.anchor, w, step))


def _h_wkend(m: re.Match, c: _Ctx) -> Span | None:
    """A bare "the weekend": the one we are in, else the next one if the text is about plans, else the last."""
    if c.today.weekday() >= 5:
        return period("weekend", c.anchor)
    return period("weekend", shift(c.anchor, "week", 0 if c.future else -1))


def _h_bmonth(m: re.Match, c: _Ctx) -> Span | None:
    word = m["bm_m"]
    if not _capitalised(word):
        return None
    month = MONTHS[word.lower().rstrip(".")]
    year = closest_year(month, 15, c.today)
    return sub_month(month_span(year, month, c.anchor.tzinfo), m["bm_q"])


def _h_bseason(m: re.Match, c: _Ctx) -> Span | None:
    return season_near(m["bs_s"], "this", c.anchor)


def _h_byear(m: re.Match, c: _Ctx) -> Span | None:
    if _QUANTITY_AFTER.match(c.text, m.end()):
        return None
    return sub_year(int(m["by_y"]), m["by_q"], c.anchor.tzinfo)


def _h_decade(m: re.Match, c: _Ctx) -> Span | None:
    if m["dec4"]:
        first = int(m["dec4"]) * 10
    else:
        first = 1900 + 10 * int(m["dec2a"] or m["dec2b"])
    tz = c.anchor.tzinfo
    return at(date(first, 1, 1), tz), at(date(first + 10, 1, 1), tz)


def _h_wd(m: re.Match, c: _Ctx) -> Span | None:
    """A bare "Friday": the last one (today included), or the next one when the text is about plans."""
    wd = WEEKDAYS[m["wd_w"].lower()]
    d = weekday_from(c.today, wd, +1 if c.future else -1, allow_today=True)
    return period("day", at(d, c.anchor.tzinfo))


_HANDLERS: dict[str, Callable[[re.Match, _Ctx], Span | None]] = {
    "daybefore": _h_daybefore, "iso": _h_iso, "us": _h_us, "dmy": partial(_dated, p="dmy"),
    "mdy": partial(_dated, p="mdy"), "my": _h_my, "qtr": _h_qtr, "sy": _h_sy, "named": _h_named, "dom": _h_dom,
    "ago": _h_ago, "inn": _h_inn, "roll": _h_roll, "rel": _h_rel, "wkend": _h_wkend, "bmonth": _h_bmonth,
    "bseason": _h_bseason, "byear": _h_byear, "decade": _h_decade, "wd": _h_wd,
}


def _apply_ref(m: re.Match, base: Span) -> Span:
    """Resolve "the week before" / "two days later" relative to ``base``."""
    start, end = base
    last = end - timedelta(microseconds=1) if end > start else end  # last instant of the base
    if m["ref_n"]:
        word = m["ref_nd"].lower()
        sign = -1 if word.startswith(("before", "earlier", "prior")) else 1
        return offset_span(start if sign < 0 else last, unit_of(m["ref_nu"]), count_of(m["ref_n"]), sign)
    if m["ref_u"]:
        unit_word, sign = m["ref_u"].lower(), -1 if m["ref_d"].lower() != "after" else 1
    else:
        unit_word = m["ref_u2"].lower()
        sign = -1 if m["ref_d2"].lower() in ("previous", "prior") else 1
    moment = start if sign < 0 else last
    if unit_word in WEEKDAYS:  # "the Sunday before 25 May": strictly before/after that day
        d = weekday_from(moment.date(), WEEKDAYS[unit_word], sign, allow_today=False)
        return period("day", at(d, moment.tzinfo))
    unit = unit_of(unit_word)
    return period(unit, shift(moment, unit, sign))



def scan(text: str, anchor: datetime) -> list[tuple[int, int, datetime, datetime]]:
    """(start index, end index, window start, window end) for each expression, in text order."""
    if not isinstance(text, str) or not text:
        return []
    ctx = _Ctx(aware(anchor), text)
    hits: list[tuple[int, int, datetime, datetime]] = []
    pending: re.Match | None = None  # a "the week before" waiting for the date after it

    def resolve_pending() -> None:
        # No date right after the reference: it is relative to the previous date, else the anchor.
        base = (hits[-1][2], hits[-1][3]) if hits else (ctx.anchor, ctx.anchor)
        try:
            span = _apply_ref(pending, base)
        except (ValueError, OverflowError):
            return
        hits.append((pending.start(), pending.end(), *span))

    resume = 0  # matches must not overlap: skip candidates inside the last one
    lowered = text.lower()
    if len(lowered) == len(text):  # lower() kept every offset, so positions carry over
        candidates = _CANDIDATE.finditer(lowered)
    else:
        candidates = _CANDIDATE_ANYCASE.finditer(text)
    for token in candidates:
        begin = token.start()
        if begin < resume:
            continue
        word = token.group().lower()
        kind = "digit" if word[0].isdigit() else "apos" if word == "'" else _STARTERS[word]
        if kind in _FOLLOW and not _FOLLOW[kind].match(text, token.end()):
            continue
        m = _scanner(kind).match(text, begin)
        if m is None:
            continue
        resume = m.end()
        kind = m.lastgroup
        if kind == "ref":
            if pending is not None:
                resolve_pending()
            pending = m
            continue
        try:
            span = _HANDLERS[kind](m, ctx)
            if span is None:
                continue
            start = m.start()
            if pending is not None and not text[pending.end():start].strip():
                span, start = _apply_ref(pending, span), pending.start()
                pending = None
        except (ValueError, OverflowError):  # impossible dates ("31 Feb"), calendar overflow
            continue
        if pending is not None:
            resolve_pending()
            pending = None
        hits.append((start, m.end(), *span))
    if pending is not None:
        resolve_pending()
    return hits


def to_windows(text: str, hits) -> list[TimeWindow]:
    out = []
    for s, e, ws, we in hits:
        try:
            out.append(TimeWindow(ws.astimezone(UTC), we.astimezone(UTC), text[s:e]))
        except (ValueError, OverflowError):  # a local time at the very edge of datetime's range
            continue
    return out


def resolve_dates(text: str, anchor: datetime) -> list[TimeWindow]:
    """Every date expression in ``text``, resolved against ``anchor``, in order of appearance.

    >>> from datetime import datetime, timezone
    >>> a = datetime(2023, 5, 25, 12, tzinfo=timezone.utc)
    >>> [(w.surface, w.start.date().isoformat(), w.end.date().isoformat())
    ...  for w in resolve_dates("Two weeks ago, and on 8 May, 2023", a)]
    [('Two weeks ago', '2023-05-08', '2023-05-15'), ('8 May, 2023', '2023-05-08', '2023-05-09')]
    """
    return to_windows(text, scan(text, anchor))


def event_at(text: str, anchor: datetime, skip: tuple[int, int] | None = None) -> datetime | None:
    """Start of the most specific (shortest) window in ``text``; earliest in the text on ties. ``skip``: the
    offsets of an expression that names something else than when it happened (the end a statement names:
    "back to one on Jan 6", ``mem.enrich.bounds``).

    >>> from datetime import datetime, timezone
    >>> a = datetime(2023, 5, 8, tzinfo=timezone.utc)
    >>> event_at("Back in May 2023 - on May 3rd - we moved", a).isoformat()
    '2023-05-03T00:00:00+00:00'
    >>> event_at("no dates here", a) is None
    True
    """
    windows = to_windows(text, [hit for hit in scan(text, anchor) if (hit[0], hit[1]) != skip])
    if not windows:
        return None
    return min(windows, key=lambda w: w.end - w.start).start




_DURATION = LazyRe(r"(\d{1,6})\s*(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|wks?|weeks?|mo|months?"
                  r"|y|yrs?|years?)", re.IGNORECASE)
_DURATION_DAYS = {"s": 1 / 86400, "m": 1 / 1440, "h": 1 / 24, "d": 1, "w": 7, "mo": 30, "y": 365}


def parse_time_bound(value: str, now: datetime, *, upper: bool = False) -> datetime:
    """A ``--since``/``--until`` value as an instant: ISO-8601; a duration back from ``now`` ("7d", "36h",
    "2w", "90 minutes"); or a phrase intake reads in text ("yesterday", "last week", "3 days ago",
    "May 2023"), which names a span: its start bounds ``--since``, its end (``upper``) ``--until``.
    ValueError when it is none of these.

    >>> from datetime import datetime, timezone
    >>> now = datetime(2026, 12, 1, 12, tzinfo=timezone.utc)
    >>> parse_time_bound("7d", now).isoformat(), parse_time_bound("yesterday", now).isoformat()
    ('2026-11-24T12:00:00+00:00', '2026-11-30T00:00:00+00:00')
    >>> parse_time_bound("last week", now, upper=True).isoformat()
    '2026-11-30T00:00:00+00:00'
    """
    text = value.strip()
    try:
        return parse_datetime(text)
    except ValueError:
        pass
    m = _DURATION.fullmatch(text)
    if m:
        unit = m[2].lower()
        key = "mo" if unit.startswith("mo") else unit[0]
        return aware(now).astimezone(UTC) - timedelta(days=int(m[1]) * _DURATION_DAYS[key])
    windows = [w for w in resolve_dates(text, aware(now)) if w.surface.strip().lower() == text.lower()]
    if len(windows) == 1:
        return windows[0].end if upper else windows[0].start
    raise ValueError(f"not a time: {value!r}")
