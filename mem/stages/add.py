"""Intake: the one path every write takes (add, import, MCP add, consolidation merges).

validate -> secret scan -> exact duplicate -> embed -> near duplicate -> enrich -> store -> link.
The whole batch is validated before anything is written; writes go in short transactions of
``CHUNK`` records so a concurrent writer never waits long. A bulk intake (``AddOptions.bulk``)
runs the same gate and writes (in chunks of ``BULK_CHUNK``), and defers linking and assertions
to one finishing pass at the end (``mem.stages.finish``), which builds the same graph.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from mem import gate, ids
from mem.enrich import bounds, dates, structure, timestamps  # per record: an import in the function costs ~4-8k instructions
from mem.enrich.classify import guess_kind, layer_for
from mem.errors import BadInput
from mem.records import Memory, Outcome
from mem.runtime import interrupts_held
from mem.stages import link, supersede
from mem.stages.neighbours import NEIGHBOURS
from mem.text import content_hash

if TYPE_CHECKING:
    from datetime import datetime

    import numpy as np

    from mem.enrich.entities import Entity
    from mem.stages.context import Context

NEAR_DUPLICATE = 0.95
CHUNK = 256  # records per write transaction: a concurrent writer waits for at most one chunk's SQL
# Bulk intake commits larger chunks: each index page a chunk touches is written once for more rows,
# and there are fewer per-chunk lookups and commits (bench/README.md, "Bulk import").
BULK_CHUNK = 2048
# A batch's first and last chunks are this small, and the ones between them grow and shrink by at most
# twice (``chunk_bounds``): a batch's chunks are prepared (embedded) one ahead of the writes, so the
# first is prepared with the writer idle and the last written with the model idle; a full chunk at
# either end kept the other side waiting (at the start ~0.1-0.36 s for 10k hash texts into 100k).
FIRST_CHUNK = 256
PRODUCT_BLOCK = 256  # drafts whose products with the chunk's earlier drafts are made together (_Chunk._products)
# From this many drafts a chunk indexes its text in batches (``Store.bulk_writes``): that costs a few
# statements a chunk, so a single add keeps the per-row trigger.
BATCHED_WRITES = 8

# Input keys that map onto columns; anything else a record carries is kept in ``meta``.
_COLUMNS = ("text", "kind", "tags", "source", "source_line", "author", "pinned", "layer", "confidence")
_KNOWN = {*_COLUMNS, "scope", "meta", "created_at", "event_at", "valid_until"}
# What an export carries beyond the input columns, kept by import (``keep_ids``).
_EXPORTED = ("access_count", "importance", "surprise", "status", "verification", "superseded_by", "source_hash")
# Keys of records that other stages print (a hit, an outcome): never worth keeping in meta.
_PIPELINE_KEYS = {"record", "id", "status", "score", "rank", "why", "line", "reason", "query_line", "links",
                  "content_hash", "updated_at", "access_count", "last_accessed_at", "importance",
                  "surprise", "verification", "superseded_by", "source_hash", "structure", "supersession"}


@dataclass
class AddOptions:
    redact: bool = False
    keep_near: bool = False
    near_threshold: float = NEAR_DUPLICATE
    defaults: dict[str, Any] = field(default_factory=dict)  # flag values applied where a record has none
    extract: str | None = None  # "ollama": a local model names the entities (heuristics on any failure)
    bulk: bool = False  # link and index assertions in one pass at the end (mem.stages.finish), not per memory


@dataclass
class Draft:
    """A validated input record, not yet checked against the store."""

    line: int | None
    memory: Memory
    explicit_kind: bool
    explicit_layer: bool
    rejected: str | None = None
    redacted: list[str] = field(default_factory=list)
    restored: bool = False  # an exported record coming back: keep its fields, skip near-duplicate
    entities: "list[Entity] | None" = None  # from the model (options.extract) or link.prepare
    vector: "np.ndarray | None" = None  # the embedding, computed before the write transaction
    tokens: tuple[str, bytes] | None = None  # its compact token states (mem.store.token_states), with the vector
    assertions: list[Any] = field(default_factory=list)  # supersede.assertions_of, before the transaction


def _fail(line: int | None, message: str) -> BadInput:
    where = f"line {line}: " if line is not None else ""
    return BadInput(f"{where}{message}", line=line) if line is not None else BadInput(message)


def as_time(value: Any, name: str, line: int | None) -> str | None:
    """``value`` as a stored date-time (ISO-8601 UTC), None for None, or BadInput naming the field and the line."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise _fail(line, f"{name} must be an ISO-8601 string, got {type(value).__name__}")
    try:
        return timestamps.format_datetime(timestamps.parse_datetime(value))
    except ValueError:
        raise _fail(line, f"{name} {value!r} is not a date-time (use ISO-8601, e.g. 2026-11-30T12:00:00Z)") from None


def validate(raw: dict[str, Any], line: int | None, ctx: "Context", options: AddOptions,
             *, keep_ids: bool = False) -> Draft:
    """Turn one input object into a Draft through the gate (``mem.gate.admit``), or raise BadInput
    naming the line and the field."""
    record = {**options.defaults, **{k: v for k, v in raw.items() if v is not None}}
    if record.get("text") is None:
        raise _fail(line, "missing required field 'text'")
    extra = {k: v for k, v in raw.items() if k not in _KNOWN and k not in _PIPELINE_KEYS}
    meta = record.get("meta", {})
    if extra and isinstance(meta, dict):
        meta = {**extra, **meta}  # unknown keys are kept in meta, and so pass the same scan
    fields = {name: record.get(name) for name in _COLUMNS}
    fields["meta"] = meta
    fields["scope"] = record.get("scope") or ctx.settings.scope
    if keep_ids:
        fields.update({name: raw.get(name) for name in _EXPORTED})
    admitted = gate.admit(fields, line=line, redact=options.redact)
    checked = admitted.fields
    now = ctx.now_iso()
    memory = Memory(
        id="",
        text=checked["text"],
        kind=checked.get("kind", "fact"),
        scope=checked["scope"],
        tags=checked.get("tags", []),
        meta=checked.get("meta", {}),
        source=checked.get("source"),
        source_line=checked.get("source_line"),
        author=checked.get("author"),
        created_at=as_time(record.get("created_at"), "created_at", line) or now,
        event_at=as_time(record.get("event_at"), "event_at", line),
        valid_until=as_time(record.get("valid_until"), "valid_until", line),
        updated_at=now,
        layer=checked.get("layer", 3),
        pinned=checked.get("pinned", False),
        confidence=checked.get("confidence", 1.0),
    )
    draft = Draft(line=line, memory=memory, explicit_kind="kind" in checked, explicit_layer="layer" in checked,
                  rejected=admitted.rejected, redacted=admitted.redacted)
    if keep_ids:
        _restore_exported(draft, raw, checked, line)
    return draft


def _restore_exported(draft: Draft, raw: dict[str, Any], checked: dict[str, Any], line: int | None) -> None:
    """Import keeps what an export wrote: id, timestamps, counters and lifecycle state, verbatim."""
    memory = draft.memory
    memory_id = raw.get("id")
    if memory_id is not None:
        if not isinstance(memory_id, str) or not ids.looks_like_prefix(memory_id) or len(memory_id) != 36:
            raise _fail(line, f"id {memory_id!r} is not a memory id (a UUID)")
        memory.id = memory_id.lower()
    for name in ("updated_at", "last_accessed_at"):
        value = as_time(raw.get(name), name, line)
        if value:
            setattr(memory, name, value)
    for name in _EXPORTED:
        if name in checked:
            setattr(memory, name, checked[name])
    # Exported records already carry their enrichment; re-deriving would not round-trip.
    draft.explicit_kind = draft.explicit_layer = True
    draft.restored = True


# Kinds that record what happened rather than what holds: "we froze deploys until Friday" told as an episode
# stays true of that week, so intake reads no end (``valid_until``) from its words
HAPPENED = frozenset({"episode"})


def end_named(text: str, kind: str, written: "datetime") -> "bounds.End | None":
    """The end a memory's text names (``mem.enrich.bounds``), none for a kind that records what happened."""
    return None if kind in HAPPENED else bounds.end_of(text, written)


def event_named(text: str, written: "datetime", end: "bounds.End | None") -> str | None:
    """When a memory's text says it happened (``dates.event_at``, ISO-8601), the date of the ``end`` it names
    left out: "back to one on Jan 6" happened when it was said."""
    when = dates.event_at(text, written, skip=end[1:] if end else None)
    return timestamps.format_datetime(when) if when else None


def _enrich(draft: Draft, ctx: "Context") -> None:
    memory = draft.memory
    if not draft.explicit_kind:
        memory.kind = guess_kind(memory.text, memory.tags)
    if not draft.explicit_layer:
        memory.layer = layer_for(memory.kind, memory.tags, pinned=memory.pinned)
    written = timestamps.parse_datetime(memory.created_at)
    # the end a statement names is not when it happened: "back to one on Jan 6" happened when it was said
    end = None if draft.restored else end_named(memory.text, memory.kind, written)
    if memory.valid_until is None and end is not None:
        memory.valid_until = timestamps.format_datetime(end.at)
    if memory.event_at is None and not draft.restored:
        memory.event_at = event_named(memory.text, written, end)
    if memory.source and not memory.source_hash:
        memory.source_hash = file_sha256(memory.source)
    memory.content_hash = content_hash(memory.text)
    memory.structure = structure.structure_of(memory.text, dated=memory.event_at is not None)


def file_sha256(path: str) -> str | None:
    """sha256 of a source file at capture time, or None when it is not a regular file, is too large or
    does not read in time (a FIFO or ``/dev/zero`` never hangs the write: ``mem.sources``)."""
    from pathlib import Path

    from mem.sources import sha256_of

    return sha256_of(Path(path).expanduser())


def run(ctx: "Context", records: Iterable[tuple[int | None, dict[str, Any]]], options: AddOptions | None = None,
        *, keep_ids: bool = False) -> Iterator[Outcome]:
    """Validate every record, then store them chunk by chunk; one Outcome per input, in order.

    ``keep_ids`` (import) keeps each record's ``id`` and timestamps, and an id already stored is
    a duplicate: that is what makes import idempotent.
    """
    options = options or AddOptions()
    if options.extract not in (None, "ollama"):
        raise BadInput(f"unknown extractor {options.extract!r}; the only one is 'ollama'")
    if options.bulk and options.extract:
        raise BadInput("--bulk does not combine with --extract: the finishing pass uses the heuristic entities")
    records = list(records)
    size = _chunk_size(options)
    if len(records) > size:
        from mem.stages import intake_worker  # only a batch of several chunks pays its imports (~16 ms)

        if intake_worker.pays(ctx, len(records), options):
            # the text-only work in a second process, beside this one's writes
            with intake_worker.Worker(ctx, records, options, keep_ids=keep_ids, size=size) as worker:
                yield from _stored(ctx, worker.prepared(), options)
            return
    drafts = [validate(raw, line, ctx, options, keep_ids=keep_ids) for line, raw in records]
    yield from _stored(ctx, _prepared(ctx, drafts, options), options)


def _stored(ctx: "Context", chunks: Iterable[list[Draft]], options: AddOptions, *,
            finishing: bool = True) -> Iterator[Outcome]:
    """Write each prepared chunk, yielding its outcomes once it is committed. A bulk intake then
    (``finishing``) finishes the graph (this run's memories and any an interrupted run left) and updates the
    outcomes already yielded in place to what eager intake reports (``superseded`` included), so a
    caller that collects them (the CLI) prints those."""
    finishing = finishing and options.bulk
    written: list[tuple[Draft, Outcome]] = []
    for chunk in chunks:
        with interrupts_held():  # a committed chunk is always reported (see interrupts_held)
            for draft, outcome in zip(chunk, _write(ctx, chunk, options)):
                if finishing:
                    written.append((draft, outcome))
                yield outcome
    if not finishing:
        return
    from mem.stages import finish

    finished = finish.run(ctx)
    for draft, outcome in written:
        done = finished.get(outcome.id) if outcome.status == "added" else None
        if done is not None:
            outcome.status = done.status
            # merged, not replaced: a caller may have added to the detail meanwhile (import's warnings)
            outcome.detail = {**outcome.detail, **_detail(draft, done.superseded_by, done.supersedes)}


def store_drafts(ctx: "Context", drafts: Sequence[Draft], options: AddOptions) -> Iterator[Outcome]:
    """The rest of ``run`` for drafts already validated (with their own defaults): the MCP server's
    group commit validates each call alone, then stores several calls' drafts together. A bulk
    intake's graph is left to the finishing pass (``mem.stages.finish.run``)."""
    yield from _stored(ctx, _prepared(ctx, drafts, options), options, finishing=False)


def _chunk_size(options: AddOptions) -> int:
    """Records per write transaction: ``BULK_CHUNK`` for a bulk intake, else ``CHUNK``."""
    return BULK_CHUNK if options.bulk else CHUNK


def chunk_bounds(count: int, size: int) -> list[tuple[int, int]]:
    """``[start, end)`` of each write chunk of a bulk batch of ``count``: ``FIRST_CHUNK`` at both ends,
    doubling towards ``size`` from each end (taken in turn from the front and the back), any
    remainder in the middle.

    >>> [end - start for start, end in chunk_bounds(3000, 2048)]
    [256, 512, 1024, 440, 512, 256]
    >>> [end - start for start, end in chunk_bounds(10000, 2048)]
    [256, 512, 1024, 2048, 2048, 272, 2048, 1024, 512, 256]
    >>> [end - start for start, end in chunk_bounds(600, 256)], chunk_bounds(0, 2048)
    ([256, 88, 256], [])
    """
    steps, taken = [min(FIRST_CHUNK, size)] * 2, ([], [])  # the front's and the back's
    left, side = count, 0
    while left > 0:
        take = min(steps[side], left)
        taken[side].append(take)
        left -= take
        steps[side] = min(size, 2 * steps[side])
        side ^= 1
    bounds, start = [], 0
    for length in taken[0] + taken[1][::-1]:
        bounds.append((start, start + length))
        start += length
    return bounds


def _prepared(ctx: "Context", drafts: Sequence[Draft], options: AddOptions) -> Iterator[list[Draft]]:
    """``drafts`` in write chunks (a bulk intake's ramp at both ends: ``chunk_bounds``), each prepared
    (``_prepare``) before it is handed out."""
    size = _chunk_size(options)
    bounds = chunk_bounds(len(drafts), size) if options.bulk else \
        [(start, min(start + size, len(drafts))) for start in range(0, len(drafts), size)]
    chunks = [list(drafts[start:end]) for start, end in bounds]
    if len(chunks) <= 1:
        for chunk in chunks:
            _prepare(ctx, chunk, options)
            yield chunk
        return
    # A batch prepares (embeds) the next chunk in a second thread while this one is written:
    # onnxruntime releases the GIL, so the model and the SQL share the two cores.
    from concurrent.futures import ThreadPoolExecutor
    from contextlib import nullcontext

    ctx.embedder  # load the model here, once, not racing in the worker
    # A bulk intake's commits leave their WAL checkpoints to a thread, as with the intake worker
    # (``Store.checkpoints_aside``): COMMIT 17 -> 10 us a memory on the writing thread (3,000 minilm).
    aside = ctx.store.checkpoints_aside() if options.bulk else nullcontext()
    cache = ctx.store.bulk_cache() if options.bulk else nullcontext()  # its chunks' pages stay in memory
    with aside, cache, ThreadPoolExecutor(max_workers=1, thread_name_prefix="mem-intake") as pool:
        ahead = pool.submit(_prepare, ctx, chunks[0], options)
        for index, chunk in enumerate(chunks):
            ahead.result()  # re-raises what preparing failed with (an embedder that went away: exit 6)
            if index + 1 < len(chunks):
                ahead = pool.submit(_prepare, ctx, chunks[index + 1], options)
            yield chunk


def _prepare(ctx: "Context", drafts: Sequence[Draft], options: AddOptions) -> None:
    """Everything that needs only the text: enrichment, embedding, entities, assertions.

    Runs before the write lock is taken, so a concurrent writer waits for the SQL of ``_write``,
    never for a model.
    """
    for draft in drafts:
        if draft.rejected is None:
            _enrich(draft, ctx)
    live = [d for d in drafts if d.rejected is None]
    if live:
        from mem.stages.rescore import embed_for_store

        vectors, tokens = embed_for_store(ctx.embedder, [d.memory.text for d in live])
        for i, (draft, vector) in enumerate(zip(live, vectors)):
            draft.vector = vector
            draft.tokens = tokens[i] if tokens else None
    if options.bulk:
        return  # entities and assertions come in the finishing pass (mem.stages.finish)
    if options.extract == "ollama":
        _extract_entities(ctx, live)
    for draft in live:
        if draft.entities is None:
            draft.entities = link.entities_of(draft.memory)
        draft.assertions = supersede.assertions_of(draft.memory)


def _write(ctx: "Context", drafts: Sequence[Draft], options: AddOptions) -> Iterator[Outcome]:
    """Check each prepared draft against the store and store it: one short write transaction per chunk.
    A bulk chunk, or an eager one of ``BATCHED_WRITES`` drafts or more, indexes its text (in one
    statement, and before each full-text lookup) and logs in one statement each (``Store.bulk_writes``)."""
    from contextlib import nullcontext

    store = ctx.store
    batched = options.bulk or len(drafts) >= BATCHED_WRITES
    # a bulk chunk reads back only what Store.bulk_writes(ahead=True) writes first: its rows go in together
    with store.write(), (store.bulk_writes(ahead=options.bulk) if batched else nullcontext()):
        chunk = _Chunk(ctx, drafts, options)
        outcomes = [_store_one(ctx, draft, chunk, options) for draft in drafts]
        chunk.finish()
    yield from outcomes


def _extract_entities(ctx: "Context", drafts: Sequence[Draft]) -> None:
    """Ask the model for each draft's entities before the write lock is taken (a model call can take seconds)."""
    from mem.enrich.llm_extract import extract

    for draft in drafts:
        draft.entities = extract(draft.memory.text, model=ctx.settings.llm, host=ctx.settings.ollama_host)[0]


class _Chunk:
    """What one chunk's drafts are checked against, looked up once per chunk inside its write transaction.

    Stored ids and content hashes, and every draft's nearest stored neighbours
    (``mem.stages.neighbours``: one exact matrix product for the chunk); drafts stored earlier in
    the same chunk count too (``stored``), exactly as if each draft had been written on its own. A
    one-shot add (a cold index, a handful of drafts) asks ``VectorIndex.nearest_many`` instead,
    which reads the int8 index rather than loading every vector.

    A bulk intake on a warm index looks only for near duplicates here (the drafts that are checked
    for them, at ``near_threshold``): the see_also neighbours are found by the finishing pass,
    with the same search bounded to the rowids below each memory (``mem.stages.finish``).
    """

    def __init__(self, ctx: "Context", drafts: Sequence[Draft], options: AddOptions) -> None:
        import numpy as np

        from mem.stages import neighbours
        from mem.store.graph import ids_of
        from mem.store.lifecycle import RivalRows
        from mem.store.vectors import WARM_AFTER

        store = ctx.store
        live = [d for d in drafts if d.rejected is None]
        self.ctx = ctx
        self.taken_ids = store.content_hashes([d.memory.id for d in live if d.memory.id])  # id -> its text's hash
        self.by_hash = store.ids_by_hash({(d.memory.scope, d.memory.content_hash) for d in live})
        with_vector = [d for d in live if d.vector is not None]
        self.row = {id(d): i for i, d in enumerate(with_vector)}
        self.vectors = np.stack([d.vector for d in with_vector]).astype(np.float32, copy=False) \
            if with_vector else np.zeros((0, 1), dtype=np.float32)
        self.scopes = [d.memory.scope for d in with_vector]
        fresh = [d for d in with_vector if not d.restored]  # an imported memory keeps its exported surprise
        if fresh:
            _surprise(store, fresh, self.vectors[[self.row[id(d)] for d in fresh]])
        index = ctx.vectors
        cold = index.matrix is None and index.queries + len(with_vector) <= WARM_AFTER
        # bulk, warm: the finishing pass finds the links' neighbours; only near duplicates are looked for now
        self.links_later = options.bulk and not cold
        self.floor = options.near_threshold if self.links_later else \
            min(link.SEE_ALSO_MIN, options.near_threshold, supersede.floor(ctx))
        searched = [d for d in with_vector if not self.links_later or _checks_near(d, options)]
        rows = [self.row[id(d)] for d in searched]
        if not searched:
            found: list[list[tuple[int, float]]] = []
        elif cold:
            found = index.nearest_many(self.vectors[rows], NEIGHBOURS, [self.scopes[r] for r in rows], floor=self.floor)
        else:
            found = neighbours.nearest(index, self.vectors[rows], [self.scopes[r] for r in rows], NEIGHBOURS, self.floor)
        self.found = dict(zip(rows, found))  # vector row -> its stored neighbours
        # eager: the rows the supersession check reads, kept for the transaction (the neighbours' read now, in
        # one statement: each is a candidate of every draft it is close to)
        self.kept = None if options.bulk else RivalRows(store)
        neighbour_rowids = sorted({rowid for hits in found for rowid, _ in hits})
        if self.kept is not None:
            self.kept.load(neighbour_rowids)
        # rowid -> public id of every neighbour, for the see_also edges
        self.ids = {} if self.links_later else \
            self.kept.ids(neighbour_rowids) if self.kept is not None else ids_of(store, neighbour_rowids)
        self.stored: dict[str, dict[int, int]] = {}  # scope -> {vector row: rowid} of drafts stored in this chunk
        # block -> the float32 products of its rows with every row up to its end, and which may reach the
        # floor: a draft is compared with earlier drafts only, so the blocks left of the diagonal are all
        # it needs (about half the chunk's square; made when first needed)
        self.products: dict[int, tuple[Any, Any, list[bool]]] = {}
        self.norms: "np.ndarray | None" = None
        self.new_vectors: list[tuple[int, str, Any]] = []
        # rowid -> compact token states of the drafts stored in this chunk, written with the vectors at its
        # end: the supersession check's word test reads them here rather than running the model again
        self.pending_tokens: dict[int, tuple[str, bytes]] = {}
        self.deferred: list[tuple[int, str | None]] = []  # bulk: (rowid, neighbours JSON) left to the finishing pass
        self.entity_rows: dict[str, list[Any]] = {}  # the entities this chunk's transaction upserted (link.after_insert)

    def neighbours(self, draft: Draft) -> list[tuple[int, float]] | None:
        """``draft``'s nearest neighbours (rowid, cosine), best first, among stored memories and earlier
        drafts; None without a vector, [] when it was not searched (bulk: not checked for near duplicates)."""
        row = self.row.get(id(draft))
        if row is None:
            return None
        if row not in self.found:
            return []
        found = self.found[row]
        same = self.stored.get(draft.memory.scope)
        if same:
            # The chunk's float32 products pick the earlier drafts that can reach the floor, and of those
            # the ones within SLACK of the NEIGHBOURS-th best (``neighbours.contenders``); only those get
            # the exact cosine (``cosines``), so the result is what scoring every one exactly gives.
            import numpy as np

            products, close, any_close = self._products(row)
            rows = np.asarray([r for r in np.flatnonzero(close[:row]).tolist() if r in same], dtype=np.int64) \
                if any_close else ()
            if len(rows):
                from mem.stages.neighbours import contenders, cosines, ranked

                rows = contenders(rows, products, None, self.vectors, self.vectors[row], NEIGHBOURS, self.floor)
                earlier = ranked([same[r] for r in rows.tolist()], cosines(self.vectors[rows], self.vectors[row]),
                                 NEIGHBOURS, self.floor)
                found = sorted(found + earlier, key=lambda hit: (-hit[1], hit[0]))
        return found[:NEIGHBOURS]

    def _products(self, row: int) -> tuple[Any, Any, bool]:
        """Vector ``row``'s float32 products with the chunk's rows up to its block's end, which of
        them may reach the floor (within SLACK of it: the exact cosines decide), and whether any
        earlier row may (most drafts have none: they skip the per-draft look at the row)."""
        import numpy as np

        from mem.stages.neighbours import SLACK

        block, start = divmod(row, PRODUCT_BLOCK)
        if block not in self.products:
            if self.norms is None:
                self.norms = np.linalg.norm(self.vectors, axis=1)
            low, high = row - start, min(row - start + PRODUCT_BLOCK, len(self.vectors))
            products = self.vectors[low:high] @ self.vectors[:high].T
            bar = self.floor - SLACK * np.maximum(1.0, np.outer(self.norms[low:high], self.norms[:high]))
            close = products >= bar
            earlier = np.arange(high)[None, :] < np.arange(low, high)[:, None]
            self.products[block] = (products, close, (close & earlier).any(axis=1).tolist())
        products, close, any_close = self.products[block]
        return products[start], close[start], any_close[start]

    def remember(self, draft: Draft, rowid: int) -> None:
        """``draft`` was stored as ``rowid``: later drafts of the chunk see it as a duplicate or a neighbour."""
        memory = draft.memory
        if self.kept is not None:
            self.kept.stored(rowid, memory)
        self.taken_ids[memory.id] = memory.content_hash
        self.by_hash.setdefault((memory.scope, memory.content_hash), (rowid, memory.id))
        self.ids[rowid] = memory.id
        row = self.row.get(id(draft))
        if row is not None:
            self.stored.setdefault(memory.scope, {})[row] = rowid
            self.new_vectors.append((rowid, memory.scope, draft.vector))
            if draft.tokens is not None:
                self.pending_tokens[rowid] = draft.tokens

    def defer(self, rowid: int, neighbours: list[tuple[int, float]] | None) -> None:
        """Bulk intake: leave ``rowid``'s links to the finishing pass, with the neighbours found for it now."""
        import orjson

        self.deferred.append((rowid, None if neighbours is None else orjson.dumps(neighbours).decode()))

    def finish(self) -> None:
        """Write the chunk's vectors in one statement each, then let a warm vector index pick them up."""
        from mem.store import pending

        tokens = [self.pending_tokens.get(rowid) for rowid, _, _ in self.new_vectors]
        self.ctx.store.put_vectors(self.new_vectors, tokens=tokens)
        pending.add(self.ctx.store, self.deferred)
        self.ctx.vectors.add()


def _checks_near(draft: Draft, options: AddOptions) -> bool:
    """Whether ``draft`` is refused when a stored memory is nearly the same (not asked to keep it, not an import)."""
    return not options.keep_near and not draft.restored


def _surprise(store: Any, drafts: Sequence[Draft], vectors: "np.ndarray") -> None:
    """Each draft's surprise against its scope's stored community centroids (0.5 while there are none)."""
    from mem.lifecycle.surprise import surprise
    from mem.store.graph import centroids

    for scope in sorted({d.memory.scope for d in drafts}):
        rows = [i for i, d in enumerate(drafts) if d.memory.scope == scope]
        for i, value in zip(rows, surprise(vectors[rows], centroids(store, scope)[1]).tolist()):
            drafts[i].memory.surprise = float(value)


def _store_one(ctx: "Context", draft: Draft, chunk: _Chunk, options: AddOptions) -> Outcome:
    store = ctx.store
    memory = draft.memory
    if draft.rejected is not None:
        return Outcome("rejected", line=draft.line, reason=draft.rejected)
    if memory.id and memory.id in chunk.taken_ids:
        if chunk.taken_ids[memory.id] != memory.content_hash:  # the same id, another text: nothing is overwritten
            return Outcome("conflict", id=memory.id, line=draft.line, reason="same id, different text (kept the stored one)")
        return Outcome("duplicate", id=memory.id, line=draft.line, reason="same id")
    existing = chunk.by_hash.get((memory.scope, memory.content_hash))
    if existing is not None:
        store.bump_access([existing[0]], ctx.now_iso())
        return Outcome("duplicate", id=existing[1], line=draft.line, reason="same text")
    # One neighbour lookup serves both the near-duplicate check and the see_also links.
    neighbours = chunk.neighbours(draft)
    if _checks_near(draft, options) and neighbours:
        near = nearest_live(ctx, [hit for hit in neighbours if hit[1] >= options.near_threshold])
        if near is not None and not supersede.changes(memory, near[0]):  # a changed setting is an update
            return Outcome("duplicate", id=near[0].id, line=draft.line,
                           reason=f"near duplicate (cosine {near[1]:.3f})")
    if not memory.id:
        memory.id = ids.uuid7(_unix_ms(memory.created_at))
    rowid = store.insert_memory(memory)
    chunk.remember(draft, rowid)
    if options.bulk:
        chunk.defer(rowid, None if chunk.links_later else neighbours)
        return Outcome("added", id=memory.id, line=draft.line, detail=_detail(draft, None, []))
    link.after_insert(ctx, rowid, memory, draft.vector, entities=draft.entities, neighbours=neighbours,
                      neighbour_ids=chunk.ids, entity_rows=chunk.entity_rows)
    superseded = supersede.check(ctx, rowid, memory, draft.assertions, neighbours=neighbours,  # reads the entities
                                 tokens=chunk.pending_tokens, kept=chunk.kept, pending=chunk.new_vectors)
    status, superseded = supersede.resolve_status(superseded, memory.id)
    superseded_by = store.get(memory.id).superseded_by if status == "superseded" else None
    suspended = supersede.suspended_by(ctx, memory)
    return Outcome(status, id=memory.id, line=draft.line, detail=_detail(draft, superseded_by, superseded, suspended))


def _detail(draft: Draft, superseded_by: str | None, superseded: list[str],
            suspended: list[str] = ()) -> dict[str, Any]:
    """An added memory's outcome detail: kind, layer, what it superseded or was superseded by, what it suspends
    until its end (``valid_until``), redactions."""
    detail: dict[str, Any] = {"kind": draft.memory.kind, "layer": draft.memory.layer}
    if superseded_by:
        detail["superseded_by"] = superseded_by
    if superseded:
        detail["supersedes"] = superseded
    if suspended:
        detail["suspends"] = list(suspended)
        detail["until"] = draft.memory.valid_until
    if draft.redacted:
        detail["redacted"] = draft.redacted
    return detail


def nearest_live(ctx: "Context", found: list[tuple[int, float]]) -> tuple[Memory, float] | None:
    """The most similar live (not archived) memory among ``found`` (rowid, cosine), best first."""
    memories = ctx.store.by_rowids([rowid for rowid, _ in found])
    for rowid, similarity in found:
        memory = memories.get(rowid)
        if memory is not None and memory.status != "archived":
            return memory, similarity
    return None


@lru_cache(maxsize=1024)
def _unix_ms(iso: str) -> int:
    """Milliseconds since the epoch of a stored time (cached: a batch's memories mostly share one)."""
    return int(timestamps.parse_datetime(iso).timestamp() * 1000)


def parse_time_option(value: Any, name: str, now: "datetime | None" = None, *, upper: bool = False) -> str | None:
    """A time filter (``--since``, ``--until``, an MCP ``since``) as a stored ISO string: ISO-8601, a
    duration back from ``now`` ("7d") or a phrase intake reads ("yesterday", "last week"); see
    ``mem.enrich.dates.parse_time_bound``. ``upper``: the end of a named span (for ``--until``)."""
    from datetime import datetime, timezone

    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise BadInput(f"{name} must be a string, got {type(value).__name__}", field=name.lstrip("-"))
    try:
        return timestamps.format_datetime(dates.parse_time_bound(value, now or datetime.now(timezone.utc), upper=upper))
    except ValueError:
        raise BadInput(f"{name} {value!r} is not a time: give ISO-8601 (2026-11-30, 2026-11-30T12:00Z), a duration "
                       "back from now (7d, 36h, 2w) or a phrase (yesterday, last week, 3 days ago, May 2023)",
                       field=name.lstrip("-")) from None


