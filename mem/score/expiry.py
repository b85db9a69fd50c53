"""What no longer holds at the time a search asks about: a memory whose ``valid_until`` has passed.

A memory that names its own end ("deploys need two approvals until Jan 6", read at intake by
``mem.enrich.bounds``, or a record's own ``valid_until``) is history once that end is behind the query's
now. A query that names no time asks about now, so in ``mem.stages.search`` such a memory keeps
``KEPT`` of its relevance (the share a memory outside a time the query names keeps), and the page
steps that put the newer of two memories first (an open contradiction, a changed value, the page
model's newer close neighbour) no longer count it as the newer: the rule it was an exception to
holds again. Stdlib only.

>>> from datetime import datetime, timezone
>>> now = datetime(2037, 1, 7, tzinfo=timezone.utc)
>>> expired("2037-01-06T00:00:00.000Z", now), expired("2037-02-01T00:00:00.000Z", now), expired(None, now)
(True, False, False)
"""

from __future__ import annotations

from collections.abc import Iterable
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
