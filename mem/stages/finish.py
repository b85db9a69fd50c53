"""The finishing pass of a bulk import: the links and assertions eager intake makes right after each
insert, made afterwards in large batches.

Bulk intake (``AddOptions.bulk``: ``mem import``, ``mem add - --bulk``) runs the whole gate and
stores rows, FTS and vectors at once, so search works at once, and records each new memory in
``pending_links`` with the nearest neighbours it found (``mem.store.pending``), in the memory's own
transaction. This pass then runs ``link.after_insert`` and ``supersede.check`` for the pending
memories in rowid order, one transaction per batch that also forgets its rows, so an interrupted
import leaves only whole batches and the rerun (or ``mem consolidate``) goes on where it stopped.

The finished graph is the one eager intake builds: eager linking of rowid r sees only rows < r,
and so does this pass. The neighbours were found before r was stored, the temporal and causal
lookups stop at r (``mem.store.graph.session_members``, ``recent_in_scope``), and the entities,
mentions and assertions of later rows do not exist yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mem.stages import link, supersede
from mem.store import pending

if TYPE_CHECKING:
    import numpy as np

    from mem.records import Memory
    from mem.stages.context import Context
    from mem.store.lifecycle import Arrivals

BATCH = 500  # pending memories finished per transaction (a kill loses at most one batch of work)


@dataclass
class Finished:
    """What linking did to one memory: eager intake's status (``added`` | ``superseded``) and details."""

    status: str
    supersedes: list[str] = field(default_factory=list)
    superseded_by: str | None = None


def waiting(ctx: "Context") -> int:
    """How many memories a bulk import stored whose graph is not finished."""
    return pending.count(ctx.store)


def run(ctx: "Context", *, batch: int = BATCH) -> dict[str, Finished]:
    """Finish every pending memory, lowest rowid first; returns memory id -> what linking did."""
    from mem.store.lifecycle import Arrivals

    out: dict[str, Finished] = {}
    arrivals = Arrivals(ctx.store)
    while True:
        with ctx.store.write():  # read inside the write lock: two finishing passes never take the same rows
            rows = pending.first(ctx.store, batch)
            if rows:
                _finish(ctx, rows, out, arrivals)
                pending.done(ctx.store, [rowid for rowid, _ in rows])
        if len(rows) < batch:
            return out


def _finish(ctx: "Context", rows: list[tuple[int, str | None]], out: dict[str, Finished], arrivals: "Arrivals") -> None:
    import orjson

    from mem.store.lifecycle import highest_mentioned

    store = ctx.store
    memories = store.by_rowids([rowid for rowid, _ in rows])
    later = arrivals.batch([rowid for rowid, _ in rows])
    # rows above a memory the correction check can meet: those with mentions (the batch links its own in order)
    mentioned = highest_mentioned(store)
    found, matrix = store.vectors_for(list(memories))
    vectors = dict(zip(found, matrix))
    history: list[int] = []  # rowids of the batch's memories that came in superseded
    entity_rows: dict[str, list[Any]] = {}  # the entities this transaction upserted (link.after_insert)
    searched = _neighbours(ctx, [(rowid, memories[rowid]) for rowid, stored in rows
                                 if stored is None and rowid in memories and rowid in vectors], vectors)
    for rowid, stored in rows:
        memory = memories.get(rowid)
        if memory is None:
            continue  # purged since
        neighbours = searched.get(rowid) if stored is None else [(int(r), float(sim)) for r, sim in orjson.loads(stored)]
        link.after_insert(ctx, rowid, memory, vectors.get(rowid), entities=link.entities_of(memory),
                          neighbours=neighbours, entity_rows=entity_rows)
        superseded = supersede.check(ctx, rowid, memory, supersede.assertions_of(memory), neighbours=neighbours,
                                     later=later.get(rowid), after=mentioned > rowid)
        status, superseded = supersede.resolve_status(superseded, memory.id)
        out[memory.id] = Finished(status, superseded)
        if status == "superseded":
            history.append(rowid)
    # Who superseded them, read once for the batch: a superseded memory is no rival to a later one,
    # so its superseded_by is the one its own check set.
    for memory in store.by_rowids(history).values():
        out[memory.id].superseded_by = memory.superseded_by


def _neighbours(ctx: "Context", rows: "list[tuple[int, Memory]]", vectors: "dict[int, np.ndarray]"
                ) -> dict[int, list[tuple[int, float]]]:
    """The neighbours eager intake would have found for each row (its vector against every stored
    row below it, in its scope), for the whole batch in one product (``mem.stages.neighbours``)."""
    import numpy as np

    from mem.stages import neighbours
    from mem.stages.add import NEAR_DUPLICATE

    if not rows:
        return {}
    found = neighbours.nearest(ctx.vectors, np.stack([vectors[rowid] for rowid, _ in rows]),
                               [memory.scope for _, memory in rows], neighbours.NEIGHBOURS,
                               min(link.SEE_ALSO_MIN, NEAR_DUPLICATE, supersede.floor(ctx)),
                               before=[rowid for rowid, _ in rows])
    return {rowid: hits for (rowid, _), hits in zip(rows, found)}
