"""Graph building at intake: entities, semantic, temporal and causal links, from the memory alone.

``after_insert`` runs inside the intake write transaction right after each insert, so it stays
cheap (a handful of indexed statements and one coarse KNN; no networkx, no LLM):

- entity: zero-LLM entities upserted by key, one ``memory_entities`` row per mention;
- semantic: ``see_also`` both ways to the most similar earlier memories of the scope;
- temporal: ``precedes`` from the previous memory of the same session (``meta.session``, else
  ``source``; ordered by ``created_at``, the session's own clock) and ``same_session`` to a few
  more before it; a memory arriving out of order is spliced into the chain;
- causal: cue phrases ("because", "fixed by", "so that", ...) link this memory to recent ones
  that share an entity with it.

>>> CAUSAL_CUES.search("The deploy failed because the token expired").group(0)
'because'
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from mem.store import graph as sql

if TYPE_CHECKING:
    import numpy as np

    from mem.enrich.entities import Entity
    from mem.records import Memory
    from mem.stages.context import Context

SEE_ALSO_MIN = 0.5  # cosine for a see_also link
SEE_ALSO_MAX = 5  # links per new memory
SESSION_WINDOW = 3  # same_session links to this many earlier session members beyond the previous one
CAUSAL_PER_ENTITY = 20  # recent mentioners looked at per shared entity
CAUSAL_MAX = 2  # causal links per cue-bearing memory
CAUSAL_MIN_SCORE = 0.25  # at least one shared entity with a fan of ~50 or less
CAUSAL_WINDOW_DAYS = 180
MAX_ENTITIES = 24  # per memory: a pasted log must not flood the entity table

# Cue -> (edge type, direction). "back": the earlier memory explains this one (earlier -> this);
# "forward": this memory acts on the earlier one (this -> earlier).
_CUES = {
    "because": ("caused", "back"), "due to": ("caused", "back"), "caused by": ("caused", "back"),
    "led to": ("caused", "back"), "reverted after": ("caused", "back"), "as a result of": ("caused", "back"),
    "fixed by": ("resolved", "forward"), "resolved by": ("resolved", "forward"), "fixed it by": ("resolved", "forward"),
    "so that": ("motivated", "back"), "in order to": ("motivated", "back"),
}
CAUSAL_CUES = re.compile(r"\b(" + "|".join(sorted(_CUES, key=len, reverse=True)).replace(" ", r"\s+") + r")\b",
                         re.IGNORECASE)
# Problem words: a "fixed by" memory resolves the most recent *problem* it shares an entity with.
PROBLEM = re.compile(r"\b(bug|error|errors|crash\w*|fail\w*|broke\w*|broken|issue|regression|outage|slow\w*|"
                     r"timeout\w*|leak\w*|flaky|exception|traceback|lock(?:ed|s|ing)?|deadlock\w*|hang\w*)\b",
                     re.IGNORECASE)

LAYER_OF_TYPE = {
    "see_also": "semantic", "similar_to": "semantic",
    "precedes": "temporal", "same_session": "temporal",
    "caused": "causal", "resolved": "causal", "motivated": "causal",
    "mentions": "entity",
    "supersedes": "lifecycle", "derived_from": "lifecycle",
}


def entities_of(memory: "Memory") -> "list[Entity]":
    """The zero-LLM entities ``after_insert`` records for ``memory`` (pure: intake runs it before its write lock)."""
    from mem.enrich.entities import extract_entities

    return extract_entities(memory.text)


def after_insert(ctx: "Context", rowid: int, memory: "Memory", vector: "np.ndarray | None",
                 *, entities: "list[Entity] | None" = None,
                 neighbours: "list[tuple[int, float]] | None" = None,
                 neighbour_ids: dict[int, str] | None = None) -> None:
    """Called inside the intake write transaction right after a memory is stored.

    ``entities`` (from a model, or ``entities_of`` run before the transaction) spare the
    extraction here; ``neighbours`` (rowid, cosine), looked up by intake before the insert, spare
    a second nearest-neighbour search, and ``neighbour_ids`` (rowid -> id) the lookup of their ids.
    """
    at = ctx.now_iso()
    entity_ids = link_entities(ctx, rowid, memory, entities)
    if vector is not None:
        link_semantic(ctx, rowid, memory, vector, at, neighbours, neighbour_ids)
    link_temporal(ctx, rowid, memory, at)
    link_causal(ctx, rowid, memory, entity_ids, at)


def link_entities(ctx: "Context", rowid: int, memory: "Memory", entities: "list[Entity] | None") -> list[int]:
    """Upsert the memory's entities (extracted here unless given) and record its mentions; returns entity ids."""
    found = entities_of(memory) if entities is None else entities
    ids: list[int] = []
    for entity in found[:MAX_ENTITIES]:
        if not entity.key or len(entity.key) > 200:
            continue
        ids.append(sql.upsert_entity(ctx.store, entity.key, entity.surface[:200], entity.type, memory.created_at))
    ids = list(dict.fromkeys(ids))  # two surfaces of one entity ("Postgres", "PostgreSQL") are one mention
    sql.add_mentions(ctx.store, rowid, ids)
    return ids


def link_semantic(ctx: "Context", rowid: int, memory: "Memory", vector: "np.ndarray", at: str,
                  neighbours: "list[tuple[int, float]] | None" = None,
                  neighbour_ids: dict[int, str] | None = None) -> int:
    """``see_also`` both ways to the most similar earlier memories of the same scope; returns links made."""
    import numpy as np

    store = ctx.store
    # ctx.vectors: coarse int8 KNN rescored in float32 when cold, the in-RAM matrix when warm (batches).
    found = neighbours if neighbours is not None else ctx.vectors.nearest(
        np.asarray(vector, dtype=np.float32), SEE_ALSO_MAX + 1, memory.scope)
    picked = [(sim, other) for other, sim in found if other != rowid and sim >= SEE_ALSO_MIN][:SEE_ALSO_MAX]
    if not picked:
        return 0
    known = neighbour_ids or {}
    missing = [r for _, r in picked if r not in known]
    ids = {**known, **sql.ids_of(store, missing)} if missing else known
    edges = []
    for sim, other in picked:
        if other in ids:
            edges.append((memory.id, ids[other], "semantic", "see_also", round(sim, 4)))
            edges.append((ids[other], memory.id, "semantic", "see_also", round(sim, 4)))
    return sql.add_edges(store, edges, at) // 2


def session_key(memory: "Memory") -> Any:
    """The memory's session: ``meta.session``, else its ``source`` (what ``graph.SESSION_KEY`` computes in SQL)."""
    session = memory.meta.get("session") if isinstance(memory.meta, dict) else None
    if isinstance(session, bool):  # json_extract gives SQLite's 1/0 for JSON true/false
        return int(session)
    if isinstance(session, (str, int, float)):
        return session
    if session is not None:  # an object or array: json_extract yields its JSON text
        import orjson

        return orjson.dumps(session).decode()
    return memory.source


def link_temporal(ctx: "Context", rowid: int, memory: "Memory", at: str) -> None:
    """``precedes`` chain and ``same_session`` window within the memory's session."""
    store = ctx.store
    key = session_key(memory)
    if key is None:
        return
    before = sql.session_members(store, memory.scope, key, memory.created_at, rowid, SESSION_WINDOW + 1, before=True)
    after = sql.session_members(store, memory.scope, key, memory.created_at, rowid, 1, before=False)
    edges = []
    if before:
        edges.append((before[0][1], memory.id, "temporal", "precedes", 1.0))
    if after:
        edges.append((memory.id, after[0][1], "temporal", "precedes", 1.0))
        if before:  # spliced in between two memories: they are no longer adjacent
            sql.delete_edge(store, before[0][1], after[0][1], "precedes")
    for distance, (_, other_id) in enumerate(before[1:], start=2):
        edges.append((other_id, memory.id, "temporal", "same_session", round(1.0 / distance, 4)))
    sql.add_edges(store, edges, at)


def link_causal(ctx: "Context", rowid: int, memory: "Memory", entity_ids: list[int], at: str) -> int:
    """Cue phrases link this memory to recent memories sharing an entity; returns links made."""
    from mem.enrich.dates import parse_datetime

    cue = CAUSAL_CUES.search(memory.text)
    if cue is None or not entity_ids:
        return 0
    kind, direction = _CUES[" ".join(cue.group(1).lower().split())]
    store = ctx.store
    fans = sql.entity_fans(store, entity_ids)
    scores: dict[int, float] = {}
    for entity_id in entity_ids:
        damp = 1.0 / math.log(1.0 + fans.get(entity_id, 1))
        for other in sql.recent_mentioners(store, entity_id, rowid, CAUSAL_PER_ENTITY):
            scores[other] = scores.get(other, 0.0) + damp
    if not scores:
        return 0
    info = sql.brief(store, list(scores))
    try:
        mine = parse_datetime(memory.created_at)
    except ValueError:
        return 0
    candidates: list[tuple[float, int, str, str]] = []
    for other, score in scores.items():
        if other not in info or score < CAUSAL_MIN_SCORE:
            continue
        other_id, scope, created, text = info[other]
        if scope != memory.scope:
            continue
        try:
            age = (mine - parse_datetime(created)).total_seconds() / 86400.0
        except ValueError:
            continue
        if abs(age) > CAUSAL_WINDOW_DAYS:
            continue
        candidates.append((score, other, other_id, text))
    if kind == "resolved":
        problems = [c for c in candidates if PROBLEM.search(c[3])]
        candidates = problems or candidates
    candidates.sort(key=lambda c: (-c[0], -c[1]))  # strongest, then most recent
    made = 0
    for score, _, other_id, _ in candidates[:CAUSAL_MAX]:
        weight = round(min(1.0, score), 4)
        src, dst = (other_id, memory.id) if direction == "back" else (memory.id, other_id)
        made += sql.add_edge(store, src, dst, "causal", kind, weight, at)
    return made
