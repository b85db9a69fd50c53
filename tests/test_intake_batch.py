"""Batch intake is the same as adding one record at a time: per-chunk lookups change speed, not results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import given, settings, strategies as st

from mem.config import resolve_settings
from mem.records import Memory
from mem.stages import add
from mem.stages.context import Context
from mem.store import Store
from mem.store.graph import scope_edges
from mem.store.vectors import VectorIndex

STORY = [
    {"text": "We chose Postgres for the billing database", "meta": {"session": "s1"}},
    {"text": "We chose Postgres for the billing database", "meta": {"session": "s1"}},  # exact duplicate
    {"text": "Billing runs on Postgres 16 with pgbouncer in front", "meta": {"session": "s1"}},
    {"text": "The deploy failed because the Postgres token expired", "meta": {"session": "s1"}},
    {"text": "Fixed by rotating the Postgres token in Vault", "meta": {"session": "s2"}},
    {"text": "Alice owns the billing service and its Postgres schema", "meta": {"session": "s2"}},
    {"text": "Alice owns the billing service and its Postgres schema!", "meta": {"session": "s2"}},  # near duplicate
    {"text": "Run make test-billing before pushing changes to billing/models.py", "source": "CONTRIBUTING.md"},
    {"text": "Never deploy billing on Fridays", "source": "CONTRIBUTING.md"},
    {"text": "We use tabs in the billing Makefile", "scope": "other"},
    {"text": "We chose Postgres for the billing database", "scope": "other"},  # same text, other scope: stored
    {"text": "Actually we deploy billing on Fridays now, the freeze is over", "meta": {"session": "s3"}},
]


def _records() -> list[tuple[int, dict[str, Any]]]:
    return [(i + 1, {**r, "created_at": f"2024-01-01T00:{i:02d}:00Z"}) for i, r in enumerate(STORY)]


def _ingest(db: Path, batches: list[list[tuple[int, dict[str, Any]]]]) -> tuple[list[tuple[str, str]], set[tuple]]:
    """Statuses (by line) and every edge as (text, text, type) after ingesting ``batches`` in order."""
    settings_ = resolve_settings(db=db, embedder="hash", scope="test", now="2024-02-01T00:00:00Z")
    with Store.open(db) as store:
        ctx = Context(store=store, settings=settings_)
        outcomes = [(o.status, o.reason or "") for batch in batches for o in add.run(ctx, batch)]
        texts = {m.id: f"{m.scope}:{m.text}" for _, m in store.select(scope=None, statuses=None)}
        edges = {(texts[s], texts[d], t) for scope in ("test", "other") for s, d, _, t, _ in scope_edges(store, scope)}
    return outcomes, edges


def test_one_batch_equals_one_record_at_a_time(tmp_path: Path):
    records = _records()
    batched = _ingest(tmp_path / "batch.db", [records])
    single = _ingest(tmp_path / "single.db", [[r] for r in records])
    assert batched == single
    statuses = [s for s, _ in batched[0]]
    assert statuses[1] == "duplicate" and statuses[6] == "duplicate" and statuses[10] == "added"
    assert any(t == "see_also" for _, _, t in batched[1]) and any(t == "precedes" for _, _, t in batched[1])


def test_a_batch_split_across_chunks_equals_one_chunk(tmp_path: Path, monkeypatch):
    records = _records()
    whole = _ingest(tmp_path / "whole.db", [records])
    monkeypatch.setattr(add, "CHUNK", 3)  # several chunks: the next one is prepared in a thread meanwhile
    chunked = _ingest(tmp_path / "chunked.db", [records])
    assert chunked == whole


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 40), st.integers(1, 6), st.integers(1, 12), st.floats(-1.0, 0.9), st.integers(0, 10_000))
def test_nearest_many_is_nearest_above_the_floor(tmp_path_factory, rows, queries, k, floor, seed):
    rng = np.random.default_rng(seed)
    db = tmp_path_factory.mktemp("v") / "v.db"
    with Store.open(db) as store:
        store.bind_embedder("hash", "test", lambda: 8)
        with store.write():
            for i in range(rows):
                memory = Memory(id=f"0190{i:04d}-0000-7000-8000-000000000000", text=f"memory {i}",
                                scope="a" if i % 3 else "b", created_at="2024-01-01T00:00:00Z",
                                updated_at="2024-01-01T00:00:00Z", content_hash=str(i))
                rowid = store.insert_memory(memory)
                vector = rng.normal(size=8).astype(np.float32)
                store.put_vector(rowid, memory.scope, vector / np.linalg.norm(vector))
        vectors = rng.normal(size=(queries, 8)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        scopes = [["a", "b", None][i % 3] for i in range(queries)]
        warm = VectorIndex(store)
        warm.queries = 99  # skip the cold int8 path: compare the exact paths
        batch = warm.nearest_many(vectors, k, scopes, floor=floor)
        one_by_one = [[hit for hit in warm.nearest(v, k, s) if hit[1] >= floor] for v, s in zip(vectors, scopes)]
    # Same neighbours in the same order; similarities equal up to float32 rounding (matrix vs vector product).
    assert [[r for r, _ in hits] for hits in batch] == [[r for r, _ in hits] for hits in one_by_one]
    assert np.allclose([s for hits in batch for _, s in hits], [s for hits in one_by_one for _, s in hits], atol=1e-6)


def _store_vectors(store: Store, vectors: np.ndarray, scopes: list[str]) -> list[int]:
    store.bind_embedder("hash", "test", lambda: vectors.shape[1])
    rowids = []
    with store.write():
        for i, (vector, scope) in enumerate(zip(vectors, scopes)):
            memory = Memory(id=f"0190{i:04d}-0000-7000-8000-000000000000", text=f"memory {i}", scope=scope,
                            created_at="2024-01-01T00:00:00Z", updated_at="2024-01-01T00:00:00Z", content_hash=str(i))
            rowids.append(store.insert_memory(memory))
            store.put_vector(rowids[-1], scope, vector)
    return rowids


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 300), st.integers(1, 80), st.integers(1, 12), st.floats(-1.0, 0.95), st.integers(0, 10_000),
       st.sampled_from([0, 2, 8]))
def test_intake_neighbours_are_exact_below_each_bound(tmp_path_factory, rows, queries, k, floor, seed, folded):
    """``mem.stages.neighbours.nearest`` (eager intake and the finishing pass) is the exact top k above
    the floor among the rows below each query's bound, ties by rowid; repeated vectors make ties. With
    a projection on the index (``folded`` dimensions: principal or random, as the warm index keeps
    for large matrices) the bound-and-rescore path must give the same answer."""
    from mem.stages import neighbours

    rng = np.random.default_rng(seed)
    distinct = rng.normal(size=(max(2, rows // 2), 16)).astype(np.float32)
    stored = distinct[rng.integers(0, len(distinct), rows)]  # repeats: exact ties
    stored /= np.linalg.norm(stored, axis=1, keepdims=True)
    scopes = ["a" if i % 3 else "b" for i in range(rows)]
    db = tmp_path_factory.mktemp("n") / "n.db"
    with Store.open(db) as store:
        rowids = _store_vectors(store, stored, scopes)
        picks = rng.integers(0, rows, queries)
        asked = stored[picks] + rng.normal(scale=0.3, size=(queries, 16)).astype(np.float32) * (picks % 2)[:, None]
        asked = (asked / np.linalg.norm(asked, axis=1, keepdims=True)).astype(np.float32)
        asked_scopes = [["a", "b", None, "nowhere"][i % 4] for i in range(queries)]
        bounds = [int(rowids[p]) for p in picks]
        index = VectorIndex(store)
        index.sync()
        if folded:
            if seed % 2:  # principal directions, as the warm index picks them
                basis = np.linalg.eigh(stored.T.astype(np.float64) @ stored)[1][:, ::-1][:, :folded]
            else:  # any orthonormal basis keeps the bound true, however little of the energy it holds
                basis = np.linalg.qr(rng.normal(size=(16, folded)))[0]
            index.basis = np.ascontiguousarray(basis, dtype=np.float32)
            index.projected = index.matrix @ index.basis
        got = neighbours.nearest(index, asked, asked_scopes, k, floor, before=bounds)
        unbounded = neighbours.nearest(index, asked, asked_scopes, k, floor)
    for i, query in enumerate(asked):
        sims = neighbours.cosines(stored, query)  # the one definition of a cosine, the brute force below
        for hits, bound in ((got[i], bounds[i]), (unbounded[i], None)):
            expected = sorted(((-float(sims[j]), rowids[j]) for j in range(rows)
                               if (bound is None or rowids[j] < bound) and float(sims[j]) >= floor
                               and asked_scopes[i] in (None, scopes[j])))[:k]
            assert hits == [(rowid, -sim) for sim, rowid in expected]


# Entities recur under other surfaces and times out of order; corrections that are no semantic neighbour
# of what they correct find it by full-text lookup inside the chunk (Store.bulk_writes indexes the rows
# inserted before each lookup); the entity rows a chunk upserted are remembered (graph.upsert_entity).
LOOKUPS = [
    ("The dev API listens on port 8000 behind uvicorn", "2024-03-02T10:00:00Z"),
    ("Redis is the cache for the gateway; ask Priya about its eviction policy", "2024-03-01T09:00:00Z"),
    ("redis keeps the gateway sessions for 30 minutes", "2024-03-03T09:00:00Z"),
    ("REDIS memory limit is 2 GB on the gateway box", "2024-02-27T09:00:00Z"),
    ("Priya Raman owns the gateway and its Redis config", "2024-03-04T09:00:00Z"),
    ("The dev API now listens on port 8080, not 8000.", "2024-03-05T09:00:00Z"),
    ("Sessions in redis now expire after 45 minutes instead of 30 minutes", "2024-03-06T09:00:00Z"),
    ("Daniel Okafor owns the gateway from now on", "2024-03-07T09:00:00Z"),
    ("The Redis memory limit was raised to 4 GB", "2024-02-28T09:00:00Z"),
    ("Kafka carries the gateway audit events to ClickHouse", "2024-03-08T09:00:00Z"),
    ("kafka retention for the audit topic is 7 days", "2024-03-09T09:00:00Z"),
    ("Audit topic retention in Kafka changed from 7 days to 14 days", "2024-03-10T09:00:00Z"),
]


def _graph(db: Path, batches: list[list[tuple[int, dict[str, Any]]]]) -> dict[str, Any]:
    """Statuses, edges, entities (every column but the id), mentions and changelog ops by text, and each
    memory's full-text hits, after ingesting ``batches`` in order."""
    settings_ = resolve_settings(db=db, embedder="hash", scope="test", now="2024-04-01T00:00:00Z")
    with Store.open(db) as store:
        ctx = Context(store=store, settings=settings_)
        statuses = [o.status for batch in batches for o in add.run(ctx, batch)]
        conn = store.conn
        text_of = dict(conn.execute("SELECT id, text FROM memories"))
        edges = sorted((text_of[s], text_of[d], t, w) for s, d, t, w in conn.execute("SELECT src, dst, type, weight FROM edges"))
        entities = sorted(conn.execute("SELECT key, name, type, aliases, mention_count, first_seen, last_seen FROM entities"))
        mentions = sorted(conn.execute("SELECT m.text, e.key FROM memory_entities x JOIN memories m ON m.rowid = x.memory_rowid "
                                       "JOIN entities e ON e.id = x.entity_id"))
        log = [(op, text_of.get(mid)) for op, mid in conn.execute("SELECT op, memory_id FROM changelog ORDER BY seq")]
        hits = {text: store.bm25_any([f'"{w}"' for w in text.split()[:3]], 5, "test") for text in text_of.values()}
    return {"statuses": statuses, "edges": edges, "entities": entities, "mentions": mentions, "log": log, "hits": hits}


def test_a_chunk_with_lookups_and_recurring_entities_equals_one_record_at_a_time(tmp_path: Path):
    records = [(i + 1, {"text": text, "created_at": at}) for i, (text, at) in enumerate(LOOKUPS)]
    assert len(records) >= add.BATCHED_WRITES  # the batch indexes its text in batches, lookups inside it
    batched = _graph(tmp_path / "batch.db", [records])
    single = _graph(tmp_path / "single.db", [[r] for r in records])
    assert batched == single
    assert "superseded" in {s for s in batched["statuses"]} or any(t == "supersedes" for _, _, t, _ in batched["edges"])
    redis = next(row for row in batched["entities"] if row[0] == "redis")
    assert redis[5] == "2024-02-27T09:00:00.000Z" and redis[6] == "2024-03-06T09:00:00.000Z"  # times out of order
    assert all(hits for hits in batched["hits"].values())  # every memory found by its own words


def test_remembered_entity_rows_are_what_the_upsert_leaves(tmp_path: Path):
    """``graph.upsert_entity`` with the rows its transaction upserted (``known``) leaves every entity as
    the plain upsert does: surfaces in other cases, times before, between and after, a full alias list."""
    from mem.store import graph

    surfaces = ["Redis", "redis", "REDIS", "Redis", "rEdis"] + [f"Redis{i}" for i in range(25)] + ["Redis", "redis7"]
    times = ["2024-01-05", "2024-01-03", "2024-01-09", "2024-01-09", "2024-01-01", "2024-01-07"]
    rows = []
    for remembered in (False, True):
        with Store.open(tmp_path / f"e{remembered}.db") as store, store.write():
            known: dict[str, list[Any]] | None = {} if remembered else None
            ids = [graph.upsert_entity(store, "redis", surface, "tool", times[i % len(times)], known)
                   for i, surface in enumerate(surfaces)]
            ids.append(graph.upsert_entity(store, "kafka", "Kafka", "tool", "2024-01-02", known))
            rows.append((ids, store.conn.execute("SELECT * FROM entities ORDER BY id").fetchall()))
    assert rows[0] == rows[1]
    assert len(rows[0][1][0][4].split(",")) == graph.MAX_ALIASES  # the alias list filled up


# Memories of one chunk that correct each other: rivals on one slot (the conflict pass), corrections by
# shape and by a value swapped (the corrections pass), a correction of a correction, an older memory
# arriving after what corrects it, and a pinned one that is only contradicted. Eager intake reads the
# rivals once per chunk (``lifecycle.RivalRows``), kept current as the chunk stores, indexes and supersedes.
CHAIN = [
    ("The billing API listens on port 8000", "2024-05-01T09:00:00Z", {}),
    ("The billing API now listens on port 8080, not 8000.", "2024-05-02T09:00:00Z", {}),
    ("The billing API now listens on port 9090, not 8080.", "2024-05-03T09:00:00Z", {}),
    ("We use Postgres for the orders database", "2024-05-01T10:00:00Z", {}),
    ("We use MySQL for the orders database", "2024-05-04T10:00:00Z", {}),
    ("We use CockroachDB for the orders database", "2024-05-05T10:00:00Z", {}),
    ("Loki keeps two weeks of logs", "2024-05-01T11:00:00Z", {}),
    ("Loki holds 30 days of logs since the audit.", "2024-05-06T11:00:00Z", {}),
    ("The staging cluster runs Kubernetes 1.27", "2024-05-08T12:00:00Z", {}),
    ("The staging cluster runs Kubernetes 1.25", "2024-05-01T12:00:00Z", {}),  # older, arrives after its update
    ("Deploys are frozen on Fridays", "2024-05-01T13:00:00Z", {"pinned": True}),
    ("Deploys are no longer frozen on Fridays", "2024-05-09T13:00:00Z", {}),
    ("The nightly export writes to bucket exports-eu", "2024-05-01T14:00:00Z", {}),
    ("The nightly export now writes to bucket exports-us instead of exports-eu", "2024-05-10T14:00:00Z", {}),
]


def _chain() -> list[tuple[int, dict[str, Any]]]:
    return [(i + 1, {"text": text, "created_at": at, **extra}) for i, (text, at, extra) in enumerate(CHAIN)]


def test_a_chunk_that_corrects_itself_equals_one_record_at_a_time(tmp_path: Path):
    records = _chain()
    assert len(records) >= add.BATCHED_WRITES
    batched = _graph(tmp_path / "batch.db", [records])
    single = _graph(tmp_path / "single.db", [[r] for r in records])
    assert batched == single
    supersedes = {(new, old) for new, old, kind, _ in batched["edges"] if kind == "supersedes"}
    assert ("The billing API now listens on port 9090, not 8080.", "The billing API now listens on port 8080, not 8000.") \
        in supersedes  # a correction of a correction
    assert ("The staging cluster runs Kubernetes 1.27", "The staging cluster runs Kubernetes 1.25") in supersedes
    assert batched["statuses"][9] == "superseded"  # the older one arrived after its update
    assert not any(old == "Deploys are frozen on Fridays" for _, old in supersedes)  # pinned: never superseded


def test_rival_limits_saturate_alike_in_a_chunk(tmp_path: Path, monkeypatch):
    """With two rivals a key, each chunk's kept key lists must drop what the statement's LIMIT drops."""
    from mem.stages import supersede

    monkeypatch.setattr(supersede, "CANDIDATES", 1)
    records = _chain()
    assert _graph(tmp_path / "batch.db", [records]) == _graph(tmp_path / "single.db", [[r] for r in records])


def test_rival_rows_answer_as_the_statements_do(tmp_path: Path):
    """``RivalRows`` against ``conflict_candidates``, ``correction_candidates`` and ``arrival`` on a real
    store, while a transaction stores, indexes and supersedes through it."""
    from mem.stages import supersede
    from mem.store import lifecycle as sql

    db = tmp_path / "r.db"
    settings_ = resolve_settings(db=db, embedder="hash", scope="test", now="2024-06-01T00:00:00Z")
    with Store.open(db) as store:
        ctx = Context(store=store, settings=settings_)
        list(add.run(ctx, _chain()[:8]))
        stored = {rowid: memory for rowid, memory in store.select(scope=None, statuses=None)}

        def same(kept: sql.RivalRows, limit: int) -> None:
            for rowid, memory in stored.items():
                scope, keys, values = supersede.rival_lookups(memory, supersede.assertions_of(memory))
                asked = {"scope": scope, "keys": keys, "values": values, "exclude": rowid, "limit": limit}
                assert kept.conflicts(**asked) == sql.conflict_candidates(store, **asked)
                others = sorted(stored)
                for sharers in (0, 3):
                    assert kept.corrections(rowid, scope, others, limit=sharers) == \
                        sql.correction_candidates(store, rowid, scope, others, limit=sharers)

        with store.write():
            kept = sql.RivalRows(store)
            for limit in (50, 1):
                same(kept, limit)
            for line, record in _chain()[8:]:
                memory = add.validate(record, line, ctx, add.AddOptions()).memory
                memory.id = f"0190{line:04d}-0000-7000-8000-000000000000"
                memory.content_hash = str(line)
                rowid = store.insert_memory(memory)
                kept.stored(rowid, memory)
                assert kept.arrival(rowid) == sql.arrival(store, rowid, memory.scope, memory.created_at)
                supersede.index(ctx, rowid, memory, None, kept)
                stored[rowid] = memory
                same(kept, 1)
            older = next(m for m in stored.values() if m.text.startswith("We use") and m.superseded_by is None)
            store.update_memory(older.id, {"superseded_by": memory.id}, at="2024-06-01T00:00:00Z", op="supersede")
            kept.superseded(older.id)
            same(kept, 1)
            same(kept, 50)


def test_rival_rows_read_a_shared_subject_once(tmp_path: Path):
    """Two assertion keys of one subject (two slots) are one lookup: read twice, its rowids counted twice
    would push the older rivals out of the kept list before the statement's LIMIT does."""
    from mem.store import lifecycle as sql

    db = tmp_path / "s.db"
    settings_ = resolve_settings(db=db, embedder="hash", scope="test", now="2024-06-01T00:00:00Z")
    insert = ("INSERT INTO assertions(memory_rowid, scope, attribute, subject, slot, value, polarity) "
              "VALUES (?, 'test', 'uses', 'api', ?, ?, 1)")
    with Store.open(db) as store:
        ctx = Context(store=store, settings=settings_)
        list(add.run(ctx, [(i + 1, {"text": f"Service {i} note", "created_at": "2024-05-01T00:00:00Z"}) for i in range(4)]))
        with store.write():
            store.conn.executemany(insert, [(r, f"slot{r}", f"v{r}") for r in (1, 2, 3)])
            asked = {"scope": "test", "keys": [("uses", "api", "slot3"), ("uses", "api", "other")], "values": [],
                     "exclude": 4, "limit": 2}
            kept = sql.RivalRows(store)
            assert kept.conflicts(**asked) == sql.conflict_candidates(store, **asked)
            store.conn.execute(insert, (4, "slot4", "v4"))
            kept.indexed(4, "test", [("uses", "api", "slot4", "v4", True)])  # the newest row heads the lists
            assert [r for r, _ in kept.conflicts(**asked)] == [r for r, _ in sql.conflict_candidates(store, **asked)] \
                == [3, 2]
