"""Property tests: FTS quoting never raises, JSON Lines round-trip, fusion scores stay bounded."""

from __future__ import annotations

import io

import orjson
from hypothesis import given, settings, strategies as st

from mem.jsonl import read_records, write_records
from mem.score.fusion import apply_prior, prior, rrf
from mem.text import content_hash, fts_query

_conn = None


def fts_conn():
    global _conn
    if _conn is None:
        import sqlean

        _conn = sqlean.connect(":memory:")
        _conn.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61')")
        _conn.execute("INSERT INTO t(text) VALUES ('we chose redis for the cache layer'), ('NEAR AND OR NOT \"quoted\"')")
    return _conn


@given(st.text())
@settings(max_examples=300, deadline=None)
def test_fts_query_never_raises(text: str):
    match = fts_query(text)
    if match is not None:
        fts_conn().execute("SELECT rowid FROM t WHERE t MATCH ?", (match,)).fetchall()


def test_fts_query_finds_nul_and_syntax():
    assert fts_query("\x00") is None
    assert fts_conn().execute("SELECT count(*) FROM t WHERE t MATCH ?", (fts_query('redis" OR NEAR('),)).fetchone()[0] == 2


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


@given(st.lists(st.dictionaries(st.text(max_size=10), json_values, max_size=5), max_size=6))
@settings(max_examples=200, deadline=None)
def test_jsonl_round_trip(records: list[dict]):
    buffer = io.BytesIO()
    write_records(records, buffer)
    read = [r for _, r in read_records(io.BytesIO(buffer.getvalue()))]
    assert read == [orjson.loads(orjson.dumps(r)) for r in records]


@given(st.dictionaries(st.sampled_from(["semantic", "bm25", "entity"]), st.lists(st.integers(0, 50), unique=True, max_size=30)),
       st.floats(0, 1), st.floats(0, 1))
def test_fused_scores_bounded_and_priors_monotone(rankings: dict, p1: float, p2: float):
    fused = rrf(rankings, {"semantic": 1.0, "bm25": 1.0, "entity": 0.5})
    assert all(0.0 < v <= 1.0 + 1e-9 for v in fused.values())
    for value in fused.values():
        lo, hi = sorted((p1, p2))
        assert 0.0 <= apply_prior(value, lo) <= apply_prior(value, hi) <= value + 1e-12
    assert 0.0 <= prior({"activation": p1, "confidence": p2}) <= 1.0


@given(st.text(min_size=1))
def test_content_hash_ignores_spacing(text: str):
    assert content_hash(text) == content_hash("  " + text.replace(" ", "   ") + "\n")


@given(st.text(alphabet=st.characters(max_codepoint=127), min_size=1))
def test_content_hash_ignores_ascii_case(text: str):
    # Only ASCII: Unicode case mapping is not invertible ("ı".upper() is "I", which folds to "i").
    assert content_hash(text) == content_hash(text.swapcase())


_WORDS = st.text(alphabet="abt", min_size=1, max_size=8)  # few letters: prefixes of each other are common


@settings(max_examples=300)
@given(st.sets(_WORDS, min_size=1, max_size=6), st.lists(_WORDS, max_size=12))
def test_causal_focus_match_is_the_pairwise_rule(wanted: set[str], words: list[str]):
    """Causal linking's indexed stem match counts exactly what the pairwise rule does: equal stems,
    or one a prefix of the other when the shorter has STEM_PREFIX letters."""
    from mem.stages import link

    text = " ".join(words)
    stems = link._stems(text)
    pairwise = sum(1 for w in wanted if w in stems or any(
        min(len(w), len(s)) >= link.STEM_PREFIX and (s.startswith(w) or w.startswith(s)) for s in stems))
    assert link._held(wanted, text) == pairwise
