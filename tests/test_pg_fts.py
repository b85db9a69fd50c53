"""Full-text search on PostgreSQL (mem/store/pg_fts.py): FTS5's tokens and scores, in SQL and warm
in RAM, following other writers; the tokenizer shared with SQLite (mem/store/fts_tokenizer.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from mem.store import fts_tokenizer

WORDS = ["cache", "caching", "cached", "deploy", "deploying", "billing", "the", "a", "owner", "owners", "queue",
         "max_connections", "v1.2", "caroline's", "Café", "redis", "timeout", "e-mail", "on-call", "x"]


def _add(store: Any, texts: list[tuple[str, list[str]]], start: int = 0) -> None:
    import orjson

    with store.write():
        for i, (text, tags) in enumerate(texts, start):
            store.conn.execute(
                "INSERT INTO memories(id, text, tags, created_at, updated_at, content_hash) VALUES (?, ?, ?, 'x', 'x', ?)",
                (f"m{i:04d}", text, orjson.dumps(tags).decode(), f"h{i}"))


def _by_id(store: Any, hits: list[tuple[int, float]]) -> list[tuple[str, float]]:
    ids = {rowid: m.id for rowid, m in store.by_rowids([r for r, _ in hits]).items()}
    return [(ids[r], s) for r, s in hits]


def _warm(store: Any) -> Any:
    from mem.store import pg_fts

    index = pg_fts.TermIndex(store)
    index.queries = pg_fts.WARM_AFTER  # past the cold queries
    return index


def test_weights_are_the_stores() -> None:
    from mem.store import fts, terms

    assert fts.WEIGHTS == ", ".join(str(fts_tokenizer.WEIGHTS[c]) for c in ("text", "tags"))
    assert terms.COLUMN_WEIGHTS == (fts_tokenizer.WEIGHTS["text"], fts_tokenizer.WEIGHTS["tags"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="abcdeé-_' .1", max_size=30), min_size=1, max_size=8))
def test_postings_are_fts5s_tokens(texts: list[str]) -> None:
    """The tokens and lengths PostgreSQL stores are those FTS5 indexes (its own tokenizer, in memory)."""
    import sqlean

    conn = sqlean.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(text, tags, tokenize='porter unicode61')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(f, instance)")
    rows = [(i + 1, text, '["t"]') for i, text in enumerate(texts)]
    conn.executemany("INSERT INTO f(rowid, text, tags) VALUES (?, ?, ?)", rows)
    expected: dict[tuple[str, int], float] = {}
    sizes = {rowid: 0 for rowid, _, _ in rows}
    for term, doc, col in conn.execute("SELECT term, doc, col FROM v"):
        expected[(term, doc)] = expected.get((term, doc), 0.0) + fts_tokenizer.WEIGHTS[col]
        sizes[doc] += 1
    found, lengths = fts_tokenizer.postings(rows)
    assert {(t, r): tf for t, r, tf in found} == expected
    assert lengths == sizes


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.lists(st.sampled_from(WORDS), min_size=0, max_size=12),
                          st.lists(st.sampled_from(WORDS[:6]), max_size=2)), min_size=1, max_size=25),
       st.lists(st.sampled_from([w for w in WORDS if len(fts_tokenizer.query_stems([w])[w]) == 1]), min_size=1, max_size=2,
                unique=True))
def test_bm25_is_fts5s_in_sql_and_warm(pg_url: str, tmp_path_factory: pytest.TempPathFactory,
                                       docs: list[tuple[list[str], list[str]]], query: list[str]) -> None:
    """The same memories on SQLite and PostgreSQL: the same hits, in the same order, the same scores
    (one-token terms; sums of two terms are exact whatever the order)."""
    from mem.store import Store, pg_fts
    from mem.text import fts_any

    texts = [(" ".join(words), tags) for words, tags in docs]
    db = tmp_path_factory.mktemp("lite") / "x.db"
    with Store.open(db) as lite, Store.open(pg_url) as pg:
        with pg.write():
            pg.conn.execute("DELETE FROM memories")
        _add(lite, texts)
        _add(pg, texts)
        expected = _by_id(lite, lite.bm25(fts_any(query), 100, None))
        assert _by_id(pg, pg.bm25_terms(query, 100, None)) == expected
        assert _by_id(pg, _warm(pg).search(pg_fts.query_stems(query), 100, None)) == expected


def test_warm_index_follows_other_writers(pg_url: str) -> None:
    """Process A searches from RAM while B adds, edits, re-tags and deletes; after each write A gives
    what SQL gives; a reader further behind than the pruned changes reloads."""
    from mem.store import Store, pg_fts

    query = pg_fts.query_stems(["cache", "deploy", "owner"])
    with Store.open(pg_url) as reader, Store.open(pg_url) as writer:
        _add(writer, [("the cache owner", []), ("deploying twice", ["cache"]), ("nothing here", [])])
        warm = _warm(reader)

        def same() -> None:
            cold = pg_fts.bm25(reader, query, 50, None)
            assert warm.search(query, 50, None) == cold
            assert warm.changes == reader.conn.execute("SELECT changes FROM fts_totals").fetchone()[0]

        same()
        _add(writer, [("cache cache deploy", []), ("owners of the cache", ["owner"])], start=10)
        same()  # appended to the cached postings
        with writer.write():
            writer.conn.execute("UPDATE memories SET text = 'owner owner' WHERE id = 'm0001'")
            writer.conn.execute("UPDATE memories SET tags = '[\"deploy\"]' WHERE id = 'm0002'")
        same()
        assert reader.conn.execute("SELECT COUNT(*) FROM fts_terms WHERE term = 'twice'").fetchone()[0] == 0
        with writer.write():
            writer.conn.execute("DELETE FROM memories WHERE id = 'm0010'")
        same()
        before = warm.changes
        pg_fts.KEEP_CHANGES, keep = 1, pg_fts.KEEP_CHANGES
        try:
            _add(writer, [(f"cache {i}", []) for i in range(4)], start=20)
            assert reader.conn.execute("SELECT pruned FROM fts_totals").fetchone()[0] > before
        finally:
            pg_fts.KEEP_CHANGES = keep
        same()
        assert reader.integrity() == "ok"


def test_a_write_transaction_searches_its_own_rows(pg_url: str) -> None:
    from mem.store import Store

    with Store.open(pg_url) as store:
        with store.write():
            store.conn.execute("INSERT INTO memories(id, text, created_at, updated_at, content_hash) "
                               "VALUES ('a', 'uncommitted cache', 'x', 'x', 'h')")
            assert [r for r, _ in store.bm25_warm(["cache"], 5, None)] == [store.rowid_of("a")]
        assert store.conn.execute("SELECT COUNT(*) FROM fts_pending").fetchone()[0] == 0


def test_an_index_from_before_is_rebuilt_on_open(pg_url: str) -> None:
    """A database made before the PostgreSQL step (``pg_schema`` absent) gets its full-text index
    rebuilt from the memories when mem opens it."""
    from mem.store import Store
    from mem.store.postgres import PG_STEPS

    with Store.open(pg_url) as store:
        _add(store, [("rebuilt cache", []), ("other", [])])
        store.conn.run("DELETE FROM meta WHERE key = 'pg_schema'")
        store.conn.run("TRUNCATE fts_postings, fts_docs")
    with Store.open(pg_url) as store:
        assert store.get_meta("pg_schema") == str(len(PG_STEPS))
        assert store.integrity() == "ok"
        assert [r for r, _ in store.bm25_terms(["cache"], 5, None)] == [store.rowid_of("m0000")]
        assert store.conn.execute("SELECT docs, len FROM fts_totals").fetchone() == (2, 3.0)


def test_scoped_warm_search_keeps_to_its_scope(pg_url: str, tmp_path: Path) -> None:
    from mem.store import Store, pg_fts

    with Store.open(pg_url) as store:
        _add(store, [("cache one", []), ("cache two", []), ("cache three cache", [])])
        store.conn.run("UPDATE memories SET scope = 'b' WHERE id = 'm0002'")
        query = pg_fts.query_stems(["cache"])
        warm = _warm(store)
        assert warm.search(query, 5, "b") == pg_fts.bm25(store, query, 5, "b") != []
        assert warm.search(query, 5, "global") == pg_fts.bm25(store, query, 5, "global")
