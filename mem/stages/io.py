"""Export and import: JSON Lines that round-trip ids, timestamps, provenance and meta."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from mem.errors import BadInput
from mem.records import Outcome
from mem.stages import add

if TYPE_CHECKING:
    from mem.records import Memory
    from mem.stages.context import Context
    from mem.store import Store


def export(ctx: "Context", *, scope: str | None = None, since: str | None = None,
           include_archived: bool = True) -> Iterator[dict[str, Any]]:
    """Every memory (archived too by default) in creation order, each with the graph edges leaving
    it as ``links``; ``since`` filters on updated_at."""
    statuses = None if include_archived else ("active", "cold")
    last = 0
    while True:  # batches by rowid, so a huge export never holds one long read
        batch = list(ctx.store.select(scope=ctx.scope_filter(scope), statuses=statuses, order="m.rowid",
                                      limit=1000, after_rowid=last))
        if not batch:
            return
        last = batch[-1][0]
        yield from records_of(ctx.store, [m for _, m in batch if since is None or m.updated_at >= since])


def records_of(store: "Store", memories: list["Memory"]) -> list[dict[str, Any]]:
    """Export records of ``memories``: each one's fields, the graph edges leaving it as ``links``, and for a
    superseded one when and why it was superseded as ``supersession`` (``{"at", "reason"}``), so the
    reason ``mem get --explain`` gives travels with it (import, sync)."""
    from mem.store.graph import outgoing
    from mem.store.lifecycle import supersessions

    links = outgoing(store, [m.id for m in memories])
    why = supersessions(store, memories)
    out = []
    for memory in memories:
        record = memory.to_record()
        if memory.id in links:
            record["links"] = [{"to": dst, "layer": layer, "type": kind, "weight": weight, "created_at": at,
                                "origin": origin} for dst, layer, kind, weight, at, origin in links[memory.id]]
        if memory.id in why:
            record["supersession"] = why[memory.id]
        out.append(record)
    return out


def import_records(ctx: "Context", records: Iterable[tuple[int, dict[str, Any]]], *,
                   redact: bool = False, bulk: bool = False) -> Iterator[Outcome]:
    """Import through the intake gate, keeping ids: importing the same file twice adds nothing.
    ``bulk`` defers linking to one finishing pass (``mem.stages.finish``): the same graph, sooner.

    Each record's ``links`` (from ``export``) come back once every memory is stored: edges between
    two memories that exist are restored (manual links and supersessions included), the others
    are dropped.
    """
    from mem.store.graph import restore_edges

    records = list(records)
    edges = [edge for line, raw in records for edge in links_of(raw, ctx.now_iso(), line)]
    reasons = [{**raw, "supersession": told} for line, raw in records if (told := supersession_of(raw, line))]
    stripped = [(line, {k: v for k, v in raw.items() if k not in ("links", "supersession")}) for line, raw in records]
    dangling = _dangling(ctx, stripped)
    for outcome in add.run(ctx, stripped, add.AddOptions(redact=redact, bulk=bulk), keep_ids=True):
        if outcome.line in dangling and outcome.status in ("added", "superseded"):
            outcome.detail["warnings"] = [f"superseded_by {dangling[outcome.line]!r} names no memory in the input "
                                          "or the database: cleared, so the memory stays visible"]
        yield outcome
    if edges or reasons:
        with ctx.store.write():
            restore_edges(ctx.store, edges)
            restore_supersessions(ctx.store, reasons)


def supersession_of(raw: dict[str, Any], line: int | None = None) -> dict[str, Any] | None:
    """A record's exported ``supersession`` (``{"at", "reason"}``), or BadInput naming the line (checked
    before any write); None when it has none."""
    found = raw.get("supersession")
    if found is None:
        return None
    if not isinstance(found, dict) or any(found.get(k) is not None and not isinstance(found[k], str)
                                          for k in ("at", "reason")):
        raise BadInput(f"line {line}: supersession must be an object whose 'at' and 'reason' are strings",
                       line=line)
    return {**found, "at": add.as_time(found.get("at"), "supersession.at", line)}


def restore_supersessions(store: "Store", records: Iterable[dict[str, Any]]) -> None:
    """Inside a write transaction: the changelog of each stored memory that ``records`` (export records)
    say was superseded, by the memory it is superseded by here, gets that supersession's time and reason
    (``mem get --explain``), unless it has them already (importing twice logs once). A memory intake
    superseded otherwise here keeps its own."""
    from mem.store.lifecycle import supersessions

    wanted = {raw["id"].lower(): raw for raw in records
              if isinstance(raw.get("id"), str) and isinstance(raw.get("superseded_by"), str)}
    stored = [m for m in map(store.get, sorted(store.existing_ids(wanted)))
              if m.superseded_by == wanted[m.id]["superseded_by"].lower()]
    logged = supersessions(store, stored)
    for memory in stored:
        told = wanted[memory.id]["supersession"]
        if logged.get(memory.id, {}).get("reason") is None and told.get("reason") is not None:
            store.log(told.get("at") or memory.updated_at, "supersede", memory.id, None,
                      {"superseded_by": memory.superseded_by, "reason": told["reason"]})


def _dangling(ctx: "Context", records: list[tuple[int, dict[str, Any]]]) -> dict[int, str]:
    """Lines whose ``superseded_by`` names no memory of the input or the store; cleared in ``records``.

    A reference to nothing would hide the memory from search for good, with nothing to show why.
    """
    refs = {raw["superseded_by"] for _, raw in records if isinstance(raw.get("superseded_by"), str)}
    if not refs:
        return {}
    known = {raw["id"].lower() for _, raw in records if isinstance(raw.get("id"), str)}
    known |= ctx.store.existing_ids(r.lower() for r in refs if r.lower() not in known)
    dangling = {}
    for line, raw in records:
        ref = raw.get("superseded_by")
        if isinstance(ref, str) and ref.lower() not in known:
            dangling[line] = ref
            raw["superseded_by"] = None
    return dangling


def links_of(raw: dict[str, Any], now: str, line: int | None = None) -> list[tuple[str, str, str, str, float, str, str]]:
    """The exported edges of one record as rows, or BadInput naming the line (checked before any write)."""
    links = raw.get("links")
    if links is None:
        return []
    src = raw.get("id")
    if not isinstance(src, str) or not isinstance(links, list):
        raise BadInput(f"line {line}: links must be a list of objects on a record with an id", line=line)
    rows = []
    for link in links:
        if not isinstance(link, dict) or not all(isinstance(link.get(k), str) and link[k] for k in ("to", "type")):
            raise BadInput(f"line {line}: each link needs non-empty strings 'to' and 'type'", line=line)
        weight = link.get("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)):
            raise BadInput(f"line {line}: a link's weight must be a number, got {weight!r}", line=line)
        if any(link.get(k) is not None and not isinstance(link[k], str) for k in ("layer", "created_at", "origin")):
            raise BadInput(f"line {line}: a link's layer, created_at and origin must be strings", line=line)
        rows.append((src.lower(), link["to"].lower(), link.get("layer") or "manual", link["type"], float(weight),
                     link.get("created_at") or now, link.get("origin") or "import"))
    return rows


def reindex(ctx: "Context", embedder_name: str, *, batch: int = 256) -> dict[str, Any]:
    """Re-embed every memory with ``embedder_name`` and bind the database to it."""
    from mem.embed import get_embedder

    embedder = get_embedder(embedder_name, ollama_host=ctx.settings.ollama_host)
    rows = [(rowid, m.text, m.scope) for rowid, m in ctx.store.select(scope=None, statuses=None, order="m.rowid")]
    from mem.stages.rescore import embed_for_store

    embedded = [embed_for_store(embedder, [t for _, t, _ in rows[i : i + batch]]) for i in range(0, len(rows), batch)]
    with ctx.store.write():
        ctx.store.rebind_embedder(embedder_name, embedder.id, embedder.dim)
        for start, (chunk, tokens) in zip(range(0, len(rows), batch), embedded):
            ctx.store.put_vectors([(rowid, scope, vector) for (rowid, _, scope), vector in zip(rows[start : start + batch], chunk)],
                                  tokens=tokens)
        ctx.store.log(ctx.now_iso(), "reindex", None, None, {"embedder": embedder.id, "count": len(rows)})
    ctx.use_embedder(embedder)
    return {"record": "reindex", "embedder": embedder_name, "id": embedder.id, "dim": embedder.dim, "memories": len(rows)}
