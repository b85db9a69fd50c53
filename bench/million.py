"""Search at a million memories: warm p50/p95 in process and over MCP, recall@10 against exact, size, RAM.

    python bench/million.py --dir DIR                  # builds DIR/million-1000000-hash.db once, then measures
    python bench/million.py --db DB                    # measures an existing database (e.g. a 100k one)

The database is made by bulk import (``add.run`` with ``bulk``: the intake gate, rows, FTS5 and
vectors, searchable at once; ``--write direct``: the same rows, FTS5 and vectors written straight
through the Store, no gate), in slices of 50,000 synthetic texts from ``bench/synth.py`` with the
hash embedder, each slice's rate printed with the load; an interrupted build (even ``kill -9``)
resumes where it stopped. The finishing pass (links,
entities, assertions) is left pending, as an import killed after its last chunk leaves it: at a
million it takes hours here, and search does not wait for it (the entity and graph channels have
less to spread over than on a finished database).

Measured, each in a fresh process: the first warm search (matrix and HNSW graph loaded or built),
then ``--queries`` searches (k 10) in process: p50/p95, the semantic channel's recall@10 and
recall@200 against the exact answer (every float32 vector scored: no projection, no graph) (strict, and with ties counted: hash vectors of templated texts
tie), peak RSS; then the same queries over MCP through the MCP SDK's stdio client against
``mem serve-mcp``. The hash embedder embeds a query in ~0.1 ms; MiniLM's query embedding (the
default embedder) is timed on the same queries and printed beside, to add.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import memory_mb, percentile  # noqa: E402  (also puts the repo on sys.path)
from scale import timed_steps  # noqa: E402
from synth import memory_texts, queries  # noqa: E402

SCOPE = "bench"
SLICE = 50_000


def _context(db: Path, embedder: str) -> Any:
    from mem.config import resolve_settings
    from mem.stages.context import Context
    from mem.store import Store

    settings = resolve_settings(db=db, embedder=embedder, scope=SCOPE)
    return Context(store=Store.open(settings.db_path), settings=settings)


def build(db: Path, n: int, embedder: str) -> None:
    """Bulk-import ``n`` synthetic memories into ``db`` (resuming: slices already stored are skipped)."""
    from mem.stages import add

    ctx = _context(db, embedder)
    have = ctx.store.conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
    texts = memory_texts(n)
    for _ in range(have):
        next(texts)
    started, done = time.perf_counter(), have
    while done < n:
        slice_started = time.perf_counter()
        records = [(i, {"text": t}) for i, t in zip(range(done, min(n, done + SLICE)), texts)]
        outcomes = add.run(ctx, records, add.AddOptions(bulk=True))
        for _ in records:  # every chunk committed; closing the generator leaves the finishing pass pending
            next(outcomes)
        outcomes.close()
        done += len(records)
        rate = (done - have) / (time.perf_counter() - started)
        slice_rate = len(records) / (time.perf_counter() - slice_started)
        print(f"  imported {done:>8} ({rate:.0f}/s, this slice {slice_rate:.0f}/s, peak RSS {memory_mb('VmHWM'):.0f} MB,"
              f" load {os.getloadavg()[0]:.1f})", file=sys.stderr, flush=True)
    ctx.store.close()


def build_direct(db: Path, n: int, embedder: str) -> None:
    """The same rows, FTS5 entries and vectors written straight through the Store, without the intake
    gate (secrets, duplicates, enrichment): minutes instead of hours on a loaded machine."""
    from mem.ids import uuid7
    from mem.records import Memory
    from mem.text import content_hash

    ctx = _context(db, embedder)
    store, model = ctx.store, ctx.embedder
    have = store.conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
    texts = memory_texts(n)
    for _ in range(have):
        next(texts)
    started, done = time.perf_counter(), have
    while done < n:
        batch = [t for _, t in zip(range(min(5000, n - done)), texts)]
        vectors = model.embed(batch)
        with store.write():
            rows = []
            for i, (text, vector) in enumerate(zip(batch, vectors), done):
                at = f"2026-{1 + i % 11:02d}-{1 + i % 28:02d}T{i % 24:02d}:00:00Z"
                memory = Memory(id=uuid7(), text=text, scope=SCOPE, created_at=at, updated_at=at,
                                content_hash=content_hash(text))
                rows.append((store.insert_memory(memory), SCOPE, vector))
            store.put_vectors(rows)
        done += len(batch)
        if done % 50_000 == 0 or done == n:
            rate = (done - have) / (time.perf_counter() - started)
            print(f"  written {done:>8} ({rate:.0f}/s)", file=sys.stderr, flush=True)
    store.close()


def measure_in_process(db: Path, embedder: str, n_queries: int, warmup: int) -> dict[str, Any]:
    import numpy as np

    from mem.stages import search
    from mem.store import ann

    ctx = _context(db, embedder)
    qs = queries(n_queries + warmup)
    started = time.perf_counter()
    for q in qs[:4]:  # past the cold path: the fourth loads the matrix and the graph (or starts building it)
        search.run(ctx, search.Query(text=q, k=10, scope=SCOPE))
    first = time.perf_counter() - started
    index = ctx.vectors
    building = time.perf_counter()
    while index._building is not None:  # a graph built here: wait for it (searches meanwhile are exact)
        index._building[0].join(timeout=5)
        index.nearest(ctx.embedder.embed([qs[0]])[0], 10, SCOPE)
    built = time.perf_counter() - building
    times, cpu = [], []
    steps: dict[str, list[float]] = {}
    restore = None
    for i, q in enumerate(qs[4:]):
        if i == warmup:
            restore = timed_steps(ctx, search, steps)
        t, c = time.perf_counter(), time.process_time()
        search.run(ctx, search.Query(text=q, k=10, scope=SCOPE))
        if i >= warmup:
            times.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
    if restore:
        restore()
    # The semantic channel's recall against the exact answer: every stored float32 vector of the scope
    # scored (no projection, no graph), ties broken by rowid as mem breaks them.
    vectors = ctx.embedder.embed(qs[warmup:])
    strict10 = tied10 = strict200 = 0
    semantic_ms = []
    for q in vectors:
        t = time.perf_counter()
        fast = index.nearest(q, 200, SCOPE)
        semantic_ms.append((time.perf_counter() - t) * 1000)
        exact = exact_nearest(index, q, 200, SCOPE)
        strict10 += len({r for r, _ in fast[:10]} & {r for r, _ in exact[:10]})
        strict200 += len({r for r, _ in fast} & {r for r, _ in exact})
        tied10 += min(10, sum(1 for _, s in fast[:10] if s >= exact[min(9, len(exact) - 1)][1] - 1e-6))
    graph = index.graph
    out = {"memories": index.count, "first_warm_s": first, "graph_build_s": built,
           "graph": None if graph is None else len(graph),
           "p50_ms": statistics.median(times), "p95_ms": percentile(times, 0.95),
           "semantic_p50_ms": statistics.median(semantic_ms), "cpu_p50_ms": statistics.median(cpu),
           "cpu_mean_ms": statistics.mean(cpu), "mean_ms": statistics.mean(times),
           "steps": {name: (statistics.median(ms), statistics.mean(ms)) for name, ms in steps.items()},
           "recall10": strict10 / (10 * len(vectors)), "recall10_ties": tied10 / (10 * len(vectors)),
           "recall200": strict200 / (200 * len(vectors)), "peak_rss_mb": memory_mb("VmHWM")}
    files = ann.paths_for(ctx.store)
    out["graph_file_mb"] = sum(p.stat().st_size for p in files if p.exists()) / 1e6
    ctx.store.close()
    return out


def exact_nearest(index: Any, q: Any, k: int, scope: str) -> list[tuple[int, float]]:
    """The true top ``k`` of ``scope`` by cosine: the whole float32 matrix times the query."""
    import numpy as np

    index.sync()
    sims = index.matrix[: index.count] @ q
    code = index.scope_codes.get(scope)
    sims = np.where(index.scopes[: index.count] == code, sims, -np.inf)
    top = np.argpartition(-sims, k - 1)[:k]
    ids = index.rowids[top]
    order = np.lexsort((ids, -sims[top]))
    return list(zip(ids[order].tolist(), sims[top][order].tolist()))


def minilm_query_ms(n_queries: int) -> float:
    from mem.embed import get_embedder

    embedder = get_embedder("minilm")
    qs = queries(n_queries + 10)
    embedder.embed(qs[:10])
    times = []
    for q in qs[10:]:
        t = time.perf_counter()
        embedder.embed([q])
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


# ``--no-graph`` reaches the server too: it would otherwise build the graph in the background (about
# 20 minutes of CPU at a million) on the cores the measured searches run on.
NO_GRAPH_SERVER = ("import sys; from mem.store import ann; ann.MIN_SCAN = 10**15; sys.argv = ['mem', 'serve-mcp']; "
                   "from mem.cli import main; main()")


def measure_mcp(db: Path, embedder: str, n_queries: int, warmup: int, no_graph: bool = False) -> dict[str, Any]:
    import anyio
    from mcp import Client, StdioServerParameters

    env = {**os.environ, "MEM_DB": str(db), "MEM_EMBEDDER": embedder, "MEM_SCOPE": SCOPE, "MEM_WARM": "0"}
    args = ["-c", NO_GRAPH_SERVER] if no_graph else ["-m", "mem", "serve-mcp"]
    params = StdioServerParameters(command=sys.executable, args=args, env=env)
    qs = queries(n_queries + warmup + 4)
    out: dict[str, Any] = {}

    async def run() -> None:
        started = time.perf_counter()
        async with Client(params) as client:
            out["ready_s"] = time.perf_counter() - started
            t = time.perf_counter()
            for q in qs[:4]:
                await client.call_tool("search", {"query": q, "k": 10})
            out["first_warm_s"] = time.perf_counter() - t
            times = []
            for i, q in enumerate(qs[4:]):
                t = time.perf_counter()
                result = await client.call_tool("search", {"query": q, "k": 10})
                if result.is_error if hasattr(result, "is_error") else getattr(result, "isError", False):
                    raise RuntimeError(str(result)[:300])
                if i >= warmup:
                    times.append((time.perf_counter() - t) * 1000)
            out["p50_ms"], out["p95_ms"] = statistics.median(times), percentile(times, 0.95)

    anyio.run(run)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, help="where the million-memory database is built (once) and kept")
    parser.add_argument("--db", type=Path, help="measure this database instead")
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--embedder", default="hash")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument("--write", choices=["bulk", "direct"], default="bulk",
                        help="bulk import (the default), or rows written straight through the Store")
    parser.add_argument("--skip-mcp", action="store_true")
    parser.add_argument("--no-graph", action="store_true", help="the exact scan only (the code before the graph)")
    parser.add_argument("--part", choices=["inproc", "mcp", "minilm"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.part:  # a measuring child: one JSON line
        if args.no_graph:
            from mem.store import ann

            ann.MIN_SCAN = 10**15
        db = args.db
        result = {"inproc": lambda: measure_in_process(db, args.embedder, args.queries, args.warmup),
                  "mcp": lambda: measure_mcp(db, args.embedder, args.queries, args.warmup, args.no_graph),
                  "minilm": lambda: {"p50_ms": minilm_query_ms(args.queries)}}[args.part]()
        print(json.dumps(result))
        return
    if args.db is None and args.dir is None:
        parser.error("give --dir (build or reuse) or --db")
    db = args.db or args.dir / f"million-{args.n}-{args.embedder}{'-direct' if args.write == 'direct' else ''}.db"
    if args.db is None:
        args.dir.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        (build_direct if args.write == "direct" else build)(db, args.n, args.embedder)
        print(f"  database ready in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    if args.build_only:
        return
    size = sum(p.stat().st_size for p in db.parent.glob(db.name + "*")) / 1e6
    print(f"million  {db.name}  embedder={args.embedder}{'  (no graph)' if args.no_graph else ''}  {size:.0f} MB on disk  queries={args.queries} "
          f"(+{args.warmup} warm-up)  cpus={os.cpu_count()}  load {os.getloadavg()[0]:.1f}")

    def child(part: str) -> dict[str, Any]:
        proc = subprocess.run([sys.executable, __file__, "--part", part, "--db", str(db), "--embedder", args.embedder,
                               "--queries", str(args.queries), "--warmup", str(args.warmup)]
                              + (["--no-graph"] if args.no_graph else []),
                              capture_output=True, text=True, check=True)
        return json.loads(proc.stdout.strip().splitlines()[-1])

    r = child("inproc")
    print(f"  in process: {r['memories']} vectors, first warm search {r['first_warm_s']:.1f} s"
          f" (+ graph built in the background {r['graph_build_s']:.1f} s), graph {r['graph']} rows, "
          f"file {r['graph_file_mb']:.0f} MB")
    print(f"    search p50 {r['p50_ms']:.1f} ms  p95 {r['p95_ms']:.1f} ms  (semantic channel p50 "
          f"{r['semantic_p50_ms']:.1f} ms)  peak RSS {r['peak_rss_mb']:.0f} MB")
    print(f"    per search: mean {r['mean_ms']:.1f} ms, CPU p50 {r['cpu_p50_ms']:.1f} ms (mean {r['cpu_mean_ms']:.1f}); "
          f"steps p50 / mean ms: " + ", ".join(f"{name} {p50:.1f} / {mean:.1f}" for name, (p50, mean) in r["steps"].items()))
    print(f"    semantic recall@10 vs exact {r['recall10']:.4f} (ties counted {r['recall10_ties']:.4f}), "
          f"recall@200 {r['recall200']:.4f}")
    m = child("minilm")
    print(f"  minilm query embedding p50 {m['p50_ms']:.1f} ms (add to the hash figures for the default embedder)")
    if not args.skip_mcp:
        r = child("mcp")
        print(f"  over MCP (SDK stdio client): ready {r['ready_s']:.1f} s, first warm searches {r['first_warm_s']:.1f} s, "
              f"search p50 {r['p50_ms']:.1f} ms  p95 {r['p95_ms']:.1f} ms")
    print(f"  load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
