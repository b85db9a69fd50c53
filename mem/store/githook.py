"""Look-ups the git hook needs: a memory by the commit or patch it was captured from."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mem.store import Store

# Only these meta keys are looked up; the JSON path is never built from user text.
_PATHS = {"commit": "$.commit", "patch_id": "$.patch_id"}


def find_by_meta(store: "Store", scope: str, key: str, value: str) -> tuple[str, str, dict] | None:
    """``(id, text, meta)`` of the oldest memory in ``scope`` whose ``meta[key]`` is ``value``, else None.

    find_by_meta(store, "mem", "patch_id", "1f2e...")
    """
    import orjson

    path = _PATHS[key]
    row = store.conn.execute(
        "SELECT id, text, meta FROM memories WHERE scope = ? AND json_extract(meta, ?) = ? ORDER BY rowid LIMIT 1",
        (scope, path, value),
    ).fetchone()
    return (str(row[0]), str(row[1]), orjson.loads(row[2])) if row else None
