"""The hash bulk import's CPU work, for instruction counts: ``mem import`` of N synthetic texts into a new
database, the finishing pass left out (the import until searchable, what issue 16's 5,000/s is about).

    python bench/bulk_cpu.py --n 5000                       # as mem runs it: the intake worker from 2,048 records
    python bench/bulk_cpu.py --n 5000 --worker off          # one process (no worker, no pickling)
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
        python bench/bulk_cpu.py --n 5000 [--worker off]    # its instructions; again with --n 0 for the setup
    python bench/bulk_cpu.py --n 20000 --profile OUT        # cProfile over thread CPU: OUT (parent), OUT.child

Under cachegrind the worker (a fork) reports its own total, which holds the parent's setup before the
fork: a memory's instructions are (parent + worker - 2 x the ``--n 0`` total) / N, and (total - the
``--n 0`` total) / N with ``--worker off``. The texts are made once and kept in ``--texts`` (made if
missing), so their making is not counted. The same records as ``bench/bulk_import.py`` (sessions in
``meta.session``, near duplicates kept, as ``mem import`` does).
"""

from __future__ import annotations

import argparse
import pickle
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchlib  # noqa: E402,F401  (puts the repo on sys.path, BLAS single-threaded)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--worker", choices=("auto", "off"), default="auto", help="off: all in this process")
    parser.add_argument("--profile", type=Path, help="write cProfile stats (thread CPU) here and to PROFILE.child")
    parser.add_argument("--texts", type=Path, default=Path(tempfile.gettempdir()) / "mem-bulk-cpu-texts.pickle",
                        help="the synthetic texts, kept between runs (made if missing or too few)")
    args = parser.parse_args()

    from mem.config import resolve_settings
    from mem.stages import add, finish, intake_worker
    from mem.stages.context import Context
    from mem.store import Store

    texts = _texts(args.texts, args.n)
    if args.worker == "off":
        intake_worker.MIN_RECORDS = 10**12
    finish.run = lambda ctx, **kwargs: {}  # the import until searchable: the graph stays pending
    if args.profile:
        _profile_worker(intake_worker, args.profile)
    with tempfile.TemporaryDirectory(prefix="mem-bulk-cpu-") as tmp:
        settings = resolve_settings(db=Path(tmp) / "mem.db", embedder="hash", scope="bench", now="2026-06-01T12:00:00Z")
        records = [(i + 1, {"text": t, "meta": {"session": f"s{i % 50}"}}) for i, t in enumerate(texts)]
        with Store.open(settings.db_path) as store:
            ctx = Context(store=store, settings=settings)
            ctx.embedder
            profile = _profiler() if args.profile else None
            start, cpu = time.perf_counter(), time.process_time()
            outcomes = list(add.run(ctx, records, add.AddOptions(keep_near=True, bulk=True)))
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu
            if profile is not None:
                profile.disable()
                profile.dump_stats(str(args.profile))
    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    added = sum(o.status == "added" for o in outcomes)
    print(f"n={args.n}: {args.n / max(wall, 1e-9):,.0f}/s ({wall:.2f} s), CPU {cpu:.2f} s + worker "
          f"{child.ru_utime + child.ru_stime:.2f} s, {added} added", file=sys.stderr)


def _texts(path: Path, n: int) -> list[str]:
    from synth import memory_texts

    kept: list[str] = pickle.loads(path.read_bytes()) if path.exists() else []
    if len(kept) < n:
        kept = list(memory_texts(n))
        path.write_bytes(pickle.dumps(kept))
    return kept[:n]


def _profiler() -> Any:
    import cProfile

    profile = cProfile.Profile(time.thread_time)
    profile.enable()
    return profile


def _profile_worker(intake_worker: Any, out: Path) -> None:
    """The worker (a fork of this process) profiles its own work and writes it to OUT.child."""
    serve = intake_worker._serve

    def profiled(*args: Any) -> None:
        profile = _profiler()
        try:
            serve(*args)
        finally:
            profile.disable()
            profile.dump_stats(f"{out}.child")

    intake_worker._serve = profiled


if __name__ == "__main__":
    main()
