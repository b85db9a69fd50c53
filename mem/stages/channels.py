"""Retrieval channels for ``search``: semantic, bm25, entity, temporal, community; plus scene expansion.

Each channel is ``(ctx, plan) -> Ranking``; ``scene`` is a post-fusion step over the scored hits. Work shared between channels (query entities, time windows, the
semantic ranking) is memoized on ``plan.memo`` so a query pays for it once.

- entity: entities named in the query seed spreading activation over the memory<->entity
  bipartite graph (3 hops, decay 0.7), each spread divided by log(1 + fan) so an entity that
  many memories mention (or a memory that mentions many entities) passes on less;
- temporal: dates and periods in the query become event_at/created_at windows; memories inside
  rank by similarity. "When ..." questions without a date favour memories that carry an event_at;
- community: the communities whose centroids are nearest the query contribute their members;
- scene: the top dialogue turns pull in the turns right before and after them in their session.

>>> DECAY, HOPS
(0.7, 3)
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from mem.stages.query import Plan, Ranking
from mem.store import graph as sql
from mem.text import MAX_QUERY_TERMS, content_terms

if TYPE_CHECKING:
    from mem.stages.context import Context

DECAY = 0.7
HOPS = 3
SPREAD_MEMORIES = 50  # memories whose entities spread on hop 2
SPREAD_ENTITIES = 10  # entities that spread on hop 3
SPREAD_MAX_FAN = 200  # entities mentioned more often than this do not spread on hop 3 (too generic)
WINDOW_MEMBERS = 5000  # memories read per time window
COMMUNITIES_PER_QUERY = 3
COMMUNITY_MEMBERS = 300
SCENE_TOP = 3  # hits whose session neighbours are pulled in
SCENE_DISCOUNT = 0.7  # LoCoMo dev R@10: .5 -> .719, .7 -> .733, .8 -> .719
# A scene is a conversation: only dialogue turns pull in (and are pulled in as) neighbours. Facts and
# decisions noted in one work session are separate items: restricting the step took coding-memory R@5
# .863 -> .884 (LoCoMo, all dialogue turns: unchanged).
SCENE_KINDS = frozenset({"episode", "conversation"})


def _ranking(scores: dict[int, float], notes: dict[int, dict[str, Any]] | None = None) -> Ranking:
    ranked = sorted(scores, key=lambda r: (-scores[r], r))
    return Ranking(ranked, scores, notes or {})


def _damp(fan: int) -> float:
    return 1.0 / math.log(1.0 + max(1, fan))


# ------------------------------------------------------------------------------ shared analysis
def query_entities(ctx: "Context", plan: Plan) -> dict[str, tuple[int, int]]:
    """Known entities the query names: ``key -> (entity id, fan)``; extracted entities, plus the
    canonical form of each content word and word pair (so "postgres" or "connection pool" count too)."""
    if "entities" in plan.memo:
        return plan.memo["entities"]
    from mem.enrich.entities import extract_entities
    from mem.enrich.entity_keys import canonical
    text = plan.query.text
    keys = [e.key for e in extract_entities(text)]
    terms = content_terms(text)[:32]
    keys += [canonical(t) for t in terms]
    keys += [canonical(f"{a} {b}") for a, b in zip(terms, terms[1:])]
    keys = [k for k in dict.fromkeys(keys) if k]
    found = sql.entity_ids_for_keys(ctx.store, keys)
    plan.memo["entities"] = found
    return found


def time_windows(plan: Plan) -> list[Any]:
    """The query's time windows (``mem.enrich.query_time.query_windows``), computed once."""
    if "windows" not in plan.memo:
        from mem.enrich.query_time import query_windows

        plan.memo["windows"] = query_windows(plan.query.text, plan.now)
    return plan.memo["windows"]


def _semantic(ctx: "Context", plan: Plan) -> Ranking:
    ranking = plan.memo.get("ranking:semantic")
    if ranking is None:
        ranking = plan.memo["ranking:semantic"] = semantic(ctx, plan)
    return ranking


def _similarities(ctx: "Context", plan: Plan, rowids: list[int]) -> tuple[Any, Any]:
    """Cosine of the query to each of ``rowids`` that has a vector, as aligned arrays (rowids,
    cosines): from the in-RAM matrix when this process has one, else from the stored vectors."""
    import numpy as np

    warm = ctx.vectors.similarity_arrays(rowids, plan.vector)
    if warm is not None:
        return warm
    found, matrix = ctx.store.vectors_for(rowids)
    if not found:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    return np.asarray(found, dtype=np.int64), matrix @ np.asarray(plan.vector, dtype=np.float32)


def _by_similarity(ctx: "Context", plan: Plan, rowids: list[int]) -> dict[int, float]:
    found, sims = _similarities(ctx, plan, rowids)
    return dict(zip(found.tolist(), sims.tolist()))


# ------------------------------------------------------------------------------ text channels
def semantic(ctx: "Context", plan: Plan) -> Ranking:
    """Cosine over the float32 vectors (coarse int8 index when cold, in-RAM matrix when warm)."""
    found = ctx.vectors.nearest(plan.vector, plan.candidates, plan.scope)
    return Ranking([r for r, _ in found], dict(found))


def bm25(ctx: "Context", plan: Plan) -> Ranking:
    """FTS5 BM25 over text and tags (``Store.bm25_any``: the warm index in a process that searches
    often); the query is tokenized and every term quoted, so nothing raises."""
    terms = content_terms(plan.query.text)[:MAX_QUERY_TERMS]
    if not terms:
        return Ranking([], {})
    hits = ctx.store.bm25_any(terms, plan.candidates, plan.scope)
    return Ranking([r for r, _ in hits], dict(hits))


# --------------------------------------------------------------------------------------- entity
def entity(ctx: "Context", plan: Plan) -> Ranking:
    """Spreading activation from the query's entities over the memory<->entity graph."""
    seeds = query_entities(ctx, plan)
    if not seeds:
        return _ranking({})
    seed_ids = {eid: key for key, (eid, _) in seeds.items()}
    scores: dict[int, float] = {}
    # Hop 1: entity -> memories.
    first = sql.mention_weights(ctx.store, {eid: DECAY * _damp(fan) for eid, fan in seeds.values()},
                                plan.scope, plan.candidates)
    for rowid, a in first:
        scores[rowid] = scores.get(rowid, 0.0) + a
    top = [r for r, _ in first[:SPREAD_MEMORIES]]
    mentions = sql.entities_of(ctx.store, top)
    notes: dict[int, dict[str, Any]] = {}
    for rowid, eid, _, _, _ in mentions:
        if eid in seed_ids:
            notes.setdefault(rowid, {"via": []})["via"].append(seed_ids[eid])
    # Hop 2: memories -> their other entities, damped by how many entities each memory has.
    fans = sql.memory_fans(ctx.store, top)
    activation = dict(first)
    entity_act: dict[int, float] = {}
    entity_fan: dict[int, int] = {}
    for rowid, eid, _, _, fan in mentions:
        if eid in seed_ids or fan > SPREAD_MAX_FAN:
            continue
        entity_act[eid] = entity_act.get(eid, 0.0) + activation.get(rowid, 0.0) * DECAY * _damp(fans.get(rowid, 1))
        entity_fan[eid] = fan
    # Hop 3: those entities -> memories.
    spread = sorted(entity_act, key=lambda e: (-entity_act[e], e))[:SPREAD_ENTITIES]
    if spread:
        third = sql.mention_weights(ctx.store, {e: entity_act[e] * DECAY * _damp(entity_fan[e]) for e in spread},
                                    plan.scope, plan.candidates)
        for rowid, a in third:
            scores[rowid] = scores.get(rowid, 0.0) + a
    scores = {r: round(s, 6) for r, s in scores.items()}
    ranked = sorted(scores, key=lambda r: (-scores[r], r))[: plan.candidates]
    return _ranking({r: scores[r] for r in ranked}, {r: notes[r] for r in ranked if r in notes})


# ------------------------------------------------------------------------------------------ ppr
PPR_ALPHA = 0.85  # probability of following an edge rather than jumping back to the query's entities
PPR_ITERATIONS = 30


def ppr(ctx: "Context", plan: Plan) -> Ranking:
    """Personalised PageRank over the memory<->entity graph (the seed's multi-hop traversal),
    restarting at the query's entities (each weighted by ``1 / log(1 + fan)``, like ``entity``).

    A random walk that keeps returning to the query's entities settles on the memories that many
    short paths reach: the same idea as spreading activation, but over the whole graph and without
    a hop limit. Power iteration over the edge list (numpy); the graph is kept per process while
    ``graph.mentions_stamp`` holds.
    """
    import numpy as np

    seeds = query_entities(ctx, plan)
    view = _mention_graph(ctx, plan.scope) if seeds else None
    if view is None:
        return _ranking({})
    rowids, entity_index, to_entities, to_memories = view
    restart = np.zeros(len(entity_index), dtype=np.float64)
    for eid, fan in seeds.values():
        if eid in entity_index:
            restart[entity_index[eid]] += _damp(fan)
    if restart.sum() <= 0:
        return _ranking({})
    restart /= restart.sum()
    on_entities = restart.copy()
    on_memories = np.zeros(len(rowids), dtype=np.float64)
    for _ in range(PPR_ITERATIONS):
        on_memories = PPR_ALPHA * to_memories(on_entities)
        on_entities = (1.0 - PPR_ALPHA) * restart + PPR_ALPHA * to_entities(on_memories)
    top = np.argsort(-on_memories, kind="stable")[: plan.candidates]
    scores = {int(rowids[i]): round(float(on_memories[i]), 9) for i in top if on_memories[i] > 0}
    return _ranking(scores)


def _mention_graph(ctx: "Context", scope: str | None) -> tuple[Any, dict[int, int], Any, Any] | None:
    """The scope's bipartite graph as edge arrays: the rowid of each memory index, the index of each
    entity id, and the two walk steps (entities -> memories, memories -> entities) as functions."""
    import numpy as np

    stamp = sql.mentions_stamp(ctx.store)
    cached = ctx.cache.get(("mentions", scope))
    if cached is not None and cached[0] == stamp:
        return cached[1]
    _, pairs = sql.mention_pairs(ctx.store, scope)
    if not pairs:
        return None
    memory_ids = sorted({r for r, _ in pairs})
    entity_ids = sorted({e for _, e in pairs})
    memory_index = {r: i for i, r in enumerate(memory_ids)}
    entity_index = {e: i for i, e in enumerate(entity_ids)}
    rows = np.array([memory_index[r] for r, _ in pairs])
    cols = np.array([entity_index[e] for _, e in pairs])
    n_memories, n_entities = len(memory_ids), len(entity_ids)
    memory_degree = np.bincount(rows, minlength=n_memories).astype(np.float64)
    entity_degree = np.bincount(cols, minlength=n_entities).astype(np.float64)

    # Each step spreads a node's mass evenly over its edges (column-stochastic walk).
    def to_memories(on_entities: Any) -> Any:
        return np.bincount(rows, weights=(on_entities / entity_degree)[cols], minlength=n_memories)

    def to_entities(on_memories: Any) -> Any:
        return np.bincount(cols, weights=(on_memories / memory_degree)[rows], minlength=n_entities)

    view = (np.array(memory_ids), entity_index, to_entities, to_memories)
    ctx.cache[("mentions", scope)] = (stamp, view)
    return view


# ------------------------------------------------------------------------------------- temporal
def temporal(ctx: "Context", plan: Plan) -> Ranking:
    """Memories inside the query's time windows (by similarity); for "when" questions, similar
    memories that carry an event_at."""
    from mem.enrich.query_time import is_when_question
    from mem.enrich.timestamps import format_datetime

    windows = time_windows(plan)
    if windows:
        notes: dict[int, dict[str, Any]] = {}
        members: list[int] = []
        for window in windows:
            inside = sql.rowids_in_window(ctx.store, plan.scope, format_datetime(window.start),
                                          format_datetime(window.end), WINDOW_MEMBERS)
            for rowid in inside:
                if rowid not in notes:
                    notes[rowid] = {"window": window.surface}
                    members.append(rowid)
        sims = _by_similarity(ctx, plan, members)
        # In-window memories without a vector still count, just below those that have one.
        scores = {r: round(1.0 + sims.get(r, -1.0), 6) for r in members}
        ranked = sorted(scores, key=lambda r: (-scores[r], r))[: plan.candidates]
        return _ranking({r: scores[r] for r in ranked}, {r: notes[r] for r in ranked})
    if is_when_question(plan.query.text):
        semantic = _semantic(ctx, plan)
        dated = sql.with_event_at(ctx.store, semantic.ranked)
        scores = {r: semantic.scores[r] for r in semantic.ranked if r in dated}
        return _ranking(scores, {r: {"event_at": True} for r in scores})
    return _ranking({})


# ------------------------------------------------------------------------------------ community
def community(ctx: "Context", plan: Plan) -> Ranking:
    """Members of the communities whose centroids are nearest the query (only when communities exist)."""
    import numpy as np

    view = _communities(ctx, plan.scope)
    if view is None:
        return _ranking({})
    ids, unit, members_of = view
    q = np.asarray(plan.vector, dtype=np.float32)
    if unit.shape[1] != q.shape[0]:
        return _ranking({})  # stale centroids from another embedder: ignore until recomputed
    sims = unit @ q
    order = np.argsort(-sims, kind="stable")[:COMMUNITIES_PER_QUERY]
    chosen = [ids[i] for i in order if sims[i] > 0]
    notes: dict[int, dict[str, Any]] = {}
    members: list[int] = []
    for cid in chosen:
        if cid not in members_of:
            members_of[cid] = sql.community_rowids(ctx.store, [cid], COMMUNITY_MEMBERS)
        for rowid in members_of[cid]:
            if rowid not in notes:
                notes[rowid] = {"community": cid}
                members.append(rowid)
    rowids, sims = _similarities(ctx, plan, members)
    sims = np.round(sims, 6)
    order = np.lexsort((rowids, -sims))[: plan.candidates]  # ranked in numpy: only the kept become objects
    scores = dict(zip(rowids[order].tolist(), sims[order].tolist()))
    return _ranking(scores, {r: notes[r] for r in scores})


def _communities(ctx: "Context", scope: str | None) -> tuple[list[int], Any, dict[int, list[int]]] | None:
    """The scope's community ids, unit centroids and (filled as asked) member rowids; kept per process
    while ``graph.communities_stamp`` is unchanged, so a warm search reads one row, not every centroid.
    At 100k memories this step went from 5 ms to well under 1 ms."""
    import numpy as np

    stamp = sql.communities_stamp(ctx.store, scope)
    if stamp is None:
        return None
    cached = ctx.cache.get(("communities", scope))
    if cached is not None and cached[0] == stamp:
        return cached[1]
    ids, matrix = sql.centroids(ctx.store, scope)
    if matrix is None or not ids:
        return None
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    view = (ids, matrix / norms, {})
    ctx.cache[("communities", scope)] = (stamp, view)
    return view


# ---------------------------------------------------------------------------------------- scene
def _turn(memory: Any) -> bool:
    """A dialogue turn: an episode/conversation memory, or one written ``"<Name>: ..."``."""
    from mem.score.speaker import speaker_of

    return memory.kind in SCENE_KINDS or speaker_of(memory.text) is not None


def scene(ctx: "Context", top: list[tuple[float, int]]) -> dict[int, tuple[float, int]]:
    """Post-fusion: session neighbours of the best hits, ``rowid -> (discounted score, from rowid)``.

    ``top`` is ``(score, rowid)`` best first; a neighbour reached from several hits keeps the best.
    Only dialogue turns (``_turn``) pull in, and are pulled in as, neighbours.
    """
    parents = top[:SCENE_TOP]
    neighbours = {rowid: sql.scene_neighbours(ctx.store, rowid) for _, rowid in parents}
    memories = ctx.store.by_rowids({r for _, p in parents for r in (p, *neighbours[p])})
    turns = {r for r, m in memories.items() if _turn(m)}
    pulled: dict[int, tuple[float, int]] = {}
    for score, rowid in parents:
        if rowid not in turns:
            continue
        for other in neighbours[rowid]:
            if other not in turns:
                continue
            value = score * SCENE_DISCOUNT
            if other not in pulled or value > pulled[other][0]:
                pulled[other] = (value, rowid)
    return pulled
