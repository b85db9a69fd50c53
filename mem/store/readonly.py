"""Read-only look-ups for shell completion: no migration, no sqlite-vec, short timeouts.

Completion runs on every TAB press, so it must be fast and must never create, lock or change
the database. Every function here returns an empty result instead of raising.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

_LIMIT = 50


def connect(path: Path) -> Any | None:
    """A read-only connection to ``path``, or None when there is no usable database there.

    >>> connect(Path("/nonexistent/mem.db")) is None
    True
    """
    try:
        if not Path(path).is_file():
            return None
        import sqlean

        uri = Path(path).resolve().as_uri() + "?mode=ro"
        conn = sqlean.connect(uri, uri=True, timeout=0.2, isolation_level=None)
        conn.execute("PRAGMA busy_timeout = 200")
        conn.execute("PRAGMA query_only = ON")
        return conn
    except Exception:
        return None


def _rows(conn: Any, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    try:
        return [tuple(r) for r in conn.execute(sql, params).fetchall()]
    except Exception:
        return []


def memory_ids(conn: Any, prefix: str, limit: int = _LIMIT) -> list[tuple[str, str]]:
    """``(id, first words of the text)`` for live memories whose id starts with ``prefix``, newest first."""
    prefix = prefix.strip().lower()
    return [(str(i), str(t)) for i, t in _rows(
        conn,
        "SELECT id, substr(replace(text, char(10), ' '), 1, 60) FROM memories "
        "WHERE id >= ? AND id < ? AND status != 'archived' ORDER BY rowid DESC LIMIT ?",
        (prefix, prefix + "\uffff", limit),
    )]


def scopes(conn: Any, prefix: str, limit: int = _LIMIT) -> list[tuple[str, int]]:
    """``(scope, memory count)`` for scopes starting with ``prefix``, largest first."""
    return [(str(s), int(n)) for s, n in _rows(
        conn,
        "SELECT scope, COUNT(*) FROM memories WHERE substr(scope, 1, length(?)) = ? "
        "GROUP BY scope ORDER BY 2 DESC, 1 LIMIT ?",
        (prefix, prefix, limit),
    )]


def tags(conn: Any, prefix: str, limit: int = _LIMIT) -> list[tuple[str, int]]:
    """``(tag, memory count)`` for tags starting with ``prefix``, most used first."""
    return [(str(t), int(n)) for t, n in _rows(
        conn,
        "SELECT j.value, COUNT(*) FROM memories m, json_each(m.tags) j "
        "WHERE m.status != 'archived' AND substr(j.value, 1, length(?)) = ? "
        "GROUP BY j.value ORDER BY 2 DESC, 1 LIMIT ?",
        (prefix, prefix, limit),
    )]
