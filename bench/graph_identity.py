"""Identity check for speed work on intake: the graph eager (or bulk) intake builds, table by table.

Usage::

    python bench/graph_identity.py --save SNAPSHOT [--embedder minilm] [--bulk]   # on the tree before
    python bench/graph_identity.py --check SNAPSHOT                               # after: exit 1 on a difference

Intake (``add.run``, as ``mem add -`` runs it, the clock pinned) of, into one database: 3,000 synthetic
texts (``synth.py``) at one pinned instant (every created_at ties: order by rowid), the same texts again
with their own increasing times in 50 sessions (another scope: temporal chains, near duplicates of the
first copy stay in their own scope), every coding-memory set (its records as written: times, kinds, tags,
sessions), and the contradiction pairs in order and reversed (the older memory arriving after its
correction). Then every table is read in a canonical form: memory ids become their rowids (ids are
random), clock columns pinned by ``MEM_NOW`` are kept, FTS5's shadow tables are skipped (derived from
the rows; ``memory_fts`` itself is compared by a full-text query per memory's first word). The snapshot
holds each table's rows, so ``--check`` names the first rows that differ.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import HELD_OUT, ROOT, read_jsonl  # noqa: E402  (also puts the repo on sys.path)
from synth import memory_texts  # noqa: E402

NOW = "2027-01-01T00:00:00Z"
_SKIPPED = ("memory_fts_",)  # FTS5 shadow tables: derived from the rows, layout depends on merges


def corpus(n: int) -> list[list[tuple[int, dict[str, Any]]]]:
    """The batches intake gets, each one ``add.run`` call (the description in the module docstring)."""
    texts = list(memory_texts(n))
    batches = [[(i + 1, {"text": t, "scope": "synth"}) for i, t in enumerate(texts)]]
    batches.append([(i + 1, {"text": t, "scope": "timed", "meta": {"session": f"s{i // 60}"},
                             "created_at": f"2026-{1 + i // 300:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z"})
                    for i, t in enumerate(texts)])
    for path in sorted((ROOT / "bench").glob("coding_memory*.jsonl")):
        if path.stem.endswith("_queries") or path.name in HELD_OUT:  # blind data is measured, never replayed
            continue
        rows = read_jsonl(path)
        batches.append([(i + 1, {k: v for k, v in row.items() if k != "key"} | {"scope": path.stem})
                        for i, row in enumerate(rows)])
    pairs = read_jsonl(ROOT / "bench" / "contradictions.jsonl")
    for order, scope in ((("old", "new"), "contra"), (("new", "old"), "contra-reversed")):
        records = []
        for i, pair in enumerate(pairs):
            for side in order:
                minute = 2 * i + (1 if side == "new" else 0)
                records.append((len(records) + 1, {
                    "text": pair[side], "scope": scope, "kind": pair.get("new_kind", "fact") if side == "new" else "fact",
                    "created_at": f"2026-03-{1 + minute // 1440:02d}T{minute // 60 % 24:02d}:{minute % 60:02d}:00Z"}))
        batches.append(records)
    return batches


def build(db: Path, embedder_name: str, bulk: bool, n: int) -> float:
    """Intake of the corpus into a new database at ``db``; returns the seconds it took."""
    from mem.config import resolve_settings
    from mem.stages import add
    from mem.stages.context import Context
    from mem.store import Store

    settings = resolve_settings(db=db, embedder=embedder_name, scope="identity", now=NOW)
    start = time.perf_counter()
    with Store.open(settings.db_path) as store:
        ctx = Context(store=store, settings=settings)
        for records in corpus(n):
            for outcome in add.run(ctx, records, add.AddOptions(bulk=bulk)):
                if outcome.status not in ("added", "duplicate", "superseded"):
                    raise SystemExit(f"intake refused a record: {outcome}")
    return time.perf_counter() - start


def canonical(db: Path) -> dict[str, list[str]]:
    """Every table's rows, sorted, with memory ids replaced by ``#rowid``."""
    conn = sqlite3.connect(db)
    id_of = {mid: f"#{rowid}" for rowid, mid in conn.execute("SELECT rowid, id FROM memories")}

    def norm(value: Any) -> Any:
        if isinstance(value, str):
            if value in id_of:
                return id_of[value]
            for mid in _ids_in(value):
                value = value.replace(mid, id_of.get(mid, mid))
            return value
        if isinstance(value, bytes):
            return hashlib.blake2b(value, digest_size=12).hexdigest()
        if isinstance(value, float):
            return repr(value)
        return value

    tables: dict[str, list[str]] = {}
    names = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name")]
    for name in names:
        if name.startswith(_SKIPPED) or name.startswith("sqlite_"):
            continue
        columns = [c[1] for c in conn.execute(f"PRAGMA table_info({name})")]
        rows = [json.dumps([norm(v) for v in row]) for row in conn.execute(f"SELECT * FROM {name}")]
        tables[name] = [json.dumps(columns)] + sorted(rows)
    # the full-text index: each memory found by its own words
    fts = []
    for rowid, text in conn.execute("SELECT rowid, text FROM memories ORDER BY rowid"):
        words = [w for w in "".join(c if c.isalnum() else " " for c in text).split() if len(w) > 2][:3]
        if words:
            query = " AND ".join(f'"{w}"' for w in words)
            hits = [r for (r,) in conn.execute("SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rowid",
                                              (query,))]
            fts.append(json.dumps([rowid, rowid in hits, len(hits)]))
    tables["memory_fts (queries)"] = fts
    conn.close()
    return tables


def _ids_in(text: str) -> list[str]:
    """UUID-shaped substrings of ``text`` (ids inside JSON payloads)."""
    import re

    return re.findall(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--save", type=Path, help="write the snapshot here")
    mode.add_argument("--check", type=Path, help="compare with this snapshot; exit 1 on a difference")
    parser.add_argument("--embedder", default="hash")
    parser.add_argument("--bulk", action="store_true", help="bulk intake (with its finishing pass) instead of eager")
    parser.add_argument("--n", type=int, default=3000, help="synthetic texts")
    args = parser.parse_args()
    if args.check:
        with args.check.open("rb") as fh:
            saved = pickle.load(fh)
        args.embedder, args.bulk, args.n = saved["embedder"], saved["bulk"], saved["n"]
    with tempfile.TemporaryDirectory() as tmp:
        seconds = build(Path(tmp) / "mem.db", args.embedder, args.bulk, args.n)
        tables = canonical(Path(tmp) / "mem.db")
    summary = {name: len(rows) - (0 if name.endswith("(queries)") else 1) for name, rows in tables.items()}
    print(f"{args.embedder}, {'bulk' if args.bulk else 'eager'}, intake {seconds:.1f} s: "
          + ", ".join(f"{name} {count}" for name, count in summary.items() if count), file=sys.stderr)
    if args.save:
        with args.save.open("wb") as fh:
            pickle.dump({"embedder": args.embedder, "bulk": args.bulk, "n": args.n, "tables": tables}, fh)
        return
    differ = 0
    for name in sorted(set(saved["tables"]) | set(tables)):
        before, after = saved["tables"].get(name, []), tables.get(name, [])
        if before != after:
            differ += 1
            gone, new = sorted(set(before) - set(after)), sorted(set(after) - set(before))
            print(f"{name}: {len(before)} -> {len(after)} rows, {len(gone)} gone, {len(new)} new")
            for row in gone[:5]:
                print(f"  - {row[:300]}")
            for row in new[:5]:
                print(f"  + {row[:300]}")
    print("identical" if not differ else f"{differ} tables differ")
    raise SystemExit(1 if differ else 0)


if __name__ == "__main__":
    main()
