"""Crash safety: kill -9 a ``mem import`` at random points; the database stays consistent.

    python bench/crash.py --memories 10000 --runs 8     # the figures in the report
    python bench/crash.py --memories 1500 --runs 3 --chunk 200 --json   # what tests/test_crash.py runs

Each run starts ``mem import FILE`` (hash embedder) on a fresh database and SIGKILLs it after a
random delay within the time a full import takes. After every kill: ``PRAGMA integrity_check`` is
ok, the memory, FTS, vector and vec0 counts agree (a write transaction is all or nothing), and the
memories whose graph is not finished are exactly the ones the finishing pass still has pending
(none half-linked). Then the same import runs again to completion: exactly N memories, N distinct
ids and texts, and nothing pending.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
         "quebec romeo sierra tango uniform victor whiskey xray yankee zulu").split()


def mem_command(*args: str, chunk: int | None = None) -> list[str]:
    """``python -m mem ARGS``; with ``chunk``, a bulk intake commits that many records at a time
    (``mem.stages.add.BULK_CHUNK``), so a kill has several chunks to land between on a small input,
    and an input of two chunks or more is prepared in the worker process, as a large one is
    (``mem.stages.intake_worker``)."""
    if chunk is None:
        return [sys.executable, "-m", "mem", *args]
    launch = (f"import sys; from mem.stages import add, intake_worker; add.BULK_CHUNK = {int(chunk)}; "
              f"intake_worker.MIN_RECORDS = {2 * int(chunk)}; "
              "from mem.cli import main; sys.argv[0] = 'mem'; main()")
    return [sys.executable, "-c", launch, *args]


def make_file(path: Path, n: int, seed: int = 1) -> None:
    """N export-style records (with ids and timestamps), as 'mem export' would write them."""
    from mem.ids import uuid7

    rng = random.Random(seed)
    with path.open("w") as fh:
        for i in range(n):
            text = f"record {i}: " + " ".join(rng.choice(WORDS) for _ in range(12))
            fh.write(json.dumps({"id": uuid7(1_700_000_000_000 + i), "text": text, "kind": "fact",
                                 "created_at": "2026-01-01T00:00:00Z", "tags": ["crash"]}) + "\n")


def state(db: Path) -> dict[str, Any]:
    from mem.store import Store

    if not db.exists():
        return {"integrity": "ok", "memories": 0, "fts": 0, "vectors": 0, "vec_index": 0, "distinct_ids": 0,
                "distinct_hashes": 0, "pending": 0, "unlinked": 0}
    with Store.open(db, create=False) as store:
        counts = store.counts()
        distinct = store.conn.execute("SELECT COUNT(DISTINCT id), COUNT(DISTINCT content_hash), "
                                      "(SELECT COUNT(*) FROM pending_links), "
                                      "(SELECT COUNT(*) FROM memories WHERE asserted = 0) FROM memories").fetchone()
        return {"integrity": store.integrity(), **{k: counts[k] for k in ("memories", "fts", "vectors", "vec_index")},
                "distinct_ids": distinct[0], "distinct_hashes": distinct[1], "pending": distinct[2],
                "unlinked": distinct[3]}


def consistent(s: dict[str, Any]) -> bool:
    return s["integrity"] == "ok" and len({s["memories"], s["fts"], s["vectors"], s["vec_index"]}) == 1 \
        and s["distinct_ids"] == s["memories"] and s["unlinked"] == s["pending"]


def run(memories: int, runs: int, seed: int = 0, max_delay: float | None = None,
        chunk: int | None = None) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="mem-crash-"))
    data, db = folder / "import.jsonl", folder / "crash.db"
    make_file(data, memories)
    env = {**os.environ, "MEM_DB": str(db), "MEM_EMBEDDER": "hash", "MEM_SCOPE": "crash",
           "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    command = mem_command("import", "--quiet", str(data), chunk=chunk)
    # How long does a whole import take here? Kill points are drawn within it.
    if max_delay is None:
        scratch = {**env, "MEM_DB": str(folder / "timing.db")}
        start = time.monotonic()
        subprocess.run(command, env=scratch, check=True, capture_output=True)
        full = time.monotonic() - start
    else:
        full = max_delay  # the test's budget: skip the timing run
    rng = random.Random(seed)
    kills = []
    final: dict[str, Any] = {}
    final_exit = 0
    complete = True
    for run_number in range(runs):
        # A fresh database each run, so every kill lands inside a real, unfinished import.
        run_env = {**env, "MEM_DB": str(folder / f"crash-{run_number}.db")}
        run_db = folder / f"crash-{run_number}.db"
        # Interpreter start-up takes the first ~0.3 s; stop short of the end so the kill lands mid-import.
        delay = rng.uniform(min(0.3, 0.5 * full), 0.85 * full)
        proc = subprocess.Popen(command, env=run_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            proc.wait(timeout=delay)
            finished = True  # the import got to the end before this kill point
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            finished = False
        after = state(run_db)
        # Re-running the same import finishes the job: ids already stored are duplicates.
        rerun = subprocess.run(command, env=run_env, capture_output=True)
        final = state(run_db)
        final_exit = max(final_exit, rerun.returncode)
        done = consistent(final) and final["memories"] == memories and final["distinct_hashes"] == memories \
            and final["pending"] == 0
        complete = complete and done and rerun.returncode == 0
        kills.append({"delay_s": round(delay, 2), "killed": not finished, "exit": proc.returncode,
                      "rerun_exit": rerun.returncode, "memories": after["memories"],
                      "consistent": consistent(after), "integrity": after["integrity"], "pending": after["pending"],
                      "after_rerun": final["memories"], "rerun_complete": done})
    return {
        "memories": memories, "runs": runs, "full_import_s": round(full, 2), "kills": kills,
        "all_consistent_after_kill": all(k["consistent"] for k in kills),
        "final_exit": final_exit, "final": final, "complete_without_duplicates": complete,
        "folder": str(folder),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-delay", type=float, default=None, help="latest kill point in seconds [default: a full import's time]")
    parser.add_argument("--chunk", type=int, default=None,
                        help="records per bulk write transaction [default: mem's own]; smaller puts more commits in reach of a kill")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.memories, args.runs, args.seed, args.max_delay, args.chunk)
    if args.json:
        print(json.dumps(result))
    else:
        print(f"memories {result['memories']}, full import {result['full_import_s']} s")
        for i, kill in enumerate(result["kills"], 1):
            print(f"run {i}: kill after {kill['delay_s']:>6} s  killed={kill['killed']!s:5}  "
                  f"memories={kill['memories']:>6}  integrity={kill['integrity']}  consistent={kill['consistent']}  "
                  f"after re-run={kill['after_rerun']} complete={kill['rerun_complete']}")
        print(f"last run's final state: {result['final']}")
        print(f"all consistent after kill: {result['all_consistent_after_kill']}; "
              f"complete without duplicates: {result['complete_without_duplicates']}")
    return 0 if result["all_consistent_after_kill"] and result["complete_without_duplicates"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
