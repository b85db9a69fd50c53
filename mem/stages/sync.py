"""``mem sync OTHER``: exchange what changed since the last sync between two stores (any backends).

Each direction reads the source's changelog after the sequence number the destination last
applied (kept in the destination's ``meta`` as ``sync_seen:<source id>``), in batches, and brings
each changed memory over whole, as an export record with its links:

- a memory the destination lacks goes in through import (the intake path: a correction that
  arrives this way supersedes what it corrects, exactly as when added here);
- a memory the destination has and did not change since the previous sync takes the source's
  version (a new text is re-embedded with the destination's embedder; a supersession keeps the time
  and reason the source recorded, for ``mem get --explain``);
- a memory changed on both sides keeps the newer version (``updated_at``; ties: the larger store
  id) and records the other in a ``conflict`` changelog row that ``mem verify`` reports until the
  memory is changed again here;
- a memory purged at the source is purged here; a link removed there (``mem graph unlink``) is
  removed here, unless the source has it again; a memory moved to another scope there
  (``mem scope move``, rename, merge) moves here, with its vector index entry.

Progress is committed after every batch, and applying a batch twice changes nothing (ids are
kept, equal versions are skipped, changes a sync brought in are marked ``sync_from`` and never
count as local edits or travel back), so an interrupted sync resumes where it stopped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mem.errors import BadInput

if TYPE_CHECKING:
    from mem.stages.context import Context

BATCH = 200  # changelog rows per step: the unit of progress an interrupted sync keeps
# Fields a sync carries onto a memory the destination already has (its identity and provenance stay).
SYNCED = ("text", "kind", "tags", "meta", "layer", "pinned", "confidence", "verification", "importance", "status",
          "superseded_by", "event_at", "valid_until", "content_hash", "source_hash", "updated_at")


def run(here: "Context", there: "Context") -> dict[str, Any]:
    """Pull ``there``'s changes into ``here``, then push ``here``'s into ``there``; counts per direction.

    >>> # run(ctx_laptop, ctx_team)  ->  {"record": "sync", "pulled": {...}, "pushed": {...}}
    """
    from mem.store.agent_sync import last_seq
    from mem.store.sync import store_id

    here_id, there_id = store_id(here.store), store_id(there.store)
    if here_id == there_id:
        raise BadInput("OTHER is this same database (or a copy of its file): give another store")
    pulled = _direction(there, here, there_id, here_id)
    pushed = _direction(here, there, here_id, there_id)
    for ctx, peer in ((here, there_id), (there, here_id)):
        with ctx.store.write():  # what "changed here since the last sync" is measured from next time
            ctx.store.set_meta(f"sync_base:{peer}", str(last_seq(ctx.store)))
    return {"record": "sync", "here": here_id, "other": there_id, "pulled": pulled, "pushed": pushed}


def _direction(src: "Context", dst: "Context", src_id: str, dst_id: str) -> dict[str, int]:
    from mem.store.sync import changes_after

    seen_key = f"sync_seen:{src_id}"
    after = int(dst.store.get_meta(seen_key) or 0)
    base = int(dst.store.get_meta(f"sync_base:{src_id}") or 0)
    counts = {"added": 0, "updated": 0, "conflicts": 0, "purged": 0, "linked": 0, "unlinked": 0,
              "unchanged": 0}
    dst.store.sync_origin = src_id
    try:
        while True:
            rows = changes_after(src.store, after, BATCH)
            if not rows:
                break
            # Changes that came from dst in an earlier sync are dst's own: they do not travel back.
            ids = list(dict.fromkeys(r.memory_id for r in rows if r.memory_id and r.sync_from != dst_id))
            purged = {r.memory_id for r in rows if r.op == "purge"}
            linked = {r.memory_id for r in rows if r.op == "link" and r.sync_from != dst_id}
            _apply(src, dst, ids, purged, linked, base, src_id, dst_id, counts)
            _unlink(src, dst, [r for r in rows if r.op == "unlink" and r.sync_from != dst_id], counts)
            after = rows[-1].seq
            with dst.store.write():
                dst.store.set_meta(seen_key, str(after))
    finally:
        dst.store.sync_origin = None
    return counts


def _apply(src: "Context", dst: "Context", ids: list[str], purged: set[str], linked: set[str], base: int,
           src_id: str, dst_id: str, counts: dict[str, int]) -> None:
    from mem.stages import io, memories
    from mem.stages.io import links_of
    from mem.store.graph import restore_edges
    from mem.store.sync import changed_here_since

    present = src.store.existing_ids(ids)
    records = {r["id"]: r for r in io.records_of(src.store, [src.store.get(i) for i in ids if i in present])}
    gone = [i for i in ids if i not in present and i in purged and dst.store.exists(i)]
    if gone:
        memories.forget(dst, gone, purge=True)
        counts["purged"] += len(gone)
    have = dst.store.existing_ids(records)
    new = [(n, records[i]) for n, i in enumerate(ids, 1) if i in records and i not in have]
    if new:
        for outcome in io.import_records(dst, new):
            counts["added" if outcome.status in ("added", "superseded") else "unchanged"] += 1
    for memory_id in (i for i in ids if i in records and i in have):
        theirs = records[memory_id]
        ours = dst.store.get(memory_id).to_record()
        if all(theirs.get(k) == ours.get(k) for k in SYNCED) and theirs["scope"] == ours["scope"]:
            if memory_id in linked:  # only a new link (mem graph link): it comes over
                with dst.store.write():
                    restore_edges(dst.store, links_of(theirs, dst.now_iso()))
                counts["linked"] += 1
            else:
                counts["unchanged"] += 1
            continue
        if not changed_here_since(dst.store, memory_id, base):
            _overwrite(dst, theirs, ours)
            counts["updated"] += 1
            continue
        counts["conflicts"] += 1
        _settle(src, dst, src_id, dst_id, theirs, ours)


def _settle(src: "Context", dst: "Context", src_id: str, dst_id: str, theirs: dict[str, Any],
            ours: dict[str, Any]) -> None:
    """A memory changed on both sides: both stores take the newer version at once (so the other
    direction finds nothing left to do) and both record the version not kept, for 'mem verify'."""
    theirs_newer = (theirs["updated_at"], src_id) > (ours["updated_at"], dst_id)
    kept, lost = (theirs, ours) if theirs_newer else (ours, theirs)
    for ctx, origin, current in ((dst, src_id, ours), (src, dst_id, theirs)):
        previous, ctx.store.sync_origin = ctx.store.sync_origin, origin
        try:
            if current is lost:
                _overwrite(ctx, kept, current)
            with ctx.store.write():
                ctx.store.log(dst.now_iso(), "conflict", kept["id"], None,
                              {"kept": "here" if current is kept else "other", "other": lost})
        finally:
            ctx.store.sync_origin = previous


def _unlink(src: "Context", dst: "Context", removed: list[Any], counts: dict[str, int]) -> None:
    """Links removed at the source (changelog ``unlink`` rows): gone here too, unless the source has
    linked them again since; each removal here is logged (marked as synced, so it does not travel back)."""
    from mem.store.graph import delete_edge, get_edge

    for change in removed:
        edge = (change.memory_id, change.link_to, change.link_type)
        if None in edge or get_edge(src.store, *edge) is not None:
            continue
        with dst.store.write():
            if delete_edge(dst.store, *edge):
                dst.store.log(dst.now_iso(), "unlink", change.memory_id, None,
                              {"dst": change.link_to, "type": change.link_type})
                counts["unlinked"] += 1


def _overwrite(dst: "Context", theirs: dict[str, Any], ours: dict[str, Any]) -> None:
    """Give the destination's copy the source's version of the synced fields, its scope and its links."""
    from mem.stages.io import links_of, restore_supersessions
    from mem.store.graph import restore_edges
    from mem.store.scopes import move_memories

    changes = {k: theirs.get(k) for k in SYNCED if theirs.get(k) != ours.get(k)}
    vector = tokens = None
    if "text" in changes:  # re-embedded here, with this database's embedder
        from mem.stages.rescore import embed_for_store

        vectors, states = embed_for_store(dst.embedder, [theirs["text"]])
        vector, tokens = vectors[0], states[0] if states else None
    store = dst.store
    with store.write():
        rowid = store.rowid_of(theirs["id"])
        if theirs["scope"] != ours["scope"]:
            move_memories(store, [rowid], theirs["scope"], at=theirs["updated_at"])
        if changes:
            store.update_memory(theirs["id"], changes, at=theirs["updated_at"], op="sync")
            if changes.get("superseded_by") and theirs.get("supersession"):  # why, as the source told it
                restore_supersessions(store, [theirs])
        if vector is not None:
            store.put_vector(rowid, theirs["scope"], vector, replace=True, tokens=tokens)
        restore_edges(store, links_of(theirs, dst.now_iso()))
