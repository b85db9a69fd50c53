"""``pending_links``: the memories a bulk import stored whose graph is not finished yet (m009)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mem.store import Store


def add(store: "Store", rows: Sequence[tuple[int, str | None]]) -> None:
    """Record ``(memory rowid, neighbours JSON)`` rows inside the write transaction that stored them."""
    if rows:
        store.conn.executemany("INSERT INTO pending_links(memory_rowid, neighbours) VALUES (?, ?)", rows)  # new rowids only


def first(store: "Store", limit: int) -> list[tuple[int, str | None]]:
    """The ``limit`` lowest pending rowids with their neighbours: the finishing pass goes in rowid order."""
    return [(int(r), n) for r, n in store.conn.execute(
        "SELECT memory_rowid, neighbours FROM pending_links ORDER BY memory_rowid LIMIT ?", (limit,))]


def done(store: "Store", rowids: Sequence[int]) -> None:
    """Forget finished rows (inside the transaction that finished them)."""
    store.conn.executemany("DELETE FROM pending_links WHERE memory_rowid = ?", [(r,) for r in rowids])


def count(store: "Store") -> int:
    return int(store.conn.execute("SELECT COUNT(*) FROM pending_links").fetchone()[0])
