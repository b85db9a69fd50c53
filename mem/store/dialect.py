"""The Store's SQL is written once, in SQLite's dialect; this module rewrites it for PostgreSQL.

The rewrite is mechanical and small, so every Store method and every migration runs on both
backends from one string (``mem.store.postgres`` supplies what cannot be rewritten: full-text
search, the vector index, schema bookkeeping). What it changes:

- ``?`` placeholders become ``%s`` (and a literal ``%`` becomes ``%%``), outside string literals;
- ``INSERT OR IGNORE`` becomes ``INSERT ... ON CONFLICT DO NOTHING``, ``INSERT OR REPLACE`` an
  upsert on the table's key (``CONFLICT_KEYS``);
- unary ``+`` planner hints (``+m.scope = ?``: a type error in PostgreSQL) are dropped;
- scalar ``MIN(COALESCE(...), ...)`` / ``MAX(...)`` become ``LEAST`` / ``GREATEST``;
- ``json_array(x)`` becomes ``mem_json_array(x)``; ``json_each``, ``json_extract``,
  ``json_array_length`` and ``json_insert`` keep their names: migration-time SQL functions of
  the same meaning exist in the PostgreSQL schema (``mem.store.postgres.HELPERS``);
- DDL: ``INTEGER PRIMARY KEY`` becomes an identity column, ``INTEGER`` ``BIGINT``, ``REAL``
  ``DOUBLE PRECISION``, ``BLOB`` ``BYTEA``, ``TEXT`` ``TEXT COLLATE "C"`` (byte order, as in
  SQLite: id prefixes and sorted ids must not depend on the server's locale), ``WITHOUT ROWID``
  and ``AUTOINCREMENT`` go; FTS5 virtual tables and SQLite triggers are skipped (the PostgreSQL
  schema has its own, ``mem.store.postgres``), and ``skipped`` names them so a test can hold the
  two schemas together.

>>> to_postgres("SELECT id FROM memories WHERE id = ? AND +scope = ?")
'SELECT id FROM memories WHERE id = %s AND scope = %s'
>>> to_postgres("INSERT OR IGNORE INTO edges(src, dst) VALUES (?, ?)")
'INSERT INTO edges(src, dst) VALUES (%s, %s) ON CONFLICT DO NOTHING'
"""

from __future__ import annotations

import re
from functools import lru_cache

# Tables written with INSERT OR REPLACE, and the key a PostgreSQL upsert conflicts on.
CONFLICT_KEYS = {"vectors": ("rowid",), "token_states": ("rowid",), "edges": ("src", "dst", "type"), "meta": ("key",)}
# Tables whose INSERTs report the new row's key (``cursor.lastrowid``), and that key's column.
GENERATED_KEYS = {"memories": "rowid", "consolidation_runs": "id", "communities": "id", "entities": "id",
                  "changelog": "seq"}

_LITERAL = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"")
_UNARY_PLUS = re.compile(r"(?<=[\s(,=])\+(?=[A-Za-z_])")
_INSERT_OR = re.compile(r"^\s*INSERT\s+OR\s+(IGNORE|REPLACE)\s+INTO\s+(\w+)\s*\(([^)]*)\)", re.I)
_RETURNING = re.compile(r"\sRETURNING\s", re.I)
_INSERT_INTO = re.compile(r"^\s*INSERT\s+INTO\s+(\w+)", re.I)


class Untranslatable(ValueError):
    """SQL this module cannot rewrite for PostgreSQL (a PRAGMA, an FTS5 MATCH, an unknown upsert)."""


@lru_cache(maxsize=4096)
def to_postgres(sql: str) -> str:
    """``sql`` (SQLite dialect, ``?`` placeholders) rewritten for PostgreSQL through psycopg (``%s``)."""
    if re.match(r"^\s*PRAGMA\b", sql, re.I) or re.search(r"\bMATCH\b|\bsqlite_master\b|\bfts5", sql, re.I):
        raise Untranslatable(f"no PostgreSQL form for: {sql[:80]}")
    out = _outside_literals(sql, _rewrite_code)
    insert = _INSERT_OR.match(out)
    if insert:
        verb, table, columns = insert.group(1).upper(), insert.group(2), [c.strip() for c in insert.group(3).split(",")]
        out = re.sub(r"^\s*INSERT\s+OR\s+\w+\s+INTO", "INSERT INTO", out, count=1, flags=re.I)
        if verb == "IGNORE":
            clause = " ON CONFLICT DO NOTHING"
        else:
            keys = CONFLICT_KEYS.get(table)
            if keys is None:
                raise Untranslatable(f"INSERT OR REPLACE INTO {table}: add its key to mem.store.dialect.CONFLICT_KEYS")
            updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in columns if c not in keys)
            clause = f" ON CONFLICT ({', '.join(keys)}) " + (f"DO UPDATE SET {updates}" if updates else "DO NOTHING")
        returning = _RETURNING.search(out)
        if returning:
            out = out[: returning.start()] + clause + out[returning.start():]
        else:
            out = out.rstrip().rstrip(";") + clause
    return out


def generated_key(sql: str) -> str | None:
    """The key column to return from an INSERT (``RETURNING``), when its table has a generated one
    and the statement does not already return something."""
    insert = _INSERT_INTO.match(sql)
    if not insert or _RETURNING.search(sql):
        return None
    return GENERATED_KEYS.get(insert.group(1).lower())


def _rewrite_code(code: str) -> str:
    """Rewrites for the parts of a statement outside string literals."""
    code = code.replace("%", "%%").replace("?", "%s")
    code = _UNARY_PLUS.sub("", code)
    code = re.sub(r"\bMIN\(\s*COALESCE\(", "LEAST(COALESCE(", code, flags=re.I)
    code = re.sub(r"\bMAX\(\s*COALESCE\(", "GREATEST(COALESCE(", code, flags=re.I)
    code = re.sub(r"\bjson_array\(", "mem_json_array(", code, flags=re.I)
    return code


def _outside_literals(sql: str, rewrite: "object") -> str:
    parts: list[str] = []
    last = 0
    for literal in _LITERAL.finditer(sql):
        parts.append(rewrite(sql[last : literal.start()]))  # type: ignore[operator]
        text = literal.group(0)
        parts.append(text.replace("%", "%%") if text.startswith("'") else text)
        last = literal.end()
    parts.append(rewrite(sql[last:]))  # type: ignore[operator]
    return "".join(parts)


# ------------------------------------------------------------------------------------------ DDL
_DDL_TYPES = [  # a type follows a column name: "(\w\s+)" keeps a column called "text" a name
    (re.compile(r"(\w\s+)INTEGER\s+PRIMARY\s+KEY\s+AUTOINCREMENT\b", re.I), r"\1BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"),
    (re.compile(r"(\w\s+)INTEGER\s+PRIMARY\s+KEY\s+REFERENCES\b", re.I), r"\1BIGINT PRIMARY KEY REFERENCES"),
    (re.compile(r"(\w\s+)INTEGER\s+PRIMARY\s+KEY\b", re.I), r"\1BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"),
    (re.compile(r"(\w\s+)INTEGER\b", re.I), r"\1BIGINT"),
    (re.compile(r"(\w\s+)REAL\b", re.I), r"\1DOUBLE PRECISION"),
    (re.compile(r"(\w\s+)BLOB\b", re.I), r"\1BYTEA"),
    (re.compile(r"(\w\s+)TEXT\b(?!\s+COLLATE)", re.I), r'\1TEXT COLLATE "C"'),
]


def ddl_to_postgres(statement: str) -> str | None:
    """One migration statement for PostgreSQL; None for what the PostgreSQL schema does its own way
    (FTS5 tables, SQLite triggers).

    >>> ddl_to_postgres("CREATE TABLE t (id INTEGER PRIMARY KEY, x REAL, b BLOB) WITHOUT ROWID")
    'CREATE TABLE t (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, x DOUBLE PRECISION, b BYTEA)'
    >>> ddl_to_postgres("CREATE VIRTUAL TABLE f USING fts5(text)") is None
    True
    """
    head = statement.lstrip().upper()
    if head.startswith("CREATE VIRTUAL TABLE") or head.startswith("CREATE TRIGGER"):
        return None
    if head.startswith("CREATE TABLE") or head.startswith("ALTER TABLE"):
        def types(code: str) -> str:
            for pattern, replacement in _DDL_TYPES:
                code = pattern.sub(replacement, code)
            return code

        statement = _outside_literals(statement, types)
        statement = re.sub(r"\)\s*WITHOUT\s+ROWID", ")", statement, flags=re.I)
    return to_postgres(statement.strip().rstrip(";"))


def skipped_name(statement: str) -> str | None:
    """The name of an FTS5 table or trigger ``ddl_to_postgres`` leaves out (for the schema parity test)."""
    found = re.match(r"\s*CREATE\s+(?:VIRTUAL\s+TABLE|TRIGGER)\s+(\w+)", statement, re.I)
    return found.group(1) if found else None
