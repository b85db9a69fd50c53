"""BM25 candidates from FTS5 at scale: the search-time SQL of the ``bm25`` channel. Functions taking the Store.

FTS5 scores every row that matches any term of the OR query, then sorts; nothing prunes early,
so the cost grows with the matching rows. At 100k memories the scoring itself was the smaller
part: joining each matching row to ``memories`` to check its scope cost more than BM25 (about
11 ms against 8 ms for a typical query). Most databases hold one scope (or search every scope),
and then the join filters nothing: ``bm25`` skips it. A scope that shares the database with
others is filtered after an over-fetch, falling back to the join when too few rows survive, so
the result is the same in every case.

>>> # with Store.open(path) as store:
>>> #     bm25(store, '"billing" OR "owner"', 200, "work")   # [(rowid, score), ...] best first
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mem.store import batches

if TYPE_CHECKING:
    from mem.store import Store

# a word in the text counts twice a word in the tags; the one place the column weights live (the warm
# BM25 of mem.store.terms and PostgreSQL's postings in mem.store.fts_tokenizer read them from here)
COLUMN_WEIGHTS = {"text": 1.0, "tags": 0.5}
WEIGHTS = ", ".join(str(w) for w in COLUMN_WEIGHTS.values())  # as bm25() takes them: text, tags
OVERFETCH = 4  # rows read per wanted row when other scopes share the index

_UNJOINED = (
    f"SELECT rowid, -bm25(memory_fts, {WEIGHTS}) AS s FROM memory_fts WHERE memory_fts MATCH ? "
    "ORDER BY s DESC, rowid LIMIT ?"
)
_JOINED = (
    f"SELECT f.rowid, -bm25(memory_fts, {WEIGHTS}) AS s FROM memory_fts f JOIN memories m ON m.rowid = f.rowid "
    "WHERE memory_fts MATCH ? AND m.scope = ? ORDER BY s DESC, f.rowid LIMIT ?"
)


def bm25(store: "Store", match: str, k: int, scope: str | None) -> list[tuple[int, float]]:
    """FTS5 BM25 candidates ``(rowid, score)`` in ``scope`` (None: every scope), best first (ties by
    rowid); the score is positive, higher is better. ``match`` is an FTS5 MATCH expression.

    >>> # bm25(store, '"cache" OR "redis"', 10, None)  ->  [(42, 7.31), (7, 5.02), ...]
    """
    if k <= 0:
        return []
    if scope is None or only_scope(store, scope):
        return _rows(store.conn.execute(_UNJOINED, (match, k)))
    # Other scopes share the index: read a few times more rows than wanted and keep this scope's.
    fetch = k * OVERFETCH
    rows = _rows(store.conn.execute(_UNJOINED, (match, fetch)))
    inside = in_scope(store, [rowid for rowid, _ in rows], scope)
    kept = [row for row in rows if row[0] in inside]
    if len(kept) >= k or len(rows) < fetch:  # enough, or every match was read: exact either way
        return kept[:k]
    return _rows(store.conn.execute(_JOINED, (match, scope, k)))


def only_scope(store: "Store", scope: str) -> bool:
    """True when no memory is outside ``scope`` (two probes of the scope index, not a scan)."""
    row = store.conn.execute(
        "SELECT NOT EXISTS (SELECT 1 FROM memories WHERE scope < ?) AND NOT EXISTS (SELECT 1 FROM memories WHERE scope > ?)",
        (scope, scope),
    ).fetchone()
    return bool(row[0])


def in_scope(store: "Store", rowids: list[int], scope: str) -> set[int]:
    """Which of ``rowids`` are memories of ``scope`` (looked up by rowid)."""
    found: set[int] = set()
    for chunk, marks in batches.in_lists(rowids):
        # "+m.scope": look rows up by rowid; the planner would otherwise walk the whole scope index.
        sql = f"SELECT m.rowid FROM memories m WHERE m.rowid IN ({marks}) AND +m.scope = ?"
        found.update(int(r[0]) for r in store.conn.execute(sql, [*chunk, scope]))
    return found


def _rows(cursor: Any) -> list[tuple[int, float]]:
    return [(int(r[0]), float(r[1])) for r in cursor]


# ------------------------------------------------------------------------------- common terms
# A term in at least half the rows adds nothing to BM25: FTS5 clamps its idf, log((N - n + .5) /
# (n + .5)), to 1e-6 once it is <= 0. Yet every row containing it is scored. Leaving such terms out
# of the MATCH (when a rarer term remains) gives the same scores to within 1e-5 and skips those
# rows; typical in practice: the user's or a speaker's name in most memories.

PRUNE_MIN_ROWS = 2000  # prune only when that skips at least this many rows (~1 ms of scoring): small stores stay exact


def common_terms(store: "Store", terms: list[str]) -> set[str]:
    """The ``terms`` whose document frequency is at least half the rows of the index (BM25 weight ~0);
    empty unless leaving them out skips ``PRUNE_MIN_ROWS`` rows or more.

    >>> # common_terms(store, ["caroline", "adoption"])  ->  {"caroline"}
    """
    conn = store.conn
    # max(rowid) >= the number of indexed rows, so "df >= top / 2" implies the clamped idf.
    top = conn.execute("SELECT max(rowid) FROM memories").fetchone()[0] or 0
    if top < PRUNE_MIN_ROWS or top <= 0:  # too few rows to skip PRUNE_MIN_ROWS of them
        return set()
    stems = index_terms(store, terms)
    single = {t: s[0] for t, s in stems.items() if len(s) == 1}  # a phrase's own frequency is unknown: keep it
    if not single:
        return set()
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.mem_fts_vocab USING fts5vocab(main, memory_fts, row)")
    wanted = sorted(set(single.values()))
    df = dict(conn.execute(f"SELECT term, doc FROM temp.mem_fts_vocab WHERE term IN ({','.join('?' * len(wanted))})",
                           wanted).fetchall())
    common = {t for t, stem in single.items() if 2 * df.get(stem, 0) >= top}
    return common if sum(df[single[t]] for t in common) >= PRUNE_MIN_ROWS else set()


def index_terms(store: "Store", terms: list[str]) -> dict[str, tuple[str, ...]]:
    """How the FTS tokenizer (porter stemming) indexes each term, e.g. ``"deploying" -> ("deploi",)``
    (``mem.store.fts_tokenizer``: SQLite's own tokenizer in a private in-memory table, once per term and process)."""
    from mem.store import fts_tokenizer

    return fts_tokenizer.query_stems(terms)


def matching_rowids(store: "Store", match: str, limit: int, scope: str | None, exclude: set[int]) -> list[int]:
    """Up to ``limit`` rowids in ``scope`` that ``match`` matches, not in ``exclude``, unscored (rowid order).

    Fills a pruned BM25 list: rows matching only terms in half the memories score ~1e-6, so their
    order does not matter, only that the list still reaches down to (about) zero.
    """
    if limit <= 0:
        return []
    want = limit + len(exclude)
    if scope is None or only_scope(store, scope):
        rows = store.conn.execute("SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? LIMIT ?", (match, want))
    else:
        rows = store.conn.execute(
            "SELECT f.rowid FROM memory_fts f JOIN memories m ON m.rowid = f.rowid "
            "WHERE memory_fts MATCH ? AND m.scope = ? LIMIT ?", (match, scope, want))
    return [r for r in (int(row[0]) for row in rows) if r not in exclude][:limit]


# ------------------------------------------------------------------------- warm BM25 (store/terms.py)
# What mem.store.terms.TermIndex reads: the FTS5 index's own tokens, row sizes and change counter.

def fts_state(store: "Store") -> tuple[str, int]:
    """``(fts_epoch, newest indexed rowid)``: a warm index is current while both are unchanged.

    ``fts_epoch`` is bumped by triggers (migration m005) whenever indexed text, tags or a scope
    change or a memory is deleted; new rows only raise the newest rowid.
    """
    conn = store.conn
    row = conn.execute("SELECT value FROM meta WHERE key = 'fts_epoch'").fetchone()
    newest = conn.execute("SELECT COALESCE(MAX(id), 0) FROM memory_fts_docsize").fetchone()[0]
    return (str(row[0]) if row else "0"), int(newest)


def fts_sizes(store: "Store", after: int, upto: int) -> list[tuple[int, bytes]]:
    """``(rowid, docsize blob)`` of the indexed rows ``after < rowid <= upto`` (one varint per column)."""
    return store.conn.execute("SELECT id, sz FROM memory_fts_docsize WHERE id > ? AND id <= ? ORDER BY id",
                              (after, upto)).fetchall()


def fts_positions(store: "Store", token: str, upto: int) -> Any:
    """Every position where the index holds ``token`` (an index term, already stemmed) in rows
    ``<= upto``, as one int64 each: ``rowid << 33 | column << 32 | offset``, the column numbered in
    ``COLUMN_WEIGHTS``'s order; read off the index through an ``fts5vocab`` table.

    SQLite joins them into one string that numpy parses: a row at a time through Python cost six
    times as much (a word in 55,000 rows of a million: 113 against 17 ms)."""
    import numpy as np

    conn = store.conn
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.mem_fts_instances USING fts5vocab(main, memory_fts, instance)")
    column = " ".join(f"WHEN '{name}' THEN {i}" for i, name in enumerate(COLUMN_WEIGHTS))
    joined = conn.execute(f"SELECT group_concat((doc << 33) | ((CASE col {column} END) << 32) | offset) "
                          "FROM temp.mem_fts_instances WHERE term = ? AND doc <= ?", (token, upto)).fetchone()[0]
    return np.fromstring(joined, dtype=np.int64, sep=",") if joined else np.zeros(0, dtype=np.int64)


def fts_tokenize(store: "Store", after: int, upto: int) -> list[tuple[str, int, str, int]]:
    """``(token, rowid, column, offset)`` of memories ``after < rowid <= upto``, tokenized by a scratch
    FTS5 table with memory_fts's tokenizer (temp schema: never written to the file).

    The scratch table keeps no content and is emptied with ``delete-all``, which drops its index
    whole: deleting its rows one by one left tombstones and segments that every later read of
    its terms merged again (a warm intake syncs a few rows at a time: 60 % more per call)."""
    conn = store.conn
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.mem_fts_tokens "
                 "USING fts5(text, tags, content='', tokenize='porter unicode61')")
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.mem_fts_tokens_terms USING fts5vocab(temp, mem_fts_tokens, instance)")
    conn.execute("INSERT INTO temp.mem_fts_tokens(rowid, text, tags) SELECT rowid, text, tags FROM memories "
                 "WHERE rowid > ? AND rowid <= ?", (after, upto))
    rows = conn.execute("SELECT term, doc, col, offset FROM temp.mem_fts_tokens_terms").fetchall()
    conn.execute("INSERT INTO temp.mem_fts_tokens(mem_fts_tokens) VALUES ('delete-all')")
    return rows
