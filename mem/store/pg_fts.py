"""Full-text search on PostgreSQL: FTS5's tokens and FTS5's BM25, over tables mem keeps itself.

SQLite's FTS5 index has no PostgreSQL twin, and ``to_tsvector`` tokenizes differently (the
``english`` configuration drops stop words and stems with snowball; FTS5 keeps every token and
stems with porter after splitting on every non-alphanumeric character). So the PostgreSQL schema
holds what FTS5 holds, filled from FTS5's own tokenizer (``mem.store.fts_tokenizer``):

- ``fts_postings (term, rowid, tf)``: each token's weighted count per memory (text 1, tags 0.5);
- ``fts_docs (rowid, len)``: each memory's token count; ``fts_terms (term, df)``: document
  frequencies; ``fts_totals``: the row and token totals, and ``changes``, the newest
  ``fts_changes.seq``;
- ``fts_pending``: memories whose text or tags changed (a trigger queues them, whatever SQL
  wrote them); ``index_pending`` re-tokenizes them inside the same write transaction, just before
  COMMIT, in two statements per batch of up to ``INDEX_BATCH`` (``mem_fts_apply`` does the rest
  on the server);
- ``fts_changes (seq, rowid)``: one row per re-indexed memory. Writers hold the advisory write
  lock, so seq grows in commit order, and a warm process (``TermIndex``) follows every other
  writer by reading what changed after the last seq it applied; ``pruned`` says how far old
  entries were dropped (a process further behind reloads).

BM25 is FTS5's formula with FTS5's constants (``mem.store.terms.bm25_scores``); a quoted term of
several tokens ("caroline's": ``carolin``, ``s``) counts each token, not the phrase. A one-shot
command scores in SQL (``bm25``); a process that searches more than ``WARM_AFTER`` times keeps
document lengths and the postings of the tokens it was asked about in RAM (``TermIndex``), and
gives the same rows and scores (a test holds the two together).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from mem.store import terms as shared
from mem.store import fts_tokenizer

if TYPE_CHECKING:
    from mem.store.postgres import PgStore

INDEX_BATCH = 2000  # memories re-tokenized per round of statements
KEEP_CHANGES = 50_000  # fts_changes rows kept behind the newest (older ones are pruned in one go)
WARM_AFTER = shared.WARM_AFTER
RELOAD_FROM = 20_000  # changes behind: reload lengths at once rather than apply them one by one

SCHEMA = [
    # Before: postings of to_tsvector('english') lexemes kept by a row trigger (schema of pg_schema 0).
    "DROP TRIGGER IF EXISTS mem_fts_index ON memories",
    "DROP FUNCTION IF EXISTS mem_fts_index()",
    "DROP TRIGGER IF EXISTS mem_fts_queue ON memories",  # and this step's own, so it can run again
    "DROP FUNCTION IF EXISTS mem_fts_queue()",
    "DROP TABLE IF EXISTS fts_postings, fts_docs, fts_terms, fts_totals, fts_pending, fts_changes",
    'CREATE TABLE fts_postings (term TEXT COLLATE "C" NOT NULL, rowid BIGINT NOT NULL, tf DOUBLE PRECISION NOT NULL, '
    "PRIMARY KEY (term, rowid))",
    "CREATE INDEX fts_postings_rowid ON fts_postings(rowid)",
    "CREATE TABLE fts_docs (rowid BIGINT PRIMARY KEY, len DOUBLE PRECISION NOT NULL)",
    'CREATE TABLE fts_terms (term TEXT COLLATE "C" PRIMARY KEY, df BIGINT NOT NULL)',
    "CREATE TABLE fts_totals (id INT PRIMARY KEY CHECK (id = 1), docs BIGINT NOT NULL, len DOUBLE PRECISION NOT NULL, "
    "changes BIGINT NOT NULL, pruned BIGINT NOT NULL)",
    "INSERT INTO fts_totals VALUES (1, 0, 0, 0, 0)",
    "CREATE TABLE fts_pending (rowid BIGINT PRIMARY KEY)",
    "CREATE TABLE fts_changes (seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, rowid BIGINT NOT NULL)",
    """CREATE FUNCTION mem_fts_queue() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO fts_pending(rowid) VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.rowid ELSE NEW.rowid END)
        ON CONFLICT DO NOTHING;
      RETURN NULL;
    END $$""",
    "CREATE TRIGGER mem_fts_queue AFTER INSERT OR DELETE OR UPDATE OF text, tags ON memories "
    "FOR EACH ROW EXECUTE FUNCTION mem_fts_queue()",
    "INSERT INTO fts_pending(rowid) SELECT rowid FROM memories",  # an older database: index every memory again
]

_CLAIM = ("WITH c AS (DELETE FROM fts_pending WHERE rowid IN (SELECT rowid FROM fts_pending ORDER BY rowid LIMIT %s) "
          "RETURNING rowid) SELECT c.rowid, m.text, m.tags FROM c LEFT JOIN memories m ON m.rowid = c.rowid")
# One call per batch: what the re-indexed rows held before goes (postings, document frequencies,
# lengths), what they hold now comes in, totals and the change log follow. SECURITY DEFINER: it runs
# as the schema's owner, so row-level security on fts_postings (README) hides other scopes' postings
# from a role without keeping it from cleaning up after its own deleted memories.
APPLY = [
    """CREATE OR REPLACE FUNCTION mem_fts_apply(re_rows bigint[], terms text[], term_rows bigint[], tfs float8[],
                                              doc_rows bigint[], lens float8[], keep bigint) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
    DECLARE gone_docs bigint; gone_len float8; gone_terms text[]; now_changes bigint; now_pruned bigint;
    BEGIN
      WITH p AS (DELETE FROM fts_postings WHERE rowid = ANY(re_rows) RETURNING term),
           n AS (SELECT term, COUNT(*) AS n FROM p GROUP BY term),
           u AS (UPDATE fts_terms t SET df = t.df - n.n FROM n WHERE t.term = n.term),
           d AS (DELETE FROM fts_docs WHERE rowid = ANY(re_rows) RETURNING len)
      SELECT (SELECT COUNT(*) FROM d), (SELECT COALESCE(SUM(len), 0) FROM d), (SELECT array_agg(term) FROM n)
        INTO gone_docs, gone_len, gone_terms;
      IF gone_terms IS NOT NULL THEN  -- a token no memory holds any more leaves no trace (purge relies on it)
        DELETE FROM fts_terms WHERE term = ANY(gone_terms) AND df <= 0;
      END IF;
      WITH p AS (INSERT INTO fts_postings(term, rowid, tf) SELECT * FROM unnest(terms, term_rows, tfs) RETURNING term)
      INSERT INTO fts_terms(term, df) SELECT term, COUNT(*) FROM p GROUP BY term
        ON CONFLICT (term) DO UPDATE SET df = fts_terms.df + EXCLUDED.df;
      WITH d AS (INSERT INTO fts_docs(rowid, len) SELECT * FROM unnest(doc_rows, lens)),
           c AS (INSERT INTO fts_changes(rowid) SELECT unnest(re_rows) RETURNING seq)
      UPDATE fts_totals SET docs = docs - gone_docs + cardinality(doc_rows),
                            len = len - gone_len + COALESCE((SELECT SUM(x) FROM unnest(lens) x), 0),
                            changes = COALESCE((SELECT MAX(seq) FROM c), changes)
        WHERE id = 1 RETURNING changes, pruned INTO now_changes, now_pruned;
      IF now_changes - now_pruned > 2 * keep THEN
        DELETE FROM fts_changes WHERE seq <= now_changes - keep;
        UPDATE fts_totals SET pruned = now_changes - keep WHERE id = 1;
      END IF;
    END $$""",
]


# ------------------------------------------------------------------------------------ writing
def index_pending(store: "PgStore") -> None:
    """Inside a write transaction (before COMMIT): re-tokenize every queued memory (a deleted one
    leaves the index), batch by batch. One statement when nothing is queued."""
    conn = store.conn
    while True:
        claimed = conn.run(_CLAIM, (INDEX_BATCH,)).fetchall()
        if not claimed:
            return
        _reindex(store, claimed)
        if len(claimed) < INDEX_BATCH:
            return


def _reindex(store: "PgStore", claimed: list[tuple[int, str | None, str | None]]) -> None:
    rowids = [int(r[0]) for r in claimed]
    present = [(int(rowid), text, tags) for rowid, text, tags in claimed if text is not None]
    found, lengths = fts_tokenizer.postings(present)
    store.conn.run("SELECT mem_fts_apply(%s::bigint[], %s::text[], %s::bigint[], %s::float8[], %s::bigint[], "
                   "%s::float8[], %s)",
                   (rowids, [t for t, _, _ in found], [r for _, r, _ in found], [f for _, _, f in found],
                    list(lengths), [float(n) for n in lengths.values()], KEEP_CHANGES)).fetchone()


# ------------------------------------------------------------------------------------ scoring
_F = "::float8"


def bm25(store: "PgStore", stems: list[str], k: int, scope: str | None) -> list[tuple[int, float]]:
    """``(rowid, score)`` best first, ties by rowid, in SQL: the OR of ``stems`` (a stem given twice
    counts twice, as FTS5 counts "cache" OR "caching")."""
    if k <= 0 or not stems:
        return []
    scoped = " JOIN memories m ON m.rowid = p.rowid AND m.scope = %s" if scope is not None else ""
    # The operations and their order are those of mem.store.terms.bm25_scores, in float8 throughout.
    sql = (
        "WITH q AS (SELECT unnest(%s::text[]) AS term), "
        "tot AS (SELECT docs, len / GREATEST(docs, 1) AS avgdl FROM fts_totals WHERE id = 1), "
        f"w AS (SELECT t.term, ln((tot.docs - t.df + 0.5){_F} / (t.df + 0.5){_F}) AS raw FROM fts_terms t "
        "JOIN q ON q.term = t.term CROSS JOIN tot WHERE t.df > 0) "
        f"SELECT p.rowid, SUM(CASE WHEN w.raw <= 0 THEN {shared.IDF_FLOOR}{_F} ELSE w.raw END * "
        f"(p.tf * {shared.K1 + 1.0}{_F} / (p.tf + {shared.K1}{_F} * ({1 - shared.B}{_F} + {shared.B}{_F} * d.len "
        "/ tot.avgdl)))) AS s "
        f"FROM w JOIN fts_postings p ON p.term = w.term JOIN fts_docs d ON d.rowid = p.rowid{scoped} CROSS JOIN tot "
        "GROUP BY p.rowid ORDER BY s DESC, p.rowid LIMIT %s"
    )
    params: list[Any] = [list(stems)]
    if scope is not None:
        params.append(scope)
    params.append(k)
    return [(int(r[0]), float(r[1])) for r in store.conn.run(sql, params)]


def query_stems(terms: list[str]) -> list[str]:
    """The tokens of the query ``terms``, in order (what both scorers count)."""
    stems = fts_tokenizer.query_stems(terms)
    return [s for term in terms for s in stems[term]]


class TermIndex:
    """Warm BM25 on PostgreSQL for one store: lengths and asked-for postings in RAM, following every
    writer through ``fts_changes``; ``search`` is None while the process is cold."""

    def __init__(self, store: "PgStore") -> None:
        self.store = store
        self.queries = 0
        self.changes = -1  # fts_totals.changes reflected; -1: nothing loaded
        self.docs = 0
        self.total = 0.0
        self.lengths: Any = None  # float64 token count per rowid (dense: index = rowid)
        self.present: Any = None  # bool per rowid: indexed
        self.postings: dict[str, tuple[Any, Any]] = {}  # token -> (rowids ascending, tf)

    def search(self, stems: list[str], k: int, scope: str | None) -> list[tuple[int, float]] | None:
        self.queries += 1
        if self.queries <= WARM_AFTER or k <= 0:
            return None
        alone = self._sync(scope)
        if any(s not in self.postings for s in stems):
            with self._snapshot():  # lengths, totals and the new postings from one state of the database
                self._sync(None)
                self._load(list(dict.fromkeys(s for s in stems if s not in self.postings)))
        if self.docs == 0:
            return []
        matched, values = shared.bm25_scores([self.postings[s] for s in stems], self.lengths, self.docs, self.total)
        if scope is None or alone:
            return shared._best(matched, values, k)
        return shared.best_in_scope(self.store, matched, values, k, scope)

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        conn = self.store.conn
        if conn.in_transaction:  # inside the caller's transaction: its view is the one to use
            yield
            return
        conn.run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        try:
            yield
        finally:
            conn.run("COMMIT")

    def _sync(self, scope: str | None) -> bool:
        """Follow what was re-indexed since; True when no memory is outside ``scope`` (asked in the same
        round trip as the change counter: ``mem.store.fts.only_scope``'s two probes)."""
        conn = self.store.conn
        changes, alone = conn.run(
            "SELECT changes, NOT EXISTS (SELECT 1 FROM memories WHERE scope < %s) AND NOT EXISTS "
            "(SELECT 1 FROM memories WHERE scope > %s) FROM fts_totals WHERE id = 1", (scope or "", scope or "")
        ).fetchone()
        if changes != self.changes:
            self._follow()
        return bool(alone) and scope is not None

    def _follow(self) -> None:
        conn = self.store.conn
        with self._snapshot():  # totals, lengths and changes from one state of the database
            docs, total, changes, pruned = conn.run("SELECT docs, len, changes, pruned FROM fts_totals WHERE id = 1"
                                                    ).fetchone()
            if self.lengths is None or self.changes < pruned or changes - self.changes > RELOAD_FROM:
                self._reload()
            else:
                self._apply(changes)
            self.docs, self.total, self.changes = int(docs), float(total), int(changes)

    def _reload(self) -> None:
        import numpy as np

        rows = self.store.conn.run("SELECT rowid, len FROM fts_docs").fetchall()
        top = max((int(r[0]) for r in rows), default=0)
        self.lengths = np.zeros(max(1024, top + 1), dtype=np.float64)
        self.present = np.zeros(len(self.lengths), dtype=bool)
        if rows:
            rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            self.lengths[rowids] = np.fromiter((r[1] for r in rows), dtype=np.float64, count=len(rows))
            self.present[rowids] = True
        self.postings.clear()

    def _apply(self, upto: int) -> None:
        """Rows re-indexed after ``self.changes``: new lengths; new rows' postings appended to the cached
        tokens (a changed or deleted row drops the cached postings: they reload as asked)."""
        import numpy as np

        conn = self.store.conn
        changed = sorted({int(r[0]) for r in conn.run(
            "SELECT rowid FROM fts_changes WHERE seq > %s AND seq <= %s", (self.changes, upto))})
        if not changed:
            return
        self._grow(changed[-1])
        known = self.present[changed]
        lengths = dict(conn.run("SELECT rowid, len FROM fts_docs WHERE rowid = ANY(%s)", (changed,)).fetchall())
        where = np.asarray(changed, dtype=np.int64)
        self.lengths[where] = [float(lengths.get(r, 0.0)) for r in changed]
        self.present[where] = [r in lengths for r in changed]
        if known.any():
            self.postings.clear()
            return
        if not self.postings:
            return
        fresh: dict[str, list[tuple[int, float]]] = {}
        for term, rowid, tf in conn.run("SELECT term, rowid, tf FROM fts_postings WHERE rowid = ANY(%s) AND term = ANY(%s)",
                                        (changed, list(self.postings))):
            fresh.setdefault(term, []).append((int(rowid), float(tf)))
        for term, rows in fresh.items():
            old_rowids, old_tf = self.postings[term]
            rows.sort()
            self.postings[term] = (np.concatenate([old_rowids, np.asarray([r for r, _ in rows], dtype=np.int64)]),
                                   np.concatenate([old_tf, np.asarray([t for _, t in rows], dtype=np.float64)]))

    def _grow(self, top: int) -> None:
        import numpy as np

        if top < len(self.lengths):
            return
        size = max(top + 1, 2 * len(self.lengths))
        lengths, present = np.zeros(size, dtype=np.float64), np.zeros(size, dtype=bool)
        lengths[: len(self.lengths)], present[: len(self.present)] = self.lengths, self.present
        self.lengths, self.present = lengths, present

    def _load(self, stems: list[str]) -> None:
        import numpy as np

        if not stems:
            return
        if len(self.postings) + len(stems) > shared.MAX_TOKENS_CACHED:
            self.postings.clear()
        found: dict[str, list[tuple[int, float]]] = {s: [] for s in stems}
        for term, rowid, tf in self.store.conn.run(
                "SELECT term, rowid, tf FROM fts_postings WHERE term = ANY(%s) ORDER BY term, rowid", (stems,)):
            found[term].append((int(rowid), float(tf)))
        for term, rows in found.items():
            self.postings[term] = (np.asarray([r for r, _ in rows], dtype=np.int64),
                                   np.asarray([t for _, t in rows], dtype=np.float64))
