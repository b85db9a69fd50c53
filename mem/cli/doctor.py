"""``mem doctor``: is this installation and database healthy? One record per check."""

from __future__ import annotations

from typing import Annotated

import typer

from mem.cli.common import DbOption, EmbedderOption, FormatOption, JsonOption, emit, reports_errors, use_table
from mem.errors import EmbedderError, StoreError


@reports_errors
def doctor(
    skip_embedder: Annotated[bool, typer.Option("--skip-embedder", help="Do not load the embedder (faster)")] = False,
    db: DbOption = None, embedder: EmbedderOption = None, json: JsonOption = False, fmt: FormatOption = None,
) -> None:
    """Check sqlite-vec, FTS5, the database (schema, integrity, index counts), the embedder and Ollama.

    Exits 5 when the store has a problem, 6 when the embedder does; each failed check says what to do.

    mem doctor
    mem doctor --json | jq 'select(.status != "ok")'
    """
    from mem.config import resolve_settings
    from mem.stages import doctor as stage

    settings = resolve_settings(db=db, embedder=embedder)
    checks = list(stage.run(settings, embed=not skip_embedder))
    emit(checks, table=use_table(fmt, json), columns=("check", "status", "detail", "fix", "ms"))
    failed = [c for c in checks if c.status == "fail"]
    store = [c.check for c in failed if c.area == "store"]
    if store:
        raise StoreError(f"doctor: {len(store)} store check(s) failed: {', '.join(store)}", checks=store)
    embed = [c.check for c in failed if c.area == "embedder"]
    if embed:
        raise EmbedderError(f"doctor: {len(embed)} embedder check(s) failed: {', '.join(embed)}", checks=embed)


def register(app: typer.Typer) -> None:
    app.command()(doctor)
