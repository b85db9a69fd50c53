"""What the judge in both orders costs an import of old data (``supersede.JUDGE_BACK``).

Usage::

    python bench/old_import.py [--new 3000] [--old 1000] [--pairs 2]

Each round builds a store of ``--new`` synthetic texts (``synth.py``) created now (``mem add - --bulk``, the
default MiniLM embedder), then times ``mem import -`` of ``--old`` more created a year earlier, in a fresh
process, with the back judgement on and off in turn (interleaved pairs: this machine's speed drifts).
Prints each round's seconds and the on/off ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import ROOT  # noqa: E402
from synth import memory_texts  # noqa: E402

_TIMED = """import sys, time
from mem.stages import supersede
supersede.JUDGE_BACK = {back}
from mem.cli import main
sys.argv = ["mem", "import", "-"]
started = time.perf_counter()
try:
    main()
except SystemExit:
    pass
print(time.perf_counter() - started, file=sys.stderr)
"""


def _jsonl(texts: list[str], created_at: str) -> str:
    return "".join(json.dumps({"text": text, "created_at": created_at}) + "\n" for text in texts)


def one(new: list[str], old: list[str], back: bool) -> float:
    """Seconds ``mem import -`` of ``old`` takes into a fresh store of ``new``."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "MEM_DB": str(Path(tmp) / "mem.db"), "MEM_WARM": "0", "MEM_NOW": "2027-01-01T00:00:00Z",
               "PYTHONPATH": str(ROOT)}
        subprocess.run([sys.executable, "-m", "mem", "add", "-", "--bulk"], input=_jsonl(new, "2026-12-01T00:00:00Z"),
                       text=True, env=env, capture_output=True, check=True)
        done = subprocess.run([sys.executable, "-c", _TIMED.format(back=back)], input=_jsonl(old, "2025-12-01T00:00:00Z"),
                              text=True, env=env, capture_output=True, check=True)
        return float(done.stderr.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--new", type=int, default=3000)
    parser.add_argument("--old", type=int, default=1000)
    parser.add_argument("--pairs", type=int, default=2)
    args = parser.parse_args()
    texts = list(memory_texts(args.new + args.old))
    new, old = texts[:args.new], texts[args.new:]
    for round_ in range(1, args.pairs + 1):
        on, off = one(new, old, True), one(new, old, False)
        print(f"round {round_}: import of {args.old} old memories into {args.new}: back judgement on {on:.1f} s, "
              f"off {off:.1f} s (x{on / off:.2f})", flush=True)


if __name__ == "__main__":
    main()
