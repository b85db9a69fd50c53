"""The default tool profile: a small, complete set, each tool a few lines over a stage function.

This module imports the ``mcp`` SDK at the top: only ``mem serve-mcp`` imports it. No
``from __future__ import annotations`` here: the SDK reads the tools' annotations at runtime.
Graph and lifecycle tools are registered only when their stage modules exist (``optional``),
never as placeholders.
"""

from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context

from mem.mcp import render
from mem.mcp.engine import Engine, tool_error
from mem.mcp.schema import slim
from mem.mcp.render import Hits, Memories, Outcomes

if TYPE_CHECKING:
    from mcp.server import MCPServer

# Kept terse on purpose: every byte of tools/list is context the client pays for on every turn.
READ = {"read_only_hint": True}
WRITE = {"read_only_hint": False, "destructive_hint": False}
DESTRUCTIVE = {"read_only_hint": False, "destructive_hint": True}

Ids = str | list[str]


def annotations(kind: dict[str, bool], *, idempotent: bool | None = None) -> Any:
    from mcp.types import ToolAnnotations

    return ToolAnnotations(**kind, idempotent_hint=idempotent)


def as_list(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def time_arg(value: str | None, name: str) -> str | None:
    from mem.stages.add import parse_time_option

    return parse_time_option(value, name)


# ------------------------------------------------------------------------- stage calls
# Plain functions run on the engine's worker thread: they open no transaction of their own.

def do_add(engine: Engine, scope: str, items: list[str | dict[str, Any]], defaults: dict[str, Any],
           redact: bool, keep_near: bool, extract: str | None = None) -> list[Any]:
    from mem.stages import add as add_stage

    records: list[tuple[int | None, dict[str, Any]]] = []
    for number, item in enumerate(items, 1):
        if isinstance(item, str):
            records.append((number if len(items) > 1 else None, {"text": item}))
        elif isinstance(item, dict):
            records.append((number if len(items) > 1 else None, item))
        else:
            raise tool_error(f"memories[{number}] must be a text or an object with 'text'")
    options = add_stage.AddOptions(redact=redact, keep_near=keep_near, extract=extract,
                                   defaults={**{k: v for k, v in defaults.items() if v is not None}, "scope": scope})
    return list(add_stage.run(engine.ctx, records, options))


def do_search(engine: Engine, **fields: Any) -> list[Any]:
    from mem.stages import search as search_stage

    fields["since"] = time_arg(fields.get("since"), "since")
    fields["until"] = time_arg(fields.get("until"), "until")
    return search_stage.run(engine.ctx, search_stage.Query(**fields))


def do_recent(engine: Engine, scope: str, limit: int, kinds: list[str], tags: list[str], since: str | None,
              status: str | None) -> list[Any]:
    from mem.stages import memories

    if status not in (None, "active", "cold", "archived", "all"):
        raise tool_error(f"unknown status {status!r}: active, cold, archived or all")
    return list(memories.list_memories(engine.ctx, scope=scope, kinds=kinds, tags=tags,
                                       since=time_arg(since, "since"), status=status, limit=limit))


def do_stats(engine: Engine) -> dict[str, Any]:
    return {"path": str(engine.ctx.store.path), **engine.ctx.store.counts()}


# ------------------------------------------------------------------------- registration

def registrar(server: "MCPServer", names: list[str]) -> Any:
    """``@tool(kind)``: register a function as a tool with its hints and slimmed schema, noting its name."""

    def tool(kind: dict[str, bool], idempotent: bool | None = None) -> Any:
        def decorator(fn: Any) -> Any:
            server.add_tool(fn, annotations=annotations(kind, idempotent=idempotent))
            slim(server, fn.__name__)
            names.append(fn.__name__)
            return fn
        return decorator

    return tool


def register(server: "MCPServer", engine: Engine) -> list[str]:
    """Register the default profile on ``server``; returns the tool names registered."""
    from mem.stages import memories

    names: list[str] = []
    tool = registrar(server, names)

    @tool(WRITE)
    async def add(ctx: Context, text: str | None = None, memories: list[str | dict[str, Any]] | None = None,
                  kind: str | None = None, tags: list[str] | None = None, source: str | None = None,
                  author: str | None = None, layer: int | None = None, pinned: bool | None = None,
                  event_at: str | None = None, meta: dict[str, Any] | None = None, redact: bool = False,
                  keep_near: bool = False, extract: str | None = None, scope: str | None = None) -> Outcomes:
        """Remember one text, or many (memories: texts or {text, kind, tags, ...}). Secrets are rejected unless redact."""
        items: list[str | dict[str, Any]] = ([text] if text is not None else []) + list(memories or [])
        if not items:
            raise tool_error("give 'text' or 'memories'")
        if scope == "*":
            raise tool_error("a memory needs one scope; '*' only reads")
        where = await engine.scope(ctx, scope)
        defaults = {"kind": kind, "tags": tags, "source": source, "author": author, "layer": layer,
                    "pinned": pinned, "event_at": event_at, "meta": meta}
        outcomes = await engine.call(do_add, engine, where, items, defaults, redact, keep_near, extract)
        if len(items) == 1 and outcomes[0].status == "rejected":
            raise tool_error(f"not stored: {outcomes[0].reason}")
        return render.outcomes_result(outcomes)

    @tool(READ)
    async def search(ctx: Context, query: str, k: int = 10, kinds: list[str] | None = None,
                     tags: list[str] | None = None, since: str | None = None, until: str | None = None,
                     include_superseded: bool = False, include_archived: bool = False,
                     channels: list[str] | None = None, why: bool = False, scope: str | None = None) -> Hits:
        """Hybrid search (semantic + BM25 + priors). scope '*' = all scopes; why=true explains each rank."""
        if not 1 <= k <= 1000:
            raise tool_error("k must be 1-1000")
        where = await engine.scope(ctx, scope)
        hits = await engine.call(do_search, engine, text=query, k=k, scope=where, kinds=kinds or [], tags=tags or [],
                                 since=since, until=until, include_superseded=include_superseded,
                                 include_archived=include_archived, channels=channels)
        return render.hits_result(hits, why=why)

    @tool(READ)
    async def get(ids: Ids) -> Memories:
        """Memories by id (or unique prefix of 4+ characters)."""
        return render.memories_result(await engine.call(memories.get, engine.ctx, as_list(ids)))

    @tool(WRITE, idempotent=True)
    async def update(id: str, text: str | None = None, kind: str | None = None, tags: list[str] | None = None,
                     add_tags: list[str] | None = None, remove_tags: list[str] | None = None,
                     layer: int | None = None, pinned: bool | None = None,
                     meta: dict[str, Any] | None = None) -> Memories:
        """Change a memory's text (re-embedded), kind, tags, layer (1-4), pin or meta (merged)."""
        memory = await engine.call(memories.update, engine.ctx, id, text=text, kind=kind, tags=tags,
                                   add_tags=add_tags or (), remove_tags=remove_tags or (), layer=layer,
                                   pinned=pinned, meta=meta)
        return render.memories_result([memory])

    @tool(DESTRUCTIVE)
    async def forget(ids: Ids, purge: bool = False) -> Outcomes:
        """Archive memories (restorable); purge=true deletes them for good."""
        return render.outcomes_result(await engine.call(memories.forget, engine.ctx, as_list(ids), purge=purge))

    @tool(READ)
    async def stats() -> dict[str, Any]:
        """Counts by status, scope, kind, layer; index sizes; embedder."""
        return render.report_result(await engine.call(do_stats, engine))

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
