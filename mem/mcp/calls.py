"""What every tool profile shares: hint sets, the registrar, argument helpers and the stage calls
used by more than one tool set (default, memory-v3, the optional graph/lifecycle tools).

The tool modules import this one, never each other. The stage calls are plain functions that
run on the engine's worker thread: they open no transaction of their own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from mem.mcp.boundary import Boundary
    from mem.mcp.engine import Engine

# Kept terse on purpose: every byte of tools/list is context the client pays for on every turn.
READ = {"read_only_hint": True}
WRITE = {"read_only_hint": False, "destructive_hint": False}
DESTRUCTIVE = {"read_only_hint": False, "destructive_hint": True}


def annotations(kind: dict[str, bool], *, idempotent: bool | None = None) -> Any:
    from mcp.types import ToolAnnotations

    return ToolAnnotations(**kind, idempotent_hint=idempotent)


def registrar(server: "MCPServer", names: list[str]) -> Any:
    """``@tool(kind)``: register a function as a tool with its hints and slimmed schema, noting its name."""
    from mem.mcp.schema import slim, strict

    def tool(kind: dict[str, bool], idempotent: bool | None = None) -> Any:
        def decorator(fn: Any) -> Any:
            server.add_tool(fn, annotations=annotations(kind, idempotent=idempotent))
            slim(server, fn.__name__)
            strict(server, fn.__name__)
            names.append(fn.__name__)
            return fn
        return decorator

    return tool


def as_list(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def time_arg(value: str | None, name: str, ctx: Any = None) -> str | None:
    """An MCP time argument, read like the CLI's --since/--until (``ctx``: whose clock)."""
    from mem.stages.add import parse_time_option

    now = ctx.settings.now() if ctx is not None else None
    return parse_time_option(value, name, now, upper=name in ("until", "end_date"))


# ------------------------------------------------------------------------- stage calls

def add_request(boundary: "Boundary", scope: str, items: list[str | dict[str, Any]], defaults: dict[str, Any],
                redact: bool, keep_near: bool, extract: str | None = None) -> tuple[list[Any], Any]:
    """``(records, options)`` for ``Engine.add``: texts or records into ``scope``; a record naming its own
    scope needs the boundary's leave too."""
    from mem.errors import MemError
    from mem.mcp.engine import tool_error
    from mem.stages import add as add_stage

    records: list[tuple[int | None, dict[str, Any]]] = []
    for number, item in enumerate(items, 1):
        if isinstance(item, str):
            records.append((number if len(items) > 1 else None, {"text": item}))
        elif isinstance(item, dict):
            if item.get("scope") is not None:
                try:
                    boundary.write_scope(str(item["scope"]))
                except MemError as error:
                    raise tool_error(error.message) from None
            records.append((number if len(items) > 1 else None, item))
        else:
            raise tool_error(f"memories[{number}] must be a text or an object with 'text'")
    if extract not in (None, "ollama"):
        raise tool_error(f"unknown extractor {extract!r}; the only one is 'ollama'")
    options = add_stage.AddOptions(redact=redact, keep_near=keep_near, extract=extract,
                                   defaults={**{k: v for k, v in defaults.items() if v is not None}, "scope": scope})
    return records, options


def do_search(engine: "Engine", **fields: Any) -> list[Any]:
    from mem.stages import search as search_stage

    fields["since"] = time_arg(fields.get("since"), "since", engine.ctx)
    fields["until"] = time_arg(fields.get("until"), "until", engine.ctx)
    return search_stage.run(engine.ctx, search_stage.Query(**fields))


def elsewhere(engine: "Engine", boundary: "Boundary", **fields: Any) -> tuple[str | None, dict[str, int]]:
    """After an empty search: the hint naming other scopes' hits (``mem.stages.hints``) and the counts,
    counting only hits this session may see."""
    from mem.stages import search as search_stage
    from mem.stages.hints import elsewhere_message, hits_elsewhere

    fields["since"] = time_arg(fields.get("since"), "since", engine.ctx)
    fields["until"] = time_arg(fields.get("until"), "until", engine.ctx)
    query = search_stage.Query(**fields)
    counts = hits_elsewhere(engine.ctx, query, keep=boundary.keep_hits)
    hint = elsewhere_message(engine.ctx.scope_filter(query.scope), counts, "scope={}") if counts else None
    return hint, dict(counts)


def do_recent(engine: "Engine", scope: str, limit: int, kinds: list[str], tags: list[str], since: str | None,
              status: str | None) -> list[Any]:
    from mem.stages import memories

    return list(memories.list_memories(engine.ctx, scope=scope, kinds=kinds, tags=tags,
                                       since=time_arg(since, "since", engine.ctx), status=status, limit=limit))


def do_stats(engine: "Engine", boundary: "Boundary") -> dict[str, Any]:
    """The store's counts; a bounded session sees only its scopes' memories and no database path."""
    from mem.store.scoped import counts_in

    counts = engine.ctx.store.counts()
    scopes = boundary.readable_scopes(engine.ctx.store)
    if scopes is None:
        return {"path": str(engine.ctx.store.path), **counts}
    shown = counts_in(engine.ctx.store, scopes)
    return {"scope": boundary.home, **shown, "schema_version": counts["schema_version"],
            "embedder": counts["embedder"], "dim": counts["dim"]}
