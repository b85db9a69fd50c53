"""The HNSW graph behind a large warm vector index (mem/store/ann.py), on small stores with a low threshold:
it finds what the exact scan finds, keeps scopes, follows other writers, and survives its files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mem.records import Memory
from mem.store import Store
from mem.store import ann
from mem.store import vectors as V

if not ann.available():  # never import usearch directly: see ann.usearch_index
    pytest.skip("usearch is not installed", allow_module_level=True)

N, DIM = 1200, 32


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def _vectors(n: int, seed: int = 7) -> np.ndarray:
    """Near a low-dimensional subspace, as sentence embeddings are."""
    rng = np.random.default_rng(seed)
    return _unit(rng.normal(size=(n, 6)) @ rng.normal(size=(6, DIM)) + 0.15 * rng.normal(size=(n, DIM)))


def _insert(store: Store, matrix: np.ndarray, scopes: list[str], start: int = 0) -> list[int]:
    with store.write():
        rows = []
        for i, (vector, scope) in enumerate(zip(matrix, scopes), start):
            memory = Memory(id=f"0190{i:06d}-0000-7000-8000-000000000000", text=f"memory {i}", scope=scope,
                            created_at="2024-01-01T00:00:00Z", updated_at="2024-01-01T00:00:00Z", content_hash=str(i))
            rows.append((store.insert_memory(memory), scope, vector))
        store.put_vectors(rows)
    return [r for r, _, _ in rows]


def _open(db: Path, matrix: np.ndarray | None = None, scopes: list[str] | None = None) -> Store:
    store = Store.open(db)
    store.bind_embedder("hash", "test", lambda: DIM)
    if matrix is not None:
        _insert(store, matrix, scopes or ["a"] * len(matrix))
    return store


def _warm(store: Store) -> V.VectorIndex:
    index = V.VectorIndex(store)
    index.queries = 99  # past the cold path
    return index


def _exact(index: V.VectorIndex, q: np.ndarray, k: int, scope: str | None) -> list[tuple[int, float]]:
    graph, index.graph, saved = index.graph, None, ann.MIN_SCAN
    ann.MIN_SCAN = 10**12
    try:
        return index.nearest(q, k, scope)
    finally:
        ann.MIN_SCAN, index.graph = saved, graph


@pytest.fixture(autouse=True)
def low_threshold(monkeypatch):
    monkeypatch.setattr(ann, "MIN_SCAN", 500 * DIM)  # 500 rows of 32


def _scopes(n: int) -> list[str]:
    return ["a" if i % 5 else "b" for i in range(n)]  # b holds a fifth


def test_graph_finds_the_exact_neighbours_in_scope(tmp_path: Path):
    matrix = _vectors(N)
    queries = _vectors(60, seed=8)
    with _open(tmp_path / "v.db", matrix, _scopes(N)) as store:
        index = _warm(store)
        found = exact = 0
        for q, scope in zip(queries, ["a", "b", None] * 20):
            hits = index.nearest(q, 10, scope)
            assert index.graph is not None and len(index.graph) == N
            truth = _exact(index, q, 10, scope)
            assert len(hits) == 10 and hits == sorted(hits, key=lambda h: (-h[1], h[0]))
            by_row = dict(truth)
            for rowid, score in hits:  # every score is the exact cosine, every row in scope
                assert score == pytest.approx(float(matrix[rowid - 1] @ q), abs=1e-5)
                assert scope is None or _scopes(N)[rowid - 1] == scope
                if rowid in by_row:
                    found += 1
            exact += len(truth)
    assert found / exact >= 0.98


def test_a_scope_too_small_for_the_pool_is_scanned_exactly(tmp_path: Path, monkeypatch):
    scopes = ["tiny" if i % 100 == 0 else "big" for i in range(N)]
    matrix = _vectors(N)
    with _open(tmp_path / "v.db", matrix, scopes) as store:
        index = _warm(store)
        monkeypatch.setattr(ann, "MAX_POOL", 100)  # 2 x 10 x 100 candidates would be needed for "tiny"
        for q in _vectors(10, seed=9):
            assert index.nearest(q, 10, "tiny") == _exact(index, q, 10, "tiny")
            assert {r for r, _ in index.nearest(q, 10, "tiny")} <= {i + 1 for i, s in enumerate(scopes) if s == "tiny"}


def test_a_chunk_s_neighbours_come_from_the_graph_too(tmp_path: Path):
    matrix = _vectors(N)
    queries = _vectors(40, seed=10)
    scopes = ["a", "b", None, "c"] * 10  # c holds nothing
    with _open(tmp_path / "v.db", matrix, _scopes(N)) as store:
        index = _warm(store)
        fast = index.nearest_many(queries, 8, scopes, floor=0.3)
        assert index.graph is not None
        exact = []
        for q, scope in zip(queries, scopes):
            exact.append([h for h in _exact(index, q, 8, scope) if h[1] >= 0.3])
    assert [hits for hits, scope in zip(fast, scopes) if scope == "c"] == [[]] * 10
    found = sum(len({r for r, _ in f} & {r for r, _ in e}) for f, e in zip(fast, exact))
    assert found / sum(len(e) for e in exact) >= 0.98
    assert sum(len(e) for e in exact) > 100


def test_search_through_the_graph_leaves_out_superseded_and_forgotten_memories(tmp_path: Path):
    from mem.config import resolve_settings
    from mem.stages import search
    from mem.stages.context import Context

    with Store.open(tmp_path / "v.db") as store:
        ctx = Context(store=store, settings=resolve_settings(db=tmp_path / "v.db", embedder="hash", scope="test"))
        texts = [f"note {i} about the {['auth', 'search', 'gateway'][i % 3]} service and topic {i % 37}" for i in range(N)]
        _insert(store, ctx.embedder.embed(texts), ["test"] * N)
        target = ctx.embedder.embed(["the billing service uses Redis"])[0]
        rowids = _insert(store, np.stack([target, target]), ["test", "test"], start=N)
        assert rowids == [N + 1, N + 2]
        old, new = (f"0190{i:06d}-0000-7000-8000-000000000000" for i in (N, N + 1))
        with store.write():
            store.update_memory(old, {"superseded_by": new}, at="2024-01-02T00:00:00Z")
        for _ in range(5):  # warm: the graph answers
            hits = search.run(ctx, search.Query(text="the billing service uses Redis", k=5))
        assert ctx.vectors.graph is not None
        ids = [h.memory.id for h in hits]
        assert new in ids and old not in ids
        with store.write():
            store.update_memory(new, {"status": "forgotten"}, at="2024-01-03T00:00:00Z")
        ids = [h.memory.id for h in search.run(ctx, search.Query(text="the billing service uses Redis", k=5))]
        assert new not in ids and old not in ids


def test_rows_another_writer_adds_join_the_graph(tmp_path: Path):
    db = tmp_path / "v.db"
    matrix = _vectors(N + 50)
    with _open(db, matrix[:N]) as store, _open(db) as other:
        index = _warm(store)
        index.nearest(matrix[0], 5, "a")
        graph = index.graph
        added = _insert(other, matrix[N:], ["a"] * 50, start=N)
        for rowid, vector in zip(added, matrix[N:]):
            assert index.nearest(vector, 1, "a")[0][0] == rowid
        assert index.graph is graph and len(graph) == N + 50  # added, not rebuilt


def test_a_new_process_loads_the_saved_graph_and_catches_up(tmp_path: Path, monkeypatch):
    db = tmp_path / "v.db"
    matrix = _vectors(N + 30)
    with _open(db, matrix[:N]) as store:
        _warm(store).nearest(matrix[0], 5, "a")
    index_path, rows_path = ann.paths_for(Store.open(db))
    assert index_path.exists() and rows_path.exists()
    with _open(db) as other:
        added = _insert(other, matrix[N:], ["a"] * 30, start=N)
        replaced = _vectors(1, seed=99)[0]
        with other.write():
            other.put_vector(5, "a", replaced, replace=True)  # the epoch moves: fingerprints find row 5
    monkeypatch.setattr(ann, "build", lambda *a: pytest.fail("rebuilt instead of loading"))
    with _open(db) as store:
        index = _warm(store)
        assert index.nearest(replaced, 1, "a")[0] == (5, pytest.approx(1.0, abs=1e-5))
        assert index.nearest(matrix[N + 3], 1, "a")[0][0] == added[3]
        assert len(index.graph) == N + 30
        assert not index.graph.removed


@pytest.mark.parametrize("damage", ["garbage", "truncated", "rows", "empty"])
def test_a_corrupt_graph_file_is_rebuilt_never_trusted(tmp_path: Path, damage: str):
    db = tmp_path / "v.db"
    matrix = _vectors(N)
    with _open(db, matrix) as store:
        _warm(store).nearest(matrix[0], 5, "a")
        index_path, rows_path = ann.paths_for(store)
    data = index_path.read_bytes()
    if damage == "garbage":
        index_path.write_bytes(data[:64] + bytes(np.random.default_rng(1).integers(0, 256, len(data) - 64, dtype=np.uint8)))
    elif damage == "truncated":
        index_path.write_bytes(data[: len(data) // 2])
    elif damage == "rows":
        rows_path.write_bytes(b"not a zip file")
    else:
        index_path.write_bytes(b"")
    with _open(db) as store:
        assert ann.load(store, DIM) is None
        index = _warm(store)
        for q in _vectors(5, seed=3):
            assert index.nearest(q, 10, "a")[0][0] == _exact(index, q, 10, "a")[0][0]
        assert index.graph is not None and len(index.graph) == N
    with _open(db) as store:
        assert ann.load(store, DIM) is not None  # the rebuilt graph was written back


def test_a_foreign_graph_file_is_not_used(tmp_path: Path):
    db = tmp_path / "v.db"
    with _open(db, _vectors(N)) as store:
        _warm(store).nearest(_vectors(1)[0], 5, "a")
    with Store.open(db) as store:
        with store.write():
            store.set_meta("embedder", f"other@{DIM}")
        assert ann.load(store, DIM) is None


def test_purge_removes_the_saved_graph_and_a_graph_that_lost_rows_is_never_written(tmp_path: Path):
    db = tmp_path / "v.db"
    matrix = _vectors(N)
    with _open(db, matrix) as store:
        index = _warm(store)
        index.nearest(matrix[0], 5, "a")
        paths = ann.paths_for(store)
        assert all(p.exists() for p in paths)
        victim = "0190000007-0000-7000-8000-000000000000"
        from mem.store import purge

        with purge.secure_deletes(store), store.write():
            store.delete_memory(victim, at="2024-01-02T00:00:00Z")
        assert not any(p.exists() for p in paths)
        assert 8 not in [r for r, _ in index.nearest(matrix[7], 5, "a")]
        assert index.graph.removed and 8 not in index.graph.rowids
        _insert(store, _vectors(200, seed=5), ["a"] * 200, start=N)
        index.nearest(matrix[0], 5, "a")
        assert not any(p.exists() for p in paths)


def test_without_usearch_search_stays_exact(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(ann, "available", lambda: False)
    matrix = _vectors(N)
    with _open(tmp_path / "v.db", matrix, _scopes(N)) as store:
        index = _warm(store)
        for q in _vectors(5, seed=4):
            hits = index.nearest(q, 10, "b")
            assert index.graph is None
            assert hits == _exact(index, q, 10, "b")


def test_a_large_graph_is_built_in_the_background_while_search_stays_exact(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(V, "GRAPH_INLINE_ROWS", 0)
    matrix = _vectors(N)
    with _open(tmp_path / "v.db", matrix) as store:
        index = _warm(store)
        q = _vectors(1, seed=12)[0]
        first = index.nearest(q, 10, "a")
        assert index.graph is None and index._building is not None
        assert first == _exact(index, q, 10, "a")
        index._building[0].join(timeout=60)
        index.nearest(q, 10, "a")
        assert index.graph is not None and len(index.graph) == N
        assert ann.load(store, DIM) is not None


def test_cli_search_stream_uses_the_saved_graph_and_purge_deletes_it(tmp_path: Path, monkeypatch):
    import json

    from tests.conftest import run_mem

    monkeypatch.setattr(ann, "MIN_SCAN", 500 * 512)  # hash vectors are 512 wide
    texts = [f"service {i % 40} talks to queue {i % 17} through handler {i}" for i in range(700)]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    assert run_mem("import", str(tmp_path / "in.jsonl"), "--quiet").code == 0
    asks = "".join(json.dumps({"query": f"which queue does service {i} use", "k": 5}) + "\n" for i in range(8))
    graph = run_mem("search", "-", "--json", input=asks)
    assert graph.code == 0, graph.stderr
    with Store.open(tmp_path / "mem.db") as store:
        paths = ann.paths_for(store)
    assert all(p.exists() for p in paths) and str(paths[0]).startswith(str(tmp_path / "home" / ".cache" / "mem" / "ann"))
    monkeypatch.setattr(ann, "available", lambda: False)
    exact = run_mem("search", "-", "--json", input=asks)
    # the same hits; scores within a hair (fusion normalises over the 200 semantic candidates, whose tail may differ)
    assert [h["id"] for h in graph.records] == [h["id"] for h in exact.records]
    assert [h["score"] for h in graph.records] == pytest.approx([h["score"] for h in exact.records], abs=0.01)
    assert run_mem("forget", graph.records[0]["id"], "--purge").code == 0
    assert not any(p.exists() for p in paths)


def test_a_region_the_graph_cannot_reach_is_caught_by_the_sample(tmp_path: Path, monkeypatch):
    """HNSW can miss a group of rows far from the rest; the sample check then scans exactly."""
    # the graph built by one thread: built by several, its links depend on their timing, and on a loaded
    # machine it once missed one of the ten neighbours of the query below that it must answer alone
    monkeypatch.setattr(ann.os, "cpu_count", lambda: 1)
    monkeypatch.setattr(ann, "SAMPLE_MIN", 100)
    monkeypatch.setattr(ann, "SAMPLE", 0.1)
    matrix = _vectors(N)
    island = _unit(np.ones(DIM, dtype=np.float32) + 0.05 * np.random.default_rng(2).normal(size=(60, DIM)))
    with _open(tmp_path / "v.db", np.concatenate([matrix, island])) as store:
        index = _warm(store)
        index.nearest(matrix[0], 5, "a")
        reachable = ann.Graph.search

        def blind(self, query, count):  # a graph whose walk never reaches the island (rowids > N)
            found = reachable(self, query, count + 60)
            return found[found <= N][:count]

        monkeypatch.setattr(ann.Graph, "search", blind)
        q = island[0]
        assert index.nearest(q, 10, "a") == _exact(index, q, 10, "a")
        assert all(rowid > N for rowid, _ in index.nearest(q, 10, "a"))
        q = matrix[3]  # a query the graph answers: no fallback needed, the same neighbours
        assert [r for r, _ in index.nearest(q, 10, "a")] == [r for r, _ in _exact(index, q, 10, "a")]


def test_a_graph_over_the_projection_keeps_its_own_basis(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(V, "COARSE_MIN_ROWS", 300)
    monkeypatch.setattr(V, "COARSE_DIMS", 8)
    monkeypatch.setattr(ann, "MIN_SCAN", 500 * 8)
    matrix = _vectors(N)
    queries = _vectors(30, seed=21)
    db = tmp_path / "v.db"
    with _open(db, matrix) as store:
        index = _warm(store)
        index.nearest(queries[0], 10, "a")
        assert index.graph is not None and index.graph.width == 8 and index.projected is not None
        saved_basis = index.graph.basis.copy()
        first = [index.nearest(q, 10, "a") for q in queries]
    monkeypatch.setattr(ann, "build", lambda *a: pytest.fail("rebuilt instead of loading"))
    with _open(db) as store:
        index = _warm(store)
        index.sync()
        index.basis = -index.basis  # the index's own projection may come out with other signs
        index.projected = -index.projected
        index.nearest(queries[0], 10, "a")
        assert np.array_equal(index.graph.basis, saved_basis)
        again = [index.nearest(q, 10, "a") for q in queries]
    assert [[r for r, _ in hits] for hits in again] == [[r for r, _ in hits] for hits in first]
    truth = [set((np.argsort(-(matrix @ q))[:10] + 1).tolist()) for q in queries]
    assert sum(len({r for r, _ in hits} & t) for hits, t in zip(again, truth)) / (10 * len(queries)) >= 0.9


def test_the_default_embedder_runs_in_a_process_that_loaded_the_graph_library_first():
    # onnxruntime 1.32 segfaults on import in a process already holding usearch 2.26; a warm
    # helper or MCP server that searched a large store before its first embedding would die.
    # A real process: a crash here must fail this test, not take the test runner down.
    import subprocess
    import sys

    code = ("from mem.store import ann\nassert ann.available()\nann.usearch_index()\n"
            "from mem.embed.minilm import MiniLM\nprint(MiniLM().embed(['the graph library came first']).shape)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "(1, 384)"


def test_a_graph_that_keeps_failing_the_check_is_skipped_and_asked_again_now_and_then(tmp_path: Path, monkeypatch):
    """Where most graph answers fail the sample's check (templated hash vectors at a million), each
    query would pay the graph, the check and the scan: the scan alone answers, the same rows."""
    monkeypatch.setattr(ann, "SAMPLE_MIN", 100)
    monkeypatch.setattr(ann, "SAMPLE", 0.1)
    matrix = _vectors(N)
    queries = _vectors(3 * V.GRAPH_TRIAL + 2 * V.GRAPH_RETRY, seed=5)
    with _open(tmp_path / "v.db", matrix) as store:
        index = _warm(store)
        index.nearest(queries[0], 10, "a")  # builds the graph
        index._graph_record = (0, 0)
        asked = []
        reachable = ann.Graph.search

        def poor(self, query, count):  # a graph whose answers always miss the true best rows
            asked.append(1)
            return reachable(self, query, count + 200)[200:]

        monkeypatch.setattr(ann.Graph, "search", poor)
        for q in queries[: V.GRAPH_TRIAL]:
            assert index.nearest(q, 10, "a") == _exact(index, q, 10, "a")
        assert len(asked) == V.GRAPH_TRIAL  # every query tried the graph, every answer failed the check
        asked.clear()
        rest = queries[V.GRAPH_TRIAL :]
        for q in rest:
            assert index.nearest(q, 10, "a") == _exact(index, q, 10, "a")
        assert len(asked) == len(rest) // V.GRAPH_RETRY  # skipped, asked one query in GRAPH_RETRY
        monkeypatch.setattr(ann.Graph, "search", reachable)  # the graph is good again (the data changed)
        asked_good = 0
        for q in queries:
            before = index._graph_record[0]
            index.nearest(q, 10, "a")
            asked_good += index._graph_record[0] != before
        assert asked_good > len(queries) // 2  # noticed: asked on most queries again
        index._graph_record, index._graph_retry = (64, 60), True  # failing; one lucky retry ...
        index._note_graph(False)
        assert index._graph_failing()  # ... does not start a new trial; a second good one does
        index._note_graph(False)
        assert not index._graph_failing()


def test_the_scan_s_pool_grows_with_the_rows(tmp_path: Path, monkeypatch):
    """A projection ranks more rows above a true top row the more rows there are: the rough pool
    grows by COARSE_POOL x k every COARSE_CROWD_ROWS rows, and its best rows are the exact ones."""
    monkeypatch.setattr(ann, "MIN_SCAN", 10**12)  # the scan itself
    monkeypatch.setattr(V, "COARSE_MIN_ROWS", 300)
    monkeypatch.setattr(V, "COARSE_DIMS", 8)
    monkeypatch.setattr(V, "COARSE_ENERGY", 0.0)
    monkeypatch.setattr(V, "COARSE_CROWD_ROWS", 400)
    matrix = _vectors(N)
    with _open(tmp_path / "v.db", matrix) as store:
        index = _warm(store)
        q = _vectors(1, seed=9)[0]
        hits = index.nearest(q, 10, "a")
        assert index._coarse_pool(10) == V.COARSE_POOL * 10 * 3  # 1,200 rows: three crowds of 400
        assert [r for r, _ in hits] == (np.argsort(-(matrix @ q), kind="stable")[:10] + 1).tolist()
