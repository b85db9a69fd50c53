"""Feature-hashing embedder: instant and dependency-free, for tests and minimal installs.

Words, word bigrams and character trigrams of each word are hashed into a signed vector, so
"postgres" and "postgresql" share most features and paraphrases that share stems still meet.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from mem.text import STOPWORDS, stem, tokens

if TYPE_CHECKING:
    import numpy as np


class HashEmbedder:
    id = "hash:v1"
    dim = 512

    def embed(self, texts: Sequence[str]) -> "np.ndarray":
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Every row's slots as offsets into the flat matrix, summed by one add.at (unbuffered: each
        # cell takes its additions in the order given, so this is the per-row sum, without a call a row).
        cells: list[int] = []
        values: list[float] = []
        for row, text in enumerate(texts):
            words = [_word(w, self.dim) for w in tokens(text) if w not in STOPWORDS]
            if words:
                # words, then word bigrams, then each word's character trigrams: the order the sums run in
                slots = [unigram for _, unigram, _ in words]
                slots += [_slot("b:" + a + " " + b, self.dim, 0.5) for (a, _, _), (b, _, _) in zip(words, words[1:])]
                for _, _, trigrams in words:
                    slots.extend(trigrams)
                base = row * self.dim
                cells += [base + bucket for bucket, _ in slots]
                values += [value for _, value in slots]
        if cells:
            np.add.at(out.reshape(-1), cells, values)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


@lru_cache(maxsize=1 << 16)
def _word(word: str, dim: int) -> tuple[str, tuple[int, float], tuple[tuple[int, float], ...]]:
    """A word's stem (the features stored vectors hold), its own slot and its character trigrams'
    slots; cached, because words recur across texts far more than they vary."""
    stemmed = stem(word, 4)
    padded = f"<{stemmed}>"
    return (stemmed, _slot("w:" + stemmed, dim, 1.0),
            tuple(_slot("c:" + padded[i : i + 3], dim, 0.35) for i in range(len(padded) - 2)))


@lru_cache(maxsize=1 << 17)
def _slot(feature: str, dim: int, weight: float) -> tuple[int, float]:
    """Bucket and signed weight of one feature; cached, because words and trigrams recur across texts."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest[:4], "little") % dim, (weight if digest[4] & 1 else -weight)
