"""Store reads for a caller confined to some scopes (the MCP server's scope boundary).

Kept out of ``mem/store/__init__.py`` to avoid edit conflicts; still the only place with this SQL.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from mem.store import batches

if TYPE_CHECKING:
    from mem.store import Store

def scopes_of(store: "Store", memory_ids: Iterable[str]) -> dict[str, str]:
    """``{id: scope}`` for the ids that exist."""
    ids = list(dict.fromkeys(memory_ids))
    out: dict[str, str] = {}
    for chunk, marks in batches.in_lists(ids):
        out.update((str(i), str(s)) for i, s in store.conn.execute(
            f"SELECT id, scope FROM memories WHERE id IN ({marks})", chunk))
    return out


def scope_names(store: "Store") -> list[str]:
    return [str(r[0]) for r in store.conn.execute("SELECT DISTINCT scope FROM memories ORDER BY scope")]


def counts_in(store: "Store", scopes: Sequence[str]) -> dict[str, Any]:
    """Memory counts by status, scope, kind and layer over ``scopes`` only."""
    if not scopes:
        return {"memories": 0, "by_status": {}, "by_scope": {}, "by_kind": {}, "by_layer": {}, "superseded": 0}
    where = f"WHERE scope IN ({','.join('?' * len(scopes))})"
    args = list(scopes)

    def grouped(column: str) -> dict[str, int]:
        return {str(k): int(n) for k, n in store.conn.execute(
            f"SELECT {column}, COUNT(*) FROM memories {where} GROUP BY {column} ORDER BY 2 DESC", args)}

    by_status = grouped("status")
    return {"memories": sum(by_status.values()), "by_status": by_status, "by_scope": grouped("scope"),
            "by_kind": grouped("kind"), "by_layer": grouped("layer"),
            "superseded": int(store.conn.execute(
                f"SELECT COUNT(*) FROM memories {where} AND superseded_by IS NOT NULL", args).fetchone()[0])}
