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
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

COUNTERPART = 0.5  # cosine of two words' states that makes them one (bench/README.md: .45-.65 swept)
Rows = tuple["np.ndarray", "np.ndarray"]  # the older's and the newer's content token rows (unit, projected)


class Counterparts:
    """``alike(older word, newer word)`` for two texts; their token rows are read on the first question."""

    def __init__(self, older: str, newer: str, rows: Callable[[], Rows | None],
                 offsets: Callable[[str], list[tuple[int, int]]]) -> None:
        self.texts = (older, newer)
        self._rows = rows
        self._offsets = offsets
        self._loaded: Rows | None = None
        self._vectors: dict[tuple[int, str], "np.ndarray | None"] = {}
        self._spans: dict[int, list[tuple[int, int]]] = {}

    def __call__(self, older_word: str, newer_word: str) -> bool:
        a, b = self._vector(0, older_word), self._vector(1, newer_word)
        return a is not None and b is not None and float(a @ b) >= COUNTERPART

    def _vector(self, side: int, word: str) -> "np.ndarray | None":
        """The unit mean of the rows of ``word``'s first occurrence in the text, or None (not found, no rows)."""
        key = (side, word.lower())
        if key not in self._vectors:
            self._vectors[key] = None
            if self._loaded is None:
                self._loaded = self._rows() or ()
            text = self.texts[side]
            found = re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.IGNORECASE)
            if found and self._loaded:
                rows = self._loaded[side]
                spans = self._spans.setdefault(side, self._offsets(text)[:len(rows)])
                at = [i for i, (start, end) in enumerate(spans)
                      if start < found.end() and end > found.start()]
                if at:
                    import numpy as np

                    mean = rows[at].mean(axis=0)
                    norm = float(np.linalg.norm(mean))
                    self._vectors[key] = mean / norm if norm else None
        return self._vectors[key]
