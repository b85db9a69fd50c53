"""Dynamic shell completion: memory ids, scopes, kinds, tags (Typer ``autocompletion=`` callbacks).

Each callback runs inside the ``_MEM_COMPLETE`` protocol on every TAB press: it opens the
database read-only, answers within a few milliseconds, and never raises (a completion error
would print a traceback into the user's prompt). Only light imports at module level: this
module is imported by every command's option definitions.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

Candidates = list[tuple[str, str]]

EMBEDDERS = (("minilm", "embedded all-MiniLM-L6-v2 (offline)"), ("hash", "feature hashing (instant)"),
             ("ollama:", "an Ollama embedding model, e.g. ollama:nomic-embed-text"))
FORMATS = (("table", "a table for people"), ("jsonl", "JSON Lines"))
STATUSES = (("active", ""), ("cold", ""), ("archived", ""), ("all", "every status"))


def _db_path(ctx: typer.Context | None) -> Path | None:
    """The database the command line points at: --db if already typed, else MEM_DB/config/default."""
    try:
        node = ctx
        while node is not None:
            db = node.params.get("db") if node.params else None
            if db:
                return Path(db).expanduser()
            node = node.parent
        from mem.config import resolve_settings

        return resolve_settings().db_path
    except Exception:
        return None


def _safe(func: Callable[..., Candidates]) -> Callable[..., Candidates]:
    def wrapper(ctx: typer.Context, incomplete: str) -> Candidates:
        try:
            return func(ctx, incomplete or "")
        except Exception:  # never break the user's prompt
            return []

    wrapper.__name__ = func.__name__
    wrapper.__doc__ = func.__doc__
    return wrapper


def _with_db(ctx: typer.Context, query: Callable[[Any], Candidates]) -> Candidates:
    from mem.store import readonly

    path = _db_path(ctx)
    conn = readonly.connect(path) if path else None
    if conn is None:
        return []
    try:
        return query(conn)
    finally:
        conn.close()


def _last_piece(incomplete: str) -> tuple[str, str]:
    """Split ``a,b,c`` into (``a,b,``, ``c``) so comma-separated values complete their last item."""
    head, sep, tail = incomplete.rpartition(",")
    return (head + sep, tail)


@_safe
def complete_ids(ctx: typer.Context, incomplete: str) -> Candidates:
    """Memory ids starting with what was typed, each with the start of its text (``mem get 0193<TAB>``)."""
    from mem.store import readonly

    return _with_db(ctx, lambda conn: readonly.memory_ids(conn, incomplete))


@_safe
def complete_scopes(ctx: typer.Context, incomplete: str) -> Candidates:
    """Scopes present in the database, largest first (``*`` is not offered: bash would glob it)."""
    from mem.store import readonly

    return _with_db(ctx, lambda conn: [(s, f"{n} memories") for s, n in readonly.scopes(conn, incomplete)])


@_safe
def complete_tags(ctx: typer.Context, incomplete: str) -> Candidates:
    """Tags in use, most used first; completes the last item of a comma-separated list."""
    from mem.store import readonly

    head, tail = _last_piece(incomplete)
    return _with_db(ctx, lambda conn: [(head + t, f"{n} memories") for t, n in readonly.tags(conn, tail)])


@_safe
def complete_kinds(ctx: typer.Context, incomplete: str) -> Candidates:
    """The memory kinds; completes the last item of a comma-separated list.

    >>> complete_kinds(None, "fact,dec")
    [('fact,decision', '')]
    """
    from mem.records import KINDS

    head, tail = _last_piece(incomplete)
    return [(head + k, "") for k in KINDS if k.startswith(tail)]


@_safe
def complete_embedders(ctx: typer.Context, incomplete: str) -> Candidates:
    return [(name, help_) for name, help_ in EMBEDDERS if name.startswith(incomplete)]


@_safe
def complete_formats(ctx: typer.Context, incomplete: str) -> Candidates:
    return [(name, help_) for name, help_ in FORMATS if name.startswith(incomplete)]


@_safe
def complete_statuses(ctx: typer.Context, incomplete: str) -> Candidates:
    return [(name, help_) for name, help_ in STATUSES if name.startswith(incomplete)]
