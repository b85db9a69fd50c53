"""The Store over PostgreSQL + pgvector: ``MEM_DB=postgresql://user@host/db``.

Every Store method's SQL is shared with SQLite (``mem.store.dialect`` rewrites it); this module
holds what differs:

- the connection (psycopg 3, autocommit; ``write()`` opens the transaction and takes one
  advisory lock, so writers from every process and machine commit one at a time: the changelog's
  ``seq`` and the memories' ``rowid`` then grow in commit order, which is what the warm indexes
  and ``mem sync`` rely on when they read "what is newer than what I saw");
- the schema bookkeeping (``mem_schema`` instead of ``PRAGMA user_version``), the SQLite
  migrations run through ``dialect.ddl_to_postgres`` plus ``EXTRAS`` per migration number;
- full-text search (``mem.store.pg_fts``): FTS5's tokens and BM25 over postings, document length
  and term statistics tables filled at each write's COMMIT, warm in RAM in a process that
  searches often (not ``ts_rank``, which is not BM25);
- PostgreSQL-only schema steps after the shared migrations (``PG_STEPS``, counted in ``meta``
  as ``pg_schema``);
- vectors: the float32 BLOB table as in SQLite, plus a pgvector ``vector(dim)`` column searched
  exactly (a sequential scan ordered by cosine distance; see bench/README.md for why not HNSW).

Errors: an unreachable server, refused credentials, a missing database, extension or privilege
raise ``StoreError`` (exit 5) saying what to do.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from mem.config import is_db_url as is_url  # noqa: F401  (Store.open asks it)
from mem.errors import StoreError
from mem.store import Store
from mem.store import pg_fts
from mem.store.dialect import ddl_to_postgres, generated_key, skipped_name, to_postgres

if TYPE_CHECKING:
    import numpy as np

WRITE_LOCK = 0x6D656D  # advisory lock key ("mem") every write transaction takes
CONNECT_TIMEOUT_S = 10
# What the PostgreSQL schema does its own way instead of the SQLite statements dialect.py skips.
REPLACED = {
    "memory_fts": "fts_postings, fts_docs and fts_terms (mem.store.pg_fts)",
    "memories_fts_insert": "mem_fts_queue", "memories_fts_delete": "mem_fts_queue",
    "memories_fts_update": "mem_fts_queue",
    # fts_epoch tells a warm in-RAM term index to reload; on PostgreSQL it follows fts_changes.
    "memories_fts_epoch_update": "fts_changes", "memories_fts_epoch_delete": "fts_changes",
}


def redact(url: str) -> str:
    """``url`` without its password, for messages and ``mem stats``.

    >>> redact("postgresql://me:secret@db:5432/mem")
    'postgresql://me@db:5432/mem'
    """
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}@{host}" if parts.username else host
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


# ---------------------------------------------------------------------------------- connection
class Cursor:
    """The part of a DB-API cursor the Store uses, over a psycopg cursor (its results may still be on
    the way in pipeline mode: reading them waits, and raises what the statement raised)."""

    def __init__(self, raw: Any, owner: "Connection", lastrowid: int | None = None) -> None:
        self.raw = raw
        self.owner = owner
        self.lastrowid = lastrowid

    @property
    def rowcount(self) -> int:
        self.owner.settle()
        return int(self.raw.rowcount)

    def fetchone(self) -> Any:
        with self.owner._errors():
            return self.raw.fetchone()

    def fetchall(self) -> list[Any]:
        with self.owner._errors():
            return self.raw.fetchall()

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


# Statements that mark where a caller handles errors: what was sent ahead must have answered first.
_BARRIER = re.compile(r"^\s*(SAVEPOINT|RELEASE|ROLLBACK)\b", re.I)
_COUNTED = ("INSERT", "UPDATE", "DELETE")


class Connection:
    """A psycopg connection that takes the Store's SQLite-dialect SQL (``?`` placeholders).

    Inside a write transaction it runs in pipeline mode (``pipelined``): a statement whose result
    nobody reads (most INSERTs and UPDATEs) is sent without waiting for the server, and the next
    statement that returns rows, a row count or ``total_changes`` waits for all of them. Intake
    makes about fourteen statements per memory, half of them of that kind."""

    def __init__(self, raw: Any, where: str) -> None:
        self.raw = raw
        self.where = where
        self.pipeline: Any = None  # the psycopg Pipeline while pipelined
        self._changes = 0
        self._unsettled: list[Any] = []  # cursors of INSERT/UPDATE/DELETE sent ahead, not yet counted

    @property
    def total_changes(self) -> int:
        """Rows changed by INSERT/UPDATE/DELETE so far, as sqlite3's counter."""
        self.settle()
        return self._changes

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return self.raw.info.transaction_status != TransactionStatus.IDLE

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        query = to_postgres(sql)
        key = generated_key(sql)
        if key:
            query += f" RETURNING {key}"
        if self._unsettled and _BARRIER.match(sql):
            self.settle()
        cursor = self.raw.cursor()
        with self._errors():
            cursor.execute(query, _params(params))
        lastrowid = None
        if key:
            with self._errors():
                row = cursor.fetchone()
            lastrowid = int(row[0]) if row else None
        self._count(sql, cursor)
        return Cursor(cursor, self, lastrowid)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Cursor:
        cursor = self.raw.cursor()
        rows = [_params(r) for r in rows]
        if rows:
            with self._errors():
                cursor.executemany(to_postgres(sql), rows)
            self._count(sql, cursor)
        return Cursor(cursor, self)

    def run(self, statement: str, params: Sequence[Any] | None = None) -> Cursor:
        """``statement`` as written (PostgreSQL dialect, ``%s`` placeholders when ``params``)."""
        cursor = self.raw.cursor()
        with self._errors():
            cursor.execute(statement, None if params is None else _params(params))
        return Cursor(cursor, self)

    def close(self) -> None:
        self.raw.close()

    def _count(self, sql: str, cursor: Any) -> None:
        if sql.lstrip()[:6].upper() in _COUNTED:
            self._unsettled.append(cursor)
            if self.pipeline is None:
                self.settle()

    def settle(self) -> None:
        """Wait for the statements sent ahead and count their rows; their errors are raised here."""
        if not self._unsettled:
            return
        try:
            if self.pipeline is not None and any(c.pgresult is None for c in self._unsettled):
                with self._errors():
                    self.pipeline.sync()
            for cursor in self._unsettled:
                self._changes += max(int(cursor.rowcount), 0)
        finally:
            self._unsettled.clear()

    @contextmanager
    def pipelined(self) -> Iterator[None]:
        """Pipeline mode for the block (a write transaction's body); everything has answered when it ends."""
        if self.pipeline is not None:
            yield
            return
        block = self.raw.pipeline()
        with self._errors():
            self.pipeline = block.__enter__()
        try:
            yield
            self.settle()
        except BaseException as exc:
            self.pipeline = None
            self._unsettled.clear()
            block.__exit__(type(exc), exc, exc.__traceback__)  # logs, never replaces, its own error
            raise
        self.pipeline = None
        with self._errors():
            block.__exit__(None, None, None)

    @contextmanager
    def _errors(self) -> Iterator[None]:
        import psycopg

        try:
            yield
        except psycopg.errors.InsufficientPrivilege as exc:
            raise StoreError(f"{self.where}: {exc.diag.message_primary or exc}; ask the database owner to "
                             "GRANT that privilege to this role", path=self.where) from None
        except psycopg.OperationalError as exc:
            raise StoreError(f"lost the connection to {self.where} ({_first_line(exc)}); nothing uncommitted was "
                             "kept: check the server and run the command again", path=self.where) from None


def _params(params: Sequence[Any]) -> list[Any]:
    return [int(v) if isinstance(v, bool) else v for v in params]


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def connect(url: str) -> Connection:
    """Connect, or raise StoreError naming what is wrong (server down, credentials, database)."""
    try:
        import psycopg
        from psycopg.types.numeric import FloatLoader
        from psycopg.types.string import StrDumper
    except ImportError:
        raise StoreError("PostgreSQL support is not installed: pip install 'mem[postgres]'") from None
    import logging

    # psycopg logs (as a warning) a second error met while leaving pipeline mode after a first one; the
    # first is what mem reports, so nothing may reach stderr on its own.
    logging.getLogger("psycopg").addHandler(logging.NullHandler())
    where = redact(url)
    try:
        raw = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S, application_name="mem")
    except psycopg.OperationalError as exc:
        text = str(exc)
        lower = text.lower()
        if "password" in lower or "authentication" in lower or ("role" in lower and "does not exist" in lower):
            hint = "check the user and password in the URL (or ~/.pgpass, PGPASSWORD)"
        elif "does not exist" in lower and "database" in lower:
            hint = "create it first (createdb, or CREATE DATABASE as its owner)"
        else:
            hint = "check that the server is running and the host, port and socket in the URL are right"
        raise StoreError(f"cannot connect to {where}: {_first_line(exc)}; {hint}", path=where) from None
    # Strings as text (not "unknown"), so parameters in expressions get a type; numeric as float,
    # as SQLite returns SUM() of integers.
    raw.adapters.register_dumper(str, StrDumper)
    raw.adapters.register_loader("numeric", FloatLoader)
    # psycopg prepares a statement run five times, and after five more the server switches to a
    # generic plan, blind to the parameters: "scope < $1" in an EXISTS then scanned all 100k
    # memories (131 ms instead of 0.1). Plans stay made for the values given.
    raw.execute("SET plan_cache_mode = force_custom_plan")
    return Connection(raw, where)


# ------------------------------------------------------------------------------------- schema
# SQL functions with the meaning of the SQLite ones the shared SQL uses (on the JSON text columns).
HELPERS = [
    """CREATE OR REPLACE FUNCTION json_each(doc text) RETURNS TABLE(value text) LANGUAGE sql IMMUTABLE AS
       $$ SELECT jsonb_array_elements_text(doc::jsonb) $$""",
    """CREATE OR REPLACE FUNCTION json_extract(doc text, path text) RETURNS text LANGUAGE sql IMMUTABLE AS
       $$ SELECT (doc::jsonb) #>> string_to_array(substr(path, 3), '.') $$""",
    """CREATE OR REPLACE FUNCTION json_array_length(doc text) RETURNS bigint LANGUAGE sql IMMUTABLE AS
       $$ SELECT jsonb_array_length(doc::jsonb)::bigint $$""",
    """CREATE OR REPLACE FUNCTION json_insert(doc text, path text, item text) RETURNS text LANGUAGE sql IMMUTABLE AS
       $$ SELECT CASE WHEN path = '$[#]' THEN (doc::jsonb || jsonb_build_array(item))::text END $$""",
    """CREATE OR REPLACE FUNCTION mem_json_array(item text) RETURNS text LANGUAGE sql IMMUTABLE AS
       $$ SELECT jsonb_build_array(item)::text $$""",
    """CREATE OR REPLACE FUNCTION instr(haystack text, needle text) RETURNS integer LANGUAGE sql IMMUTABLE AS
       $$ SELECT strpos(haystack, needle) $$""",
    # SUM(a = b): SQLite counts true comparisons (they are integers there).
    """CREATE OR REPLACE FUNCTION mem_add_bool(total bigint, item boolean) RETURNS bigint LANGUAGE sql IMMUTABLE AS
       $$ SELECT COALESCE(total, 0) + COALESCE(item::int, 0) $$""",
    "CREATE OR REPLACE AGGREGATE sum(boolean) (SFUNC = mem_add_bool, STYPE = bigint)",
]

# Statements run after the SQLite migration of the same number (translated) on PostgreSQL.
EXTRAS: dict[int, list[str]] = {}
# PostgreSQL-only schema steps, run in order after the shared migrations; meta 'pg_schema' counts
# those applied (a database made before it existed has none: step 1 rebuilds its full-text index).
PG_STEPS: list[list[str]] = [pg_fts.SCHEMA, pg_fts.APPLY]


class MigrationConnection:
    """What a migration function sees: its DDL translated statement by statement, FTS5 and
    SQLite triggers left to ``EXTRAS`` (``skipped`` collects their names)."""

    backend = "postgresql"  # a migration that must say a thing each backend's own way reads this

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.skipped: list[str] = []

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor | None:
        translated = ddl_to_postgres(sql)
        if translated is None:
            name = skipped_name(sql) or sql[:60]
            if name not in REPLACED:
                raise StoreError(f"migration statement has no PostgreSQL form; add one to mem.store.postgres: {sql[:80]}")
            self.skipped.append(name)
            return None
        return self.conn.run(translated, params)


# -------------------------------------------------------------------------------------- store
class PgStore(Store):
    """The Store on a PostgreSQL database (``Store.open`` picks it for a ``postgresql://`` URL)."""

    backend = "postgresql"
    integrity_check_name = "full-text index check"
    _writing = False  # inside write()
    _vector_type: Any = None  # the bytes subclass psycopg sends as a binary pgvector value (made on first use)
    _fts_ready = False  # the full-text tables exist (PG step 1): write() indexes what it wrote

    @classmethod
    def open(cls, path: Any, *, create: bool = True) -> "PgStore":  # type: ignore[override]
        conn = connect(str(path))
        store = cls(conn, conn.where)  # type: ignore[arg-type]
        store.read_only = False
        try:
            store._migrate()
            store._pg_steps()
            bound = store.embedder_id()
            if bound is not None:
                store._vec_dim = bound[1]
        except Exception:
            conn.close()
            raise
        return store

    def data_version(self) -> int | None:
        return None  # no cheap equivalent: callers read again what they would have carried

    # ---------------------------------------------------------------------------- schema
    def schema_version(self) -> int:
        if self.conn.execute("SELECT to_regclass('mem_schema') IS NOT NULL").fetchone()[0] is False:
            return 0
        row = self.conn.execute("SELECT version FROM mem_schema").fetchone()
        return int(row[0]) if row else 0

    def _writable(self) -> bool:
        return True

    def _before_migrations(self) -> None:
        """Before migrating: the vector extension, the SQLite-compatible functions (replaced, so a newer
        mem adds its own), the version table."""
        import psycopg

        try:
            self.conn.raw.execute("CREATE EXTENSION IF NOT EXISTS vector")
            if self.conn.pipeline is not None:
                self.conn.pipeline.sync()  # its error here, not at a later statement
        except psycopg.Error as exc:
            raise StoreError(
                f"{self.path}: cannot create the pgvector extension ({_first_line(exc)}); install pgvector on the "
                "server and have the database owner or a superuser run: CREATE EXTENSION vector;",
                path=self.path,
            ) from None
        for statement in HELPERS:
            self.conn.run(statement)
        self.conn.run("CREATE TABLE IF NOT EXISTS mem_schema (version INT NOT NULL)")

    def _run_migration(self, number: int) -> None:
        from mem.store.migrations import MIGRATIONS

        MIGRATIONS[number - 1](MigrationConnection(self.conn))
        for statement in EXTRAS.get(number, []):
            self.conn.run(statement)

    def _set_schema_version(self, number: int) -> None:
        self.conn.execute("DELETE FROM mem_schema")
        self.conn.execute("INSERT INTO mem_schema(version) VALUES (?)", (number,))

    def _pg_steps(self) -> None:
        """The ``PG_STEPS`` this database has not had yet, in one write transaction."""
        if int(self.get_meta("pg_schema") or 0) >= len(PG_STEPS):
            self._fts_ready = True
            return
        with self.write():
            for number in range(int(self.get_meta("pg_schema") or 0), len(PG_STEPS)):
                for statement in PG_STEPS[number]:
                    self.conn.run(statement)
                self.set_meta("pg_schema", str(number + 1))
            self._fts_ready = True  # step 1 queued every memory: indexed before this commits

    # ------------------------------------------------------------------------ transactions
    @contextmanager
    def write(self) -> Iterator[None]:
        """One write transaction holding the advisory write lock: writers commit one at a time."""
        self.conn.execute("BEGIN")
        try:
            self.conn.execute("SELECT pg_advisory_xact_lock(?)", (WRITE_LOCK,))
            self._writing = True
            with self.conn.pipelined():
                yield
                if self._fts_ready:
                    pg_fts.index_pending(self)  # what this transaction wrote, searchable when it commits
            self.conn.execute("COMMIT")
        except BaseException:
            if not self.conn.raw.closed and self.conn.in_transaction:
                try:
                    self.conn.raw.execute("ROLLBACK")
                except Exception:
                    pass
            raise
        finally:
            self._writing = False

    @contextmanager
    def bulk_writes(self, *, ahead: bool = False) -> Iterator[None]:
        """Nothing to change: ``write`` indexes a transaction's text at its end already (and a
        sequence, not the largest rowid, numbers the rows: ``ahead`` does not apply)."""
        yield

    @contextmanager
    def bulk_cache(self) -> Iterator[None]:
        """Nothing to size: the server's shared buffers serve every connection."""
        yield

    @contextmanager
    def checkpoints_aside(self) -> Iterator[None]:
        """Nothing to move: PostgreSQL checkpoints on its own."""
        yield

    @contextmanager
    def _short_wait(self) -> Iterator[None]:
        """A transaction (without the write lock: access counts need no order) whose statements
        wait at most 50 ms for row locks."""
        self.conn.execute("BEGIN")
        try:
            self.conn.execute("SET LOCAL lock_timeout = '50ms'")
            yield
            self.conn.execute("COMMIT")
        except BaseException:
            if not self.conn.raw.closed and self.conn.in_transaction:
                self.conn.raw.execute("ROLLBACK")
            raise

    # ------------------------------------------------------------------------------ vectors
    def _create_vec_index(self, dim: int) -> None:
        self.conn.run("DROP TABLE IF EXISTS memory_vec")
        self.conn.run(
            f'CREATE TABLE memory_vec (rowid BIGINT PRIMARY KEY REFERENCES memories(rowid) ON DELETE CASCADE, '
            f'scope TEXT COLLATE "C" NOT NULL, embedding vector({int(dim)}) NOT NULL)'
        )
        self.conn.run("CREATE INDEX memory_vec_scope ON memory_vec(scope)")

    def _vector(self, row: "np.ndarray") -> Any:
        """``row`` as a pgvector parameter in its binary form (dimension, then big-endian float32s): the
        text form, 384 decimals, cost about 1 ms a vector to write and parse."""
        import struct

        import numpy as np

        if self._vector_type is None:
            from psycopg.adapt import Dumper
            from psycopg.pq import Format

            oid = self.conn.execute("SELECT 'vector'::regtype::oid").fetchone()[0]
            dumper = type("VectorDumper", (Dumper,), {"format": Format.BINARY, "oid": int(oid),
                                                       "dump": lambda self, obj: bytes(obj)})
            self._vector_type = type("Vector", (bytes,), {})
            self.conn.raw.adapters.register_dumper(self._vector_type, dumper)
        values = np.asarray(row, dtype=">f4")
        return self._vector_type(struct.pack(">HH", len(values), 0) + values.tobytes())

    def _index_vectors(self, rowids: list[int], scopes: list[str], f32: "np.ndarray") -> None:
        self.conn.executemany("DELETE FROM memory_vec WHERE rowid = ?", [(rowid,) for rowid in rowids])
        self.conn.executemany("INSERT INTO memory_vec(rowid, embedding, scope) VALUES (?, ?, ?)",
                              [(rowid, self._vector(f32[i]), scopes[i]) for i, rowid in enumerate(rowids)])

    def rescope_vector_index(self, rowids: Sequence[int], scope: str) -> None:
        self.conn.execute(f"UPDATE memory_vec SET scope = ? WHERE rowid IN ({','.join('?' * len(rowids))})",
                          [scope, *rowids])

    def knn(self, query: "np.ndarray", k: int, scope: str | None) -> list[int]:
        """Exact nearest neighbours by cosine distance (pgvector), nearest first."""
        import numpy as np

        if self._vec_dim is None or k <= 0:
            return []
        q = self._vector(np.asarray(query, dtype=np.float32))
        if scope is None:
            rows = self.conn.execute("SELECT rowid FROM memory_vec ORDER BY embedding <=> ?, rowid LIMIT ?", (q, k))
        else:
            rows = self.conn.execute("SELECT rowid FROM memory_vec WHERE scope = ? ORDER BY embedding <=> ?, "
                                     "rowid LIMIT ?", (scope, q, k))
        return [int(r[0]) for r in rows]

    # --------------------------------------------------------------------------- full text
    def _stems(self, terms: list[str]) -> list[str]:
        if self._writing and self._fts_ready:  # this transaction's own writes first, as SQLite's index has them at once
            pg_fts.index_pending(self)
        return pg_fts.query_stems(terms)

    def bm25_warm(self, terms: list[str], k: int, scope: str | None) -> list[tuple[int, float]] | None:
        """BM25 of the OR of ``terms`` (``mem.store.pg_fts``), from RAM once this process has searched a
        few times, in SQL before: never None (the search stage asks here first)."""
        stems = self._stems(terms)
        if self._terms is None:
            self._terms = pg_fts.TermIndex(self)
        warm = self._terms.search(stems, k, scope)
        return warm if warm is not None else pg_fts.bm25(self, stems, k, scope)

    def bm25_terms(self, terms: list[str], k: int, scope: str | None) -> list[tuple[int, float]]:
        """``(rowid, score)`` best first, ties by rowid, scored in SQL; a quoted multi-word term counts its words."""
        return pg_fts.bm25(self, self._stems(terms), k, scope)

    def bm25(self, match: str, k: int, scope: str | None) -> list[tuple[int, float]]:
        """``bm25`` of an FTS5 OR-of-quoted-terms expression (what ``mem.text.fts_any`` builds)."""
        return self.bm25_terms([t.replace('""', '"') for t in re.findall(r'"((?:[^"]|"")*)"', match)], k, scope)

    def common_terms(self, terms: list[str]) -> set[str]:
        return set()  # no pruning: every term is scored

    def fts_rowids(self, match: str, limit: int, scope: str | None, exclude: set[int]) -> list[int]:
        return [r for r, _ in self.bm25(match, limit + len(exclude), scope) if r not in exclude][:limit]

    # -------------------------------------------------------------------------------- stats
    def _has_table(self, name: str) -> bool:
        return bool(self.conn.execute("SELECT to_regclass(?) IS NOT NULL", (name,)).fetchone()[0])

    def _fts_rows(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM fts_docs").fetchone()[0])

    def _size_bytes(self) -> int:
        return int(self.conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])

    def integrity(self) -> str:
        """PostgreSQL checks its own pages; what can drift here is the full-text index."""
        missing = self.conn.execute(
            "SELECT COUNT(*) FROM memories m WHERE NOT EXISTS (SELECT 1 FROM fts_docs d WHERE d.rowid = m.rowid)"
        ).fetchone()[0]
        return "ok" if not missing else f"{missing} memories missing from the full-text index"


# ------------------------------------------------------------------------------------- doctor
def server_facts(url: str) -> dict[str, Any]:
    """What ``mem doctor`` reports about a server, read without creating or migrating anything:
    version, role, TLS, pgvector (installed / available), mem's schema version, privileges."""
    conn = connect(url)
    try:
        one = lambda sql, *p: conn.execute(sql, p).fetchone()  # noqa: E731
        facts: dict[str, Any] = {
            "server": one("SHOW server_version")[0],
            "role": one("SELECT current_user")[0],
            "database": one("SELECT current_database()")[0],
            "tls": bool((one("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()") or [False])[0]),
            "vector": (one("SELECT extversion FROM pg_extension WHERE extname = 'vector'") or [None])[0],
            "vector_available": (one("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'")
                                 or [None])[0],
            "create_on_database": one("SELECT has_database_privilege(current_database(), 'CREATE')")[0],
            "create_on_schema": one("SELECT has_schema_privilege(current_schema(), 'CREATE')")[0],
            "schema": None,
        }
        if one("SELECT to_regclass('mem_schema') IS NOT NULL")[0]:
            row = one("SELECT version FROM mem_schema")
            facts["schema"] = int(row[0]) if row else 0
        return facts
    finally:
        conn.close()
