"""Rich tables for people at a terminal; machines get JSON Lines instead."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

DEFAULT_COLUMNS = {
    "hit": ("rank", "score", "id", "kind", "text", "created_at"),
    "memory": ("id", "kind", "layer", "status", "text", "created_at"),
    "outcome": ("line", "status", "id", "reason"),
}


def _cell(value: Any, column: str) -> str:
    if value is None:
        return ""
    if column == "id" and isinstance(value, str) and len(value) == 36:
        return value[:13]  # the time-ordered head of a UUIDv7: enough to type back as a prefix
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, (list, dict)):
        import orjson

        return orjson.dumps(value).decode("utf-8")
    text = str(value)
    return text if len(text) <= 120 else text[:117] + "..."


def render(rows: Sequence[dict[str, Any]], columns: Sequence[str] = ()) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text  # plain Text: user content must never be read as markup

    console = Console()
    if not rows:
        console.print("[dim](nothing)[/dim]")
        return
    kind = rows[0].get("record", "")
    cols = list(columns or DEFAULT_COLUMNS.get(kind, ()) or rows[0].keys())
    cols = [c for c in cols if any(c in r for r in rows)] or list(rows[0].keys())
    table = Table(show_lines=False, header_style="bold")
    for col in cols:
        table.add_column(col, overflow="fold", no_wrap=col in ("id", "rank", "score", "status"))
    for row in rows:
        table.add_row(*(Text(_cell(row.get(c), c)) for c in cols))
    console.print(table)
