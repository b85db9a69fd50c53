"""Whether a newer memory replaces an older close neighbour: a judgement learned from structure.

Intake's rules (``mem.enrich.corrections``, ``mem.enrich.aligned``) supersede when they can read the
change: an old value named, one value swapped in a restated claim. Most updates people write name neither
("Grafana Loki keeps logs for 14 days." months after "... 30 days"), and on text nobody tuned the rules
on they catch about a third. What they leave is judged here from the shape of the pair, not its wording:

* where the older stands among the newer's older neighbours (the nearest, and by how much: a correction
  is about one earlier fact, a sibling setting has a sibling beside it),
* how much of each text, and of the older's frame (its words that hold no value), the other tells again,
  word by word through their token states (``mem.score.counterparts``'s word vectors), and how many
  values the newer holds that the older does not say,
* whether the newer reads as a change at all (``corrections.read``), names an old value the older states,
  or is a plan; whether it is a note (it tells what was said); the time between them,
* how many of the newer's other older neighbours came after the older and are about as close to the newer
  (``around``): a correction is about the newest fact of its slot.

A logistic model over those features (``mem.score.replaces_model``, fitted by ``bench/slot_judge.py
--write`` on real neighbourhoods of the studied coding sets, labelled by their ``meta.supersedes``;
negatives are the other neighbours: siblings, plans, restatements) gives a probability. At ``SUPERSEDE``
the newer supersedes the older; at ``CONTRADICTS`` it records an open ``contradicts`` edge, so search
ranks the newer first where both answer (``mem.score.contradiction``) and ``mem verify`` lists it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from mem.enrich import corrections, timestamps
from mem.enrich.lexicon import UNREALISED
from mem.runtime import Kept
from mem.score import replaces_model
from mem.score.counterparts import first_words, word_vectors
from mem.text import STOPWORDS

if TYPE_CHECKING:
    import numpy as np

FLOOR = 0.35  # cosine below which a pair is not judged (intake looks its neighbours up this far: ``supersede.floor``)
# The gap is measured to the best other neighbour counting none below this: a pair alone in a small store
# says nothing of its neighbourhood (a sibling "Staging Postgres runs version 16." after "Production
# Postgres runs version 14 ...", alone, would get the gap of a clear winner: cos - FLOOR).
GAP_FROM = 0.5
NEAREST = 8  # older neighbours judged per memory
SUPERSEDE: float | None = None  # probability at which the newer supersedes the older (None: the model's own)
CONTRADICTS = 0.25  # ... at which it records an open contradicts edge instead (bench/README.md: .2-.65 swept; .25 since
# ``later_near`` keeps the later siblings below it)
_VALUE = re.compile(r"\d|[A-Z].*[A-Z]|[._/:-]\w")  # a word holding a value: a number, a cased name, an identifier
_LETTERS = re.compile(r"[a-z]+")
ALIKE = 0.8  # cosine of two words' token states that tells one again (``counterparts.COUNTERPART`` pairs mutual bests at .5)

KEPT = 2048  # texts whose judged words are kept (``words_of``): each is met again by its later neighbours
_kept = Kept(KEPT)

# Every judged pair's (newer id, older id, features, probability) is appended here when it is a list:
# the bench reads what intake judged, so the model is fitted on exactly what it sees.
observed: list[tuple[str, str, dict[str, float], float]] | None = None


class Words(NamedTuple):
    """A text's content words (first occurrences), their unit vectors, and whether each holds a value."""

    words: list[str]
    vectors: "np.ndarray"
    values: "np.ndarray"


class Side(NamedTuple):
    text: str
    kind: str
    created_at: str
    words: Words | None


def known(text: str) -> Words | None:
    """``text``'s judged words when kept (``words_of``): then its token states need not be read."""
    return _kept.get(text)


def words_of(text: str, spans: Sequence[tuple[int, int]], rows: "np.ndarray") -> Words:
    """``text``'s content words with their token-state vectors (``counterparts.word_vectors``), kept by the
    text (a text's stored states are its embedder's, one per process; ``known`` finds them): a memory is the
    older side of each of its later neighbours' judgements."""
    import numpy as np

    words, vectors = word_vectors(text, tuple(spans[:len(rows)]), rows)
    plain = _plain(text) if words else Plain([], [], ())  # no token states: no word has a vector
    return _kept.keep(text, Words(plain.words, vectors[plain.at], np.array(plain.values, dtype=bool)))


class Plain(NamedTuple):
    """What a text's judged words are without their vectors: the words (first occurrences, no stop word, two
    letters or more), their places among ``word_vectors``' words, and whether each holds a value."""

    words: list[str]
    at: list[int]
    values: tuple[bool, ...]


_plains = Kept(KEPT)


def _plain(text: str) -> Plain:
    """``text``'s ``Plain`` words, kept by the text (read of the text alone: what ``judge`` bounds a pair by
    before any token state is read)."""
    found = _plains.get(text)
    if found is None:
        places = first_words(text)
        words = list(places)
        at = [i for i, w in enumerate(words) if w not in STOPWORDS and len(w) > 1]
        values = tuple(bool(_VALUE.search(text[slice(*places[words[i]])])) for i in at)
        found = _plains.keep(text, Plain([words[i] for i in at], at, values))
    return found


def newer_facts(newer: Side, reading: Any) -> dict[str, Any]:
    """What the features read of the newer alone, once for all its pairs: ``reading`` is its
    ``corrections.read`` (None: no change read)."""
    own = {"reading": float(reading is not None), "marked": float(reading is not None and bool(reading.marked)),
           "bare": float(reading is not None and reading.bare),
           "unrealised": float(bool(set(_LETTERS.findall(newer.text.lower())) & UNREALISED)),
           "newer_note": float(newer.kind in ("note", "episode"))}
    return {**own, "at": timestamps.parse_datetime(newer.created_at), "own": own}


def features(newer: Side, older: Side, cos: float, rank: int, best_other: float, reading: Any,
             facts: dict[str, Any] | None = None, near: dict[str, float] | None = None) -> dict[str, float]:
    """The pair's features (names as ``replaces_model.FEATURES``); ``reading``: ``corrections.read`` of the
    newer (None: no change read); ``rank``: the older's place among the newer's judged older neighbours,
    ``best_other``: the best cosine among the others (``FLOOR`` when alone; the gap counts none below ``GAP_FROM``);
    ``facts``: ``newer_facts(newer, reading)`` when the caller judges several pairs of one newer; ``near``: the
    older's ``around`` among the newer's older neighbours (None: the older alone)."""
    found = _placing(older, cos, rank, best_other, reading, facts or newer_facts(newer, reading),
                     near or around([(older.created_at, cos)])[0])
    found.update(_change(reading, older.text))
    return _whole(found, _alignment(newer.words, older.words))


# How much closer to the newer than the older another, later older must be at least to count (``around``):
# a little less close still says the slot has a later fact the newer may be about.
LATER_WITHIN = 0.05


def around(olders: Sequence[tuple[str, float]]) -> list[dict[str, float]]:
    """What the newer's other older neighbours say of each of ``olders`` (``(created_at, cosine to the newer)``,
    all of them): ``later_near``, how many others came after it and are about as close to the newer (within
    ``LATER_WITHIN``). A correction is about the newest fact of its slot; an older version left live, or the
    first of a slot's settings, has a later one beside it that the newer is as much about (on the studied
    sets' judged pairs: .28 such on average for a labelled correction's older, 1.6 for the other neighbours).
    Read of what intake holds already, the neighbours' times and cosines: no query, no text read."""
    return [{"later_near": float(sum(1 for j, (other_at, other_cos) in enumerate(olders)
                                     if j != i and other_at > at and other_cos >= cos - LATER_WITHIN))}
            for i, (at, cos) in enumerate(olders)]


def _placing(older: Side, cos: float, rank: int, best_other: float, reading: Any,
             facts: dict[str, Any], near: dict[str, float]) -> dict[str, float]:
    """The features that cost next to nothing: the pair's place among the newer's neighbours (``near``: its
    ``around``), what the newer alone says (``facts``), the time between them; with no change read, the change
    reader's two (0)."""
    found = {"cos": cos, "rank1": float(rank == 1), "gap": cos - max(best_other, GAP_FROM), **facts["own"], **near}
    if reading is None:
        found.update(_change(reading, older.text))
    days = (facts["at"] - timestamps.parse_datetime(older.created_at)).total_seconds() / 86400
    found["log_days"] = math.log1p(max(days, 0.0))
    return found


def _change(reading: Any, older_text: str) -> dict[str, float]:
    """What the change the newer reads as (``reading``: None, none) says of the older: that it is about what
    the change changes, that it states an old value the change names."""
    if reading is None:
        return {"related": 0.0, "names_old": 0.0}
    return {"related": float(corrections.related(reading, older_text)),
            "names_old": float(corrections.names_old(reading, older_text) is not None)}


# The features' order as they were always made (``slot_judge`` fits its columns in the first pair's order).
_ORDER = ("cos", "rank1", "gap", "reading", "marked", "bare", "unrealised", "newer_note", "related", "names_old",
          "cover_o", "cover_n", "new_value", "frame", "log_days", "later_near")


def _whole(found: dict[str, float], alignment: dict[str, float]) -> dict[str, float]:
    """``found`` and the pair's ``alignment`` as one dict of the features, in ``_ORDER``."""
    found |= alignment
    return {name: found[name] for name in _ORDER if name in found} | found


# What a feature not made yet can be (``reachable``): shares of words in [0, 1], the newer's own values
# counted up to 3, the change reader's two 0 or 1.
RANGES = {"related": (0.0, 1.0), "names_old": (0.0, 1.0), "cover_o": (0.0, 1.0), "cover_n": (0.0, 1.0),
          "new_value": (0.0, 3.0), "frame": (0.0, 1.0)}
# ... and where the older stands among the newer's neighbours (``around``), unknown to ``may_act``
AROUND = {"later_near": (0.0, NEAREST - 1.0)}
# The model ``probability`` and ``reachable`` use when given none (None: ``mem.score.replaces_model``;
# ``bench/slot_judge.py --evaluate`` judges with the models it fits).
MODEL: Any = None
BOUND = True  # whether ``judge`` leaves the pairs whose probability cannot reach the lowest that acts (same decisions)


def reachable(known: dict[str, float], at: float, model: Any = None,
              ranges: dict[str, tuple[float, float]] | None = None) -> bool:
    """Whether ``probability`` (with ``model``) can reach ``at`` whatever the features missing from ``known``
    turn out, each within its ``ranges``, else its ``RANGES``: the largest weighted sum they allow (each term is
    monotone in its feature, so its largest is at an end of its range) against the log-odds of ``at``, with
    room for rounding."""
    if not 0.0 < at < 1.0:
        return True
    z, terms = _terms(model or MODEL or replaces_model)
    for name, mean, scale, weight, top in terms:
        if name in known:
            z += weight * (known[name] - mean) / scale
        elif ranges is not None and name in ranges:
            low, high = ranges[name]
            z += max(weight * (low - mean) / scale, weight * (high - mean) / scale)
        elif top is not None:
            z += top
        else:
            return True
    return z >= math.log(at / (1.0 - at)) - 1e-6


_terms_made: list[Any] = [None, None]  # (what they were made of, ``_terms``) of the model last asked for


def _terms(model: Any) -> tuple[float, list[tuple[str, float, float, float, float | None]]]:
    """The model's bias and each feature's (name, mean, scale, weight, largest term over its ``RANGES`` or None),
    made again only for another model or other ranges (a pair's bound weighs them all)."""
    made_of = (model.FEATURES, model.MEAN, model.SCALE, model.WEIGHTS, model.BIAS, tuple(RANGES.items()))
    if _terms_made[0] != made_of:
        _terms_made[:] = made_of, (model.BIAS, [
            (name, mean, scale, weight, max(weight * (low - mean) / scale, weight * (high - mean) / scale)
             if (low, high) != (None, None) else None)
            for name, mean, scale, weight in zip(model.FEATURES, model.MEAN, model.SCALE, model.WEIGHTS)
            for low, high in [RANGES.get(name, (None, None))]])
    return _terms_made[1]


_UNALIGNED = dict.fromkeys(("cover_o", "cover_n", "new_value", "frame"), 0.0)  # ``_alignment`` of a side with no words


def _told(newer: Plain, older: Plain) -> list[tuple[dict[str, float], dict[str, tuple[float, float]] | None]]:
    """What the texts alone say of the pair's alignment, as ``(known, ranges)`` for ``reachable``, one per way it
    can turn out: the words said alike include the ones both texts hold (each share is at least theirs, and so
    is the older's frame), and the newer's values the older does not hold are exactly those; or, without token
    states, no word has a vector and every alignment feature is 0 (as when a text has no judged word)."""
    if not newer.words or not older.words:
        return [(_UNALIGNED, None)]
    mine, theirs = set(newer.words), set(older.words)
    told = [w in mine for w in older.words]
    plain = [not v for v in older.values]
    new_value = min(float(sum(1 for w, v in zip(newer.words, newer.values) if v and w not in theirs)), 3.0)
    ranges = {"cover_o": (sum(told) / len(told), 1.0),
              "cover_n": (sum(1 for w in newer.words if w in theirs) / len(newer.words), 1.0),
              "frame": (sum(1 for t, p in zip(told, plain) if t and p) / max(1, sum(plain)), 1.0)}
    return [({"new_value": new_value}, ranges), (_UNALIGNED, None)]


def _may_reach(known: dict[str, float], told: list[tuple[dict[str, float], Any]], at: float) -> bool:
    return any(reachable(known | aligned, at, ranges=ranges) for aligned, ranges in told)


def may_act(newer: Side, older: Side, cos: float, reading: Any, at: float) -> bool:
    """Whether the pair's probability can reach ``at`` wherever the older stands among the newer's neighbours
    (its rank and gap unknown: the gap is at most ``cos - GAP_FROM`` and at least ``cos - 1``), by what the texts
    alone say (``_told``): ``supersede._judged_back`` asks it before it looks the newer's neighbours up."""
    placed = _placing(older, cos, 1, 0.0, reading, newer_facts(newer, reading), {}) | _change(reading, older.text)
    del placed["rank1"], placed["gap"]  # bounded by ``placing`` instead
    placing = {"rank1": (0.0, 1.0), "gap": (cos - 1.0, cos - GAP_FROM), **AROUND}
    return any(reachable(placed | aligned, at, ranges={**(ranges or {}), **placing})
               for aligned, ranges in _told(_plain(newer.text), _plain(older.text)))


def judge(newer: Side, olders: Sequence[tuple[Side, float, int, float, dict[str, float]]], reading: Any,
          words: "Callable[[list[int]], tuple[Words | None, list[Words | None]]]",
          at: float | None) -> list[tuple[dict[str, float], float] | None]:
    """``(features, probability)`` of each ``(older, cos, rank, best_other, near)`` pair of ``newer``, as ``features``
    and ``probability`` make them; None for a pair whose probability cannot reach ``at`` (None: every pair
    made). Each pair is bounded (``reachable``) by its cheap features, then by what the texts alone say of its
    alignment (``_told``), then with the change reader's two; the sides' words are asked for only then:
    ``words(indices)`` gives the newer's and those olders' (``Side.words`` is not read), and their
    alignments are made in one pass (``alignments``)."""
    facts = newer_facts(newer, reading)
    bound = BOUND and at is not None
    found: list[dict[str, float] | None] = []
    for older, cos, rank, best_other, near in olders:
        placed = _placing(older, cos, rank, best_other, reading, facts, near)
        if bound:
            if not reachable(placed, at):  # type: ignore[arg-type]
                found.append(None)
                continue
            told = _told(_plain(newer.text), _plain(older.text))
            if not _may_reach(placed, told, at):  # type: ignore[arg-type]
                found.append(None)
                continue
        if reading is not None:
            placed.update(_change(reading, older.text))
            if bound and not _may_reach(placed, told, at):  # type: ignore[arg-type]
                found.append(None)
                continue
        found.append(placed)
    needed = [i for i, placed in enumerate(found) if placed is not None]
    out: list[tuple[dict[str, float], float] | None] = [None] * len(olders)
    if needed:
        newer_words, older_words = words(needed)
        for i, alignment in zip(needed, alignments(newer_words, older_words)):
            whole = _whole(found[i], alignment)  # type: ignore[arg-type]
            out[i] = (whole, probability(whole))
    return out


def _alignment(newer: Words | None, older: Words | None) -> dict[str, float]:
    """How much of each text the other tells again (a word said alike: the same word, or token states
    .8 alike), how much of the older's frame (its words that hold no value), and how many values the
    newer holds that the older does not say."""
    import numpy as np

    if newer is None or older is None or not newer.words or not older.words:
        return dict.fromkeys(("cover_o", "cover_n", "new_value", "frame"), 0.0)
    sims = older.vectors @ newer.vectors.T
    ids: dict[str, int] = {}
    older_ids = np.array([ids.setdefault(w, len(ids)) for w in older.words])
    newer_ids = np.array([ids.setdefault(w, len(ids)) for w in newer.words])
    exact = older_ids[:, None] == newer_ids[None, :]
    matched_o = exact.any(axis=1) | (sims.max(axis=1) >= ALIKE)
    matched_n = exact.any(axis=0) | (sims.max(axis=0) >= ALIKE)
    plain = ~older.values
    return {"cover_o": float(matched_o.mean()), "cover_n": float(matched_n.mean()),
            "new_value": min(float((newer.values & ~exact.any(axis=0)).sum()), 3.0),
            "frame": float((matched_o & plain).sum() / max(1, plain.sum()))}


def alignments(newer: Words | None, olders: Sequence[Words | None]) -> list[dict[str, float]]:
    """``_alignment(newer, older)`` of each of ``olders``, in one pass: one product of the newer's word
    vectors with the olders' stacked, each older's rows then reduced apart (``reduceat``). Its counts are
    integers and its maxima exact, so each feature is the one ``_alignment`` makes (tests/test_replaces.py)."""
    import numpy as np

    out = [dict.fromkeys(("cover_o", "cover_n", "new_value", "frame"), 0.0) for _ in olders]
    full = [older for older in olders if older is not None and older.words]
    if newer is None or not newer.words or not full:
        return out
    sizes = np.array([len(older.words) for older in full])
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    sims = np.concatenate([older.vectors for older in full]) @ newer.vectors.T
    ids: dict[str, int] = {}
    older_ids = np.array([ids.setdefault(w, len(ids)) for older in full for w in older.words])
    newer_ids = np.array([ids.setdefault(w, len(ids)) for w in newer.words])
    exact = older_ids[:, None] == newer_ids[None, :]
    matched_o = exact.any(axis=1) | (sims.max(axis=1) >= ALIKE)
    exact_n = np.logical_or.reduceat(exact, starts, axis=0)
    matched_n = exact_n | (np.maximum.reduceat(sims, starts, axis=0) >= ALIKE)
    plain = ~np.concatenate([older.values for older in full])
    cover_o = np.add.reduceat(matched_o, starts, dtype=np.int64) / sizes
    cover_n = matched_n.sum(axis=1) / len(newer.words)
    new_value = (newer.values & ~exact_n).sum(axis=1)
    frames = np.maximum(1, np.add.reduceat(plain, starts, dtype=np.int64))
    frame = np.add.reduceat(matched_o & plain, starts, dtype=np.int64) / frames
    made = iter(range(len(full)))
    for i, older in enumerate(olders):
        if older is not None and older.words:
            k = next(made)
            out[i] = {"cover_o": float(cover_o[k]), "cover_n": float(cover_n[k]),
                      "new_value": min(float(new_value[k]), 3.0), "frame": float(frame[k])}
    return out


def probability(f: dict[str, float], model: Any = None) -> float:
    """The model's probability that the newer replaces the older (``model``: a module or object with
    ``FEATURES``, ``MEAN``, ``SCALE``, ``WEIGHTS``, ``BIAS``; default ``MODEL``, else ``mem.score.replaces_model``)."""
    model = model or MODEL or replaces_model
    z = model.BIAS + sum(w * (f[name] - m) / s for name, m, s, w in zip(model.FEATURES, model.MEAN, model.SCALE, model.WEIGHTS))
    return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


def supersede_at() -> float:
    """The probability at which the newer supersedes the older: ``SUPERSEDE``, else the model's
    (where its fitted pairs' precision reached .9)."""
    return replaces_model.SUPERSEDE if SUPERSEDE is None else SUPERSEDE
