"""SQL for scopes: which folders each scope was seen from, renamed scopes, and moving memories.

Functions taking a Store, like ``store/lifecycle.py``. ``move_memories`` runs inside the caller's
``store.write()``; the readers take no lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from mem.store import batches

if TYPE_CHECKING:
    from mem.store import Store


class ScopeRoot(NamedTuple):
    scope: str
    root: str
    identity: str
    how: str
    legacy: str
    first_seen: str
    last_seen: str


class ScopeAlias(NamedTuple):
    old: str
    new: str
    at: str
    reason: str


def root_record(store: "Store", root: str) -> ScopeRoot | None:
    row = store.conn.execute(
        "SELECT scope, root, identity, how, legacy, first_seen, last_seen FROM scope_roots WHERE root = ?", (root,)
    ).fetchone()
    return ScopeRoot(*row) if row else None


def record_root(store: "Store", record: ScopeRoot) -> None:
    """Remember that ``record.root`` resolved to ``record.scope`` (inside a write transaction)."""
    store.conn.execute(
        "INSERT INTO scope_roots(scope, root, identity, how, legacy, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(root) DO UPDATE SET scope = excluded.scope, identity = excluded.identity, how = excluded.how, "
        "legacy = excluded.legacy, last_seen = excluded.last_seen",
        tuple(record),
    )


def roots(store: "Store") -> list[ScopeRoot]:
    rows = store.conn.execute(
        "SELECT scope, root, identity, how, legacy, first_seen, last_seen FROM scope_roots ORDER BY scope, root"
    ).fetchall()
    return [ScopeRoot(*row) for row in rows]


def alias_of(store: "Store", old: str) -> ScopeAlias | None:
    row = store.conn.execute("SELECT old, new, at, reason FROM scope_aliases WHERE old = ?", (old,)).fetchone()
    return ScopeAlias(*row) if row else None


def aliases(store: "Store") -> list[ScopeAlias]:
    return [ScopeAlias(*row) for row in store.conn.execute("SELECT old, new, at, reason FROM scope_aliases ORDER BY at")]


def record_alias(store: "Store", alias: ScopeAlias) -> None:
    store.conn.execute(
        "INSERT INTO scope_aliases(old, new, at, reason) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(old) DO UPDATE SET new = excluded.new, at = excluded.at, reason = excluded.reason",
        tuple(alias),
    )


def has_memories(store: "Store", scope: str) -> bool:
    return store.conn.execute("SELECT 1 FROM memories WHERE scope = ? LIMIT 1", (scope,)).fetchone() is not None


def counts(store: "Store") -> list[tuple[str, int, int]]:
    """``(scope, memories, active memories)`` for every scope that holds a memory."""
    return [(r[0], int(r[1]), int(r[2])) for r in store.conn.execute(
        "SELECT scope, COUNT(*), SUM(status = 'active' AND superseded_by IS NULL) FROM memories GROUP BY scope ORDER BY scope"
    )]


def rowids_in(store: "Store", scope: str, *, limit: int) -> list[int]:
    return [int(r[0]) for r in store.conn.execute(
        "SELECT rowid FROM memories WHERE scope = ? ORDER BY rowid LIMIT ?", (scope, limit)
    )]


def move_memories(store: "Store", rowids: Sequence[int], new: str, *, at: str) -> int:
    """Give these memories scope ``new``: the row, its assertions and its vector index entry, one
    changelog ``update`` per memory (so export --since and sync carry the move). Edges, entities and
    older changelog rows are keyed by rowid or id and stay as they are."""
    if not rowids:
        return 0
    params = [(new, rowid) for rowid in rowids]
    ids = store.conn.execute(
        f"SELECT id, scope FROM memories WHERE rowid IN ({batches.marks(len(rowids))})", list(rowids)
    ).fetchall()
    store.conn.executemany("UPDATE memories SET scope = ? WHERE rowid = ?", params)
    store.conn.executemany("UPDATE assertions SET scope = ? WHERE memory_rowid = ?", params)
    if store._has_table("memory_vec"):
        store.rescope_vector_index(rowids, new)
    store._bump_vectors_epoch()  # warm in-RAM indexes keep each row's scope
    for memory_id, old in ids:
        store.log(at, "update", memory_id, None, {"scope": new, "from_scope": old})
    return len(ids)


def move_communities(store: "Store", old: str, new: str, *, keep: bool) -> None:
    """A renamed scope keeps its communities (``keep``); merged ones are dropped until the next
    consolidate rebuilds the target's."""
    if keep:
        store.conn.execute("UPDATE communities SET scope = ? WHERE scope = ?", (new, old))
    else:
        store.conn.execute("DELETE FROM communities WHERE scope = ?", (old,))


def scope_stats(store: "Store", scope: str) -> dict[str, Any]:
    row = store.conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(status = 'active' AND superseded_by IS NULL), 0), MIN(created_at), MAX(created_at) "
        "FROM memories WHERE scope = ?", (scope,)
    ).fetchone()
    return {"memories": int(row[0]), "active": int(row[1]), "oldest": row[2], "newest": row[3]}


def scopes_of(store: "Store", rowids: Sequence[int]) -> set[str]:
    out: set[str] = set()
    for chunk in map(list, batches.chunks(rowids)):
        out.update(r[0] for r in store.conn.execute(
            f"SELECT DISTINCT scope FROM memories WHERE rowid IN ({batches.marks(len(chunk))})", chunk))
    return out


def mark_reviewed(store: "Store", scopes: set[str], suffix: str) -> None:
    """Folder-name adoptions into these scopes were looked at (memories were moved out of them)."""
    store.conn.executemany(
        "UPDATE scope_aliases SET reason = reason || ? WHERE new = ? AND reason LIKE 'folder-name scope adopted%' "
        "AND reason NOT LIKE ?", [(suffix, scope, "%" + suffix) for scope in scopes])
