"""Scale benchmark for the core: intake throughput, search latency, cold CLI times, database size.

    python bench/scale.py                      # 10k and 100k with hash; 10k with minilm
    python bench/scale.py --sizes 100000 --embedders minilm   # the long one (about 6 minutes)
    python bench/scale.py --db /tmp/h100k.db --embedders hash --breakdown   # search only, on a database built before
    python bench/scale.py --postgres embedded --sizes 10000    # the same on PostgreSQL (a server per run, or ADMIN_URL)
    python bench/scale.py --db postgresql://me@host/mem --embedders hash   # search only, on a PostgreSQL database
    python bench/scale.py --intake-ratio --sizes 3000 --embedders minilm --pairs 3   # intake / embedder alone
    python bench/scale.py --intake-ratio --sizes 3000 --embedders minilm --pairs 2 --bulk-only   # bulk's alone

Each (size, embedder) pair builds a fresh database in a temp folder through the real intake path
(``mem.stages.add.run``: secret scan, duplicate checks, embedding, linking), then measures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import ROOT, fresh_database, percentile, postgres_admin  # noqa: E402  (also puts the repo on sys.path)
from synth import memory_texts, queries  # noqa: E402


def build(db: Path | str, n: int, embedder: str, batch: int = 2000) -> float:
    from mem.config import resolve_settings
    from mem.stages import add
    from mem.stages.context import Context
    from mem.store import Store

    settings = resolve_settings(db=db, embedder=embedder, scope="bench")
    texts = list(memory_texts(n))
    start = time.perf_counter()
    with Store.open(db) as store:
        ctx = Context(store=store, settings=settings)
        for offset in range(0, n, batch):
            records = [(i + 1, {"text": t}) for i, t in enumerate(texts[offset : offset + batch], start=offset)]
            for outcome in add.run(ctx, records, add.AddOptions(keep_near=True)):
                if outcome.status != "added":
                    raise SystemExit(f"line {outcome.line}: {outcome.status} {outcome.reason}")
    return n / (time.perf_counter() - start)


# A real ``mem add - --bulk`` process that tells the wall clock when its rows are searchable (the finishing
# pass starts), and the embedder alone in a process of its own: both pay the interpreter, the imports and
# the model's load, which the in-process rounds load before the clock.
_CLI_BULK = """\
import sys, time
from mem.stages import finish
real = finish.run
def timed(ctx, **kwargs):
    print(f"searchable {time.time()!r}", file=sys.stderr, flush=True)
    return real(ctx, **kwargs)
finish.run = timed
sys.argv = ["mem", *sys.argv[1:]]
from mem.cli import main
main()
"""
_ALONE = """\
import json, sys, time
from mem.runtime import limit_blas_threads
limit_blas_threads()
from mem.embed import get_embedder
texts, chunk = json.loads(open(sys.argv[1]).read()), int(sys.argv[3])
embedder = get_embedder(sys.argv[2])
for offset in range(0, len(texts), chunk):
    embedder.embed(texts[offset : offset + chunk])
print(f"done {time.time()!r}", file=sys.stderr, flush=True)
"""


def _process_seconds(code: str, args: list[str], mark: str, stdin: Path | None = None) -> float:
    """Wall seconds from starting ``python -c code args`` to the time it prints after ``mark`` on stderr."""
    # this tree's mem, and no hand-over to a warm helper: the process does the work
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]), "MEM_WARM": "0"}
    with open(stdin or os.devnull, "rb") as feed:
        start = time.time()
        done = subprocess.run([sys.executable, "-c", code, *args], stdin=feed, env=env, capture_output=True, check=True)
    stamps = [line.split()[1] for line in done.stderr.decode().splitlines() if line.startswith(mark + " ")]
    if not stamps:
        raise SystemExit(f"no {mark!r} line from the process: {done.stderr.decode()[-2000:]}")
    return float(stamps[0]) - start


def intake_ratio(n: int, embedder_name: str, pairs: int, bulk_only: bool = False) -> list[tuple[float, float]]:
    """Intake against the embedder alone on the same ``n`` texts, in interleaved rounds: the embedder
    embeds them as intake hands them over (``add.CHUNK`` at a time); ``mem add -`` (one ``add.run``
    call, eager) and bulk (``mem add - --bulk``: until searchable, then with its finishing pass)
    each build a fresh database. One embedder instance serves all, loaded before the clock.
    Then both again as the CLI runs them (``add.run`` on a fresh context: from
    ``intake_worker.MIN_RECORDS`` texts a worker process prepares them, loading its own model inside
    the clock). Returns each round's (mem add -, bulk until searchable, the same two as the CLI runs
    them) rates over the embedder-alone rate (``bulk_only``: the eager ones are skipped, NaN).

    Like with like: those CLI rounds pay the worker's model load (and, since this process has onnxruntime
    loaded, a fresh interpreter for the worker instead of the fork ``mem`` makes) against an embedder
    loaded before the clock. So each round also times a real ``mem add - --bulk`` process until its rows
    are searchable against the embedder alone in a fresh process (both from the process's start: the
    interpreter, the imports, the model's load), and prints that ratio too."""
    from mem.config import resolve_settings
    from mem.embed import get_embedder
    from mem.stages import add, finish
    from mem.stages.context import Context
    from mem.store import Store

    texts = list(memory_texts(n))
    embedder = get_embedder(embedder_name)
    embedder.embed(texts[:8])  # load the model

    def alone() -> float:
        start = time.perf_counter()
        for offset in range(0, n, add.CHUNK):
            embedder.embed(texts[offset : offset + add.CHUNK])
        return time.perf_counter() - start

    def intake(bulk: bool) -> tuple[float, float]:
        """Seconds until searchable, and until the graph is finished (the same for eager)."""
        with tempfile.TemporaryDirectory() as tmp:
            settings = resolve_settings(db=Path(tmp) / "mem.db", embedder=embedder_name, scope="bench")
            records = [(i + 1, {"text": t}) for i, t in enumerate(texts)]
            with Store.open(settings.db_path) as store:
                ctx = Context(store=store, settings=settings)
                store.bind_embedder(embedder_name, embedder.id, lambda: embedder.dim)
                ctx.use_embedder(embedder)
                start = time.perf_counter()
                stored = list(add.store_drafts(ctx, [add.validate(raw, line, ctx, add.AddOptions(bulk=bulk))
                                                     for line, raw in records], add.AddOptions(bulk=bulk)))
                searchable = time.perf_counter() - start
                if bulk:
                    finish.run(ctx)
                done = time.perf_counter() - start
        if any(o.status not in ("added", "duplicate") for o in stored):
            raise SystemExit("intake refused a synthetic text")
        return searchable, done

    def as_the_cli(bulk: bool) -> tuple[float, float]:
        """``intake`` through ``add.run`` on a fresh context, as ``mem add -`` runs it."""
        real_finish, searchable_at = finish.run, []

        def timed_finish(ctx: Any, **kwargs: Any) -> Any:
            searchable_at.append(time.perf_counter())
            return real_finish(ctx, **kwargs)

        finish.run = timed_finish
        try:
            with tempfile.TemporaryDirectory() as tmp:
                settings = resolve_settings(db=Path(tmp) / "mem.db", embedder=embedder_name, scope="bench")
                with Store.open(settings.db_path) as store:
                    start = time.perf_counter()
                    stored = list(add.run(Context(store=store, settings=settings),
                                          [(i + 1, {"text": t}) for i, t in enumerate(texts)], add.AddOptions(bulk=bulk)))
                    done = time.perf_counter() - start
        finally:
            finish.run = real_finish
        if any(o.status not in ("added", "duplicate", "superseded") for o in stored):
            raise SystemExit("intake refused a synthetic text")
        return (searchable_at[0] - start if bulk else done), done

    def process(bulk_cli: bool) -> float:
        """Seconds until searchable of a real ``mem add - --bulk`` process, or of the embedder alone in a
        process of its own."""
        with tempfile.TemporaryDirectory() as tmp:
            if not bulk_cli:
                (Path(tmp) / "texts.json").write_text(json.dumps(texts))
                return _process_seconds(_ALONE, [str(Path(tmp) / "texts.json"), embedder_name, str(add.CHUNK)], "done")
            feed = Path(tmp) / "in.jsonl"
            feed.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
            return _process_seconds(_CLI_BULK, ["add", "-", "--bulk", "--db", str(Path(tmp) / "mem.db"), "--embedder",
                                                embedder_name, "--scope", "bench", "--json"], "searchable", feed)

    rows = []
    runs = {"alone": alone, "eager": lambda: intake(False), "bulk": lambda: intake(True),
            "eager cli": lambda: as_the_cli(False), "bulk cli": lambda: as_the_cli(True),
            "alone process": lambda: process(False), "bulk process": lambda: process(True)}
    if bulk_only:
        runs = {name: run for name, run in runs.items() if not name.startswith("eager")}
    nan = float("nan")
    for pair in range(pairs):
        order = list(runs) if pair % 2 == 0 else list(reversed(runs))
        got: dict[str, Any] = {name: runs[name]() for name in order}
        base = n / got["alone"]
        eager = n / got["eager"][1] if "eager" in got else nan
        cli_eager = n / got["eager cli"][1] if "eager cli" in got else nan
        (searchable, done), cli_searchable = got["bulk"], n / got["bulk cli"][0]
        alone_process, bulk_process = n / got["alone process"], n / got["bulk process"]
        rows.append((eager / base, n / searchable / base, cli_eager / base, cli_searchable / base,
                     bulk_process / alone_process))
        print(f"{embedder_name} n={n} round {pair + 1}: load {os.getloadavg()[0]:.1f}, embedder alone {base:,.0f}/s; "
              f"mem add - {eager:,.0f}/s "
              f"(x{eager / base:.2f}); bulk until searchable {n / searchable:,.0f}/s (x{n / searchable / base:.2f}), "
              f"with its finishing pass {n / done:,.0f}/s (finishing {done - searchable:.1f} s); as the CLI runs "
              f"them: mem add - {cli_eager:,.0f}/s (x{cli_eager / base:.2f}), bulk until searchable "
              f"{cli_searchable:,.0f}/s (x{cli_searchable / base:.2f}); whole processes (load included): embedder "
              f"alone {alone_process:,.0f}/s ({got['alone process']:.1f} s), mem add - --bulk until searchable "
              f"{bulk_process:,.0f}/s ({got['bulk process']:.1f} s, x{bulk_process / alone_process:.2f})", flush=True)
    medians = [statistics.median(row[i] for row in rows) for i in range(5)]
    print(f"{embedder_name} n={n} median over {pairs} rounds: mem add - x{medians[0]:.2f} the embedder-alone "
          f"rate, bulk until searchable x{medians[1]:.2f}; as the CLI runs them x{medians[2]:.2f} and "
          f"x{medians[3]:.2f}; whole processes, bulk x{medians[4]:.2f}", flush=True)
    return rows


def search_latency(db: Path | str, embedder: str, count: int = 200,
                   breakdown: dict[str, list[float]] | None = None) -> tuple[float, float]:
    """p50 and p95 ms of in-process searches; ``breakdown`` (if given) collects each step's ms."""
    from mem.config import resolve_settings
    from mem.stages import search
    from mem.stages.context import Context
    from mem.store import Store

    settings = resolve_settings(db=db, embedder=embedder, scope="bench")
    with Store.open(db) as store:
        ctx = Context(store=store, settings=settings)
        for _ in range(4):  # past the cold vector path (mem.store.vectors.WARM_AFTER)
            search.run(ctx, search.Query(text="warm up the model", bump=False))
        restore = timed_steps(ctx, search, breakdown) if breakdown is not None else None
        try:
            times = []
            for text in queries(count):
                start = time.perf_counter()
                search.run(ctx, search.Query(text=text, k=10, bump=False))
                times.append((time.perf_counter() - start) * 1000)
        finally:
            if restore:
                restore()
    return statistics.median(times), percentile(times, 0.95)


def timed_steps(ctx: Any, search: Any, out: dict[str, list[float]]) -> Any:
    """Time the query embedding, each channel and the prior lookup of every search into ``out``."""
    def timed(name: str, fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                out.setdefault(name, []).append((time.perf_counter() - start) * 1000)
        return wrapper

    saved = dict(search.CHANNELS)
    for name, fn in saved.items():
        search.CHANNELS[name] = timed(name, fn)
    embed, prior_rows = ctx.embedder.embed, ctx.store.prior_rows
    ctx.embedder.embed = timed("embed query", embed)  # instance attributes: the class is untouched
    ctx.store.prior_rows = timed("prior_rows", prior_rows)

    def restore() -> None:
        search.CHANNELS.update(saved)
        del ctx.embedder.embed, ctx.store.prior_rows
    return restore


def print_breakdown(steps: dict[str, list[float]]) -> None:
    """Median ms per step; a step can run more than once per search (the semantic channel is shared)."""
    for name, ms in steps.items():
        print(f"  {name:12} p50 {statistics.median(ms):6.2f} ms  mean {statistics.mean(ms):6.2f} ms  calls {len(ms)}")


def database_bytes(url: str) -> int:
    from mem.store import Store

    with Store.open(url) as store:
        return int(store.counts()["bytes"])


def wall(args: list[str], env: dict[str, str], runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "mem", *args], env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--embedders", default="hash,minilm")
    parser.add_argument("--minilm-max", type=int, default=10000, help="skip minilm above this size unless asked")
    parser.add_argument("--db", help="measure search only, on this existing database file or postgresql:// URL (scope 'bench')")
    parser.add_argument("--postgres", default=None, metavar="ADMIN_URL",
                        help="build and measure on PostgreSQL (a fresh database per size on that server; 'embedded' starts one)")
    parser.add_argument("--breakdown", action="store_true", help="also print the median ms of each search step")
    parser.add_argument("--intake-ratio", action="store_true",
                        help="only intake (eager and bulk) against the embedder alone on the same texts, as ratios")
    parser.add_argument("--pairs", type=int, default=3, help="interleaved rounds of --intake-ratio")
    parser.add_argument("--bulk-only", action="store_true", help="--intake-ratio without the eager runs")
    args = parser.parse_args()
    if args.intake_ratio:
        for embedder in args.embedders.split(","):
            for n in (int(s) for s in args.sizes.split(",")):
                intake_ratio(n, embedder, args.pairs, bulk_only=args.bulk_only)
        return
    if args.db is not None:
        for embedder in args.embedders.split(","):
            steps: dict[str, list[float]] | None = {} if args.breakdown else None
            p50, p95 = search_latency(args.db, embedder, breakdown=steps)
            print(f"{embedder:8} {args.db}: search p50 {p50:.1f} ms, p95 {p95:.1f} ms", flush=True)
            if steps is not None:
                print_breakdown(steps)
        return
    admin = postgres_admin(args.postgres) if args.postgres else None
    sizes = [int(s) for s in args.sizes.split(",")]
    embedders = args.embedders.split(",")
    # MEM_WARM=0: "cold search" means a fresh process, not a hand-over to the warm helper
    # (bench/cold_start.py measures that one).
    env = {**os.environ, "MEM_SCOPE": "bench", "MEM_WARM": "0"}
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}, {'PostgreSQL' if admin else 'SQLite'}")
    print(f"mem --help wall: {wall(['--help'], env) * 1000:.0f} ms")
    print(f"{'embedder':8} {'size':>7} {'intake/s':>9} {'search p50':>11} {'p95':>7} {'cold search':>12} {'db MB':>7}")
    for embedder in embedders:
        for n in sizes:
            if embedder == "minilm" and n > args.minilm_max and args.embedders != "minilm":
                continue
            with tempfile.TemporaryDirectory() as tmp:
                db: Path | str = Path(tmp) / "mem.db"
                if admin:
                    db = fresh_database(admin, f"scale_{embedder}_{n}")
                rate = build(db, n, embedder)
                steps: dict[str, list[float]] | None = {} if args.breakdown else None
                p50, p95 = search_latency(db, embedder, breakdown=steps)
                cold = wall(["search", "who owns billing", "--db", str(db), "--embedder", embedder], env, runs=3)
                size_mb = (database_bytes(db) if admin else sum(f.stat().st_size for f in Path(tmp).iterdir())) / 1e6
                print(f"{embedder:8} {n:>7} {rate:>9.0f} {p50:>8.1f} ms {p95:>5.1f} ms {cold:>10.2f} s {size_mb:>7.1f}",
                      flush=True)
                if steps is not None:
                    print_breakdown(steps)


if __name__ == "__main__":
    main()
