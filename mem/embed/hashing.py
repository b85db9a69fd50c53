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

        dim = self.dim
        out = np.zeros((len(texts), dim), dtype=np.float32)
        # Every row's slots as offsets into the flat matrix, summed by one add.at (unbuffered: each
        # cell takes its additions in the order given, so this is the per-row sum, without a call a row).
        # A row's buckets and values are gathered by whole tuples (each word's are kept by ``_word``);
        # its offset in the flat matrix is added once for the batch.
        buckets: list[int] = []
        values: list[float] = []
        rows: list[int] = []  # each slot's row
        for row, text in enumerate(texts):
            words = [_word(w, dim) for w in tokens(text) if w not in STOPWORDS]
            if words:
                # words, then word bigrams, then each word's character trigrams: the order the sums run in
                start = len(buckets)
                buckets += [unigram for _, unigram, _, _, _ in words]
                values += [value for _, _, value, _, _ in words]
                for (a, _, _, _, _), (b, _, _, _, _) in zip(words, words[1:]):
                    bucket, value = _slot("b:" + a + " " + b, dim, 0.5)
                    buckets.append(bucket)
                    values.append(value)
                for _, _, _, trigram_buckets, trigram_values in words:
                    buckets += trigram_buckets
                    values += trigram_values
                rows += [row] * (len(buckets) - start)
        if buckets:
            cells = np.asarray(rows, dtype=np.intp) * dim + np.asarray(buckets, dtype=np.intp)
            np.add.at(out.reshape(-1), cells, values)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


@lru_cache(maxsize=1 << 16)
def _word(word: str, dim: int) -> tuple[str, int, float, tuple[int, ...], tuple[float, ...]]:
    """A word's stem (the features stored vectors hold), its own slot (bucket, value) and its character
    trigrams' buckets and values; cached, because words recur across texts far more than they vary."""
    stemmed = stem(word, 4)
    padded = f"<{stemmed}>"
    trigrams = [_slot("c:" + padded[i : i + 3], dim, 0.35) for i in range(len(padded) - 2)]
    return (stemmed, *_slot("w:" + stemmed, dim, 1.0), tuple(b for b, _ in trigrams), tuple(v for _, v in trigrams))


@lru_cache(maxsize=1 << 17)
def _slot(feature: str, dim: int, weight: float) -> tuple[int, float]:
    """Bucket and signed weight of one feature; cached, because words and trigrams recur across texts."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest[:4], "little") % dim, (weight if digest[4] & 1 else -weight)
