"""A window of the bulk import's finishing pass on an existing database, which is left unchanged.

    python bench/finish_window.py --db DB --start 1 --batches 4        # the pass's rate at its start
    python bench/finish_window.py --db DB --start 980000 --batches 2   # ... near the end of a million

The finishing pass (``mem.stages.finish.run``, what ``mem consolidate --phase replay`` and the end of
``mem import`` run) over ``--batches`` batches of pending memories from rowid ``--start``, as the pass
would run them there: the pending rows below ``--start`` are forgotten first and every batch runs in
one transaction that is rolled back at the end, so the same window can be timed again with another
tree (the database's file is not changed; work on a copy anyway). The matrix is loaded before the
clock. Prints wall and CPU seconds per batch (the first batch also builds what the pass keeps warm:
BM25's term index, the scope masks) and memories/s over the window, with the load average.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib  # noqa: E402,F401  (the repository on sys.path, single-threaded BLAS)


def window(db: str, start: int, batches: int, embedder: str = "hash") -> dict[str, Any]:
    from mem.config import resolve_settings
    from mem.stages import finish
    from mem.stages.context import Context
    from mem.store import Store, pending

    with Store.open(Path(db)) as store:
        ctx = Context(store=store, settings=resolve_settings(db=db, embedder=embedder))
        began = time.perf_counter()
        ctx.vectors.sync()
        loaded = time.perf_counter() - began
        store.conn.execute("BEGIN IMMEDIATE")
        real_write, real_first, marks = Store.write, pending.first, []

        def first(store: Any, limit: int) -> list[tuple[int, str | None]]:
            marks.append((time.perf_counter(), time.process_time()))
            return real_first(store, limit) if len(marks) <= batches else []

        Store.write = lambda self: contextlib.nullcontext()  # type: ignore[assignment,method-assign]
        pending.first = first
        try:
            store.conn.execute("DELETE FROM pending_links WHERE memory_rowid < ?", (start,))
            wall, cpu = time.perf_counter(), time.process_time()
            done = len(finish.run(ctx))
            marks.append((time.perf_counter(), time.process_time()))  # the last batch's end
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        finally:
            Store.write, pending.first = real_write, real_first  # type: ignore[method-assign]
            store.conn.execute("ROLLBACK")
    steps = [(b[0] - a[0], b[1] - a[1]) for a, b in zip(marks, marks[1:])][:batches]
    return {"memories": done, "wall": wall, "cpu": cpu, "batches": steps, "matrix": loaded}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True)
    parser.add_argument("--start", type=int, default=1, help="the window's first pending rowid")
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--embedder", default="hash")
    args = parser.parse_args(argv)
    got = window(args.db, args.start, args.batches, args.embedder)
    n, wall, cpu = got["memories"], got["wall"], got["cpu"]
    print(f"matrix loaded in {got['matrix']:.1f} s; from rowid {args.start}: {n} memories in {wall:.1f} s "
          f"(CPU {cpu:.1f} s): {n / wall:.1f}/s, {n / cpu if cpu else 0:.1f} per CPU second; batches wall/CPU "
          f"{' '.join(f'{w:.1f}/{c:.1f}' for w, c in got['batches'])}; load {os.getloadavg()[0]:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
