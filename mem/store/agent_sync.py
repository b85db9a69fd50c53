"""Store functions for reading the changelog by sequence number (MCP ``agent_sync``).

Kept out of ``mem/store/__init__.py`` to avoid edit conflicts; still the only place with this SQL.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from mem.store import Store


def changelog_after(store: "Store", seq: int, limit: int,
                    visible: Callable[[str | None, str | None], bool] | None = None) -> tuple[list[dict[str, Any]], int]:
    """Changelog rows with ``seq`` greater than the one given, oldest first: at most ``limit`` rows that
    ``visible(scope, memory_id)`` keeps (scope None: the memory is gone), and the last seq read.

    >>> changelog_after(store, 0, 100)[0][0]["op"]   # doctest: +SKIP
    'add'
    """
    out: list[dict[str, Any]] = []
    last = seq
    while len(out) < limit:
        rows = store.conn.execute(
            "SELECT c.seq, c.at, c.op, c.memory_id, c.author, c.payload, m.scope FROM changelog c "
            "LEFT JOIN memories m ON m.id = c.memory_id WHERE c.seq > ? ORDER BY c.seq LIMIT ?",
            (last, limit),
        ).fetchall()
        if not rows:
            break
        for r in rows:
            last = int(r[0])
            if visible is None or visible(r[6], r[3]):
                out.append({"seq": r[0], "at": r[1], "op": r[2], "memory_id": r[3], "author": r[4],
                            "payload": orjson.loads(r[5])})
                if len(out) == limit:
                    break
    return out, last


def last_seq(store: "Store") -> int:
    row = store.conn.execute("SELECT COALESCE(MAX(seq), 0) FROM changelog").fetchone()
    return int(row[0])
