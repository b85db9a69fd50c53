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


TRIAL_MAX_BYTES = 512 * 1024 * 1024  # larger stores are not copied to try their upgrade (a copy takes seconds)


def trial_upgrade(path: Path) -> str | None:
    """Upgrade a copy of an older store as opening it would (the original is only read): None when
    that works, else why it fails. A store whose tables do not match its version (written by another
    build of mem) fails here rather than at the user's next command. Skipped (None) above
    ``TRIAL_MAX_BYTES``."""
    import tempfile

    import sqlean

    from mem.store import Store

    if Path(path).stat().st_size > TRIAL_MAX_BYTES:
        return None
    with tempfile.TemporaryDirectory(prefix="mem-doctor-") as folder:
        copy = Path(folder) / "trial.db"
        source = sqlean.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True, timeout=2.0)
        target = sqlean.connect(str(copy))
        try:
            source.backup(target)  # a consistent snapshot, the WAL's committed pages included
        finally:
            target.close()
            source.close()
        try:
            Store.open(copy, create=False).close()
        except Exception as exc:  # noqa: BLE001  (any failure is the finding)
            return (getattr(exc, "message", None) or str(exc)).replace(str(copy), str(path))
    return None
