"""What holds at the time a search asks about, by the ends memories name (``valid_until``).

A memory that names its own end ("deploys need two approvals until Jan 6", read at intake by
``mem.enrich.bounds``, or a record's own ``valid_until``) is an exception for a while. Intake does not
let it supersede the open-ended memory it sits beside: it records a ``suspends`` edge (exception ->
rule) instead, since after the end the rule holds again. ``mem.stages.search`` reads both against the
query's now, when the query names no time of its own:

* **in force** (the end ahead): the exception is at least as relevant as the rule it suspends (as a
  correction inherits what it superseded answered) and ranks just above it; the rule stays on the page;
* **expired** (the end behind): the memory keeps ``KEPT`` of its relevance (the share a memory outside a
  time the query names keeps), and the page steps that put the newer of two memories first (an open
  contradiction, a changed value, the page model's newer close neighbour) no longer count it as the
  newer: the rule it was an exception to answers first.

Stdlib only.

>>> from datetime import datetime, timezone
>>> now = datetime(2037, 1, 7, tzinfo=timezone.utc)
>>> expired("2037-01-06T00:00:00.000Z", now), expired("2037-02-01T00:00:00.000Z", now), expired(None, now)
(True, False, False)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mem.records import Hit

KEPT = 0.3  # share of relevance an expired memory keeps (search.OUTSIDE_WINDOW's reasoning: outside the time asked)


def expired(valid_until: str | None, now: datetime | None) -> bool:
    """Whether a memory valid until ``valid_until`` no longer holds at ``now`` (None: no time asked, never)."""
    if valid_until is None or now is None:
        return False
    try:
        return datetime.fromisoformat(valid_until.replace("Z", "+00:00")) <= now
    except ValueError:  # a hand-edited value intake would have refused: it decides nothing
        return False


def expired_ids(hits: "Iterable[Hit]", now: datetime | None) -> frozenset[str]:
    """The ids of the hits that no longer hold at ``now``."""
    return frozenset(h.memory.id for h in hits if expired(h.memory.valid_until, now))


def in_force(suspended: Mapping[int, Iterable[tuple[int, str]]], now: datetime | None) -> dict[int, tuple[int, str]]:
    """rule rowid -> ``(rowid, valid_until)`` of the newest exception that suspends it and still holds at ``now``,
    from ``suspended`` (rule rowid -> its exceptions' ``(rowid, valid_until)``, ``lifecycle.suspensions``).

    >>> from datetime import datetime, timezone
    >>> in_force({1: [(5, "2037-01-06T00:00:00Z"), (7, "2036-12-01T00:00:00Z")]}, datetime(2036, 12, 20, tzinfo=timezone.utc))
    {1: (5, '2037-01-06T00:00:00Z')}
    """
    out = {}
    for rule, exceptions in suspended.items():
        holding = [(rowid, end) for rowid, end in exceptions if not expired(end, now)]
        if holding:
            out[rule] = max(holding)
    return out


def in_force_pairs(hits: "Iterable[Hit]", suspending: Mapping[str, tuple[str, str]]) -> list[tuple[str, str, str]]:
    """``(exception id, rule id, reason)`` for each rule on the page whose exception in force
    (``suspending``: rule id -> (exception id, valid_until)) is on it too."""
    ids = {h.memory.id for h in hits}
    return [(exception, rule, f"an exception in force until {end[:10]}")
            for rule, (exception, end) in suspending.items() if rule in ids and exception in ids]
