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
  or is a plan; whether it is a note (it tells what was said); the time between them.

A logistic model over those features (``mem.score.replaces_model``, fitted by ``bench/slot_judge.py
--write`` on real neighbourhoods of the studied coding sets, labelled by their ``meta.supersedes``;
negatives are the other neighbours: siblings, plans, restatements) gives a probability. At ``SUPERSEDE``
the newer supersedes the older; at ``CONTRADICTS`` it records an open ``contradicts`` edge, so search
ranks the newer first where both answer (``mem.score.contradiction``) and ``mem verify`` lists it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from mem.enrich import corrections, timestamps
from mem.enrich.lexicon import UNREALISED
from mem.runtime import Kept
from mem.score import replaces_model
from mem.score.counterparts import WORD, word_vectors
from mem.text import STOPWORDS

if TYPE_CHECKING:
    import numpy as np

FLOOR = 0.5  # cosine below which a pair is not judged (intake looks its neighbours up this far: ``supersede.floor``)
NEAREST = 8  # older neighbours judged per memory
SUPERSEDE: float | None = None  # probability at which the newer supersedes the older (None: the model's own)
CONTRADICTS = 0.3  # ... at which it records an open contradicts edge instead (bench/README.md: .2-.65 swept)
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
    raw: dict[str, str] = {}
    for match in WORD.finditer(text):
        raw.setdefault(match[0].lower(), match[0])
    keep = [i for i, w in enumerate(words) if w not in STOPWORDS and len(w) > 1]
    values = np.array([bool(_VALUE.search(raw.get(words[i], words[i]))) for i in keep], dtype=bool)
    return _kept.keep(text, Words([words[i] for i in keep], vectors[keep], values))


def newer_facts(newer: Side, reading: Any) -> dict[str, Any]:
    """What the features read of the newer alone, once for all its pairs: ``reading`` is its
    ``corrections.read`` (None: no change read)."""
    return {"reading": float(reading is not None), "marked": float(reading is not None and bool(reading.marked)),
            "bare": float(reading is not None and reading.bare),
            "unrealised": float(bool(set(_LETTERS.findall(newer.text.lower())) & UNREALISED)),
            "newer_note": float(newer.kind in ("note", "episode")),
            "at": timestamps.parse_datetime(newer.created_at)}


def features(newer: Side, older: Side, cos: float, rank: int, best_other: float, reading: Any,
             facts: dict[str, Any] | None = None) -> dict[str, float]:
    """The pair's features (names as ``replaces_model.FEATURES``); ``reading``: ``corrections.read`` of the
    newer (None: no change read); ``rank``: the older's place among the newer's judged older neighbours,
    ``best_other``: the best cosine among the others (``FLOOR`` when alone: none below it is seen);
    ``facts``: ``newer_facts(newer, reading)`` when the caller judges several pairs of one newer."""
    facts = facts or newer_facts(newer, reading)
    f = {"cos": cos, "rank1": float(rank == 1), "gap": cos - best_other,
         **{name: value for name, value in facts.items() if name != "at"},
         "related": float(reading is not None and corrections.related(reading, older.text)),
         "names_old": float(reading is not None and corrections.names_old(reading, older.text) is not None)}
    f.update(_alignment(newer.words, older.words))
    days = (facts["at"] - timestamps.parse_datetime(older.created_at)).total_seconds() / 86400
    f["log_days"] = math.log1p(max(days, 0.0))
    return f


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


def probability(f: dict[str, float], model: Any = None) -> float:
    """The model's probability that the newer replaces the older (``model``: a module or object with
    ``FEATURES``, ``MEAN``, ``SCALE``, ``WEIGHTS``, ``BIAS``; default ``mem.score.replaces_model``)."""
    model = model or replaces_model
    z = model.BIAS + sum(w * (f[name] - m) / s for name, m, s, w in zip(model.FEATURES, model.MEAN, model.SCALE, model.WEIGHTS))
    return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


def supersede_at() -> float:
    """The probability at which the newer supersedes the older: ``SUPERSEDE``, else the model's
    (where its fitted pairs' precision reached .9)."""
    return replaces_model.SUPERSEDE if SUPERSEDE is None else SUPERSEDE
