"""Tools over the graph and lifecycle stages, registered only when those stage modules are installed.

Each tool calls the same stage function as the matching CLI command (``mem graph ...``,
``mem consolidate``, ``mem verify``, ``mem archive``). No ``from __future__ import annotations``:
the SDK reads the annotations at runtime.
"""

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any, TypedDict

from mcp.server.mcpserver import Context

from mem.mcp import render
from mem.mcp.calls import DESTRUCTIVE, READ, WRITE, as_list, do_search, time_arg
from mem.mcp.engine import Engine, tool_error
from mem.mcp.render import Hits

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from mem.mcp.boundary import Boundary

GRAPH_OPS = ("neighbors", "path", "entity", "timeline", "causes", "communities", "stats")
MAX_LISTED = 200  # actions/findings listed per lifecycle run; the summary counts them all


class Rows(TypedDict):
    op: str
    count: int
    rows: list[dict[str, Any]]


class Run(TypedDict):
    summary: dict[str, Any]
    records: list[dict[str, Any]]


def has_stage(name: str, *functions: str) -> bool:
    """True when ``mem.stages.<name>`` exists and defines every function named."""
    try:
        if importlib.util.find_spec(f"mem.stages.{name}") is None:
            return False
        module = importlib.import_module(f"mem.stages.{name}")
    except Exception:  # a half-written module from a parallel branch: leave its tools out
        return False
    return all(callable(getattr(module, f, None)) for f in functions)


def _scope_arg(scope: str) -> str | None:
    return None if scope == "*" else scope


# ------------------------------------------------------------------------------ stage calls

MEMORY_ROWS = ("neighbors", "path", "timeline", "causes")  # ops whose rows are memories (filtered by the boundary)


def do_graph(engine: Engine, boundary: "Boundary", op: str, scope: str, id: str | None, to: str | None,
             name: str | None, layers: list[str] | None, depth: int | None, since: str | None, until: str | None,
             limit: int | None) -> list[dict[str, Any]]:
    rows = _graph_rows(engine, boundary, op, scope, id, to, name, layers, depth, since, until, limit)
    return boundary.visible(engine.ctx.store, rows, keys=("id",)) if op in MEMORY_ROWS else rows


def _graph_rows(engine: Engine, boundary: "Boundary", op: str, scope: str, id: str | None, to: str | None,
                name: str | None, layers: list[str] | None, depth: int | None, since: str | None, until: str | None,
                limit: int | None) -> list[dict[str, Any]]:
    from mem.stages import graph

    ctx = engine.ctx

    def need(value: Any, what: str) -> Any:
        if not value:
            raise tool_error(f"op {op!r} needs '{what}'")
        return boundary.resolve(ctx.store, value) if what in ("id", "to") else value

    if op == "neighbors":
        return graph.neighbors(ctx, need(id, "id"), layers=layers, depth=depth or 1, scope=scope, limit=limit or 100)
    if op == "path":
        return graph.path(ctx, need(id, "id"), need(to, "to"), layers=layers, scope=scope)
    if op == "entity":
        return [graph.entity(ctx, need(name, "name"), scope=scope, limit=limit or 200)]
    if op == "timeline":
        return list(graph.timeline(ctx, entity_name=name, since=time_arg(since, "since", ctx), until=time_arg(until, "until", ctx),
                                   scope=scope, limit=limit or 100))
    if op == "causes":
        return graph.causes(ctx, need(id, "id"), depth=depth or 4)
    if op == "communities":
        # Stored communities (consolidate's reorganize phase recomputes them); listing never writes.
        return graph.communities(ctx, scope=scope, recompute=False)[: limit or 100]
    if op == "stats":
        return [graph.stats(ctx, scope=scope)]
    raise tool_error(f"unknown op {op!r}; one of {', '.join(GRAPH_OPS)}")


def graph_line(row: dict[str, Any]) -> str:
    if "text" in row and "id" in row:
        lead = " ".join(str(row[k]) for k in ("step", "direction", "depth", "at") if row.get(k) is not None)
        via = row.get("via") or {}
        edge = f" <-{via.get('type')}-" if isinstance(via, dict) and via.get("type") else ""
        return f"{lead}{edge} {row['id']} {row['text']}".strip()
    import orjson

    return orjson.dumps(row, default=str).decode("utf-8")


def rows_result(op: str, rows: list[dict[str, Any]]) -> Any:
    items = [render.plain(r) for r in rows]
    text = "\n".join(graph_line(r) for r in items) or f"{op}: nothing found."
    return render.result({"op": op, "count": len(items), "rows": items}, text)


def run_result(records: list[dict[str, Any]], command: str) -> Any:
    import orjson

    summary: dict[str, Any] = {}
    listed: list[dict[str, Any]] = []
    for raw in records:
        record = render.plain(raw)
        if raw.get("record") == "summary":
            summary = record
        elif len(listed) < MAX_LISTED:
            listed.append(record)
    lines = [f"{command}: " + orjson.dumps(summary, default=str).decode("utf-8")]
    for record in listed[:20]:
        label = record.get("action") or record.get("finding") or record.get("status") or ""
        lines.append(f"- {label} {record.get('id', '')} {str(record.get('text', ''))[:120]}".rstrip())
    if len(listed) > 20:
        lines.append(f"... {len(listed) - 20} more in the structured result")
    return render.result({"summary": summary, "records": listed}, "\n".join(lines))


def do_consolidate(engine: Engine, phases: list[str] | None, dry_run: bool, limit: int | None,
                   scope: str) -> list[dict[str, Any]]:
    from mem.stages import consolidate

    options = consolidate.Options(phases=phases or list(consolidate.PHASES), dry_run=dry_run, limit=limit,
                                  scope=_scope_arg(scope))
    return list(consolidate.run(engine.ctx, options))


def do_verify(engine: Engine, boundary: "Boundary", ids: list[str] | None, older_than_days: float,
              scope: str) -> list[dict[str, Any]]:
    from mem.stages import verify

    ctx = engine.ctx
    resolved = boundary.resolve_all(ctx.store, ids, write=True) if ids else None
    return boundary.visible(ctx.store, list(verify.run(ctx, scope=scope, ids=resolved, older_than_days=older_than_days)))


def do_archive(engine: Engine, boundary: "Boundary", ids: list[str], restore: bool, dry_run: bool,
               limit: int | None, scope: str) -> list[dict[str, Any]]:
    from mem.stages import archive

    ctx = engine.ctx
    if ids:
        if dry_run:
            raise tool_error("dry_run applies to archiving by policy (no ids) only")
        ids = boundary.resolve_all(ctx.store, ids, write=True)
        return list(archive.restore(ctx, ids) if restore else archive.archive(ctx, ids))
    if restore:
        raise tool_error("restore needs ids")
    return list(archive.by_policy(ctx, scope=_scope_arg(scope), dry_run=dry_run, limit=limit))


def do_link(engine: Engine, boundary: "Boundary", a: str, b: str, kind: str, weight: float) -> dict[str, Any]:
    """An edge from a memory this session may write to one it may read; a ``supersedes`` edge hides its
    target from search, so that one too must be writable."""
    from mem.stages import graph

    store = engine.ctx.store
    return graph.link(engine.ctx, boundary.resolve(store, a, write=True),
                      boundary.resolve(store, b, write=kind == "supersedes"), kind=kind, weight=weight)


def outcome_line(record: dict[str, Any]) -> str:
    status = record.get("action") or record.get("status") or ""
    reason = f" ({record['reason']})" if record.get("reason") else ""
    return f"{status} {record.get('id', '')}{reason}".strip()


# ------------------------------------------------------------------------------ default profile

def register_default(server: "MCPServer", engine: Engine, tool: Any) -> None:
    """link + graph when the graph stage exists; consolidate, verify, archive when theirs do.

    ``tool`` (from the profile's register) registers each function and records its name.
    """
    if has_stage("graph", *GRAPH_OPS[:2], "entity", "timeline", "causes", "communities", "stats", "link"):
        @tool(WRITE)
        async def link(ctx: Context, a: str, b: str, type: str = "related", weight: float = 1.0) -> Rows:
            """Link memory a -> b (type: related, see_also, caused, resolved, motivated, ...)."""
            boundary = await engine.boundary(ctx)
            edge = await engine.call(do_link, engine, boundary, a, b, type, weight)
            return rows_result("link", [edge])

        @tool(READ)
        async def graph(ctx: Context, op: str, id: str | None = None, to: str | None = None,
                        name: str | None = None, layers: list[str] | None = None, depth: int | None = None,
                        since: str | None = None, until: str | None = None, limit: int | None = None,
                        scope: str | None = None) -> Rows:
            """Graph: op neighbors|causes (id), path (id, to), entity (name), timeline (name?, since, until), communities, stats."""
            if op not in GRAPH_OPS:
                raise tool_error(f"unknown op {op!r}; one of {', '.join(GRAPH_OPS)}")
            boundary = await engine.boundary(ctx)
            where = await engine.scope(ctx, scope)
            rows = await engine.call(do_graph, engine, boundary, op, where, id, to, name, layers, depth, since, until,
                                     limit)
            return rows_result(op, rows)


    if has_stage("consolidate", "run"):
        @tool(DESTRUCTIVE, idempotent=True)
        async def consolidate(ctx: Context, phases: list[str] | None = None, dry_run: bool = False,
                              limit: int | None = None, scope: str | None = None) -> Run:
            """Sleep: replay, reorganize, compress (merge near duplicates), prune. Archives, never deletes."""
            where = await engine.scope(ctx, scope, use="sweep")
            return run_result(await engine.call(do_consolidate, engine, phases, dry_run, limit, where), "consolidate")


    if has_stage("verify", "run"):
        @tool(WRITE, idempotent=True)
        async def verify(ctx: Context, ids: str | list[str] | None = None, older_than_days: float = 30.0,
                         scope: str | None = None) -> Run:
            """Check sources (verified|stale|missing), list contradictions, decay old unverified confidence."""
            boundary = await engine.boundary(ctx)
            where = await engine.scope(ctx, scope, use="sweep")
            records = await engine.call(do_verify, engine, boundary, as_list(ids) or None, older_than_days, where)
            return run_result(records, "verify")


    if has_stage("archive", "archive", "restore", "by_policy"):
        @tool(DESTRUCTIVE)
        async def archive(ctx: Context, ids: str | list[str] | None = None, restore: bool = False,
                          dry_run: bool = False, limit: int | None = None, scope: str | None = None) -> Run:
            """Archive ids (or, without ids, apply the lifecycle rules); restore=true brings ids back."""
            boundary = await engine.boundary(ctx)
            where = await engine.scope(ctx, scope, use="sweep")
            records = await engine.call(do_archive, engine, boundary, as_list(ids), restore, dry_run, limit, where)
            items = [render.plain(r) for r in records]
            return render.result({"summary": {"count": len(items)}, "records": items},
                                 "\n".join(outcome_line(r) for r in items) or "Nothing to archive.")



# ------------------------------------------------------------------------------ memory-v3 profile

def do_causal_chain(engine: Engine, boundary: "Boundary", query: str, depth: int, scope: str) -> list[dict[str, Any]]:
    """memory-v3 traced the chain from the best match of a query: a memory id works too."""
    from mem.errors import MemError
    from mem.stages import graph

    try:
        start = boundary.resolve(engine.ctx.store, query.strip())
    except MemError:
        hits = boundary.keep_hits(do_search(engine, text=query, k=1, scope=scope))
        if not hits:
            return []
        start = hits[0].memory.id
    return boundary.visible(engine.ctx.store, graph.causes(engine.ctx, start, depth=depth), keys=("id",))


def do_timeline(engine: Engine, boundary: "Boundary", query: str, start: str | None, end: str | None, limit: int,
                scope: str) -> list[dict[str, Any]]:
    """An entity's timeline when the query names one; else the query's hits in the window, in event order."""
    from mem.errors import NotFound
    from mem.stages import graph

    try:
        return boundary.visible(engine.ctx.store, list(graph.timeline(
            engine.ctx, entity_name=query, since=time_arg(start, "start_date", engine.ctx), until=time_arg(end, "end_date", engine.ctx),
            scope=scope, limit=limit)), keys=("id",))
    except NotFound:
        pass
    hits = boundary.keep_hits(do_search(engine, text=query, k=limit, scope=scope, since=start, until=end))
    events = [{"at": h.memory.event_at or h.memory.created_at, "id": h.memory.id, "text": h.memory.text,
               "kind": h.memory.kind, "event_at": h.memory.event_at, "created_at": h.memory.created_at} for h in hits]
    return sorted(events, key=lambda e: (e["at"], e["id"]))


def do_topics(engine: Engine, boundary: "Boundary", scope: str, limit: int) -> list[dict[str, Any]]:
    from mem.mcp.calls import do_stats
    from mem.stages import graph

    stored = graph.communities(engine.ctx, scope=scope, recompute=False)
    if stored:
        return [{"cluster_id": c.get("community"), "label": c.get("label"), "size": c.get("size"),
                 "top_nodes": c.get("members", [])[:5], "source": "communities"} for c in stored[:limit]]
    counts = do_stats(engine, boundary)["by_kind"]
    return [{"content_type": kind, "count": n, "source": "kind"} for kind, n in counts.items()][:limit]


def do_conflicts(engine: Engine, boundary: "Boundary", scope: str) -> dict[str, Any]:
    from mem.store import lifecycle as sql

    store = engine.ctx.store
    out = []
    for newer, older, since in sql.open_contradictions(store):
        a, b = store.get(newer), store.get(older)
        if scope != "*" and a.scope != scope:
            continue
        out.append({"id": newer, "other": older, "since": since, "text": a.text, "other_text": b.text})
    out = boundary.visible(store, out)
    return {"count": len(out), "conflicts": out}


def register_v3(server: "MCPServer", engine: Engine, tool: Any) -> None:
    """memory-v3's graph and lifecycle tools, over the graph / consolidate / verify stages when installed."""
    if has_stage("graph", "link", "stats", "causes", "timeline", "communities"):
        from mem.stages import graph

        @tool(WRITE)
        async def link_memories(ctx: Context, memory_id_a: str, memory_id_b: str, description: str = "") -> Rows:
            """Manual link between two memories (type 'related')."""
            boundary = await engine.boundary(ctx)
            edge = await engine.call(do_link, engine, boundary, memory_id_a, memory_id_b, "related", 1.0)
            return rows_result("link", [edge])

        @tool(READ)
        async def graph_search(ctx: Context, query: str, top_k: int = 10) -> Hits:
            """Knowledge-graph search: entities in the query spread activation over the entity graph."""
            boundary = await engine.boundary(ctx)
            hits = await engine.call(do_search, engine, text=query, k=max(1, min(top_k, 1000)), scope=boundary.home,
                                     channels=["entity"])
            return render.hits_result(boundary.keep_hits(hits), why=False)

        @tool(READ)
        async def graph_stats_tool(ctx: Context) -> dict[str, Any]:
            """Graph statistics: edges by layer/type, entities, communities, top entities."""
            where = await engine.scope(ctx, None)
            return render.report_result(render.plain(await engine.call(graph.stats, engine.ctx, scope=where)))

        @tool(READ)
        async def get_causal_chain(ctx: Context, query: str, max_depth: int = 5) -> Rows:
            """Causal chain (causes, the memory, effects) through the best match of query, or a memory id."""
            boundary = await engine.boundary(ctx)
            rows = await engine.call(do_causal_chain, engine, boundary, query, max(1, min(max_depth, 10)), boundary.home)
            return rows_result("causes", rows)

        @tool(READ)
        async def get_timeline(ctx: Context, query: str, start_date: str | None = None, end_date: str | None = None,
                               limit: int = 20) -> Rows:
            """Events in time order: an entity's timeline, else the query's matches. Optional date range."""
            boundary = await engine.boundary(ctx)
            rows = await engine.call(do_timeline, engine, boundary, query, start_date, end_date,
                                     max(1, min(limit, 1000)), boundary.home)
            return rows_result("timeline", rows)


        server.remove_tool("list_topics")  # the kind-count version from compat: communities are better

        @tool(READ)
        async def list_topics(ctx: Context, limit: int = 20) -> dict[str, Any]:
            """Topic clusters: stored communities, else memory counts by kind."""
            boundary = await engine.boundary(ctx)
            topics = await engine.call(do_topics, engine, boundary, boundary.home, max(1, limit))
            return render.report_result({"count": len(topics), "topics": topics})

    if has_stage("consolidate", "run"):
        from mem.stages import consolidate as consolidate_stage

        @tool(DESTRUCTIVE, idempotent=True)
        async def sleep_consolidation(ctx: Context, cycle_type: str = "full") -> Run:
            """Consolidation cycle: replay, reorganize, compress, prune, or full."""
            if cycle_type != "full" and cycle_type not in consolidate_stage.PHASES:
                raise tool_error(f"cycle_type must be one of full, {', '.join(consolidate_stage.PHASES)}")
            phases = None if cycle_type == "full" else [cycle_type]
            where = await engine.scope(ctx, None)
            return run_result(await engine.call(do_consolidate, engine, phases, False, None, where), "consolidate")

        @tool(DESTRUCTIVE, idempotent=True)
        async def decay_sweep(ctx: Context) -> Run:
            """Lifecycle sweep: age importance, move memories to cold or archived (the prune phase)."""
            where = await engine.scope(ctx, None)
            return run_result(await engine.call(do_consolidate, engine, ["prune"], False, None, where), "consolidate")


    if has_stage("verify", "run"):
        @tool(WRITE, idempotent=True)
        async def verify_memories(ctx: Context, memory_ids: list[str] | None = None, max_check: int = 50) -> Run:
            """Check memories against their source files; update verification and confidence."""
            boundary = await engine.boundary(ctx)
            return run_result(await engine.call(do_verify, engine, boundary, memory_ids, 30.0, boundary.home), "verify")


    if importlib.util.find_spec("mem.store.lifecycle") is not None:
        @tool(READ)
        async def check_conflicts(ctx: Context) -> dict[str, Any]:
            """Open contradictions: pairs of live memories that disagree."""
            boundary = await engine.boundary(ctx)
            return render.report_result(await engine.call(do_conflicts, engine, boundary, boundary.home))

