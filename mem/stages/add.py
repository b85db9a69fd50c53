"""Intake: the one path every write takes (add, import, MCP add, consolidation merges).

validate -> secret scan -> exact duplicate -> embed -> near duplicate -> enrich -> store -> link.
The whole batch is validated before anything is written; writes go in short transactions of
``CHUNK`` records so a concurrent writer never waits long.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mem import ids
from mem.enrich.classify import guess_kind, layer_for
from mem.errors import BadInput
from mem.records import KINDS, Memory, Outcome
from mem.stages import link, supersede
from mem.text import clean, content_hash

if TYPE_CHECKING:
    import numpy as np

    from mem.enrich.entities import Entity
    from mem.stages.context import Context

MIN_CHARS = 3
MAX_CHARS = 32_000
NEAR_DUPLICATE = 0.95
CHUNK = 256
NEIGHBOURS = 8  # nearest memories looked up per new one (near-duplicate check, then see_also links)

# Input keys that map onto columns; anything else a record carries is kept in ``meta``.
_KNOWN = {"text", "kind", "tags", "scope", "source", "source_line", "author", "created_at", "event_at",
          "pinned", "layer", "confidence", "meta", "valid_until"}
# Keys of records that other stages print (a hit, an outcome): never worth keeping in meta.
_PIPELINE_KEYS = {"record", "id", "status", "score", "rank", "why", "line", "reason", "query_line",
                  "content_hash", "updated_at", "access_count", "last_accessed_at", "importance",
                  "surprise", "verification", "superseded_by", "source_hash"}


@dataclass
class AddOptions:
    redact: bool = False
    keep_near: bool = False
    near_threshold: float = NEAR_DUPLICATE
    defaults: dict[str, Any] = field(default_factory=dict)  # flag values applied where a record has none
    extract: str | None = None  # "ollama": a local model names the entities (heuristics on any failure)


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
    entities: "list[Entity] | None" = None  # from the model (options.extract); None: link.py extracts


def _fail(line: int | None, message: str) -> BadInput:
    where = f"line {line}: " if line is not None else ""
    return BadInput(f"{where}{message}", line=line) if line is not None else BadInput(message)


def _as_time(value: Any, name: str, line: int | None) -> str | None:
    from mem.enrich.dates import format_datetime, parse_datetime

    if value is None:
        return None
    if not isinstance(value, str):
        raise _fail(line, f"{name} must be an ISO-8601 string, got {type(value).__name__}")
    try:
        return format_datetime(parse_datetime(value))
    except ValueError:
        raise _fail(line, f"{name} {value!r} is not a date-time (use ISO-8601, e.g. 2026-11-30T12:00:00Z)") from None


def _as_tags(value: Any, line: int | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [t for t in (p.strip() for p in value.split(",")) if t]
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise _fail(line, "tags must be a list of strings")
    return list(dict.fromkeys(t.strip() for t in value if t.strip()))


def validate(raw: dict[str, Any], line: int | None, ctx: "Context", options: AddOptions,
             *, keep_ids: bool = False) -> Draft:
    """Turn one input object into a Draft, or raise BadInput naming the line and the field."""
    record = {**options.defaults, **{k: v for k, v in raw.items() if v is not None}}
    text = record.get("text")
    if text is None:
        raise _fail(line, "missing required field 'text'")
    if not isinstance(text, str):
        raise _fail(line, f"'text' must be a string, got {type(text).__name__}")
    kind = record.get("kind")
    if kind is not None and kind not in KINDS:
        raise _fail(line, f"unknown kind {kind!r}; one of {', '.join(KINDS)}")
    layer = record.get("layer")
    if layer is not None and (isinstance(layer, bool) or not isinstance(layer, int) or not 1 <= layer <= 4):
        raise _fail(line, f"layer must be an integer 1-4, got {layer!r}")
    confidence = record.get("confidence", 1.0)
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.0 <= confidence <= 1.0:
        raise _fail(line, f"confidence must be a number in [0, 1], got {confidence!r}")
    pinned = record.get("pinned", False)
    if not isinstance(pinned, bool):
        raise _fail(line, f"pinned must be true or false, got {pinned!r}")
    source_line = record.get("source_line")
    if source_line is not None and (isinstance(source_line, bool) or not isinstance(source_line, int) or source_line < 1):
        raise _fail(line, f"source_line must be a positive integer, got {source_line!r}")
    meta = record.get("meta", {})
    if not isinstance(meta, dict):
        raise _fail(line, "meta must be a JSON object")
    extra = {k: v for k, v in raw.items() if k not in _KNOWN and k not in _PIPELINE_KEYS}
    if extra:
        meta = {**extra, **meta}
    for name in ("scope", "source", "author"):
        value = record.get(name)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise _fail(line, f"{name} must be a non-empty string")
    now = ctx.now_iso()
    created_at = _as_time(record.get("created_at"), "created_at", line) or now
    tags = _as_tags(record.get("tags"), line)
    cleaned = clean(text)
    memory = Memory(
        id="",
        text=cleaned,
        kind=kind or "fact",
        scope=record.get("scope") or ctx.settings.scope,
        tags=tags,
        meta=meta,
        source=record.get("source"),
        source_line=source_line,
        author=record.get("author"),
        created_at=created_at,
        event_at=_as_time(record.get("event_at"), "event_at", line),
        valid_until=_as_time(record.get("valid_until"), "valid_until", line),
        updated_at=now,
        layer=layer or 3,
        pinned=pinned,
        confidence=float(confidence),
    )
    if memory.scope == "*":
        raise _fail(line, "scope '*' means every scope; a memory needs one scope")
    draft = Draft(line=line, memory=memory, explicit_kind=kind is not None, explicit_layer=layer is not None)
    if keep_ids:
        _restore_exported(draft, raw, line)
    draft.rejected = _content_problem(cleaned)
    return draft


def _restore_exported(draft: Draft, raw: dict[str, Any], line: int | None) -> None:
    """Import keeps what an export wrote: id, timestamps, counters and lifecycle state, verbatim."""
    memory = draft.memory
    memory_id = raw.get("id")
    if memory_id is not None:
        if not isinstance(memory_id, str) or not ids.looks_like_prefix(memory_id) or len(memory_id) != 36:
            raise _fail(line, f"id {memory_id!r} is not a memory id (a UUID)")
        memory.id = memory_id.lower()
    for name in ("updated_at", "last_accessed_at"):
        value = _as_time(raw.get(name), name, line)
        if value:
            setattr(memory, name, value)
    for name, kind, choices in (("status", str, ("active", "cold", "archived")),
                                ("verification", str, ("unverified", "verified", "stale", "missing", "contradicted"))):
        value = raw.get(name)
        if value is not None:
            if value not in choices:
                raise _fail(line, f"{name} {value!r} is not one of {', '.join(choices)}")
            setattr(memory, name, value)
    for name in ("access_count",):
        value = raw.get(name)
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise _fail(line, f"{name} must be a non-negative integer")
            memory.access_count = value
    for name in ("importance", "surprise"):
        value = raw.get(name)
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise _fail(line, f"{name} must be a number")
            setattr(memory, name, float(value))
    for name in ("superseded_by", "source_hash"):
        value = raw.get(name)
        if value is not None and not isinstance(value, str):
            raise _fail(line, f"{name} must be a string")
        setattr(memory, name, value)
    # Exported records already carry their enrichment; re-deriving would not round-trip.
    draft.explicit_kind = draft.explicit_layer = True
    draft.restored = True


def _content_problem(text: str) -> str | None:
    if len(text) < MIN_CHARS:
        return "empty" if not text else f"too short ({len(text)} characters; at least {MIN_CHARS})"
    if len(text) > MAX_CHARS:
        return f"too long ({len(text)} characters; at most {MAX_CHARS})"
    printable = sum(1 for c in text if c.isprintable() or c in "\n\t\r")
    if printable < 0.9 * len(text):
        return "not text (mostly control characters)"
    return None


def _screen_secrets(draft: Draft, redact: bool) -> None:
    from mem.secrets import redact as redact_text, scan

    findings = scan(draft.memory.text)
    if not findings:
        return
    kinds = sorted({f.kind for f in findings})
    if redact:
        draft.memory.text, draft.redacted = redact_text(draft.memory.text)
    else:
        draft.rejected = f"secret: looks like {', '.join(kinds)} (use --redact to store it masked)"


def _enrich(draft: Draft, ctx: "Context") -> None:
    from mem.enrich.dates import event_at, format_datetime, parse_datetime

    memory = draft.memory
    if not draft.explicit_kind:
        memory.kind = guess_kind(memory.text)
    if not draft.explicit_layer:
        memory.layer = layer_for(memory.kind, memory.tags)
    if memory.event_at is None and not draft.restored:
        when = event_at(memory.text, parse_datetime(memory.created_at))
        memory.event_at = format_datetime(when) if when else None
    if memory.source and not memory.source_hash:
        memory.source_hash = file_sha256(memory.source)
    memory.content_hash = content_hash(memory.text)


def file_sha256(path: str) -> str | None:
    """sha256 of a source file at capture time, or None when it is not a readable file."""
    import hashlib

    try:
        with open(path, "rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError:
        return None


def run(ctx: "Context", records: Iterable[tuple[int | None, dict[str, Any]]], options: AddOptions | None = None,
        *, keep_ids: bool = False) -> Iterator[Outcome]:
    """Validate every record, then store them chunk by chunk; one Outcome per input, in order.

    ``keep_ids`` (import) keeps each record's ``id`` and timestamps, and an id already stored is
    a duplicate: that is what makes import idempotent.
    """
    options = options or AddOptions()
    if options.extract not in (None, "ollama"):
        raise BadInput(f"unknown extractor {options.extract!r}; the only one is 'ollama'")
    drafts = [validate(raw, line, ctx, options, keep_ids=keep_ids) for line, raw in records]
    for start in range(0, len(drafts), CHUNK):
        yield from _store_chunk(ctx, drafts[start : start + CHUNK], options)


def _store_chunk(ctx: "Context", drafts: Sequence[Draft], options: AddOptions) -> Iterator[Outcome]:
    for draft in drafts:
        if draft.rejected is None:
            _screen_secrets(draft, options.redact)
        if draft.rejected is None:
            _enrich(draft, ctx)
    live = [d for d in drafts if d.rejected is None]
    vectors = ctx.embedder.embed([d.memory.text for d in live]) if live else None
    vector_of = {id(d): vectors[i] for i, d in enumerate(live)} if vectors is not None else {}
    if options.extract == "ollama":
        _extract_entities(ctx, live)
    outcomes: list[Outcome] = []
    with ctx.store.write():
        for draft in drafts:
            outcomes.append(_store_one(ctx, draft, vector_of.get(id(draft)), options))
    yield from outcomes


def _extract_entities(ctx: "Context", drafts: Sequence[Draft]) -> None:
    """Ask the model for each draft's entities before the write lock is taken (a model call can take seconds)."""
    from mem.enrich.llm_extract import extract

    for draft in drafts:
        draft.entities = extract(draft.memory.text, model=ctx.settings.llm, host=ctx.settings.ollama_host)[0]


def _store_one(ctx: "Context", draft: Draft, vector: "np.ndarray | None", options: AddOptions) -> Outcome:
    store = ctx.store
    memory = draft.memory
    if draft.rejected is not None:
        return Outcome("rejected", line=draft.line, reason=draft.rejected)
    if memory.id and store.exists(memory.id):
        return Outcome("duplicate", id=memory.id, line=draft.line, reason="same id")
    existing = store.find_by_hash(memory.scope, memory.content_hash)
    if existing is not None:
        store.bump_access([store.rowid_of(existing.id)], ctx.now_iso())
        return Outcome("duplicate", id=existing.id, line=draft.line, reason="same text")
    # One neighbour query serves both the near-duplicate check and the see_also links.
    neighbours = ctx.vectors.nearest(vector, NEIGHBOURS, memory.scope) if vector is not None else None
    if not options.keep_near and not draft.restored and neighbours is not None:
        near = nearest_live(ctx, neighbours)
        if near is not None and near[1] >= options.near_threshold:
            return Outcome("duplicate", id=near[0].id, line=draft.line,
                           reason=f"near duplicate (cosine {near[1]:.3f})")
    if not memory.id:
        memory.id = ids.uuid7(_unix_ms(memory.created_at))
    rowid = store.insert_memory(memory, vector)
    ctx.vectors.add()
    superseded = supersede.check(ctx, rowid, memory)
    link.after_insert(ctx, rowid, memory, vector, entities=draft.entities, neighbours=neighbours)
    status, superseded = supersede.resolve_status(superseded, memory.id)
    detail: dict[str, Any] = {"kind": memory.kind, "layer": memory.layer}
    if status == "superseded":
        detail["superseded_by"] = store.get(memory.id).superseded_by
    if superseded:
        detail["supersedes"] = superseded
    if draft.redacted:
        detail["redacted"] = draft.redacted
    return Outcome(status, id=memory.id, line=draft.line, detail=detail)


def nearest_live(ctx: "Context", found: list[tuple[int, float]]) -> tuple[Memory, float] | None:
    """The most similar live (not archived) memory among ``found`` (rowid, cosine), best first."""
    memories = ctx.store.by_rowids([rowid for rowid, _ in found])
    for rowid, similarity in found:
        memory = memories.get(rowid)
        if memory is not None and memory.status != "archived":
            return memory, similarity
    return None


def _unix_ms(iso: str) -> int:
    from mem.enrich.dates import parse_datetime

    return int(parse_datetime(iso).timestamp() * 1000)


def parse_time_option(value: str | None, name: str) -> str | None:
    """A CLI time flag (ISO-8601 or a phrase like ``2 weeks ago``) as a stored ISO string."""
    return _as_time(value, name, None) if value else None


