"""Compact token states: stored at intake beside the vector (migration 11), read by MaxSim and
Fisher-Rao instead of running the model over the candidates, replaced with a new text, gone with
a purge or a reindex; ``vectors.var`` is dropped."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest
import sqlean
from hypothesis import given, settings
from hypothesis import strategies as st

from mem.score import tokens
from mem.score.tokens import TOKEN_DIMS, compact, compact_many, expand, maxsim, projected, projection, token_form
from tests.conftest import jsonl, run_mem


def _db() -> Path:
    return Path(os.environ["MEM_DB"])


def _rows(db: Path) -> dict[str, tuple[int, int]]:
    """memory text -> (form, stored bytes) of its token states."""
    conn = sqlean.connect(db)
    try:
        return {text: (form, len(blob)) for text, form, blob in conn.execute(
            "SELECT m.text, t.form, t.states FROM token_states t JOIN memories m ON m.rowid = t.rowid")}
    finally:
        conn.close()


# ------------------------------------------------------------------------------------ pure form
@settings(max_examples=40, deadline=None)
@given(st.integers(3, 40), st.integers(3, 12), st.integers(0, 2**31 - 1))
def test_compact_form_keeps_maxsim(memory_tokens: int, query_tokens: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    memory = rng.standard_normal((memory_tokens, 384)).astype(np.float32) + 0.3
    query = rng.standard_normal((query_tokens, 384)).astype(np.float32) + 0.3
    rows = expand(compact(memory))
    assert rows.shape == (memory_tokens - 2, TOKEN_DIMS)  # [CLS] and [SEP] are not kept
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    exact = maxsim(projected(query), projected(memory))
    assert abs(maxsim(projected(query), rows) - exact) < 0.01  # int8 costs under a hundredth


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 60), min_size=1, max_size=40), st.integers(0, 2**31 - 1), st.sampled_from([8, 64, 512]))
def test_compact_many_stores_the_bytes_compact_does(lengths: list[int], seed: int, group: int) -> None:
    # Intake compacts a chunk's texts together (``embed_for_store``); what it stores must be what each
    # text compacted alone gives, byte for byte, whatever the group size, and for texts of 1-3 tokens
    # and rows of zeros too.
    rng = np.random.default_rng(seed)
    texts = [rng.standard_normal((n, 384)).astype(np.float32) for n in lengths]
    texts[0][len(texts[0]) // 2] = 0.0
    old, tokens.COMPACT_GROUP = tokens.COMPACT_GROUP, group
    try:
        assert compact_many(texts) == [compact(s) for s in texts]
    finally:
        tokens.COMPACT_GROUP = old


def test_projection_never_changes() -> None:
    # Stored states of every database depend on this matrix: a new one would make them unreadable.
    p = projection(384, TOKEN_DIMS)
    assert p.shape == (384, 64) and np.allclose(np.abs(p), 64 ** -0.5)
    assert hashlib.sha256(np.sign(p).astype(np.int8).tobytes()).hexdigest()[:16] == "fdf4093f7903b4ab"


# -------------------------------------------------------------------------------------- schema
def test_migration_11_adds_token_states_and_drops_vectors_var(mem) -> None:
    from mem.store.migrations import LATEST, MIGRATIONS

    db = _db()
    conn = sqlean.connect(db)
    for migration in MIGRATIONS[:10]:  # a database as the previous release left it
        migration(conn)
    conn.execute("PRAGMA user_version = 10")
    conn.commit()
    conn.close()
    assert mem("add", "Redis is the cache").code == 0
    conn = sqlean.connect(db)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == LATEST  # 11 and every later one
        assert [r[1] for r in conn.execute("PRAGMA table_info(vectors)")] == ["rowid", "f32"]
        assert [r[1] for r in conn.execute("PRAGMA table_info(token_states)")] == ["rowid", "form", "states"]
    finally:
        conn.close()
    assert _rows(db) == {}  # the hash embedder has no token states


# ------------------------------------------------------------------------------ through the CLI
@pytest.mark.slow  # loads the MiniLM model
def test_minilm_intake_stores_token_states_that_search_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"MEM_EMBEDDER": "minilm"}
    texts = ["We chose Redis for the cache layer", "Postgres 15 runs in staging",
             "The cache of the web tier is warmed at deploy time"]
    added = run_mem("add", "-", env=env, input=jsonl(*({"text": t} for t in texts)))
    assert added.code == 0, added.stderr
    rows = _rows(_db())
    assert set(rows) == set(texts) and all(form == token_form() and size % TOKEN_DIMS == 0 and size
                                           for form, size in rows.values())

    def scores() -> dict[str, float]:
        result = run_mem("search", "which cache did we pick", "--channel", "+maxsim", env=env)
        assert result.code == 0, result.stderr
        return {h["text"]: h["why"]["maxsim"]["score"] for h in result.records}

    from mem.embed.minilm import MiniLM

    passes: list[int] = []
    real = MiniLM.token_states
    monkeypatch.setattr(MiniLM, "token_states", lambda self, t: passes.append(len(t)) or real(self, t))
    stored = scores()
    assert passes == []  # the query's vector pass gave its states; the memories' were stored
    assert stored["We chose Redis for the cache layer"] > stored["Postgres 15 runs in staging"]
    conn = sqlean.connect(_db())
    conn.execute("DELETE FROM token_states")
    conn.commit()
    conn.close()
    passes.clear()
    assert scores() == stored and passes == [3]  # computed now, in the very same form

    from mem.store import token_states

    reads: list[int] = []
    real_get = token_states.get
    monkeypatch.setattr(token_states, "get", lambda store, rowids, form: reads.append(len(rowids)) or real_get(store, rowids, form))
    both = run_mem("search", "which cache did we pick", "--channel", "+maxsim", "--channel", "+fisher", env=env)
    assert both.code == 0 and all("maxsim" in h["why"] and "fisher" in h["why"] for h in both.records), both.stderr
    assert len(reads) == 1  # MaxSim and Fisher-Rao share one read of the candidates' token states

    run_mem("add", "-", env=env, input=jsonl(*({"text": t} for t in texts)))  # duplicates: nothing new
    first = added.records[0]["id"]
    assert run_mem("update", first, "--text", "We chose Redis 7 with TLS for the cache layer", env=env).code == 0
    assert "We chose Redis 7 with TLS for the cache layer" in _rows(_db())
    assert run_mem("forget", added.records[1]["id"], "--purge", env=env).code == 0
    assert "Postgres 15 runs in staging" not in _rows(_db())
    assert run_mem("reindex", "--embedder", "hash", env=env).code == 0
    assert _rows(_db()) == {}  # states of another embedder's pass are gone with its vectors
