"""Lifecycle commands: consolidate, verify, archive."""

from __future__ import annotations

import sys
from typing import Annotated, Any, Optional

import typer

from mem.cli.common import (
    DbOption, EmbedderOption, FormatOption, JsonOption, NowOption, QuietOption, ScopeOption, emit, input_stream,
    open_context, reports_errors, use_table,
)
from mem.errors import BadInput, CheckFailed

DryRunOption = Annotated[bool, typer.Option("--dry-run", help="Report what would change; write nothing")]


def _stderr(line: str, quiet: bool) -> None:
    if not quiet:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


@reports_errors
def consolidate(
    phase: Annotated[Optional[list[str]], typer.Option("--phase", "-p", help="replay | reorganize | compress | prune (repeatable) [default: all, in that order]")] = None,
    dry_run: DryRunOption = False,
    limit: Annotated[Optional[int], typer.Option("--limit", "-n", min=0, help="At most this many actions per phase")] = None,
    llm: Annotated[Optional[str], typer.Option("--llm", help="Merge with ollama (or ollama:MODEL), checked; else extractive")] = None,
    db: DbOption = None, scope: ScopeOption = None, embedder: EmbedderOption = None, now: NowOption = None,
    quiet: QuietOption = False, json: JsonOption = False, fmt: FormatOption = None,
) -> None:
    """Consolidate: re-link recent memories, rebuild communities, merge near duplicates, age and archive.

    Safe from cron while other processes write; a second run at the same time does nothing new.

    mem consolidate
    mem consolidate --phase prune --now 2026-12-01 --dry-run
    """
    from mem.stages import consolidate as stage

    phases = [p.strip() for value in phase or [] for p in value.split(",") if p.strip()] or list(stage.PHASES)
    options = stage.Options(phases=phases, dry_run=dry_run, limit=limit, scope=None if scope in (None, "*") else scope,
                            llm=llm)
    with open_context(db, embedder=embedder, now=now) as ctx:
        summary: dict[str, Any] = {}

        def records() -> Any:
            for record in stage.run(ctx, options):
                if record.get("record") == "summary":
                    summary.update(record)
                yield record

        emit(records(), table=use_table(fmt, json), ctx=ctx)
    if summary.get("skipped"):
        _stderr(f"consolidate: skipped: {summary['skipped']}", quiet)
        return
    parts = ", ".join(f"{name} {info.get('actions', 0)}" for name, info in summary.get("phases", {}).items())
    _stderr(f"consolidate{' (dry run)' if dry_run else ''}: {summary.get('actions', 0)} actions ({parts})", quiet)


@reports_errors
def verify(
    source: Annotated[Optional[str], typer.Argument(help="'-' to verify only the memories whose ids come in as JSON Lines on stdin", show_default=False)] = None,
    older_than: Annotated[float, typer.Option("--older-than", min=0, help="Decay confidence of unverified or stale memories older than this many days")] = 30.0,
    db: DbOption = None, scope: ScopeOption = None, now: NowOption = None, quiet: QuietOption = False,
    json: JsonOption = False, fmt: FormatOption = None,
) -> None:
    """Check memories against their source files (verified | stale | missing) and list open contradictions
    and conflicts between global and project memories.

    One finding per line, then a summary. Exit 7 when it found a problem, 0 when clean.

    mem verify
    mem search deploy --json | mem verify -
    """
    from mem.stages import verify as stage

    ids = _piped_ids(source)
    with open_context(db, scope=scope, now=now) as ctx:
        if ids is not None:
            ids = [ctx.store.resolve_id(i) for i in ids]
        summary: dict[str, Any] = {}

        def records() -> Any:
            for record in stage.run(ctx, scope=scope, ids=ids, older_than_days=older_than):
                if record.get("record") == "summary":
                    summary.update(record)
                yield record

        emit(records(), table=use_table(fmt, json), ctx=ctx)
    _stderr(f"verify: {summary.get('checked', 0)} checked, {summary.get('verified', 0)} verified, "
            f"{summary.get('stale', 0)} stale, {summary.get('missing', 0)} missing, "
            f"{summary.get('contradictions', 0)} contradictions ({summary.get('resolved', 0)} closed since), "
            f"{summary.get('scope_conflicts', 0)} conflicts with global, {summary.get('decayed', 0)} decayed", quiet)
    if summary.get("problems"):
        raise CheckFailed(f"verify found {summary['problems']} problem(s)", problems=summary["problems"])


def _piped_ids(source: str | None) -> list[str] | None:
    from mem.jsonl import read_records
    from mem.stages.archive import ids_from_records

    if source is None:
        return None
    if source != "-":
        raise BadInput(f"expected '-' (ids as JSON Lines on stdin), got {source!r}")
    with input_stream("-") as stream:
        return ids_from_records(read_records(stream, source="<stdin>"))


@reports_errors
def archive(
    ids: Annotated[Optional[list[str]], typer.Argument(help="Handles or ids; '-' reads JSON Lines records with an 'id' from stdin [default: apply the archive rules now]", show_default=False)] = None,
    restore: Annotated[bool, typer.Option("--restore", help="Bring these memories back to active")] = False,
    list_: Annotated[bool, typer.Option("--list", help="List archived memories")] = False,
    limit: Annotated[Optional[int], typer.Option("--limit", "-n", min=1, help="With --list: how many; by policy: at most this many changes")] = None,
    dry_run: DryRunOption = False,
    db: DbOption = None, scope: ScopeOption = None, now: NowOption = None, quiet: QuietOption = False,
    json: JsonOption = False, fmt: FormatOption = None,
) -> None:
    """Move memories out of search (intact: vectors, edges, history) and back with --restore.

    mem archive                                 # apply the lifecycle rules now
    mem archive 3f9a 7c21                       # these memories (handles)
    mem search "old deploy notes" --json | mem archive -
    mem archive --restore 3f9a
    mem archive --list
    """
    from mem.stages import archive as stage

    table = use_table(fmt, json)
    with open_context(db, scope=scope, now=now) as ctx:
        if list_:
            if ids or restore:
                raise BadInput("--list takes no ids and no --restore")
            emit(stage.archived(ctx, scope=scope, limit=limit or 50), table=table, ctx=ctx)
            return
        targets = _piped_ids("-") if ids == ["-"] else ids
        if not targets:
            if ids:  # '-' with nothing on stdin: nothing to do, not "archive by policy"
                return
            if restore:
                raise BadInput("--restore needs ids (or '-')")
            actions = list(stage.by_policy(ctx, scope=None if scope in (None, "*") else scope, dry_run=dry_run,
                                           limit=limit))
            emit(actions, table=table, ctx=ctx)
            archived = sum(1 for a in actions if a.get("action") == "archived")
            _stderr(f"archive: {archived} archived, {len(actions) - archived} other status changes"
                    f"{' (dry run)' if dry_run else ''}", quiet)
            return
        if dry_run:
            raise BadInput("--dry-run applies to archiving by policy only")
        outcomes = list(stage.restore(ctx, targets) if restore else stage.archive(ctx, targets))
        emit(outcomes, table=table, ctx=ctx)


def register(app: typer.Typer) -> None:
    app.command()(consolidate)
    app.command()(verify)
    app.command()(archive)
