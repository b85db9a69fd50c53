"""Reading and changing single memories: get, list, update, forget (archive or purge)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from mem.errors import BadInput
from mem.records import Memory
from mem.text import content_hash

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
    from mem import vocab

    vocab.check_all("kind", kinds)
    if status is not None:
        vocab.check("status", status)
    statuses = None if status == "all" else ((status,) if status else ("active", "cold"))
    for _, memory in ctx.store.select(scope=ctx.scope_filter(scope), kinds=kinds, tags=tags, statuses=statuses,
                                      include_superseded=include_superseded, since=since, until=until, limit=limit):
        yield memory


def update(ctx: "Context", prefix: str, *, text: str | None = None, kind: str | None = None,
           tags: Sequence[str] | None = None, add_tags: Sequence[str] = (), remove_tags: Sequence[str] = (),
           layer: int | None = None, pinned: bool | None = None, meta: dict[str, Any] | None = None,
           redact: bool = False, valid_until: str | None = None, event_at: str | None = None) -> Memory:
    """Change a memory in place through the same gate as add (``mem.gate.admit``): types, limits and
    a secret scan of every field set, the merged meta included; a new text is re-embedded. ``valid_until``
    and ``event_at``: a new end, a new time it happened (ISO-8601; "none" or "" clears it); without one, a
    new text's end (``mem.enrich.bounds``) and date (``mem.enrich.dates``) are read again, unless the
    memory's was given rather than read from its old text."""
    from mem import gate, vocab
    from mem.enrich.classify import layer_for
    from mem.enrich.structure import structure_of

    if kind is not None:  # bad values first: the same answer whether or not the id exists
        vocab.check("kind", kind)
    if layer is not None:
        vocab.check("layer", layer)
    memory_id = ctx.store.resolve_id(prefix)
    current = ctx.store.get(memory_id)
    for name, value in (("tags", tags), ("add_tags", add_tags), ("remove_tags", remove_tags)):
        if value is not None and (isinstance(value, str) or not all(isinstance(t, str) for t in value)):
            raise BadInput(f"{name} must be a list of strings")
    new_tags = list(tags) if tags is not None else list(current.tags)
    new_tags = [t for t in dict.fromkeys([*new_tags, *add_tags]) if t not in set(remove_tags)]
    if meta is not None and not isinstance(meta, dict):
        raise BadInput("meta must be a JSON object")
    fields = {"text": text, "kind": kind, "layer": layer, "pinned": pinned,
              "tags": new_tags if new_tags != current.tags else None,
              "meta": {**current.meta, **meta} if meta is not None else None}
    admitted = gate.admit(fields, redact=redact)
    if admitted.rejected:
        raise BadInput(f"not updated: {admitted.rejected}")
    changes: dict[str, Any] = dict(admitted.fields)
    end, when = _times(current, changes.get("text"), changes.get("kind"), valid_until, event_at)
    if end != current.valid_until:
        changes["valid_until"] = end
    if when != current.event_at:
        changes["event_at"] = when
    if "text" in changes or "event_at" in changes:  # a dated memory is a timeline's (``structure_of``)
        structure = structure_of(changes.get("text", current.text), dated=when is not None)
        if structure != current.structure:
            changes["structure"] = structure
    vector = tokens = None
    if "text" in changes:
        changes["content_hash"] = content_hash(changes["text"])
        from mem.stages.rescore import embed_for_store

        vectors, states = embed_for_store(ctx.embedder, [changes["text"]])
        vector, tokens = vectors[0], states[0] if states else None
    if "layer" not in changes and "kind" in changes and changes["kind"] != current.kind:
        changes["layer"] = layer_for(changes["kind"], new_tags, pinned=current.pinned if pinned is None else pinned)
    if not changes:
        return current
    changes["updated_at"] = ctx.now_iso()
    with ctx.store.write():
        ctx.store.update_memory(memory_id, changes, at=changes["updated_at"])
        if "valid_until" in changes:  # for a while now, or for good: what it replaced or suspended follows
            from mem.stages.supersede import rebound

            rebound(ctx, ctx.store.get(memory_id), current.valid_until)
        if vector is not None:
            ctx.store.put_vector(ctx.store.rowid_of(memory_id), current.scope, vector, replace=True, tokens=tokens)
    return ctx.store.get(memory_id)


def _times(current: Memory, text: str | None, kind: str | None, end_given: str | None,
           event_given: str | None) -> tuple[str | None, str | None]:
    """The ``valid_until`` and ``event_at`` a memory has after an update. Each is the one given ("none" or
    "": none), else what its new text names when the old one was read from its old text (or it had none),
    else the one it has: a time given by hand stays whatever the text says."""
    from mem.enrich.timestamps import format_datetime, parse_datetime
    from mem.stages.add import as_time, end_named, event_named

    written = parse_datetime(current.created_at)

    def read(of_text: str, of_kind: str) -> tuple[str | None, str | None]:
        found = end_named(of_text, of_kind, written)
        return (format_datetime(found.at) if found else None), event_named(of_text, written, found)

    def given(value: str, name: str) -> str | None:
        return None if value.strip().lower() in ("", "none") else as_time(value, name, None)

    held = current.valid_until, current.event_at
    if text is None and kind is None:
        end, when = held
    else:  # each time as read from the old text is replaced by the new text's; one given by hand stays
        from_old = read(current.text, current.kind)
        from_new = read(current.text if text is None else text, current.kind if kind is None else kind)
        end, when = (mine if mine is not None and mine != old else new for mine, old, new in zip(held, from_old, from_new))
    return (given(end_given, "valid_until") if end_given is not None else end,
            given(event_given, "event_at") if event_given is not None else when)


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
                    merged_into, restored = ctx.store.delete_memory(memory_id, at=at)
                    # Consolidation's merges are memories of their own: say where its sentences may live on;
                    # and which memories it had superseded are live again, nothing left to replace them.
                    out.append({"record": "outcome", "id": memory_id, "status": "purged",
                                **({"merged_into": merged_into} if merged_into else {}),
                                **({"restored": restored} if restored else {})})
                optimize_fts(ctx.store)
            scrub_wal(ctx.store)
        return out
    from mem.store.lifecycle import superseded_now

    with ctx.store.write():
        for memory_id in ids:
            ctx.store.update_memory(memory_id, {"status": "archived", "updated_at": at}, at=at, op="archive")
    # an archived correction still hides what it superseded (archiving is undone by a restore, which must find
    # the supersession in place); the outcome names those, so a person who archived a wrong correction knows
    # to unlink it ('mem graph unlink NEW OLD --type supersedes')
    hidden = superseded_now(ctx.store, ids)
    return [{"record": "outcome", "id": memory_id, "status": "archived",
             **({"supersedes": hidden[memory_id]} if memory_id in hidden else {})} for memory_id in ids]
