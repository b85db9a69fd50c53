"""The order of a page's best few hits: how close each is to the question, how new it is, and where
the fusion put it.

The fusion weighs many channels and priors; among the best few candidates that all match the
question, two things decide which one a coding assistant's user meant and none of the channels
sees alone: the memory's own closeness to the question's meaning (the dense cosine, which the
blend dilutes with BM25 and graph scores), and its age relative to the others on the page (of
two memories about one thing, the newer one is usually the current truth, whether or not intake
read it as a correction, the more so the more days lie between them). :func:`reorder` scores each
of the first ``WINDOW`` hits with a linear model of six page features (:func:`features`) and sorts
them by it; the hits below keep their
places, and the scores stay in rank order.

The weights are fitted by ``bench/page_order.py`` (a pairwise logistic regression, gold hit over
each other hit of the window, on the studied coding sets' real pages with this step off) and
checked leave-one-set-out; its figures are in ``bench/README.md``. Conversation turns (episodes)
say what was said, not what holds now: they keep their places, and the other hits of the window are
ordered among the places left. Pure functions.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from mem.enrich.timestamps import parse_datetime
from mem.records import Hit

if TYPE_CHECKING:
    import numpy as np

# Hits reordered: the first five (in a scratch fit, leave one set out: ten +55 rank-1, five +51, three +46;
# five keeps what a page shows below its top untouched).
WINDOW = 5
# Weights of the features, in the order :func:`features` gives them: the hit's place in the fused
# order (log of 1 + its 0-based rank), its cosine to the question, its age's place among the
# window's (0 the oldest, 1 the newest), the log of 1 + its length in words, and two spans of days
# within the window, each as the log of 1 + days: since its oldest hit was written and until its newest
# was. Fitted on the 22 studied coding sets (``python bench/page_order.py --fit``). The spans
# (nineteenth session): of two memories on one page, one written months before the other is more often
# the outdated one than one written the day before, which the age's place alone cannot tell; leave one
# set out, rank-1 2,524 -> 2,548 of 2,970, above 119 -> 104. A third span, until the question is asked,
# gained 5 more and 3 fewer above, but made the order depend on when one asks: left out.
WEIGHTS = (-1.78, 9.09, -0.80, 0.83, 0.20, -0.58)
# The ``why`` notes of the search steps before this one that put a newer hit over an older (``over``) which
# the model never undoes: an open contradiction intake recorded (``mem verify`` lists it; without this, the
# spans in days let a closer older pass a correction written the day after it). The search-time rule for
# two values of one slot ("current") it may overrule. 22 studied coding sets (nineteenth session, with
# ``mem.stages.supersede.ONE_TARGET``): neither 2,556 / 104 above, contradictions 2,551 / 99, both 2,548 / 99.
DECIDED = ("contradicts",)
# The embedder whose cosines the weights read (another model's lie on another scale); search leaves
# the page alone with any other.
FITTED_FOR = "minilm"


def features(hits: Sequence[Hit], cosines: Sequence[float],
             places: Sequence[int] | None = None) -> list[tuple[float, ...]]:
    """Each hit's features (``WEIGHTS``' order); ``cosines[i]`` is hit i's cosine to the question,
    ``places[i]`` its 0-based place on the page (default: its index).

    >>> from mem.records import Memory
    >>> hits = [Hit(memory=Memory(id=i, text="a b c", created_at=t), rank=1, score=1.0, why={})
    ...         for i, t in (("x", "2026-02-01"), ("y", "2026-01-01"))]
    >>> [tuple(round(v, 3) for v in f) for f in features(hits, [0.5, 0.6])]
    [(0.0, 0.5, 1.0, 1.386, 3.466, 0.0), (0.693, 0.6, 0.0, 1.386, 0.0, 3.466)]
    """
    places = range(len(hits)) if places is None else places
    created = sorted(h.memory.created_at for h in hits)
    last = max(1, len(hits) - 1)
    days = [parse_datetime(h.memory.created_at).timestamp() / 86400.0 for h in hits]
    oldest, newest = min(days, default=0.0), max(days, default=0.0)
    return [(math.log1p(place), float(cosine), created.index(h.memory.created_at) / last,
             math.log1p(len(h.memory.text.split())),
             math.log1p(day - oldest), math.log1p(newest - day))
            for place, h, cosine, day in zip(places, hits, cosines, days)]


def movable(hits: Sequence[Hit], vectors: Mapping[str, object]) -> list[int]:
    """The places among the first ``WINDOW`` hits that the model orders: not an episode, a stored vector."""
    return [i for i, h in enumerate(hits[:WINDOW]) if h.memory.kind != "episode" and h.memory.id in vectors]


def ordered(scores: Sequence[float], may_pass: Sequence[Sequence[bool]]) -> list[int]:
    """Indices of ``scores`` best first: a stable sort in which hit i passes hit j above it only when
    ``may_pass[i][j]`` (:func:`passing`).

    >>> ordered([0.1, 0.9, 0.5], [[True] * 3] * 3), ordered([0.1, 0.9], [[True, True], [False, True]])
    ([1, 2, 0], [0, 1])
    """
    order = list(range(len(scores)))
    swapped = True
    while swapped:  # each swap undoes one inversion of the scores: it ends
        swapped = False
        for k in range(len(order) - 1):
            upper, lower = order[k], order[k + 1]
            if scores[lower] > scores[upper] and may_pass[lower][upper]:
                order[k], order[k + 1], swapped = lower, upper, True
    return order


def passing(hits: Sequence[Hit], vectors: Mapping[str, "np.ndarray"], asked: str,
            gone: frozenset[str] = frozenset()) -> list[list[bool]]:
    """``may_pass[i][j]``: whether hit i may go above hit j. Not when j states a number the question
    ``asked`` names and i does not ("port 8017": the row of a table it asks about, whatever is newer),
    nor when i holds for another deployment environment than the question is about and j does not
    (``mem.score.environment.elsewhere``: "The staging Vespa cluster has 2 nodes" for "prod vespa node count"),
    nor when i is older than j and the two are close neighbours (cosine ``contradiction.NEAR``): of two
    memories about one thing, the model never puts the older first (the newer may be a correction
    intake did not read: "traffic enters through Envoy Gateway" after "the API gateway is Kong"), nor
    when an earlier step put j over i for a reason it may not overrule (``DECIDED``: an open contradiction).
    A hit that no longer holds (its id in ``gone``: ``mem.score.validity``) counts as the older of two close
    neighbours, whenever it was written: after "deploys need two approvals until Jan 6", asked later, the
    rule it was an exception to is what holds."""
    from mem.score.contradiction import NEAR, numbers_asked, numbers_held
    from mem.score.environment import elsewhere

    numbers = numbers_asked(asked)
    held = [numbers_held(h.memory.text, numbers) for h in hits]
    away = [elsewhere(asked, h.memory.text) for h in hits]
    decided = {(h.memory.id, over) for h in hits for key in DECIDED if (note := h.why.get(key))
               for over in (note["over"], *note.get("others", ()))}

    def older(a: Hit, b: Hit) -> bool:
        if (a.memory.id in gone) != (b.memory.id in gone):
            return a.memory.id in gone
        return a.memory.created_at < b.memory.created_at

    return [[held[j] <= held[i] and (away[j] or not away[i])
             and (b.memory.id, a.memory.id) not in decided
             and not (older(a, b) and float(vectors[a.memory.id] @ vectors[b.memory.id]) >= NEAR)
             for j, b in enumerate(hits)] for i, a in enumerate(hits)]


class Window(NamedTuple):
    """What the model reads of a page: the places it orders (``movable``), their hits' cosines to the
    question, features and which may pass which."""

    places: list[int]
    cosines: list[float]
    features: list[tuple[float, ...]]
    may_pass: list[list[bool]]


def window(hits: Sequence[Hit], query_vector: "np.ndarray", vectors: Mapping[str, "np.ndarray"],
           asked: str, gone: frozenset[str] = frozenset()) -> Window | None:
    """The page's :class:`Window`, or None when it holds fewer than two hits to order (search and
    ``bench/page_order.py`` read it alike)."""
    places = movable(hits, vectors)
    if len(places) < 2:
        return None
    moved = [hits[i] for i in places]
    cosines = [float(vectors[h.memory.id] @ query_vector) for h in moved]
    return Window(places, cosines, features(moved, cosines, places), passing(moved, vectors, asked, gone))


def reorder(hits: Sequence[Hit], query_vector: "np.ndarray", vectors: Mapping[str, "np.ndarray"],
            asked: str = "", gone: frozenset[str] = frozenset()) -> list[Hit]:
    """``hits`` with those of the first ``WINDOW`` that are no episode sorted by the page model among
    their own places (ties keep the fused order; episodes and the hits below stay where they are); a
    hit that moves up says over which hits in ``why["order"]``. A hit passes another only as
    :func:`passing` allows (the question ``asked`` names a number only the other states; an older
    close neighbour; ``gone``: the ids of hits that no longer hold, :func:`passing`)."""
    seen = window(hits, query_vector, vectors, asked, gone)
    if seen is None:
        return list(hits)
    scores = [sum(w * f for w, f in zip(WEIGHTS, row)) for row in seen.features]
    order = ordered(scores, seen.may_pass)
    if order == list(range(len(order))):
        return list(hits)
    out = list(hits)
    for slot, i in enumerate(order):
        place, hit = seen.places[slot], hits[seen.places[i]]
        passed = [hits[seen.places[j]].memory.id for j in order[slot + 1:] if j < i]
        why = {**hit.why}
        if passed:
            why["order"] = {"over": passed, "reason": "closer to the question or newer than the hits it passed "
                            f"(cosine {seen.cosines[i]:.2f}, created {hit.memory.created_at})"}
        out[place] = dataclasses.replace(hit, rank=place + 1, score=hits[place].score, why=why)
    return out
