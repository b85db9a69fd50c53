"""Rank fusion and bounded priors: pure functions, no I/O.

Fusion is weighted Reciprocal Rank Fusion (Cormack et al. 2009). Priors nudge the fused score by
at most ``PRIOR_SPAN``, so they reorder near-ties but never override relevance.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

RRF_K = 60
PRIOR_SPAN = 0.20  # a memory's priors take at most 20 % off its relevance


def rrf(rankings: Mapping[str, Sequence[int]], weights: Mapping[str, float], k: int = RRF_K) -> dict[int, float]:
    """Weighted RRF over ranked lists of ids, normalized so a first place in every channel scores 1.

    >>> rrf({"a": [7, 8], "b": [8]}, {"a": 1.0, "b": 1.0})[8] > rrf({"a": [7, 8], "b": [8]}, {"a": 1.0, "b": 1.0})[7]
    True
    """
    total_weight = sum(weights.get(name, 1.0) for name in rankings if rankings[name]) or 1.0
    best = total_weight / (k + 1)
    scores: dict[int, float] = {}
    for name, ranked in rankings.items():
        weight = weights.get(name, 1.0)
        for position, item in enumerate(ranked):
            scores[item] = scores.get(item, 0.0) + weight / (k + position + 1)
    return {item: value / best for item, value in scores.items()}


def actr_activation(access_count: int, age_days: float, decay: float = 0.5) -> float:
    """ACT-R base-level activation, Petrov's closed-form approximation for n uses over a lifetime L.

    B = ln(n / (1 - d)) - d * ln(L), with n = uses + 1 (the creation counts) and L in days (>= 1 hour).
    """
    n = max(0, access_count) + 1
    lifetime = max(age_days, 1.0 / 24.0)
    return math.log(n / (1.0 - decay)) - decay * math.log(lifetime)


def squash(x: float) -> float:
    """Logistic map of an unbounded activation into (0, 1)."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def base_level(access_count: int, age_days: float, decay: float, floor: float) -> float:
    """ACT-R base-level activation with the layer's floor: ``max(floor, actr_activation(...))``.

    The floors (5 / 2 / -0.5 / -2 for layers 1-4, ``mem.lifecycle.policy``) keep a constitutional
    memory highly active however old it is, and stop an old factual one from sinking without bound.

    >>> base_level(0, 10_000, 0.1, 5.0), round(base_level(0, 1, 0.5, -0.5), 3)
    (5.0, 0.693)
    """
    return max(floor, actr_activation(access_count, age_days, decay))


SPREAD_MAX = 1.6  # S_max: the associative strength of a context element that only one memory carries
SPREAD_DELTA = 0.3  # fan penalty per unit of ln(fan)


def spread_term(fan: int, strength: float = SPREAD_MAX, delta: float = SPREAD_DELTA) -> float:
    """One context element's associative strength ``max(0, S_max - delta * ln(fan))``: an entity or
    tag that many memories carry says less about any one of them, and never counts against it.

    >>> spread_term(1), round(spread_term(20), 3), spread_term(10**6)
    (1.6, 0.701, 0.0)
    """
    return max(0.0, strength - delta * math.log(max(1, fan)))


def spreading(matched_fans: Sequence[int], context_size: int, strength: float = SPREAD_MAX,
              delta: float = SPREAD_DELTA) -> float:
    """ACT-R spreading activation from the query's context (its entities and tags), in [0, 1]:
    ``sum_j W_j * S_j / S_max`` over the context elements the memory carries, ``W_j = 1 / context_size``.

    >>> spreading([], 3), spreading([1, 1], 2), round(spreading([1], 2), 3)
    (0.0, 1.0, 0.5)
    """
    return spread_of(sum(spread_term(f, strength, delta) for f in matched_fans), context_size, strength)


def spread_of(total_strength: float, context_size: int, strength: float = SPREAD_MAX) -> float:
    """``spreading`` from the summed ``S_j`` of the context elements a memory carries (search sums them
    per batch of candidates)."""
    if context_size <= 0 or total_strength <= 0:
        return 0.0
    return min(1.0, total_strength / context_size / strength)


LAYER_PRIOR = {1: 1.0, 2: 0.8, 3: 0.5, 4: 0.3}
STATUS_PRIOR = {"active": 1.0, "cold": 0.4, "archived": 0.0}
PRIOR_WEIGHTS = {"activation": 0.35, "confidence": 0.25, "layer": 0.15, "pinned": 0.15, "status": 0.10,
                 "spread": 0.15, "surprise": 0.10}


def prior(components: Mapping[str, float]) -> float:
    """Weighted mean of the prior components present, each clamped to [0, 1]; the result is in [0, 1].

    A component left out (an ablation, or a term that does not apply) drops out of the mean.

    >>> prior({"confidence": 1.0, "pinned": 0.0}) < prior({"confidence": 1.0})
    True
    """
    present = [name for name in PRIOR_WEIGHTS if name in components]
    total = sum(PRIOR_WEIGHTS[name] for name in present)
    if total <= 0:
        return 1.0
    return sum(PRIOR_WEIGHTS[name] * min(1.0, max(0.0, components[name])) for name in present) / total


SEED_WEIGHTS = {"hybrid": 0.60, "activation": 0.25, "confidence": 0.15}


def seed_score(hybrid: float, activation: float, confidence: float) -> float:
    """The seed's final score: ``0.60 hybrid + 0.25 activation / 10 + 0.15 confidence`` (``hybrid`` is
    the RRF score, ``activation`` the raw ACT-R activation). A bench configuration, not the default.

    >>> seed_score(1.0, 5.0, 1.0)
    0.875
    """
    return (SEED_WEIGHTS["hybrid"] * hybrid + SEED_WEIGHTS["activation"] * activation / 10.0
            + SEED_WEIGHTS["confidence"] * confidence)


def apply_prior(relevance: float, prior_value: float) -> float:
    """Scale ``relevance`` by a factor in [1 - span, 1]: a perfect prior keeps it, so scores stay in [0, 1]."""
    return relevance * (1.0 - PRIOR_SPAN * (1.0 - min(1.0, max(0.0, prior_value))))


def blend(scores: Mapping[str, Mapping[int, float]], weights: Mapping[str, float],
          floors: Mapping[str, float] | None = None) -> dict[int, float]:
    """Convex combination of per-channel min-max normalized scores (Bruch et al. 2023), in [0, 1].

    Unlike RRF it keeps how far apart two candidates are: a BM25 hit that matches every query
    term stays well ahead of one matching a single common word. A channel that returned one
    candidate (or ties) gives each of them full credit. ``floors`` give a channel's every member
    at least that much credit: for channels where being returned at all is the evidence (inside
    the asked-for time window, naming the asked-for entity), the last member is not worth zero.

    >>> blend({"a": {1: 2.0, 2: 1.0}, "b": {2: 0.9}}, {"a": 1.0, "b": 1.0})
    {1: 0.5, 2: 0.5}
    """
    floors = floors or {}
    active = {name: s for name, s in scores.items() if s}
    total = sum(weights.get(name, 1.0) for name in active) or 1.0
    out: dict[int, float] = {}
    for name, channel in active.items():
        weight = weights.get(name, 1.0) / total
        floor = floors.get(name, 0.0)
        low, high = min(channel.values()), max(channel.values())
        span = high - low
        for item, value in channel.items():
            normalized = floor + (1.0 - floor) * ((value - low) / span if span > 0 else 1.0)
            out[item] = out.get(item, 0.0) + weight * normalized
    return out


def peak_factor(scores: Mapping[int, float], ref: float, low: float, high: float, nth: int = 5) -> float:
    """How much to trust a channel on this query, from how far its best score stands above its
    ``nth`` best (a query-performance predictor): ``(best - nth best) / ref``, clamped to
    ``[low, high]``; 1.0 when the channel returned fewer than ``nth`` candidates.

    A dense retriever whose top hit stands out has found the topic; a flat top means every
    candidate is a near miss and the lexical channel should decide.

    >>> peak_factor({1: 0.65, 2: 0.45, 3: 0.44, 4: 0.43, 5: 0.40}, ref=0.1, low=0.5, high=2.0)
    2.0
    >>> peak_factor({1: 0.41, 2: 0.40, 3: 0.40, 4: 0.39, 5: 0.38}, ref=0.1, low=0.5, high=2.0)
    0.5
    """
    if len(scores) < nth:
        return 1.0
    import heapq

    best = heapq.nlargest(nth, scores.values())
    return min(high, max(low, (best[0] - best[-1]) / ref))
