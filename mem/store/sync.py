"""SQL for ``mem sync``: the store's identity, the changelog read by sequence number, and conflicts.

A changelog row written while ``store.sync_origin`` is set (the sync stage applying another
store's changes) carries ``sync_from`` in its payload: that is how a sync tells the changes it
brought in from the ones made here, so nothing echoes back and no echo counts as a local edit.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

if TYPE_CHECKING:
    from mem.store import Store


class Change(NamedTuple):
    seq: int
    op: str
    memory_id: str | None
    sync_from: str | None  # the store this change was synced in from; None when made here
    link_to: str | None = None  # a link change (op "link" / "unlink"): the other memory and the type
    link_type: str | None = None


def store_id(store: "Store") -> str:
    """This database's identity (a UUID made on first use, kept in ``meta``): what peers key progress on."""
    value = store.get_meta("store_id")
    if value:
        return value
    with store.write():
        value = store.get_meta("store_id")
        if not value:
            value = str(uuid.uuid4())
            store.set_meta("store_id", value)
    return value


def changes_after(store: "Store", seq: int, limit: int) -> list[Change]:
    """Changelog rows after ``seq``, oldest first, at most ``limit``."""
    rows = store.conn.execute(
        "SELECT seq, op, memory_id, json_extract(payload, '$.sync_from'), json_extract(payload, '$.dst'), "
        "json_extract(payload, '$.type') FROM changelog WHERE seq > ? ORDER BY seq LIMIT ?", (seq, limit))
    return [Change(int(r[0]), str(r[1]), r[2], r[3], r[4], r[5]) for r in rows]


def changed_here_since(store: "Store", memory_id: str, seq: int) -> bool:
    """Whether ``memory_id`` was changed in this store (not by a sync) after changelog ``seq``."""
    row = store.conn.execute(
        "SELECT 1 FROM changelog WHERE memory_id = ? AND seq > ? AND op != 'conflict' "
        "AND json_extract(payload, '$.sync_from') IS NULL LIMIT 1", (memory_id, seq)).fetchone()
    return row is not None


def open_conflicts(store: "Store", ids: Any = None) -> list[dict[str, Any]]:
    """Conflicts a sync recorded that no later change made here has settled, oldest first:
    ``{"seq", "at", "id", "kept", "other", "peer"}`` (``other``: the version not kept)."""
    rows = store.conn.execute(
        "SELECT c.seq, c.at, c.memory_id, c.payload FROM changelog c WHERE c.op = 'conflict' AND NOT EXISTS ("
        "SELECT 1 FROM changelog l WHERE l.memory_id = c.memory_id AND l.seq > c.seq AND l.op != 'conflict' "
        "AND json_extract(l.payload, '$.sync_from') IS NULL) ORDER BY c.seq").fetchall()
    out = []
    for seq, at, memory_id, payload in rows:
        if ids is not None and memory_id not in ids:
            continue
        body = orjson.loads(payload)
        out.append({"seq": int(seq), "at": at, "id": memory_id, "kept": body.get("kept"), "other": body.get("other"),
                    "peer": body.get("sync_from")})
    return out
