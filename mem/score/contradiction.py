"""Current truth in a ranking: a correction answers what the memory it superseded answered, and the
newer memory of an open ``contradicts`` pair comes first.

Superseded memories are hidden from default search, but they still say what a query was about:
"who owns billing?" matches "Priya owns the billing service" better than "Billing ownership moved from
Priya to Marcus". :func:`inherit` gives the memory that superseded a candidate (followed to the live
end of the chain) at least the candidate's fused relevance, so the correction ranks where its
predecessor would have, even when no channel found the correction itself.

Intake records a ``contradicts`` edge (newer -> older) when a correction looks like it replaces an
older memory but not clearly enough to supersede it. Until someone resolves it, a query that finds
both should answer with the newer: this moves the newer hit to just above the older one (scores stay
in rank order; the hits between shift down by one) and says so in ``why["contradicts"]``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from mem.records import Hit


def inherit(fused: dict[int, float], successor: dict[int, int]) -> dict[int, float]:
    """``fused`` (rowid -> relevance) where each superseded rowid's successor has at least its relevance.

    >>> inherit({1: 0.9, 2: 0.4}, {1: 2}), inherit({1: 0.3, 2: 0.4}, {1: 2}), inherit({1: 0.5}, {1: 7})
    ({1: 0.9, 2: 0.9}, {1: 0.3, 2: 0.4}, {1: 0.5, 7: 0.5})
    """
    if not successor:
        return fused
    out = dict(fused)
    for old, new in successor.items():
        if old in fused and fused[old] > out.get(new, float("-inf")):
            out[new] = fused[old]
    return out


def newer_first(hits: Sequence[Hit], pairs: Iterable[tuple[str, str]]) -> list[Hit]:
    """``hits`` reordered so that each ``(newer id, older id)`` pair present in both ranks newer first.

    >>> from mem.records import Memory
    >>> def hit(i, rank): return Hit(memory=Memory(id=i, text=i), rank=rank, score=1.0 / rank, why={})
    >>> out = newer_first([hit("old", 1), hit("x", 2), hit("new", 3)], [("new", "old")])
    >>> [(h.memory.id, h.rank, round(h.score, 2)) for h in out]
    [('new', 1, 1.0), ('old', 2, 0.5), ('x', 3, 0.33)]
    >>> out[0].why["contradicts"]
    {'over': 'old', 'reason': 'newer memory contradicts an older one; the older ranks below it'}
    """
    order = [h.memory.id for h in hits]
    by_id = {h.memory.id: h for h in hits}
    notes: dict[str, dict[str, str]] = {}
    for newer, older in pairs:
        if newer not in by_id or older not in by_id or newer == older:
            continue
        if order.index(newer) > order.index(older):
            order.remove(newer)
            order.insert(order.index(older), newer)
        notes[newer] = {"over": older, "reason": "newer memory contradicts an older one; the older ranks below it"}
    if not notes:
        return list(hits)
    scores = [h.score for h in hits]
    return [dataclasses.replace(by_id[i], rank=rank, score=scores[rank - 1],
                                why={**by_id[i].why, **({"contradicts": notes[i]} if i in notes else {})})
            for rank, i in enumerate(order, start=1)]
