"""Bulk import against eager intake: memories/s through the same gate, the finishing pass timed apart.

    python bench/bulk_import.py                          # 10k hash, 2 interleaved pairs
    python bench/bulk_import.py --sizes 100000 --pairs 1 # the long one
    python bench/bulk_import.py --sizes 100000 --bulk-only
    python bench/bulk_import.py --into BIG.db --sizes 10000 --bulk-only   # 10k more into a copy of a 100k database

Each run builds a fresh database from the same synthetic texts (sessions in ``meta.session``) in one
``mem.stages.add.run`` call, as ``mem add - < file`` does: eager links every memory as it is stored;
bulk (``AddOptions(bulk=True)``, what ``mem import`` and ``mem add - --bulk`` use) stores rows, FTS and
vectors first and links in the finishing pass (``mem.stages.finish.run``), whose time is printed on
its own. Pairs alternate which goes first, so machine drift hits both; the ratio is the figure to quote.
Each pair also checks that both databases hold the same number of edges, entity mentions and assertions.
``--into DB`` imports into a copy of DB (scope ``bench``) the synthetic texts that follow the ones it
holds: the rate at that size without building it. The process's CPU seconds are printed beside the
wall seconds: on a shared machine they move far less with the load.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchlib  # noqa: E402,F401  (puts the repo on sys.path)
from synth import memory_texts  # noqa: E402


def build(db: Path, texts: list[str], embedder: str, *, bulk: bool, finishing: bool = True) -> dict[str, Any]:
    """Intake of ``texts`` into ``db`` (new, or a copy): wall and CPU seconds, the finishing pass's share,
    graph counts."""
    from mem.config import resolve_settings
    from mem.stages import add, finish
    from mem.stages.context import Context
    from mem.store import Store

    settings = resolve_settings(db=db, embedder=embedder, scope="bench", now="2026-06-01T12:00:00Z")
    records = [(i + 1, {"text": t, "meta": {"session": f"s{i % 50}"}}) for i, t in enumerate(texts)]
    finishing_times: list[tuple[float, float]] = []
    real_run = finish.run

    def timed_run(ctx: Any, **kwargs: Any) -> Any:
        started, cpu = time.perf_counter(), time.process_time()
        try:
            return real_run(ctx, **kwargs) if finishing else {}
        finally:
            finishing_times.append((time.perf_counter() - started, time.process_time() - cpu))

    finish.run = timed_run
    try:
        with Store.open(db) as store:
            ctx = Context(store=store, settings=settings)
            ctx.embedder  # load outside the clock (a model in process; the worker process loads its own)
            start, cpu, child = time.perf_counter(), time.process_time(), _children_cpu()
            statuses = [o.status for o in add.run(ctx, records, add.AddOptions(keep_near=True, bulk=bulk))]
            seconds, cpu, child = time.perf_counter() - start, time.process_time() - cpu, _children_cpu() - child
            counts = store.conn.execute(
                "SELECT (SELECT COUNT(*) FROM edges), (SELECT COUNT(*) FROM memory_entities), "
                "(SELECT COUNT(*) FROM assertions)").fetchone()
    finally:
        finish.run = real_run
    assert statuses.count("added") + statuses.count("superseded") == len(texts), "every text is new"
    return {"seconds": seconds, "cpu": cpu, "worker_cpu": child, "finishing": sum(w for w, _ in finishing_times),
            "finishing_cpu": sum(c for _, c in finishing_times), "counts": tuple(counts)}


def _children_cpu() -> float:
    """CPU seconds of this process's finished children: the intake worker's (mem.stages.intake_worker)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _held(db: Path) -> int:
    """How many memories ``db`` holds: the texts to import follow that many of ``memory_texts``
    (read-only: the copies are what the runs open, and migrate)."""
    import sqlean

    conn = sqlean.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0])
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--embedder", default="hash")
    parser.add_argument("--bulk-only", action="store_true", help="skip the eager runs (100k eager takes minutes)")
    parser.add_argument("--into", type=Path, help="import into a copy of this database (scope 'bench') instead of a new one")
    parser.add_argument("--worker", choices=("auto", "off", "pairs"), default="auto",
                        help="the text work in a worker process as mem runs it (auto), in process (off), "
                             "or each run twice, off then on, alternating (pairs)")
    parser.add_argument("--skip-finishing", action="store_true",
                        help="leave the graph pending (the import's own rate only; with --bulk-only)")
    args = parser.parse_args()
    if args.skip_finishing and not args.bulk_only:
        parser.error("--skip-finishing needs --bulk-only (eager intake links as it goes)")
    held = _held(args.into) if args.into else 0
    for n in args.sizes:
        texts = list(memory_texts(held + n))[held:]
        ratios = []
        for pair in range(args.pairs):
            order = [True] if args.bulk_only else ([False, True] if pair % 2 == 0 else [True, False])
            workers = {"auto": [None], "off": [False], "pairs": [False, True] if pair % 2 == 0 else [True, False]}
            for worker in workers[args.worker]:
                line = _pair(args, n, held, texts, order, worker, pair, ratios)
                print(line, flush=True)
        if ratios:
            print(f"n={n} median over {len(ratios)} pairs: bulk overall x{statistics.median(r for r, _ in ratios):.2f} "
                  f"eager's rate, import alone x{statistics.median(r for _, r in ratios):.2f}", flush=True)


def _pair(args: Any, n: int, held: int, texts: list[str], order: list[bool], worker: bool | None, pair: int,
          ratios: list[tuple[float, float]]) -> str:
    """One pair's runs (bulk, and eager unless ``--bulk-only``), its printed line."""
    if worker is not None:
        from mem.stages import intake_worker

        floor = intake_worker.MIN_RECORDS
        intake_worker.MIN_RECORDS = 10**12 if worker is False else floor
    try:
        runs: dict[bool, dict[str, Any]] = {}
        for bulk in order:
            with tempfile.TemporaryDirectory(prefix="mem-bulk-") as tmp:
                if args.into:
                    shutil.copy(args.into, Path(tmp) / "mem.db")
                runs[bulk] = build(Path(tmp) / "mem.db", texts, args.embedder, bulk=bulk,
                                   finishing=not args.skip_finishing)
    finally:
        if worker is not None:
            intake_worker.MIN_RECORDS = floor
    b = runs[True]
    store_s = b["seconds"] - b["finishing"]
    where = f" into {held:,}" if held else ""
    how = {None: "", False: ", in process", True: ", worker"}[worker]
    line = (f"n={n}{where} {args.embedder} pair {pair + 1}{how}: bulk {n / b['seconds']:,.0f}/s overall, import "
            f"{n / store_s:,.0f}/s ({store_s:.1f} s, CPU {b['cpu'] - b['finishing_cpu']:.1f} s + worker "
            f"{b['worker_cpu']:.1f} s) + finishing {b['finishing']:.1f} s (CPU {b['finishing_cpu']:.1f} s)")
    if False in runs:
        e = runs[False]
        ratio = e["seconds"] / b["seconds"]
        ratios.append((ratio, e["seconds"] / store_s))
        same = "same graph counts" if e["counts"] == b["counts"] else f"COUNTS DIFFER {e['counts']} vs {b['counts']}"
        line += (f"; eager {n / e['seconds']:,.0f}/s ({e['seconds']:.1f} s); bulk/eager overall x{ratio:.2f}, "
                 f"import alone x{e['seconds'] / store_s:.2f}; {same}")
    return line


if __name__ == "__main__":
    main()
