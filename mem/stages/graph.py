"""Graph stages: neighbours, paths, entities, timeline, causal chains, communities, stats, links, export.

Local traversals (``neighbors``, ``path``, ``causes``) walk the edges table level by level in SQL
with a bounded frontier; only global jobs (``communities``, ``export``) build a networkx view.
Every function returns plain dict records (``record`` says which kind) and raises MemError.

>>> # for r in neighbors(ctx, "0190ab12", depth=2): ...
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from mem import vocab
from mem.errors import BadInput, NotFound
from mem.stages.link import LAYER_OF_TYPE
from mem.store import graph as sql

if TYPE_CHECKING:
    from mem.stages.context import Context

LAYERS = vocab.GRAPH_LAYERS
CAUSAL_TYPES = ("caused", "resolved", "motivated")
MAX_DEPTH = 4
PATH_DEPTH = 3
FRONTIER = 300  # nodes expanded per level, strongest edges first
ENTITY_FAN = 50  # entities mentioned by more memories do not make neighbours (too generic)
ENTITY_PER_NODE = 10


def check_layers(layers: Sequence[str] | None) -> list[str] | None:
    """Validate --layer values; None or empty means every layer."""
    if not layers:
        return None
    return vocab.check_all("graph layer", layers)


def _resolve(ctx: "Context", memory_id: str) -> str:
    return ctx.store.resolve_id(memory_id)


def _steps(ctx: "Context", frontier: Sequence[str], layers: list[str] | None, scope: str | None,
           seen: dict[str, Any] | None = None) -> list[tuple[str, str, dict[str, Any]]]:
    """One hop from each frontier node to nodes not in ``seen``: ``(from, to, edge)``; edges both
    directions, entity co-mentions too."""
    out: list[tuple[str, str, dict[str, Any]]] = []
    edge_layers = [l for l in layers if l != "entity"] if layers else None
    if edge_layers is None or edge_layers:
        members = set(frontier)
        for edge in sql.edges_touching(ctx.store, frontier, edge_layers):
            if edge["src"] in members:
                out.append((edge["src"], edge["dst"], {**edge, "direction": "out"}))
            if edge["dst"] in members:
                out.append((edge["dst"], edge["src"], {**edge, "direction": "in"}))
    if layers is None or "entity" in layers:
        for a, b, key, weight in sql.co_mentions(ctx.store, frontier, scope, max_fan=ENTITY_FAN,
                                                 per_node=ENTITY_PER_NODE):
            out.append((a, b, {"src": a, "dst": b, "layer": "entity", "type": "shares_entity", "weight": weight,
                               "entity": key, "origin": "derived", "direction": "both"}))
    if seen:
        out = [step for step in out if step[1] not in seen]
    live = sql.scoped_ids(ctx.store, list({b for _, b, _ in out}), scope)
    out = [s for s in out if s[1] in live and s[0] != s[1]]
    # Stored links first (they say why), then derived co-mentions; strongest first within each.
    out.sort(key=lambda s: (s[2]["layer"] == "entity", -float(s[2]["weight"]), s[0], s[1], s[2]["type"]))
    return out


def _bfs(ctx: "Context", start: str, layers: list[str] | None, depth: int, scope: str | None,
         target: str | None = None) -> dict[str, tuple[int, str | None, dict[str, Any] | None]]:
    """Breadth-first: ``node -> (depth, parent, edge from parent)``; stops early at ``target``."""
    seen: dict[str, tuple[int, str | None, dict[str, Any] | None]] = {start: (0, None, None)}
    frontier = [start]
    for level in range(1, depth + 1):
        if not frontier:
            break
        nxt: list[str] = []
        for parent, node, edge in _steps(ctx, frontier, layers, scope, seen):
            if node in seen:
                continue
            seen[node] = (level, parent, edge)
            nxt.append(node)
            if node == target:
                return seen
        frontier = nxt[:FRONTIER]
    return seen


def _edge_view(edge: dict[str, Any] | None) -> dict[str, Any] | None:
    if edge is None:
        return None
    keys = ("src", "dst", "layer", "type", "weight", "origin", "direction", "entity")
    return {k: edge[k] for k in keys if k in edge}


def _node(info: dict[str, Any]) -> dict[str, Any]:
    return {k: info[k] for k in ("id", "text", "kind", "created_at", "event_at", "session", "source")}


def neighbors(ctx: "Context", memory_id: str, *, layers: Sequence[str] | None = None, depth: int = 1,
              scope: str | None = "*", limit: int = 100) -> list[dict[str, Any]]:
    """Memories within ``depth`` hops of one memory, nearest and strongest first."""
    if not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
        raise BadInput(f"depth must be 1-{MAX_DEPTH}, got {depth!r}")
    start = _resolve(ctx, memory_id)
    seen = _bfs(ctx, start, check_layers(layers), depth, ctx.scope_filter(scope))
    found = [(d, node, parent, edge) for node, (d, parent, edge) in seen.items() if d > 0]
    found.sort(key=lambda t: (t[0], t[3]["layer"] == "entity", -float(t[3]["weight"]), t[1]))
    found = found[:limit]
    info = sql.briefs_by_id(ctx.store, [n for _, n, _, _ in found])
    return [{"record": "neighbor", "depth": d, **_node(info[n]), "from": parent, "via": _edge_view(edge)}
            for d, n, parent, edge in found if n in info]


def path(ctx: "Context", a: str, b: str, *, layers: Sequence[str] | None = None, scope: str | None = "*",
         max_depth: int = PATH_DEPTH) -> list[dict[str, Any]]:
    """The shortest chain of links from memory ``a`` to memory ``b`` (at most ``max_depth`` hops)."""
    start, goal = _resolve(ctx, a), _resolve(ctx, b)
    seen = _bfs(ctx, start, check_layers(layers), max_depth, ctx.scope_filter(scope), target=goal)
    if goal not in seen:
        raise NotFound(f"no path from {start} to {goal} within {max_depth} hops", src=start, dst=goal)
    chain: list[tuple[str, dict[str, Any] | None]] = []
    node: str | None = goal
    while node is not None:
        _, parent, edge = seen[node]
        chain.append((node, edge))
        node = parent
    chain.reverse()
    info = sql.briefs_by_id(ctx.store, [n for n, _ in chain])
    return [{"record": "path", "step": i, **_node(info[n]), "via": _edge_view(edge)} for i, (n, edge) in enumerate(chain)]


def _chain_direction(edge: dict[str, Any]) -> tuple[str, str]:
    """``(cause, effect)`` of a causal edge: a fix (``resolved``) is the effect of the problem it resolves."""
    if edge["type"] == "resolved":
        return edge["dst"], edge["src"]
    return edge["src"], edge["dst"]


def causes(ctx: "Context", memory_id: str, *, depth: int = MAX_DEPTH) -> list[dict[str, Any]]:
    """The causal chain through one memory: its causes (upstream, root first), itself, its effects."""
    if not isinstance(depth, int) or not 1 <= depth <= 10:
        raise BadInput(f"depth must be 1-10, got {depth!r}")
    start = _resolve(ctx, memory_id)
    found: dict[str, tuple[str, int, dict[str, Any] | None]] = {start: ("self", 0, None)}
    for direction in ("upstream", "downstream"):
        frontier = [start]
        for level in range(1, depth + 1):
            nxt = []
            current = set(frontier)
            for edge in sql.edges_touching(ctx.store, frontier, types=CAUSAL_TYPES):
                cause, effect = _chain_direction(edge)
                here, there = (effect, cause) if direction == "upstream" else (cause, effect)
                if here in current and there not in found:
                    found[there] = (direction, level, edge)
                    nxt.append(there)
            frontier = sorted(set(nxt))[:FRONTIER]
            if not frontier:
                break
    info = sql.briefs_by_id(ctx.store, list(found))
    order = {"upstream": 0, "self": 1, "downstream": 2}
    rows = sorted(found.items(), key=lambda kv: (order[kv[1][0]], -kv[1][1] if kv[1][0] == "upstream" else kv[1][1],
                                                 info.get(kv[0], {}).get("created_at") or "", kv[0]))
    return [{"record": "cause", "direction": direction, "depth": level, **_node(info[n]), "via": _edge_view(edge)}
            for n, (direction, level, edge) in rows if n in info]


# ---------------------------------------------------------------------------------- entities
def entities(ctx: "Context", *, top: int = 50, scope: str | None = None) -> list[dict[str, Any]]:
    """The most mentioned entities in a scope (``count``: live memories of the scope mentioning each)."""
    if not isinstance(top, int) or top < 1:
        raise BadInput(f"--top must be a positive integer, got {top!r}")
    return [{"record": "entity", **e} for e in sql.top_entities(ctx.store, ctx.scope_filter(scope), top)]


def find_entity(ctx: "Context", name: str) -> dict[str, Any]:
    """An entity by any spelling (canonical key, or an alias); NotFound names it."""
    from mem.enrich.entity_keys import canonical

    if not isinstance(name, str) or not name.strip():
        raise BadInput("entity name is empty")
    found = sql.find_entity(ctx.store, canonical(name), name)
    if found is None:
        raise NotFound(f"no entity {name!r}", entity=name)
    return found


def entity(ctx: "Context", name: str, *, scope: str | None = None, limit: int = 200) -> dict[str, Any]:
    """One entity: aliases, counts, the memories mentioning it (in event order) and related entities."""
    found = find_entity(ctx, name)
    scoped = ctx.scope_filter(scope)
    rowids = sql.entity_memories(ctx.store, found["entity_id"], scoped, limit)
    memories = ctx.store.by_rowids(rowids)
    return {
        "record": "entity", **found, "count": len(rowids),
        "memories": [{"id": m.id, "text": m.text, "kind": m.kind, "created_at": m.created_at, "event_at": m.event_at}
                     for m in (memories[r] for r in rowids if r in memories)],
        "related": sql.related_entities(ctx.store, found["entity_id"], scoped, 15),
    }


def timeline(ctx: "Context", *, entity_name: str | None = None, since: str | None = None, until: str | None = None,
             scope: str | None = None, limit: int = 500) -> Iterator[dict[str, Any]]:
    """Memories in event order (event_at, else created_at), optionally about one entity and within a window."""
    scoped = ctx.scope_filter(scope)
    rowids = None
    if entity_name is not None:
        found = find_entity(ctx, entity_name)
        rowids = sql.entity_memories(ctx.store, found["entity_id"], scoped, 100_000)
    for _, m in ctx.store.select(scope=scoped, since=since, until=until, rowids=rowids, limit=limit,
                                 order="COALESCE(m.event_at, m.created_at), m.rowid"):
        yield {"record": "event", "at": m.event_at or m.created_at, "id": m.id, "text": m.text, "kind": m.kind,
               "event_at": m.event_at, "created_at": m.created_at, "session": m.meta.get("session"), "source": m.source}


# ------------------------------------------------------------------------------- communities
def communities(ctx: "Context", *, scope: str | None = None, recompute: bool = True,
                min_size: int = 2) -> list[dict[str, Any]]:
    """Detect communities (Leiden; Louvain where its wheels are missing) over the scope's graph and store them
    with centroids (mean member vector); ``recompute=False`` lists the stored ones."""
    scoped = ctx.scope_filter(scope)
    method = "stored"
    if recompute:
        if scoped is None:
            raise BadInput("communities are per scope: give --scope NAME, not '*'")
        method = _recompute_communities(ctx, scoped, min_size)
    out = []
    for row in sql.communities(ctx.store, scoped):
        members = sql.community_member_ids(ctx.store, row["community"])
        out.append({"record": "community", **row, "method": method, "members": members})
    return out


def _recompute_communities(ctx: "Context", scope: str, min_size: int) -> str:
    import numpy as np

    from mem.graph.communities import detect_weighted
    from mem.graph.views import weighted_arrays

    live, pairs, weights = weighted_arrays(ctx.store, scope)
    method, groups = detect_weighted(len(live), pairs, weights)
    stored = []
    for group in groups:
        if len(group) < min_size:
            continue
        rowids = [int(live[i]) for i in group]
        found, matrix = ctx.store.vectors_for(rowids)
        centroid = matrix.mean(axis=0).astype(np.float32) if found else None
        stored.append((rowids, centroid, _label(ctx, rowids)))
    with ctx.store.write():
        sql.replace_communities(ctx.store, scope, stored, ctx.now_iso())
    return method


def _label(ctx: "Context", rowids: list[int]) -> str:
    """The community's most shared entities (damped by how common they are overall), else its first words."""
    counts: dict[str, float] = {}
    names: dict[str, str] = {}
    for _, _, key, name, fan in sql.entities_of(ctx.store, rowids):
        counts[key] = counts.get(key, 0.0) + 1.0 / math.log(2.0 + fan)
        names[key] = name
    shared = sorted(counts, key=lambda k: (-counts[k], k))[:3]
    if shared:
        return ", ".join(names[k] for k in shared)
    first = ctx.store.by_rowids(rowids[:1])
    return " ".join(next(iter(first.values())).text.split()[:6]) if first else ""


# ------------------------------------------------------------------------------------ stats
def stats(ctx: "Context", *, scope: str | None = None) -> dict[str, Any]:
    """Edge counts by layer/type/origin, entities and mentions, communities, isolated memories, top entities."""
    scoped = ctx.scope_filter(scope)
    counts = sql.graph_counts(ctx.store, scoped)
    n = counts["memories"]
    counts["mean_degree"] = round(2.0 * counts["edges"] / n, 3) if n else 0.0
    counts["top_entities"] = [{"key": e["key"], "name": e["name"], "count": e["count"]}
                              for e in sql.top_entities(ctx.store, scoped, 10)]
    return {"record": "graph_stats", "scope": scoped or "*", **counts}


# --------------------------------------------------------------------------------- manual links
def link(ctx: "Context", a: str, b: str, *, kind: str = "related", weight: float = 1.0) -> dict[str, Any]:
    """Add a manual edge ``a -> b``; a self-link, a duplicate or a bad type/weight is BadInput."""
    vocab.check("link type", kind)
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight) or weight <= 0:
        raise BadInput(f"weight must be a positive number, got {weight!r}")
    src, dst = _resolve(ctx, a), _resolve(ctx, b)
    if src == dst:
        raise BadInput(f"cannot link memory {src} to itself", id=src)
    layer = LAYER_OF_TYPE.get(kind, "manual")
    at = ctx.now_iso()
    with ctx.store.write():
        existing = sql.get_edge(ctx.store, src, dst, kind)
        if existing is not None:
            raise BadInput(f"link {src} -> {dst} ({kind}) already exists (origin {existing['origin']}); "
                           "unlink it first to change it", src=src, dst=dst, type=kind)
        if kind == "supersedes":
            _supersede_by_hand(ctx, src, dst, at)
        sql.add_edge(ctx.store, src, dst, layer, kind, float(weight), at, origin="manual")
        ctx.store.log(at, "link", src, None, {"dst": dst, "type": kind, "layer": layer, "weight": float(weight)})
    return {"record": "edge", "src": src, "dst": dst, "layer": layer, "type": kind, "weight": float(weight),
            "created_at": at, "origin": "manual", "status": "linked"}


def _supersede_by_hand(ctx: "Context", newer: str, older: str, at: str) -> None:
    """A ``supersedes`` link made by hand hides the older from search as intake's would (its
    ``superseded_by``); one that would close a loop, or replace what another memory already
    superseded, is BadInput (unlink that one first)."""
    current = ctx.store.get(older).superseded_by
    if current is not None and current != newer:
        raise BadInput(f"{older} is already superseded by {current}; unlink that first", id=older, by=current)
    step: str | None = newer
    seen: set[str] = set()
    while step is not None and step not in seen:  # the newer and its successors: none may be the older
        if step == older:
            raise BadInput(f"{older} already supersedes {newer} (directly or through a chain)", src=newer, dst=older)
        seen.add(step)
        try:
            step = ctx.store.get(step).superseded_by
        except NotFound:  # a successor purged since: the chain ends
            break
    ctx.store.update_memory(older, {"superseded_by": newer}, at=at, op="supersede", reason="linked by hand")


def unlink(ctx: "Context", a: str, b: str, *, kind: str | None = None) -> list[dict[str, Any]]:
    """Remove the edges between two memories (both directions; only ``kind`` when given). Removing a
    ``supersedes`` edge undoes the supersession: the older memory is live again (``restored``)."""
    src, dst = _resolve(ctx, a), _resolve(ctx, b)
    at = ctx.now_iso()
    with ctx.store.write():
        edges = sql.edges_between(ctx.store, src, dst, kind)
        if not edges:
            what = f" of type {kind}" if kind else ""
            raise NotFound(f"no link{what} between {src} and {dst}", src=src, dst=dst)
        records = []
        for edge in edges:
            sql.delete_edge(ctx.store, edge["src"], edge["dst"], edge["type"])
            ctx.store.log(at, "unlink", edge["src"], None, {"dst": edge["dst"], "type": edge["type"]})
            record = {"record": "edge", **edge, "status": "unlinked"}
            # a wrong supersession undone: the older is live and searchable again
            if edge["type"] == "supersedes" and ctx.store.get(edge["dst"]).superseded_by == edge["src"]:
                ctx.store.update_memory(edge["dst"], {"superseded_by": None}, at=at, op="unsupersede")
                record["restored"] = edge["dst"]
            records.append(record)
    return records


# ------------------------------------------------------------------------------------- export
def export(ctx: "Context", fmt: str, *, scope: str | None = None, layers: Sequence[str] | None = None,
           with_entities: bool = True) -> bytes:
    """The scope's graph as one document (graphml | dot | json | mermaid), built whole before any write."""
    from mem.graph.export import render
    from mem.graph.views import export_graph

    vocab.check("graph format", fmt)
    graph = export_graph(ctx.store, ctx.scope_filter(scope), check_layers(layers), with_entities)
    return render(graph, fmt)
