"""The nightly consolidation at scale: a large store that was consolidated before, N new memories,
then `mem consolidate` as cron runs it. The work must follow what changed, not the store's size.

Usage::

    python bench/nightly.py --base DB [--new 1000] [--nights 2] [--embedder hash]
    python bench/nightly.py --build 100000 --base DB     # build DB first (bulk import + one full cycle)

``--base`` is never changed: each run works on a copy. Each night adds ``--new`` synthetic memories
(``mem add -``, a real process) dated that day, then runs ``mem consolidate --now`` that night as a
real process, and prints its wall and CPU time, every phase's seconds and actions, and how many
memories each phase visited beside the store's size. Target (issue 16): <= 60 s at 100k with
1,000 new memories.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import ROOT  # noqa: E402
from synth import memory_texts  # noqa: E402

FIRST_NIGHT = datetime(2026, 12, 3, 3, 30, tzinfo=timezone.utc)


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def mem(args: list[str], db: Path, embedder: str, stdin: str | None = None) -> tuple[str, float, float]:
    """Run ``mem ARGS`` as cron would (a fresh process, no warm helper): its stdout, wall and CPU seconds."""
    env = {**os.environ, "MEM_DB": str(db), "MEM_EMBEDDER": embedder, "MEM_WARM": "0",
           "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "mem", *args], input=stdin, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"mem {' '.join(args)} exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return done.stdout, wall, cpu


def new_memories(count: int, night: int, when: datetime) -> str:
    """``count`` texts no earlier night (or the base) holds: the synthetic stream from a far seed."""
    lines = []
    for i, text in enumerate(memory_texts(count, seed=1000 + night)):
        at = when - timedelta(hours=12) + timedelta(seconds=i * 30)
        lines.append(json.dumps({"text": f"{text} (night {night}, note {i})", "created_at": stamp(at)}))
    return "\n".join(lines) + "\n"


def build(base: Path, n: int, embedder: str) -> None:
    """A store of ``n`` synthetic memories (bulk import) consolidated once: the backlog a new install clears."""
    base.parent.mkdir(parents=True, exist_ok=True)
    start = FIRST_NIGHT - timedelta(days=120)
    lines = [json.dumps({"text": text, "created_at": stamp(start + timedelta(seconds=i * 100))})
             for i, text in enumerate(memory_texts(n))]
    _, wall, _ = mem(["add", "-", "--bulk"], base, embedder, stdin="\n".join(lines) + "\n")
    print(f"built {n} memories by bulk import in {wall:.1f} s", flush=True)
    _, wall, _ = mem(["consolidate", "--now", stamp(FIRST_NIGHT - timedelta(days=1))], base, embedder)
    print(f"first consolidation (the backlog) in {wall:.1f} s", flush=True)


def summary_of(stdout: str) -> dict:
    records = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    return next(r for r in reversed(records) if r.get("record") == "summary")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, required=True, help="a consolidated store (copied, never changed)")
    ap.add_argument("--build", type=int, default=0, help="first build BASE with this many memories")
    ap.add_argument("--new", type=int, default=1000, help="new memories per night")
    ap.add_argument("--nights", type=int, default=1)
    ap.add_argument("--embedder", default="hash")
    args = ap.parse_args(argv)
    if args.build:
        if args.base.exists():
            raise SystemExit(f"{args.base} exists; drop --build to reuse it")
        build(args.base, args.build, args.embedder)
    if not args.base.exists():
        raise SystemExit(f"{args.base}: no such store (build one with --build N)")

    folder = Path(tempfile.mkdtemp(prefix="mem-nightly-"))
    db = folder / "nightly.db"
    try:
        for suffix in ("", "-wal"):
            if Path(f"{args.base}{suffix}").exists():
                shutil.copyfile(f"{args.base}{suffix}", f"{db}{suffix}")
        stats, _, _ = mem(["stats"], db, args.embedder)
        total = json.loads(stats.splitlines()[0]).get("memories")
        print(f"store: {total} memories ({db.stat().st_size / 1e6:.0f} MB)")
        print("| night | new | add wall | consolidate wall | CPU | actions | " +
              " | ".join(["replay", "reorganize", "compress", "prune"]) + " | visited by prune |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for night in range(1, args.nights + 1):
            when = FIRST_NIGHT + timedelta(days=night - 1)
            _, add_wall, _ = mem(["add", "-"], db, args.embedder, stdin=new_memories(args.new, night, when))
            out, wall, cpu = mem(["consolidate", "--now", stamp(when)], db, args.embedder)
            summary = summary_of(out)
            phases = summary.get("phases", {})
            cells = [f"{phases.get(p, {}).get('seconds', 0):.2f} s ({phases.get(p, {}).get('actions', 0)})"
                     for p in ("replay", "reorganize", "compress", "prune")]
            visited = phases.get("prune", {}).get("stepped", 0)
            print(f"| {night} | {args.new} | {add_wall:.1f} s | **{wall:.1f} s** | {cpu:.1f} s | "
                  f"{summary.get('actions', 0)} | " + " | ".join(cells) + f" | {visited} of {total} |", flush=True)
            total = (total or 0) + args.new
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
