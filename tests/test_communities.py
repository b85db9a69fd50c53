"""Communities at scale: the array graph equals the networkx view, and Leiden (a dependency) runs on it."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mem.graph.communities import detect_weighted, modularity
from mem.graph.views import memory_graph, weighted_arrays
from tests.conftest import jsonl, run_mem

TEXTS = [
    "Alice chose PostgreSQL for the billing service because of its JSONB support",
    "The billing service uses PostgreSQL 16 with pgbouncer in front",
    "Bob said PostgreSQL backups run nightly with pg_dump to S3",
    "The web frontend is built with React and Vite",
    "React components live in src/components and use TypeScript",
    "Vite dev server runs on port 5173 for the React app",
    "Carol owns the deploy pipeline on GitHub Actions",
    "GitHub Actions deploys the billing service to Kubernetes",
    "Kubernetes cluster runs in eu-west-1 with three nodes",
    "A lone note about lunch on Fridays",
]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("communities") / "mem.db"
    env = {"MEM_DB": str(path), "MEM_EMBEDDER": "hash", "MEM_SCOPE": "test"}
    result = run_mem("add", "-", input=jsonl(*({"text": t} for t in TEXTS)), env=env)
    assert result.code == 0, result.stderr
    return path


def test_the_array_graph_is_the_networkx_graph(db: Path) -> None:
    from mem.store import Store

    with Store.open(db) as store:
        graph = memory_graph(store, "test")
        rowids, pairs, weights = weighted_arrays(store, "test")
        id_of = {rowid: memory_id for memory_id, rowid in
                 store.conn.execute("SELECT id, rowid FROM memories WHERE scope = 'test'")}
    assert graph.number_of_edges() > 5
    assert len(rowids) == graph.number_of_nodes()
    expected = {frozenset((a, b)): d["weight"] for a, b, d in graph.edges(data=True)}
    got = {frozenset((id_of[int(rowids[i])], id_of[int(rowids[j])])): float(w) for (i, j), w in zip(pairs, weights)}
    assert got.keys() == expected.keys()
    assert all(math.isclose(got[k], expected[k], rel_tol=1e-9) for k in expected)


def test_graph_communities_uses_leiden_and_groups_the_topics(db: Path) -> None:
    pytest.importorskip("igraph")
    env = {"MEM_DB": str(db), "MEM_EMBEDDER": "hash", "MEM_SCOPE": "test"}
    groups = run_mem("graph", "communities", env=env).records
    assert groups and {g["method"] for g in groups} == {"leiden"}
    members = [set(g["members"]) for g in groups]
    assert all(len(m) >= 2 for m in members)
    assert len(set().union(*members)) == sum(len(m) for m in members)  # a partition


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=2, max_value=40), st.integers(min_value=0, max_value=10_000))
def test_leiden_partitions_every_node_once_and_beats_the_trivial_partition(n: int, seed: int) -> None:
    pytest.importorskip("igraph")
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, n * 3))
    a, b = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = a != b
    if not keep.any():
        return
    lo, hi = np.minimum(a, b)[keep], np.maximum(a, b)[keep]
    keys = np.unique(lo * n + hi)
    pairs = np.stack([keys // n, keys % n], axis=1)
    weights = rng.uniform(0.1, 2.0, len(pairs))
    method, groups = detect_weighted(n, pairs, weights)
    assert method == "leiden"
    flat = [i for g in groups for i in g]
    assert sorted(flat) == sorted(set(pairs.ravel().tolist()))  # every node with an edge, once; isolated ones left out
    assert all(g == sorted(g) for g in groups)
    assert modularity(n, pairs, weights, groups) >= modularity(n, pairs, weights, [list(range(n))]) - 1e-9
