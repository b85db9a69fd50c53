"""Probes for ``mem doctor``: what SQLite can do here, and a schema peek that never migrates."""

from __future__ import annotations

from pathlib import Path


def sqlite_version() -> str:
    """The SQLite library mem runs on (sqlean's bundled one)."""
    import sqlean

    return str(sqlean.sqlite_version)


def vec_version() -> str:
    """Load sqlite-vec into a throwaway in-memory connection; raises when it cannot load."""
    import sqlean
    import sqlite_vec

    conn = sqlean.connect(":memory:")
    try:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
        return str(conn.execute("SELECT vec_version()").fetchone()[0])
    finally:
        conn.close()


def fts5_works() -> bool:
    """Create, fill and query an FTS5 table in memory; raises when FTS5 is missing."""
    import sqlean

    conn = sqlean.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE probe USING fts5(body)")
        conn.execute("INSERT INTO probe(body) VALUES ('doctor probe')")
        return conn.execute("SELECT COUNT(*) FROM probe WHERE probe MATCH 'probe'").fetchone()[0] == 1
    finally:
        conn.close()


def peek_schema_version(path: Path) -> int:
    """``PRAGMA user_version`` read without migrating or writing anything."""
    import sqlean

    conn = sqlean.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True, timeout=2.0)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()
