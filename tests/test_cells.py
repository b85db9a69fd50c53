"""The cells behind a bulk import's near-duplicate check at scale (mem.store.cells): every row at the
floor is among a query's candidates, and the gate decides exactly as the scan of every row does."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from bench.synth import memory_texts
from mem.stages import neighbours
from mem.store import cells


class Matrix:
    """The part of ``VectorIndex`` that ``neighbours.nearest`` and the cells read, over given rows."""

    def __init__(self, vectors: np.ndarray, scopes: list[str]) -> None:
        self.matrix = np.ascontiguousarray(vectors, dtype=np.float32)
        self.rowids = np.arange(1, len(vectors) + 1, dtype=np.int64) * 3  # rowids are not positions
        self.scope_of = np.array(scopes)
        self.count = len(vectors)
        self.generation = 1
        self.cells: Any = None

    def sync(self) -> None:
        pass

    def scope_mask(self, scope: str) -> np.ndarray:
        return self.scope_of[: self.count] == scope

    def append(self, vectors: np.ndarray, scopes: list[str]) -> None:
        self.matrix = np.concatenate([self.matrix, vectors.astype(np.float32)])
        self.scope_of = np.concatenate([self.scope_of, scopes])
        self.rowids = np.arange(1, len(self.matrix) + 1, dtype=np.int64) * 3
        self.count = len(self.matrix)


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def clustered(n: int, dim: int = 96, seed: int = 7) -> np.ndarray:
    """``n`` unit vectors in a few templated clusters (as hash vectors of templated texts are); from
    the middle on, every other row is a close copy of an earlier one: a near duplicate at 0.89-0.999."""
    rng = np.random.default_rng(seed)
    centres = unit(rng.normal(size=(12, dim)))
    x = centres[rng.integers(0, 12, n)] + rng.normal(size=(n, dim)) / np.sqrt(dim)
    copies = np.arange(n // 2, n, 2)
    originals = rng.integers(0, n // 2, len(copies))
    x[copies] = unit(x[originals]) + rng.uniform(0.05, 0.5, (len(copies), 1)) * rng.normal(size=(len(copies), dim)) / np.sqrt(dim)
    return unit(x).astype(np.float32)


@pytest.fixture
def small_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cells, "MIN_ROWS", 100)
    monkeypatch.setattr(cells, "ROWS_PER_CELL", 16)
    monkeypatch.setattr(cells, "TAIL", 300)


def scan(monkeypatch: pytest.MonkeyPatch, *args: Any, **kwargs: Any) -> Any:
    """``neighbours.nearest`` as it was: every row scored."""
    with monkeypatch.context() as m:
        m.setattr(cells, "MIN_FLOOR", 2.0)
        return neighbours.nearest(*args, **kwargs)


@pytest.mark.parametrize("floor", [0.9, 0.95, 0.99])
def test_every_row_at_the_floor_is_a_candidate(small_cells: None, floor: float) -> None:
    vectors = clustered(3000)
    index = Matrix(vectors[:2400], ["a"] * 2400)
    queries = vectors[2400:]
    found = cells.of(index).candidates(queries, floor)
    exact = np.asarray(queries, dtype=np.float64) @ np.asarray(vectors[:2400], dtype=np.float64).T
    missed = [(q, r) for q in range(len(queries)) for r in np.flatnonzero(exact[q] >= floor) if r not in set(found[q].tolist())]
    assert missed == []
    assert sum((exact >= floor).sum(axis=1) > 0) > 20  # the planted copies: there is something to find
    assert np.mean([len(f) for f in found]) < 2400 / 4  # and the cells leave most rows out


def test_nearest_through_the_cells_is_the_scan(small_cells: None, monkeypatch: pytest.MonkeyPatch) -> None:
    vectors = clustered(3000, seed=11)
    scopes = ["a" if i % 3 else "b" for i in range(3000)]
    index = Matrix(vectors[:2500], scopes[:2500])
    queries = vectors[2500:]
    asked = [None if i % 4 == 0 else scopes[2500 + i] for i in range(len(queries))]
    before = [int(index.rowids[i * 5 % 2500]) for i in range(len(queries))]
    for floor in (0.9, 0.95):
        through = neighbours.nearest(index, queries, asked, 8, floor)
        assert index.cells is not None
        assert through == scan(monkeypatch, index, queries, asked, 8, floor)
        assert sum(1 for hits in through if hits) > 20
        bounded = neighbours.nearest(index, queries, asked, 8, floor, before=before)
        assert bounded == scan(monkeypatch, index, queries, asked, 8, floor, before=before)
        assert all(rowid < bound for hits, bound in zip(bounded, before) for rowid, _ in hits)


def test_cells_follow_new_rows_and_a_reloaded_matrix(small_cells: None, monkeypatch: pytest.MonkeyPatch) -> None:
    vectors = clustered(3000, seed=5)
    index = Matrix(vectors[:1000], ["a"] * 1000)
    first = cells.of(index)
    for end in (1100, 1500, 2200):  # appended rows: in the tail first, then sorted into the cells
        index.append(vectors[index.count : end], ["a"] * (end - index.count))
        queries = vectors[end - 50 : end] + 0.01 * vectors[:50]  # close to the newest rows
        queries = unit(queries)
        assert neighbours.nearest(index, queries, [None] * 50, 8, 0.95) == scan(monkeypatch, index, queries, [None] * 50, 8, 0.95)
        assert cells.of(index) is first and first.rows == end
    assert first.tail_rows < 2200 - 1000  # some were sorted in
    index.generation += 1  # the matrix was read anew: positions may have moved
    assert cells.of(index) is not first


def test_bulk_gate_decides_as_the_scan_does(mem, monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """A few thousand texts with planted near duplicates, imported with the cells (small thresholds, so
    they serve from the second chunk on) and without: the same outcome for every line.

    The graph is left pending, as an import killed after its last chunk leaves it: the cells serve the
    gate's floors only (the finishing pass searches at 0.5, below ``cells.MIN_FLOOR``, by the same code
    in both runs), and finishing 2,500 memories twice was 85 % of this test's time."""
    from mem.stages import add, finish

    texts = list(memory_texts(2400, seed=21))
    planted = []
    for i in range(0, 2400, 23):  # a word changed or punctuation added: near, not exact, duplicates
        words = texts[i].split()
        words[len(words) // 2] += "s" if i % 2 else ""
        planted.append(" ".join(words) + ("!" if i % 3 else " indeed"))
    records = "".join(json.dumps({"text": t}) + "\n" for t in texts + planted)
    monkeypatch.setattr(add, "BULK_CHUNK", 400)
    monkeypatch.setattr(finish, "run", lambda ctx, **_: {})
    outcomes = {}
    for name, min_floor in (("cells", cells.MIN_FLOOR), ("scan", 2.0)):
        with monkeypatch.context() as m:
            m.setattr(cells, "MIN_ROWS", 300)
            m.setattr(cells, "ROWS_PER_CELL", 16)
            m.setattr(cells, "TAIL", 500)
            m.setattr(cells, "MIN_FLOOR", min_floor)
            result = mem("add", "-", "--bulk", "--embedder", "hash", "--db", str(tmp_path / f"{name}.db"), input=records)
        assert result.code == 0, result.stderr
        outcomes[name] = [(r["status"], r.get("reason")) for r in result.records]
    assert outcomes["cells"] == outcomes["scan"]
    near = [reason for status, reason in outcomes["cells"] if reason and reason.startswith("near duplicate")]
    assert len(near) > 20
