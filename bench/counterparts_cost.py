"""CPU cost of the token-state counterparts test (``mem.score.counterparts``) in eager intake.

Usage::

    python bench/counterparts_cost.py [--set a,b,...]    # default: coding sets a-i

Adds each memory of the coding sets through ``mem.stages.add.run`` one record a call (as ``mem add``
does), MiniLM, and times (process CPU) every question ``aligned`` asks of a ``Counterparts``: reading
the two memories' stored token states, tokenizing the two texts once, one product a side. Prints one
JSON line: memories, pairs that paid (a close neighbour with a value swapped that the spelling alone
did not decide), the test's CPU per paying pair and per memory, and its share of intake's CPU.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import ROOT, read_jsonl  # noqa: E402  (also puts the repo on sys.path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="a,b,c,d,e,f,g,h,i", help="coding sets, comma-separated")
    args = ap.parse_args(argv)
    from mem.config import resolve_settings
    from mem.score import counterparts
    from mem.stages import add
    from mem.stages.context import Context
    from mem.store import Store

    spent = {"cpu": 0.0, "pairs": 0, "questions": 0}
    ask = counterparts.Counterparts.__call__
    paid: set[int] = set()

    def timed(self: counterparts.Counterparts, older: str, newer: str) -> bool:
        started = time.process_time()
        answer = ask(self, older, newer)
        spent["cpu"] += time.process_time() - started
        spent["questions"] += 1
        if id(self) not in paid:
            paid.add(id(self))
            spent["pairs"] += 1
        return answer

    counterparts.Counterparts.__call__ = timed  # type: ignore[method-assign]
    memories = 0
    with tempfile.TemporaryDirectory() as folder:
        settings = resolve_settings(db=Path(folder) / "cost.db", embedder="minilm", scope="bench",
                                    now="2027-12-01T00:00:00Z", env={})
        with Store.open(settings.db_path) as store:
            ctx = Context(store=store, settings=settings)
            started = time.process_time()
            for name in args.set.split(","):
                path = ROOT / "bench" / ("coding_memory.jsonl" if name == "a" else f"coding_memory_{name}.jsonl")
                for row in read_jsonl(path):
                    record = {k: row[k] for k in ("text", "created_at", "kind") if k in row}
                    list(add.run(ctx, [(1, {**record, "scope": name})]))
                    memories += 1
            total = time.process_time() - started
    print(json.dumps({"memories": memories, "pairs_paying": spent["pairs"], "questions": spent["questions"],
                      "cpu_ms_per_paying_pair": round(spent["cpu"] * 1000 / max(1, spent["pairs"]), 2),
                      "cpu_us_per_memory": round(spent["cpu"] * 1e6 / max(1, memories), 1),
                      "share_of_intake_cpu": round(spent["cpu"] / total, 4), "intake_cpu_s": round(total, 1)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
