"""New entries of the int8 KNN index (``memory_vec``, sqlite-vec's vec0) written a chunk at a time.

vec0 has no multi-row write: each row of an ``INSERT`` (``executemany`` included) is its own
``xUpdate``, which inserts a ``_rowids`` row, looks up its partition's latest chunk, opens three
blobs (the chunk's validity bits, its rowids, its 512 KB of vectors: each open compiles a small
program and walks the overflow chain to the offset) and updates the ``_rowids`` row again: ~65k
instructions and ~30 us of CPU a row, more than the memory row itself in a bulk import. Here the
same rows go into vec0's shadow tables directly, in the order and places vec0 gives them: each
row takes the first free slot of its scope's latest chunk (a new chunk when that one is full),
so every shadow row, blob and sequence ends up byte for byte what the ``INSERT`` leaves
(``tests/test_vec0_rows.py`` holds it to vec0 itself under interleaved scopes, deletes and full
chunks). A chunk's blobs are then written once each, with an ``UPDATE`` of the same size, which
SQLite overwrites in place, writing only the pages that changed.

Only for the storage layout this was checked against (sqlite-vec 0.1.9's shadow tables, as
``Store._create_vec_index`` declares the table); anything else (another sqlite-vec, an older
table) gets ``None`` from ``layout`` and the caller inserts through vec0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

VERSION = "v0.1.9"
# The shadow tables vec0 v0.1.9 makes for ``vec0(embedding int8[D] distance_metric=cosine, scope text
# partition key)`` (names and columns: what this module writes).
_SHADOWS = {
    "memory_vec_chunks": 'CREATE TABLE "memory_vec_chunks"(chunk_id INTEGER PRIMARY KEY AUTOINCREMENT,'
                         "size INTEGER NOT NULL,sequence_id integer,partition00,validity BLOB NOT NULL, rowids BLOB NOT NULL)",
    "memory_vec_rowids": 'CREATE TABLE "memory_vec_rowids"(rowid INTEGER PRIMARY KEY AUTOINCREMENT,id,'
                         "chunk_id INTEGER,chunk_offset INTEGER)",
    "memory_vec_vector_chunks00": 'CREATE TABLE "memory_vec_vector_chunks00"(rowid PRIMARY KEY,vectors BLOB NOT NULL)',
}
CHUNK_SIZE = 1024  # vec0's default chunk_size (the table declares none)
# Rows a write needs before this pays: it reads and rewrites the chunk's whole vector blob once, where
# vec0 writes each row into it (one row a call: ~1.5 ms against ~0.23 ms of CPU; even at about 16 a call,
# 35-42 us against ~120 us a row at 256)
MIN_ROWS = 16


def layout(conn: Any, dim: int) -> int | None:
    """``dim`` when ``memory_vec`` is the table this module writes (this sqlite-vec, these shadow
    tables, int8[dim] partitioned by scope, the default chunk size), else None."""
    try:
        if conn.execute("SELECT vec_version()").fetchone()[0] != VERSION:
            return None
        found = dict(conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name LIKE 'memory\\_vec%' ESCAPE '\\'"))
    except Exception:  # no sqlite-vec loaded: nothing to write here
        return None
    declared = f"CREATE VIRTUAL TABLE memory_vec USING vec0(embedding int8[{dim}] distance_metric=cosine, scope text partition key)"
    if found.get("memory_vec") != declared or set(found) - {"memory_vec", "memory_vec_info"} != set(_SHADOWS):
        return None
    if any(found[name] != sql for name, sql in _SHADOWS.items()):
        return None
    return dim


class _Chunk:
    """One vec0 chunk being filled: its validity bits, and the slots it is given (with the rows that fill them)."""

    __slots__ = ("id", "validity", "rowids", "next", "new", "slots", "rows")

    def __init__(self, chunk_id: int, validity: bytes, rowids: bytes, new: bool) -> None:
        self.id, self.new, self.next = chunk_id, new, 0
        self.validity, self.rowids = bytearray(validity), rowids
        self.slots: list[int] = []
        self.rows: list[int] = []  # positions in the rows given to ``insert``

    def take(self) -> int | None:
        """The first slot whose validity bit is clear (vec0's choice), marked taken; None when the chunk is full."""
        validity, slot = self.validity, self.next
        while slot < CHUNK_SIZE:
            byte = validity[slot >> 3]
            if byte == 0xFF:
                slot = (slot | 7) + 1
            elif byte >> (slot & 7) & 1:
                slot += 1
            else:
                validity[slot >> 3] = byte | 1 << (slot & 7)
                self.next = slot + 1
                return slot
        self.next = slot
        return None


def insert(conn: Any, rowids: Sequence[int], scopes: Sequence[str], vectors: "np.ndarray") -> None:
    """Inside a write transaction: vec0 entries for ``rowids`` (not in the table yet) in ``scopes``, their
    int8 ``vectors`` one a row, as ``INSERT INTO memory_vec(rowid, embedding, scope)`` of each row in
    order would write them."""
    import numpy as np

    dim = vectors.shape[1]
    chunks: dict[str, _Chunk] = {}  # scope -> its latest chunk
    touched: list[_Chunk] = []
    placed: list[tuple[int, int, int]] = []  # _rowids rows: (rowid, chunk_id, chunk_offset)
    for row, (rowid, scope) in enumerate(zip(rowids, scopes)):
        chunk = chunks.get(scope)
        if chunk is None:
            found = conn.execute("SELECT chunk_id, validity, rowids FROM memory_vec_chunks WHERE partition00 = ? "
                                 "ORDER BY chunk_id DESC LIMIT 1", (scope,)).fetchone()
            if found is not None:
                chunk = chunks[scope] = _Chunk(int(found[0]), found[1], found[2], new=False)
                touched.append(chunk)
        slot = chunk.take() if chunk is not None else None
        if slot is None:  # none yet, or the latest is full: vec0 makes the next one
            chunk_id = conn.execute(
                "INSERT INTO memory_vec_chunks(size, validity, rowids, partition00) VALUES (?, zeroblob(?), zeroblob(?), ?)",
                (CHUNK_SIZE, CHUNK_SIZE // 8, CHUNK_SIZE * 8, scope)).lastrowid
            chunk = chunks[scope] = _Chunk(int(chunk_id), bytes(CHUNK_SIZE // 8), bytes(CHUNK_SIZE * 8), new=True)
            touched.append(chunk)
            slot = chunk.take()
        chunk.slots.append(slot)
        chunk.rows.append(row)
        placed.append((rowid, chunk.id, slot))
    conn.executemany("INSERT INTO memory_vec_rowids(rowid, chunk_id, chunk_offset) VALUES (?, ?, ?)", placed)
    given = np.asarray(rowids, dtype="<i8")
    width = CHUNK_SIZE * dim
    for chunk in touched:
        if not chunk.slots:  # looked up, nothing placed in it
            continue
        if chunk.new:
            stored = np.zeros((CHUNK_SIZE, dim), dtype=np.int8)
        else:
            blob = conn.execute("SELECT vectors FROM memory_vec_vector_chunks00 WHERE _rowid_ = ?", (chunk.id,)).fetchone()
            if blob is None or len(blob[0]) != width:
                raise ValueError(f"vec0 chunk {chunk.id} has no vectors of {width} bytes")
            stored = np.frombuffer(blob[0], dtype=np.int8).reshape(CHUNK_SIZE, dim).copy()
        held = np.frombuffer(chunk.rowids, dtype="<i8").copy()
        held[chunk.slots] = given[chunk.rows]
        stored[chunk.slots] = vectors[chunk.rows]
        conn.execute("UPDATE memory_vec_chunks SET validity = ?, rowids = ? WHERE chunk_id = ?",
                     (bytes(chunk.validity), held.tobytes(), chunk.id))
        if chunk.new:  # its declared column "rowid" is not the table's rowid: vec0 sets both to the chunk's id
            conn.execute("INSERT INTO memory_vec_vector_chunks00(_rowid_, rowid, vectors) VALUES (?, ?, ?)",
                         (chunk.id, chunk.id, stored.tobytes()))
        else:  # the same size: SQLite overwrites the blob in place, writing only the pages that changed
            conn.execute("UPDATE memory_vec_vector_chunks00 SET vectors = ? WHERE _rowid_ = ?", (stored.tobytes(), chunk.id))
