"""``mem graph ...``: the knowledge graph built at intake (neighbours, paths, entities, timeline,
causal chains, communities, stats, manual links, export). Thin wrappers over ``mem.stages.graph``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from mem.cli.common import (
    DbOption, FormatOption, JsonOption, NowOption, ScopeOption, emit, emit_one, open_context, reports_errors, split_csv,
    time_option, use_table,
)
from mem.errors import BadInput

graph_app = typer.Typer(
    name="graph",
    help="The knowledge graph built as memories arrive: entities, semantic/temporal/causal links, communities.",
    no_args_is_help=True,
)

LayerOption = Annotated[Optional[list[str]], typer.Option(
    "--layer", "-l", help="Only these layers: semantic, temporal, causal, entity, manual, lifecycle (repeatable)")]
IdArg = Annotated[str, typer.Argument(metavar="ID", help="Handle or id (or a unique id prefix, 4+ characters)")]

_NODE_COLUMNS = ("depth", "id", "text", "via", "from")


def _edge_columns(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # In a table, an edge reads better as "type (layer)" than as a JSON object.
    out = []
    for row in rows:
        via = row.get("via")
        if isinstance(via, dict):
            label = f"{via.get('type')} ({via.get('layer')})"
            if via.get("entity"):
                label += f" [{via['entity']}]"
            row = {**row, "via": label}
        out.append(row)
    return out


def _show(rows: list[dict[str, Any]], fmt: str | None, json: bool, columns: tuple[str, ...], ctx: Any) -> None:
    table = use_table(fmt, json)
    emit(_edge_columns(rows) if table else rows, table=table, columns=columns, ctx=ctx)


@graph_app.command()
@reports_errors
def neighbors(
    memory_id: IdArg,
    layer: LayerOption = None,
    depth: Annotated[int, typer.Option("--depth", "-d", min=1, max=4, help="Hops to follow")] = 1,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="At most this many neighbours")] = 100,
    db: DbOption = None, scope: ScopeOption = None, json: JsonOption = False, fmt: FormatOption = None,
) -> None:
    """Memories linked to one memory (every layer, or --layer), nearest and strongest first.

    mem graph neighbors 3f9a --depth 2 --layer causal
    """
    from mem.stages import graph

    with open_context(db) as ctx:
        rows = graph.neighbors(ctx, memory_id, layers=split_csv(layer), depth=depth, scope=scope or "*", limit=limit)
        _show(rows, fmt, json, ("depth", "id", "via", "text"), ctx)


@graph_app.command()
@reports_errors
def path(
    a: Annotated[str, typer.Argument(metavar="A", help="From this memory")],
    b: Annotated[str, typer.Argument(metavar="B", help="To this memory")],
    layer: LayerOption = None,
    db: DbOption = None, scope: ScopeOption = None, json: JsonOption = False, fmt: FormatOption = None,
) -> None:
    """The shortest chain of links from A to B (up to 3 hops); exits 3 when there is none."""
    from mem.stages import graph

    with open_context(db) as ctx:
        rows = graph.path(ctx, a, b, layers=split_csv(layer), scope=scope or "*")
        _show(rows, fmt, json, ("step", "id", "via", "text"), ctx)


@graph_app.command()
@reports_errors
def entities(
    top: Annotated[int, typer.Option("--top", "-n", min=1, help="How many")] = 50,
    db: DbOption = None, scope: ScopeOption = None, json: JsonOption = False, fmt: FormatOption = None,
) -> None:
    """The most mentioned entities (people, tools, packages, paths, concepts) in the scope."""
    from mem.stages import graph

    with open_context(db, scope=scope) as ctx:
        rows = graph.entities(ctx, top=top, scope=scope)
        _show(rows, fmt, json, ("key", "name", "type", "count", "aliases", "first_seen", "last_seen"), ctx)


@graph_app.command("entity")
@reports_errors
def entity_(
    name: Annotated[str, typer.Argument(help="Entity name, any spelling or alias (postgres, PostgreSQL, pg)")],
    db: DbOption = None, scope: ScopeOption = None, json: JsonOption = False, fmt: FormatOption = None,
) -> None:
    """One entity: its aliases, the memories mentioning it and related entities; exits 3 if unknown."""
    from mem.stages import graph

    with open_context(db, scope=scope) as ctx:
        record = graph.entity(ctx, name, scope=scope)
        emit_one(record, table=use_table(fmt, json), ctx=ctx)


@graph_app.command()
@reports_errors
def timeline(
    entity: Annotated[Optional[str], typer.Option("--entity", "-e", help="Only memories mentioning this entity")] = None,
    since: Annotated[Optional[str], typer.Option("--since", help="From this time on (event_at, else created_at): ISO-8601, 7d, yesterday, 'last week'")] = None,
    until: Annotated[Optional[str], typer.Option("--until", help="Before this time (event_at, else created_at); a phrase counts to its end")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="At most this many")] = 500,
    db: DbOption = None, scope: ScopeOption = None, json: JsonOption = False, fmt: FormatOption = None,
) -> None:
    """Memories in the order things happened (event_at, else created_at)."""
    from mem.stages import graph

    with open_context(db, scope=scope) as ctx:
        rows = list(graph.timeline(ctx, entity_name=entity, since=time_option(since, "since", ctx),
                                   until=time_option(until, "until", ctx), scope=scope, limit=limit))
        _show(rows, fmt, json, ("at", "id", "kind", "text"), ctx)


@graph_app.command()
@reports_errors
def causes(
    memory_id: IdArg,
    depth: Annotated[int, typer.Option("--depth", "-d", min=1, max=10, help="Hops each way")] = 4,
    db: DbOption = None, scope: ScopeOption = None, json: JsonOption = False, fmt: FormatOption = None,
) -> None:
    """The causal chain through a memory: causes first (root first), the memory, then its effects."""
    from mem.stages import graph

    with open_context(db) as ctx:
        rows = graph.causes(ctx, memory_id, depth=depth)
        _show(rows, fmt, json, ("direction", "depth", "id", "via", "text"), ctx)


@graph_app.command()
@reports_errors
def communities(
    stored: Annotated[bool, typer.Option("--stored", help="List the stored communities without recomputing")] = False,
    min_size: Annotated[int, typer.Option("--min-size", min=1, help="Smallest community kept")] = 2,
    db: DbOption = None, scope: ScopeOption = None, now: NowOption = None, json: JsonOption = False,
    fmt: FormatOption = None,
) -> None:
    """Detect communities (Leiden; Louvain where igraph is missing), store them with centroids, and list them."""
    from mem.stages import graph

    with open_context(db, scope=scope, now=now) as ctx:
        rows = graph.communities(ctx, scope=scope, recompute=not stored, min_size=min_size)
        _show(rows, fmt, json, ("community", "size", "label", "method"), ctx)


@graph_app.command()
@reports_errors
def stats(
    db: DbOption = None, scope: ScopeOption = None, json: JsonOption = False, fmt: FormatOption = None,
) -> None:
    """Edges by layer, type and origin; entities, mentions, communities, isolated memories."""
    from mem.stages import graph

    with open_context(db, scope=scope) as ctx:
        record = graph.stats(ctx, scope=scope)
        emit_one(record, table=use_table(fmt, json), ctx=ctx)


@graph_app.command()
@reports_errors
def link(
    a: Annotated[str, typer.Argument(metavar="A", help="From this memory")],
    b: Annotated[str, typer.Argument(metavar="B", help="To this memory")],
    kind: Annotated[str, typer.Option("--type", "-t", help="Link type: see_also, caused, resolved, motivated, related, ...")] = "related",
    weight: Annotated[float, typer.Option("--weight", "-w", help="Strength (> 0)")] = 1.0,
    db: DbOption = None, now: NowOption = None, json: JsonOption = False, fmt: FormatOption = None,
) -> None:
    """Link two memories by hand (origin 'manual'); a self-link or an existing link exits 4.

    mem graph link NEW OLD -t supersedes   # NEW replaces OLD: OLD leaves default search
    """
    from mem.stages import graph

    with open_context(db, now=now) as ctx:
        record = graph.link(ctx, a, b, kind=kind, weight=weight)
        _show([record], fmt, json, ("status", "src", "dst", "layer", "type", "weight"), ctx)


@graph_app.command()
@reports_errors
def unlink(
    a: Annotated[str, typer.Argument(metavar="A", help="One memory")],
    b: Annotated[str, typer.Argument(metavar="B", help="The other memory")],
    kind: Annotated[Optional[str], typer.Option("--type", "-t", help="Only links of this type")] = None,
    db: DbOption = None, now: NowOption = None, json: JsonOption = False, fmt: FormatOption = None,
) -> None:
    """Remove the links between two memories (both directions); exits 3 when there are none.

    mem graph unlink NEW OLD -t supersedes   # a wrong supersession undone: OLD is searchable again
    """
    from mem.stages import graph

    with open_context(db, now=now) as ctx:
        rows = graph.unlink(ctx, a, b, kind=kind)
        _show(rows, fmt, json, ("status", "src", "dst", "layer", "type", "origin", "restored"), ctx)


@graph_app.command()
@reports_errors
def export(
    fmt: Annotated[Optional[str], typer.Option("--format", "-f", help="graphml | dot | json | mermaid [default: from the -o extension, else json]", show_default=False)] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write to this file (atomically) instead of stdout")] = None,
    layer: LayerOption = None,
    no_entities: Annotated[bool, typer.Option("--no-entities", help="Leave entity nodes out")] = False,
    db: DbOption = None, scope: ScopeOption = None, json: JsonOption = False,
) -> None:
    """Export the scope's graph for people and tools (yEd/Gephi, Graphviz, JSON, Mermaid).

    mem graph export -o graph.dot && dot -Tsvg graph.dot > graph.svg
    """
    from mem.graph.export import EXTENSIONS
    from mem.stages import graph

    chosen = fmt or (EXTENSIONS.get(output.suffix.lower()) if output is not None else None) or "json"
    with open_context(db, scope=scope) as ctx:
        data = graph.export(ctx, chosen, scope=scope, layers=split_csv(layer), with_entities=not no_entities)
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    write_atomically(output, data)


def write_atomically(path: Path, data: bytes) -> None:
    """Write beside ``path`` then rename into place; any failure leaves nothing behind and exits 4."""
    import tempfile

    if path.is_dir():
        raise BadInput(f"cannot write {path}: it is a folder", path=str(path))
    folder = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise BadInput(f"cannot write {path}: {exc.strerror}", path=str(path)) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise BadInput(f"cannot write {path}: {exc.strerror}", path=str(path)) from None
        raise


def register(app: typer.Typer) -> None:
    app.add_typer(graph_app, name="graph")
