"""Rich tables for people at a terminal; machines get JSON Lines instead.

A table shows handles (``mem.ids``) instead of full ids and relative times ("3 days ago")
instead of timestamps; the JSON keeps both in full. The text column takes the room the others
leave, so a row reads at 80 columns and at 200.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

DEFAULT_COLUMNS = {
    "hit": ("rank", "id", "kind", "status", "text", "when", "why"),
    "memory": ("id", "kind", "layer", "status", "text", "when"),
    "outcome": ("line", "status", "id", "changes", "reason"),
    "event": ("at", "id", "kind", "text"),
    "finding": ("finding", "id", "other", "source", "detail", "text"),
    "action": ("phase", "action", "id", "detail"),
}
# Columns whose values are memory ids: shown as handles.
ID_COLUMNS = frozenset({"id", "src", "dst", "from", "other", "superseded_by", "existing", "memory_id"})
TIME_COLUMNS = frozenset({"when", "at", "created_at", "event_at", "updated_at", "last_accessed_at", "first_seen",
                          "last_seen", "since", "valid_until"})
# Short columns never wrap; "text" (and anything long) takes what is left.
_NARROW = frozenset({"rank", "score", "id", "kind", "layer", "status", "when", "at", "line", "depth", "step",
                     "direction", "finding", "phase", "action", "count", "size", "check", "ms"})
_WIDE = ("text", "reason", "detail", "why", "fix", "label", "name", "changes")
_CHANNEL_SHORT = {"semantic": "sem", "bm25": "bm", "entity": "ent", "temporal": "time", "community": "comm"}
# why's keys of the steps that move a hit: up ('newer', 'page'), or down ('other-env': it names only other
# deployment environments than the query; 'ended': its valid_until is behind the time asked about)
_MOVED = (("newer", ("contradicts", "current")), ("page", ("order",)), ("other-env", ("environment",)),
          ("ended", ("expired",)))


def shown(value: Any) -> str:
    """A memory string made safe for a terminal: control, escape and bidi characters visible (``mem.text.visible``)."""
    from mem.text import visible

    return visible(str(value))


def status_of(row: Mapping[str, Any]) -> str:
    """A memory's status as a person needs it: a memory a newer one replaced reads 'superseded'."""
    status = str(row.get("status") or "")
    if row.get("superseded_by") and status in ("", "active", "cold"):
        return "superseded"
    return status


def relative(value: Any, now: datetime) -> str:
    """'just now', '5 minutes ago', '3 days ago', 'in 2 hours'; the date itself past a year."""
    try:
        at = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return str(value)
    if at.tzinfo is None:
        at = at.replace(tzinfo=timezone.utc)
    seconds = (now - at).total_seconds()
    ahead, seconds = seconds < 0, abs(seconds)
    if seconds < 60:
        return "just now"
    day = 86_400
    # Each unit until the next reads better: 11 days, not "1 week"; 6 weeks, not "1 month".
    for limit, size, unit in ((3_600, 60, "min"), (day, 3_600, "hour"), (14 * day, day, "day"),
                              (60 * day, 7 * day, "week"), (365 * day, 30 * day, "month")):
        if seconds < limit:
            count = int(seconds // size)
            if unit == "day" and count == 1:
                return "tomorrow" if ahead else "yesterday"
            label = f"{count} {unit}{'s' if count != 1 and unit != 'min' else ''}"
            return f"in {label}" if ahead else f"{label} ago"
    return at.date().isoformat()


def compact_why(why: Any) -> str:
    """A hit's reasons in one short cell: each channel that found it and its rank there ('sem1 bm3'), then
    why a step moved it: up, 'newer' over an older memory it contradicts or changes, 'page' by the page
    model; down, 'other-env' about another deployment environment than the query's (the whole reason is in
    the JSON's ``why``)."""
    if not isinstance(why, dict):
        return ""
    parts = [f"{_CHANNEL_SHORT.get(name, name)}{info['rank']}" for name, info in why.items()
             if isinstance(info, dict) and "rank" in info]
    parts += [label for label, steps in _MOVED if any(step in why for step in steps)]
    return " ".join(parts)


class Cells:
    """Turns one row's values into display strings: handles, relative times, compact reasons."""

    def __init__(self, handles: Mapping[str, str], now: datetime) -> None:
        self.handles = handles
        self.now = now

    def __call__(self, row: Mapping[str, Any], column: str) -> str:
        """The cell, escaped for the terminal whatever its path (an unparsable time comes back as given)."""
        return shown(self._cell(row, column))

    def _cell(self, row: Mapping[str, Any], column: str) -> str:
        if column == "status":
            return status_of(row)
        if column == "changes":
            return self._changes(row)
        if column == "when":
            value = row.get("event_at") or row.get("created_at")
        else:
            value = row.get(column)
        if value is None:
            return ""
        if column == "why":
            return compact_why(value)
        if column in ID_COLUMNS and isinstance(value, str) and len(value) == 36:
            return self.handles.get(value, value)
        if column in TIME_COLUMNS and isinstance(value, str) and len(value) >= 10 and value[4:5] == "-":
            return relative(value, self.now)
        if isinstance(value, float):
            return f"{value:.3f}"
        if isinstance(value, (list, dict)):
            import orjson

            return shown(orjson.dumps(value).decode("utf-8"))
        return shown(value)

    def _changes(self, row: Mapping[str, Any]) -> str:
        """What an added memory did to others, by handle: "supersedes f431", "suspends f431 until 2037-01-06",
        "superseded by 2a79" (an import older than what it corrects)."""
        def named(ids: Any) -> str:
            return ", ".join(self.handles.get(i, i) for i in ids if isinstance(i, str))

        parts = []
        if row.get("supersedes"):
            parts.append(f"supersedes {named(row['supersedes'])}")
        if row.get("suspends"):
            until = row.get("until")
            ends = f" until {until[:10]}" if isinstance(until, str) and until[4:5] == "-" else ""
            parts.append(f"suspends {named(row['suspends'])}{ends}")
        if isinstance(row.get("superseded_by"), str):
            parts.append(f"superseded by {named([row['superseded_by']])}")
        return "; ".join(parts)


def _ids_in(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    return [v for r in rows for c in (*ID_COLUMNS, "supersedes", "suspends") for v in _id_values(r.get(c))]


def _id_values(value: Any) -> list[str]:
    """The memory ids in a cell: one, or a list of them."""
    values = value if isinstance(value, list) else [value]
    return [v for v in values if isinstance(v, str) and len(v) == 36]


def render(rows: Sequence[dict[str, Any]], columns: Sequence[str] = (), *,
           handles: Callable[[list[str]], Mapping[str, str]] | None = None, now: datetime | None = None) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text  # plain Text: user content must never be read as markup

    console = Console()
    rows = [r for r in rows if r.get("record") != "summary"]  # summaries go to stderr as one line
    if not rows:
        console.print("[dim](nothing)[/dim]")
        return
    kind = rows[0].get("record", "")
    cols = list(columns or DEFAULT_COLUMNS.get(kind, ()) or rows[0].keys())
    derived = {"when": ("created_at", "event_at"), "status": ("status",), "why": ("why",),
               "changes": ("supersedes", "suspends", "superseded_by")}
    cols = [c for c in cols if any(k in r for r in rows for k in derived.get(c, (c,)))] or list(rows[0].keys())
    cols = _fit(cols, rows, console.width)
    cell = Cells(handles(_ids_in(rows)) if handles else {}, now or datetime.now(timezone.utc))
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, header_style="bold", pad_edge=False)
    for col in cols:
        if col in _WIDE:
            table.add_column(col, overflow="fold", ratio=1, min_width=20 if col == "text" else 8)
        else:
            table.add_column(col, no_wrap=col in _NARROW, overflow="ellipsis" if col in _NARROW else "fold")
    for row in rows:
        table.add_row(*(Text(_clip(cell(row, c), c)) for c in cols))
    console.print(table)


def _fit(cols: list[str], rows: Sequence[Mapping[str, Any]], width: int) -> list[str]:
    """On a narrow terminal, leave out what says least, so the text keeps a readable width: the layer,
    the score, and a status column that would only repeat 'active'."""
    if width >= 120:
        return cols
    dropped = {"layer", "score"}
    if all(status_of(r) in ("active", "") for r in rows):
        dropped.add("status")
    return [c for c in cols if c not in dropped] or cols


def _clip(text: str, column: str) -> str:
    limit = 400 if column == "text" else 120
    return text if len(text) <= limit else text[: limit - 3] + "..."


def render_report(record: Mapping[str, Any], *, handles: Callable[[list[str]], Mapping[str, str]] | None = None,
                  now: datetime | None = None) -> None:
    """One summary record (stats, an entity, one memory) as tables: its scalars as 'field | value' rows,
    each breakdown (a dict of counts) as its own two-column table, each list of records as a table."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console()
    cell = Cells(handles(_ids_in([record])) if handles else {}, now or datetime.now(timezone.utc))
    scalars = Table(show_header=False, box=None, pad_edge=False)
    scalars.add_column("field", style="bold", no_wrap=True)
    scalars.add_column("value", overflow="fold")
    later: list[tuple[str, Any]] = []
    for key, value in record.items():
        if key == "record" or value is None or value == "" and record.get("record") == "memory":
            continue
        if isinstance(value, dict) and any(isinstance(v, dict) for v in value.values()):
            value = _flatten(value)  # an explanation: 'importance.recency', 'lifecycle.policy.floor', ...
        if key == "id" and isinstance(value, str) and cell.handles.get(value, value) != value:
            scalars.add_row(key, Text(f"{cell.handles[value]}  ({value})"))
        elif isinstance(value, dict) and value and all(not isinstance(v, (dict, list)) for v in value.values()):
            later.append((key, value))
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            later.append((key, value))
        else:
            scalars.add_row(key, Text(cell(record, key) if key in ID_COLUMNS | TIME_COLUMNS else _plain(value)))
    console.print(scalars)
    counts = [(k, v) for k, v in later if isinstance(v, dict)]
    if counts:  # every breakdown in one table, its label on the group's first row
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, header_style="bold", pad_edge=False)
        table.add_column("of", no_wrap=True)
        table.add_column("key", overflow="fold")
        table.add_column("value", justify="right", no_wrap=True)
        for key, breakdown in counts:
            for i, (name, count) in enumerate(breakdown.items()):
                table.add_row(key.replace("_", " ") if i == 0 else "", Text(shown(name)), Text(_plain(count)))
        console.print(table)
    for key, value in later:
        if isinstance(value, list):
            console.print(Text(key.replace("_", " "), style="bold"))
            render(value, handles=handles, now=now)


def _flatten(value: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in value.items():
        if isinstance(item, dict):
            out.update(_flatten(item, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = item
    return out


def _plain(value: Any) -> str:
    if value is None:
        return ""
    if value in ({}, []):
        return "none"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, (list, dict)):
        import orjson

        return shown(orjson.dumps(value).decode("utf-8"))
    return shown(value)
