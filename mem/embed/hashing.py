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
        # A row's buckets and values are gathered by whole tuples (each word's are kept by ``_word``).
        buckets: list[int] = []
        values: list[float] = []
        counts: list[int] = []  # each row's number of slots
        for text in texts:
            start = len(buckets)
            words = [_word(w, dim) for w in tokens(text) if w not in STOPWORDS]
            if words:
                # words, then word bigrams, then each word's character trigrams: the order the sums run in
                buckets += [unigram for _, unigram, _, _, _ in words]
                values += [value for _, _, value, _, _ in words]
                for (a, _, _, _, _), (b, _, _, _, _) in zip(words, words[1:]):
                    bucket, value = _slot("b:" + a + " " + b, dim, 0.5)
                    buckets.append(bucket)
                    values.append(value)
                for _, _, _, trigram_buckets, trigram_values in words:
                    buckets += trigram_buckets
                    values += trigram_values
            counts.append(len(buckets) - start)
        if buckets:
            cells = np.repeat(np.arange(len(texts), dtype=np.intp) * dim, counts)
            cells += np.fromiter(buckets, dtype=np.intp, count=len(buckets))
            _add_in_order(out.reshape(-1), cells, np.fromiter(values, dtype=np.float64, count=len(values)))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


def _add_in_order(out: "np.ndarray", cells: "np.ndarray", values: "np.ndarray") -> None:
    """``np.add.at(out, cells, values)`` (float32 ``out``, float64 ``values``) with the same result bit for
    bit: each cell takes its additions in the order given, each one computed in float64 and rounded
    to float32 (what add.at's float64 loop does), but a round at a time instead of an element at a
    time. Round k adds every cell's k-th value at once (a cell appears at most once in a round), so
    the rounds are as many as the most additions one cell takes (a word repeated in a text), and
    add.at's per-element iteration and casts (~500 instructions an addition) are gone."""
    import numpy as np

    order = np.argsort(cells, kind="stable")  # each cell's additions together, in their order
    ordered = cells[order]
    firsts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    rank = np.arange(len(ordered)) - np.repeat(firsts, np.diff(np.r_[firsts, len(ordered)]))  # k: the k-th addition
    by_round = order[np.argsort(rank, kind="stable")]
    ends = np.cumsum(np.bincount(rank))
    start = 0
    for end in ends.tolist():
        taken = by_round[start:end]
        at = cells[taken]
        out[at] = (out[at].astype(np.float64) + values[taken]).astype(np.float32)
        start = end


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
