"""Graph scale benchmark: intake throughput with linking, per-memory link cost, neighbours and communities.

    python bench/graph_scale.py                          # 10k memories, hash embedder
    python bench/graph_scale.py --n 2000 --embedder minilm
    python bench/graph_scale.py --n 100000               # the long one

Builds N synthetic coding-project memories (bench/synth.py) through the real intake path
(``mem.stages.add.run``: entities, see_also, precedes/same_session, causal cues), grouped into
sessions of about 8 memories one minute apart, then measures:

- intake throughput (memories/s, embedding included), the time spent in ``link.after_insert``
  per memory (mean, p50, p95; the target is < 2 ms at 10k) and in the chunk-wide neighbour search;
- ``graph neighbors`` at depth 2 in-process (p50/p95 over random memories), plus one cold CLI call;
- ``graph communities`` (build the networkx view, Louvain/Leiden, store with centroids);
- the entity channel and a full ``search`` (p50) on the built graph.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import percentile  # noqa: E402  (also puts the repo on sys.path)
from synth import memory_texts, queries  # noqa: E402


def context(db: Path, embedder: str):  # noqa: ANN201
    from mem.config import resolve_settings
    from mem.stages.context import Context
    from mem.store import Store

    store = Store.open(db)
    return Context(store=store, settings=resolve_settings(db=db, embedder=embedder, scope="bench"))


def build(db: Path, n: int, embedder: str, batch: int = 1000) -> tuple[float, list[float], list[float]]:
    """Intake N memories; returns (memories/s, seconds per after_insert call, seconds per memory of the
    chunk-wide neighbour search that intake shares with linking)."""
    from mem.stages import add, link
    from mem.store.vectors import VectorIndex

    link_times: list[float] = []
    vector_times: list[float] = []
    original = link.after_insert
    original_nearest = VectorIndex.nearest_many

    def timed(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            link_times.append(time.perf_counter() - start)

    def timed_nearest(self, queries, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        start = time.perf_counter()
        try:
            return original_nearest(self, queries, *args, **kwargs)
        finally:
            vector_times.extend([(time.perf_counter() - start) / max(1, len(queries))] * len(queries))

    link.after_insert = timed
    VectorIndex.nearest_many = timed_nearest
    texts = list(memory_texts(n))
    base = datetime(2024, 1, 1, tzinfo=timezone.utc)
    ctx = context(db, embedder)
    start = time.perf_counter()
    try:
        for offset in range(0, n, batch):
            records = []
            for i, text in enumerate(texts[offset : offset + batch], start=offset):
                at = (base + timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
                records.append((i + 1, {"text": text, "created_at": at, "meta": {"session": f"s{i // 8}"}}))
            for outcome in add.run(ctx, records, add.AddOptions(keep_near=True)):
                if outcome.status not in ("added", "superseded"):
                    raise SystemExit(f"line {outcome.line}: {outcome.status} {outcome.reason}")
    finally:
        link.after_insert = original
        VectorIndex.nearest_many = original_nearest
        ctx.store.close()
    return n / (time.perf_counter() - start), link_times, vector_times


def neighbors_latency(db: Path, embedder: str, count: int = 200) -> tuple[float, float, float]:
    from mem.stages import graph

    ctx = context(db, embedder)
    ids = [m.id for _, m in ctx.store.select(scope="bench", order="m.rowid")]
    rng = random.Random(3)
    picks = [rng.choice(ids) for _ in range(count)]
    times, sizes = [], []
    for memory_id in picks:
        start = time.perf_counter()
        rows = graph.neighbors(ctx, memory_id, depth=2, scope="bench")
        times.append(time.perf_counter() - start)
        sizes.append(len(rows))
    ctx.store.close()
    return percentile(times, 0.5), percentile(times, 0.95), statistics.mean(sizes)


def cli_neighbors(db: Path, embedder: str) -> float:
    ctx = context(db, embedder)
    memory_id = next(ctx.store.select(scope="bench", order="m.rowid", limit=1))[1].id
    ctx.store.close()
    env = {**os.environ, "MEM_DB": str(db), "MEM_EMBEDDER": embedder, "MEM_SCOPE": "bench"}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "mem", "graph", "neighbors", memory_id, "--depth", "2", "--json"],
                          capture_output=True, env=env)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(proc.stderr.decode())
    return elapsed


def communities_time(db: Path, embedder: str) -> tuple[float, int, str]:
    from mem.stages import graph

    ctx = context(db, embedder)
    start = time.perf_counter()
    rows = graph.communities(ctx, scope="bench")
    elapsed = time.perf_counter() - start
    ctx.store.close()
    return elapsed, len(rows), rows[0]["method"] if rows else "none"


def search_latency(db: Path, embedder: str, count: int = 100) -> tuple[float, float]:
    from mem.stages import search

    ctx = context(db, embedder)
    search.run(ctx, search.Query(text="warm up", bump=False))
    entity_times, full_times = [], []
    for text in queries(count):
        start = time.perf_counter()
        search.run(ctx, search.Query(text=text, bump=False, channels=["entity"]))
        entity_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        search.run(ctx, search.Query(text=text, bump=False))
        full_times.append(time.perf_counter() - start)
    ctx.store.close()
    return percentile(entity_times, 0.5), percentile(full_times, 0.5)


def graph_counts(db: Path, embedder: str) -> dict:
    from mem.stages import graph

    ctx = context(db, embedder)
    stats = graph.stats(ctx, scope="bench")
    ctx.store.close()
    return stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--embedder", default="hash", help="hash | minilm | ollama:MODEL")
    parser.add_argument("--keep", type=Path, help="Keep the database at this path")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = args.keep or Path(tmp) / "graph.db"
        rate, link_times, vector_times = build(db, args.n, args.embedder)
        print(f"n={args.n} embedder={args.embedder}")
        print(f"intake with linking: {rate:.0f} memories/s")
        ms = [t * 1000 for t in link_times]
        print(f"link.after_insert per memory: mean {statistics.mean(ms):.2f} ms, p50 {percentile(ms, 0.5):.2f} ms, "
              f"p95 {percentile(ms, 0.95):.2f} ms; last 10% mean {statistics.mean(ms[-len(ms) // 10:]):.2f} ms")
        if vector_times:
            print(f"neighbour search shared by the near-duplicate check and see_also (one matrix product per chunk): "
                  f"mean {statistics.mean(vector_times) * 1000:.2f} ms per memory, "
                  f"last 10% {statistics.mean(vector_times[-len(vector_times) // 10:]) * 1000:.2f} ms")
        stats = graph_counts(db, args.embedder)
        print(f"graph: {stats['edges']} edges {stats['edges_by_type']}, {stats['entities']} entities, "
              f"{stats['mentions']} mentions, {stats['isolated_memories']} isolated")
        p50, p95, size = neighbors_latency(db, args.embedder)
        print(f"graph neighbors --depth 2 (in-process): p50 {p50 * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, "
              f"mean {size:.0f} neighbours")
        print(f"graph neighbors --depth 2 (cold CLI): {cli_neighbors(db, args.embedder) * 1000:.0f} ms")
        elapsed, count, method = communities_time(db, args.embedder)
        print(f"graph communities: {elapsed:.2f} s, {count} communities ({method})")
        entity_p50, full_p50 = search_latency(db, args.embedder)
        print(f"search p50: entity channel alone {entity_p50 * 1000:.1f} ms, all channels {full_p50 * 1000:.1f} ms")


if __name__ == "__main__":
    main()
