"""Intake's neighbour search: the exact nearest earlier memories of each new one, the same whenever
and however it is computed.

Eager intake finds a chunk's neighbours just before writing it; bulk intake finds them in the
finishing pass (``mem.stages.finish``), when every row of the import is already in the matrix.
Both ask ``nearest``, so both build the same graph: a row sees only rowids below its ``before``
bound, the search is exact (no projection, no graph index: those answer searches, where a rare
miss is harmless, while here it would make two intakes of the same input differ), and the
cosines it returns are recomputed one by one in float64 (``cosines``), so a value never depends
on how the matrix product was blocked.

Where the index keeps a principal projection of its rows (``basis``, ``projected``: large,
compressible matrices), the product runs over the projection, and a bound keeps the result exact:
for unit vectors split along an orthonormal basis, ``q . x = Pq . Px + q_r . x_r`` and the residual
term is at most ``|q_r| |x_r|``. Rows whose bound cannot reach the floor are dropped; the ``PROBE``
best by projection are scored exactly, which gives a k-th best to beat, and only rows whose bound
reaches it are scored. On the synthetic 100k (hash, 90 % of the energy in 128 dimensions) that
leaves a median 91 of 100,000 rows to score per query.

It reads the warm ``VectorIndex`` (``mem.store.vectors``): ``sync()``, then its aligned arrays
``matrix``, ``rowids`` (ascending) and, when set, ``basis`` and ``projected``, up to ``count``,
and ``scope_mask(scope)``, the index's own cached mask of a scope's rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mem.store import cells

if TYPE_CHECKING:
    import numpy as np

NEIGHBOURS = 8  # nearest memories looked up per new one (near-duplicate check, then see_also links)
# The float32 product of two unit vectors is off by far less than this (dim x 2^-24 at worst):
# candidates within it of the floor or of the k-th best are rescored exactly before deciding.
SLACK = 1e-4
BLOCK = 64  # queries per matrix product: 64 x 100k float32 = 25 MB at a time
PROBE = 40  # rows scored exactly first, by projected similarity, to find a k-th best to beat
# The squared residual 1 - |Px|^2 is summed in float32 (off by < 1e-5 for 128 dimensions) and a
# stored unit vector's |x|^2 exceeds 1 by float32 rounding: a floor under it keeps the bound above the truth.
RESIDUAL_FLOOR = 1e-5


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
    matrix, rowids = index.matrix[:count], index.rowids[:count]
    ends = np.full(len(queries), count) if before is None else np.searchsorted(rowids, np.asarray(before))
    masks: dict[str | None, Any] = {None: None, **{scope: index.scope_mask(scope) for scope in set(scopes) - {None}}}
    if cells.pays(index, floor):
        return _nearest_in_cells(index, queries, scopes, k, floor, ends, masks)
    basis, projected = getattr(index, "basis", None), getattr(index, "projected", None)
    bounded = basis is not None and projected is not None and basis.shape[1] > 0
    residuals = _residuals(projected[:count]) if bounded else None
    out: list[list[tuple[int, float]]] = []
    for start in range(0, len(queries), BLOCK):
        block = queries[start : start + BLOCK]
        upto = int(ends[start : start + BLOCK].max())
        if bounded:
            folded = block @ basis
            reach = np.sqrt(np.maximum((block * block).sum(axis=1) - (folded * folded).sum(axis=1), 0.0) + RESIDUAL_FLOOR)
            sims_block = folded @ projected[:upto].T
        else:
            sims_block = block @ matrix[:upto].T
        for offset, (sims, query) in enumerate(zip(sims_block, block)):
            end, mask = int(ends[start + offset]), masks[scopes[start + offset]]
            spare = reach[offset] * residuals[:end] if bounded else None
            rows = np.flatnonzero((sims[:end] + spare if bounded else sims[:end]) >= floor - SLACK)
            if mask is not None:
                rows = rows[mask[rows]]
            rows = contenders(rows, sims, spare, matrix, query, k, floor)
            out.append(ranked(rowids[rows], cosines(matrix[rows], query), k, floor))
    return out


def nearest_with(index: Any, query: "np.ndarray", scope: str | None, k: int, floor: float, before: int,
                 pending: "Sequence[tuple[int, str, np.ndarray]]" = ()) -> list[tuple[int, float]]:
    """``nearest`` of one query among the stored rows below ``before`` and the ``pending`` rows
    (``(rowid, scope, vector)``: an eager intake chunk's, not written yet) below it, scored alike
    (``cosines``): what a bulk intake's finishing pass finds with every row stored."""
    import numpy as np

    stored = nearest(index, query[None, :], [scope], k, floor, before=[before])[0]
    mine = [(rowid, vector) for rowid, their_scope, vector in pending
            if rowid < before and (scope is None or their_scope == scope)]
    if not mine:
        return stored
    rowids = np.array([r for r, _ in stored] + [r for r, _ in mine], dtype=np.int64)
    sims = np.concatenate([np.array([sim for _, sim in stored], dtype=np.float32),
                           cosines(np.stack([v for _, v in mine]), query)])
    return ranked(rowids, sims, k, floor)


def _nearest_in_cells(index: Any, queries: "np.ndarray", scopes: Sequence[str | None], k: int, floor: float,
                      ends: "np.ndarray", masks: dict[str | None, Any]) -> list[list[tuple[int, float]]]:
    """``nearest`` at a high floor on a large matrix: the cells (``mem.store.cells``) give each query
    a superset of the rows that can reach the floor, scored as the scan scores its rows."""
    import numpy as np

    matrix, rowids = index.matrix, index.rowids
    basis, projected = getattr(index, "basis", None), getattr(index, "projected", None)
    bounded = basis is not None and projected is not None and basis.shape[1] > 0
    if bounded:
        folded = queries @ basis
        reach = np.sqrt(np.maximum((queries * queries).sum(axis=1) - (folded * folded).sum(axis=1), 0.0) + RESIDUAL_FLOOR)
    out: list[list[tuple[int, float]]] = []
    for i, (query, rows, end, scope) in enumerate(zip(queries, cells.of(index).candidates(queries, floor - SLACK),
                                                      ends, scopes)):
        rows = rows[rows < end]
        if masks[scope] is not None:
            rows = rows[masks[scope][rows]]
        if bounded and len(rows) > k:
            # the scan's bound over the projection first: a quarter of the bytes of the full rows to read
            near = projected[rows]
            rows = rows[near @ folded[i] + reach[i] * _residuals(near) >= floor - SLACK]
        rough = matrix[rows] @ query
        keep = rough >= floor - SLACK
        rows = _within_slack(rows[keep], rough[keep], k)
        out.append(ranked(rowids[rows], cosines(matrix[rows], query), k, floor))
    return out


def contenders(rows: "np.ndarray", sims: "np.ndarray", spare: "np.ndarray | None", matrix: "np.ndarray",
                query: "np.ndarray", k: int, floor: float) -> "np.ndarray":
    """Of ``rows`` (each able to reach ``floor``), those that may be among the best ``k``: within
    SLACK of the k-th best similarity, or, over a projection (``spare``: each row's residual term),
    whose bound reaches the k-th best exact similarity of the ``PROBE`` best by projection."""
    import numpy as np

    if spare is None:
        return _within_slack(rows, sims[rows], k)
    if len(rows) <= max(k, PROBE):
        return rows
    probe = rows[np.argpartition(-sims[rows], PROBE - 1)[:PROBE]]
    exact = cosines(matrix[probe], query)
    bar = max(floor, float(np.partition(exact, len(exact) - k)[len(exact) - k]))
    return rows[sims[rows] + spare[rows] >= bar - SLACK]


def _within_slack(rows: "np.ndarray", rough: "np.ndarray", k: int) -> "np.ndarray":
    """Of ``rows`` with float32 similarities ``rough``, those within SLACK of the k-th best."""
    import numpy as np

    if len(rows) <= k:
        return rows
    kth = np.partition(rough, len(rows) - k)[len(rows) - k]
    return rows[rough >= kth - SLACK]


def _residuals(projected: "np.ndarray") -> "np.ndarray":
    """A bound on ``|x - B B^T x|`` of every row: embedders store unit vectors (or zero ones), so the
    squared residual ``|x|^2 - |Px|^2`` is at most ``1 - |Px|^2`` (floored, see RESIDUAL_FLOOR).
    Computed per call from the projection (2 ms at 100k): nothing to keep in step with the index."""
    import numpy as np

    squared = np.einsum("ij,ij->i", projected, projected)
    return np.sqrt(np.maximum(1.0 - squared, 0.0) + RESIDUAL_FLOOR).astype(np.float32)
