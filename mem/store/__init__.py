"""The Store: the one place that holds SQL. Stages call its methods, never ``conn.execute``."""

from __future__ import annotations

import operator
import os
import random
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from mem import ids
from mem.errors import Ambiguous, BadInput, NotFound, StoreError
from mem.records import MEMORY_FIELDS, Memory
from mem.store import batches, vec0_rows
from mem.store.migrations import LATEST, MIGRATIONS

if TYPE_CHECKING:
    import numpy as np


_FIELD_INDEX = {name: i for i, name in enumerate(MEMORY_FIELDS)}
_STORED_AS: dict[str, Any] = {"tags": lambda v: _json(v), "meta": lambda v: _json(v), "pinned": int}  # columns not stored as-is
_INSERT_MEMORY = f"INSERT INTO memories({', '.join(MEMORY_FIELDS)}) VALUES ({', '.join('?' for _ in MEMORY_FIELDS)})"
_MEMORY_VALUES = operator.attrgetter(*MEMORY_FIELDS)  # a memory's column values, in MEMORY_FIELDS order
_CONVERTED = tuple((_FIELD_INDEX[name], convert) for name, convert in _STORED_AS.items())
# A memory written with its rowid given (bulk_writes(ahead=True)): the rowid SQLite would pick, max + 1.
_INSERT_MEMORY_AT = f"INSERT INTO memories({', '.join(MEMORY_FIELDS)}, rowid) VALUES ({', '.join('?' for _ in MEMORY_FIELDS)}, ?)"
_INSERT_LOG = "INSERT INTO changelog(at, op, memory_id, author, payload) VALUES (?, ?, ?, ?, ?)"
BUSY_TIMEOUT_MS = 5000
_CHECKPOINT_EVERY_S = 0.05  # Store.checkpoints_aside: how often its thread looks for new commits to checkpoint
BULK_CACHE_KIB = 65536  # Store.bulk_cache: the page cache while a bulk intake writes its chunks (64 MB)
WRITE_RETRIES = 8
# A handle is a prefix of the last 12 hex digits of the UUIDv7 (random; the head is a timestamp).
_TAIL = "substr(id, 25)"
_COLUMNS = ", ".join(f"m.{name}" for name in MEMORY_FIELDS)
# Columns a caller may change with Store.update; everything else is derived or immutable.
UPDATABLE = frozenset(
    {"text", "kind", "tags", "meta", "layer", "pinned", "confidence", "verification", "importance", "surprise",
     "status", "superseded_by", "event_at", "valid_until", "content_hash", "source_hash", "updated_at", "structure"}
)


class PriorRow(NamedTuple):
    """The columns the search priors read; attribute names match Memory's."""

    created_at: str
    access_count: int
    confidence: float
    layer: int
    pinned: int
    status: str
    verification: str
    surprise: float
    tags: list[str]


def _is_busy(exc: Exception) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _row_to_memory(row: Sequence[Any]) -> Memory:
    values = dict(zip(MEMORY_FIELDS, row))
    values["tags"] = orjson.loads(values["tags"])
    values["meta"] = orjson.loads(values["meta"])
    values["pinned"] = bool(values["pinned"])
    return Memory(**values)


def _json(value: Any) -> str:
    return orjson.dumps(value).decode("utf-8")


def _bind_as_is(sqlean: Any) -> None:
    """Let the sqlite module bind NULL and bytes parameters without its adaptation search.

    It binds an exact int, float, str or bytearray directly, and asks anything else (None and bytes
    included) for an adapter: a registry lookup, then ``__adapt__`` on its protocol and ``__conform__``
    on the value, two failed attribute lookups, each formatting an AttributeError message (~5k
    instructions a parameter; a bulk intake binds about 12 a memory: its NULL columns, vectors,
    changelog authors). Registered adapters that hand the value back as it is end the search at the
    lookup; what is bound is the same. Process-wide and idempotent, like the registry."""
    sqlean.register_adapter(type(None), {}.get)  # {}.get(None) is None: an identity callable in C
    sqlean.register_adapter(bytes, bytes)  # bytes(b) is b for exact bytes


def _private_folders(folder: Path) -> None:
    """Create ``folder`` and any missing parents 0700 whatever the umask (mkdir's mode is masked by it)."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for new in reversed(missing):
        try:
            new.mkdir(mode=0o700)
        except FileExistsError:  # another process made it first: leave its mode alone
            continue
        os.chmod(new, 0o700)


class Store:
    """An open database file. Use as a context manager: ``with Store.open(path) as store: ...``.

    ``path`` may instead be a ``postgresql://`` URL: ``open`` then returns the PostgreSQL store
    (``mem.store.postgres.PgStore``), which shares this class's SQL through ``mem.store.dialect``.
    """

    backend = "sqlite"
    integrity_check_name = "PRAGMA integrity_check"

    def __init__(self, conn: Any, path: Path) -> None:
        self.conn = conn
        self.path = path
        self._vec_dim: int | None = None
        # the int8 KNN table's width when mem.store.vec0_rows writes its entries, 0 when vec0's INSERT does
        # (another layout), None until checked
        self._vec0_rows: int | None = None
        self._terms: Any = None  # mem.store.terms.TermIndex, made on the first BM25 search
        self.sync_origin: str | None = None  # while ``mem sync`` applies another store's changes: its id
        self._log_rows: list[tuple[Any, ...]] | None = None  # changelog rows held for one executemany (bulk_writes)
        # bulk_writes: rowids above _fts_after (up to _fts_newest, inserted) have no full-text row yet
        self._fts_after: int | None = None
        self._fts_newest = 0
        # bulk_writes(ahead=True): memory rows held for one executemany, and the rowid the next one gets
        self._memory_rows: list[list[Any]] | None = None
        self._next_rowid = 0

    # ----------------------------------------------------------------- opening
    @classmethod
    def open(cls, path: Path, *, create: bool = True) -> "Store":
        """Open (and create, private to the user) the database at ``path``, migrated to the latest schema."""
        from mem.config import is_db_url

        if is_db_url(path):
            from mem.store.postgres import PgStore

            return PgStore.open(path, create=create)
        import sqlean

        _bind_as_is(sqlean)
        path = Path(path)
        if path.is_dir():
            raise StoreError(f"database path {path} is a folder; give a file path with --db or MEM_DB", path=str(path))
        if not path.exists():
            if not create:
                raise StoreError(f"no database at {path}; `mem add` creates one", path=str(path))
            try:
                _private_folders(path.parent)
                fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
                os.close(fd)
            except OSError as exc:
                raise StoreError(f"cannot create database {path}: {exc.strerror}", path=str(path)) from None
        try:
            # prepared statements kept: intake's IN (?, ...) lists of every length and its key lookups cycled through
            # the default 128, preparing ~3.6 statements again a memory (bench/README.md, "Sixteenth session")
            conn = sqlean.connect(str(path), isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False,
                                   cached_statements=1024)
        except sqlean.Error as exc:
            raise StoreError(f"cannot open database {path}: {exc}", path=str(path)) from None
        store = cls(conn, path)
        try:
            store._configure()
            store._load_vec()
            store._migrate()
        except Exception:
            conn.close()
            raise
        return store

    def _configure(self) -> None:
        import sqlean

        try:
            self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            mode = self.conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            self.conn.execute("PRAGMA foreign_keys = ON")
            self.conn.execute("PRAGMA synchronous = NORMAL")  # safe with WAL: a crash loses no committed txn's integrity
        except sqlean.DatabaseError as exc:
            raise StoreError(f"{self.path} is not a usable SQLite database: {exc}", path=str(self.path)) from None
        self.read_only = mode.lower() != "wal" and not os.access(self.path, os.W_OK)

    def _load_vec(self) -> None:
        try:
            import sqlite_vec

            self.conn.enable_load_extension(True)
            sqlite_vec.load(self.conn)
            self.conn.enable_load_extension(False)
        except Exception as exc:
            raise StoreError(
                f"cannot load sqlite-vec ({exc}); reinstall mem with 'pip install --force-reinstall sqlite-vec sqlean-py'"
            ) from None

    def _migrate(self) -> None:
        version = self.schema_version()
        if version > LATEST:
            raise StoreError(
                f"{self.path} has schema version {version}, newer than this mem understands ({LATEST}); upgrade mem",
                path=str(self.path), schema=version,
            )
        if version == LATEST:
            return
        if not self._writable():
            raise StoreError(f"{self.path} needs a schema upgrade but is read-only", path=str(self.path))
        with self.write():
            version = self.schema_version()  # another process may have migrated while we waited
            self._before_migrations()
            for number in range(version + 1, LATEST + 1):
                self._run_migration(number)
                self._set_schema_version(number)

    # Schema bookkeeping: the parts of migrating that differ by backend (mem.store.postgres).
    def schema_version(self) -> int:
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    def _writable(self) -> bool:
        return os.access(self.path, os.W_OK)

    def data_version(self) -> int | None:
        """A number that changes when another connection commits (SQLite's ``data_version``): what this
        connection read earlier still holds while it stays the same; None where there is no such number."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def _before_migrations(self) -> None:
        """What a database needs before its pending migrations run (nothing, on SQLite)."""

    def _run_migration(self, number: int) -> None:
        MIGRATIONS[number - 1](self.conn)

    def _set_schema_version(self, number: int) -> None:
        self.conn.execute(f"PRAGMA user_version = {number}")

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ transactions
    @contextmanager
    def write(self) -> Iterator[None]:
        """One short write transaction (``BEGIN IMMEDIATE``), retried with jitter while another writer holds the lock."""
        import sqlean

        for attempt in range(WRITE_RETRIES):
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                break
            except sqlean.OperationalError as exc:
                if not _is_busy(exc):
                    raise self._store_error(exc) from None
                time.sleep(min(2.0, 0.05 * 2**attempt) * random.uniform(0.5, 1.5))
        else:
            raise StoreError(
                f"{self.path} stayed locked by another writer for too long; try again", path=str(self.path)
            )
        try:
            yield
            self.conn.execute("COMMIT")
        except BaseException as exc:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            if isinstance(exc, sqlean.OperationalError):
                raise self._store_error(exc) from None
            raise

    def _store_error(self, exc: Exception) -> StoreError:
        text = str(exc)
        if "readonly" in text.replace(" ", "").lower():
            return StoreError(f"{self.path} is read-only: {text}", path=str(self.path))
        return StoreError(f"database error on {self.path}: {text}", path=str(self.path))

    # -------------------------------------------------------------------- meta
    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))

    def embedder_id(self) -> tuple[str, int] | None:
        """``(embedder id, dim)`` this database's vectors were made with, or None before the first one."""
        value = self.get_meta("embedder")
        if not value:
            return None
        name, _, dim = value.rpartition("@")
        return name, int(dim)

    def embedder_name(self) -> str | None:
        """The user-facing name (``minilm``, ``hash``, ``ollama:MODEL``) the database was bound with."""
        return self.get_meta("embedder_name")

    def bind_embedder(self, name: str, embedder_id: str, dim_of: Any) -> None:
        """Bind this database to an embedder on first use; refuse any other one afterwards.

        ``dim_of`` is called only when nothing is bound yet (asking an Ollama model its width
        costs a request).
        """
        if self.embedder_id() is None:
            dim = int(dim_of())
            with self.write():
                if self.embedder_id() is None:
                    self.rebind_embedder(name, embedder_id, dim)
        bound = self.embedder_id()
        assert bound is not None
        if bound[0] != embedder_id:
            bound_name = self.embedder_name() or bound[0]
            raise StoreError(
                f"{self.path} was embedded with {bound_name!r} ({bound[0]}), not {name!r}; "
                f"drop --embedder/MEM_EMBEDDER to use {bound_name!r}, or run 'mem reindex --embedder {name}' to re-embed",
                database_embedder=bound_name, requested_embedder=name,
            )
        self._vec_dim = bound[1]

    def _create_vec_index(self, dim: int) -> None:
        self._vec0_rows = None
        self.conn.execute("DROP TABLE IF EXISTS memory_vec")
        # int8 with a per-vector scale; cosine distance makes the scale irrelevant to ranking.
        self.conn.execute(
            f"CREATE VIRTUAL TABLE memory_vec USING vec0(embedding int8[{dim}] distance_metric=cosine, scope text partition key)"
        )

    def rebind_embedder(self, name: str, embedder_id: str, dim: int) -> None:
        """Inside a write transaction: forget every vector and bind a new embedder (first use, reindex)."""
        from mem.store import token_states

        self.conn.execute("DELETE FROM vectors")
        token_states.drop(self)
        self._bump_vectors_epoch()
        self._create_vec_index(dim)
        self.set_meta("embedder", f"{embedder_id}@{dim}")
        self.set_meta("embedder_name", name)
        self._vec_dim = dim

    # -------------------------------------------------------------- memories
    def insert_memory(self, memory: Memory) -> int:
        """Insert inside a write transaction; returns the rowid. Its vector goes in with ``put_vectors``."""
        # Column values straight off the dataclass: to_record()/asdict would deep-copy tags and meta.
        values = list(_MEMORY_VALUES(memory))
        for index, convert in _CONVERTED:
            values[index] = convert(values[index])
        if self._memory_rows is not None:  # bulk_writes(ahead=True): written with the block's next ones
            rowid = self._next_rowid
            self._next_rowid += 1
            values.append(rowid)
            self._memory_rows.append(values)
        else:
            rowid = int(self.conn.execute(_INSERT_MEMORY, values).lastrowid)
        if self._fts_after is not None:
            self._fts_newest = max(self._fts_newest, rowid)  # its full-text row is pending (bulk_writes)
        self.log(memory.created_at, "add", memory.id, memory.author, {"text": memory.text})
        return rowid

    @contextmanager
    def bulk_writes(self, *, ahead: bool = False) -> Iterator[None]:
        """Inside a write transaction, for a chunk's inserts (nothing in it reads the changelog, or
        changes or deletes the text of a memory it inserted): the memories inserted in this block get
        their full-text rows in one statement, not one trigger call each, and the changelog rows go
        in with one ``executemany``, in the order they were logged. The full-text rows go in at the
        block's end, and before any full-text read inside it (``_index_pending``: eager intake's
        correction lookups), so a read finds every row inserted before it, as with the trigger.

        Each row's trigger runs in its own statement, and FTS5 writes its pending terms out as a new
        segment at every statement boundary: about 60 us a row at 100k, half the row's cost. The
        trigger is dropped and created again inside the transaction, so no other connection ever
        sees it missing, and a rollback (an error, a kill) restores it with everything else.

        ``ahead`` (bulk intake, whose chunk reads memory rows only through ``bump_access``,
        ``by_rowids`` and ``put_vectors``): ``insert_memory`` hands out the rowid SQLite would give
        (the largest + 1: no AUTOINCREMENT) and holds the row; the held rows go in with one
        ``executemany`` before any of those reads, the full-text rows, and at the block's end. One
        statement for the chunk instead of one a row: ~10 us a memory less, the same rows."""
        found = self.conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'memories_fts_insert'").fetchone()
        first = self.conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM memories").fetchone()[0]
        if found is not None:
            self.conn.execute("DROP TRIGGER memories_fts_insert")
            self._fts_after = self._fts_newest = first
        self._log_rows = []
        if ahead:
            self._memory_rows, self._next_rowid = [], int(first) + 1
        try:
            yield
            self._write_held()
            self.conn.executemany(_INSERT_LOG, self._log_rows)
        finally:
            self._log_rows = self._memory_rows = None
        if found is not None:
            self._index_pending()
            self._fts_after = None
            self.conn.execute(found[0])

    def _write_held(self) -> None:
        """Inside ``bulk_writes(ahead=True)``: the memory rows held so far, in one statement."""
        if self._memory_rows:
            self.conn.executemany(_INSERT_MEMORY_AT, self._memory_rows)
            self._memory_rows = []

    def _index_pending(self) -> None:
        """Inside ``bulk_writes``: the full-text rows of the memories inserted since the last call."""
        self._write_held()
        if self._fts_after is not None and self._fts_newest > self._fts_after:
            self.conn.execute("INSERT INTO memory_fts(rowid, text, tags) SELECT rowid, text, tags FROM memories "
                              "WHERE rowid > ? ORDER BY rowid", (self._fts_after,))
            self._fts_after = self._fts_newest

    @contextmanager
    def bulk_cache(self) -> Iterator[None]:
        """For a bulk intake's chunks: a page cache of ``BULK_CACHE_KIB`` instead of SQLite's 2 MB. A
        chunk of 2,048 memories dirties more index, full-text and vector pages than 2 MB holds, so
        SQLite spilled them to the WAL mid-transaction (some several times a chunk) and read them back:
        at 100k hash memories 1.06M page writes and 0.78M page reads, 0.70M and 0.23M with this cache
        (bench/README.md, "Bulk import"). What a commit or a kill leaves is the same: the cache holds
        no committed data a checkpoint needs."""
        previous = int(self.conn.execute("PRAGMA cache_size").fetchone()[0])
        self.conn.execute(f"PRAGMA cache_size = -{BULK_CACHE_KIB}")
        try:
            yield
        finally:
            self.conn.execute(f"PRAGMA cache_size = {previous}")  # back to the default (its pages freed)

    @contextmanager
    def checkpoints_aside(self) -> Iterator[None]:
        """For a bulk intake's chunks: this connection's commits leave the WAL checkpoints to a thread
        with its own connection (SQLite runs a checkpoint without the interpreter lock), so they run
        beside the next chunk's SQL instead of inside each COMMIT (~25 us a memory at 100k). The
        thread checkpoints every ``_CHECKPOINT_EVERY_S`` and once more before this block ends. A kill
        at any moment leaves what a kill of any WAL database leaves: the WAL holds the commits until
        a checkpoint has copied them, and the next connection reads them from it."""
        import sqlean

        previous = int(self.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0])
        if previous <= 0 or self.read_only:
            yield
            return
        try:
            aside = sqlean.connect(str(self.path), isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000,
                                   check_same_thread=False)
        except sqlean.Error:
            yield
            return
        import threading

        done = threading.Event()

        def checkpoint() -> None:
            while True:
                stopping = done.wait(_CHECKPOINT_EVERY_S)
                try:
                    aside.execute("PRAGMA wal_checkpoint(PASSIVE)")
                except sqlean.Error:  # busy or gone: the next one (or SQLite's own) catches up
                    pass
                if stopping:
                    return

        thread = threading.Thread(target=checkpoint, name="mem-checkpoint", daemon=True)
        self.conn.execute("PRAGMA wal_autocheckpoint = 0")
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()
            aside.close()
            self.conn.execute(f"PRAGMA wal_autocheckpoint = {previous}")

    def put_vector(self, rowid: int, scope: str, vector: "np.ndarray", *, replace: bool = False,
                   tokens: tuple[str, bytes] | None = None) -> None:
        """Store a float32 vector and its int8 index entry; ``replace`` for a memory that already had one."""
        self.put_vectors([(rowid, scope, vector)], replace=replace, tokens=[tokens])

    def put_vectors(self, rows: Sequence[tuple[int, str, "np.ndarray"]], *, replace: bool = False,
                    tokens: Sequence[tuple[str, bytes] | None] | None = None) -> None:
        """``put_vector`` for many memories ``(rowid, scope, vector)`` in one statement per table (a chunk).

        ``tokens``: each row's compact token states ``(form, bytes)`` (``mem.store.token_states``), or None
        for none; a memory given a new vector loses the states of its old text either way."""
        import numpy as np

        from mem.store import token_states

        if not rows:
            return
        self._write_held()  # the vectors' memories first (foreign keys)
        rowids = [rowid for rowid, _, _ in rows]
        if replace:
            self._bump_vectors_epoch()
            token_states.drop(self, rowids)
        f32 = np.ascontiguousarray(np.stack([np.asarray(v, dtype=np.float32) for _, _, v in rows]))
        self.conn.executemany("INSERT OR REPLACE INTO vectors(rowid, f32) VALUES (?, ?)",
                              [(rowid, f32[i].tobytes()) for i, rowid in enumerate(rowids)])
        if replace:
            self._unindex_vectors(rowids)
        self._index_vectors(rowids, [scope for _, scope, _ in rows], f32)
        if tokens:
            token_states.put(self, [(rowid, *t) for rowid, t in zip(rowids, tokens) if t is not None])

    def _unindex_vectors(self, rowids: list[int]) -> None:
        """Drop the coarse KNN entries of vectors about to be replaced (a new row has none: intake skips this)."""
        self.conn.executemany("DELETE FROM memory_vec WHERE rowid = ?", [(rowid,) for rowid in rowids])

    def _index_vectors(self, rowids: list[int], scopes: list[str], f32: "np.ndarray") -> None:
        """The coarse KNN index entries of these vectors: vec0 int8 with a per-vector scale."""
        import numpy as np

        peaks = np.abs(f32).max(axis=1, keepdims=True)
        peaks[peaks == 0] = 1.0
        q = np.round(f32 * (127.0 / peaks)).astype(np.int8)
        if len(rowids) >= vec0_rows.MIN_ROWS and self._vec0_rows is None:  # checked once a connection (and a new table)
            self._vec0_rows = vec0_rows.layout(self.conn, q.shape[1]) or 0
        if len(rowids) >= vec0_rows.MIN_ROWS and self._vec0_rows == q.shape[1]:
            vec0_rows.insert(self.conn, rowids, scopes, q)  # what the INSERT below writes, a chunk at a time
        else:
            self.conn.executemany("INSERT INTO memory_vec(rowid, embedding, scope) VALUES (?, vec_int8(?), ?)",
                                  [(rowid, q[i].tobytes(), scope) for i, (rowid, scope) in enumerate(zip(rowids, scopes))])

    def rescope_vector_index(self, rowids: Sequence[int], scope: str) -> None:
        """Give these memories' KNN index entries ``scope`` (a scope move, inside its write txn)."""
        # vec0 partitions by scope and cannot update a partition key: re-insert the same int8 rows.
        entries = self.conn.execute(
            f"SELECT rowid, embedding FROM memory_vec WHERE rowid IN ({','.join('?' * len(rowids))})", list(rowids)
        ).fetchall()
        self.conn.executemany("DELETE FROM memory_vec WHERE rowid = ?", [(r[0],) for r in entries])
        self.conn.executemany("INSERT INTO memory_vec(rowid, embedding, scope) VALUES (?, vec_int8(?), ?)",
                              [(r[0], r[1], scope) for r in entries])

    def log(self, at: str, op: str, memory_id: str | None, author: str | None, payload: dict[str, Any]) -> None:
        """Append one row to the changelog: every mutation leaves a trace (``sync_from`` on what a sync brought in)."""
        if self.sync_origin is not None:
            payload = {**payload, "sync_from": self.sync_origin}
        row = (at, op, memory_id, author, _json(payload))
        if self._log_rows is not None:
            self._log_rows.append(row)  # inside bulk_writes
        else:
            self.conn.execute(_INSERT_LOG, row)

    def update_memory(self, memory_id: str, changes: dict[str, Any], *, at: str, op: str = "update",
                      reason: str | None = None) -> None:
        """Change columns of one memory inside a write transaction, logging the change (and ``reason``,
        why it was made, when given: the changelog is where ``mem get --explain`` reads it)."""
        unknown = set(changes) - UPDATABLE
        if unknown:
            raise BadInput(f"cannot update field(s) {', '.join(sorted(unknown))}")
        stored = {k: _STORED_AS[k](v) if k in _STORED_AS else v for k, v in changes.items()}
        assignments = ", ".join(f"{k} = ?" for k in stored)
        cursor = self.conn.execute(f"UPDATE memories SET {assignments} WHERE id = ?", [*stored.values(), memory_id])
        if cursor.rowcount == 0:
            raise NotFound(f"no memory {memory_id}", id=memory_id)
        self.log(at, op, memory_id, None, changes if reason is None else {**changes, "reason": reason})

    def _bump_vectors_epoch(self) -> None:
        # Warm in-RAM matrices (other processes too) reload when this changes: see store/vectors.py.
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES ('vectors_epoch', '1') "
            "ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(meta.value AS INTEGER) + 1 AS TEXT)"
        )

    def memory_id_at(self, rowid: int) -> str | None:
        """The id of the memory stored at ``rowid``, None when there is none. A warm index checks the
        newest row it holds still is the memory it read: a rolled-back insert frees its rowid, and
        SQLite gives it to the next insert."""
        row = self.conn.execute("SELECT id FROM memories WHERE rowid = ?", (rowid,)).fetchone()
        return None if row is None else str(row[0])

    def max_vector_rowid(self) -> int:
        return int(self.conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM vectors").fetchone()[0])

    def vectors_at_most(self, after: int = 0) -> int:
        """At most how many vectors have rowid > ``after`` (each is a memory's): cheap, for preallocating."""
        top = self.max_vector_rowid()
        if top <= after:
            return 0
        memories = self.conn.execute("SELECT COUNT(*) FROM memories WHERE rowid > ?", (after,)).fetchone()[0]
        return min(top - after, int(memories))

    def vector_dim(self) -> int | None:
        bound = self.embedder_id()
        return bound[1] if bound else None

    def iter_all_vectors(self, *, after: int = 0, batch: int = 5000) -> Iterator[tuple[list[int], list[str], "np.ndarray"]]:
        """Every stored vector with rowid > ``after`` and its memory's scope, in rowid order, in batches."""
        import numpy as np

        last = after
        while True:
            rows = self.conn.execute(
                "SELECT v.rowid, m.scope, v.f32 FROM vectors v JOIN memories m ON m.rowid = v.rowid "
                "WHERE v.rowid > ? ORDER BY v.rowid LIMIT ?", (last, batch)
            ).fetchall()
            if not rows:
                return
            last = int(rows[-1][0])
            block = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), -1)
            yield [int(r[0]) for r in rows], [r[1] for r in rows], block

    def delete_memory(self, memory_id: str, *, at: str) -> tuple[list[str], list[str]]:
        """Inside a write txn opened under ``purge.secure_deletes``: the memory and every copy of its text go;
        returns the memories consolidation merged it into (kept) and those it had superseded that are live
        again (``purge.release``)."""
        from mem.store import ann, purge

        self._bump_vectors_epoch()
        ann.discard(self)  # the saved HNSW graph holds an int8 copy of every vector
        restored = purge.release(self, memory_id, at=at)
        return purge.purge_memory(self, memory_id, at=at), restored

    def bump_access(self, rowids: Sequence[int], at: str) -> None:
        """Best effort: count a retrieval. Never waits long and never raises (a search must not fail on it)."""
        if not rowids:
            return
        self._write_held()  # a bulk chunk's duplicate of a text it stored itself (bulk_writes(ahead=True))
        try:
            with self._short_wait():
                marks = ",".join("?" * len(rowids))
                self.conn.execute(
                    f"UPDATE memories SET access_count = access_count + 1, last_accessed_at = ? WHERE rowid IN ({marks})",
                    [at, *rowids],
                )
        except Exception:
            pass

    @contextmanager
    def _short_wait(self) -> Iterator[None]:
        """Statements inside wait at most 50 ms for another writer's locks."""
        self.conn.execute("PRAGMA busy_timeout = 50")
        try:
            yield
        finally:
            self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")

    # ----------------------------------------------------------------- lookup
    def rowid_of(self, memory_id: str) -> int:
        row = self.conn.execute("SELECT rowid FROM memories WHERE id = ?", (memory_id,)).fetchone()
        if row is None:
            raise NotFound(f"no memory {memory_id}", id=memory_id)
        return int(row[0])

    def resolve_id(self, typed: str) -> str:
        """The full id for a handle (a prefix of the id's random tail, as tables show) or a prefix of the
        whole id (4+ characters, like git). NotFound or Ambiguous otherwise; see ``mem.ids``."""
        typed = typed.strip().lower()
        if len(typed) == 36:
            return self._resolve_prefix(typed)
        if len(typed) < ids.HANDLE_MIN:
            raise BadInput(f"id {typed!r} is too short: give at least {ids.HANDLE_MIN} characters", id=typed)
        by_tail = self._tail_matches(typed, 6) if ids.could_be_handle(typed) else []
        if not by_tail:
            return self._resolve_prefix(typed)
        if len(by_tail) > 1:
            raise self._ambiguous(typed, by_tail)
        if self._names_another(typed, by_tail[0]):  # a handle of one memory and the id prefix of another
            raise self._ambiguous(typed, [by_tail[0], self._head_matches(typed, 1)[0]])
        return by_tail[0]

    def _tail_matches(self, typed: str, limit: int) -> list[str]:
        return [r[0] for r in self.conn.execute(
            f"SELECT id FROM memories WHERE {_TAIL} >= ? AND {_TAIL} < ? ORDER BY {_TAIL} LIMIT ?",
            (typed, typed + "\uffff", limit))]

    def _head_matches(self, typed: str, limit: int) -> list[str]:
        return [r[0] for r in self.conn.execute(
            "SELECT id FROM memories WHERE id >= ? AND id < ? ORDER BY id LIMIT ?", (typed, typed + "\uffff", limit))]

    def _names_another(self, typed: str, memory_id: str) -> bool:
        heads = self._head_matches(typed, 2)
        return len(heads) == 1 and heads[0] != memory_id

    def _resolve_prefix(self, typed: str) -> str:
        rows = self._head_matches(typed, 6)
        if not rows:
            raise NotFound(f"no memory {typed}", id=typed)
        if len(rows) > 1:
            raise self._ambiguous(typed, rows)
        return rows[0]

    def _ambiguous(self, typed: str, matches: list[str]) -> Ambiguous:
        candidates = matches[:5]
        shown = self.handles(candidates)
        return Ambiguous(
            f"id {typed} is ambiguous: {', '.join(shown[c] for c in candidates)}{' ...' if len(matches) > 5 else ''}",
            id=typed, candidates=candidates,
        )

    def handles(self, memory_ids: Iterable[str]) -> dict[str, str]:
        """Each id's handle: the shortest prefix (4+ characters) of its random tail that names it alone in
        this database, by tail and by whole-id prefix (see ``resolve_id``). Two index probes per id."""
        out: dict[str, str] = {}
        for memory_id in dict.fromkeys(memory_ids):
            if not isinstance(memory_id, str) or len(memory_id) != 36:
                continue
            tail = memory_id[24:]
            before = self.conn.execute(
                f"SELECT {_TAIL} FROM memories WHERE {_TAIL} <= ? AND id != ? ORDER BY {_TAIL} DESC LIMIT 1",
                (tail, memory_id)).fetchone()
            after = self.conn.execute(
                f"SELECT {_TAIL} FROM memories WHERE {_TAIL} >= ? AND id != ? ORDER BY {_TAIL} LIMIT 1",
                (tail, memory_id)).fetchone()
            shared = max(ids.common_prefix(tail, row[0]) for row in (before, after, ("",)) if row)
            if shared >= len(tail):  # another memory has the same tail (crafted or imported ids): no handle
                out[memory_id] = memory_id
                continue
            length = max(ids.HANDLE_MIN, shared + 1)
            while length < len(tail) and self._names_another(tail[:length], memory_id):
                length += 1  # the unique id prefix of another memory as well: resolve_id would call it ambiguous
            out[memory_id] = tail[:length]
        return out

    def get(self, memory_id: str) -> Memory:
        row = self.conn.execute(f"SELECT {_COLUMNS} FROM memories m WHERE m.id = ?", (memory_id,)).fetchone()
        if row is None:
            raise NotFound(f"no memory {memory_id}", id=memory_id)
        return _row_to_memory(row)

    def by_rowids(self, rowids: Iterable[int]) -> dict[int, Memory]:
        self._write_held()  # rows a bulk chunk holds (bulk_writes(ahead=True)) are read too
        ids = list(rowids)
        out: dict[int, Memory] = {}
        for chunk, marks in batches.in_lists(ids):
            for row in self.conn.execute(
                f"SELECT m.rowid, {_COLUMNS} FROM memories m WHERE m.rowid IN ({marks})", chunk
            ):
                out[int(row[0])] = _row_to_memory(row[1:])
        return out

    def find_by_hash(self, scope: str, content_hash: str) -> Memory | None:
        row = self.conn.execute(
            f"SELECT {_COLUMNS} FROM memories m WHERE m.scope = ? AND m.content_hash = ? ORDER BY m.rowid LIMIT 1",
            (scope, content_hash),
        ).fetchone()
        return _row_to_memory(row) if row else None

    def ids_by_hash(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], tuple[int, str]]:
        """``(scope, content_hash) -> (rowid, id)`` of the first stored memory with that text, for each key found."""
        out: dict[tuple[str, str], tuple[int, str]] = {}
        wanted = list(keys)
        for start in range(0, len(wanted), 400):
            chunk = wanted[start : start + 400]
            marks = ",".join("(?, ?)" for _ in chunk)
            for rowid, memory_id, scope, digest in self.conn.execute(
                f"SELECT rowid, id, scope, content_hash FROM memories WHERE (scope, content_hash) IN (VALUES {marks}) "
                "ORDER BY rowid DESC", [v for key in chunk for v in key]
            ):
                out[(scope, digest)] = (int(rowid), memory_id)  # rowid DESC: the first stored one wins
        return out

    def existing_ids(self, memory_ids: Iterable[str]) -> set[str]:
        """Which of ``memory_ids`` are stored."""
        wanted = list(memory_ids)
        found: set[str] = set()
        for chunk, marks in batches.in_lists(wanted):
            found.update(r[0] for r in self.conn.execute(
                f"SELECT id FROM memories WHERE id IN ({marks})", chunk))
        return found

    def content_hashes(self, memory_ids: Iterable[str]) -> dict[str, str]:
        """id -> content_hash of those of ``memory_ids`` that are stored."""
        wanted = list(memory_ids)
        found: dict[str, str] = {}
        for chunk, marks in batches.in_lists(wanted):
            found.update(self.conn.execute(
                f"SELECT id, content_hash FROM memories WHERE id IN ({marks})", chunk))
        return found

    def exists(self, memory_id: str) -> bool:
        return self.conn.execute("SELECT 1 FROM memories WHERE id = ?", (memory_id,)).fetchone() is not None

    def select(
        self,
        *,
        scope: str | None,
        kinds: Sequence[str] = (),
        tags: Sequence[str] = (),
        statuses: Sequence[str] | None = ("active", "cold"),
        include_superseded: bool = True,
        since: str | None = None,
        until: str | None = None,
        rowids: Sequence[int] | None = None,
        order: str = "m.created_at DESC, m.rowid DESC",
        limit: int | None = None,
        after_rowid: int | None = None,
    ) -> Iterator[tuple[int, Memory]]:
        """Memories matching every filter, as ``(rowid, Memory)``; the one filter implementation."""
        if rowids is not None and not rowids:
            return
        where, params = self._filters(
            scope=scope, kinds=kinds, tags=tags, statuses=statuses, include_superseded=include_superseded,
            since=since, until=until, rowids=rowids, after_rowid=after_rowid,
        )
        sql = f"SELECT m.rowid, {_COLUMNS} FROM memories m"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += f" ORDER BY {order}"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(min(int(limit), 2**63 - 1))  # SQLite integers are 64-bit: a huge --limit means "all"
        for row in self.conn.execute(sql, params):
            yield int(row[0]), _row_to_memory(row[1:])

    def prior_rows(self, rowids: Sequence[int], **filters: Any) -> dict[int, PriorRow]:
        """Just the columns ranking needs, for the ``rowids`` that pass ``filters`` (same filters as select).

        Search ranks hundreds of candidates per query; reading whole rows for each cost more than
        the ranking itself, so full memories are read only for the hits that are returned.
        """
        if not rowids:
            return {}
        where, params = self._filters(rowids=rowids, **filters)
        sql = f"SELECT m.rowid, {', '.join('m.' + c for c in PriorRow._fields)} FROM memories m WHERE " + " AND ".join(where)
        return {int(row[0]): PriorRow(*row[1:-1], orjson.loads(row[-1])) for row in self.conn.execute(sql, params)}

    @staticmethod
    def _filters(
        *, scope: str | None, kinds: Sequence[str] = (), tags: Sequence[str] = (),
        statuses: Sequence[str] | None = ("active", "cold"), include_superseded: bool = True,
        since: str | None = None, until: str | None = None, rowids: Sequence[int] | None = None,
        after_rowid: int | None = None,
    ) -> tuple[list[str], list[Any]]:
        where: list[str] = []
        params: list[Any] = []
        # Given rowids, unary + keeps the planner on rowid lookups: without ANALYZE statistics it
        # walked memories_scope_created through the whole scope instead (26 ms at 100k memories).
        plus = "+" if rowids is not None else ""
        if rowids is not None:
            where.append(f"m.rowid IN ({','.join('?' * len(rowids))})")
            params.extend(rowids)
        if after_rowid is not None:
            where.append("m.rowid > ?")
            params.append(after_rowid)
        if scope is not None:
            where.append(f"{plus}m.scope = ?")
            params.append(scope)
        if kinds:
            where.append(f"m.kind IN ({','.join('?' * len(kinds))})")
            params.extend(kinds)
        for tag in tags:
            where.append("EXISTS (SELECT 1 FROM json_each(m.tags) WHERE json_each.value = ?)")
            params.append(tag)
        if statuses is not None:
            where.append(f"{plus}m.status IN ({','.join('?' * len(statuses))})")
            params.extend(statuses)
        if not include_superseded:
            where.append("m.superseded_by IS NULL")
        if since is not None:
            where.append("COALESCE(m.event_at, m.created_at) >= ?")
            params.append(since)
        if until is not None:
            where.append("COALESCE(m.event_at, m.created_at) < ?")
            params.append(until)
        return where, params

    # --------------------------------------------------------------- channels
    def knn(self, query: "np.ndarray", k: int, scope: str | None) -> list[int]:
        """Coarse int8 nearest neighbours: rowids, nearest first (rescore with ``vectors_for``)."""
        import numpy as np

        if self._vec_dim is None or k <= 0:
            return []
        q = np.asarray(query, dtype=np.float32)
        peak = float(np.abs(q).max()) or 1.0
        blob = np.round(q * (127.0 / peak)).astype(np.int8).tobytes()
        k = min(k, 4096)  # vec0's hard limit on k
        if scope is None:
            rows = self.conn.execute(
                "SELECT rowid FROM memory_vec WHERE embedding MATCH vec_int8(?) AND k = ?", (blob, k)
            )
        else:
            rows = self.conn.execute(
                "SELECT rowid FROM memory_vec WHERE embedding MATCH vec_int8(?) AND k = ? AND scope = ?", (blob, k, scope)
            )
        return [int(r[0]) for r in rows]

    def vectors_for(self, rowids: Sequence[int]) -> tuple[list[int], "np.ndarray"]:
        """Float32 vectors for ``rowids`` (those that have one), as (rowids, matrix)."""
        import numpy as np

        found: list[int] = []
        blobs: list[bytes] = []
        ids = list(rowids)
        for chunk, marks in batches.in_lists(ids):
            for rowid, blob in self.conn.execute(f"SELECT rowid, f32 FROM vectors WHERE rowid IN ({marks})", chunk):
                found.append(int(rowid))
                blobs.append(blob)
        if not blobs:
            return [], np.zeros((0, self._vec_dim or 0), dtype=np.float32)
        return found, np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)

    def bm25(self, match: str, k: int, scope: str | None) -> list[tuple[int, float]]:
        """FTS5 BM25 candidates ``(rowid, score)``, best first (ties by rowid); score is positive (higher is better).

        The SQL lives in ``mem.store.fts`` (it skips the scope join when the scope is the only one).
        """
        from mem.store import fts

        self._index_pending()  # inside bulk_writes: what this transaction inserted, as the trigger would have
        return fts.bm25(self, match, k, scope)

    def bm25_warm(self, terms: list[str], k: int, scope: str | None) -> list[tuple[int, float]] | None:
        """``bm25`` of the OR of ``terms`` (each quoted) from postings held in RAM once this process has
        searched a few times (``mem.store.terms``): the same rows and scores; None while cold."""
        if self._terms is None:
            from mem.store.terms import TermIndex

            self._terms = TermIndex(self)
        self._index_pending()
        return self._terms.search(terms, k, scope)

    def bm25_any(self, terms: list[str], k: int, scope: str | None) -> list[tuple[int, float]]:
        """``bm25`` of the OR of ``terms``: from the warm index once this process has looked up a few
        times, else FTS5, leaving out the terms in half the rows or more while a rarer one remains
        (they weigh nothing in BM25 but cost a score per row); rows matching only them fill any room
        left at score 0 (their true score is ~1e-6), so the list and its min-max range stay the same."""
        from mem.text import fts_any

        warm = self.bm25_warm(terms, k, scope)
        if warm is not None:
            return warm
        common = self.common_terms(terms) if len(terms) > 1 else set()
        kept = [t for t in terms if t not in common] or terms
        hits = self.bm25(fts_any(kept), k, scope)
        if len(kept) < len(terms) and len(hits) < k:
            seen = {r for r, _ in hits}
            hits += [(r, 0.0) for r in self.fts_rowids(fts_any([t for t in terms if t in common]), k - len(hits),
                                                       scope, seen)]
        return hits

    # ---- fts speed (search)
    def common_terms(self, terms: list[str]) -> set[str]:
        """The ``terms`` in at least half the indexed rows: BM25 gives them no weight (``mem.store.fts``)."""
        from mem.store import fts

        self._index_pending()
        return fts.common_terms(self, terms)

    def fts_rowids(self, match: str, limit: int, scope: str | None, exclude: set[int]) -> list[int]:
        """Unscored rowids ``match`` matches in ``scope``, minus ``exclude`` (``mem.store.fts.matching_rowids``)."""
        from mem.store import fts

        self._index_pending()
        return fts.matching_rowids(self, match, limit, scope, exclude)

    # ------------------------------------------------------------------ stats
    def counts(self) -> dict[str, Any]:
        one = lambda sql: self.conn.execute(sql).fetchone()[0]  # noqa: E731
        by_status = dict(self.conn.execute("SELECT status, COUNT(*) FROM memories GROUP BY status").fetchall())
        by_scope = dict(self.conn.execute("SELECT scope, COUNT(*) FROM memories GROUP BY scope ORDER BY 2 DESC").fetchall())
        by_kind = dict(self.conn.execute("SELECT kind, COUNT(*) FROM memories GROUP BY kind ORDER BY 2 DESC").fetchall())
        by_layer = {str(k): v for k, v in self.conn.execute("SELECT layer, COUNT(*) FROM memories GROUP BY layer")}
        has_vec = self._vec_dim is not None or self.embedder_id() is not None
        return {
            "memories": one("SELECT COUNT(*) FROM memories"),
            "by_status": by_status,
            "by_scope": by_scope,
            "by_kind": by_kind,
            "by_layer": by_layer,
            "superseded": one("SELECT COUNT(*) FROM memories WHERE superseded_by IS NOT NULL"),
            "vectors": one("SELECT COUNT(*) FROM vectors"),
            "vec_index": one("SELECT COUNT(*) FROM memory_vec") if has_vec and self._has_table("memory_vec") else 0,
            "fts": self._fts_rows(),
            "edges": one("SELECT COUNT(*) FROM edges"),
            "entities": one("SELECT COUNT(*) FROM entities"),
            "changelog": one("SELECT COUNT(*) FROM changelog"),
            "schema_version": self.schema_version(),
            "embedder": (self.embedder_id() or (None, None))[0],
            "dim": (self.embedder_id() or (None, None))[1],
            "bytes": self._size_bytes(),
        }

    def _fts_rows(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM memory_fts_docsize").fetchone()[0])

    def _size_bytes(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def _has_table(self, name: str) -> bool:
        return self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None

    def integrity(self) -> str:
        return str(self.conn.execute("PRAGMA integrity_check").fetchone()[0])
