"""Eager intake's writing thread alone, on drafts prepared once and kept in a file, for before/after
comparisons of the write path that the model's time and the machine's load do not blur.

    python bench/intake_write.py --embedder minilm               # CPU a memory, best of --rounds
    python bench/intake_write.py --profile /tmp/w.prof           # cProfile over thread CPU time
    python bench/intake_write.py --sql                           # CPU per SQL statement
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \\
        python bench/intake_write.py --rounds 1 [--n 0]          # instructions (--n 0: the setup alone)

The 3,000 synthetic texts (``synth.py``) are validated and prepared (embedded, enriched) once and
pickled under ``--cache`` (delete it after a change to preparing); each round then writes them chunk
by chunk (``add._write``) into a new database, filling the assertion cache for each chunk first as
intake's preparing thread does, with only the writes on the clock (``time.thread_time``). The model
is never loaded once the drafts are kept.
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchlib  # noqa: E402,F401  (puts the repo on sys.path, BLAS single-threaded)
from synth import memory_texts  # noqa: E402


class _TimedConnection:
    """A connection whose statements add their CPU (fetching included) to ``spent`` by SQL text."""

    def __init__(self, conn: Any, spent: dict[str, float]) -> None:
        self._conn, self._spent = conn, spent

    def execute(self, sql: str, *args: Any) -> Any:
        start = time.thread_time()
        cursor = self._conn.execute(sql, *args)
        rows = _Rows(cursor.fetchall()) if cursor.description else cursor
        self._spent[" ".join(sql.split())[:110]] += time.thread_time() - start
        return rows

    def executemany(self, sql: str, *args: Any) -> Any:
        start = time.thread_time()
        cursor = self._conn.executemany(sql, *args)
        self._spent["MANY " + " ".join(sql.split())[:105]] += time.thread_time() - start
        return cursor

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


class _Rows(list):  # type: ignore[type-arg]
    def fetchone(self) -> Any:
        return self[0] if self else None

    def fetchall(self) -> list[Any]:
        return list(self)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--n", type=int, default=3000, help="drafts written (of the 3,000 kept)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "mem-intake-write")
    parser.add_argument("--profile", type=Path, help="write a cProfile of the writes (thread CPU time) here")
    parser.add_argument("--sql", action="store_true", help="print the CPU of each SQL statement")
    args = parser.parse_args()

    from mem.config import resolve_settings
    from mem.embed import get_embedder
    from mem.enrich.assertions import extract_assertions
    from mem.stages import add
    from mem.stages.context import Context
    from mem.store import Store

    embedder = get_embedder(args.embedder)
    options = add.AddOptions()
    kept = args.cache / f"drafts-{args.embedder}.pickle"

    def context(store: Store, settings: Any) -> Context:
        ctx = Context(store=store, settings=settings)
        store.bind_embedder(args.embedder, embedder.id, lambda: embedder.dim)
        ctx.use_embedder(embedder)
        return ctx

    if not kept.exists():
        texts = list(memory_texts(3000))
        with tempfile.TemporaryDirectory() as tmp:
            settings = resolve_settings(db=Path(tmp) / "mem.db", embedder=args.embedder, scope="bench")
            with Store.open(settings.db_path) as store:
                ctx = context(store, settings)
                drafts = [add.validate({"text": t}, i + 1, ctx, options) for i, t in enumerate(texts)]
                for start in range(0, len(drafts), add.CHUNK):
                    add._prepare(ctx, drafts[start : start + add.CHUNK], options)
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_bytes(pickle.dumps(drafts))
    best = []
    for _ in range(args.rounds):
        drafts = pickle.loads(kept.read_bytes())[: args.n]
        chunks = [drafts[start : start + add.CHUNK] for start in range(0, len(drafts), add.CHUNK)]
        spent: dict[str, float] = defaultdict(float)
        with tempfile.TemporaryDirectory() as tmp:
            settings = resolve_settings(db=Path(tmp) / "mem.db", embedder=args.embedder, scope="bench")
            with Store.open(settings.db_path) as store:
                ctx = context(store, settings)
                if args.sql:
                    store.conn = _TimedConnection(store.conn, spent)  # type: ignore[assignment]
                import cProfile

                profile = cProfile.Profile(time.thread_time) if args.profile else None
                cpu = 0.0
                for chunk in chunks:
                    for draft in chunk:  # what the preparing thread leaves in the cache
                        extract_assertions(draft.memory.text)
                    start = time.thread_time()
                    if profile:
                        profile.enable()
                    list(add._write(ctx, chunk, options))
                    if profile:
                        profile.disable()
                    cpu += time.thread_time() - start
        best.append(cpu / max(1, len(drafts)) * 1e6)
        if profile:
            profile.dump_stats(args.profile)
        for sql, seconds in sorted(spent.items(), key=lambda kv: -kv[1])[:30]:
            print(f"  {seconds / len(drafts) * 1e6:7,.0f} us  {sql}")
    print(f"{args.embedder}, {args.n} drafts: the writing thread's CPU {min(best):,.0f} us a memory (best of "
          f"{args.rounds}: {', '.join(f'{b:,.0f}' for b in best)}), load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
