"""Nearest-neighbour search over the stored float32 vectors, cold or warm.

A one-shot command (``mem add "..."``, a cold ``mem search``) asks the int8 vec0 index for
coarse neighbours and rescores them in float32: no need to read every vector. A process that
asks more than ``WARM_AFTER`` times (a batch import, the MCP server, a benchmark) loads every
float32 vector once into a numpy matrix and answers by matrix product. On this machine vec0's
brute-force int8 scan costs about 60 ms at 100k x 384, the full matrix product 12.4 ms (it is
memory-bound); above ``COARSE_MIN_ROWS`` vectors a pass over a 128-wide principal projection
(4.5 ms) picks ``COARSE_POOL`` x k candidates that are rescored exactly. Intake asks for a whole
chunk's neighbours at once (``nearest_many``: one product for the chunk, over the projection
above ``COARSE_MIN_ROWS`` too).

Where even the projected scan would take most of a search's time (``ann.MIN_SCAN`` floats read:
200k projected vectors) a warm search asks an HNSW graph (``store/ann.py``) for candidates and rescores them exactly; the
graph is read from the cache folder, or built (in a background thread when large, while searches
stay exact), and follows the matrix.

The matrix follows other processes' writes: before each query it compares the newest vector
rowid and the ``vectors_epoch`` counter (bumped whenever a vector is replaced or deleted) with
what it loaded; new rows are appended, anything else reloads the matrix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from mem.store import Store

WARM_AFTER = 3
RESCORE = 100  # coarse int8 neighbours rescored in float32 on the cold path
# Above COARSE_MIN_ROWS a warm search first scores a COARSE_DIMS-wide projection of every vector
# onto its principal directions, then rescores the best COARSE_POOL x k exactly. The product over
# 100k x 384 float32 is memory-bound (12.4 ms here); the projection reads a third of it. Recall
# of the exact top k within the pool: 1.000 (k 200, synthetic 100k) and 0.9999 (k 50, LoCoMo turns).
COARSE_MIN_ROWS = 20_000
COARSE_DIMS = 128
COARSE_POOL = 5
COARSE_ENERGY = 0.9  # projections keeping less of the vectors' energy (e.g. hash features) stay unused
# The coarse pass of nearest_many keeps rough cosines down to floor - COARSE_MARGIN: a projection keeping
# 90 % of the energy is off by less than that for nearly every pair (and the pool is rescored exactly).
COARSE_MARGIN = 0.1
# From NARROW_MIN_ROWS rows the coarse pass reads only the projection's first NARROW_DIMS columns (kept
# as a contiguous copy: a quarter of the bytes of a pass that is memory-bound), keeps NARROW_POOL times
# the pool, scores those in the whole projection and rescores the best NARROW_RESCORE times the pool
# exactly. At a million hash vectors (k 200, pool 2,000: 30,000 then 5,000 rows) recall@10 against the
# exact answer .998, recall@200 .982, against .9985 and .990 for a 64-wide pass keeping 5 x pool for
# exact scoring, which read twice the bytes: the semantic channel's CPU 28 -> 19 ms (bench/README.md).
NARROW_MIN_ROWS = 200_000
NARROW_DIMS = 32
NARROW_POOL = 15
NARROW_RESCORE = 2.5
# The pool those multiply is at least NARROW_MIN_POOL: a small k's top rows are as crowded as a large
# k's. At a million, k 10 (pool 100): recall@10 .88 with 1,500 / 250 rows kept, .96 with 6,000 / 1,000
# (the 64-wide pass keeping 500 rows: .92).
NARROW_MIN_POOL = 400
# The best n of a million rough scores: a value that about TOP_SLACK x n of them reach is read off a
# sample of every TOP_STRIDE-th score, and only the rows reaching it are partitioned (a full
# argpartition over a million floats cost about 4 ms); the same rows, or a full partition if too few reach it.
TOP_STRIDE = 64
TOP_SLACK = 1.25
TOP_MIN_ROWS = 65_536  # shorter arrays are partitioned whole (30,000 floats: 0.1 ms)
COARSE_CROWD_ROWS = 500_000  # the pool grows by COARSE_POOL x k for every this many rows (see _coarse_pool)
# The graph is skipped while over GRAPH_USEFUL of its last answers (at least GRAPH_TRIAL) failed the
# sample's check, asked again one query in GRAPH_RETRY: on a million templated hash vectors 86 % fail.
GRAPH_TRIAL = 32
GRAPH_USEFUL = 0.5
GRAPH_RETRY = 16
BLOCK = 64  # queries per matrix product in nearest_many: 64 x 100k floats = 25 MB at a time
GRAPH_INLINE_ROWS = 20_000  # a graph of fewer rows is built before the search that needs it (seconds), larger ones in a thread


class VectorIndex:
    def __init__(self, store: "Store") -> None:
        self.store = store
        self.queries = 0
        self.rowids: Any = None  # int64 array, aligned with matrix rows
        self.scopes: Any = None  # int32 scope codes, aligned with matrix rows
        self.scope_codes: dict[str, int] = {}
        self.matrix: Any = None
        self.count = 0
        self.loaded_max = 0
        self.loaded_id: str | None = None  # the memory at loaded_max when it was read
        self.epoch: str | None = None
        self.basis: Any = None  # (dim, COARSE_DIMS) principal directions, once the matrix is large
        self.projected: Any = None  # matrix @ basis, aligned with matrix rows
        self.graph: Any = None  # mem.store.ann.Graph over every row, where a scan would read >= ann.MIN_SCAN floats
        self._building: Any = None  # (thread, result holder) while a large graph is built
        self._members: dict[int, Any] = {}  # scope code -> (mask, positions) of its rows, for this count
        self._sample: Any = None  # (count, positions, their rows) checked after each graph search, until the matrix changes
        self._graph_record: tuple[float, float] = (0, 0)  # (recent graph answers checked, those that failed the check)
        self._graph_skipped = 0  # queries since the graph was last asked
        self._graph_retry = False  # the graph is being asked while failing (one query in GRAPH_RETRY)
        self.narrow: Any = None  # projected[:, :NARROW_DIMS], contiguous, at NARROW_MIN_ROWS rows and more
        self._narrow_rows = 0  # rows of narrow filled
        self.generation = 0  # bumped whenever the matrix is read anew: row positions may have moved
        self.cells: Any = None  # mem.store.cells.Cells, made by the first high-floor neighbour search at scale

    @property
    def warm(self) -> bool:
        return self.matrix is not None

    def nearest(self, query: "np.ndarray", k: int, scope: str | None) -> list[tuple[int, float]]:
        """The ``k`` most similar stored vectors in ``scope`` (None: every scope) as (rowid, cosine), best first."""
        import numpy as np

        self.queries += 1
        q = np.asarray(query, dtype=np.float32)
        if self.matrix is None and self.queries <= WARM_AFTER:
            coarse = self.store.knn(q, max(k, RESCORE), scope)
            rowids, matrix = self.store.vectors_for(coarse)
            if not rowids:
                return []
            sims = matrix @ q
            order = np.argsort(-sims, kind="stable")[:k]
            return [(rowids[i], float(sims[i])) for i in order]
        self.sync()
        if self.count == 0:
            return []
        k = min(k, self.count)
        mask = members = None
        if scope is not None:
            code = self.scope_codes.get(scope)
            if code is None:
                return []
            mask, members = self._scope_rows(code)
            if len(members) == self.count:  # the scope holds every row (a one-scope store): nothing to filter
                mask = members = None
        graph = self._graph()
        if graph is not None and self._graph_worth_asking():
            hits = self._nearest_by_graph(graph, q, k, mask, self.count if members is None else len(members))
            if hits is not None:
                return hits
        rows = self._coarse_rows(q, self._coarse_pool(k), mask, members)
        # np.take gathers rows faster than fancy indexing (30,000 rows of 128 floats: about 2 against 3.4 ms)
        sims = np.take(self.matrix, rows, axis=0) @ q if len(rows) < self.count else self.matrix[: self.count] @ q
        if mask is not None:
            sims = np.where(mask[rows], sims, -np.inf)
        top = np.argpartition(-sims, k - 1)[:k] if k < len(rows) else np.arange(len(rows))
        top = top[np.isfinite(sims[top])]
        # Sort by similarity, ties by rowid, so results never depend on partition order.
        order = sorted(top.tolist(), key=lambda i: (-float(sims[i]), int(self.rowids[rows[i]])))
        return [(int(self.rowids[rows[i]]), float(sims[i])) for i in order]

    def _coarse_rows(self, q: "np.ndarray", pool: int, mask: "np.ndarray | None",
                     members: "np.ndarray | None") -> "np.ndarray":
        """Positions to score exactly, in memory order (a faster gather): the best ``pool`` rows of a pass
        over the projection (a third of the bytes), or at scale of the narrow copy's pass then the whole
        projection's; every row (or scope member) when there is no projection or the pool would hold them all."""
        import numpy as np

        if members is not None and 2 * len(members) < self.count:
            candidates = members  # a scope holding under half the rows: read only its rows (``mask`` then keeps all)
            mask = None
        else:
            candidates = None
        total = self.count if candidates is None else len(candidates)
        if self.projected is None or pool >= total:
            return np.arange(self.count) if candidates is None else candidates
        qp = self.basis.T @ q
        narrow = self._narrow() if total >= NARROW_MIN_ROWS else None
        if narrow is not None and NARROW_POOL * max(pool, NARROW_MIN_POOL) < total:
            pool = max(pool, NARROW_MIN_POOL)
            rough = narrow @ qp[:NARROW_DIMS] if candidates is None else np.take(narrow, candidates, axis=0) @ qp[:NARROW_DIMS]
            picked = top_positions(rough, NARROW_POOL * pool, mask)
            if mask is not None:
                picked = picked[mask[picked]]
            candidates = np.sort(picked if candidates is None else candidates[picked])
            pool, mask = int(NARROW_RESCORE * pool), None
        rough = self.projected[: self.count] @ qp if candidates is None else np.take(self.projected, candidates, axis=0) @ qp
        picked = top_positions(rough, pool, mask)
        return np.sort(picked if candidates is None else candidates[picked])

    def _narrow(self) -> "np.ndarray | None":
        """The first ``NARROW_DIMS`` columns of the projection as their own contiguous array, kept up to
        date with the matrix, once it holds ``NARROW_MIN_ROWS`` rows (None below, or unprojected)."""
        import numpy as np

        if self.projected is None or self.count < NARROW_MIN_ROWS or self.projected.shape[1] <= NARROW_DIMS:
            return None  # small, unprojected, or a projection no wider than the copy would be
        have = 0 if self.narrow is None else self._narrow_rows
        if have < self.count:
            if self.narrow is None or len(self.narrow) < self.count:
                grown = np.zeros((len(self.projected), NARROW_DIMS), dtype=np.float32)
                if self.narrow is not None:
                    grown[:have] = self.narrow[:have]
                self.narrow = grown
            self.narrow[have : self.count] = self.projected[have : self.count, :NARROW_DIMS]
            self._narrow_rows = self.count
        return self.narrow[: self.count]

    def _coarse_pool(self, k: int) -> int:
        """Rough candidates rescored exactly for a top ``k``: ``COARSE_POOL`` x k, once more for every
        ``COARSE_CROWD_ROWS`` rows. The more rows, the more of them a projection that drops a tenth
        of the energy ranks above a true top-10 row: at a million hash vectors a pool of 1,000 held
        .966 of the exact top 10, 2,000 held .986 (bench/README.md, "A million memories")."""
        return COARSE_POOL * k * max(1, -(-self.count // COARSE_CROWD_ROWS))

    def _graph_worth_asking(self) -> bool:
        """Whether to ask the graph first: not while most recent answers failed the sample's check
        (each such query paid the graph, the check and the scan; the scan alone answers it the
        same). One query in ``GRAPH_RETRY`` still asks, and its outcome counts for the queries it
        stands for, so a graph that becomes useful again (the data changed) is trusted after two
        good answers, while a rare lucky one does not start a new trial."""
        self._graph_skipped += 1
        self._graph_retry = self._graph_failing()
        if not self._graph_retry or self._graph_skipped >= GRAPH_RETRY:
            self._graph_skipped = 0
            return True
        return False

    def _graph_failing(self) -> bool:
        tries, misses = self._graph_record
        return tries >= GRAPH_TRIAL and misses > GRAPH_USEFUL * tries

    def _note_graph(self, missed: bool) -> None:
        tries, misses = self._graph_record
        if tries >= 2 * GRAPH_TRIAL:  # a moving window: the older half counts half
            tries, misses = tries / 2, misses / 2
        weight = GRAPH_RETRY if self._graph_retry else 1
        self._graph_record = (tries + weight, misses + weight * missed)

    def scope_mask(self, scope: str) -> "np.ndarray":
        """Which of the first ``count`` rows belong to ``scope`` (a boolean mask; all False for a
        scope with no vectors), cached until the matrix changes. Intake's exact neighbour search
        (``mem.stages.neighbours``) reads it."""
        import numpy as np

        code = self.scope_codes.get(scope)
        return self._scope_rows(code)[0] if code is not None else np.zeros(self.count, dtype=bool)

    def _scope_rows(self, code: int) -> "tuple[np.ndarray, np.ndarray]":
        """(mask, positions) of one scope's rows, kept until the matrix changes (a million-row
        comparison costs about half a millisecond a query)."""
        import numpy as np

        if code not in self._members:
            mask = self.scopes[: self.count] == code
            self._members[code] = (mask, np.flatnonzero(mask))
        return self._members[code]

    def _nearest_by_graph(self, graph: Any, q: "np.ndarray", k: int, mask: "np.ndarray | None",
                          members: int) -> list[tuple[int, float]] | None:
        """The graph's candidates in scope, rescored exactly; None when the scope is too small a
        share of the graph to find ``k`` of its rows among a bounded pool (scanned exactly then)."""
        import numpy as np

        from mem.store import ann

        pool = -(-ann.POOL * k * self.count // max(members, 1))  # enough candidates that k are in scope
        if pool > ann.MAX_POOL:
            return None
        rows = self._positions(graph.search(q, pool))
        if mask is not None:
            rows = rows[mask[rows]]
        if len(rows) < min(k, members):
            return None
        sims = self.matrix[rows] @ q
        top = np.argpartition(-sims, k - 1)[:k] if k < len(rows) else np.arange(len(rows))
        if self._graph_missed(q, rows[top], float(sims[top].min()), mask):
            return None
        found, sims = self.rowids[rows[top]], sims[top]
        order = np.lexsort((found, -sims))  # by similarity, ties by rowid, as the scan orders them
        return list(zip(found[order].tolist(), sims[order].tolist()))

    def _graph_missed(self, q: "np.ndarray", found: "np.ndarray", kth: float, mask: "np.ndarray | None") -> bool:
        """Whether a fixed random sample of the rows holds one the graph should have returned.

        HNSW walks greedily from one entry point: a group of rows far from the rest (LoCoMo's
        conversation turns among 100k templated notes) can be unreachable from it, and a query
        whose neighbours are there gets the wrong ones (recall@10 .34 on those questions). Such a
        group is many rows, so a sample of ``ann.SAMPLE`` of the rows nearly always holds some of
        them: then the caller scans exactly."""
        import numpy as np

        from mem.store import ann

        if self._sample is None:
            rng = np.random.default_rng(self.count)
            picked = np.unique(rng.integers(0, self.count, max(ann.SAMPLE_MIN, int(ann.SAMPLE * self.count))))
            space = self.projected if self.projected is not None else self.matrix
            self._sample = (self.count, picked, np.ascontiguousarray(space[picked]))
        _, picked, rows = self._sample
        coarse = self.projected is not None
        rough = rows @ (self.basis.T @ q if coarse else q)
        near = rough >= kth - (COARSE_MARGIN if coarse else 0.0)
        if mask is not None:
            near &= mask[picked]
        suspects = picked[near]
        suspects = suspects[~np.isin(suspects, found)]
        missed = bool(len(suspects)) and bool((self.matrix[suspects] @ q > kth).any())
        self._note_graph(missed)
        return missed

    def _positions(self, rowids: "np.ndarray") -> "np.ndarray":
        """Matrix rows of ``rowids`` (those the matrix holds)."""
        import numpy as np

        stored = self.rowids[: self.count]
        at = np.minimum(np.searchsorted(stored, rowids), self.count - 1)
        return at[(stored[at] == rowids) & (rowids >= 0)]

    def _graph(self) -> Any:
        """The HNSW graph brought up to date, when the matrix is large enough to want one and it
        is ready (None while a large one is built in the background, or without usearch)."""
        import threading

        from mem.store import ann

        width = self.basis.shape[1] if self.projected is not None else self.matrix.shape[1]
        if self.count * width < ann.MIN_SCAN or not ann.available():
            return None
        if self.graph is None:
            if self._building is None:
                self.graph = ann.load(self.store, self.matrix.shape[1])
                if self.graph is None:
                    basis = None if self.projected is None else self.basis.copy()
                    args = (self.matrix.shape[1], self.rowids[: self.count].copy(), self.matrix[: self.count], self.epoch,
                            basis)
                    if self.count < GRAPH_INLINE_ROWS:
                        self.graph = ann.build(*args)
                    else:
                        done: list[Any] = []
                        thread = threading.Thread(target=lambda: done.append(ann.build(*args)), daemon=True,
                                                  name="mem-ann-build")
                        thread.start()
                        self._building = (thread, done)
                        return None
            else:
                thread, done = self._building
                if thread.is_alive():
                    return None
                self._building = None
                if not done:  # the build failed (logged by the thread's excepthook): stay exact
                    return None
                self.graph = done[0]
                self.graph.saved_size = -1  # built here: write it
        ann.catch_up(self.graph, self.rowids[: self.count], self.matrix[: self.count], self.epoch)
        if len(self.graph) - self.graph.saved_size >= ann.SAVE_AFTER * len(self.graph):
            ann.save(self.store, self.graph)
        return self.graph

    def similarity_arrays(self, rowids: "list[int]", query: "np.ndarray") -> "tuple[np.ndarray, np.ndarray] | None":
        """Cosine of ``query`` to each stored rowid (missing ones left out) as two aligned arrays
        (rowids, cosines), from the warm matrix; None when cold (the caller reads the BLOBs)."""
        import numpy as np

        if self.matrix is None:
            return None
        self.sync()
        wanted = np.asarray(rowids, dtype=np.int64)
        if self.count == 0 or len(wanted) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        stored = self.rowids[: self.count]  # appended in rowid order, so sorted
        at = np.minimum(np.searchsorted(stored, wanted), self.count - 1)
        found = stored[at] == wanted
        return wanted[found], self.matrix[at[found]] @ np.asarray(query, dtype=np.float32)

    def nearest_many(self, queries: "np.ndarray", k: int, scopes: "list[str | None]",
                     floor: float = -1.0) -> list[list[tuple[int, float]]]:
        """``nearest`` for many queries at once (intake of a chunk): one matrix product instead of one per query.

        Only neighbours with cosine >= ``floor`` are returned: intake needs nothing below its
        see_also threshold, and skipping the rest spares a top-k partition over every column.
        Above ``COARSE_MIN_ROWS`` the product runs over the projection and each query's best
        ``COARSE_POOL`` x k rough candidates are rescored exactly, as in ``nearest``: at 100k that
        cut the chunk's neighbour search by about two thirds.

        >>> index.nearest_many(np.eye(2, 384, dtype=np.float32), 8, ["work", "work"], floor=0.5)  # doctest: +SKIP
        [[(12, 0.97)], []]
        """
        import numpy as np

        queries = np.asarray(queries, dtype=np.float32)
        if self.matrix is None and self.queries + len(queries) <= WARM_AFTER:  # a one-shot add: cold path
            return [[hit for hit in self.nearest(q, k, scope) if hit[1] >= floor] for q, scope in zip(queries, scopes)]
        self.queries += len(queries)
        self.sync()
        out: list[list[tuple[int, float]]] = []
        if self.count == 0:
            return [[] for _ in scopes]
        graph = self._graph()
        if graph is not None:
            return self._many_by_graph(graph, queries, k, scopes, floor)
        matrix, codes = self.matrix[: self.count], self.scopes[: self.count]
        # Above COARSE_MIN_ROWS the block's product runs in the projected space (a third of the
        # work), and only each query's best COARSE_POOL x k rough candidates are rescored exactly.
        coarse = self.projected is not None and COARSE_POOL * k < self.count
        space = self.projected[: self.count] if coarse else matrix
        pool = COARSE_POOL * k
        masks: dict[str | None, Any] = {}
        for start in range(0, len(queries), BLOCK):  # blocks bound the (block x count) similarity matrix
            block = queries[start : start + BLOCK]
            sims_block = (block @ self.basis if coarse else block) @ space.T
            for sims, q, scope in zip(sims_block, block, scopes[start : start + BLOCK]):
                if scope is not None and scope not in masks:
                    code = self.scope_codes.get(scope)
                    masks[scope] = None if code is None else codes == code
                candidates = np.flatnonzero(sims >= floor - (COARSE_MARGIN if coarse else 0.0))
                if scope is not None:
                    mask = masks[scope]
                    candidates = candidates[mask[candidates]] if mask is not None else candidates[:0]
                if coarse:
                    if len(candidates) > pool:
                        candidates = candidates[np.argpartition(-sims[candidates], pool - 1)[:pool]]
                    values = matrix[candidates] @ q
                    keep = values >= floor
                    candidates, values = candidates[keep], values[keep]
                else:
                    values = sims[candidates]
                if len(candidates) > k:
                    top = np.argpartition(-values, k - 1)[:k]
                    candidates, values = candidates[top], values[top]
                order = sorted(range(len(candidates)), key=lambda j: (-float(values[j]), int(self.rowids[candidates[j]])))
                out.append([(int(self.rowids[candidates[j]]), float(values[j])) for j in order])
        return out

    def _many_by_graph(self, graph: Any, queries: "np.ndarray", k: int, scopes: "list[str | None]",
                       floor: float) -> list[list[tuple[int, float]]]:
        """``nearest_many`` from the graph's candidates, rescored exactly; a query whose scope is too
        small a share of the graph is answered by ``nearest`` (an exact scan of the scope)."""
        import numpy as np

        from mem.store import ann

        masks: dict[str | None, Any] = {None: None}
        sizes: dict[str | None, int] = {None: self.count}
        for scope in set(scopes) - {None}:
            code = self.scope_codes.get(scope)
            mask, members = (None, ()) if code is None else self._scope_rows(code)
            masks[scope], sizes[scope] = mask, len(members)
        pools = {scope: -(-ann.POOL * k * self.count // max(size, 1)) for scope, size in sizes.items()}
        wanted = [i for i, scope in enumerate(scopes) if sizes[scope] and pools[scope] <= ann.MAX_POOL]
        keys = graph.search_many(queries[wanted], max(pools[scopes[i]] for i in wanted)) if wanted else None
        key_row = {i: j for j, i in enumerate(wanted)}
        out: list[list[tuple[int, float]]] = [[] for _ in scopes]
        for i, q in enumerate(queries):
            scope = scopes[i]
            if not sizes[scope]:
                continue
            if pools[scope] > ann.MAX_POOL:
                out[i] = [hit for hit in self.nearest(q, k, scope) if hit[1] >= floor]
                continue
            rows = self._positions(keys[key_row[i]])
            if masks[scope] is not None:
                rows = rows[masks[scope][rows]]
            sims = self.matrix[rows] @ q
            keep = sims >= floor
            rows, sims = rows[keep], sims[keep]
            order = sorted(range(len(rows)), key=lambda j: (-float(sims[j]), int(self.rowids[rows[j]])))[:k]
            out[i] = [(int(self.rowids[rows[j]]), float(sims[j])) for j in order]
        return out

    def sync(self) -> None:
        """Bring the matrix up to date with the database (cheap when nothing changed)."""
        epoch = self.store.get_meta("vectors_epoch") or "0"
        if self.matrix is None or epoch != self.epoch or not self._newest_still_stored():
            self._load(after=0, epoch=epoch)
            return
        if self.store.max_vector_rowid() > self.loaded_max:
            self._load(after=self.loaded_max, epoch=epoch)

    def _newest_still_stored(self) -> bool:
        """Whether the newest row read is still the memory it was: an insert rolled back after this
        index read it (a failed write group, a savepoint) leaves a row that is gone, or whose rowid
        the next insert reuses with another vector."""
        return self.loaded_max == 0 or self.store.memory_id_at(self.loaded_max) == self.loaded_id

    def _load(self, *, after: int, epoch: str) -> None:
        import numpy as np

        self._members, self._sample = {}, None
        if after == 0:
            self.matrix, self.rowids, self.scopes, self.count, self.loaded_max = None, None, None, 0, 0
            self.scope_codes = {}
            self.generation += 1
            self.cells = None
            self.basis = self.projected = self.narrow = None  # the graph stays: ann.catch_up finds what changed
        # Room for every row at once: growing by doubling copied the matrix and its projection over and
        # over (at a million rows 13 of the 24 s a load took here).
        reserve = self.count + self.store.vectors_at_most(after)
        for rowids, scopes, block in self.store.iter_all_vectors(after=after):
            codes = np.array([self.scope_codes.setdefault(s, len(self.scope_codes)) for s in scopes], dtype=np.int32)
            self._append(np.asarray(rowids, dtype=np.int64), codes, block, reserve)
        if self.matrix is None:  # an empty database still gets a (0, dim) matrix so it counts as warm
            dim = self.store.vector_dim() or 1
            self.matrix = np.zeros((0, dim), dtype=np.float32)
            self.rowids = np.zeros(0, dtype=np.int64)
            self.scopes = np.zeros(0, dtype=np.int32)
        self.epoch = epoch
        self.loaded_id = self.store.memory_id_at(self.loaded_max) if self.loaded_max else None

    def add(self) -> None:
        """After this process inserted vectors: a warm matrix picks them up (one indexed query)."""
        if self.matrix is not None:
            self.sync()

    def _append(self, rowids: "np.ndarray", codes: "np.ndarray", block: "np.ndarray", reserve: int = 0) -> None:
        import numpy as np

        needed = self.count + len(rowids)
        if self.matrix is None or self.matrix.shape[1] != block.shape[1] or needed > len(self.matrix):
            capacity = max(needed, reserve, 2 * (0 if self.matrix is None else len(self.matrix)), 1024)
            matrix = np.zeros((capacity, block.shape[1]), dtype=np.float32)
            ids = np.zeros(capacity, dtype=np.int64)
            scopes = np.zeros(capacity, dtype=np.int32)
            if self.matrix is not None and self.matrix.shape[1] == block.shape[1]:
                matrix[: self.count] = self.matrix[: self.count]
                ids[: self.count] = self.rowids[: self.count]
                scopes[: self.count] = self.scopes[: self.count]
            else:
                self.count = 0
            self.matrix, self.rowids, self.scopes = matrix, ids, scopes
        self.matrix[self.count : needed] = block
        self.rowids[self.count : needed] = rowids
        self.scopes[self.count : needed] = codes
        self._project(self.count, needed)
        self.count = needed
        if len(rowids):
            self.loaded_max = max(self.loaded_max, int(rowids.max()))

    def _project(self, start: int, end: int) -> None:
        """Keep ``projected`` aligned with rows ``start:end``; choose the basis once the matrix is large."""
        import numpy as np

        dim = self.matrix.shape[1]
        if self.basis is None or self.basis.shape[0] != dim:
            self.basis = self.projected = self.narrow = None
            if end < COARSE_MIN_ROWS or dim < 2 * COARSE_DIMS:
                return
            rows = self.matrix[:end]
            values, vectors = np.linalg.eigh(rows.T @ rows)  # uncentred: dot products are what we approximate
            if values[-COARSE_DIMS:].sum() < COARSE_ENERGY * values.sum():
                self.basis = np.zeros((dim, 0), dtype=np.float32)  # decided: this space does not compress
                return
            self.basis = np.ascontiguousarray(vectors[:, ::-1][:, :COARSE_DIMS], dtype=np.float32)
            start = 0
        if self.basis.shape[1] == 0:
            return
        if self.projected is None or len(self.projected) < len(self.matrix):
            grown = np.zeros((len(self.matrix), COARSE_DIMS), dtype=np.float32)
            if self.projected is not None:
                grown[:start] = self.projected[:start]
            self.projected = grown
        self.projected[start:end] = self.matrix[start:end] @ self.basis


def top_positions(scores: "np.ndarray", n: int, mask: "np.ndarray | None" = None) -> "np.ndarray":
    """Positions of the ``n`` largest ``scores``, in no particular order (all of them when there are no
    more than ``n``); with a ``mask``, the largest where it is True, padded with others when fewer
    than ``n`` are (the caller drops those). Ties at the n-th value fall as ``argpartition`` lets them.

    Long arrays are cut first at a value read off a sample (``TOP_STRIDE``, ``TOP_SLACK``): when at
    least ``n`` rows reach it, every row below it is below the n-th best, so partitioning only those
    that reach it gives the full partition's answer; when fewer reach it, the full partition runs.
    """
    import numpy as np

    if len(scores) <= n:
        return np.arange(len(scores))
    if len(scores) >= TOP_MIN_ROWS and 4 * n <= len(scores):
        sample = scores[::TOP_STRIDE] if mask is None else scores[::TOP_STRIDE][mask[::TOP_STRIDE]]
        above = int(TOP_SLACK * n / TOP_STRIDE) + 16  # sampled rows expected at or above the cut
        if above < len(sample):
            cut = np.partition(sample, len(sample) - above)[len(sample) - above]
            reach = scores >= cut
            if mask is not None:
                reach &= mask
            kept = np.flatnonzero(reach)
            if len(kept) >= n:
                return kept[np.argpartition(-scores[kept], n - 1)[:n]]
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    return np.argpartition(-scores, n - 1)[:n]
