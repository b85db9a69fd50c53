"""Reading and changing single memories: get, list, update, forget (archive or purge)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from mem.errors import BadInput
from mem.records import KINDS, Memory
from mem.text import clean, content_hash

if TYPE_CHECKING:
    from mem.stages.context import Context


def resolve(ctx: "Context", prefixes: Sequence[str]) -> list[str]:
    """Full ids for id prefixes (4+ characters); NotFound/Ambiguous name the offending prefix."""
    return [ctx.store.resolve_id(p) for p in prefixes]


def get(ctx: "Context", prefixes: Sequence[str]) -> list[Memory]:
    return [ctx.store.get(memory_id) for memory_id in resolve(ctx, prefixes)]


def list_memories(ctx: "Context", *, scope: str | None = None, kinds: Sequence[str] = (), tags: Sequence[str] = (),
                  since: str | None = None, until: str | None = None, status: str | None = None,
                  include_superseded: bool = True, limit: int | None = 50) -> Iterator[Memory]:
    """Newest first. ``status`` None lists active and cold; ``all`` lists every status."""
    statuses = None if status == "all" else ((status,) if status else ("active", "cold"))
    for _, memory in ctx.store.select(scope=ctx.scope_filter(scope), kinds=kinds, tags=tags, statuses=statuses,
                                      include_superseded=include_superseded, since=since, until=until, limit=limit):
        yield memory


def update(ctx: "Context", prefix: str, *, text: str | None = None, kind: str | None = None,
           tags: Sequence[str] | None = None, add_tags: Sequence[str] = (), remove_tags: Sequence[str] = (),
           layer: int | None = None, pinned: bool | None = None, meta: dict[str, Any] | None = None) -> Memory:
    """Change a memory in place; a new text is screened for secrets and re-embedded."""
    from mem.enrich.classify import layer_for
    from mem.secrets import scan

    memory_id = ctx.store.resolve_id(prefix)
    current = ctx.store.get(memory_id)
    changes: dict[str, Any] = {}
    vector = None
    if text is not None:
        new_text = clean(text)
        if len(new_text) < 3:
            raise BadInput("new text is too short")
        findings = scan(new_text)
        if findings:
            raise BadInput(f"new text looks like it holds a secret ({', '.join(sorted({f.kind for f in findings}))})")
        changes["text"] = new_text
        changes["content_hash"] = content_hash(new_text)
        vector = ctx.embedder.embed([new_text])[0]
    if kind is not None:
        if kind not in KINDS:
            raise BadInput(f"unknown kind {kind!r}; one of {', '.join(KINDS)}")
        changes["kind"] = kind
    new_tags = list(tags) if tags is not None else list(current.tags)
    new_tags = [t for t in dict.fromkeys([*new_tags, *add_tags]) if t not in set(remove_tags)]
    if new_tags != current.tags:
        changes["tags"] = new_tags
    if layer is not None:
        if not 1 <= layer <= 4:
            raise BadInput(f"layer must be 1-4, got {layer}")
        changes["layer"] = layer
    elif kind is not None and kind != current.kind:
        changes["layer"] = layer_for(kind, new_tags, pinned=current.pinned if pinned is None else pinned)
    if pinned is not None:
        changes["pinned"] = pinned
    if meta is not None:
        changes["meta"] = {**current.meta, **meta}
    if not changes:
        return current
    changes["updated_at"] = ctx.now_iso()
    with ctx.store.write():
        ctx.store.update_memory(memory_id, changes, at=changes["updated_at"])
        if vector is not None:
            ctx.store.put_vector(ctx.store.rowid_of(memory_id), current.scope, vector, replace=True)
    return ctx.store.get(memory_id)


def forget(ctx: "Context", prefixes: Sequence[str], *, purge: bool = False) -> list[dict[str, Any]]:
    """Archive (recoverable) or, with ``purge``, delete for good: the row, its vector, edges, entity links and
    changelog payloads, with the bytes overwritten in the file and the WAL (``mem.store.purge``)."""
    ids = resolve(ctx, prefixes)
    at = ctx.now_iso()
    if purge:
        from mem.store.purge import optimize_fts, scrub_wal, secure_deletes

        out = []
        with secure_deletes(ctx.store):
            with ctx.store.write():
                for memory_id in ids:
                    merged_into = ctx.store.delete_memory(memory_id, at=at)
                    # Consolidation's merges are memories of their own: say where its sentences may live on.
                    out.append({"record": "outcome", "id": memory_id, "status": "purged",
                                **({"merged_into": merged_into} if merged_into else {})})
                optimize_fts(ctx.store)
            scrub_wal(ctx.store)
        return out
    with ctx.store.write():
        for memory_id in ids:
            ctx.store.update_memory(memory_id, {"status": "archived", "updated_at": at}, at=at, op="archive")
    return [{"record": "outcome", "id": memory_id, "status": "archived"} for memory_id in ids]
