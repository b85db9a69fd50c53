"""Surprise: how far a memory sits from everything its scope already holds.

``surprise = 1 - max cosine to the scope's community centroids`` (clipped to [0, 1]), 0.5 when the
scope has no centroids yet. Intake computes it from the stored centroids; consolidation's
reorganize phase recomputes it for every memory when the communities change. Pure: no SQL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

NO_CENTROIDS = 0.5


def unit_rows(matrix: "np.ndarray") -> "np.ndarray":
    """Rows scaled to length 1 (zero rows stay zero), float32."""
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms == 0, 1.0, norms)).astype(np.float32)


def surprise(vectors: "np.ndarray", centroids: "np.ndarray | None") -> "np.ndarray":
    """Surprise of each row of ``vectors`` (unit vectors) against ``centroids`` (any length), rounded to 4 places.

    >>> import numpy as np
    >>> surprise(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[2.0, 0.0]])).tolist()
    [0.0, 1.0]
    >>> surprise(np.array([[1.0, 0.0]]), None).tolist()
    [0.5]
    """
    import numpy as np

    if centroids is None or not len(centroids) or centroids.shape[1] != vectors.shape[1]:
        return np.full(len(vectors), NO_CENTROIDS)
    return from_best((np.asarray(vectors, dtype=np.float32) @ unit_rows(centroids).T).max(axis=1))


def from_best(best: "np.ndarray") -> "np.ndarray":
    """Surprise from each memory's best cosine to a centroid (a negative cosine is as far as orthogonal)."""
    import numpy as np

    return np.round(1.0 - np.clip(best, 0.0, 1.0), 4)
