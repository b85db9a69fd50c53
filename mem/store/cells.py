"""Cells over the warm matrix: the rows that can be within a high cosine floor of a query, found
without scoring every row.

A bulk import checks every new memory for a near duplicate (cosine >= 0.95) among all stored ones;
scored row by row that is a pass over the whole matrix per memory, and at a million rows the
import slowed to under 100 memories/s (bench/README.md, "A million memories"). The floor is high,
and that bounds where an answer can be:

* ``|q - x|^2 = |q|^2 + |x|^2 - 2 q.x``, so a row with ``q.x >= f`` is within
  ``rho = sqrt(|q|^2 + max|x|^2 - 2f)`` of the query (0.32 for unit vectors at 0.95);
* an orthonormal projection ``G`` only shrinks distances, ``|Gq - Gx| <= |q - x|``, so the row's
  ``DIMS``-wide coordinates are within ``rho`` of the query's too;
* rows are grouped into cells (k-means in those coordinates; each cell keeps its largest distance
  from its centre, ``radius``), and a cell whose centre is farther than ``radius + rho`` from the
  query holds no such row.

``candidates`` returns, per query, every row of the cells left whose coordinates are within
``rho``: a superset of the rows at or above the floor, which the caller scores exactly
(``mem.stages.neighbours``), so the answer is the one scoring every row gives. The projection is
the vectors' own principal directions (centred: they spread the rows the most); on the synthetic
hash million about 0.1 % of the rows are left per query at 0.95. Nothing here is approximate:
a poor projection or poor cells only leave more candidates.

New rows (a chunk just written) are assigned to their nearest centre as they arrive and kept in
an unsorted tail that every query scans; once the tail is large the rows are sorted by cell again.
A reloaded matrix (``VectorIndex.generation``) rebuilds the cells.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

MIN_ROWS = 50_000  # below this a scan of the matrix is cheap: no cells
MIN_FLOOR = 0.9  # below this the radius (0.45 at 0.9) leaves most cells: scan instead
DIMS = 32  # coordinates per row: at 0.95, 32 leave ~0.1 % of the hash rows, 16 ~4 %, 8 ~13 %
ROWS_PER_CELL = 64  # cells = rows / ROWS_PER_CELL when built, within MIN_CELLS..MAX_CELLS
MIN_CELLS, MAX_CELLS = 64, 1024
SAMPLE = 16_384  # rows the projection and the centres are fitted on (16 a centre at most)
ITERATIONS = 5  # k-means rounds on the sample
# The unsorted tail (scanned by every query) is sorted into the cells once it holds TAIL rows: at a
# million rows sorting costs about what scanning 16k tail rows for eight 2,048-query chunks does.
TAIL = 16_384
ASSIGN = 32_768  # rows assigned to their centres per product (32k x 1,024 distances: 128 MB)
# Squared distances come from float32 expansions (|a|^2 + |b|^2 - 2 a.b), off by ~1e-5 here:
# comparing against bounds raised by MARGIN never drops a row the exact arithmetic would keep.
MARGIN = 1e-3
SEED = 16


def pays(index: Any, floor: float) -> bool:
    """Whether ``floor`` is high enough and the warm matrix large enough for the cells."""
    return floor >= MIN_FLOOR and index.count >= MIN_ROWS and getattr(index, "generation", None) is not None


def of(index: Any) -> "Cells":
    """The index's cells, brought up to date with its rows (built on first use or after a reload)."""
    cells = index.cells
    if cells is None or cells.generation != index.generation or cells.rows > index.count:
        cells = index.cells = Cells(index)
    cells.follow(index)
    return cells


class Cells:
    def __init__(self, index: Any) -> None:
        import numpy as np

        self.generation = index.generation
        matrix = index.matrix[: index.count]
        rng = np.random.default_rng(SEED)
        sample = matrix[np.sort(rng.choice(len(matrix), min(SAMPLE, len(matrix)), replace=False))]
        centred = sample - sample.mean(axis=0)
        _, directions = np.linalg.eigh(centred.T @ centred)
        self.basis = np.ascontiguousarray(directions[:, ::-1][:, :DIMS], dtype=np.float32)
        count = max(MIN_CELLS, min(MAX_CELLS, len(matrix) // ROWS_PER_CELL))
        self.centres = _kmeans(sample @ self.basis, count, rng)
        self.centre_norms = (self.centres * self.centres).sum(axis=1)
        self.radius = np.zeros(len(self.centres), dtype=np.float32)
        self.max_norm = 0.0  # the largest |x|^2 of any row
        self.rows = 0  # rows 0..rows of the matrix are in the cells or the tail
        # Sorted by cell: each row's matrix position and its coordinates x as (2x, -|x|^2), so one
        # product gives 2 q.x - |x|^2, which is >= |q|^2 - rho^2 exactly when |q - x|^2 <= rho^2;
        # cell c's rows are starts[c]:starts[c + 1].
        self.positions = np.zeros(0, dtype=np.int64)
        self.coords = np.zeros((0, DIMS + 1), dtype=np.float32)
        self.cell_of = np.zeros(0, dtype=np.int32)
        self.starts = np.zeros(len(self.centres) + 1, dtype=np.int64)
        self.tail: list[tuple[Any, Any, Any]] = []  # (positions, coords, cells) not sorted yet
        self.tail_rows = 0

    def follow(self, index: Any) -> None:
        """Take in the rows appended to the matrix since the last call."""
        import numpy as np

        if index.count == self.rows:
            return
        for start in range(self.rows, index.count, ASSIGN):
            end = min(index.count, start + ASSIGN)
            block = index.matrix[start:end]
            self.max_norm = max(self.max_norm, float(np.einsum("ij,ij->i", block, block).max()))
            coords = block @ self.basis
            cells = (self.centre_norms[None, :] - 2 * coords @ self.centres.T).argmin(axis=1).astype(np.int32)
            # exact distances to the assigned centres (differences, not expansions): the radii
            np.maximum.at(self.radius, cells, np.sqrt(((coords - self.centres[cells]) ** 2).sum(axis=1)))
            folded = np.concatenate([2 * coords, -(coords * coords).sum(axis=1, keepdims=True)], axis=1)
            self.tail.append((np.arange(start, end, dtype=np.int64), folded, cells))
            self.tail_rows += end - start
        self.rows = index.count
        if self.tail_rows >= TAIL:
            self._sort()

    def _sort(self) -> None:
        import numpy as np

        positions, coords, cells = (np.concatenate([self_part, *(part[i] for part in self.tail)])
                                    for i, self_part in enumerate((self.positions, self.coords, self.cell_of)))
        order = np.argsort(cells, kind="stable")
        self.positions, self.coords, self.cell_of = positions[order], coords[order], cells[order]
        self.starts = np.searchsorted(self.cell_of, np.arange(len(self.centres) + 1)).astype(np.int64)
        self.tail, self.tail_rows = [], 0

    def candidates(self, queries: "np.ndarray", floor: float) -> "list[np.ndarray]":
        """For each query, the matrix positions (in no particular order) of every row ``x`` that can have
        ``q.x >= floor`` (and more): the rows whose coordinates lie within the query's radius."""
        import numpy as np

        gq = queries @ self.basis
        gq_norms = (gq * gq).sum(axis=1)
        reach = (queries * queries).sum(axis=1) + self.max_norm - 2 * floor + MARGIN  # rho^2 per query
        rho = np.sqrt(np.maximum(reach, 0.0))
        to_centres = gq_norms[:, None] + self.centre_norms[None, :] - 2 * gq @ self.centres.T
        keep = to_centres <= (self.radius[None, :] + rho[:, None]) ** 2 + MARGIN
        ask = np.concatenate([gq, np.ones((len(gq), 1), dtype=np.float32)], axis=1)  # (q, 1) . (2x, -|x|^2)
        bar = (gq_norms - reach)[:, None]
        found_q: list[Any] = []
        found_pos: list[Any] = []

        def scan(asking: "np.ndarray", positions: "np.ndarray", coords: "np.ndarray") -> None:
            q, r = np.nonzero(ask[asking] @ coords.T >= bar[asking])
            found_q.append(asking[q])
            found_pos.append(positions[r])

        everyone = np.arange(len(queries))
        for cell in np.flatnonzero(keep.any(axis=0) & (self.starts[1:] > self.starts[:-1])).tolist():
            lo, hi = int(self.starts[cell]), int(self.starts[cell + 1])
            scan(np.flatnonzero(keep[:, cell]), self.positions[lo:hi], self.coords[lo:hi])
        for positions, coords, _ in self.tail:
            scan(everyone, positions, coords)
        if not found_q:
            return [np.zeros(0, dtype=np.int64) for _ in range(len(queries))]
        q, positions = np.concatenate(found_q), np.concatenate(found_pos)
        order = np.argsort(q, kind="stable")  # grouped by query; the order within a query does not matter
        q, positions = q[order], positions[order]
        return np.split(positions, np.searchsorted(q, np.arange(1, len(queries))))


def _kmeans(points: "np.ndarray", count: int, rng: Any) -> "np.ndarray":
    """``count`` centres for ``points`` (Lloyd's rounds from a random start; an empty cell keeps its
    centre). Their quality only decides how many rows a query scans, never what it finds."""
    import numpy as np

    count = min(count, len(points))
    centres = points[rng.choice(len(points), count, replace=False)].copy()
    for _ in range(ITERATIONS):
        nearest = ((centres * centres).sum(axis=1)[None, :] - 2 * points @ centres.T).argmin(axis=1)
        sizes = np.bincount(nearest, minlength=count)
        filled = sizes > 0
        for dim in range(points.shape[1]):
            sums = np.bincount(nearest, weights=points[:, dim], minlength=count)
            centres[filled, dim] = sums[filled] / sizes[filled]
    return centres.astype(np.float32)
