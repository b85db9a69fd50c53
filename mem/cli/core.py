"""Core commands: add, search, get, list, update, forget, stats, export, import, reindex."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from mem.cli.common import (
    DbOption, EmbedderOption, FormatOption, JsonOption, NowOption, QuietOption, ScopeOption, collect_batch, emit,
    emit_one, input_stream, interrupted, open_context, reports_errors, split_csv, time_option, use_table,
)
from mem.cli.complete import complete_embedders, complete_ids, complete_kinds, complete_statuses, complete_tags
from mem.errors import BadInput, Exit

KindOption = Annotated[Optional[list[str]], typer.Option("--kind", help="Only these kinds (repeat or comma-separate)", autocompletion=complete_kinds)]
TagOption = Annotated[Optional[list[str]], typer.Option("--tag", "-t", help="Only memories with this tag (repeatable)", autocompletion=complete_tags)]
SinceOption = Annotated[Optional[str], typer.Option("--since", help="Only memories from this time on, by when it happened (event_at) if known, else when stored (created_at): ISO-8601, 7d, 36h, yesterday, 'last week'")]
UntilOption = Annotated[Optional[str], typer.Option("--until", help="Only memories before this time (event_at if known, else created_at); a phrase counts to its end: --until yesterday includes yesterday")]


def _json_object(value: str | None, flag: str) -> dict[str, Any] | None:
    if value is None:
        return None
    import orjson

    try:
        parsed = orjson.loads(value)
    except orjson.JSONDecodeError as exc:
        raise BadInput(f"{flag} is not valid JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise BadInput(f"{flag} must be a JSON object")
    return parsed


@reports_errors
def add(
    inputs: Annotated[list[str], typer.Argument(help="Text to remember; or '-' / a FILE of JSON Lines records", show_default=False)],
    kind: Annotated[Optional[str], typer.Option("--kind", "-k", help="fact|decision|correction|preference|procedure|episode|identity|commitment|note [default: guessed]", autocompletion=complete_kinds)] = None,
    tag: Annotated[Optional[list[str]], typer.Option("--tag", "-t", help="Add this tag (repeatable, or comma-separated)", autocompletion=complete_tags)] = None,
    source: Annotated[Optional[str], typer.Option("--source", help="File or URL the memory came from")] = None,
    source_line: Annotated[Optional[int], typer.Option("--source-line", min=1, help="Line in --source")] = None,
    author: Annotated[Optional[str], typer.Option("--author", help="Who said it")] = None,
    layer: Annotated[Optional[int], typer.Option("--layer", min=1, max=4, help="Governance layer 1-4 [default: from kind]")] = None,
    pinned: Annotated[bool, typer.Option("--pin", help="Never decays or archives")] = False,
    confidence: Annotated[Optional[float], typer.Option("--confidence", min=0.0, max=1.0)] = None,
    created_at: Annotated[Optional[str], typer.Option("--created-at", help="When it was observed (ISO-8601)")] = None,
    event_at: Annotated[Optional[str], typer.Option("--event-at", help="When it happened (ISO-8601)")] = None,
    valid_until: Annotated[Optional[str], typer.Option("--valid-until", help="When it stops holding (ISO-8601) [default: read from the text: 'until Jan 6']")] = None,
    meta: Annotated[Optional[str], typer.Option("--meta", help="JSON object stored verbatim")] = None,
    redact: Annotated[bool, typer.Option("--redact", help="Mask secrets instead of rejecting the memory")] = False,
    keep_near: Annotated[bool, typer.Option("--keep-near", help="Store near duplicates (cosine >= 0.95) anyway")] = False,
    text_mode: Annotated[bool, typer.Option("--text", help="Treat the arguments as text even if one names a file")] = False,
    extract: Annotated[Optional[str], typer.Option("--extract", help="Ask a local Ollama model (MEM_LLM) for entities; falls back to the heuristics")] = None,
    bulk: Annotated[bool, typer.Option("--bulk", help="Store the whole batch first (searchable at once), then link it in one finishing pass: the same graph")] = False,
    db: DbOption = None, scope: ScopeOption = None, embedder: EmbedderOption = None, now: NowOption = None,
    json: JsonOption = False, fmt: FormatOption = None,
) -> None:
    """Remember something. One output line per input: id and status (added | duplicate | rejected).

    mem add "We chose Redis for the cache layer"
    mem add - < memories.jsonl
    """
    from mem.jsonl import read_records
    from mem.stages import add as add_stage

    defaults: dict[str, Any] = {k: v for k, v in {
        "kind": kind, "tags": split_csv(tag) or None, "source": source, "source_line": source_line, "author": author,
        "layer": layer, "pinned": pinned or None, "confidence": confidence, "created_at": created_at,
        "event_at": event_at, "valid_until": valid_until, "meta": _json_object(meta, "--meta"), "scope": scope,
    }.items() if v is not None}
    from_file = not text_mode and len(inputs) == 1 and (inputs[0] == "-" or os.path.isfile(inputs[0]))
    if from_file:
        with input_stream(inputs[0]) as stream:
            records = list(read_records(stream, source=inputs[0] if inputs[0] != "-" else "<stdin>"))
    else:
        records = [(None, {"text": " ".join(inputs)})]
    options = add_stage.AddOptions(redact=redact, keep_near=keep_near, defaults=defaults, extract=extract,
                                   bulk=bulk)
    table = use_table(fmt, json)
    with open_context(db, scope=scope if scope != "*" else None, embedder=embedder, now=now, create=True) as ctx:
        outcomes, stopped = collect_batch(add_stage.run(ctx, records, options))
        rejected = not from_file and outcomes and outcomes[0].status == "rejected"
        if not (rejected and table):  # a person gets just the error; a pipeline still gets its record
            emit(outcomes, table=table, ctx=ctx)
    if stopped:
        raise interrupted(outcomes, len(records), "run the same 'mem add'")
    if rejected:
        raise BadInput(f"not stored: {outcomes[0].reason}")


@reports_errors
def search(
    query: Annotated[str, typer.Argument(help="What to look for; '-' reads JSON Lines queries ({\"query\": ..., \"k\": ...})")],
    k: Annotated[int, typer.Option("--limit", "-k", "-n", min=1, max=1000, help="How many hits")] = 10,
    kind: KindOption = None, tag: TagOption = None, since: SinceOption = None, until: UntilOption = None,
    include_superseded: Annotated[bool, typer.Option("--include-superseded", help="Also show memories a newer one replaced")] = False,
    include_archived: Annotated[bool, typer.Option("--include-archived", help="Also search archived memories")] = False,
    channel: Annotated[Optional[list[str]], typer.Option("--channel", help="Use only these channels (repeatable); +NAME or --channel=-NAME adds to or drops from the defaults")] = None,
    fusion: Annotated[Optional[str], typer.Option("--fusion", help="How channels combine: blend (default) | rrf")] = None,
    organize: Annotated[bool, typer.Option("--organize", help="Group hits by structure: timeline (by event date), "
                                           "ledger (a table of values), taxonomy, narrative")] = False,
    db: DbOption = None, scope: ScopeOption = None, embedder: EmbedderOption = None, now: NowOption = None,
    json: JsonOption = False, fmt: FormatOption = None,
) -> None:
    """Hybrid search (semantic + BM25, fused and re-ranked). One hit per line, each with its 'why'.

    mem search "which cache did we pick?"
    mem search - < queries.jsonl
    """
    from mem.stages import search as search_stage

    if organize and query == "-":
        raise BadInput("--organize groups the hits of one query; it does not take '-'")
    with open_context(db, scope=scope, embedder=embedder, now=now) as ctx:
        base = dict(k=k, kinds=split_csv(kind), tags=split_csv(tag), since=time_option(since, "since", ctx),
                    until=time_option(until, "until", ctx), include_superseded=include_superseded,
                    include_archived=include_archived, channels=split_csv(channel) or None, scope=scope,
                    fusion=search_stage.check_fusion(fusion))
        if query == "-":
            queries = list(_read_queries(base, ctx))
            hits = search_stage.run_many(ctx, queries)
            emit(hits, table=use_table(fmt, json), ctx=ctx)
        elif organize:
            from mem.stages.organize import organize as organized, table_groups

            records = organized(search_stage.run(ctx, search_stage.Query(text=query, **base)))
            if not use_table(fmt, json):
                emit(records, table=False)
            for structure, rows, columns in table_groups(records) if use_table(fmt, json) else ():
                from rich.console import Console
                from rich.text import Text

                Console().print(Text(f"{structure} ({len({r['id'] for r in rows})})", style="bold"))
                emit(rows, table=True, columns=columns, ctx=ctx)
        else:
            request = search_stage.Query(text=query, **base)
            hits = search_stage.run(ctx, request)
            emit(hits, table=use_table(fmt, json), ctx=ctx)
            if not hits:
                _hint_other_scopes(ctx, request)


def _hint_other_scopes(ctx: Any, request: Any) -> None:
    from mem.stages.hints import elsewhere_message, hits_elsewhere

    counts = hits_elsewhere(ctx, request)
    if counts:
        sys.stderr.write(f"mem: {elsewhere_message(ctx.scope_filter(request.scope), counts)}\n")


def _read_queries(base: dict[str, Any], ctx: Any) -> Any:
    """Validate every query line first (a bad line stops the run before any search)."""
    from mem.jsonl import read_records
    from mem.stages.search import Query, check_fusion, check_query, parts_for

    queries = []
    for line, record in read_records(sys.stdin.buffer, source="<stdin>"):
        text = record.get("query", record.get("text"))
        if not isinstance(text, str) or not text.strip():
            raise BadInput(f"line {line}: needs a non-empty 'query' string", line=line)
        fields = dict(base)
        value = record.get("k", record.get("limit"))
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1000:
                raise BadInput(f"line {line}: k must be an integer 1-1000", line=line)
            fields["k"] = value
        for key in ("kinds", "tags"):
            if key in record:
                if not isinstance(record[key], list):
                    raise BadInput(f"line {line}: {key} must be a list", line=line)
                fields[key] = record[key]
        for key in ("since", "until"):
            if key in record:
                fields[key] = time_option(record[key], key, ctx)
        for key in ("scope",):
            if key in record:
                fields[key] = record[key]
        if "fusion" in record:
            try:
                fields["fusion"] = check_fusion(record["fusion"])
            except BadInput as e:
                raise BadInput(f"line {line}: {e}", line=line) from None
        if "channels" in record:  # as --channel: names, or all signed (["+maxsim", "-entity"])
            try:
                parts_for(record["channels"])
            except BadInput as e:
                raise BadInput(f"line {line}: {e}", line=line) from None
            fields["channels"] = record["channels"]
        for key in ("include_superseded", "include_archived"):
            if key in record:
                fields[key] = bool(record[key])
        queries.append((line, check_query(Query(text=text, **fields), where=f"line {line}: ")))
    return queries


@reports_errors
def get(
    ids: Annotated[list[str], typer.Argument(help="Handles (as tables show them) or ids, or unique id prefixes (4+ characters)", autocompletion=complete_ids)],
    explain: Annotated[bool, typer.Option("--explain", help="Add an 'explain' object: importance, activation, lifecycle")] = False,
    db: DbOption = None, now: NowOption = None, json: JsonOption = False, fmt: FormatOption = None,
) -> None:
    """Show memories by handle or id (any unique id prefix of 4+ characters works too)."""
    from mem.stages import memories

    with open_context(db, now=now) as ctx:
        found = memories.get(ctx, ids)
        if explain:
            from mem.stages.lifecycle import explained

            found = explained(ctx, found)
        table = use_table(fmt, json)
        if not table:
            emit(found, table=False)
        for record in found if table else ():  # a person gets every field, the explanation included
            emit_one(record.to_record() if hasattr(record, "to_record") else record, table=True, ctx=ctx)


@reports_errors
def list_(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many")] = 50,
    kind: KindOption = None, tag: TagOption = None, since: SinceOption = None, until: UntilOption = None,
    status: Annotated[Optional[str], typer.Option("--status", help="active | cold | archived | all [default: active and cold]", autocompletion=complete_statuses)] = None,
    db: DbOption = None, scope: ScopeOption = None, now: NowOption = None, json: JsonOption = False,
    fmt: FormatOption = None,
) -> None:
    """List memories, newest first."""
    from mem.stages import memories

    with open_context(db, scope=scope, now=now) as ctx:
        emit(memories.list_memories(ctx, scope=scope, kinds=split_csv(kind), tags=split_csv(tag),
                                    since=time_option(since, "since", ctx), until=time_option(until, "until", ctx),
                                    status=status, limit=limit), table=use_table(fmt, json), ctx=ctx)


@reports_errors
def update(
    memory_id: Annotated[str, typer.Argument(metavar="ID", help="Handle or id (or a unique id prefix)", autocompletion=complete_ids)],
    text: Annotated[Optional[str], typer.Option("--text", help="New text (re-embedded)")] = None,
    kind: Annotated[Optional[str], typer.Option("--kind", "-k", help="New kind", autocompletion=complete_kinds)] = None,
    tag: Annotated[Optional[list[str]], typer.Option("--tag", "-t", help="Add a tag (repeatable)", autocompletion=complete_tags)] = None,
    untag: Annotated[Optional[list[str]], typer.Option("--untag", help="Remove a tag (repeatable)", autocompletion=complete_tags)] = None,
    layer: Annotated[Optional[int], typer.Option("--layer", min=1, max=4)] = None,
    pin: Annotated[Optional[bool], typer.Option("--pin/--unpin", help="Pin or unpin", show_default=False)] = None,
    meta: Annotated[Optional[str], typer.Option("--meta", help="JSON object merged into meta")] = None,
    redact: Annotated[bool, typer.Option("--redact", help="Mask secrets instead of refusing the change")] = False,
    valid_until: Annotated[Optional[str], typer.Option("--valid-until", help="When it stops holding (ISO-8601; 'none' clears it) [default: read again from a new --text]")] = None,
    event_at: Annotated[Optional[str], typer.Option("--event-at", help="When it happened (ISO-8601; 'none' clears it) [default: read again from a new --text]")] = None,
    db: DbOption = None, embedder: EmbedderOption = None, now: NowOption = None,
    json: JsonOption = False, fmt: FormatOption = None,
) -> None:
    """Change a memory's text, kind, tags, layer, pin, end or date."""
    from mem.stages import memories

    with open_context(db, embedder=embedder, now=now) as ctx:
        memory = memories.update(ctx, memory_id, text=text, kind=kind, add_tags=split_csv(tag),
                                 remove_tags=split_csv(untag), layer=layer, pinned=pin, meta=_json_object(meta, "--meta"),
                                 redact=redact, valid_until=valid_until, event_at=event_at)
        emit([memory], table=use_table(fmt, json), ctx=ctx)


@reports_errors
def forget(
    ids: Annotated[list[str], typer.Argument(help="Handles or ids (or unique id prefixes)", autocompletion=complete_ids)],
    purge: Annotated[bool, typer.Option("--purge", help="Delete for good instead of archiving")] = False,
    db: DbOption = None, now: NowOption = None, json: JsonOption = False, fmt: FormatOption = None,
) -> None:
    """Archive memories (recoverable with 'mem archive --restore'); --purge deletes them for good."""
    from mem.stages import memories

    with open_context(db, now=now) as ctx:
        emit(memories.forget(ctx, ids, purge=purge), table=use_table(fmt, json), ctx=ctx)


@reports_errors
def stats(db: DbOption = None, json: JsonOption = False, fmt: FormatOption = None) -> None:
    """Counts by status, scope, kind and layer; index sizes; schema and embedder."""
    with open_context(db) as ctx:
        record = {"record": "stats", "path": str(ctx.store.path), **ctx.store.counts()}
        emit_one(record, table=use_table(fmt, json), ctx=ctx)


@reports_errors
def export(
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write to this file (atomically) instead of stdout")] = None,
    since: Annotated[Optional[str], typer.Option("--since", help="Only memories changed (updated_at) since: ISO-8601, 7d, yesterday, 'last week'")] = None,
    active_only: Annotated[bool, typer.Option("--active-only", help="Leave archived memories out")] = False,
    db: DbOption = None, scope: ScopeOption = None,
) -> None:
    """Write memories as JSON Lines (ids, timestamps, provenance, meta) for 'mem import'."""
    from mem.jsonl import write_records
    from mem.stages import io

    with open_context(db, scope=scope or "*") as ctx:
        records = io.export(ctx, scope=scope or "*", since=time_option(since, "since", ctx), include_archived=not active_only)
        if output is None:
            write_records(records, sys.stdout.buffer)
            return
        write_atomically(output, lambda fh: write_records(records, fh))


def write_atomically(path: Path, write: Any) -> None:
    """Write to a temp file beside ``path`` and rename it into place: never a half-written file."""
    import tempfile

    folder = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    except OSError as exc:
        raise BadInput(f"cannot write {path}: {exc.strerror}", path=str(path)) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


@reports_errors
def import_(
    file: Annotated[str, typer.Argument(help="JSON Lines from 'mem export' (or '-' for stdin)")],
    redact: Annotated[bool, typer.Option("--redact", help="Mask secrets instead of rejecting")] = False,
    db: DbOption = None, embedder: EmbedderOption = None, now: NowOption = None, quiet: QuietOption = False,
    json: JsonOption = False, fmt: FormatOption = None,
) -> None:
    """Import memories, keeping their ids; importing the same file again adds nothing.

    Links are made in one finishing pass at the end (the graph eager intake builds); an import that
    was interrupted is finished by the rerun or by 'mem consolidate'.
    """
    from mem.jsonl import read_records
    from mem.stages import io

    with input_stream(file) as stream:
        records = list(read_records(stream, source=file if file != "-" else "<stdin>"))
    from mem.cli.progress import progress

    with open_context(db, embedder=embedder, now=now, create=True) as ctx, progress("import", len(records), quiet=quiet) as advance:
        outcomes, stopped = collect_batch(io.import_records(ctx, records, redact=redact, bulk=True), advance)
        emit(outcomes, table=use_table(fmt, json), ctx=ctx)
    if stopped:
        raise interrupted(outcomes, len(records), f"run 'mem import {file}'")
    if not quiet:
        from collections import Counter

        counts = Counter(o.status for o in outcomes)
        sys.stderr.write("import: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) + "\n")
        for outcome in outcomes:  # a conflict or a cleared reference is worth a line of its own
            for warning in outcome.detail.get("warnings", []) + ([outcome.reason] if outcome.status == "conflict" else []):
                sys.stderr.write(f"import: line {outcome.line}: {outcome.id}: {warning}\n")


@reports_errors
def reindex(
    embedder: Annotated[Optional[str], typer.Option("--embedder", help="Re-embed with this embedder and bind the database to it", autocompletion=complete_embedders)] = None,
    db: DbOption = None, json: JsonOption = False, fmt: FormatOption = None, quiet: QuietOption = False,
) -> None:
    """Re-embed every memory (after changing embedders, or to repair the vector index)."""
    from mem.cli.progress import progress
    from mem.config import DEFAULT_EMBEDDER
    from mem.stages import io

    with open_context(db) as ctx:
        name = embedder or ctx.settings.embedder or ctx.store.embedder_name() or DEFAULT_EMBEDDER
        with progress(f"reindex with {name}", None, quiet=quiet):
            result = io.reindex(ctx, name)
        emit([result], table=use_table(fmt, json), ctx=ctx)


def register(app: typer.Typer) -> None:
    app.command()(add)
    app.command()(search)
    app.command()(get)
    app.command("list")(list_)
    app.command()(update)
    app.command()(forget)
    app.command()(stats)
    app.command()(export)
    app.command("import")(import_)
    app.command()(reindex)


__all__ = ["register", "Exit"]
