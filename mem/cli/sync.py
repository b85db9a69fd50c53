"""``mem sync OTHER``: exchange changes with another store (a file or a postgresql:// URL)."""

from __future__ import annotations

from typing import Annotated

import typer

from mem.cli.common import DbOption, FormatOption, JsonOption, NowOption, emit_one, open_context, reports_errors, use_table


@reports_errors
def sync(
    other: Annotated[str, typer.Argument(help="The other store: a database file or a postgresql:// URL")],
    db: DbOption = None, now: NowOption = None, json: JsonOption = False, fmt: FormatOption = None,
) -> None:
    """Exchange what changed since the last sync with OTHER, both ways; safe to rerun or interrupt.

    A memory changed on both sides keeps the newer version; 'mem verify' reports the other as a conflict.

    mem sync postgresql://me@team-db/mem
    mem sync ~/backup/mem.db
    """
    from mem.stages import sync as stage

    with open_context(db, now=now, create=True) as here, open_context(other, now=now, create=True) as there:
        emit_one(stage.run(here, there), table=use_table(fmt, json), ctx=here)


def register(app: typer.Typer) -> None:
    app.command()(sync)
