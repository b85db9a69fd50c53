"""The time a question asks about: the windows it names, relative to now, with "before/after/since/
until X" open-ended and "between X and Y" joined (:func:`query_windows`), and whether it asks for a
time at all (:func:`is_when_question`). The date expressions are :mod:`mem.enrich.dates`' reading.
"""

from __future__ import annotations

import re
from datetime import datetime

from mem.enrich.dates import WEEKDAYS, TimeWindow, scan, to_windows
from mem.enrich.lazy_regex import LazyRe
from mem.enrich.timestamps import UTC

# Bounds of open-ended query windows ("before May 2023"); far enough out to compare with anything.
EARLIEST = datetime(1, 1, 1, tzinfo=UTC)
LATEST = datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)

# "before May", "since 2020": the word right in front of a window makes it open-ended.
_OPEN_BEFORE = LazyRe(
    r"\b(before|after|since|until|till|by|prior\s+to|earlier\s+than|later\s+than|between|from)"
    r"\s+(?:the\s+)?$", re.IGNORECASE)
_RANGE_JOIN = LazyRe(r"\s*(?:and|to|until|till|through|-|–)\s*$", re.IGNORECASE)


def query_windows(query: str, now: datetime) -> list[TimeWindow]:
    """Windows named by a query, relative to ``now``; "before/after/since/until X" are open-ended.

    >>> from datetime import datetime, timezone
    >>> now = datetime(2024, 1, 10, tzinfo=timezone.utc)
    >>> w = query_windows("what happened before May 2023?", now)[0]
    >>> (w.surface, w.start == EARLIEST, w.end.date().isoformat())
    ('before May 2023', True, '2023-05-01')
    """
    hits = [hit for hit in scan(query, now) if not (NO_WINDOW_FORMS and _no_window(query, hit[0], hit[1]))]
    out: list[TimeWindow] = []
    i = 0
    while i < len(hits):
        s, e, ws, we = hits[i]
        i += 1
        m = _OPEN_BEFORE.search(query, max(0, s - 24), s)
        if m is None:
            out.extend(to_windows(query, [(s, e, ws, we)]))
            continue
        word = " ".join(m.group(1).lower().split())
        if word in ("between", "from") and i < len(hits) and _RANGE_JOIN.fullmatch(query, e, hits[i][0]):
            # "between X and Y", "from X to Y": both ends, in whichever order they were given.
            span = (min(ws, hits[i][2]), max(we, hits[i][3]))
            e = hits[i][1]
            i += 1
        elif word in ("before", "prior to", "earlier than"):
            span = (EARLIEST, ws)
        elif word in ("after", "later than"):
            span = (we, LATEST)
        elif word in ("since", "from"):
            span = (ws, LATEST)
        elif word in ("until", "till", "by"):
            span = (EARLIEST, we)
        else:  # "between X" with no second date: just X
            span = (ws, we)
        out.extend(to_windows(query, [(m.start(), e, *span)]))
    return out


# Two forms in a question that read as dates but name none. A weekday as a noun's modifier ("at the Friday
# show-and-tell", "in the Monday cleanup report") names a recurring event, not last Friday; "in a week" in
# a question asking an amount ("how many pushes can one customer get in a week?") is the amount's period,
# not the week ahead. Coding set d and f: each had put the answer outside the window (30 % of its score).
# False: the ablation.
NO_WINDOW_FORMS = True
_RECURRING_DAY = LazyRe(r"(?:the|our|every|each)\s+$", re.IGNORECASE)
_NOUN_AFTER = LazyRe(r"\s+(?!(?:before|after|of|prior|that|when|and|or|to|at|in|on)\b)[a-z]", re.IGNORECASE)
_ONE_PERIOD = LazyRe(r"in\s+(?:a|an|one)\s+(?:day|week|month|year)", re.IGNORECASE)
_AMOUNT_ASKED = LazyRe(r"\bhow\s+(?:many|much|often)\b|\bper\b", re.IGNORECASE)


def _no_window(query: str, start: int, end: int) -> bool:
    """Whether the date expression ``query[start:end]`` names no time (``NO_WINDOW_FORMS``).

    >>> _no_window("What did Saoirse show at the Friday show-and-tell?", 29, 35)
    True
    >>> _no_window("what did we ship on Friday?", 20, 26), _no_window("what did we ship the Friday before?", 21, 27)
    (False, False)
    >>> _no_window("how many pushes can one customer get in a week", 37, 46), _no_window("what ships in a week", 11, 20)
    (True, False)
    """
    surface = query[start:end]
    if surface.lower() in WEEKDAYS and len(surface) > 4:
        return bool(_RECURRING_DAY.search(query[:start]) and _NOUN_AFTER.match(query, end))
    return bool(_ONE_PERIOD.fullmatch(surface) and _AMOUNT_ASKED.search(query))


_WHEN_QUESTION = LazyRe(
    r"\bwhen\s+(?:did|was|were|is|are|will|does|do|has|have|had)\b"
    r"|\bwhat\s+(?:date|day|time|year|month|week|weekday)\b"
    r"|\bwhich\s+(?:date|day|year|month|week|weekday)\b"
    r"|\bhow\s+long\s+ago\b|\bhow\s+long\s+has\s+it\s+been\b"
    r"|\bhow\s+many\s+(?:days|weeks|months|years)\s+(?:ago|before|after|since)\b"
    r"|\bsince\s+when\b|\bin\s+what\s+year\b|\bon\s+what\s+(?:date|day)\b|\bat\s+what\s+time\b",
    re.IGNORECASE)


def is_when_question(query: str) -> bool:
    """Whether the query asks for a time ("When did...", "what year", "how long ago").

    >>> is_when_question("When did Caroline go to the support group?")
    True
    >>> is_when_question("Which cache do we use?")
    False
    """
    return bool(_WHEN_QUESTION.search(query)) if isinstance(query, str) else False
