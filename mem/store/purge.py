"""``forget --purge``: a memory's bytes leave the database file and its WAL, not only its rows.

A plain DELETE leaves the deleted cells on their pages, FTS5 keeps the terms in its own index
segments until they are merged, and the WAL keeps every frame written since the last checkpoint.
So a purge

1. runs with ``PRAGMA secure_delete = ON`` (deleted cells and freed pages are overwritten with zeros);
2. turns on FTS5's persistent ``secure-delete`` option, which removes a deleted row's entries from the
   index segments at once; the first time, an ``optimize`` also rewrites the index without every
   entry deleted before the option was on (an older text of this memory among them);
3. deletes the int8 vector from the vec0 table (sqlite-vec 0.1.9 zeroes its slot in the chunk, and a
   test checks the chunk);
4. deletes the row (FTS entries, vectors, token states, edges, entity links and assertions follow through triggers
   and foreign keys), entities no other memory mentions, and every changelog payload of the memory,
   keeping one tombstone: the id and the time; and the changelog rows telling why it superseded other
   memories (their reasons quote its values: "same slot, 90 d -> 180 d"). A memory it superseded is not
   left pointing at nothing, hidden for good: it takes what superseded the purged memory, if anything
   did, else it is live again (``release``);
5. after the commit, checkpoints the WAL into the file and truncates it (``scrub_wal``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mem.store import Store

log = logging.getLogger(__name__)

CHECKPOINT_TRIES = 5  # a reader in another process can hold the WAL back; retry briefly, then say so


@contextmanager
def secure_deletes(store: "Store") -> Iterator[None]:
    """Deleted content is overwritten with zeros on this connection for the duration."""
    if store.backend != "sqlite":  # PostgreSQL: dead rows are left to VACUUM (scrub_wal)
        yield
        return
    previous = int(store.conn.execute("PRAGMA secure_delete").fetchone()[0])
    store.conn.execute("PRAGMA secure_delete = ON")
    try:
        yield
    finally:
        store.conn.execute(f"PRAGMA secure_delete = {previous}")


def purge_memory(store: "Store", memory_id: str, *, at: str) -> list[str]:
    """Inside a write txn opened under ``secure_deletes``: delete one memory and every copy of its text.

    Returns the memories consolidation merged it into (``derived_from`` edges): they are memories of
    their own, kept, and may still hold its sentences."""
    rowid = store.rowid_of(memory_id)
    merged_into = [str(r[0]) for r in store.conn.execute(
        "SELECT src FROM edges WHERE dst = ? AND type = 'derived_from' ORDER BY src", (memory_id,))]
    if store._has_table("memory_vec"):
        store.conn.execute("DELETE FROM memory_vec WHERE rowid = ?", (rowid,))
    entity_ids = [r[0] for r in store.conn.execute(
        "SELECT entity_id FROM memory_entities WHERE memory_rowid = ?", (rowid,))]
    store.conn.execute("UPDATE communities SET label = NULL WHERE id IN "
                       "(SELECT community_id FROM community_members WHERE memory_rowid = ?)", (rowid,))
    store.conn.execute("DELETE FROM vectors WHERE rowid = ?", (rowid,))
    store.conn.execute("DELETE FROM token_states WHERE rowid = ?", (rowid,))
    # Before the row: under row-level security (README) a role sees history only of memories it sees.
    store.conn.execute("DELETE FROM changelog WHERE memory_id = ?", (memory_id,))
    store.conn.execute("DELETE FROM memories WHERE rowid = ?", (rowid,))
    for entity_id in entity_ids:
        store.conn.execute("DELETE FROM entities WHERE id = ? AND NOT EXISTS "
                           "(SELECT 1 FROM memory_entities WHERE entity_id = ?)", (entity_id, entity_id))
        store.conn.execute("UPDATE entities SET mention_count = (SELECT COUNT(*) FROM memory_entities "
                           "WHERE entity_id = ?) WHERE id = ?", (entity_id, entity_id))
    store.conn.execute("INSERT INTO changelog(at, op, memory_id, author, payload) VALUES (?, 'purge', ?, NULL, '{}')",
                       (at, memory_id))
    return merged_into


def release(store: "Store", memory_id: str, *, at: str) -> list[str]:
    """Inside the purge's write txn, before ``purge_memory``: the memories ``memory_id`` superseded take what
    superseded it (the chain A -> B -> C stays a chain when B goes), or, when nothing did, are live again;
    the changelog rows that told why it superseded them go. Returns the ids made live again."""
    from mem.store import lifecycle

    row = store.conn.execute("SELECT superseded_by FROM memories WHERE id = ?", (memory_id,)).fetchone()
    successor = row[0] if row else None
    restored = []
    for older in lifecycle.superseded_now(store, [memory_id]).get(memory_id, []):
        store.conn.execute("DELETE FROM changelog WHERE memory_id = ? AND op = 'supersede' "
                           "AND json_extract(payload, '$.superseded_by') = ?", (older, memory_id))
        if successor and successor != older:
            store.update_memory(older, {"superseded_by": successor}, at=at, op="supersede",
                                reason=f"what replaced it ({memory_id}) was purged; {successor} had replaced that")
            lifecycle.add_edge(store, successor, older, layer="lifecycle", type="supersedes", at=at)
        else:
            store.update_memory(older, {"superseded_by": None}, at=at, op="unsupersede",
                                reason=f"what replaced it ({memory_id}) was purged")
            restored.append(older)
    return restored


def optimize_fts(store: "Store") -> None:
    """Inside the purge's write txn, after the deletes: rewrite the FTS index as one segment."""
    if store.backend != "sqlite":  # PostgreSQL's postings are plain rows, deleted by its trigger
        return
    store.conn.execute("INSERT INTO memory_fts(memory_fts) VALUES ('optimize')")


def scrub_wal(store: "Store") -> bool:
    """After the purge commits: copy the WAL into the file and truncate it; False when a reader held it back.
    On PostgreSQL: VACUUM the tables that held the text (the server's WAL and backups are its own)."""
    if store.backend != "sqlite":
        store.conn.run("VACUUM memories, changelog, fts_postings, vectors, token_states")
        return True
    for attempt in range(CHECKPOINT_TRIES):
        busy, _, _ = store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if not busy:
            return True
        time.sleep(0.05 * 2**attempt)
    log.warning("another process is reading %s: its WAL is truncated at the next checkpoint", store.path)
    return False
