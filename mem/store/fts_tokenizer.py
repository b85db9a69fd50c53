"""FTS5's tokens (``porter unicode61``, as ``memory_fts`` has them) of any text, for either backend.

SQLite's index tokenizes its rows itself; PostgreSQL's full-text tables (``mem.store.pg_fts``)
are filled from here, so both backends stem and split alike: "deploying" is ``deploi``,
``max_connections`` is ``max`` then ``connect``, no stop words dropped. The tokenizer is SQLite's
own, in a private in-memory database (one per process, guarded by a lock: the MCP server's
threads share it), so there is no second implementation to drift from it.

>>> query_stems(["deploying", "caroline's"])
{'deploying': ('deploi',), "caroline's": ('carolin', 's')}
"""

from __future__ import annotations

import threading
from typing import Any

from mem.store import fts

WEIGHTS = fts.COLUMN_WEIGHTS
_LOCK = threading.Lock()
_CONN: list[Any] = []  # the scratch connection, made on first use
_STEMS: dict[str, tuple[str, ...]] = {}  # query term -> its tokens
_STEMS_MAX = 50_000


def _scratch() -> Any:
    if not _CONN:
        import sqlean

        conn = sqlean.connect(":memory:", isolation_level=None, check_same_thread=False)
        conn.execute("CREATE VIRTUAL TABLE scratch USING fts5(text, tags, tokenize='porter unicode61')")
        conn.execute("CREATE VIRTUAL TABLE scratch_terms USING fts5vocab(scratch, instance)")
        _CONN.append(conn)
    return _CONN[0]


def query_stems(terms: list[str]) -> dict[str, tuple[str, ...]]:
    """How ``memory_fts`` tokenizes each query term, in order (cached per process)."""
    missing = [t for t in dict.fromkeys(terms) if t not in _STEMS]
    if missing:
        found: dict[int, list[tuple[int, str]]] = {}
        with _LOCK:
            conn = _scratch()
            conn.executemany("INSERT INTO scratch(rowid, text, tags) VALUES (?, ?, '')", list(enumerate(missing, 1)))
            try:
                for term, doc, offset in conn.execute("SELECT term, doc, offset FROM scratch_terms"):
                    found.setdefault(int(doc), []).append((int(offset), term))
            finally:
                conn.execute("DELETE FROM scratch")
        if len(_STEMS) + len(missing) > _STEMS_MAX:
            _STEMS.clear()
        for i, term in enumerate(missing, 1):
            _STEMS[term] = tuple(stem for _, stem in sorted(found.get(i, [])))
    return {t: _STEMS[t] for t in terms}


def postings(rows: list[tuple[int, str, str]]) -> tuple[list[tuple[str, int, float]], dict[int, int]]:
    """For ``(rowid, text, tags)`` rows: every ``(token, rowid, weighted count)`` (text counts 1 per
    occurrence, tags 0.5, as ``mem.store.fts.WEIGHTS``), and each row's token count over both columns
    (FTS5's document length; 0 for a row without tokens)."""
    if not rows:
        return [], {}
    with _LOCK:
        conn = _scratch()
        conn.executemany("INSERT INTO scratch(rowid, text, tags) VALUES (?, ?, ?)", rows)
        try:
            counted = conn.execute(
                f"SELECT term, doc, SUM(CASE col WHEN 'text' THEN {WEIGHTS['text']} ELSE {WEIGHTS['tags']} END), "
                "COUNT(*) FROM scratch_terms GROUP BY term, doc").fetchall()
        finally:
            conn.execute("DELETE FROM scratch")
    lengths = {int(rowid): 0 for rowid, _, _ in rows}
    for _, doc, _, count in counted:
        lengths[int(doc)] += int(count)
    return [(term, int(doc), float(tf)) for term, doc, tf, _ in counted], lengths
