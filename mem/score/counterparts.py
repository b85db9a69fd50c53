"""Counterparts: whether a word of one text says what a word of another says, by their token states.

``mem.enrich.aligned`` reads a correction from a claim told again with a value swapped; whether the two
texts are about one slot rests on the words they share. Spelling misses the predicate told in other words
("Tempo *keeps* traces for 7 days" / "Tempo *holds* traces for three weeks"): here a word's state (the
mean of its word pieces' compact states, ``mem.score.tokens``) meets the other's, and two words whose
states are ``COUNTERPART`` alike say one thing. Measured on the pair sets (bench/README.md): the states
of a sibling qualifier are as close as a synonym's ("frontend" / "backend" .76), so ``aligned`` asks
this only of words after what the two share, never of a qualifier before it.

>>> import numpy as np
>>> rows = np.eye(3, dtype=np.float32)
>>> alike = Counterparts("keeps logs", "holds logs", lambda: (rows[[0, 2]], rows[[1, 2]]),
...                      lambda text: [(0, 5), (6, 10)])
>>> alike("logs", "logs"), alike("keeps", "holds")
(True, False)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from mem.runtime import Kept

if TYPE_CHECKING:
    import numpy as np

COUNTERPART = 0.5  # cosine of two words' states that makes them one (bench/README.md: .45-.65 swept)
# Texts whose word vectors are kept (``_vectors``): a memory meets each of its close neighbours, and they it,
# so a bulk import's finishing pass asked for 10,184 texts' vectors in 5,092 pairs of 3,000 memories.
KEPT = 4096
Rows = tuple["np.ndarray", "np.ndarray"]  # the older's and the newer's content token rows (unit, projected)
WORD = re.compile(r"[^\W_](?:[\w.-]*[^\W_])?")  # a word as ``aligned`` reads one: "auto-close", "minSdk"


class Counterparts:
    """``alike(older word, newer word)`` for two texts; their token rows are read on the first question."""

    def __init__(self, older: str, newer: str, rows: Callable[[], Rows | None],
                 offsets: Callable[[str], Sequence[tuple[int, int]]]) -> None:
        self.texts = (older, newer)
        self._rows = rows
        self._offsets = offsets
        self._pairs: frozenset[tuple[str, str]] | None = None

    def __call__(self, older_word: str, newer_word: str) -> bool:
        if self._pairs is None:
            self._pairs = self._aligned()
        return (older_word.lower(), newer_word.lower()) in self._pairs

    def _aligned(self) -> frozenset[tuple[str, str]]:
        """The word pairs each other's best match across the two texts, ``COUNTERPART`` alike or more: one
        word stands in for one ("base" and "speed" do not both find "assumes")."""
        loaded = self._rows()
        if not loaded:
            return frozenset()
        (old_words, old), (new_words, new) = (self._vectors(text, rows) for text, rows in zip(self.texts, loaded))
        if not old_words or not new_words:
            return frozenset()
        sims = old @ new.T
        best_new, best_old = sims.argmax(axis=1), sims.argmax(axis=0)
        return frozenset((old_words[i], new_words[j]) for i, j in enumerate(best_new)
                         if best_old[j] == i and sims[i, j] >= COUNTERPART)

    def _vectors(self, text: str, rows: "np.ndarray") -> tuple[list[str], "np.ndarray"]:
        return word_vectors(text, tuple(self._offsets(text)[:len(rows)]), rows)


def word_vectors(text: str, spans: tuple[tuple[int, int], ...], rows: "np.ndarray") -> tuple[list[str], "np.ndarray"]:
    """The words of ``text`` (first occurrences) and the unit means of their word pieces' ``rows`` (at
    ``spans``), in one product; kept by what they are made of (the text, its tokens' places and rows), so a
    text asked again costs a lookup."""
    from hashlib import blake2b

    key = (text, spans, blake2b(rows.tobytes(), digest_size=16).digest())  # the rows' digest: a few KB less a text
    found = _kept.get(key)
    return found if found is not None else _kept.keep(key, _word_vectors(text, spans, rows))


_kept = Kept(KEPT)  # (text, its tokens' places, its rows' digest) -> ``_word_vectors``


def first_words(text: str) -> dict[str, tuple[int, int]]:
    """Each word of ``text`` (``WORD``, lower-cased) and where its first occurrence stands: the words ``word_vectors``
    gives, in order."""
    found: dict[str, tuple[int, int]] = {}
    for match in WORD.finditer(text):
        found.setdefault(match[0].lower(), match.span())
    return found


def _word_vectors(text: str, spans: tuple[tuple[int, int], ...], rows: "np.ndarray") -> tuple[list[str], "np.ndarray"]:
    """``word_vectors``, made (read-only: the kept arrays are shared)."""
    import numpy as np

    found = first_words(text)
    if not found or not spans:
        return [], rows[:0]
    starts, ends = np.array(spans).T
    places = np.array(list(found.values()))
    # the tokens each word covers, all words at once: those starting before its end and ending after its start
    cover = ((starts[None, :] < places[:, 1:]) & (ends[None, :] > places[:, :1])).astype(np.float32)
    means = cover @ rows
    norms = np.linalg.norm(means, axis=1, keepdims=True)
    vectors = means / np.maximum(norms, 1e-12)
    vectors.flags.writeable = False
    return list(found), vectors
