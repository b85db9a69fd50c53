"""A question that asks why something happened or how it was fixed is answered by the memory that
explains or fixes the problem the query matched, not by the problem report itself.

Intake links an explanation ("X broke because Y", "the root cause of X was Y") or a fix ("fixed X
by Y") to the earlier report of X (``caused`` / ``resolved``, ``mem.stages.link``). For such a
question, :func:`answers_first` lifts each linked explanation or fix of a best candidate just above
it: the report says what the question is about, the linked memory answers it. Pure functions.

>>> asked_links("why were drivers logged out?"), asked_links("how was the OOM fixed?")
(('caused',), ('resolved',))
>>> asked_links("which broker do we use?")
()
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable, Mapping, Sequence

CAUSAL_TOP = 5  # best fused candidates whose explanations and fixes are lifted
LIFT = 1.02  # a linked answer gets at least this times its problem's relevance: just above it

# A question for a cause reads the explanations (``caused``), one for a remedy the fixes (``resolved``).
_WHY = re.compile(r"\b(why|what (?:caused|broke)|cause[sd]?|root cause|reason)\b", re.IGNORECASE)
_FIX = re.compile(r"\b(fix(?:ed|es)?|resolved?|solved?|what did we (?:do|change)|how did we (?:stop|handle|solve)|"
                  r"what was done)\b", re.IGNORECASE)


def asked_links(query: str) -> tuple[str, ...]:
    """The causal link types whose source answers ``query``: empty when it asks for neither."""
    return (*(("caused",) if _WHY.search(query or "") else ()), *(("resolved",) if _FIX.search(query or "") else ()))


# A note that labels its own explanation or remedy ("Bug: ... Cause: ... Fix: ...").
_LABELLED = {"caused": re.compile(r"\b(?:root )?cause:", re.IGNORECASE), "resolved": re.compile(r"\bfix:", re.IGNORECASE)}


def self_answers(order: Sequence[int], links_in: Mapping[int, Iterable[str]], texts: Mapping[int, str],
                 asked: Iterable[str], on_topic: Container[int] | None = None) -> list[tuple[int, int]]:
    """``(answer, candidate)`` pairs for :func:`answers_first`: a best candidate that explains or fixes
    in its own text what the question asks for ("X broke because Y", "Cause: ..."; ``links_in``: the
    link types its causal reading gives) answers it before each candidate ranked above it that does
    not: a report with its own cause needs no linked explanation.

    ``on_topic``: the candidates the question's meaning ranks among its best (the dense channel's first
    ``CAUSAL_TOP``). An explanation answers only about its own subject: one the fusion lifted on a shared
    word or two ("We chose EMQX over Mosquitto because ..." for "why did we choose haversine over map
    matching?", 7th by meaning) is not lifted above the memory about haversine that gives its reason
    with no cue word.

    >>> self_answers([1, 2, 3], {3: ["caused"]}, {1: "a", 2: "b", 3: "c"}, ["caused"])
    [(3, 1), (3, 2)]
    >>> self_answers([1, 2, 3], {3: ["caused"]}, {1: "a", 2: "b", 3: "c"}, ["caused"], on_topic={1, 2})
    []
    >>> self_answers([1, 2], {}, {1: "x", 2: "Bug: y. Cause: z."}, ["resolved"])
    []
    """
    wanted = set(asked)

    def answers(rowid: int) -> bool:
        return (on_topic is None or rowid in on_topic) and (bool(wanted & set(links_in.get(rowid, ()))) or any(
            _LABELLED[w].search(texts.get(rowid, "")) for w in wanted if w in _LABELLED))

    out: list[tuple[int, int]] = []
    for i, rowid in enumerate(order):
        if answers(rowid):
            out += [(rowid, above) for above in order[:i] if not answers(above)]
    return out


def answers_first(fused: dict[int, float], links: Iterable[tuple[int, int]]) -> dict[int, float]:
    """``fused`` where each ``(answer, problem)`` link's answer has at least ``LIFT`` x the problem's
    relevance.

    >>> answers_first({1: 0.9, 2: 0.5}, [(2, 1)])
    {1: 0.9, 2: 0.918}
    >>> answers_first({1: 0.4, 2: 0.5}, [(2, 1)]), answers_first({1: 0.5}, [(3, 1)])
    ({1: 0.4, 2: 0.5}, {1: 0.5, 3: 0.51})
    """
    out = dict(fused)
    for answer, problem in links:
        if problem in fused:
            out[answer] = max(out.get(answer, 0.0), round(fused[problem] * LIFT, 6))
    return out
