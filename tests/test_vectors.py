"""The warm vector index: the projected coarse pass finds what the exact product finds, and is skipped when it would not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mem.records import Memory
from mem.store import Store
from mem.store import vectors as V


def _store(db: Path, matrix: np.ndarray, scopes: list[str]) -> Store:
    store = Store.open(db)
    store.bind_embedder("hash", "test", lambda: matrix.shape[1])
    with store.write():
        rows = []
        for i, (vector, scope) in enumerate(zip(matrix, scopes)):
            memory = Memory(id=f"0190{i:04d}-0000-7000-8000-000000000000", text=f"memory {i}", scope=scope,
                            created_at="2024-01-01T00:00:00Z", updated_at="2024-01-01T00:00:00Z", content_hash=str(i))
            rows.append((store.insert_memory(memory), scope, vector))
        store.put_vectors(rows)
    return store


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


@pytest.fixture
def small_coarse(monkeypatch):
    monkeypatch.setattr(V, "COARSE_MIN_ROWS", 300)
    monkeypatch.setattr(V, "COARSE_DIMS", 6)


def test_coarse_pass_returns_the_exact_neighbours(tmp_path: Path, small_coarse):
    rng = np.random.default_rng(7)
    # Embeddings live near a low-dimensional subspace, as sentence embeddings do.
    matrix = _unit(rng.normal(size=(600, 5)) @ rng.normal(size=(5, 16)) + 0.05 * rng.normal(size=(600, 16)))
    with _store(tmp_path / "v.db", matrix, ["a" if i % 4 else "b" for i in range(600)]) as store:
        index = V.VectorIndex(store)
        index.queries = 99  # warm path
        queries = _unit(rng.normal(size=(20, 5)) @ rng.normal(size=(5, 16)))
        index.sync()
        assert index.projected is not None  # the projection is in use
        fast = [index.nearest(q, 10, scope) for q, scope in zip(queries, ["a", "b", None] * 7)]
        index.projected = None
        exact = [index.nearest(q, 10, scope) for q, scope in zip(queries, ["a", "b", None] * 7)]
    assert [[r for r, _ in hits] for hits in fast] == [[r for r, _ in hits] for hits in exact]


def test_coarse_pass_of_a_chunk_returns_the_exact_neighbours_above_the_floor(tmp_path: Path, small_coarse):
    rng = np.random.default_rng(11)
    matrix = _unit(rng.normal(size=(600, 5)) @ rng.normal(size=(5, 16)) + 0.05 * rng.normal(size=(600, 16)))
    with _store(tmp_path / "v.db", matrix, ["a" if i % 4 else "b" for i in range(600)]) as store:
        index = V.VectorIndex(store)
        index.queries = 99
        queries = _unit(rng.normal(size=(70, 5)) @ rng.normal(size=(5, 16)))  # more than one BLOCK
        scopes = ["a", "b", None, "c"] * 17 + ["a", "b"]
        index.sync()
        assert index.projected is not None
        fast = index.nearest_many(queries, 8, scopes, floor=0.5)
        index.projected = None
        exact = index.nearest_many(queries, 8, scopes, floor=0.5)
    assert [[r for r, _ in hits] for hits in fast] == [[r for r, _ in hits] for hits in exact]
    assert np.allclose([s for hits in fast for _, s in hits], [s for hits in exact for _, s in hits], atol=1e-6)
    assert sum(len(hits) for hits in exact) > 100  # the floor leaves plenty to find


def test_vectors_that_do_not_compress_are_searched_exactly(tmp_path: Path, small_coarse):
    matrix = _unit(np.random.default_rng(3).normal(size=(600, 16)))  # energy spread over every direction
    with _store(tmp_path / "v.db", matrix, ["a"] * 600) as store:
        index = V.VectorIndex(store)
        index.queries = 99
        index.sync()
        assert index.projected is None


def test_similarities_read_the_warm_matrix(tmp_path: Path):
    matrix = _unit(np.random.default_rng(5).normal(size=(50, 16)))
    with _store(tmp_path / "v.db", matrix, ["a"] * 50) as store:
        index = V.VectorIndex(store)
        assert index.similarity_arrays([1, 2], matrix[0]) is None  # cold: the caller reads the BLOBs
        index.queries = 99
        index.nearest(matrix[0], 3, "a")
        rowids, cosines = index.similarity_arrays([3, 1, 999], matrix[0])
        sims = dict(zip(rowids.tolist(), cosines.tolist()))
    assert set(sims) == {1, 3} and sims[1] == pytest.approx(1.0, abs=1e-5)
    assert sims[3] == pytest.approx(float(matrix[2] @ matrix[0]), abs=1e-5)


def test_the_matrix_is_read_into_one_allocation_and_grows_for_new_rows(tmp_path: Path):
    """A million rows grown by doubling copied the matrix again and again (and held two copies at
    the last step): the load reserves room for every vector at once."""
    rng = np.random.default_rng(3)
    matrix = _unit(rng.normal(size=(3000, 8)))
    with _store(tmp_path / "v.db", matrix, ["a"] * 3000) as store:
        assert store.vectors_at_most() == 3000 and store.vectors_at_most(2990) == 10
        index = V.VectorIndex(store)
        index.queries = 99
        index.nearest(matrix[0], 5, "a")
        assert len(index.matrix) == 3000 and index.count == 3000  # doubling from 1,024 would hold 4,096
        with store.write():
            memory = Memory(id="01909999-0000-7000-8000-000000000000", text="one more", scope="a",
                            created_at="2024-01-01T00:00:00Z", updated_at="2024-01-01T00:00:00Z", content_hash="x")
            store.put_vectors([(store.insert_memory(memory), "a", matrix[1])])
        assert [r for r, _ in index.nearest(matrix[1], 2, "a")] == [2, 3001]
        assert index.count == 3001


def test_at_scale_the_coarse_pass_reads_a_narrow_copy_and_finds_the_exact_neighbours(tmp_path: Path, monkeypatch):
    """From NARROW_MIN_ROWS rows the rough pass reads the projection's first NARROW_DIMS columns (its
    own contiguous copy, following new rows) with a larger pool; the answers stay the exact ones."""
    monkeypatch.setattr(V, "COARSE_MIN_ROWS", 300)
    monkeypatch.setattr(V, "COARSE_DIMS", 8)
    monkeypatch.setattr(V, "NARROW_MIN_ROWS", 1000)
    monkeypatch.setattr(V, "NARROW_DIMS", 4)
    rng = np.random.default_rng(11)
    basis = rng.normal(size=(4, 24))
    matrix = _unit(rng.normal(size=(1500, 4)) @ basis + 0.05 * rng.normal(size=(1500, 24)))
    queries = _unit(rng.normal(size=(20, 4)) @ basis)
    with _store(tmp_path / "v.db", matrix, ["a"] * 1500) as store:
        index = V.VectorIndex(store)
        index.queries = 99
        for q in queries:
            exact = np.argsort(-(matrix @ q), kind="stable")[:10] + 1
            assert [r for r, _ in index.nearest(q, 10, "a")] == exact.tolist()
        assert index.narrow is not None and index._narrow_rows == 1500
        assert np.array_equal(index.narrow[:1500], index.projected[:1500, :4])
        extra = _unit(rng.normal(size=(1, 4)) @ basis)
        with store.write():
            memory = Memory(id="01909999-0000-7000-8000-000000000000", text="one more", scope="a",
                            created_at="2024-01-01T00:00:00Z", updated_at="2024-01-01T00:00:00Z", content_hash="x")
            store.put_vectors([(store.insert_memory(memory), "a", extra[0])])
        assert index.nearest(extra[0], 1, "a")[0][0] == 1501  # the new row is in the narrow copy too
        assert index._narrow_rows == 1501


def test_a_vector_rolled_back_after_the_warm_matrix_read_it_is_not_searched(tmp_path: Path):
    """A rolled-back insert frees its rowid and the next insert reuses it with another vector: the
    warm matrix must hold the new vector, not the gone one."""
    rng = np.random.default_rng(3)
    matrix = _unit(rng.normal(size=(20, 8)))
    store = _store(tmp_path / "v.db", matrix, ["s"] * 20)
    index = V.VectorIndex(store)
    index.sync()
    gone, kept = _unit(rng.normal(size=8)), _unit(rng.normal(size=8))

    def insert(i: int, vector: np.ndarray) -> int:
        memory = Memory(id=f"0190{i:04d}-0000-7000-8000-000000000000", text=f"memory {i}", scope="s",
                        created_at="2024-01-01T00:00:00Z", updated_at="2024-01-01T00:00:00Z", content_hash=str(i))
        rowid = store.insert_memory(memory)
        store.put_vectors([(rowid, "s", vector)])
        return rowid

    try:
        with store.write():
            first = insert(100, gone)
            index.sync()
            assert index.nearest(gone, 1, "s")[0][0] == first
            raise RuntimeError("the write group fails")
    except RuntimeError:
        pass
    index.sync()
    assert first not in [r for r, _ in index.nearest(gone, 5, "s")]  # the gone row is not searched
    with store.write():
        second = insert(101, kept)
    assert second == first  # SQLite reused the rowid
    index.sync()
    best, similarity = index.nearest(kept, 1, "s")[0]
    assert best == second and similarity == pytest.approx(1.0, abs=1e-5)
    store.close()


@pytest.mark.parametrize("masked", [False, True])
def test_the_best_positions_cut_at_a_sampled_value_are_the_full_partition_s(monkeypatch, masked):
    """``top_positions`` partitions only the scores reaching a value read off a sample: the same rows
    as a partition of every score (in scope), and the full partition when the sample misleads."""
    monkeypatch.setattr(V, "TOP_MIN_ROWS", 1000)
    rng = np.random.default_rng(5)
    scores = rng.normal(size=200_000).astype(np.float32)
    mask = rng.random(200_000) < 0.7 if masked else None
    for n in (10, 500, 9000):
        kept = scores if mask is None else np.where(mask, scores, -np.inf)
        want = np.sort(np.argpartition(-kept, n - 1)[:n])
        assert np.array_equal(np.sort(V.top_positions(scores, n, mask)), want)
    # every sampled score above the rest: too few reach the cut, and the full partition answers
    misleading = np.zeros(100_000, dtype=np.float32)
    misleading[:: V.TOP_STRIDE] = 1.0
    misleading[1 :: V.TOP_STRIDE] = 0.5
    got = V.top_positions(misleading, 3000)
    assert len(got) == 3000 and (misleading[got] == 1.0).sum() == len(misleading[:: V.TOP_STRIDE])
    assert (misleading[got] == 0.5).sum() == 3000 - len(misleading[:: V.TOP_STRIDE])
    assert np.array_equal(np.sort(V.top_positions(scores[:50], 80)), np.arange(50))  # fewer than n: all


def test_at_scale_the_narrow_pass_then_the_projection_find_the_exact_neighbours_in_every_scope(tmp_path: Path,
                                                                                                 monkeypatch):
    """From NARROW_MIN_ROWS rows: the narrow copy's pass keeps NARROW_POOL x pool rows, the whole
    projection keeps NARROW_RESCORE x pool of those for exact scoring; a scope holding most rows is
    masked, one holding few is read alone (through the narrow pass too when it is large enough)."""
    monkeypatch.setattr(V, "COARSE_MIN_ROWS", 300)
    monkeypatch.setattr(V, "COARSE_DIMS", 8)
    monkeypatch.setattr(V, "NARROW_MIN_ROWS", 600)
    monkeypatch.setattr(V, "NARROW_DIMS", 4)
    monkeypatch.setattr(V, "TOP_MIN_ROWS", 256)  # the sampled cut at these sizes too
    monkeypatch.setattr(V, "NARROW_MIN_POOL", 40)
    rng = np.random.default_rng(13)
    basis = rng.normal(size=(5, 24))
    n = 3000
    matrix = _unit(rng.normal(size=(n, 5)) @ basis + 0.02 * rng.normal(size=(n, 24)))
    scopes = ["a" if i % 3 else "b" for i in range(n)]  # a: two thirds (masked), b: a third (read alone)
    queries = _unit(rng.normal(size=(12, 5)) @ basis)
    calls: list[int] = []
    original = V.top_positions
    monkeypatch.setattr(V, "top_positions", lambda scores, k, mask=None: calls.append(len(scores)) or original(scores, k, mask))
    with _store(tmp_path / "v.db", matrix, scopes) as store:
        index = V.VectorIndex(store)
        index.queries = 99
        for q in queries:
            for scope in ("a", "b", None):
                inside = np.array([scope in (None, s) for s in scopes])
                sims = np.where(inside, matrix @ q, -np.inf)
                exact = np.lexsort((np.arange(n), -sims))[:10] + 1
                assert [r for r, _ in index.nearest(q, 10, scope)] == exact.tolist(), scope
    pool = V.COARSE_POOL * 10
    # per query: scope a and None pass all 3,000 rows then NARROW_POOL x pool; scope b its 1,000 then as many
    assert calls[:6] == [n, V.NARROW_POOL * pool, n // 3, V.NARROW_POOL * pool, n, V.NARROW_POOL * pool]
    calls.clear()
    with Store.open(tmp_path / "v.db") as store:
        index = V.VectorIndex(store)
        index.queries = 99
        exact = np.lexsort((np.arange(n), -(matrix @ queries[0])))[:2] + 1
        assert [r for r, _ in index.nearest(queries[0], 2, None)] == exact.tolist()
    assert calls == [n, V.NARROW_POOL * 40]  # a small k's pool (10 rows) raised to NARROW_MIN_POOL
