"""A statement that names its own end: "until Jan 6", "through next week", "back to 2 on Dec 2".

Such a statement holds for a while and then stops: a deploy freeze, a stand-in on call, a raised limit
for one sale week. Intake stores that end as the memory's ``valid_until`` (unless the record gives one),
and the rest of mem reads it structurally:

* **supersession** (``mem.stages.supersede``): a bounded statement does not replace an open-ended one
  about the same thing. Their contexts overlap only until the end, and after it the open-ended one is
  what holds again ("back to 2 on Dec 2"), so the newer suspends the rule for a while (a ``suspends``
  edge) rather than superseding it;
* **search** (``mem.score.validity``): while the end is ahead, the exception answers first; once it has
  passed, the statement is history. A query that names no time of its own asks about now, and an
  expired memory keeps only part of its relevance, as a memory outside a time the query names does.

An end counts only when it is a calendar day or longer (a date, "next week", "mid-January") written
right after an end word ("until", "till", "through" in a text of one statement, or "back to ... on" in
any), or a time the text was written in that it holds for alone ("this week only", "only today", "during
today's launch"), and only when it lies after the moment the text was written. "Dana handed the on-call to
Tomasz; she stays as his backup until April" is a handover for good, with a backup for a while; "The batch
runs from 01:00 until 02:00" names a time of day, "until 2034 we used Jenkins" a past, and "Monday until
Friday" a weekly schedule: none is an end of the whole text. Stdlib only.

>>> from datetime import datetime, timezone
>>> at = datetime(2036, 11, 20, 10, tzinfo=timezone.utc)
>>> ends("Payouts concurrency goes to 4 for Cyber Week only; back to 2 on Dec 2.", at).isoformat()
'2036-12-02T00:00:00+00:00'
>>> ends("Deploys are frozen through next week.", at).isoformat()
'2036-12-01T00:00:00+00:00'
>>> ends("Until 2034 we used Jenkins.", at) is None
True
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import NamedTuple

from mem.enrich.dates import WEEKDAYS, scan
from mem.enrich.timestamps import aware

# End words written right before the date: "until" and "till" end where the day begins; "through" and "up
# to and including" take the day in. ("Farid's contract ends on 31 May" tells when a thing ends, an event,
# and stays true after it: no end word of the statement's own.)
_BEFORE_DAY = r"until|till|til|'til|up\s+until"
_WITH_DAY = r"through|thru|up\s+to\s+and\s+including"
# ... the date right after it, or, after "until", inside its clause or an apposition to it: "until the new TSO
# link is certified on 2 March", "until the cable ship finishes the repair, expected 27 Feb"
_END_WORD = re.compile(rf"\b(?:(?P<before>{_BEFORE_DAY})(?:\s[^;!?]{{0,60}}?)?|(?P<with>{_WITH_DAY})(?:\s+on)?)\s+$",
                       re.IGNORECASE)
# "back to 2 on Dec 2", "reverts to weekly from Jan 6", "returns to normal after March 3": the old state
# comes back on that day, so the statement ends where it begins (or where it ends, after "after")
_BACK = re.compile(r"\b(?:back\s+to|revert(?:s|ed|ing)?\s+to|return(?:s|ing)?\s+to|resum(?:es|ing))\b[^.;!?]{0,60}?\b"
                   r"(?:(?P<before>on|from|by|at)|(?P<with>after))\s+$", re.IGNORECASE)
# before scanning
_ANY = re.compile(rf"\b(?:{_BEFORE_DAY}|{_WITH_DAY}|back|revert|return|resum|only|during)", re.IGNORECASE)
# "this week only", "only today": a time the text was written in, and that it holds for alone
_ONLY_AFTER = re.compile(r"\s*only\b", re.IGNORECASE)
_ONLY_BEFORE = re.compile(r"\bonly\s+(?:for\s+|during\s+)?$", re.IGNORECASE)
# ... and "during today's launch campaign", "during this week": what holds during a time it was written in holds
# for that time alone, "only" or not ("Dropping the homepage TTL to 5 s during today's launch campaign"). False: off.
DURING = True
_DURING = re.compile(r"\bduring\s+$", re.IGNORECASE)
# An end fronted before the statement it bounds: "Until Jan 6, the nightly job runs at 03:00"
_FRONTED = re.compile(rf"\s*(?:{_BEFORE_DAY}|{_WITH_DAY})\b", re.IGNORECASE)
# Where a text holds more than one statement: "The hypertable was renamed to positions; a view named
# vehicle_positions remains until September" ends the view, not the rename; so does a comma before a new
# subject ("..., the old bucket name is a redirect until June")
_STATEMENTS = re.compile(r";|[.!?](?=\s+[A-Z0-9])|,\s+(?=(?:the|a|an|our|its|their|this|that|he|she|it|they|we)\s)",
                         re.IGNORECASE)
_SHORTEST = timedelta(days=1)  # a time of day is a schedule, not an end
_LOOKBACK = 90  # characters before a date read for its end word


class End(NamedTuple):
    """An end a text names: when (``at``) and where in the text (``start``, ``stop``: the date's offsets)."""

    at: datetime
    start: int
    stop: int


def ends(text: str, written: datetime) -> datetime | None:
    """When what ``text`` says stops holding, by its own words; None when it names no end after ``written``."""
    found = end_of(text, written)
    return found.at if found else None


def end_of(text: str, written: datetime) -> End | None:
    """The :class:`End` ``text`` names after ``written`` (:func:`ends`, with the date's place in the text)."""
    if not isinstance(text, str) or not _ANY.search(text):
        return None
    written = aware(written)
    hits = scan(text, written)
    single = _one_statement(text)
    weekdays = sum(_weekday(text[s:e]) is not None for s, e, _, _ in hits)
    for start, stop, begins, finishes in hits:
        if finishes - begins < _SHORTEST:
            continue
        before = text[max(0, start - _LOOKBACK):start]
        if begins <= written < finishes and _weekday(text[start:stop]) is None \
                and (_ONLY_AFTER.match(text, stop) or _ONLY_BEFORE.search(before) or DURING and _DURING.search(before)):
            return End(finishes, start, stop)  # "this week only": until the week is over
        # "until" and "through" end the statement they are in, the whole text only when it is one; "back to 2
        # on Dec 2" tells when the state the text describes is over, whatever else it says
        marker = _BACK.search(before) or (_END_WORD.search(before) if single else None)
        if marker is None:
            continue
        if (day := _weekday(text[start:stop])) is not None:
            if weekdays > 1:
                continue  # "Monday until Friday": a weekly schedule
            begins, finishes = _coming(begins, finishes, written)
        end = begins if marker["before"] else finishes
        if end > written:
            return End(end, start, stop)
    return None


def past(text: str, written: datetime) -> list[str]:
    """The statements of ``text`` that name an end already over when it was written: "photos were kept on an NFS
    share until 2020" is history, which replaces nothing that holds now.

    >>> from datetime import datetime, timezone
    >>> past("Photos were kept on NFS until 2020. The CDN rewrites old URLs.", datetime(2026, 5, 1, tzinfo=timezone.utc))
    ['Photos were kept on NFS until 2020']
    """
    if not isinstance(text, str) or not _ANY.search(text):
        return []
    written = aware(written)
    out: list[str] = []
    for start, _, _, finishes in scan(text, written):
        before = text[max(0, start - _LOOKBACK):start]
        if finishes <= written and _END_WORD.search(before):
            begin = max((m.end() for m in _STATEMENTS.finditer(text, 0, start)), default=0)
            end = _STATEMENTS.search(text, start)
            out.append(text[begin:end.start() if end else None].strip())
    return out


def _one_statement(text: str) -> bool:
    """Whether ``text`` says one thing: one part between statement breaks, or an end fronted before one
    ("Until Jan 6, the nightly job runs at 03:00")."""
    parts = [part for part in _STATEMENTS.split(text) if part.strip()]
    if len(parts) == 2 and _FRONTED.match(parts[0]):
        return True
    return len(parts) == 1


def _weekday(surface: str) -> int | None:
    """The weekday a bare weekday name ("Friday", "fri") names, else None ("next Friday" is dated already)."""
    return WEEKDAYS.get(surface.strip().lower().rstrip("."))


def _coming(begins: datetime, finishes: datetime, written: datetime) -> tuple[datetime, datetime]:
    """A bare weekday after an end word is the coming one ("frozen until Friday"), not the last one, which
    is how a weekday reads in a memory of what happened."""
    while begins <= written:
        begins, finishes = begins + timedelta(days=7), finishes + timedelta(days=7)
    return begins, finishes
