"""Intake's neighbour search: the exact nearest earlier memories of each new one, the same whenever
and however it is computed.

Eager intake finds a chunk's neighbours just before writing it; bulk intake finds them in the
finishing pass (``mem.stages.finish``), when every row of the import is already in the matrix.
Both ask ``nearest``, so both build the same graph: a row sees only rowids below its ``before``
bound, the search is exact (no projection, no graph index: those answer searches, where a rare
miss is harmless, while here it would make two intakes of the same input differ), and the
cosines it returns are recomputed one by one in float64 (``cosines``), so a value never depends
on how the matrix product was blocked.

It reads the warm ``VectorIndex`` (``mem.store.vectors``): ``sync()``, then its aligned arrays
``matrix``, ``rowids`` (ascending), ``scopes`` (codes) and ``scope_codes``, up to ``count``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

# The float32 product of two unit vectors is off by far less than this (dim x 2^-24 at worst):
# candidates within it of the floor or of the k-th best are rescored exactly before deciding.
SLACK = 1e-4
BLOCK = 64  # queries per matrix product: 64 x 100k float32 = 25 MB at a time


def cosines(vectors: "np.ndarray", query: "np.ndarray") -> "np.ndarray":
    """``vectors @ query`` computed the same way whatever else is in the batch: each row's products
    are exact in float64 and summed alone, then rounded to float32 (the stored precision)."""
    import numpy as np

    if len(vectors) == 0:
        return np.zeros(0, dtype=np.float32)
    return np.einsum("ij,j->i", np.asarray(vectors, dtype=np.float64),
                     np.asarray(query, dtype=np.float64)).astype(np.float32)


def ranked(rowids: "np.ndarray", sims: "np.ndarray", k: int, floor: float) -> list[tuple[int, float]]:
    """The best ``k`` (rowid, cosine) at or above ``floor``, by cosine then rowid."""
    import numpy as np

    keep = sims >= floor
    rowids, sims = np.asarray(rowids)[keep], sims[keep]
    order = np.lexsort((rowids, -sims))[:k]
    return [(int(rowids[i]), float(sims[i])) for i in order]


def nearest(index: Any, queries: "np.ndarray", scopes: Sequence[str | None], k: int, floor: float,
            before: "Sequence[int] | None" = None) -> list[list[tuple[int, float]]]:
    """Each query's ``k`` nearest stored vectors in its scope (None: any) with cosine >= ``floor``,
    among rowids < its ``before`` bound (None: every stored row), best first, ties by rowid."""
    import numpy as np

    queries = np.asarray(queries, dtype=np.float32)
    index.sync()
    count = index.count
    if count == 0 or len(queries) == 0:
        return [[] for _ in range(len(queries))]
    matrix, rowids, codes = index.matrix[:count], index.rowids[:count], index.scopes[:count]
    ends = np.full(len(queries), count) if before is None else np.searchsorted(rowids, np.asarray(before))
    out: list[list[tuple[int, float]]] = []
    for start in range(0, len(queries), BLOCK):
        block = queries[start : start + BLOCK]
        upto = int(ends[start : start + BLOCK].max())
        sims_block = block @ matrix[:upto].T if upto else np.zeros((len(block), 0), dtype=np.float32)
        for offset, (sims, query) in enumerate(zip(sims_block, block)):
            end, scope = int(ends[start + offset]), scopes[start + offset]
            rows = np.flatnonzero(sims[:end] >= floor - SLACK)
            if scope is not None:
                code = index.scope_codes.get(scope)
                rows = rows[codes[rows] == code] if code is not None else rows[:0]
            if len(rows) > k:
                rough = sims[rows]
                kth = np.partition(rough, len(rows) - k)[len(rows) - k]
                rows = rows[rough >= kth - SLACK]
            out.append(ranked(rowids[rows], cosines(matrix[rows], query), k, floor))
    return out
