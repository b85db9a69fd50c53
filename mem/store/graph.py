"""Knowledge-graph SQL: entities, mentions, edges, sessions, communities. Functions taking the Store.

Every SQL string of the graph feature lives here (the Store module stays the only other place
with SQL). Edges join memories by public ``id``; mentions and community members by ``rowid``.

>>> # with Store.open(path) as store, store.write():
>>> #     add_edge(store, "0190...a", "0190...b", "semantic", "see_also", 0.71, "2026-01-01T00:00:00.000Z")
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import orjson

from mem.store import batches

if TYPE_CHECKING:
    import numpy as np

    from mem.store import Store

# The session key: must be spelled exactly as in m002's ``memories_session`` index to use it.
SESSION_KEY = "COALESCE(json_extract(m.meta, '$.session'), m.source)"
MAX_ALIASES = 20
EDGE_COLUMNS = ("src", "dst", "layer", "type", "weight", "created_at", "origin")


# ------------------------------------------------------------------------------- entities (intake)
def upsert_entity(store: "Store", key: str, surface: str, kind: str, at: str,
                  known: "dict[str, list[Any]] | None" = None) -> int:
    """Insert or refresh an entity by key (inside a write txn); returns its id. Aliases = distinct surfaces.

    ``known``: what this transaction's upserts left (key -> [id, first_seen, last_seen, surfaces it
    holds an alias for]), kept by the caller for one write transaction only. An entity seen there
    with this surface, first seen no later than ``at``, is what the upsert would leave it (its alias
    test finds the surface, the times do not move) but for a later ``last_seen``: nothing is written
    but that (intake mentions the same entities over and over; the upsert's alias scan cost more
    than the rest of the entity step, bench/README.md)."""
    row = known.get(key) if known is not None else None
    if row is not None and surface in row[3] and row[1] <= at:
        if at > row[2]:
            store.conn.execute("UPDATE entities SET last_seen = ? WHERE id = ?", (at, row[0]))
            row[2] = at
        return int(row[0])
    entity_id, first, last = store.conn.execute(
        "INSERT INTO entities(key, name, type, aliases, mention_count, first_seen, last_seen) "
        "VALUES (?, ?, ?, json_array(?), 0, ?, ?) "
        "ON CONFLICT(key) DO UPDATE SET "
        "  first_seen = MIN(COALESCE(entities.first_seen, excluded.first_seen), excluded.first_seen), "
        "  last_seen = MAX(COALESCE(entities.last_seen, excluded.last_seen), excluded.last_seen), "
        "  aliases = CASE WHEN json_array_length(entities.aliases) >= ? OR EXISTS ("
        "      SELECT 1 FROM json_each(entities.aliases) a WHERE lower(a.value) = lower(excluded.name)) "
        "    THEN entities.aliases ELSE json_insert(entities.aliases, '$[#]', excluded.name) END "
        "RETURNING id, first_seen, last_seen",
        (key, surface, kind, surface, at, at, MAX_ALIASES),
    ).fetchone()
    if known is not None:
        # the surface is an alias now, or matched one already; a full alias list takes no more, so a
        # surface it lacks goes back to the statement above, which leaves the list as it is
        known[key] = [entity_id, first, last, (row[3] if row is not None else set()) | {surface}]
    return int(entity_id)


def add_mentions(store: "Store", memory_rowid: int, entity_ids: Sequence[int]) -> None:
    """Record that a memory mentions entities (distinct ids), counting each mention once (inside a write txn)."""
    if not entity_ids:
        return
    before = store.conn.total_changes
    store.conn.executemany("INSERT OR IGNORE INTO memory_entities(memory_rowid, entity_id) VALUES (?, ?)",
                           [(memory_rowid, e) for e in entity_ids])
    if store.conn.total_changes - before == len(entity_ids):  # all new (a new memory): one counting statement
        store.conn.execute("UPDATE entities SET mention_count = mention_count + 1 "
                           f"WHERE id IN ({batches.marks(len(entity_ids))})", list(entity_ids))
        return
    for entity_id in entity_ids:  # some were recorded before: count only the new ones
        store.conn.execute(
            "UPDATE entities SET mention_count = (SELECT COUNT(*) FROM memory_entities WHERE entity_id = ?) WHERE id = ?",
            (entity_id, entity_id))


def entity_names(store: "Store", entity_ids: Sequence[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    for chunk, marks in batches.in_lists(list(entity_ids)):
        out.update((int(i), str(n)) for i, n in store.conn.execute(
            f"SELECT id, name FROM entities WHERE id IN ({marks})", list(chunk)))
    return out


def entity_fans(store: "Store", entity_ids: Sequence[int]) -> dict[int, int]:
    """How many memories mention each entity (the fan of the fan effect)."""
    if not entity_ids:
        return {}
    rows = store.conn.execute(
        f"SELECT id, mention_count FROM entities WHERE id IN ({batches.marks(len(entity_ids))})", list(entity_ids)
    )
    return {int(i): max(1, int(c)) for i, c in rows}


def recent_mentioners(store: "Store", entity_id: int, before_rowid: int, limit: int) -> list[int]:
    """The latest ``limit`` memories (by insertion) before ``before_rowid`` that mention an entity."""
    rows = store.conn.execute(
        "SELECT memory_rowid FROM memory_entities WHERE entity_id = ? AND memory_rowid < ? "
        "ORDER BY memory_rowid DESC LIMIT ?",
        (entity_id, before_rowid, limit),
    )
    return [int(r[0]) for r in rows]


def recent_in_scope(store: "Store", scope: str, created_at: str, rowid: int, limit: int) -> list[int]:
    """The latest ``limit`` memories of ``scope`` created at or before ``created_at`` and stored before
    ``rowid`` (what intake of ``rowid`` saw: a bulk import's finishing pass runs once later rows
    exist), newest first, ties by rowid, newest stored first.

    Two seeks of the (scope, created_at) index, whose entries of one ``created_at`` are in rowid order:
    the ties first, up to ``rowid``. As one range (``created_at <= ?``, newest first) the walk passed
    every tie stored after ``rowid`` before the first it kept: O(n - r) for memory r in the finishing
    pass of an import that shares one creation time (22 ms at rowid 10 of a 50k-memory slice)."""
    rows = [int(r) for (r,) in store.conn.execute(
        "SELECT rowid FROM memories WHERE scope = ? AND created_at = ? AND rowid < ? ORDER BY rowid DESC LIMIT ?",
        (scope, created_at, rowid, limit))]
    if len(rows) < limit:
        rows += [int(r) for (r,) in store.conn.execute(
            "SELECT rowid FROM memories WHERE scope = ? AND created_at < ? AND rowid < ? "
            "ORDER BY created_at DESC, rowid DESC LIMIT ?", (scope, created_at, rowid, limit - len(rows)))]
    return rows


def brief(store: "Store", rowids: Sequence[int]) -> dict[int, tuple[str, str, str, str]]:
    """``rowid -> (id, scope, created_at, text)`` without decoding whole memories (intake hot path)."""
    out: dict[int, tuple[str, str, str, str]] = {}
    ids = list(rowids)
    for chunk, marks in batches.in_lists(ids):
        for rowid, mid, scope, created, text in store.conn.execute(
            f"SELECT rowid, id, scope, created_at, text FROM memories WHERE rowid IN ({marks})", list(chunk)
        ):
            out[int(rowid)] = (mid, scope, created, text)
    return out


# ------------------------------------------------------------------------------------ sessions
def session_members(store: "Store", scope: str, key: Any, created_at: str, rowid: int, k: int,
                    *, before: bool) -> list[tuple[int, str]]:
    """Up to ``k`` memories of the same session just before (or after) a point, nearest first: (rowid, id).

    Only memories stored before ``rowid`` count, as at its intake (a bulk import's finishing pass
    links ``rowid`` once later rows exist)."""
    if before:
        cond = "(m.created_at < ? OR (m.created_at = ? AND m.rowid < ?))"
        order = "m.created_at DESC, m.rowid DESC"
    else:
        cond = "(m.created_at > ? OR (m.created_at = ? AND m.rowid > ?))"
        order = "m.created_at ASC, m.rowid ASC"
    rows = store.conn.execute(
        f"SELECT m.rowid, m.id FROM memories m WHERE m.scope = ? AND {SESSION_KEY} = ? AND {cond} "
        f"AND m.rowid < ? ORDER BY {order} LIMIT ?",
        (scope, key, created_at, created_at, rowid, rowid, k),
    )
    return [(int(r), str(i)) for r, i in rows]


# --------------------------------------------------------------------------------------- edges
def add_edge(store: "Store", src: str, dst: str, layer: str, kind: str, weight: float, at: str,
             origin: str = "auto") -> bool:
    """Insert one edge inside a write txn; False when that (src, dst, type) already exists."""
    cursor = store.conn.execute(
        "INSERT OR IGNORE INTO edges(src, dst, layer, type, weight, created_at, origin) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (src, dst, layer, kind, float(weight), at, origin),
    )
    return cursor.rowcount == 1


def add_edges(store: "Store", edges: Sequence[tuple[str, str, str, str, float]], at: str, origin: str = "auto") -> int:
    """Insert many ``(src, dst, layer, type, weight)`` edges in one call (existing ones kept); returns how many were new."""
    if not edges:
        return 0
    before = store.conn.total_changes
    store.conn.executemany(
        "INSERT OR IGNORE INTO edges(src, dst, layer, type, weight, created_at, origin) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(s, d, l, t, float(w), at, origin) for s, d, l, t, w in edges],
    )
    return store.conn.total_changes - before


def outgoing(store: "Store", ids: Sequence[str]) -> dict[str, list[tuple[str, str, str, float, str, str]]]:
    """``src -> [(dst, layer, type, weight, created_at, origin), ...]`` for the edges leaving ``ids`` (export)."""
    out: dict[str, list[tuple[str, str, str, float, str, str]]] = {}
    for chunk, marks in batches.in_lists(list(ids), 400):
        for src, dst, layer, kind, weight, created_at, origin in store.conn.execute(
            f"SELECT src, dst, layer, type, weight, created_at, origin FROM edges WHERE src IN ({marks}) "
            "ORDER BY src, dst, type", list(chunk)
        ):
            out.setdefault(src, []).append((dst, layer, kind, float(weight), created_at, origin))
    return out


def restore_edges(store: "Store", edges: Sequence[tuple[str, str, str, str, float, str, str]]) -> int:
    """Write exported ``(src, dst, layer, type, weight, created_at, origin)`` edges whose two memories
    are stored (inside a write txn); the exported edge replaces one the import re-derived, so a
    round trip is exact. Returns how many were written."""
    stored = store.existing_ids({e[0] for e in edges} | {e[1] for e in edges})
    kept = [e for e in edges if e[0] in stored and e[1] in stored]
    store.conn.executemany(
        "INSERT OR REPLACE INTO edges(src, dst, layer, type, weight, created_at, origin) VALUES (?, ?, ?, ?, ?, ?, ?)",
        kept,
    )
    return len(kept)


def get_edge(store: "Store", src: str, dst: str, kind: str) -> dict[str, Any] | None:
    row = store.conn.execute(
        f"SELECT {', '.join(EDGE_COLUMNS)} FROM edges WHERE src = ? AND dst = ? AND type = ?", (src, dst, kind)
    ).fetchone()
    return dict(zip(EDGE_COLUMNS, row)) if row else None


def delete_edge(store: "Store", src: str, dst: str, kind: str) -> bool:
    cursor = store.conn.execute("DELETE FROM edges WHERE src = ? AND dst = ? AND type = ?", (src, dst, kind))
    return cursor.rowcount > 0


def edges_between(store: "Store", a: str, b: str, kind: str | None = None) -> list[dict[str, Any]]:
    """Edges joining two memories, either direction (optionally of one type)."""
    sql = f"SELECT {', '.join(EDGE_COLUMNS)} FROM edges WHERE ((src = ? AND dst = ?) OR (src = ? AND dst = ?))"
    params: list[Any] = [a, b, b, a]
    if kind is not None:
        sql += " AND type = ?"
        params.append(kind)
    return [dict(zip(EDGE_COLUMNS, r)) for r in store.conn.execute(sql + " ORDER BY src, dst, type", params)]


def edges_touching(store: "Store", ids: Sequence[str], layers: Sequence[str] | None = None,
                   types: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Every edge with an endpoint in ``ids`` (both directions), optionally only some layers/types."""
    out: list[dict[str, Any]] = []
    extra = ""
    params_extra: list[Any] = []
    if layers:
        extra += f" AND layer IN ({batches.marks(len(layers))})"
        params_extra += list(layers)
    if types:
        extra += f" AND type IN ({batches.marks(len(types))})"
        params_extra += list(types)
    cols = ", ".join(EDGE_COLUMNS)
    for chunk in batches.chunks(list(ids), 400):
        marks = batches.marks(len(chunk))
        sql = (f"SELECT {cols} FROM edges WHERE src IN ({marks}){extra} "
               f"UNION SELECT {cols} FROM edges WHERE dst IN ({marks}){extra}")
        for row in store.conn.execute(sql, [*chunk, *params_extra, *chunk, *params_extra]):
            out.append(dict(zip(EDGE_COLUMNS, row)))
    out.sort(key=lambda e: (e["src"], e["dst"], e["type"]))
    return out


def co_mentions(store: "Store", memory_ids: Sequence[str], scope: str | None, *, max_fan: int,
                per_node: int) -> list[tuple[str, str, str, float]]:
    """Entity-layer neighbours: ``(memory id, neighbour id, entity key, weight)`` for memories that
    share an entity mentioned by at most ``max_fan`` memories; the ``per_node`` strongest per memory.
    Weight is the sum over shared entities of 1/log2(1+fan) (the fan effect), capped at 1."""
    import math

    out: list[tuple[str, str, str, float]] = []
    scope_sql = " AND m2.scope = ?" if scope is not None else ""
    for mid in memory_ids:
        rows = store.conn.execute(
            "SELECT m2.id, e.key, e.mention_count FROM memories m1 "
            "JOIN memory_entities a ON a.memory_rowid = m1.rowid "
            "JOIN entities e ON e.id = a.entity_id AND e.mention_count <= ? "
            "JOIN memory_entities b ON b.entity_id = a.entity_id AND b.memory_rowid != m1.rowid "
            f"JOIN memories m2 ON m2.rowid = b.memory_rowid WHERE m1.id = ?{scope_sql}",
            [max_fan, mid] + ([scope] if scope is not None else []),
        ).fetchall()
        best: dict[str, tuple[float, str]] = {}
        for other, key, fan in rows:
            weight = 1.0 / math.log2(1.0 + max(1, fan))  # 0.63 for an entity two memories share
            total, top_key = best.get(other, (0.0, key))
            best[other] = (total + weight, top_key if total else key)
        ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0]))[:per_node]
        out.extend((mid, other, key, round(min(1.0, w), 6)) for other, (w, key) in ranked)
    return out


def shared_entity_keys(store: "Store", a: str, b: str) -> list[str]:
    rows = store.conn.execute(
        "SELECT e.key FROM memories ma JOIN memory_entities x ON x.memory_rowid = ma.rowid "
        "JOIN memory_entities y ON y.entity_id = x.entity_id JOIN memories mb ON mb.rowid = y.memory_rowid "
        "JOIN entities e ON e.id = x.entity_id WHERE ma.id = ? AND mb.id = ? ORDER BY e.mention_count, e.key",
        (a, b),
    )
    return [str(r[0]) for r in rows]


def briefs_by_id(store: "Store", ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Short views of memories by public id: what graph listings print beside each node."""
    out: dict[str, dict[str, Any]] = {}
    for chunk, marks in batches.in_lists(list(ids)):
        for row in store.conn.execute(
            "SELECT id, rowid, text, kind, scope, created_at, event_at, status, source, "
            f"json_extract(meta, '$.session') FROM memories WHERE id IN ({marks})", list(chunk)
        ):
            out[row[0]] = {"id": row[0], "rowid": int(row[1]), "text": row[2], "kind": row[3], "scope": row[4],
                           "created_at": row[5], "event_at": row[6], "status": row[7], "source": row[8],
                           "session": row[9]}
    return out


def scoped_ids(store: "Store", ids: Sequence[str], scope: str | None) -> set[str]:
    """The subset of ``ids`` that are live memories in ``scope`` (None: any scope)."""
    out: set[str] = set()
    for chunk, marks in batches.in_lists(list(ids)):
        # Unary + keeps the planner on the id index: without ANALYZE statistics it would read every
        # memory of the scope through memories_scope_created (100 ms at 100k memories).
        sql = f"SELECT id FROM memories WHERE id IN ({marks}) AND +status != 'archived'"
        params: list[Any] = list(chunk)
        if scope is not None:
            sql += " AND +scope = ?"
            params.append(scope)
        out.update(str(r[0]) for r in store.conn.execute(sql, params))
    return out


# -------------------------------------------------------------------------------- entity views
def _entity_row(row: Sequence[Any]) -> dict[str, Any]:
    return {"entity_id": int(row[0]), "key": row[1], "name": row[2], "type": row[3],
            "aliases": orjson.loads(row[4]), "mention_count": int(row[5]), "first_seen": row[6], "last_seen": row[7]}


_ENTITY_COLS = "e.id, e.key, e.name, e.type, e.aliases, e.mention_count, e.first_seen, e.last_seen"


def find_entity(store: "Store", key: str, surface: str) -> dict[str, Any] | None:
    """An entity by canonical key, else by any alias (case-insensitive)."""
    row = store.conn.execute(f"SELECT {_ENTITY_COLS} FROM entities e WHERE e.key = ?", (key,)).fetchone()
    if row is None:
        row = store.conn.execute(
            f"SELECT {_ENTITY_COLS} FROM entities e WHERE EXISTS (SELECT 1 FROM json_each(e.aliases) a "
            "WHERE lower(a.value) = lower(?)) ORDER BY e.mention_count DESC, e.key LIMIT 1",
            (surface.strip(),),
        ).fetchone()
    return _entity_row(row) if row else None


def entity_ids_for_keys(store: "Store", keys: Sequence[str]) -> dict[str, tuple[int, int]]:
    """``key -> (entity id, mention count)`` for the keys that exist."""
    if not keys:
        return {}
    rows = store.conn.execute(
        f"SELECT key, id, mention_count FROM entities WHERE key IN ({batches.marks(len(keys))})", list(keys)
    )
    return {str(k): (int(i), int(c)) for k, i, c in rows}


def top_entities(store: "Store", scope: str | None, limit: int) -> list[dict[str, Any]]:
    """Entities by how many live memories in ``scope`` mention them; ``count`` is that number."""
    where = "m.status != 'archived'" + (" AND m.scope = ?" if scope is not None else "")
    rows = store.conn.execute(
        f"SELECT {_ENTITY_COLS}, COUNT(*) AS n, MIN(m.created_at), MAX(m.created_at) FROM memory_entities me "
        "JOIN memories m ON m.rowid = me.memory_rowid JOIN entities e ON e.id = me.entity_id "
        f"WHERE {where} GROUP BY e.id ORDER BY n DESC, e.key LIMIT ?",
        ([scope] if scope is not None else []) + [limit],
    )
    out = []
    for row in rows:
        record = _entity_row(row[:8])
        record.update(count=int(row[8]), first_seen=row[9], last_seen=row[10])
        out.append(record)
    return out


def entity_memories(store: "Store", entity_id: int, scope: str | None, limit: int) -> list[int]:
    """Rowids of live memories mentioning an entity, oldest first by event time."""
    where = "me.entity_id = ? AND m.status != 'archived'" + (" AND m.scope = ?" if scope is not None else "")
    rows = store.conn.execute(
        f"SELECT m.rowid FROM memory_entities me JOIN memories m ON m.rowid = me.memory_rowid WHERE {where} "
        "ORDER BY COALESCE(m.event_at, m.created_at), m.rowid LIMIT ?",
        [entity_id] + ([scope] if scope is not None else []) + [limit],
    )
    return [int(r[0]) for r in rows]


def related_entities(store: "Store", entity_id: int, scope: str | None, limit: int) -> list[dict[str, Any]]:
    """Entities co-mentioned with one entity, by how many memories they share."""
    where = "a.entity_id = ? AND b.entity_id != a.entity_id AND m.status != 'archived'"
    where += " AND m.scope = ?" if scope is not None else ""
    rows = store.conn.execute(
        "SELECT e.key, e.name, e.type, COUNT(*) AS n FROM memory_entities a "
        "JOIN memory_entities b ON b.memory_rowid = a.memory_rowid JOIN memories m ON m.rowid = a.memory_rowid "
        f"JOIN entities e ON e.id = b.entity_id WHERE {where} GROUP BY e.id ORDER BY n DESC, e.key LIMIT ?",
        [entity_id] + ([scope] if scope is not None else []) + [limit],
    )
    return [{"key": k, "name": n, "type": t, "shared": int(c)} for k, n, t, c in rows]


def entities_of(store: "Store", rowids: Sequence[int]) -> list[tuple[int, int, str, str, int]]:
    """``(memory rowid, entity id, key, name, mention count)`` for each mention of these memories."""
    out: list[tuple[int, int, str, str, int]] = []
    for chunk, marks in batches.in_lists(list(rowids)):
        out.extend(
            (int(r), int(i), k, n, int(c)) for r, i, k, n, c in store.conn.execute(
                "SELECT me.memory_rowid, e.id, e.key, e.name, e.mention_count FROM memory_entities me "
                f"JOIN entities e ON e.id = me.entity_id WHERE me.memory_rowid IN ({marks})", list(chunk)
            )
        )
    return out


def mention_weights(store: "Store", entity_weights: dict[int, float], scope: str | None,
                    limit: int) -> list[tuple[int, float]]:
    """Spread activation from entities to the memories mentioning them: ``(rowid, summed weight)``, best first."""
    if not entity_weights:
        return []
    items = list(entity_weights.items())
    values = ",".join("(?, ?)" for _ in items)
    params: list[Any] = [v for pair in items for v in pair]
    where = "m.status != 'archived'" + (" AND m.scope = ?" if scope is not None else "")
    if scope is not None:
        params.append(scope)
    rows = store.conn.execute(
        f"WITH w(entity_id, weight) AS (VALUES {values}) "
        "SELECT me.memory_rowid, SUM(w.weight) AS s FROM w JOIN memory_entities me ON me.entity_id = w.entity_id "
        f"JOIN memories m ON m.rowid = me.memory_rowid WHERE {where} "
        "GROUP BY me.memory_rowid ORDER BY s DESC, me.memory_rowid LIMIT ?",
        [*params, limit],
    )
    return [(int(r), float(s)) for r, s in rows]


def memory_fans(store: "Store", rowids: Sequence[int]) -> dict[int, int]:
    """How many entities each memory mentions."""
    out: dict[int, int] = {}
    for chunk, marks in batches.in_lists(list(rowids)):
        for r, n in store.conn.execute(
            f"SELECT memory_rowid, COUNT(*) FROM memory_entities WHERE memory_rowid IN ({marks}) "
            "GROUP BY memory_rowid", list(chunk)
        ):
            out[int(r)] = int(n)
    return out


# ------------------------------------------------------------------------------ time and scenes
def rowids_in_window(store: "Store", scope: str | None, start: str, end: str, limit: int) -> list[int]:
    """Live memories that happened or were recorded in ``[start, end)`` (event_at or created_at inside),
    newest first by event time: "what did we do in May?" means both what happened in May and what
    was said in May ("last week we shipped ..." told on 12 May has an April event_at)."""
    where = ("((m.event_at >= ? AND m.event_at < ?) OR (m.created_at >= ? AND m.created_at < ?)) "
             "AND m.status != 'archived'")
    params: list[Any] = [start, end, start, end]
    if scope is not None:
        where += " AND m.scope = ?"
        params.append(scope)
    rows = store.conn.execute(
        f"SELECT m.rowid FROM memories m WHERE {where} ORDER BY COALESCE(m.event_at, m.created_at) DESC, m.rowid DESC "
        "LIMIT ?", [*params, limit],
    )
    return [int(r[0]) for r in rows]


def with_event_at(store: "Store", rowids: Sequence[int]) -> set[int]:
    out: set[int] = set()
    for chunk, marks in batches.in_lists(list(rowids)):
        out.update(int(r[0]) for r in store.conn.execute(
            f"SELECT rowid FROM memories WHERE rowid IN ({marks}) AND event_at IS NOT NULL", list(chunk)))
    return out


def scene_neighbours(store: "Store", rowid: int) -> list[int]:
    """Rowids of the memories right before and after this one in its session (``precedes`` edges)."""
    rows = store.conn.execute(
        "SELECT m2.rowid FROM memories m1 JOIN edges e ON e.dst = m1.id AND e.type = 'precedes' "
        "JOIN memories m2 ON m2.id = e.src WHERE m1.rowid = ? "
        "UNION SELECT m2.rowid FROM memories m1 JOIN edges e ON e.src = m1.id AND e.type = 'precedes' "
        "JOIN memories m2 ON m2.id = e.dst WHERE m1.rowid = ?",
        (rowid, rowid),
    )
    return sorted(int(r[0]) for r in rows)


# ----------------------------------------------------------------------------------- communities
def scope_edges(store: "Store", scope: str | None, layers: Sequence[str] | None = None) -> list[tuple[str, str, str, str, float]]:
    """Every edge between live memories of a scope: ``(src, dst, layer, type, weight)`` (for whole-graph jobs)."""
    where = "a.status != 'archived' AND b.status != 'archived'"
    params: list[Any] = []
    if scope is not None:
        where += " AND a.scope = ? AND b.scope = ?"
        params += [scope, scope]
    if layers:
        where += f" AND e.layer IN ({batches.marks(len(layers))})"
        params += list(layers)
    rows = store.conn.execute(
        "SELECT e.src, e.dst, e.layer, e.type, e.weight FROM edges e JOIN memories a ON a.id = e.src "
        f"JOIN memories b ON b.id = e.dst WHERE {where} ORDER BY e.src, e.dst, e.type", params,
    )
    return [(s, d, l, t, float(w)) for s, d, l, t, w in rows]


def scope_mentions(store: "Store", scope: str | None) -> list[tuple[str, int, str, int]]:
    """``(memory id, entity id, entity key, entity mention count)`` for live memories of a scope."""
    where = "m.status != 'archived'" + (" AND m.scope = ?" if scope is not None else "")
    rows = store.conn.execute(
        "SELECT m.id, e.id, e.key, e.mention_count FROM memory_entities me JOIN memories m ON m.rowid = me.memory_rowid "
        f"JOIN entities e ON e.id = me.entity_id WHERE {where} ORDER BY e.id, m.id",
        [scope] if scope is not None else [],
    )
    return [(str(m), int(i), str(k), int(c)) for m, i, k, c in rows]


def all_edge_rows(store: "Store") -> list[tuple[str, str, str, float]]:
    """``(src id, dst id, layer, weight)`` of every edge. Whole-scope jobs map the ids themselves: at
    a million edges, joining both ends to ``memories`` costs 2 index probes an edge (32 s at 100k
    memories on a loaded machine) against 6 s for this scan and a dict."""
    return store.conn.execute("SELECT src, dst, layer, weight FROM edges").fetchall()


def scope_live_ids(store: "Store", scope: str) -> list[tuple[str, int]]:
    """``(id, rowid)`` of a scope's live memories, in rowid order."""
    return store.conn.execute(
        "SELECT id, rowid FROM memories WHERE status != 'archived' AND scope = ? ORDER BY rowid", (scope,)
    ).fetchall()


def scope_mention_rows(store: "Store", scope: str, max_fan: int) -> list[tuple[int, int, int]]:
    """``(entity id, mention count, memory rowid)`` for live memories of a scope, entities of fan <= max_fan,
    grouped by entity."""
    return store.conn.execute(
        "SELECT e.id, e.mention_count, me.memory_rowid FROM memory_entities me JOIN entities e ON e.id = me.entity_id "
        "JOIN memories m ON m.rowid = me.memory_rowid WHERE m.status != 'archived' AND m.scope = ? "
        "AND e.mention_count <= ? ORDER BY e.id, me.memory_rowid", (scope, max_fan),
    ).fetchall()


def scope_memory_ids(store: "Store", scope: str | None) -> dict[str, int]:
    """``id -> rowid`` of the live memories in a scope."""
    where = "status != 'archived'" + (" AND scope = ?" if scope is not None else "")
    rows = store.conn.execute(f"SELECT id, rowid FROM memories WHERE {where} ORDER BY rowid",
                              [scope] if scope is not None else [])
    return {str(i): int(r) for i, r in rows}


def replace_communities(store: "Store", scope: str, groups: Sequence[tuple[list[int], "np.ndarray | None", str]],
                        at: str) -> list[int]:
    """Inside a write txn: drop a scope's communities and store new ones (members by rowid, centroid, label)."""
    store.conn.execute("DELETE FROM community_members WHERE community_id IN (SELECT id FROM communities WHERE scope = ?)",
                       (scope,))
    store.conn.execute("DELETE FROM communities WHERE scope = ?", (scope,))
    ids: list[int] = []
    for members, centroid, label in groups:
        blob = None if centroid is None else centroid.astype("float32").tobytes()
        cursor = store.conn.execute(
            "INSERT INTO communities(scope, centroid, size, label, updated_at) VALUES (?, ?, ?, ?, ?)",
            (scope, blob, len(members), label, at),
        )
        cid = int(cursor.lastrowid)
        store.conn.executemany("INSERT OR IGNORE INTO community_members(community_id, memory_rowid) VALUES (?, ?)",
                               [(cid, r) for r in members])
        ids.append(cid)
    return ids


def communities(store: "Store", scope: str | None) -> list[dict[str, Any]]:
    where = " WHERE scope = ?" if scope is not None else ""
    rows = store.conn.execute(
        f"SELECT id, scope, size, label, updated_at FROM communities{where} ORDER BY size DESC, id",
        [scope] if scope is not None else [],
    )
    return [{"community": int(i), "scope": s, "size": int(n), "label": l, "updated_at": u} for i, s, n, l, u in rows]


def community_member_ids(store: "Store", community_id: int) -> list[str]:
    rows = store.conn.execute(
        "SELECT m.id FROM community_members c JOIN memories m ON m.rowid = c.memory_rowid "
        "WHERE c.community_id = ? ORDER BY m.created_at, m.rowid", (community_id,))
    return [str(r[0]) for r in rows]


def centroids(store: "Store", scope: str | None) -> tuple[list[int], "np.ndarray | None"]:
    """Community ids and their centroid matrix (rows as stored: mean member vectors)."""
    import numpy as np

    where = " AND scope = ?" if scope is not None else ""
    rows = store.conn.execute(f"SELECT id, centroid FROM communities WHERE centroid IS NOT NULL{where} ORDER BY id",
                              [scope] if scope is not None else []).fetchall()
    if not rows:
        return [], None
    return [int(r[0]) for r in rows], np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)


def community_rowids(store: "Store", community_ids: Sequence[int], limit: int) -> list[int]:
    if not community_ids:
        return []
    rows = store.conn.execute(
        "SELECT c.memory_rowid FROM community_members c JOIN memories m ON m.rowid = c.memory_rowid "
        f"WHERE c.community_id IN ({batches.marks(len(community_ids))}) AND m.status != 'archived' LIMIT ?",
        [*community_ids, limit],
    )
    return [int(r[0]) for r in rows]


def communities_stamp(store: "Store", scope: str | None) -> tuple[int, int, str] | None:
    """``(count, newest id, newest updated_at)`` of the scope's communities, None when there are none:
    it changes whenever they are recomputed, so a copy of them is current while it holds."""
    where = " WHERE scope = ?" if scope is not None else ""
    count, newest, updated = store.conn.execute(
        f"SELECT COUNT(*), MAX(id), MAX(updated_at) FROM communities{where}", [scope] if scope is not None else []
    ).fetchone()
    return (int(count), int(newest), str(updated)) if count else None


# ----------------------------------------------------------------------------------------- stats
def graph_counts(store: "Store", scope: str | None) -> dict[str, Any]:
    """Edge counts by layer and type, mentions, entities, communities, isolated memories (in a scope)."""
    sp = [scope] if scope is not None else []
    mscope = " AND a.scope = ?" if scope is not None else ""
    by_layer: dict[str, int] = {}
    by_type: dict[str, int] = {}
    by_origin: dict[str, int] = {}
    for layer, kind, origin, n in store.conn.execute(
        f"SELECT e.layer, e.type, e.origin, COUNT(*) FROM edges e JOIN memories a ON a.id = e.src WHERE 1=1{mscope} "
        "GROUP BY e.layer, e.type, e.origin", sp,
    ):
        by_layer[layer] = by_layer.get(layer, 0) + n
        by_type[kind] = by_type.get(kind, 0) + n
        by_origin[origin] = by_origin.get(origin, 0) + n
    one = lambda sql, p=(): store.conn.execute(sql, p).fetchone()[0]  # noqa: E731
    wscope = " WHERE m.scope = ?" if scope is not None else ""
    memories = one(f"SELECT COUNT(*) FROM memories m{wscope}", sp)
    mentions = one(f"SELECT COUNT(*) FROM memory_entities me JOIN memories m ON m.rowid = me.memory_rowid{wscope}", sp)
    entities = one(f"SELECT COUNT(DISTINCT me.entity_id) FROM memory_entities me JOIN memories m ON m.rowid = me.memory_rowid{wscope}", sp)
    isolated = one(
        f"SELECT COUNT(*) FROM memories m WHERE {'m.scope = ? AND ' if scope is not None else ''}"
        "NOT EXISTS (SELECT 1 FROM edges e WHERE e.src = m.id) AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.dst = m.id)",
        sp,
    )
    cscope = " WHERE scope = ?" if scope is not None else ""
    return {
        "memories": memories,
        "edges": sum(by_layer.values()),
        "edges_by_layer": dict(sorted(by_layer.items())),
        "edges_by_type": dict(sorted(by_type.items())),
        "edges_by_origin": dict(sorted(by_origin.items())),
        "entities": entities,
        "mentions": mentions,
        "communities": one(f"SELECT COUNT(*) FROM communities{cscope}", sp),
        "isolated_memories": isolated,
    }


def ids_of(store: "Store", rowids: Sequence[int]) -> dict[int, str]:
    """``rowid -> public id``."""
    out: dict[int, str] = {}
    for chunk, marks in batches.in_lists(list(rowids)):
        out.update((int(r), str(i)) for r, i in store.conn.execute(
            f"SELECT rowid, id FROM memories WHERE rowid IN ({marks})", list(chunk)))
    return out


def mention_pairs(store: "Store", scope: str | None) -> tuple[tuple[int, int], list[tuple[int, int]]]:
    """``(stamp, [(memory rowid, entity id), ...])`` for the live memories of a scope: the bipartite
    graph personalised PageRank walks. The stamp (mentions and newest mentioning rowid) changes when
    mentions are added or removed, so a process can keep the graph while it holds."""
    stamp = mentions_stamp(store)
    where = "m.status != 'archived'" + (" AND m.scope = ?" if scope is not None else "")
    rows = store.conn.execute(
        f"SELECT me.memory_rowid, me.entity_id FROM memory_entities me JOIN memories m ON m.rowid = me.memory_rowid WHERE {where}",
        [scope] if scope is not None else [])
    return stamp, [(int(r), int(e)) for r, e in rows]


def mentions_stamp(store: "Store") -> tuple[int, int]:
    """The stamp ``mention_pairs`` returns, read alone."""
    row = store.conn.execute("SELECT COUNT(*), COALESCE(MAX(memory_rowid), 0) FROM memory_entities").fetchone()
    return int(row[0]), int(row[1])


def tag_fans(store: "Store", words: Sequence[str], scope: str | None) -> dict[str, int]:
    """``word -> how many live memories of the scope carry it as a tag`` (case-insensitive; words no
    memory carries are left out): the fan of a query word read as a tag. One pass over the scope's
    tags, so search asks only when the ``spread`` prior is on."""
    if not words:
        return {}
    params: list[Any] = [w.lower() for w in words]
    where = f"lower(j.value) IN ({batches.marks(len(params))}) AND m.status != 'archived'"
    if scope is not None:
        where += " AND m.scope = ?"
        params.append(scope)
    rows = store.conn.execute(
        f"SELECT lower(j.value), COUNT(DISTINCT m.rowid) FROM memories m, json_each(m.tags) j WHERE {where} "
        "GROUP BY lower(j.value)", params)
    return {str(t): int(c) for t, c in rows}


def causal_sources(store: "Store", rowids: Sequence[int], types: Sequence[str]) -> list[tuple[int, int]]:
    """``(explanation or fix rowid, problem rowid)`` for the links of ``types`` (``caused``, ``resolved``)
    into ``rowids`` (``mem.stages.link.link_causal`` writes them explanation or fix -> problem report)."""
    out: list[tuple[int, int]] = []
    for chunk, marks in batches.in_lists(list(rowids), 400):
        out += [(int(s), int(d)) for s, d in store.conn.execute(
            "SELECT ms.rowid, md.rowid FROM memories md JOIN edges e ON e.dst = md.id JOIN memories ms ON ms.id = e.src "
            f"WHERE md.rowid IN ({marks}) AND e.type IN ({batches.marks(len(types))}) ORDER BY ms.rowid, md.rowid",
            [*chunk, *types])]
    return out
