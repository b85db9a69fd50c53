"""Whole-scope networkx graphs built from the edges and mentions tables (for communities and export).

>>> # g = memory_graph(store, "myproject")   # nx.Graph: memory ids, summed edge weights
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mem.store import graph as sql

if TYPE_CHECKING:
    import networkx as nx

    from mem.store import Store

ENTITY_FAN_MAX = 50  # entities mentioned by more memories than this are too generic to bind a community
# How much each layer counts when layers are collapsed into one weighted graph.
LAYER_WEIGHT = {"semantic": 1.0, "temporal": 0.5, "causal": 1.0, "manual": 1.0, "lifecycle": 1.0, "entity": 0.7}


def memory_graph(store: "Store", scope: str | None, layers: Sequence[str] | None = None) -> "nx.Graph":
    """Undirected weighted graph of a scope's live memories: stored edges plus entity co-mentions.

    Co-mentions of an entity with fan f add 1/log(1+f) between each pair of its memories (fan
    effect), skipped above ``ENTITY_FAN_MAX``; parallel edges collapse into one summed weight.
    """
    import networkx as nx

    graph = nx.Graph()
    graph.add_nodes_from(sql.scope_memory_ids(store, scope))
    edge_layers = [l for l in layers if l != "entity"] if layers else None
    if edge_layers is None or edge_layers:
        for src, dst, layer, _, weight in sql.scope_edges(store, scope, edge_layers):
            if src == dst or src not in graph or dst not in graph:
                continue
            w = LAYER_WEIGHT.get(layer, 1.0) * max(0.0, weight)
            if graph.has_edge(src, dst):
                graph[src][dst]["weight"] += w
            else:
                graph.add_edge(src, dst, weight=w)
    if layers is None or "entity" in layers:
        members: dict[int, list[str]] = defaultdict(list)
        fans: dict[int, int] = {}
        for memory_id, entity_id, _, fan in sql.scope_mentions(store, scope):
            members[entity_id].append(memory_id)
            fans[entity_id] = fan
        for entity_id, ids in members.items():
            if len(ids) < 2 or fans[entity_id] > ENTITY_FAN_MAX:
                continue
            w = LAYER_WEIGHT["entity"] / math.log(1.0 + fans[entity_id])
            for i, a in enumerate(ids):
                for b in ids[i + 1 :]:
                    if graph.has_edge(a, b):
                        graph[a][b]["weight"] += w
                    else:
                        graph.add_edge(a, b, weight=w)
    return graph


def export_graph(store: "Store", scope: str | None, layers: Sequence[str] | None = None,
                 with_entities: bool = True) -> "nx.MultiDiGraph":
    """Directed multigraph for people: memory nodes (label, kind, times), typed edges, and entity nodes
    for entities that at least two exported memories mention."""
    import networkx as nx

    graph = nx.MultiDiGraph()
    ids = list(sql.scope_memory_ids(store, scope))
    info = sql.briefs_by_id(store, ids)
    for memory_id in ids:
        m = info[memory_id]
        graph.add_node(memory_id, **_clean({
            "type": "memory", "label": _short(m["text"]), "text": m["text"], "kind": m["kind"],
            "created_at": m["created_at"], "event_at": m["event_at"],
            "session": None if m["session"] is None else str(m["session"]),
        }))
    edge_layers = [l for l in layers if l != "entity"] if layers else None
    if edge_layers is None or edge_layers:
        for src, dst, layer, kind, weight in sql.scope_edges(store, scope, edge_layers):
            graph.add_edge(src, dst, key=kind, layer=layer, type=kind, weight=weight)
    if with_entities and (layers is None or "entity" in layers):
        members: dict[tuple[int, str], list[str]] = defaultdict(list)
        for memory_id, entity_id, key, _ in sql.scope_mentions(store, scope):
            members[(entity_id, key)].append(memory_id)
        shared = {k: v for k, v in members.items() if len(v) >= 2}
        names = sql.entity_names(store, [entity_id for entity_id, _ in shared])
        for (entity_id, key), mids in sorted(shared.items(), key=lambda kv: kv[0][1]):
            node = f"entity:{key}"
            graph.add_node(node, type="entity", label=names.get(entity_id, key), text=key, kind="entity")
            for memory_id in mids:
                graph.add_edge(memory_id, node, key="mentions", layer="entity", type="mentions", weight=1.0)
    return graph


def _short(text: str, n: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _clean(attrs: dict[str, Any]) -> dict[str, Any]:
    # GraphML has no null: leave missing attributes out rather than writing "None".
    return {k: v for k, v in attrs.items() if v is not None}


def weighted_arrays(store: "Store", scope: str) -> tuple[Any, Any, Any]:
    """The same graph as ``memory_graph`` (same layers, weights and fan rule) as arrays, for whole-scope
    jobs at 100k memories where a networkx graph costs more than the algorithm run on it:
    ``(rowids, pairs, weights)``: live rowids in order, (m, 2) int64 indexes into them (i < j, each
    pair once) and the summed float64 weight of each pair."""
    import numpy as np

    live = sql.scope_live_ids(store, scope)
    rowids = np.asarray([rowid for _, rowid in live], dtype=np.int64)
    index = {memory_id: i for i, (memory_id, _) in enumerate(live)}
    src: list[Any] = []
    dst: list[Any] = []
    weights: list[Any] = []
    edges = sql.all_edge_rows(store)
    if edges:
        get, factor = index.get, LAYER_WEIGHT.get
        a = np.fromiter((get(e[0], -1) for e in edges), dtype=np.int64, count=len(edges))
        b = np.fromiter((get(e[1], -1) for e in edges), dtype=np.int64, count=len(edges))
        w = np.fromiter((factor(e[2], 1.0) * max(0.0, e[3]) for e in edges), dtype=np.float64, count=len(edges))
        inside = (a >= 0) & (b >= 0)  # both ends live in this scope
        src.append(rowids[a[inside]])
        dst.append(rowids[b[inside]])
        weights.append(w[inside])
    mentions = sql.scope_mention_rows(store, scope, ENTITY_FAN_MAX)
    start = 0
    while start < len(mentions):
        entity, fan = mentions[start][0], mentions[start][1]
        end = start
        while end < len(mentions) and mentions[end][0] == entity:
            end += 1
        members = np.array([row[2] for row in mentions[start:end]], dtype=np.int64)
        if len(members) >= 2:
            i, j = np.triu_indices(len(members), k=1)
            src.append(members[i])
            dst.append(members[j])
            weights.append(np.full(len(i), LAYER_WEIGHT["entity"] / math.log(1.0 + fan)))
        start = end
    if not src or not len(rowids):
        return rowids, np.zeros((0, 2), dtype=np.int64), np.zeros(0)
    s, d, w = np.concatenate(src), np.concatenate(dst), np.concatenate(weights)
    si, di = np.searchsorted(rowids, s), np.searchsorted(rowids, d)
    si_ok, di_ok = np.minimum(si, len(rowids) - 1), np.minimum(di, len(rowids) - 1)
    keep = (rowids[si_ok] == s) & (rowids[di_ok] == d) & (s != d)  # both ends live in the scope, no loops
    lo, hi, w = np.minimum(si, di)[keep], np.maximum(si, di)[keep], w[keep]
    keys, inverse = np.unique(lo * len(rowids) + hi, return_inverse=True)
    summed = np.bincount(inverse, weights=w, minlength=len(keys))
    pairs = np.stack([keys // len(rowids), keys % len(rowids)], axis=1)
    return rowids, pairs, summed
