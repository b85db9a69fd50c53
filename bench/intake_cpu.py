"""Where intake's CPU goes, per thread and per stage, and the bound it puts on intake / embedder alone.

    python bench/intake_cpu.py                  # eager (mem add -), 3,000 synthetic texts, minilm
    python bench/intake_cpu.py --bulk --plain   # bulk, without the per-stage timers
    python bench/intake_cpu.py --bulk --plain --replay /tmp/states.pickle   # everything but the model
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
        python bench/intake_cpu.py --bulk --plain --replay /tmp/states.pickle [--n 0]   # its instructions

The same run as ``bench/scale.py --intake-ratio``'s in-process ``mem add -`` (the model loaded before
the clock, the drafts validated inside it). Each stage is timed with ``time.thread_time``, so a
stage's figure is the CPU of the thread that ran it, not the wall time it waited; the model's CPU is
the process's minus what the Python threads spent outside ``MiniLM._run`` (onnxruntime's own pool
thread is in it). With the model on both cores all the time, intake can reach at most
model / (model + the rest) of the embedder-alone rate: the printed bound. The wall time outside the
model's calls (printed last) is the rest of the gap: phases where the model waits (validation, the
first chunk's enrichment and compaction, the last chunk's writes). Timers cost a little: the
totals of a ``--plain`` run are the ones to compare between trees.

``--replay FILE`` takes the model out: the first run keeps each text's token states (what
``MiniLM._run`` returns) in FILE, and every run then hands them back instead of running the model,
so the process's CPU is everything else, unblurred by the model sharing the cores (delete FILE after
a change to the model or its batches). Under cachegrind, the same with ``--n 0`` is the setup to
subtract.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchlib  # noqa: E402,F401  (puts the repo on sys.path, BLAS single-threaded)
from synth import memory_texts  # noqa: E402

SPENT: dict[tuple[str, str], float] = defaultdict(float)  # (thread, stage) -> CPU seconds
SPANS: dict[str, list[tuple[float, float]]] = defaultdict(list)  # stage -> its calls' (start, end) wall times


def timed(owner: Any, name: str, label: str | None = None) -> None:
    """Replace ``owner.name`` by a wrapper adding its calling thread's CPU to ``SPENT``."""
    inner = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start, wall = time.thread_time(), time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            SPENT[(threading.current_thread().name, label or name)] += time.thread_time() - start
            SPANS[label or name].append((wall, time.perf_counter()))

    setattr(owner, name, wrapper)


def replay(path: Path, model: Any, embedder: Any) -> None:
    """``model._run`` hands back the token states kept in ``path`` (the 3,000 synthetic texts' own,
    computed in ``BULK_CHUNK`` batches by the real model the first time)."""
    import pickle

    from mem.stages.add import BULK_CHUNK

    if not path.exists():
        texts = list(memory_texts(3000))
        kept = {}
        for start in range(0, len(texts), BULK_CHUNK):
            batch = texts[start : start + BULK_CHUNK]
            kept.update(zip(batch, embedder._run(batch)))
        path.write_bytes(pickle.dumps(kept))
    kept = pickle.loads(path.read_bytes())
    model._run = lambda self, texts: [kept[t] for t in texts]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--bulk", action="store_true", help="bulk intake (until searchable) instead of eager")
    parser.add_argument("--plain", action="store_true", help="only the threads' totals (no per-stage timers)")
    parser.add_argument("--threads", type=int, default=0, help="onnxruntime intra-op threads (0: one per core)")
    parser.add_argument("--replay", type=Path, help="token states kept here stand in for the model (made if missing)")
    args = parser.parse_args()

    import mem.score.tokens as tokens
    import mem.store.lifecycle as lifecycle_sql
    from mem.config import resolve_settings
    from mem.embed.minilm import MiniLM
    from mem.stages import add, link, supersede
    from mem.stages.context import Context
    from mem.store import Store

    texts = list(memory_texts(args.n))
    embedder = MiniLM(threads=args.threads)
    if args.replay:
        replay(args.replay, MiniLM, embedder)
    else:
        embedder.embed(texts[:8])
    timed(MiniLM, "_run", "the model (MiniLM._run)")  # once per chunk: cheap enough for --plain
    timed(add, "_prepare", "preparing (all of it)")
    if not args.plain:
        for owner, name in ((add, "_enrich"), (tokens, "compact"), (link, "entities_of"), (supersede, "assertions_of"),
                            (add._Chunk, "finish"), (add._Chunk, "neighbours"), (add, "_Chunk"), (add, "_store_one"),
                            (add, "nearest_live"), (Store, "insert_memory"), (link, "after_insert"),
                            (link, "link_entities"), (link, "link_semantic"), (link, "link_temporal"),
                            (link, "link_causal"), (supersede, "check"), (supersede, "_corrections"),
                            (lifecycle_sql, "conflict_candidates"), (lifecycle_sql, "correction_candidates"),
                            (supersede, "changes"), (MiniLM, "embed_with_states"), (Store, "put_vectors"),
                            (Store, "bulk_writes"), (Store, "write")):
            timed(owner, name)
    options = add.AddOptions(bulk=args.bulk)
    with tempfile.TemporaryDirectory() as tmp:
        settings = resolve_settings(db=Path(tmp) / "mem.db", embedder="minilm", scope="bench")
        with Store.open(settings.db_path) as store:
            ctx = Context(store=store, settings=settings)
            store.bind_embedder("minilm", embedder.id, lambda: embedder.dim)
            ctx.use_embedder(embedder)
            main_start, process_start, wall_start = time.thread_time(), time.process_time(), time.perf_counter()
            drafts = [add.validate({"text": t}, i + 1, ctx, options) for i, t in enumerate(texts)]
            validation = time.thread_time() - main_start
            outcomes = list(add.store_drafts(ctx, drafts, options))
            wall = time.perf_counter() - wall_start
            process, main_thread = time.process_time() - process_start, time.thread_time() - main_start
    if any(o.status not in ("added", "duplicate", "superseded") for o in outcomes):
        raise SystemExit("intake refused a synthetic text")
    n = max(1, args.n)
    run = sum(v for (_, label), v in SPENT.items() if label.startswith("the model"))
    prepared = sum(v for (_, label), v in SPENT.items() if label == "preparing (all of it)")
    model = process - main_thread - prepared + run
    rest = process - model
    print(f"{'bulk' if args.bulk else 'eager'} n={n}: {n / wall:,.0f} memories/s, load {os.getloadavg()[0]:.1f}; "
          f"CPU a memory: process {process / n * 1e6:,.0f} us, the model {model / n * 1e6:,.0f} us, everything else "
          f"{rest / n * 1e6:,.0f} us (the writing thread {main_thread / n * 1e6:,.0f}, validation "
          f"{validation / n * 1e6:,.0f} of it; the preparing thread beside the model {(prepared - run) / n * 1e6:,.0f}); "
          f"bound on intake / embedder alone {model / (model + rest):.2f}")
    # The model's calls run one at a time (one preparing thread): the wall time outside them is time
    # the embedder alone would not spend (validation, the first chunk's enrichment, the last one's writes).
    busy = sum(min(end, wall_start + wall) - max(start, wall_start) for start, end in SPANS["the model (MiniLM._run)"]
               if end > wall_start)
    print(f"  the model ran {busy:.2f} s of the {wall:.2f} s wall ({busy / wall:.0%}); outside it {(wall - busy):.2f} s")
    for (thread, label), value in sorted(SPENT.items(), key=lambda kv: (kv[0][0], -kv[1])):
        print(f"  {thread:12} {label:28} {value / n * 1e6:7,.0f} us a memory")


if __name__ == "__main__":
    main()
