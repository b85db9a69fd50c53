"""Store functions for reading the changelog by sequence number (MCP ``agent_sync``).

Kept out of ``mem/store/__init__.py`` to avoid edit conflicts; still the only place with this SQL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from mem.store import Store


def changelog_after(store: "Store", seq: int, limit: int) -> list[dict[str, Any]]:
    """Changelog rows with ``seq`` greater than the one given, oldest first, at most ``limit``.

    >>> changelog_after(store, 0, 100)[0]["op"]   # doctest: +SKIP
    'add'
    """
    rows = store.conn.execute(
        "SELECT seq, at, op, memory_id, author, payload FROM changelog WHERE seq > ? ORDER BY seq LIMIT ?",
        (seq, limit),
    ).fetchall()
    return [{"seq": r[0], "at": r[1], "op": r[2], "memory_id": r[3], "author": r[4], "payload": orjson.loads(r[5])}
            for r in rows]


def last_seq(store: "Store") -> int:
    row = store.conn.execute("SELECT COALESCE(MAX(seq), 0) FROM changelog").fetchone()
    return int(row[0])
