"""Consolidation at scale: time per phase and peak memory on N synthetic memories.

Usage::

    python bench/consolidate.py --n 10000 [--embedder hash] [--db PATH] [--keep]

Builds a database of ``n`` synthetic memories (topics x templates, with about 3 % near-duplicate
triples and some conflicting updates; created over 120 days, some used), then runs
``mem.stages.consolidate.run`` with every phase at ``--now`` (120 days after the first memory),
then once more to show the second run does nothing. Prints seconds per phase, actions, and peak
RSS (``resource.getrusage``). Target: a full cycle on 100k in under 5 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from mem.runtime import limit_blas_threads  # noqa: E402

limit_blas_threads()

TOPICS = ["billing", "auth", "search", "deploy", "backup", "metrics", "queue", "cache", "frontend", "mobile",
          "payments", "ledger", "reports", "email", "scheduler", "gateway", "storage", "profiles", "chat", "alerts"]
TEMPLATES = [
    "The {t} service {i} retries failed jobs {n} times before paging on-call.",
    "The {t} team reviewed incident {i} and added a runbook step about {w}.",
    "Config flag {t}_{i}_enabled defaults to {b} in staging for the {w} rollout.",
    "The {t} worker pool {i} scales to {n} replicas during the {w} window.",
    "Meeting note {i}: {t} owners agreed to revisit {w} after the quarter.",
    "Alice: the {t} dashboard {i} shows {w} latency spiking to {n} ms.",
]
WORDS = ["canary", "migration", "latency", "throughput", "cleanup", "quota", "failover", "audit", "backfill", "retention"]


def synth(n: int, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    out: list[dict] = []
    while len(out) < n:
        i = len(out)
        t, w = rng.choice(TOPICS), rng.choice(WORDS)
        text = rng.choice(TEMPLATES).format(t=t, i=i, n=rng.randint(2, 900), w=w, b=rng.choice(["true", "false"]))
        when = start + timedelta(days=rng.uniform(0, 120))
        record = {"text": text, "created_at": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
                  "kind": "episode" if text.startswith("Alice:") else None}
        out.append(record)
        if rng.random() < 0.01 and len(out) + 3 <= n:  # a near-duplicate triple
            base = f"The {t} nightly export {i} writes {w} files to the archive bucket and keeps {rng.randint(3, 30)} copies."
            for extra in ("", " Owner: Dana.", " It runs after the backup."):
                out.append({"text": base + extra, "created_at": record["created_at"]})
    return [{k: v for k, v in r.items() if v is not None} for r in out[:n]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--embedder", default="hash")
    ap.add_argument("--db", type=Path, default=None, help="reuse/keep this database (built when missing)")
    args = ap.parse_args(argv)

    from mem.config import resolve_settings
    from mem.stages import add, consolidate
    from mem.stages.context import Context
    from mem.store import Store

    folder = tempfile.mkdtemp(prefix="mem-bench-")
    path = args.db or Path(folder) / f"consolidate-{args.n}.db"
    now = "2026-05-01T00:00:00Z"
    settings = resolve_settings(db=path, embedder=args.embedder, scope="bench", now=now, env={})
    with Store.open(settings.db_path) as store:
        ctx = Context(store=store, settings=settings)
        existing = store.counts()["memories"]
        if existing < args.n:
            t0 = time.perf_counter()
            records = synth(args.n)[existing:]
            rng = random.Random(1)
            outcomes = list(add.run(ctx, enumerate(records, start=1), add.AddOptions(keep_near=True)))
            used = [o.id for o in outcomes if o.id and rng.random() < 0.1]
            rowids = [store.rowid_of(i) for i in used]
            for start in range(0, len(rowids), 500):
                store.bump_access(rowids[start:start + 500], "2026-04-20T00:00:00Z")
            print(f"built {len(outcomes)} memories in {time.perf_counter() - t0:.1f} s "
                  f"({sum(o.status == 'superseded' for o in outcomes)} superseded at intake)")
        for label in ("first run", "second run"):
            t0 = time.perf_counter()
            records = list(consolidate.run(ctx, consolidate.Options()))
            total = time.perf_counter() - t0
            summary = records[-1]
            print(f"{label}: {total:.1f} s, {summary['actions']} actions")
            for phase, info in summary["phases"].items():
                extra = ", ".join(f"{k} {v}" for k, v in info.items() if k not in ("seconds", "actions"))
                print(f"  {phase:<10} {info.get('seconds', 0):7.2f} s  {info['actions']:6d} actions  ({extra})")
        counts = store.counts()
        print(f"memories {counts['memories']} by status {counts['by_status']}, superseded {counts['superseded']}")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS: {peak_mb:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
