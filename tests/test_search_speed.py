"""The fast BM25 paths change speed, not results: no scope join when one scope holds every memory,
over-fetch then join for a shared database, and the terms in half the memories left out of the MATCH."""

from __future__ import annotations

from pathlib import Path

import pytest

from mem.config import resolve_settings
from mem.stages import add, search
from mem.stages.context import Context
from mem.store import Store, fts
from mem.text import content_terms, fts_query

from tests.conftest import jsonl, run_mem

NOW = "2024-02-01T00:00:00Z"
# "alice" is in every memory but one; the other words are rare.
ALICE = [
    "Alice moved the billing database to Postgres 16",
    "Alice says the deploy freeze ends on Monday",
    "Alice owns the Kafka consumer for invoices",
    "Alice rotated the Vault token after the incident",
    "Alice prefers tabs in the Makefile",
    "Alice wrote the runbook for the search cluster",
    "Alice reviews every change to the gateway config",
    "Bob set the Redis pool size to 32 for checkout",
]
# The joined SQL the fast paths must agree with (the pre-fts.py Store.bm25).
JOINED = ("SELECT f.rowid, -bm25(memory_fts, 1.0, 0.5) FROM memory_fts f JOIN memories m ON m.rowid = f.rowid "
          "WHERE memory_fts MATCH ? AND m.scope = ? ORDER BY bm25(memory_fts, 1.0, 0.5), f.rowid LIMIT ?")


def _context(store: Store, db: Path, scope: str = "test") -> Context:
    return Context(store=store, settings=resolve_settings(db=db, embedder="hash", scope=scope, now=NOW))


def _add(ctx: Context, texts: list[str], scope: str | None = None) -> None:
    records = [(i + 1, {"text": t, **({"scope": scope} if scope else {})}) for i, t in enumerate(texts)]
    outcomes = list(add.run(ctx, records, add.AddOptions(keep_near=True)))
    assert all(o.status == "added" for o in outcomes), outcomes


def _bm25(ctx: Context, text: str) -> dict[int, float]:
    return search.CHANNELS["bm25"](ctx, search.Plan(query=search.Query(text=text), scope="test", now=ctx.now(),
                                                     candidates=200, _ctx=ctx)).scores


def test_index_terms_follow_the_fts_tokenizer(tmp_path: Path):
    with Store.open(tmp_path / "m.db") as store:
        stems = fts.index_terms(store, ["deploying", "caroline", "e-mail"])
    assert stems == {"deploying": ("deploi",), "caroline": ("carolin",), "e-mail": ("e", "mail")}


def test_common_terms_are_those_in_half_the_memories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    db = tmp_path / "m.db"
    with Store.open(db) as store:
        _add(_context(store, db), ALICE)
        monkeypatch.setattr(fts, "PRUNE_MIN_ROWS", 0)
        assert store.common_terms(["alice", "kafka", "invoices"]) == {"alice"}
        assert store.common_terms(["kafka", "redis"]) == set()
        monkeypatch.setattr(fts, "PRUNE_MIN_ROWS", 2000)  # a small store is never pruned
        assert store.common_terms(["alice", "kafka"]) == set()


@pytest.mark.parametrize("text", ["what did alice say about the kafka consumer", "kafka invoices consumer"])
def test_pruning_keeps_the_bm25_ranking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str):
    db = tmp_path / "m.db"
    with Store.open(db) as store:
        ctx = _context(store, db)
        _add(ctx, ALICE)
        full = _bm25(ctx, text)
        monkeypatch.setattr(fts, "PRUNE_MIN_ROWS", 0)
        pruned = _bm25(ctx, text)
        assert store.common_terms(content_terms(text)) == {"alice"} or "alice" not in text
        rare = [r for r, s in full.items() if s > 1e-3]  # rows a rare term matched
        assert rare and sorted(pruned, key=lambda r: -pruned[r])[: len(rare)] == sorted(rare, key=lambda r: -full[r])
        assert all(abs(pruned[r] - full[r]) < 1e-5 for r in pruned)  # rows only "alice" matched: ~1e-6, filled at 0
        assert set(pruned) == set(full)


def test_a_query_of_only_common_words_still_finds_the_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    db = tmp_path / "m.db"
    with Store.open(db) as store:
        ctx = _context(store, db)
        _add(ctx, ALICE)
        monkeypatch.setattr(fts, "PRUNE_MIN_ROWS", 0)
        assert _bm25(ctx, "alice")  # every term common: nothing is left out
        hits = search.run(ctx, search.Query(text="alice alice", k=3, bump=False))
        assert hits and all("Alice" in h.memory.text for h in hits)


def test_scope_filter_is_exact_when_scopes_share_the_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    db = tmp_path / "m.db"
    with Store.open(db) as store:
        ctx = _context(store, db)
        _add(ctx, [f"billing note {i} about invoices" for i in range(30)], scope="other")
        _add(ctx, ["billing runs on Postgres", "the billing owner is Alice", "unrelated gateway note"])
        match = fts_query("billing invoices owner")
        assert not fts.only_scope(store, "test") and fts.only_scope(store, "nowhere") is False
        for k in (1, 2, 5):
            monkeypatch.setattr(fts, "OVERFETCH", 4)
            fast = store.bm25(match, k, "test")
            monkeypatch.setattr(fts, "OVERFETCH", 1)  # too few rows survive the filter: the join answers
            fallback = store.bm25(match, k, "test")
            joined = [(int(r), float(s)) for r, s in store.conn.execute(JOINED, (match, "test", k))]
            assert fast == joined == fallback
        assert {r for r, _ in store.bm25(match, 50, "test")} <= {r for r, _ in store.select(scope="test")}


def test_cli_search_in_a_one_scope_database(tmp_path: Path):
    db = str(tmp_path / "m.db")
    added = run_mem("add", "-", "--db", db, input=jsonl(*({"text": t} for t in ALICE)))
    assert added.code == 0, added.stderr
    found = run_mem("search", "redis pool checkout", "--db", db, "--json")
    assert found.code == 0, found.stderr
    assert found.records[0]["text"].startswith("Bob set the Redis pool")
