"""The finishing pass's lookups answer as their plain statements: ``lifecycle.Arrivals`` ("stored later",
carried from batch to batch) as ``lifecycle.arrival``, whatever other connections commit between
batches; ``graph.recent_in_scope`` (two seeks) as one range of the (scope, created_at) index."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlean
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mem.store import Store
from mem.store.graph import recent_in_scope
from mem.store.lifecycle import Arrivals, arrival

SCOPES = ["a", "b", "c"]
TIMES = [f"2026-03-0{d}T09:00:00Z" for d in range(1, 8)]

row = st.tuples(st.sampled_from(SCOPES), st.sampled_from(TIMES))
# between two batches another connection: deletes the row at a position, moves its creation time or
# scope, or stores a new row (at the end, as every writer does)
change = st.one_of(
    st.tuples(st.just("delete"), st.integers(0, 60)),
    st.tuples(st.just("created"), st.integers(0, 60), st.sampled_from(TIMES)),
    st.tuples(st.just("scope"), st.integers(0, 60), st.sampled_from(SCOPES)),
    st.tuples(st.just("insert"), row),
    st.tuples(st.just("nothing")),
)


def _insert(conn, scope: str, created: str) -> None:
    conn.execute("INSERT INTO memories(id, text, scope, created_at, updated_at, content_hash) "
                 "VALUES (lower(hex(randomblob(8))), 't', ?, ?, ?, 'h')", (scope, created, created))


def _refill(conn, rows: list[tuple[str, str]]) -> None:
    """The memories table holds ``rows`` (scope, created_at) alone, rowids from 1."""
    conn.execute("DELETE FROM memories")
    for scope, created in rows:
        _insert(conn, scope, created)
    conn.commit()


def _apply(conn, op: tuple) -> None:
    rowids = [r for (r,) in conn.execute("SELECT rowid FROM memories ORDER BY rowid")]
    if op[0] == "insert":
        _insert(conn, *op[1])
    elif op[0] != "nothing" and rowids:
        target = rowids[op[1] % len(rowids)]
        if op[0] == "delete":
            conn.execute("DELETE FROM memories WHERE rowid = ?", (target,))
        else:
            column = "created_at" if op[0] == "created" else "scope"
            conn.execute(f"UPDATE memories SET {column} = ? WHERE rowid = ?", (op[2], target))
    conn.commit()


@pytest.fixture
def stores(tmp_path: Path):
    store = Store.open(tmp_path / "mem.db")
    other = sqlean.connect(str(tmp_path / "mem.db"))
    yield store, other
    other.close()
    store.close()


def _sql_answers(store: Store, rowids: list[int]) -> dict[int, bool]:
    rows = {int(r): (s, c) for r, s, c in store.conn.execute(
        f"SELECT rowid, scope, created_at FROM memories WHERE rowid IN ({','.join('?' * len(rowids))})", rowids)}
    return {r: arrival(store, r, *rows[r])[0] for r in rowids if r in rows}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(row, min_size=1, max_size=60), pending_every=st.integers(1, 4),
       sizes=st.lists(st.integers(1, 9), min_size=1, max_size=12), changes=st.lists(change, max_size=12))
def test_arrivals_answer_as_the_statement_does(stores, rows, pending_every, sizes, changes) -> None:
    store, other = stores
    _refill(other, rows)
    pending = [r for (r,) in other.execute("SELECT rowid FROM memories ORDER BY rowid")][::pending_every]
    arrivals, at = Arrivals(store), 0
    for i, size in enumerate(sizes):
        batch = pending[at:at + size]
        at += size
        if not batch:
            break
        with store.write():
            assert arrivals.batch(batch) == _sql_answers(store, batch)
        if i < len(changes):
            _apply(other, changes[i])


def test_a_commit_between_batches_is_seen(stores) -> None:
    """The row that carried a scope's latest creation time is deleted by another connection between two
    batches: the next batch must not answer from what was carried."""
    store, other = stores
    for created in ["2026-03-01", "2026-03-05", "2026-03-02", "2026-03-03"]:
        _insert(other, "a", created)
    other.commit()
    arrivals = Arrivals(store)
    with store.write():
        assert arrivals.batch([1, 2]) == {1: False, 2: False}
    with store.write():
        assert arrivals.batch([3]) == {3: True}  # rowid 2 (03-05) was stored before it and created after
    other.execute("DELETE FROM memories WHERE rowid = 2")
    other.commit()
    with store.write():
        assert arrivals.batch([4]) == {4: False} == _sql_answers(store, [4])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(row, min_size=1, max_size=60), limit=st.integers(1, 10))
def test_recent_in_scope_answers_as_one_range(stores, rows, limit) -> None:
    store, other = stores
    _refill(other, rows)
    for rowid, scope, created in store.conn.execute("SELECT rowid, scope, created_at FROM memories").fetchall():
        for at in (created, TIMES[len(TIMES) // 2]):
            plain = [r for (r,) in store.conn.execute(
                "SELECT rowid FROM memories WHERE scope = ? AND created_at <= ? AND rowid < ? "
                "ORDER BY created_at DESC, rowid DESC LIMIT ?", (scope, at, rowid + 1, limit))]
            assert recent_in_scope(store, scope, at, rowid + 1, limit) == plain


def test_highest_mentioned_is_the_top_rowid_with_a_mention(stores) -> None:
    """The finishing pass's "a row above it the correction check can meet": the highest rowid with an
    entity mention, 0 with none; ``arrival`` takes both answers when given, without its statement."""
    from mem.store.lifecycle import highest_mentioned

    store, other = stores
    for created in ["2026-03-01", "2026-03-02", "2026-03-03"]:
        _insert(other, "a", created)
    other.commit()
    assert highest_mentioned(store) == 0
    with store.write():
        store.conn.execute("INSERT INTO entities(id, key, name, type) VALUES (1, 'redis', 'Redis', 'tool')")
        store.conn.executemany("INSERT INTO memory_entities(memory_rowid, entity_id) VALUES (?, 1)", [(2,), (1,)])
    assert highest_mentioned(store) == 2
    assert arrival(store, 1, "a", "2026-03-01", later=False, after=False) == (False, False)  # rows 2, 3 exist
    assert arrival(store, 1, "a", "2026-03-01", later=False) == (False, True)
