"""Approximate nearest-neighbour libraries against exact search, on real-text MiniLM vectors.

    python bench/ann.py --dir DIR                       # 100k synthetic + LoCoMo turns, every library
    python bench/ann.py --dir DIR --synthetic 20000 --libraries usearch

The vectors: the LoCoMo dev turns and ``--synthetic`` texts from ``bench/synth.py``, embedded once
by MiniLM and cached in DIR (``real-N.npy``); the queries: the LoCoMo questions, synthetic queries
and held-out synthetic memory texts (intake searches with memories), also MiniLM. Templated hash
vectors are not used here: they form near-duplicate clusters that give HNSW a recall no real text
gives. For each library (usearch, hnswlib, faiss-cpu; HNSW, M 16, ef_construction 128, cosine):
build time, index bytes on disk, RSS growth, and at a few ef (the search's candidate list): recall
of the exact top 10 and top 200 (the semantic channel asks for 200), p50 of one 200-NN query.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import memory_mb, percentile  # noqa: E402  (also puts the repo on sys.path)
from synth import memory_texts, queries  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo" / "locomo_dev.json"
M, EF_BUILD = 16, 128
EFS = (200, 300, 500)
K = 200


def embed_cached(path: Path, texts: list[str], batch: int = 2048) -> Any:
    """MiniLM vectors of ``texts``, cached in ``path`` (resumable: partial parts are kept)."""
    import numpy as np

    from mem.embed import get_embedder

    if path.exists():
        return np.load(path)
    embedder = get_embedder("minilm")
    parts = []
    for start in range(0, len(texts), batch):
        part = path.with_suffix(f".part{start // batch}.npy")
        if part.exists():
            parts.append(np.load(part))
            continue
        vectors = embedder.embed(texts[start : start + batch])
        np.save(part, vectors)
        parts.append(vectors)
        print(f"  embedded {start + len(vectors)}/{len(texts)}", file=sys.stderr, flush=True)
    matrix = np.concatenate(parts) if parts else np.zeros((0, 384), dtype=np.float32)
    np.save(path, matrix)
    for start in range(0, len(texts), batch):
        path.with_suffix(f".part{start // batch}.npy").unlink(missing_ok=True)
    return matrix


def real_vectors(folder: Path, synthetic: int, data: Path) -> tuple[Any, Any, list[str]]:
    """(stored vectors, query vectors, each query's set), all MiniLM, from LoCoMo and ``synthetic`` synth texts."""
    import numpy as np

    locomo = json.loads(data.read_text())
    turns = [t["text"] for d in locomo for key, session in d["conversation"].items()
             if key.startswith("session_") and isinstance(session, list) for t in session]
    questions = [q["question"] for d in locomo for q in d["qa"] if q.get("category") in (1, 2, 3, 4)]
    texts = list(memory_texts(synthetic + 500))
    stored = np.concatenate([embed_cached(folder / "locomo-turns.npy", turns),
                             embed_cached(folder / f"synth-{synthetic}.npy", texts[:synthetic])])
    parts = {"LoCoMo questions": embed_cached(folder / "locomo-questions.npy", questions),
             "synthetic queries": embed_cached(folder / "synth-queries.npy", queries(500)),
             "held-out synthetic memories": embed_cached(folder / f"synth-heldout-{synthetic}.npy", texts[synthetic:])}
    return stored, np.concatenate(list(parts.values())), [name for name, part in parts.items() for _ in part]


def database_vectors(db: Path, n: int) -> tuple[Any, Any, list[str]]:
    """The first ``n`` stored vectors of a mem database and the 1,000 after them (e.g. hash vectors)."""
    import sqlite3

    import numpy as np

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = [r[0] for r in conn.execute("SELECT f32 FROM vectors ORDER BY rowid LIMIT ?", (n + 1000,))]
    matrix = np.frombuffer(b"".join(rows), dtype=np.float32).reshape(len(rows), -1)
    return np.ascontiguousarray(matrix[:n]), np.ascontiguousarray(matrix[n:]), ["held-out rows"] * (len(matrix) - n)


def exact_top(stored: Any, asked: Any, k: int) -> Any:
    import numpy as np

    out = np.zeros((len(asked), k), dtype=np.int64)
    for start in range(0, len(asked), 64):
        sims = asked[start : start + 64] @ stored.T
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        rows = np.take_along_axis(sims, top, axis=1)
        out[start : start + 64] = np.take_along_axis(top, np.argsort(-rows, axis=1, kind="stable"), axis=1)
    return out


def peak_scaled(vectors: Any) -> Any:
    """Each vector over its largest component: cosine is unchanged and int8 storage (which clips to
    [-1, 1] x 127) uses its whole range (MiniLM components are about 0.05)."""
    import numpy as np

    peaks = np.abs(vectors).max(axis=-1, keepdims=True)
    return (vectors / np.where(peaks > 0, peaks, 1)).astype(np.float32)


class Usearch:
    name = "usearch i8"

    def __init__(self, dim: int, dtype: str = "i8") -> None:
        from mem.store.ann import usearch_index

        Index = usearch_index()  # after onnxruntime, never before (a segfault otherwise)
        self.name = f"usearch {dtype}"
        self.index = Index(ndim=dim, metric="cos", dtype=dtype, connectivity=M, expansion_add=EF_BUILD)

    def build(self, vectors: Any) -> None:
        import numpy as np

        self.index.add(np.arange(len(vectors), dtype=np.uint64), peak_scaled(vectors), threads=os.cpu_count() or 1)

    def search(self, q: Any, k: int, ef: int) -> list[int]:
        self.index.expansion_search = ef
        return self.index.search(peak_scaled(q), k).keys.tolist()

    def save(self, path: Path) -> None:
        self.index.save(str(path))


class Hnswlib:
    name = "hnswlib f32"

    def __init__(self, dim: int) -> None:
        import hnswlib

        self.index = hnswlib.Index(space="cosine", dim=dim)
        self.dim = dim

    def build(self, vectors: Any) -> None:
        import numpy as np

        self.index.init_index(max_elements=len(vectors), M=M, ef_construction=EF_BUILD)
        self.index.set_num_threads(os.cpu_count() or 1)
        self.index.add_items(vectors, np.arange(len(vectors)))
        self.index.set_num_threads(1)

    def search(self, q: Any, k: int, ef: int) -> list[int]:
        self.index.set_ef(ef)
        return self.index.knn_query(q, k=k)[0][0].tolist()

    def save(self, path: Path) -> None:
        self.index.save_index(str(path))


class Faiss:
    name = "faiss HNSWFlat f32"

    def __init__(self, dim: int) -> None:
        import faiss

        self.faiss = faiss
        self.index = faiss.IndexHNSWFlat(dim, M, faiss.METRIC_INNER_PRODUCT)
        self.index.hnsw.efConstruction = EF_BUILD

    def build(self, vectors: Any) -> None:
        self.faiss.omp_set_num_threads(os.cpu_count() or 1)
        self.index.add(vectors)
        self.faiss.omp_set_num_threads(1)

    def search(self, q: Any, k: int, ef: int) -> list[int]:
        self.index.hnsw.efSearch = ef
        return self.index.search(q.reshape(1, -1), k)[1][0].tolist()

    def save(self, path: Path) -> None:
        self.faiss.write_index(self.index, str(path))


LIBRARIES = {"usearch": lambda d: Usearch(d, "i8"), "usearch-f16": lambda d: Usearch(d, "f16"),
             "hnswlib": Hnswlib, "faiss": Faiss}


def recall_line(name: str, got: list[list[int]], exact: Any, stored: Any, asked: Any, times: list[float]) -> str:
    """recall@10 (strict, and with ties counted), recall@200, p50 and p95 of one query set."""
    import numpy as np

    hit10 = hit200 = tied10 = 0
    for found, truth, q in zip(got, exact, asked):
        hit10 += len(set(found[:10]) & set(truth[:10].tolist()))
        hit200 += len(set(found) & set(truth.tolist()))
        # a row as similar as the exact 10th is as good a 10th (near-duplicate vectors tie)
        tied10 += min(10, int((stored[np.asarray(found[:10], dtype=np.int64)] @ q >= float(stored[truth[9]] @ q) - 1e-6).sum()))
    n = len(got)
    return (f"{name:<28} recall@10 {hit10 / (10 * n):.4f} (ties {tied10 / (10 * n):.4f})  recall@200 "
            f"{hit200 / (K * n):.4f}  p50 {statistics.median(times):.2f} ms  p95 {percentile(times, 0.95):.2f} ms")


def by_set(sets: list[str]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, name in enumerate(sets):
        out.setdefault(name, []).append(i)
    return out


def measure(make: Any, stored: Any, asked: Any, exact: Any, sets: list[str], efs: tuple[int, ...], pool: int) -> None:
    import numpy as np

    before = memory_mb()
    index = make(stored.shape[1])
    started = time.perf_counter()
    index.build(stored)
    build_s = time.perf_counter() - started
    grown = memory_mb() - before
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "index"
        index.save(path)
        size_mb = path.stat().st_size / 1e6
    print(f"  {index.name:<20} build {build_s:7.1f} s  file {size_mb:7.1f} MB  RSS +{grown:7.1f} MB")
    for ef in efs:
        got, times = [], []
        for q in asked:
            started = time.perf_counter()
            found = index.search(q, pool, max(ef, pool))
            if pool > K:  # exact rescoring of the pool, as mem does
                found = np.asarray(found)[np.argsort(-(stored[found] @ q), kind="stable")[:K]].tolist()
            times.append((time.perf_counter() - started) * 1000)
            got.append(found)
        for name, rows in by_set(sets).items():
            print(f"    ef {ef:>4}  " + recall_line(name, [got[i] for i in rows], exact[rows], stored, asked[rows],
                                                    [times[i] for i in rows]))


def measure_mem(folder: Path, stored: Any, asked: Any, exact: Any, sets: list[str]) -> None:
    """mem's own path (``VectorIndex.nearest`` k 200: the graph, exact rescoring, the sample check and
    its exact fallback) on a store holding these vectors, the graph forced on at this size."""
    import numpy as np

    from mem.records import Memory
    from mem.store import Store, ann
    from mem.store import vectors as V

    db = folder / f"ann-real-{len(stored)}.db"
    fresh = not db.exists()
    store = Store.open(db)
    store.bind_embedder("minilm", "ann-bench", lambda: stored.shape[1])
    if fresh:
        for start in range(0, len(stored), 5000):
            with store.write():
                rows = []
                for i in range(start, min(len(stored), start + 5000)):
                    memory = Memory(id=f"0190{i:08d}-0000-7000-8000-000000000000", text=f"v{i}", scope="bench",
                                    created_at="2026-01-01T00:00:00Z", updated_at="2026-01-01T00:00:00Z",
                                    content_hash=str(i))
                    rows.append((store.insert_memory(memory), "bench", stored[i]))
                store.put_vectors(rows)
    ann.MIN_SCAN, V.GRAPH_INLINE_ROWS = 0, 10**9  # the graph at any size, built before the first search
    ann.discard(store)
    index = V.VectorIndex(store)
    index.queries = 99
    started = time.perf_counter()
    index.nearest(asked[0], K, None)
    print(f"  mem VectorIndex ({len(stored)} rows): graph built in {time.perf_counter() - started:.1f} s, "
          f"sample {ann.SAMPLE:.0%}")
    fallbacks = []
    check = V.VectorIndex._graph_missed

    def counted(self: Any, *args: Any) -> bool:
        fallbacks[-1] = check(self, *args)
        return fallbacks[-1]

    V.VectorIndex._graph_missed = counted  # type: ignore[method-assign]
    got, times = [], []
    for q in asked:
        fallbacks.append(False)
        started = time.perf_counter()
        found = index.nearest(q, K, None)
        times.append((time.perf_counter() - started) * 1000)
        got.append([rowid - 1 for rowid, _ in found])  # rowids count from 1
    V.VectorIndex._graph_missed = check  # type: ignore[method-assign]
    graph, index.graph = index.graph, None
    ann.MIN_SCAN = 10**15
    scan_times = []
    for q in asked[:200]:
        started = time.perf_counter()
        index.nearest(q, K, None)
        scan_times.append((time.perf_counter() - started) * 1000)
    print(f"    the exact (projected) scan alone: p50 {statistics.median(scan_times):.2f} ms")
    index.graph = graph
    for name, rows in by_set(sets).items():
        share = np.mean([fallbacks[i] for i in rows])
        print("    " + recall_line(name, [got[i] for i in rows], exact[rows], stored, asked[rows],
                                   [times[i] for i in rows]) + f"  exact fallback {share:.0%}")
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, required=True, help="where the MiniLM vectors are cached")
    parser.add_argument("--synthetic", type=int, default=100_000)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--libraries", default="usearch,usearch-f16,hnswlib,faiss,mem",
                        help="any of usearch, usearch-f16, hnswlib, faiss, and mem (mem's own search path)")
    parser.add_argument("--ef", default=",".join(map(str, EFS)))
    parser.add_argument("--vectors-from", type=Path, metavar="DB",
                        help="instead: the first --synthetic vectors of a mem database, the next 1,000 as queries")
    parser.add_argument("--pool", type=int, default=K, help="candidates asked of the index, rescored exactly")
    parser.add_argument("--queries", type=int, default=1000, help="queries measured (spread over the sets)")
    args = parser.parse_args()
    import numpy as np

    args.dir.mkdir(parents=True, exist_ok=True)
    if args.vectors_from:
        stored, asked, sets = database_vectors(args.vectors_from, args.synthetic)
    else:
        stored, asked, sets = real_vectors(args.dir, args.synthetic, args.data)
    pick = np.linspace(0, len(asked) - 1, min(args.queries, len(asked))).astype(int)
    asked, sets = np.ascontiguousarray(asked[pick]), [sets[i] for i in pick]
    exact = exact_top(stored, asked, K)
    what = f"from {args.vectors_from.name}" if args.vectors_from else f"MiniLM (LoCoMo turns + {args.synthetic} synthetic)"
    print(f"ann  {len(stored)} stored vectors {what}, "
          f"{len(asked)} queries, k {K} from a pool of {args.pool}, M {M}, ef_construction {EF_BUILD}, "
          f"cpus={os.cpu_count()}")
    started = time.perf_counter()
    for q in asked[:100]:
        sims = stored @ q
        np.argpartition(-sims, K - 1)[:K]
    print(f"  exact numpy product + top {K}: {(time.perf_counter() - started) * 10:.2f} ms a query")
    efs = tuple(int(e) for e in args.ef.split(","))
    for name in filter(None, args.libraries.split(",")):
        if name == "mem":
            measure_mem(args.dir, stored, asked, exact, sets)
        else:
            measure(LIBRARIES[name], stored, asked, exact, sets, efs, args.pool)


if __name__ == "__main__":
    main()
