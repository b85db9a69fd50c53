"""Community detection on one scope of a database: today's Leiden on the array graph against the
networkx Louvain it replaced, in interleaved pairs; time (graph build + algorithm) and modularity.

    python bench/communities.py --db DB --scope bench [--pairs 2]

Nothing is written to the database: both methods are timed without storing their communities.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib  # noqa: E402,F401  (puts the repo on sys.path)


CPU: dict[str, list[float]] = {"louvain": [], "leiden": []}  # process CPU seconds: steadier than wall on a loaded machine


def louvain(store, scope):  # noqa: ANN001, ANN201
    import networkx as nx

    from mem.graph.views import memory_graph

    start, cpu = time.perf_counter(), time.process_time()
    graph = memory_graph(store, scope)
    built = time.perf_counter() - start
    ordered = nx.Graph()
    ordered.add_nodes_from(sorted(graph.nodes))
    ordered.add_weighted_edges_from(sorted((a, b, d.get("weight", 1.0)) for a, b, d in graph.edges(data=True)))
    groups = nx.community.louvain_communities(ordered, weight="weight", seed=42)
    CPU["louvain"].append(time.process_time() - cpu)
    return time.perf_counter() - start, built, [set(g) for g in groups], graph


def leiden(store, scope):  # noqa: ANN001, ANN201
    from mem.graph.communities import detect_weighted
    from mem.graph.views import weighted_arrays

    start, cpu = time.perf_counter(), time.process_time()
    rowids, pairs, weights = weighted_arrays(store, scope)
    built = time.perf_counter() - start
    method, groups = detect_weighted(len(rowids), pairs, weights)
    CPU["leiden"].append(time.process_time() - cpu)
    return time.perf_counter() - start, built, groups, (rowids, pairs, weights, method)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--scope", default="bench")
    parser.add_argument("--pairs", type=int, default=2)
    args = parser.parse_args()

    from mem.graph.communities import modularity
    from mem.store import Store

    with Store.open(args.db) as store:
        id_index = {memory_id: i for i, (memory_id,) in enumerate(store.conn.execute(
            "SELECT id FROM memories WHERE status != 'archived' AND scope = ? ORDER BY rowid", (args.scope,)))}
        times: dict[str, list[float]] = {"louvain": [], "leiden": []}
        builds: dict[str, list[float]] = {"louvain": [], "leiden": []}
        result: dict[str, float] = {}
        for _ in range(args.pairs):
            total, built, lv_groups, _graph = louvain(store, args.scope)
            times["louvain"].append(total)
            builds["louvain"].append(built)
            total, built, ld_groups, (rowids, pairs, weights, method) = leiden(store, args.scope)
            times["leiden"].append(total)
            builds["leiden"].append(built)
        n = len(rowids)
        result["louvain"] = modularity(n, pairs, weights, [[id_index[m] for m in g] for g in lv_groups])
        result["leiden"] = modularity(n, pairs, weights, ld_groups)
        print(f"scope {args.scope}: {n} memories, {len(pairs)} weighted pairs; method {method}")
        for name, groups in (("louvain", lv_groups), ("leiden", ld_groups)):
            big = sum(1 for g in groups if len(g) >= 2)
            print(f"{name:8s} total {statistics.median(times[name]):6.2f} s (graph {statistics.median(builds[name]):5.2f} s)"
                  f"  cpu {statistics.median(CPU[name]):6.2f} s  runs {', '.join(f'{t:.2f}' for t in times[name])}  modularity {result[name]:.4f}  communities >= 2: {big}")
        print(f"leiden/louvain time {statistics.median(a / b for a, b in zip(times['leiden'], times['louvain'])):.3f}")


if __name__ == "__main__":
    main()
