"""Importance (FadeMem) and ACT-R activation with the fan effect: pure functions, no I/O.

FadeMem-style importance is a weighted sum of four signals in [0, 1]:
``0.30 relevance + 0.25 frequency + 0.25 recency + 0.20 surprise`` where frequency is
log-normalized (``log1p(uses) / log1p(FREQ_SATURATION)``, so 50 uses saturate) and recency is
layer-aware (``exp(-decay_per_day * days_unused)``: a constitutional memory never gets stale).

ACT-R activation is base-level learning (``mem.score.fusion.actr_activation``, with the layer's
decay exponent) plus spreading activation from the memory's entities with the fan effect:
each entity j contributes ``W_j * (S - ln fan_j)`` with ``W_j = 1/len(entities)``, where fan_j is
how many memories mention j. A memory about a rare entity is easier to reach than one about an
entity that appears everywhere. The result is floored at the layer's activation floor.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from mem.score.fusion import actr_activation

WEIGHTS = {"relevance": 0.30, "frequency": 0.25, "recency": 0.25, "surprise": 0.20}
FREQ_SATURATION = 50
MAX_ASSOCIATIVE_STRENGTH = 2.0  # ACT-R's S


def _unit(x: float) -> float:
    return min(1.0, max(0.0, float(x)))


def frequency(uses: int) -> float:
    """Log-normalized use count in [0, 1].

    >>> frequency(0), round(frequency(50), 3), frequency(10_000)
    (0.0, 1.0, 1.0)
    """
    return _unit(math.log1p(max(0, uses)) / math.log1p(FREQ_SATURATION))


def recency(days_unused: float, decay_per_day: float) -> float:
    """Layer-aware recency: ``exp(-decay * days)``; decay 0 (constitutional) keeps it at 1.

    >>> recency(10, 0.0), round(recency(10, 0.15), 3)
    (1.0, 0.223)
    """
    return _unit(math.exp(-max(0.0, decay_per_day) * max(0.0, days_unused)))


@dataclass(frozen=True)
class Importance:
    value: float
    relevance: float
    frequency: float
    recency: float
    surprise: float

    def to_record(self) -> dict[str, float]:
        return {"value": round(self.value, 4), "relevance": round(self.relevance, 4),
                "frequency": round(self.frequency, 4), "recency": round(self.recency, 4),
                "surprise": round(self.surprise, 4), "weights": dict(WEIGHTS)}


def importance(relevance: float, uses: int, days_unused: float, decay_per_day: float, surprise: float) -> Importance:
    """FadeMem importance in [0, 1] and its parts.

    >>> importance(0.5, 0, 0, 0.15, 0.5).value
    0.5
    >>> importance(0.5, 20, 1, 0.15, 0.5).value > importance(0.5, 0, 40, 0.15, 0.5).value
    True
    """
    parts = {"relevance": _unit(relevance), "frequency": frequency(uses),
             "recency": recency(days_unused, decay_per_day), "surprise": _unit(surprise)}
    value = sum(WEIGHTS[k] * v for k, v in parts.items())
    return Importance(value=round(_unit(value), 6), **parts)


@dataclass(frozen=True)
class Activation:
    value: float
    base: float
    fan: float
    floor: float
    entities: int

    def to_record(self) -> dict[str, float | int]:
        return {"value": round(self.value, 4), "base": round(self.base, 4), "fan": round(self.fan, 4),
                "floor": self.floor, "entities": self.entities}


def fan_term(fans: Sequence[int], strength: float = MAX_ASSOCIATIVE_STRENGTH) -> float:
    """Spreading activation from a memory's entities, each weighted 1/n, with strength ``S - ln(fan)``.

    >>> fan_term([]), fan_term([1]), round(fan_term([1, 100]), 3)
    (0.0, 2.0, -0.303)
    """
    if not fans:
        return 0.0
    weight = 1.0 / len(fans)
    return sum(weight * (strength - math.log(max(1, f))) for f in fans)


def activation(uses: int, age_days: float, actr_decay: float, fans: Sequence[int], floor: float) -> Activation:
    """ACT-R activation: base level + fan-effect spreading, floored at the layer's floor.

    >>> activation(0, 400, 0.5, [], -0.5).value
    -0.5
    >>> activation(0, 400, 0.1, [], 5.0).value
    5.0
    """
    base = actr_activation(uses, age_days, decay=actr_decay)
    fan = fan_term(fans)
    return Activation(value=max(floor, base + fan), base=base, fan=fan, floor=floor, entities=len(fans))
