"""Warm BM25 (``mem.store.terms``): postings in RAM give exactly FTS5's rows, scores and order, and
follow writes made through this connection or another process's."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from mem.config import resolve_settings
from mem.stages import add, memories
from mem.stages.context import Context
from mem.store import Store, fts, terms
from mem.text import content_terms, fts_query

from tests.conftest import jsonl, run_mem

NOW = "2024-02-01T00:00:00Z"
WORDS = ["cache", "caching", "cached", "redis", "caroline's", "caroline", "s", "deploy", "deploying", "e-mail",
         "mail", "billing", "owner", "pool", "size", "alice", "bob", "v1.2", "pkg.module", "snake_case"]


def _context(store: Store, db: Path, scope: str = "test") -> Context:
    return Context(store=store, settings=resolve_settings(db=db, embedder="hash", scope=scope, now=NOW))


def _add(ctx: Context, texts: list[str], scope: str | None = None, tags: list[str] | None = None) -> None:
    records = [(i + 1, {"text": t, **({"scope": scope} if scope else {}), **({"tags": tags} if tags else {})})
               for i, t in enumerate(texts)]
    list(add.run(ctx, records, add.AddOptions(keep_near=True)))


def _warm(store: Store) -> None:
    for _ in range(terms.WARM_AFTER):
        assert store.bm25_warm(["anything"], 10, None) is None  # cold: the caller uses FTS5


def _agree(store: Store, query: str, scope: str | None, k: int = 50) -> None:
    words = content_terms(query)[:32]
    warm = store.bm25_warm(words, k, scope)
    assert warm is not None
    assert warm == fts.bm25(store, fts_query(query), k, scope), query


def test_the_column_weights_are_fts_weights():
    assert ", ".join(str(w) for w in terms.COLUMN_WEIGHTS) == fts.WEIGHTS


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=st.lists(st.tuples(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12),
                               st.lists(st.sampled_from(WORDS[:6]), max_size=2), st.sampled_from(["a", "b"])),
                     min_size=1, max_size=25),
       queries=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5), min_size=1, max_size=6),
       k=st.integers(1, 30))
def test_warm_scores_equal_fts5_exactly(tmp_path_factory, docs, queries, k):
    db = tmp_path_factory.mktemp("w") / "m.db"
    with Store.open(db) as store:
        ctx = _context(store, db)
        for i, (words, tags, scope) in enumerate(docs):
            _add(ctx, [f"note {i}: " + " ".join(words)], scope=scope, tags=tags)
        _warm(store)
        for words in queries:
            query = " ".join(words)
            for scope in (None, "a", "b"):
                _agree(store, query, scope, k)


def test_warm_index_follows_adds_updates_and_deletes(tmp_path: Path):
    db = tmp_path / "m.db"
    with Store.open(db) as store, Store.open(db) as other:
        ctx = _context(store, db)
        _add(ctx, ["Redis holds the cache for billing", "Bob owns the billing pool", "The deploy runs nightly"])
        _warm(store)
        _agree(store, "billing cache owner", "test")  # loads the postings of these tokens
        # Another connection (as another process would) adds rows that use cached tokens ...
        _add(_context(other, db), ["The billing cache moved to Memcached", "Alice owns billing now"])
        _agree(store, "billing cache owner", "test")
        assert len(store.bm25_warm(["billing"], 10, "test")) == 4
        # ... updates a text and deletes a memory: both bump fts_epoch, the postings reload.
        first = next(m for _, m in other.select(scope="test", order="m.rowid"))
        memories.update(_context(other, db), first.id, text="Kafka carries the invoices")
        _agree(store, "billing cache owner invoices", "test")
        assert [r for r, _ in store.bm25_warm(["kafka"], 10, "test")] == [1]
        last = list(other.select(scope="test", order="m.rowid"))[-1][1]
        memories.forget(_context(other, db), [last.id], purge=True)
        _agree(store, "billing cache owner invoices alice", "test")


def test_a_batch_of_searches_answers_like_single_searches(tmp_path: Path):
    """``mem search -`` goes warm after a few queries; every answer equals a cold one-shot search
    (asked in the same order on a copy, so access bumps are the same too)."""
    import shutil

    batch_db, single_db = tmp_path / "batch.db", tmp_path / "single.db"
    texts = ["We chose Redis for the cache layer", "Bob owns the billing service", "Caroline's team moved to Kafka",
             "Deploys freeze on Fridays", "The cache TTL is 300 seconds", "Billing exports run nightly via cron",
             "Alice reviews changes to the billing schema", "Kafka consumers retry three times"]
    assert run_mem("add", "-", "--db", str(batch_db), input=jsonl(*({"text": t} for t in texts))).code == 0
    shutil.copy(batch_db, single_db)
    asks = ["which cache", "billing owner", "caroline's kafka", "cache ttl", "billing cron", "redis cache layer"]
    batch = run_mem("search", "-", "--db", str(batch_db), "--json", "--now", NOW,
                    input=jsonl(*({"query": q, "k": 5} for q in asks)))
    assert batch.code == 0, batch.stderr
    for line, ask in enumerate(asks, 1):
        single = run_mem("search", ask, "--db", str(single_db), "--json", "-k", "5", "--now", NOW)
        assert single.records, ask
        assert [(h["id"], h["score"]) for h in single.records] == \
            [(h["id"], h["score"]) for h in batch.records if h["query_line"] == line], ask


def test_a_word_s_scores_are_computed_once_until_a_write_changes_the_counts(tmp_path: Path, monkeypatch):
    """At a million memories one common word's postings cost most of the channel: its scores are kept
    while the index's row and token counts (every idf, the average length) stay the same."""
    db = tmp_path / "m.db"
    with Store.open(db) as store, Store.open(db) as other:
        ctx = _context(store, db)
        _add(ctx, ["Redis holds the cache for billing", "Bob owns the billing pool", "The deploy runs nightly"])
        _warm(store)
        computed: list[int] = []
        score = terms.phrase_scores
        monkeypatch.setattr(terms, "phrase_scores", lambda rowids, *a: computed.append(len(rowids)) or score(rowids, *a))
        _agree(store, "billing cache", "test")
        _agree(store, "billing owner", "test")
        assert len(computed) == 3  # billing, cache, owner: billing's scores reused
        _add(_context(other, db), ["The billing cache moved to Memcached"])  # another writer: new counts
        _agree(store, "billing cache", "test")
        assert len(computed) == 5


def test_an_insert_rolled_back_after_the_warm_index_read_it_leaves_no_trace(tmp_path: Path):
    """SQLite gives a rolled-back insert's rowid to the next insert: the warm index must not keep
    the gone row's words (a match for text no memory holds) or score the new row by them."""
    db = tmp_path / "rollback.db"
    with Store.open(db) as store:
        ctx = _context(store, db)
        _add(ctx, [f"note {i} about the cache layer and redis" for i in range(12)])
        _warm(store)
        _agree(store, "redis cache", None)
        from mem.records import Memory

        try:
            with store.write():
                store.insert_memory(Memory(id="0190ffff-0000-7000-8000-000000000000", scope="test",
                                           text="zebra quartz words only this memory holds", content_hash="z",
                                           created_at=NOW, updated_at=NOW))
                _agree(store, "zebra quartz", None)  # read inside the transaction: the row is there
                raise RuntimeError("the write group fails")
        except RuntimeError:
            pass
        # the next insert takes the freed rowid before anything reads the index again
        _add(ctx, ["completely different text about kafka partitions"])
        for query in ("zebra quartz", "kafka partitions", "redis cache"):
            _agree(store, query, None)
