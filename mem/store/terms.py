"""BM25 in RAM for a warm process: the same scores FTS5 gives, without scoring every row in SQL.

FTS5 answers an OR query by walking each term's doclist twice (once to count it for the idf, once
to match), then, for every matching row, reading that row's size and computing its score in
SQL. At 100k memories with query terms that each occur in thousands of them, that cost 14 ms of
a 35 ms search. A process that searches more than ``WARM_AFTER`` times (the MCP server, ``mem
search -``, a benchmark) keeps instead, in numpy arrays:

- every row's token count, read once from ``memory_fts_docsize``;
- the postings (row, column, offset) of each token it has been asked about, read from the FTS5
  index itself through an ``fts5vocab`` table, so the tokens are exactly FTS5's (porter stemming).

Scores are computed with FTS5's own formula, in the same order of operations, so they come out
bit-for-bit equal (a hypothesis test holds the two to it): ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b
+ b * D / avgdl))`` summed over the query's phrases, with FTS5's idf clamped to 1e-6, the column
weights of ``mem.store.fts.WEIGHTS`` in ``tf``, ``D`` the row's token count over both columns.
Quoted multi-token terms ("caroline's" is ``carolin`` then ``s``) count their phrase instances.

Other processes' writes are followed like the vector matrix follows them (``store/vectors.py``):
before each query the newest rowid and ``fts_epoch`` are compared with what was loaded. New rows
are tokenized by a scratch FTS5 table with the same tokenizer and appended; anything else (a text
or tags update, a deletion, which bump ``fts_epoch`` through triggers of migration m005) drops
what was loaded.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from mem.store import fts

if TYPE_CHECKING:
    from mem.store import Store

WARM_AFTER = 3  # like the vector matrix: one-shot commands never pay for loading
K1, B = 1.2, 0.75  # FTS5's bm25() constants
IDF_FLOOR = 1e-6  # FTS5 clamps idf <= 0 (terms in half the rows or more) to this
COLUMNS = ("text", "tags")
COLUMN_WEIGHTS = tuple(fts.COLUMN_WEIGHTS[c] for c in COLUMNS)
MAX_TOKENS_CACHED = 20_000  # distinct tokens whose postings are kept; beyond it the cache starts over


class TermIndex:
    """Warm BM25 for one Store (one connection); ``search`` returns None while the process is cold."""

    def __init__(self, store: "Store") -> None:
        self.store = store
        self.queries = 0
        self.loaded_max = -1  # newest rowid reflected; -1: nothing loaded
        self.loaded_id: str | None = None  # the memory at loaded_max when it was read (see _sync)
        self.epoch: str | None = None
        self.lengths: Any = None  # float64 token count per rowid (dense: index = rowid)
        self.rows = 0  # rows in the FTS index (FTS5's xRowCount)
        self.total = 0.0  # tokens in the FTS index (FTS5's xColumnTotalSize)
        self.postings: dict[str, tuple[Any, Any, Any]] = {}  # token -> (rowids, column ids, offsets), by rowid
        self.phrases: dict[tuple[str, ...], tuple[Any, Any]] = {}  # stems -> (rowids, weighted tf)
        # stems -> (rowids, BM25 contribution), valid while the index's row and token counts (so every
        # idf and the average length) are those of scored_for: at a million memories scoring one
        # common word's 380k postings took most of the channel's time, and words recur across queries
        self.scored: dict[tuple[str, ...], tuple[Any, Any]] = {}
        self.scored_for: tuple[int, float] | None = None

    # ---------------------------------------------------------------------------------- search
    def search(self, terms: list[str], k: int, scope: str | None) -> list[tuple[int, float]] | None:
        """The ``k`` best ``(rowid, score)`` in ``scope`` (None: every scope) for the OR of ``terms``
        (each a quoted FTS5 phrase), best first, ties by rowid, exactly as ``mem.store.fts.bm25``
        ranks them; None while the process is cold.
        """
        self.queries += 1
        if self.queries <= WARM_AFTER or k <= 0:
            return None
        from mem.store.fts import index_terms, only_scope

        self._sync()
        if self.rows == 0:
            return []
        stems = index_terms(self.store, terms)
        # Query order: each row's score sums its phrases in FTS5's order.
        if self.scored_for != (self.rows, self.total):
            self.scored.clear()
            self.scored_for = (self.rows, self.total)
        parts = [self._scored(stems[term]) for term in terms if stems[term]]  # a term without tokens matches nothing
        matched, values = combine_scores(parts)
        if scope is None or only_scope(self.store, scope):
            return _best(matched, values, k)
        return best_in_scope(self.store, matched, values, k, scope)

    def _scored(self, stems: tuple[str, ...]) -> tuple[Any, Any]:
        cached = self.scored.get(stems)
        if cached is None:
            rowids, tf = self._phrase(stems)
            cached = self.scored[stems] = (rowids, phrase_scores(rowids, tf, self.lengths, self.rows, self.total))
        return cached

    # ------------------------------------------------------------------------------- postings
    def _phrase(self, stems: tuple[str, ...]) -> tuple[Any, Any]:
        """Rows holding the phrase ``stems`` and its weighted count in each (FTS5's aFreq)."""
        import numpy as np

        cached = self.phrases.get(stems)
        if cached is not None:
            return cached
        rowids, columns, offsets = self._token(stems[0])
        if len(stems) > 1:
            # An instance is a position where token i sits at offset + i, for every i, in one column.
            key = _position_key(rowids, columns, offsets)
            for i, stem in enumerate(stems[1:], 1):
                r, c, o = self._token(stem)
                key = np.intersect1d(key, _position_key(r, c, o - i), assume_unique=True)
            rowids, columns = key >> 33, (key >> 32) & 1
        weights = np.asarray(COLUMN_WEIGHTS)[columns] if len(columns) else np.zeros(0)
        unique, where = np.unique(rowids, return_inverse=True)
        tf = np.bincount(where, weights=weights, minlength=len(unique)) if len(unique) else np.zeros(0)
        self.phrases[stems] = (unique.astype(np.int64), tf)
        return self.phrases[stems]

    def _token(self, stem: str) -> tuple[Any, Any, Any]:
        cached = self.postings.get(stem)
        if cached is None:
            if len(self.postings) >= MAX_TOKENS_CACHED:
                self.postings.clear()
                self.phrases.clear()
                self.scored.clear()
            cached = _unpacked(fts.fts_positions(self.store, stem, self.loaded_max))
            self.postings[stem] = cached
        return cached

    # ----------------------------------------------------------------------------------- sync
    def _sync(self) -> None:
        epoch, newest = fts.fts_state(self.store)
        # an insert rolled back after it was read leaves a gone row, or a rowid the next insert reuses
        gone = self.loaded_max > 0 and self.store.memory_id_at(self.loaded_max) != self.loaded_id
        if epoch != self.epoch or newest < self.loaded_max or gone:
            self._reset(epoch)
        if newest > self.loaded_max:
            self._append(newest)

    def _reset(self, epoch: str) -> None:
        import numpy as np

        self.epoch = epoch
        self.loaded_max = 0
        self.lengths = np.zeros(1024, dtype=np.float64)
        self.rows, self.total = 0, 0.0
        self.postings.clear()
        self.phrases.clear()
        self.scored.clear()

    def _append(self, newest: int) -> None:
        """Rows ``loaded_max < rowid <= newest``: their sizes, and their postings of cached tokens."""
        import numpy as np

        sized = fts.fts_sizes(self.store, self.loaded_max, newest)
        if sized:
            rowids = np.fromiter((rowid for rowid, _ in sized), dtype=np.int64, count=len(sized))
            sizes = _token_counts([blob for _, blob in sized])
            top = int(rowids[-1])
            if top >= len(self.lengths):
                grown = np.zeros(max(top + 1, 2 * len(self.lengths)), dtype=np.float64)
                grown[: len(self.lengths)] = self.lengths
                self.lengths = grown
            self.lengths[rowids] = sizes
            self.rows += len(sized)
            self.total += float(sizes.sum())
        if self.postings and sized:
            fresh: dict[str, list[tuple[int, str, int]]] = {}
            for stem, rowid, column, offset in fts.fts_tokenize(self.store, self.loaded_max, newest):
                if stem in self.postings:
                    fresh.setdefault(stem, []).append((rowid, column, offset))
            for stem, rows in fresh.items():
                old = self.postings[stem]
                new = _arrays(rows)
                self.postings[stem] = tuple(np.concatenate([a, b]) for a, b in zip(old, new))  # type: ignore[assignment]
            if fresh:
                self.phrases.clear()
                self.scored.clear()
        self.loaded_max = newest
        self.loaded_id = self.store.memory_id_at(newest)


def bm25_scores(phrases: list[tuple[Any, Any]], lengths: Any, rows: int, total: float) -> tuple[Any, Any]:
    """``(matched rowids, scores)`` of the OR of ``phrases``, each ``(rowids, weighted tf)``: FTS5's
    formula in FTS5's order of operations, ``lengths[rowid]`` the row's token count, ``rows`` and
    ``total`` the index's row and token counts. Both backends' warm indexes score with it."""
    return combine_scores([(rowids, phrase_scores(rowids, tf, lengths, rows, total)) for rowids, tf in phrases])


def phrase_scores(rowids: Any, tf: Any, lengths: Any, rows: int, total: float) -> Any:
    """One phrase's BM25 contribution to each of its rows (``rowids`` unique): ``idf * tf * (k1 + 1) /
    (tf + k1 * (1 - b + b * D / avgdl))``, FTS5's idf clamped to ``IDF_FLOOR``."""
    hits = len(rowids)
    if hits == 0:
        return tf[:0]
    avgdl = total / rows if rows else 0.0
    idf = math.log((rows - hits + 0.5) / (hits + 0.5))
    if idf <= 0.0:
        idf = IDF_FLOOR
    size = lengths[rowids]
    return idf * ((tf * (K1 + 1.0)) / (tf + K1 * (1 - B + B * size / avgdl)))


def combine_scores(parts: list[tuple[Any, Any]]) -> tuple[Any, Any]:
    """``(matched rowids, summed scores)`` of ``(rowids, contributions)`` parts, each row's sum taken in
    the parts' order (FTS5's: the query's phrases in turn)."""
    import numpy as np

    parts = [(rowids, scores) for rowids, scores in parts if len(rowids)]
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return empty, np.zeros(0)
    if len(parts) == 1:  # unique rowids, sorted: nothing to add up (0.0 + x is x)
        return parts[0]
    rowids = np.concatenate([r for r, _ in parts])
    scores = np.bincount(rowids, weights=np.concatenate([v for _, v in parts]))  # adds in array order
    # every match scores > 0 (idf >= IDF_FLOOR, tf > 0); numpy finds the set bits of a boolean array
    # about ten times faster than the non-zero floats (6.1 against 0.5 ms over a million rows)
    matched = np.flatnonzero(scores > 0)
    return matched, scores[matched]


def best_in_scope(store: "Store", matched: Any, values: Any, k: int, scope: str) -> list[tuple[int, float]]:
    """``_best`` among the rows of ``scope``: the best ``OVERFETCH`` x k rows overall are checked
    first, then a window four times as long, and so on (each window is a prefix of the full
    order, so the first k kept are exactly the scope's k best)."""
    from mem.store.fts import OVERFETCH, in_scope

    window = OVERFETCH * k
    while True:
        ranked = _best(matched, values, window)
        inside = in_scope(store, [rowid for rowid, _ in ranked], scope)
        kept = [hit for hit in ranked if hit[0] in inside]
        if len(kept) >= k or len(ranked) == len(matched):
            return kept[:k]
        window *= 4


def _best(rowids: Any, values: Any, k: int) -> list[tuple[int, float]]:
    """The ``k`` best ``(rowid, value)``, value descending, ties by rowid (FTS5's ORDER BY s DESC, rowid).
    Partitions first: every row tied with the k-th value is kept, so the tie order stays exact."""
    import numpy as np

    if k < len(values):
        kth = -np.partition(-values, k - 1)[k - 1]
        keep = np.flatnonzero(values >= kth)
        rowids, values = rowids[keep], values[keep]
    order = np.lexsort((rowids, -values))[:k]
    return [(int(rowids[i]), float(values[i])) for i in order]


def _arrays(rows: list[tuple[int, str, int]]) -> tuple[Any, Any, Any]:
    """(rowids, column ids, offsets) arrays from ``(rowid, column name, offset)`` rows."""
    import numpy as np

    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    rowids, columns, offsets = zip(*rows)
    return (np.asarray(rowids, dtype=np.int64), np.asarray([COLUMNS.index(c) for c in columns], dtype=np.int64),
            np.asarray(offsets, dtype=np.int64))


def _position_key(rowids: Any, columns: Any, offsets: Any) -> Any:
    """One sortable int64 per token position: rowid, column and offset packed (offsets < 2**32)."""
    return (rowids << 33) | (columns << 32) | (offsets & 0xFFFFFFFF)


def _unpacked(keys: Any) -> tuple[Any, Any, Any]:
    """(rowids, column ids, offsets) of ``_position_key``s."""
    return keys >> 33, (keys >> 32) & 1, keys & 0xFFFFFFFF


def _token_counts(blobs: list[bytes]) -> Any:
    """Token count of each row from its docsize blob; one numpy pass when every column count is
    below 128 (a one-byte varint each: nearly always), else varint by varint."""
    import numpy as np

    width = len(COLUMNS)
    if all(len(blob) == width for blob in blobs):
        raw = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), width)
        if not (raw & 0x80).any():
            return raw.sum(axis=1).astype(np.float64)
    return np.asarray([decode_sizes(blob) for blob in blobs], dtype=np.float64)


def decode_sizes(blob: bytes) -> int:
    """Sum of the SQLite varints in an FTS5 ``docsize`` blob: the row's token count over its columns.

    >>> decode_sizes(bytes([4, 0])), decode_sizes(bytes([0x81, 0x00, 3]))
    (4, 131)
    """
    total = value = 0
    for byte in blob:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            total += value
            value = 0
    return total
