"""``mem scope``: the scope this folder works in, every scope, and moving memories between scopes.
Thin wrappers over ``mem.stages.scopes``."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from mem.cli.common import (
    DbOption, FormatOption, JsonOption, NowOption, ScopeOption, emit, emit_one, input_stream, open_context,
    reports_errors, use_table,
)
from mem.errors import BadInput

scope_app = typer.Typer(
    name="scope",
    help="Scopes: the project a folder's memories belong to (its git remote, else a repository id).",
    invoke_without_command=True,
)

DryRunOption = Annotated[bool, typer.Option("--dry-run", help="Report what would move; write nothing")]


@scope_app.callback()
@reports_errors
def show(
    ctx: typer.Context, db: DbOption = None, scope: ScopeOption = None, json: JsonOption = False,
    fmt: FormatOption = None,
) -> None:
    """The scope this folder works in, how it was derived, and what it holds.

    \b
    mem scope
    mem scope list
    mem scope rename api github.com/acme/api
    mem scope merge old-name github.com/acme/api
    mem list --scope github.com/acme/api --since 2026-11-01 --json | mem scope move acme-api-v2 -
    """
    if ctx.invoked_subcommand is not None:
        return
    from mem.stages import scopes as stage

    with open_context(db, scope=scope) as mctx:
        emit_one(stage.current(mctx), table=use_table(fmt, json))


@scope_app.command("list")
@reports_errors
def list_(db: DbOption = None, json: JsonOption = False, fmt: FormatOption = None) -> None:
    """Every scope with its memory counts, the folders it was used from and its former names."""
    from mem.stages import scopes as stage

    with open_context(db) as ctx:
        emit(stage.list_scopes(ctx), table=use_table(fmt, json),
             columns=("scope", "memories", "active", "roots", "aliases", "current"))


@scope_app.command("rename")
@reports_errors
def rename(
    old: Annotated[str, typer.Argument(help="The scope's current name")],
    new: Annotated[str, typer.Argument(help="Its new name (must hold no memories yet; else use merge)")],
    dry_run: DryRunOption = False, db: DbOption = None, now: NowOption = None, json: JsonOption = False,
    fmt: FormatOption = None,
) -> None:
    """Rename a scope: its memories, assertions, vectors and communities move; edges and history stay."""
    from mem.stages import scopes as stage

    with open_context(db, now=now) as ctx:
        emit_one(stage.rename(ctx, old, new, dry_run=dry_run), table=use_table(fmt, json))


@scope_app.command("merge")
@reports_errors
def merge(
    source: Annotated[str, typer.Argument(metavar="FROM", help="The scope to empty")],
    target: Annotated[str, typer.Argument(metavar="INTO", help="The scope that receives its memories")],
    create: Annotated[bool, typer.Option("--create", help="Create INTO if it does not exist yet")] = False,
    dry_run: DryRunOption = False, db: DbOption = None, now: NowOption = None, json: JsonOption = False,
    fmt: FormatOption = None,
) -> None:
    """Move every memory of FROM into INTO (which must exist unless --create); an interrupted merge resumes when rerun."""
    from mem.stages import scopes as stage

    with open_context(db, now=now) as ctx:
        emit_one(stage.merge(ctx, source, target, create=create, dry_run=dry_run), table=use_table(fmt, json))


@scope_app.command("move")
@reports_errors
def move(
    target: Annotated[str, typer.Argument(metavar="SCOPE", help="The scope the memories move to")],
    ids: Annotated[Optional[list[str]], typer.Argument(metavar="ID...", help="Ids or unique prefixes; '-' reads JSON Lines records (with 'id') from stdin", show_default=False)] = None,
    dry_run: DryRunOption = False, db: DbOption = None, now: NowOption = None, json: JsonOption = False,
    fmt: FormatOption = None,
) -> None:
    """Move some memories to another scope: how one scope shared by two repositories is split."""
    from mem.stages import scopes as stage

    chosen = _ids(ids or [])
    if not chosen:
        raise BadInput("give the ids to move, or '-' to read JSON Lines records from stdin")
    with open_context(db, now=now) as ctx:
        emit_one(stage.move(ctx, chosen, target, dry_run=dry_run), table=use_table(fmt, json))


def _ids(args: list[str]) -> list[str]:
    if args != ["-"]:
        return args
    from mem.jsonl import read_records

    out = []
    for line, record in read_records(input_stream("-")):
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            raise BadInput(f"line {line}: a record with an 'id' string is needed", line=line)
        out.append(record["id"])
    return out


def register(app: typer.Typer) -> None:
    app.add_typer(scope_app, name="scope")
