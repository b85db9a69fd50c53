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

    def _features(self, text: str) -> list[tuple[str, float]]:
        words = [stem(w, 4) for w in tokens(text) if w not in STOPWORDS]  # the features stored vectors hold
        feats: list[tuple[str, float]] = [("w:" + w, 1.0) for w in words]
        feats += [("b:" + a + " " + b, 0.5) for a, b in zip(words, words[1:])]
        for w in words:
            padded = f"<{w}>"
            feats += [("c:" + padded[i : i + 3], 0.35) for i in range(len(padded) - 2)]
        return feats

    def embed(self, texts: Sequence[str]) -> "np.ndarray":
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            feats = self._features(text)
            if feats:
                slots = [_slot(feature, self.dim) for feature, _ in feats]
                buckets = [bucket for bucket, _ in slots]
                values = [sign * weight for (_, sign), (_, weight) in zip(slots, feats)]
                np.add.at(out[row], buckets, values)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


@lru_cache(maxsize=1 << 17)
def _slot(feature: str, dim: int) -> tuple[int, float]:
    """Bucket and sign of one feature; cached, because words and trigrams recur across texts."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest[:4], "little") % dim, (1.0 if digest[4] & 1 else -1.0)
