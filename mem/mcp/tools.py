"""The default tool profile: a small, complete set, each tool a few lines over a stage function.

This module imports the ``mcp`` SDK at the top: only ``mem serve-mcp`` imports it. Every scope and
id goes through the session's boundary (``Engine.boundary``, ``mem.mcp.boundary``). No
``from __future__ import annotations`` here: the SDK reads the tools' annotations at runtime.
Graph and lifecycle tools are registered only when their stage modules exist (``optional``),
never as placeholders.
"""

from typing import TYPE_CHECKING, Any, Literal

from mcp.server.mcpserver import Context

from mem.mcp import render
from mem.mcp.calls import (
    DESTRUCTIVE, READ, WRITE, add_request, as_list, do_recent, do_search, do_stats, elsewhere, registrar,
)
from mem.mcp.engine import Engine, tool_error
from mem.mcp.render import Hits, Memories, Outcomes

if TYPE_CHECKING:
    from mcp.server import MCPServer

Ids = str | list[str]


def register(server: "MCPServer", engine: Engine) -> list[str]:
    """Register the default profile on ``server``; returns the tool names registered."""
    from mem.stages import memories

    names: list[str] = []
    tool = registrar(server, names)

    @tool(WRITE)
    async def add(ctx: Context, text: str | None = None, memories: list[str | dict[str, Any]] | None = None,
                  kind: str | None = None, tags: list[str] | None = None, source: str | None = None,
                  author: str | None = None, layer: int | None = None, pinned: bool | None = None,
                  event_at: str | None = None, valid_until: str | None = None, meta: dict[str, Any] | None = None,
                  redact: bool = False, keep_near: bool = False, extract: str | None = None, scope: str | None = None,
                  priority: int = 3) -> Outcomes:
        """Remember one text, or many (memories: texts or {text, kind, ...}); secrets rejected unless redact. priority 1-5."""
        items: list[str | dict[str, Any]] = ([text] if text is not None else []) + list(memories or [])
        if not items:
            raise tool_error("give 'text' or 'memories'")
        boundary = await engine.boundary(ctx)
        where = await engine.scope(ctx, scope, use="write")
        defaults = {"kind": kind, "tags": tags, "source": source, "author": author, "layer": layer,
                    "pinned": pinned, "event_at": event_at, "valid_until": valid_until, "meta": meta}
        if isinstance(priority, bool) or not isinstance(priority, int) or not 1 <= priority <= 5:
            raise tool_error("priority must be an integer 1-5 (1 most urgent)")
        outcomes = await engine.add(*add_request(boundary, where, items, defaults, redact, keep_near, extract),
                                    priority=priority)
        if len(items) == 1 and outcomes[0].status == "rejected":
            raise tool_error(f"not stored: {outcomes[0].reason}")
        return render.outcomes_result(outcomes)

    @tool(READ)
    async def search(ctx: Context, query: str, limit: int | None = None, kinds: list[str] | None = None,
                     tags: list[str] | None = None, since: str | None = None, until: str | None = None,
                     include_superseded: bool = False, include_archived: bool = False,
                     channels: list[str] | None = None, why: bool = False, scope: str | None = None,
                     fusion: Literal["blend", "rrf"] | None = None, k: int | None = None) -> Hits:
        """Hybrid search: semantic, BM25, priors. limit: hits (10); scope '*': all; why=true: reasons; fusion: blend|rrf."""
        k = limit if limit is not None else k if k is not None else 10  # k: the old name, still accepted
        if not 1 <= k <= 1000:
            raise tool_error("limit must be 1-1000")
        boundary = await engine.boundary(ctx)
        where = await engine.scope(ctx, scope)
        fields = dict(text=query, k=k, scope=where, kinds=kinds or [], tags=tags or [], since=since, until=until,
                      include_superseded=include_superseded, include_archived=include_archived, channels=channels,
                      fusion=fusion)
        hits = boundary.keep_hits(await engine.call(do_search, engine, **fields))
        if hits:
            return render.hits_result(hits, why=why)
        hint, counts = await engine.call(elsewhere, engine, boundary, **fields)
        return render.hits_result(hits, why=why, elsewhere=hint, elsewhere_counts=counts)

    @tool(READ)
    async def get(ctx: Context, ids: Ids, explain: bool = False) -> Memories:
        """Memories by id or 4+ char prefix; explain=true: why (superseded: by what, why)."""
        boundary = await engine.boundary(ctx)

        def found() -> list[Any]:
            got = memories.get(engine.ctx, boundary.resolve_all(engine.ctx.store, as_list(ids)))
            if not explain:
                return got
            from mem.stages.lifecycle import explained

            return explained(engine.ctx, got)

        return render.memories_result(await engine.call(found))

    @tool(WRITE, idempotent=True)
    async def update(ctx: Context, id: str, text: str | None = None, kind: str | None = None, tags: list[str] | None = None,
                     add_tags: list[str] | None = None, remove_tags: list[str] | None = None,
                     layer: int | None = None, pinned: bool | None = None,
                     meta: dict[str, Any] | None = None, redact: bool = False,
                     valid_until: str | None = None, event_at: str | None = None) -> Memories:
        """Change text (re-embedded), kind, tags, layer, pin, meta (merged), times ('none' clears)."""
        boundary = await engine.boundary(ctx)
        memory_id = await engine.call(boundary.resolve, engine.ctx.store, id, write=True)
        memory = await engine.call(memories.update, engine.ctx, memory_id, text=text, kind=kind, tags=tags,
                                   add_tags=add_tags or (), remove_tags=remove_tags or (), layer=layer,
                                   pinned=pinned, meta=meta, redact=redact, valid_until=valid_until,
                                   event_at=event_at)
        return render.memories_result([memory])

    @tool(DESTRUCTIVE)
    async def forget(ctx: Context, ids: Ids, purge: bool = False) -> Outcomes:
        """Archive memories (restorable); purge=true deletes for good, freeing what they superseded."""
        boundary = await engine.boundary(ctx)
        found = await engine.call(boundary.resolve_all, engine.ctx.store, as_list(ids), write=True)
        return render.outcomes_result(await engine.call(memories.forget, engine.ctx, found, purge=purge))

    @tool(READ)
    async def stats(ctx: Context) -> dict[str, Any]:
        """Counts by status, scope, kind, layer; index sizes; embedder."""
        return render.report_result(await engine.call(do_stats, engine, await engine.boundary(ctx)))

    @tool(READ)
    async def recent(ctx: Context, limit: int = 20, kinds: list[str] | None = None, tags: list[str] | None = None,
                     since: str | None = None, status: str | None = None, scope: str | None = None) -> Memories:
        """Newest memories first. status: active|cold|archived|all."""
        if not 1 <= limit <= 1000:
            raise tool_error("limit must be 1-1000")
        where = await engine.scope(ctx, scope)
        found = await engine.call(do_recent, engine, where, limit, kinds or [], tags or [], since, status)
        return render.memories_result(found)

    from mem.mcp import optional

    optional.register_default(server, engine, tool)
    return list(dict.fromkeys(names))
