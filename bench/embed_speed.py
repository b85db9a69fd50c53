"""The default embedder's own speed: texts/s for batch sizes and thread counts, on the same texts.

    python bench/embed_speed.py                          # LoCoMo dev turns and 3,000 synthetic texts
    python bench/embed_speed.py --configs 16x0,32x0,16x1 --rounds 3 --limit 1000

A config is BATCHxTHREADS: texts per onnxruntime call (after sorting by length, each call padded to
its longest text) and intra-op threads (0: one per core). Rounds interleave the configs, so the
machine's drift hits all; each line gives wall texts/s and the process's CPU ms a text. Every
config's vectors are compared with the first config's: the lowest cosine is printed (padding is
masked, so a batch's make-up should not move a vector).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchlib  # noqa: E402,F401  (puts the repo on sys.path)
from synth import memory_texts  # noqa: E402

LOCOMO_DEV = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo" / "locomo_dev.json"


def corpora(limit: int | None, locomo: Path) -> dict[str, list[str]]:
    """LoCoMo dev turns (as bench/locomo.py stores them) and synthetic memories, ``limit`` of each."""
    out = {"synthetic": list(memory_texts(limit or 3000))}
    if locomo.is_file():
        import locomo as lc  # bench/locomo.py

        out["locomo turns"] = [t.text for c in lc.load(locomo) for t in c.turns][:limit]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", default="16x0,32x0,8x0,16x1", help="comma-separated BATCHxTHREADS")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None, help="texts of each corpus")
    parser.add_argument("--locomo", type=Path, default=LOCOMO_DEV)
    args = parser.parse_args()
    import numpy as np

    from mem.embed.minilm import MiniLM

    configs = [tuple(int(x) for x in c.split("x")) for c in args.configs.split(",")]
    embedders = {c: MiniLM(batch=c[0], threads=c[1]) for c in configs}
    texts = corpora(args.limit, args.locomo)
    for embedder in embedders.values():
        embedder.embed(["load the model"] * 40)  # load, and build the bulk session, outside the clock
    rates: dict[tuple[str, tuple[int, int]], list[float]] = {}
    first: dict[str, np.ndarray] = {}
    for round_ in range(args.rounds):
        for config in configs if round_ % 2 == 0 else configs[::-1]:
            for name, corpus in texts.items():
                start, cpu = time.perf_counter(), time.process_time()
                vectors = embedders[config].embed(corpus)
                wall, cpu = time.perf_counter() - start, time.process_time() - cpu
                rates.setdefault((name, config), []).append(len(corpus) / wall)
                first.setdefault(name, vectors)
                lowest = float(np.min(np.sum(vectors * first[name], axis=1)))
                print(f"round {round_ + 1} batch {config[0]:>3} threads {config[1]}  {name:13} "
                      f"{len(corpus) / wall:6.0f} texts/s  CPU {cpu / len(corpus) * 1000:5.2f} ms a text  "
                      f"lowest cosine to the first config {lowest:.6f}", flush=True)
    for (name, config), values in rates.items():
        print(f"median  batch {config[0]:>3} threads {config[1]}  {name:13} {statistics.median(values):6.0f} texts/s")


if __name__ == "__main__":
    main()
