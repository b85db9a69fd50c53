"""The int8 KNN index's entries written a chunk at a time (``mem.store.vec0_rows``) leave every vec0
shadow table byte for byte as sqlite-vec's own ``INSERT`` does, and vec0 answers the same."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from mem.records import Memory
from mem.store import Store, vec0_rows

DIM = 16


def _pair(tmp_path: Path) -> tuple[Store, Store]:
    stores = []
    for name in ("vec0", "rows"):
        store = Store.open(tmp_path / f"{name}.db")
        store.bind_embedder("hash", "test", lambda: DIM)
        stores.append(store)
    assert vec0_rows.layout(stores[1].conn, DIM) == DIM  # the layout this sqlite-vec makes is the one written
    return stores[0], stores[1]


def _by_vec0(store: Store, entries: list[tuple[int, str, bytes]]) -> None:
    store.conn.executemany("INSERT INTO memory_vec(rowid, embedding, scope) VALUES (?, vec_int8(?), ?)",
                           [(rowid, blob, scope) for rowid, scope, blob in entries])


def _shadows(store: Store) -> dict[str, list[tuple]]:
    tables = [name for (name,) in store.conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'memory_vec_%' ORDER BY name")]
    seen = {name: store.conn.execute(f'SELECT _rowid_, * FROM "{name}" ORDER BY _rowid_').fetchall() for name in tables}
    seen["sqlite_sequence"] = store.conn.execute(
        "SELECT name, seq FROM sqlite_sequence WHERE name LIKE 'memory_vec%' ORDER BY name").fetchall()
    return seen


def _knn(store: Store, query: bytes, scope: str | None) -> list[tuple]:
    if scope is None:
        return store.conn.execute("SELECT rowid, distance FROM memory_vec WHERE embedding MATCH vec_int8(?) AND k = 50",
                                  (query,)).fetchall()
    return store.conn.execute("SELECT rowid, distance FROM memory_vec WHERE embedding MATCH vec_int8(?) AND k = 50 "
                              "AND scope = ?", (query, scope)).fetchall()


@pytest.mark.parametrize("seed", range(6))
def test_chunk_writes_match_vec0_inserts(tmp_path: Path, seed: int):
    """Batches of interleaved scopes, deletes through vec0 between them (holes in the latest chunk,
    emptied chunks), chunks filling up: the same shadow rows, blobs and sequences, the same KNN answers."""
    rng = random.Random(seed)
    a, b = _pair(tmp_path)
    live: list[int] = []
    next_rowid = 1
    with a, b:
        for _ in range(8):
            with a.write(), b.write():
                for victim in rng.sample(live, min(len(live), rng.choice([0, 0, 3, 40, 400]))):
                    for store in (a, b):
                        store.conn.execute("DELETE FROM memory_vec WHERE rowid = ?", (victim,))
                    live.remove(victim)
                entries = []
                for _ in range(rng.choice([1, 7, 300, 1100, 2100])):
                    scope = rng.choice(["a", "a", "a", "b", "c/d"])
                    next_rowid += rng.choice([1, 1, 1, 5])
                    blob = bytes(rng.randrange(256) for _ in range(DIM))
                    entries.append((next_rowid, scope, blob))
                    live.append(next_rowid)
                _by_vec0(a, entries)
                vec0_rows.insert(b.conn, [r for r, _, _ in entries], [s for _, s, _ in entries],
                                 np.frombuffer(b"".join(v for _, _, v in entries), dtype=np.int8).reshape(-1, DIM))
            assert _shadows(b) == _shadows(a)
        for scope in ("a", "b", "c/d", None):
            query = bytes(rng.randrange(256) for _ in range(DIM))
            assert _knn(b, query, scope) == _knn(a, query, scope)


def test_store_writes_its_index_entries_a_chunk_at_a_time(tmp_path: Path, monkeypatch):
    """``Store.put_vectors`` takes this path when the layout is the known one, and vec0's INSERT otherwise;
    both leave the same tables."""
    a, b = _pair(tmp_path)
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(50, DIM)).astype(np.float32)
    calls = []
    monkeypatch.setattr(vec0_rows, "insert", lambda *args, _insert=vec0_rows.insert: calls.append(1) or _insert(*args))
    with a, b:
        a._vec0_rows = 0  # as with another sqlite-vec: vec0's INSERT
        for store in (a, b):
            with store.write():
                rows = []
                for i, vector in enumerate(vectors):
                    memory = Memory(id=f"0190{i:04d}-0000-7000-8000-000000000000", text=f"memory {i}", scope="ab"[i % 2],
                                    created_at="2024-01-01T00:00:00Z", updated_at="2024-01-01T00:00:00Z",
                                    content_hash=str(i))
                    rows.append((store.insert_memory(memory), memory.scope, vector))
                store.put_vectors(rows)
        assert calls == [1]
        assert _shadows(b) == _shadows(a)


def test_a_write_of_a_few_rows_is_left_to_vec0(tmp_path: Path, monkeypatch):
    """Below ``MIN_ROWS`` rows (a single add) rewriting the chunk's blob costs more than vec0's own write."""
    _, store = _pair(tmp_path)
    calls = []
    monkeypatch.setattr(vec0_rows, "insert", lambda *args, _insert=vec0_rows.insert: calls.append(len(args[1])) or _insert(*args))
    rng = np.random.default_rng(4)
    with store:
        for size in (1, vec0_rows.MIN_ROWS - 1, vec0_rows.MIN_ROWS):
            with store.write():
                rows = []
                for i in range(size):
                    memory = Memory(id=f"0191{size:02d}{i:02d}-0000-7000-8000-000000000000", text=f"m {size} {i}", scope="a",
                                    created_at="2024-01-01T00:00:00Z", updated_at="2024-01-01T00:00:00Z",
                                    content_hash=f"{size}-{i}")
                    rows.append((store.insert_memory(memory), memory.scope, rng.normal(size=DIM).astype(np.float32)))
                store.put_vectors(rows)
        assert calls == [vec0_rows.MIN_ROWS]
        assert store.conn.execute("SELECT count(*) FROM memory_vec_rowids").fetchone()[0] == 2 * vec0_rows.MIN_ROWS


def test_an_unknown_layout_is_left_to_vec0(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(vec0_rows, "VERSION", "v9.9.9")
    with Store.open(tmp_path / "x.db") as store:
        store.bind_embedder("hash", "test", lambda: DIM)
        assert vec0_rows.layout(store.conn, DIM) is None
        assert vec0_rows.layout(store.conn, DIM + 1) is None
