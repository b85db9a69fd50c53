"""One-shot commands against ``mem --help`` in the same run: ``mem search`` and ``mem add TEXT`` with the
default embedder, handed to the warm helper (mem.cli.warm) and cold (MEM_WARM=0), in interleaved rounds.

    python bench/cold_start.py                    # builds a 3,000-memory minilm database in a temp folder
    python bench/cold_start.py --db DB --rounds 10

Prints each command's median wall time and its ratio to ``mem --help`` measured in the same rounds
(the goal: <= 3.0x). The helper is started once before the rounds, as the first cold command would.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib  # noqa: E402,F401  (puts the repo on sys.path)

MEM = [sys.executable, "-m", "mem"]


def timed(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0,):
        raise SystemExit(f"{' '.join(args)} exited {done.returncode}: {done.stderr.decode()[-300:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--n", type=int, default=3000, help="memories in a database built here")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="mem-cold-"))
    env = {**os.environ, "MEM_EMBEDDER": "minilm", "MEM_SCOPE": "bench", "XDG_RUNTIME_DIR": str(folder),
           "MEM_WARM_IDLE": "600"}
    env.pop("MEM_NOW", None)
    db = args.db or folder / "cold.db"
    env["MEM_DB"] = str(db)
    if args.db is None:
        from synth import memory_texts

        lines = "".join(json.dumps({"text": t}) + "\n" for t in memory_texts(args.n, seed=7))
        subprocess.run([*MEM, "add", "-"], input=lines.encode(), env={**env, "MEM_WARM": "0"},
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    cold = {**env, "MEM_WARM": "0"}
    subprocess.Popen([*MEM[:1], "-m", "mem.cli.warm", "serve", "--embedder", "minilm"], env=cold,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    while subprocess.run([*MEM[:1], "-m", "mem.cli.warm", "status"], env=env, capture_output=True).returncode:
        time.sleep(0.2)
    cases = {
        "help": ([*MEM, "--help"], env),
        "search (helper)": ([*MEM, "search", "which database did we choose for billing?", "--json"], env),
        "add TEXT (helper)": ([*MEM, "add"], env),
        "search (cold)": ([*MEM, "search", "which database did we choose for billing?", "--json"], cold),
        "add TEXT (cold)": ([*MEM, "add"], cold),
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    try:
        for round_ in range(args.rounds + 1):
            for name, (argv, case_env) in cases.items():
                if name.startswith("add"):
                    argv = [*argv, f"Round {round_} of {name}: the payments timeout is {30 + round_} seconds"]
                took = timed(argv, case_env)
                if round_:  # round 0 warms the page cache
                    times[name].append(took)
    finally:
        subprocess.run([*MEM[:1], "-m", "mem.cli.warm", "stop"], env=env, capture_output=True)
    help_median = statistics.median(times["help"])
    print(f"{args.rounds} interleaved rounds; database {db}")
    for name, values in times.items():
        ratios = [v / h for v, h in zip(values, times["help"])]
        print(f"{name:20s} median {statistics.median(values) * 1000:7.1f} ms   x help: median "
              f"{statistics.median(ratios):5.2f} (min {min(ratios):.2f}, max {max(ratios):.2f})")
    print(f"help median {help_median * 1000:.1f} ms")


if __name__ == "__main__":
    main()
