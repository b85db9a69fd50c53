"""An HNSW graph (the ``usearch`` library) over the warm vector matrix, for stores too large to scan.

At a million 384-wide vectors even the 128-wide projected scan of ``store/vectors.py`` reads 512 MB
a query (about 48 ms here), more than a whole search may take. Where a scan would read more than
``MIN_SCAN`` floats the warm index asks this graph for candidates instead and rescores them exactly against its float32 matrix,
so the scores (and, nearly always, the neighbours) are the exact ones.

The graph holds every stored vector under its rowid, as int8 after dividing by its largest
component (cosine is unchanged, int8 uses its whole range), plus one fingerprint per row (an
integer hash of the float32 bits) so that it can be brought up to date without a rebuild:
rows newer than the graph are added, and after the ``vectors_epoch`` moved (a vector replaced or
deleted, a scope move) the fingerprints tell which rows changed.

It is kept in the user's cache folder (``$XDG_CACHE_HOME/mem/ann``), named by a digest of the
database's location, as two files written atomically: the graph and its rows (rowids,
fingerprints, the state it matches and a CRC of the graph file). A process that finds them loads
instead of rebuilding; a missing, foreign, truncated or corrupt pair is ignored (and rebuilt),
never trusted. ``forget --purge`` removes the files (they hold an int8 copy of the vector); a
process that has removed rows from its graph never writes it back, so a purged vector does not
return to disk. Without ``usearch`` installed, search stays exact.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from mem.store import Store

log = logging.getLogger(__name__)

# The graph serves a warm index whose scan would read at least MIN_SCAN floats a query: 200k
# vectors through the 128-wide projection (about 10 ms here), 50k unprojected hash vectors. Below
# that the scan is exact and fast enough (bench/README.md, "1M memories").
MIN_SCAN = 200_000 * 128
CONNECTIVITY = 16  # HNSW M
EXPANSION_ADD = 128  # ef_construction
EXPANSION = 256  # ef at search time (raised to the pool when larger)
EXPANSION_MANY = 64  # ef for a chunk's neighbours at intake (a few each, above a cosine floor)
POOL = 2  # candidates asked of the graph per neighbour wanted, all rescored exactly
MAX_POOL = 4096  # a scope so small that it needs more is scanned exactly instead
# After each graph search a fixed random SAMPLE of the rows (at least SAMPLE_MIN) is scored: one that
# beats the graph's k-th means the graph missed a region, and the search scans exactly instead.
SAMPLE = 0.05
SAMPLE_MIN = 2000
SAVE_AFTER = 0.05  # write the graph back once this share of it was added since it was written (a new process adds the rest)
FORMAT = 2


def usearch_index() -> Any:
    """usearch's ``Index`` class, imported only after onnxruntime. The other way round, onnxruntime
    1.32 dies of a segmentation fault on import (or on its first session) in a process that already
    holds usearch 2.26; this order is safe, and a process that never embeds pays one import."""
    try:
        import onnxruntime  # noqa: F401
    except ImportError:  # a store of hash vectors needs no model
        pass
    from usearch.index import Index

    return Index


@functools.cache
def available() -> bool:
    """Whether usearch imports (asked once a process)."""
    try:
        usearch_index()
    except ImportError:
        return False
    return True


def peak_scaled(vectors: "np.ndarray") -> "np.ndarray":
    """Each vector over its largest component: the cosine is the same, and int8 storage (which
    clips to [-1, 1] x 127) keeps its precision (MiniLM's components are about 0.05)."""
    import numpy as np

    peaks = np.abs(vectors).max(axis=-1, keepdims=True)
    return np.ascontiguousarray(vectors / np.where(peaks > 0, peaks, 1), dtype=np.float32)


def fingerprints(block: "np.ndarray") -> "np.ndarray":
    """One uint64 per row, a hash of its float32 bits (integer arithmetic: exact, no rounding)."""
    import numpy as np

    words = np.ascontiguousarray(block, dtype=np.float32).view(np.uint32)
    weights = np.random.default_rng(0x6D656D).integers(1, 2**63, size=words.shape[1], dtype=np.uint64) | np.uint64(1)
    out = np.zeros(len(words), dtype=np.uint64)
    for start in range(0, len(words), 16384):  # bounded temporaries
        part = words[start : start + 16384].astype(np.uint64)
        with np.errstate(over="ignore"):
            out[start : start + len(part)] = (part * weights).sum(axis=1, dtype=np.uint64)
    return out


class Graph:
    """The usearch index, keyed by rowid, and what it holds: sorted rowids and their fingerprints.

    With a ``basis`` (the warm index's principal projection, when the vectors compress) the graph
    holds and is searched with the projected vectors: a quarter to a third of the distance work
    (a million rows build in a third of the time) in the space the scan's coarse pass already
    trusts, since every candidate is rescored in full. It keeps its own basis, so a later
    process's projection (recomputed from the data) does not change what its points mean."""

    def __init__(self, dim: int, basis: "np.ndarray | None" = None, index: Any = None) -> None:
        import numpy as np
        Index = usearch_index()

        self.dim = dim
        self.basis = basis
        self.width = dim if basis is None else basis.shape[1]
        self.index = index if index is not None else Index(
            ndim=self.width, metric="cos", dtype="i8", connectivity=CONNECTIVITY, expansion_add=EXPANSION_ADD)
        self.rowids = np.zeros(0, dtype=np.int64)
        self.prints = np.zeros(0, dtype=np.uint64)
        self.epoch: str | None = None  # the vectors_epoch the rows were read under
        self.removed = False  # rows were deleted from it: never written back (see the module's doc)
        self.saved_size = 0  # rows when it was last written (or read)

    def __len__(self) -> int:
        return len(self.rowids)

    def add(self, rowids: "np.ndarray", block: "np.ndarray", prints: "np.ndarray | None" = None) -> None:
        """Insert rows (rowids not in the graph), keeping ``rowids`` sorted."""
        import numpy as np

        if not len(rowids):
            return
        prints = fingerprints(block) if prints is None else prints
        self.index.add(np.asarray(rowids, dtype=np.uint64), self._space(block), threads=os.cpu_count() or 1)
        rowids = np.asarray(rowids, dtype=np.int64)
        if not len(self.rowids) or rowids.min() > self.rowids[-1]:
            self.rowids = np.concatenate([self.rowids, rowids])
            self.prints = np.concatenate([self.prints, prints])
        else:
            merged = np.concatenate([self.rowids, rowids])
            order = np.argsort(merged, kind="stable")
            self.rowids, self.prints = merged[order], np.concatenate([self.prints, prints])[order]

    def _space(self, vectors: "np.ndarray") -> "np.ndarray":
        return peak_scaled(vectors if self.basis is None else vectors @ self.basis)

    def remove(self, rowids: "np.ndarray") -> None:
        import numpy as np

        if not len(rowids):
            return
        self.index.remove(np.asarray(rowids, dtype=np.uint64))
        keep = ~np.isin(self.rowids, rowids)
        self.rowids, self.prints = self.rowids[keep], self.prints[keep]

    def search(self, query: "np.ndarray", count: int) -> "np.ndarray":
        """Rowids of about the ``count`` nearest rows (approximate; rescore them)."""
        import numpy as np

        count = min(count, len(self.rowids))
        if count <= 0:
            return np.zeros(0, dtype=np.int64)
        self.index.expansion_search = max(EXPANSION, count)
        return self.index.search(self._space(query), count, threads=1).keys.astype(np.int64)

    def search_many(self, queries: "np.ndarray", count: int) -> "np.ndarray":
        """(len(queries), count) rowids, -1 where fewer were found."""
        import numpy as np

        count = min(count, len(self.rowids))
        self.index.expansion_search = max(EXPANSION_MANY, count)
        found = self.index.search(self._space(queries), count, threads=os.cpu_count() or 1)
        keys = found.keys.astype(np.int64)
        keys[np.arange(count)[None, :] >= found.counts[:, None]] = -1
        return keys


def build(dim: int, rowids: "np.ndarray", matrix: "np.ndarray", epoch: str, basis: "np.ndarray | None" = None) -> Graph:
    """A graph of every row (the matrix as the warm index holds it), in blocks (bounded temporaries)."""
    graph = Graph(dim, basis)
    for start in range(0, len(rowids), 65536):
        graph.add(rowids[start : start + 65536], matrix[start : start + 65536])
    graph.epoch = epoch
    return graph


# ------------------------------------------------------------------------------------ the files
def cache_folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mem" / "ann"


def paths_for(store: "Store") -> tuple[Path, Path]:
    """(graph file, rows file) of this database, named by a digest of where it is."""
    where = str(store.path) if store.backend != "sqlite" else str(Path(store.path).resolve())
    digest = hashlib.sha256(where.encode()).hexdigest()[:24]
    folder = cache_folder()
    return folder / f"{digest}.usearch", folder / f"{digest}.rows.npz"


def _crc(path: Path) -> int:
    crc = 0
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 22):
            crc = zlib.crc32(chunk, crc)
    return crc


def _identity(store: "Store") -> str:
    return f"{store.get_meta('embedder') or ''}|{store.path}"


def save(store: "Store", graph: Graph) -> bool:
    """Write the graph and its rows (each to a temporary file, then renamed); False when skipped or failed."""
    import numpy as np

    if graph.removed or graph.epoch is None:
        return False
    graph.saved_size = len(graph)  # tried: the next attempt waits for as many new rows
    index_path, rows_path = paths_for(store)
    tmp_index = index_path.with_name(index_path.name + f".{os.getpid()}.tmp")
    tmp_rows = rows_path.with_name(rows_path.name + f".{os.getpid()}.tmp.npz")
    try:
        index_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        graph.index.save(str(tmp_index))
        state = {"format": FORMAT, "identity": _identity(store), "epoch": graph.epoch, "dim": graph.dim,
                 "size": len(graph), "bytes": tmp_index.stat().st_size, "crc": _crc(tmp_index)}
        basis = np.zeros((0, 0), dtype=np.float32) if graph.basis is None else graph.basis
        np.savez(tmp_rows, rowids=graph.rowids, prints=graph.prints, basis=basis, state=np.array(json.dumps(state)))
        for path in (tmp_index, tmp_rows):
            os.chmod(path, 0o600)  # an int8 copy of every vector: as private as the database
        os.replace(tmp_index, index_path)
        os.replace(tmp_rows, rows_path)
        if (store.get_meta("vectors_epoch") or "0") != graph.epoch and purged_since(store, graph):
            discard(store)  # a purge committed while we wrote: its vector must not stay on disk
            return False
    except Exception as exc:  # a full disk or a read-only cache costs the next process a rebuild, nothing else
        log.warning("could not write the vector graph %s: %s", index_path, exc)
        for path in (tmp_index, tmp_rows):
            path.unlink(missing_ok=True)
        return False
    return True


def purged_since(store: "Store", graph: Graph) -> bool:
    """Whether a row the graph holds is gone from the database (checked only when the epoch moved)."""
    import numpy as np

    stored = np.fromiter((r for r, in store.conn.execute("SELECT rowid FROM vectors")), dtype=np.int64)
    return bool(len(graph.rowids) and not np.isin(graph.rowids, stored).all())


def load(store: "Store", dim: int) -> Graph | None:
    """The saved graph of this database, or None when there is none or it cannot be trusted."""
    import numpy as np

    index_path, rows_path = paths_for(store)
    if not index_path.exists() or not rows_path.exists():
        return None
    try:
        with np.load(rows_path, allow_pickle=False) as saved:
            rowids, prints, state = saved["rowids"], saved["prints"], json.loads(str(saved["state"]))
            basis = saved["basis"] if saved["basis"].size else None
        if (state.get("format") != FORMAT or state.get("identity") != _identity(store) or state.get("dim") != dim
                or state.get("size") != len(rowids) or len(prints) != len(rowids)
                or index_path.stat().st_size != state.get("bytes") or _crc(index_path) != state.get("crc")):
            return None
        Index = usearch_index()

        index = Index.restore(str(index_path))
        if index is None or len(index) != len(rowids) or index.ndim != (dim if basis is None else basis.shape[1]) \
                or (basis is not None and basis.shape[0] != dim):
            return None
    except Exception as exc:  # a corrupt file must never break a search: rebuild instead
        log.warning("ignoring the vector graph %s: %s", index_path, exc)
        return None
    graph = Graph(dim, None if basis is None else basis.astype(np.float32), index)
    graph.rowids, graph.prints = rowids.astype(np.int64), prints.astype(np.uint64)
    graph.epoch = str(state["epoch"])
    graph.saved_size = len(graph)
    return graph


def discard(store: "Store") -> None:
    """Remove this database's graph files (``forget --purge``: they hold a copy of the vector)."""
    for path in paths_for(store):
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("could not remove %s: %s", path, exc)


def catch_up(graph: Graph, rowids: "np.ndarray", matrix: "np.ndarray", epoch: str) -> int:
    """Bring ``graph`` to hold exactly ``rowids`` (sorted) with the vectors of ``matrix``; returns rows added.

    Under the same epoch only newer rows can have appeared; otherwise the fingerprints find the
    rows deleted, replaced or new (a scope move changes none: scopes are filtered outside the graph).
    """
    import numpy as np

    if graph.epoch == epoch:
        if not len(rowids) or (len(graph) and graph.rowids[-1] >= rowids[-1]):
            return 0
        start = int(np.searchsorted(rowids, graph.rowids[-1], side="right")) if len(graph) else 0
        graph.add(rowids[start:], matrix[start:])
        return len(rowids) - start
    current = fingerprints(matrix)
    at = np.minimum(np.searchsorted(rowids, graph.rowids), max(len(rowids) - 1, 0))
    present = (rowids[at] == graph.rowids) if len(rowids) else np.zeros(len(graph), dtype=bool)
    unchanged = present & (current[at] == graph.prints) if len(rowids) else present
    gone = graph.rowids[~present]
    graph.remove(np.concatenate([gone, graph.rowids[present & ~unchanged]]))
    graph.removed = graph.removed or bool(len(gone))
    missing = ~np.isin(rowids, graph.rowids)
    graph.add(rowids[missing], matrix[missing], current[missing])
    graph.epoch = epoch
    return int(missing.sum())
