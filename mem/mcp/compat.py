"""``--profile memory-v3``: memory-v3's tool names and argument names, backed by this engine.

Every tool maps onto the same stage functions as the CLI and the default profile; the mapping
(and what differs: string ids, no vault, no graph pickles) is documented in the README section
"memory-v3 compatibility". Tools whose stage is not installed are left out, never faked.
No ``from __future__ import annotations``: the SDK reads the annotations at runtime.
"""

from datetime import timedelta
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from mcp.server.mcpserver import Context

from mem.mcp import render
from mem.mcp.calls import DESTRUCTIVE, READ, WRITE, add_request, do_recent, do_search, do_stats, registrar
from mem.mcp.engine import Engine, tool_error
from mem.mcp.render import Hits, Memories, Outcomes
from mem.records import KINDS

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from mem.mcp.boundary import Boundary

class Extracted(TypedDict):
    summary: dict[str, Any]
    candidates: list[dict[str, Any]]


class Compacted(TypedDict):
    text: str
    before: int
    after: int
    facts: list[str]
    removed: dict[str, int]
    note: NotRequired[str]  # only when max_chars could not be met (or the original came back)


AGENT_KEY = "mcp.agent_sync.{}"  # meta key holding each agent's last seen changelog seq
SYNC_LIMIT = 500


def kind_of(content_type: str | None) -> tuple[str | None, list[str]]:
    """memory-v3 content types -> (kind, extra tags). 'person' has no kind of its own: a fact tagged person."""
    if content_type is None:
        return None, []
    if content_type == "person":
        return "fact", ["person"]
    if content_type not in KINDS:
        raise tool_error(f"unknown content_type {content_type!r}; one of {', '.join((*KINDS, 'person'))}")
    return content_type, []


def do_agent_sync(engine: Engine, boundary: "Boundary", agent_id: str) -> dict[str, Any]:
    """Changelog entries this agent has not seen yet (oldest first), then remember how far it read.

    A bounded session sees only entries of memories it may read: a purged memory's tombstone has no
    scope left, so only an unbounded session sees it; entries about no memory (reindex) stay.
    """
    from mem.store.agent_sync import changelog_after

    store = engine.ctx.store
    key = AGENT_KEY.format(agent_id)
    seen = int(store.get_meta(key) or 0)

    def visible(scope: str | None, memory_id: str | None) -> bool:
        if memory_id is None or not boundary.bounded:
            return True
        return scope is not None and boundary.can_read(scope)

    entries, last = changelog_after(store, seen, SYNC_LIMIT, visible)
    if last > seen:
        with store.write():
            store.set_meta(key, str(last))
    return {"agent_id": agent_id, "from_seq": seen, "to_seq": last, "count": len(entries),
            "more": len(entries) == SYNC_LIMIT, "entries": entries}


def do_topics(engine: Engine, boundary: "Boundary", limit: int) -> dict[str, Any]:
    counts = do_stats(engine, boundary)
    topics = [{"content_type": kind, "count": n, "source": "kind"} for kind, n in counts["by_kind"].items()][:limit]
    return {"count": len(topics), "topics": topics}


def do_integrity(engine: Engine) -> dict[str, Any]:
    return {"db_integrity": engine.ctx.store.integrity(), "schema_version": engine.ctx.store.schema_version()}


def do_reindex(engine: Engine, boundary: "Boundary") -> dict[str, Any]:
    from mem.config import DEFAULT_EMBEDDER
    from mem.stages import io

    if boundary.bounded:
        raise tool_error(f"reindex re-embeds every scope and {boundary.describe()}; run 'mem reindex' instead")

    ctx = engine.ctx
    name = ctx.settings.embedder or ctx.store.embedder_name() or DEFAULT_EMBEDDER
    report = io.reindex(ctx, name)
    report.pop("record", None)
    return report


def extracted_result(report: dict[str, Any]) -> Any:
    summary = report["summary"]
    counts = ", ".join(f"{v} {k}" for k, v in summary.items() if k not in ("turns", "candidates", "dry_run"))
    head = (f"{summary['candidates']} candidate(s) from {summary['turns']} turn(s)"
            f"{' (dry run: nothing stored)' if summary['dry_run'] else ''}{': ' + counts if counts else ''}")
    lines = [head]
    for c in report["candidates"]:
        parts = ["-", c["status"], c.get("id"), f"[{c['kind']}]", f"{c['author']}:" if c.get("author") else None,
                 c["text"], f"({c['reason']})" if c.get("reason") else None]
        lines.append(" ".join(p for p in parts if p))
    return render.result(dict(report), "\n".join(lines))


def compacted_result(report: dict[str, Any]) -> Any:
    removed = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in report["removed"].items() if v)
    head = f"{report['before']} -> {report['after']} chars ({removed or 'nothing removed'}); {len(report['facts'])} facts kept"
    if report.get("note"):
        head += f"\nnote: {report['note']}"
    return render.result(report, f"{head}\n\n{report['text']}")


def register(server: "MCPServer", engine: Engine) -> list[str]:
    """Register memory-v3's tools (those this installation can back); returns their names."""
    from mem.stages import memories

    names: list[str] = []
    tool = registrar(server, names)

    # ------------------------------------------------------------------ CRUD
    @tool(WRITE)
    async def add_memory(ctx: Context, content: str, content_type: str | None = None, tags: list[str] | None = None,
                         source: str | None = None, protected: bool = False, author: str | None = None,
                         confidence: float | None = None, governance_layer: int | None = None,
                         structure_type: str | None = None) -> Outcomes:
        """Store a memory (protected = pinned, never decays). Returns its id; secrets are rejected."""
        kind, extra = kind_of(content_type)
        boundary = await engine.boundary(ctx)
        where = await engine.scope(ctx, None, use="write")
        record: dict[str, Any] = {"text": content, "kind": kind, "tags": (tags or []) + extra or None,
                                  "source": source, "author": author, "pinned": protected or None,
                                  "confidence": confidence, "layer": governance_layer}
        if structure_type:
            record["meta"] = {"structure_type": structure_type}
        outcomes = await engine.add(*add_request(boundary, where, [{k: v for k, v in record.items() if v is not None}],
                                                 {}, False, False))
        if outcomes[0].status == "rejected":
            raise tool_error(f"not stored: {outcomes[0].reason}")
        return render.outcomes_result(outcomes)

    @tool(READ)
    async def get(ctx: Context, memory_id: str) -> Memories:
        """One memory by id (or unique prefix)."""
        boundary = await engine.boundary(ctx)
        found = await engine.call(lambda: memories.get(engine.ctx, [boundary.resolve(engine.ctx.store, memory_id)]))
        return render.memories_result(found)

    @tool(WRITE, idempotent=True)
    async def update(ctx: Context, memory_id: str, content: str | None = None, tags: list[str] | None = None,
                     protected: bool | None = None, governance_layer: int | None = None,
                     structure_type: str | None = None) -> Memories:
        """Update a memory's content (re-embedded), tags (replaced), protected flag or governance layer."""
        boundary = await engine.boundary(ctx)
        memory_id = await engine.call(boundary.resolve, engine.ctx.store, memory_id, write=True)
        memory = await engine.call(memories.update, engine.ctx, memory_id, text=content, tags=tags, pinned=protected,
                                   layer=governance_layer,
                                   meta={"structure_type": structure_type} if structure_type else None)
        return render.memories_result([memory])

    @tool(DESTRUCTIVE)
    async def forget(ctx: Context, memory_id: str, reason: str = "manual") -> Outcomes:
        """Archive a memory (restorable; nothing is deleted)."""
        boundary = await engine.boundary(ctx)
        memory_id = await engine.call(boundary.resolve, engine.ctx.store, memory_id, write=True)
        outcomes = await engine.call(memories.forget, engine.ctx, [memory_id])
        for o in outcomes:
            o["reason"] = reason
        return render.outcomes_result(outcomes)

    # ---------------------------------------------------------------- search
    @tool(READ)
    async def search(ctx: Context, query: str, limit: int = 10, content_type: str | None = None) -> Hits:
        """Hybrid search: BM25 + vectors + ACT-R priors, ranked."""
        kind, extra = kind_of(content_type)
        boundary = await engine.boundary(ctx)
        hits = await engine.call(do_search, engine, text=query, k=max(1, min(limit, 1000)), scope=boundary.home,
                                 kinds=[kind] if kind else [], tags=extra)
        return render.hits_result(boundary.keep_hits(hits), why=False)

    @tool(READ)
    async def keyword_search(ctx: Context, keywords: str, limit: int = 10) -> Hits:
        """Pure BM25 keyword search: exact terms, file names, error codes."""
        boundary = await engine.boundary(ctx)
        hits = await engine.call(do_search, engine, text=keywords, k=max(1, min(limit, 1000)), scope=boundary.home,
                                 channels=["bm25"])
        return render.hits_result(boundary.keep_hits(hits), why=False)

    # ---------------------------------------------------------------- system
    @tool(READ)
    async def stats(ctx: Context) -> dict[str, Any]:
        """Memory system statistics."""
        return render.report_result(await engine.call(do_stats, engine, await engine.boundary(ctx)))

    @tool(READ)
    async def list_recent(ctx: Context, hours: int = 24, limit: int = 20) -> Memories:
        """Memories created in the last `hours`, newest first."""
        from mem.enrich.timestamps import format_datetime

        if hours < 1 or not 1 <= limit <= 1000:
            raise tool_error("hours must be >= 1 and limit 1-1000")
        where = await engine.scope(ctx, None)
        since = format_datetime(engine.ctx.now() - timedelta(hours=hours))
        return render.memories_result(await engine.call(do_recent, engine, where, limit, [], [], since, None))

    @tool(READ)
    async def list_topics(ctx: Context, limit: int = 20) -> dict[str, Any]:
        """Topic clusters (memory counts by kind)."""
        return render.report_result(await engine.call(do_topics, engine, await engine.boundary(ctx), limit))

    @tool(WRITE, idempotent=True)
    async def reindex(ctx: Context, force: bool = False) -> dict[str, Any]:
        """Re-embed every memory with the current embedder (always a full pass)."""
        return render.report_result(await engine.call(do_reindex, engine, await engine.boundary(ctx)))

    @tool(READ)
    async def check_integrity() -> dict[str, Any]:
        """SQLite integrity check of the memory database."""
        return render.report_result(await engine.call(do_integrity, engine))

    @tool(WRITE)
    async def agent_sync(ctx: Context, agent_id: str) -> dict[str, Any]:
        """Changelog entries this agent has not seen yet; advances its offset."""
        if not agent_id.strip():
            raise tool_error("agent_id must be a non-empty string")
        boundary = await engine.boundary(ctx)
        return render.report_result(await engine.call(do_agent_sync, engine, boundary, agent_id.strip()))

    @tool(WRITE, idempotent=True)
    async def set_governance_layer(ctx: Context, memory_id: str, layer: int) -> Memories:
        """Change governance layer (1-4); layer 1 also pins the memory."""
        if layer not in (1, 2, 3, 4):
            raise tool_error("layer must be 1-4")
        boundary = await engine.boundary(ctx)
        memory_id = await engine.call(boundary.resolve, engine.ctx.store, memory_id, write=True)
        memory = await engine.call(memories.update, engine.ctx, memory_id, layer=layer,
                                   pinned=True if layer == 1 else None)
        return render.memories_result([memory])

    # ------------------------------------------------------------ extraction
    @tool(WRITE)
    async def extract_from_conversation(ctx: Context, conversation: str, source: str | None = None,
                                        author: str | None = None, dry_run: bool = False) -> Extracted:
        """Store a transcript's durable sentences (decisions, corrections, commands...); no LLM. Secrets rejected."""
        from mem.stages import extract

        where = await engine.scope(ctx, None)
        report = await engine.call(extract.run, engine.ctx, conversation, source=source, author=author,
                                   dry_run=dry_run, scope=where)
        return extracted_result(report)

    @tool(READ, idempotent=True)
    async def compact_text(text: str, max_chars: int | None = None) -> Compacted:
        """Shorten text extractively: drop repeats and filler, keep every name and number. Stores nothing."""
        from mem.stages import compact

        return compacted_result(await engine.call(compact.compact, text, max_chars))

    from mem.mcp import optional

    optional.register_v3(server, engine, tool)
    return list(dict.fromkeys(names))
