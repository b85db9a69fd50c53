"""Export and import: JSON Lines that round-trip ids, timestamps, provenance and meta."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from mem.records import Memory, Outcome
from mem.stages import add

if TYPE_CHECKING:
    from mem.stages.context import Context


def export(ctx: "Context", *, scope: str | None = None, since: str | None = None,
           include_archived: bool = True) -> Iterator[Memory]:
    """Every memory (archived too by default) in creation order; ``since`` filters on updated_at."""
    statuses = None if include_archived else ("active", "cold")
    last = 0
    while True:  # batches by rowid, so a huge export never holds one long read
        batch = list(ctx.store.select(scope=ctx.scope_filter(scope), statuses=statuses, order="m.rowid",
                                      limit=1000, after_rowid=last))
        if not batch:
            return
        for rowid, memory in batch:
            last = rowid
            if since is None or memory.updated_at >= since:
                yield memory


def import_records(ctx: "Context", records: Iterable[tuple[int, dict[str, Any]]], *,
                   redact: bool = False) -> Iterator[Outcome]:
    """Import through the intake gate, keeping ids: importing the same file twice adds nothing."""
    yield from add.run(ctx, records, add.AddOptions(redact=redact), keep_ids=True)


def reindex(ctx: "Context", embedder_name: str, *, batch: int = 256) -> dict[str, Any]:
    """Re-embed every memory with ``embedder_name`` and bind the database to it."""
    from mem.embed import get_embedder

    embedder = get_embedder(embedder_name, ollama_host=ctx.settings.ollama_host)
    rows = [(rowid, m.text, m.scope) for rowid, m in ctx.store.select(scope=None, statuses=None, order="m.rowid")]
    vectors = [embedder.embed([t for _, t, _ in rows[i : i + batch]]) for i in range(0, len(rows), batch)]
    with ctx.store.write():
        ctx.store.rebind_embedder(embedder_name, embedder.id, embedder.dim)
        for start, chunk in zip(range(0, len(rows), batch), vectors):
            for (rowid, _, scope), vector in zip(rows[start : start + batch], chunk):
                ctx.store.put_vector(rowid, scope, vector)
        ctx.store.log(ctx.now_iso(), "reindex", None, None, {"embedder": embedder.id, "count": len(rows)})
    ctx.use_embedder(embedder)
    return {"record": "reindex", "embedder": embedder_name, "id": embedder.id, "dim": embedder.dim, "memories": len(rows)}
