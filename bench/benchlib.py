"""What the benchmark scripts share: repository on the path, single-threaded BLAS, small helpers.

A script starts with ``sys.path.insert(0, str(Path(__file__).resolve().parent))`` and then
``from benchlib import ...`` (bench/ is a folder of scripts, not a package).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from mem.runtime import limit_blas_threads  # noqa: E402

limit_blas_threads()  # before any bench imports numpy: see mem/runtime.py


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (nearest rank) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def latency(values: list[float]) -> dict[str, float]:
    """``{"p50": ..., "p95": ...}`` of per-query times."""
    return {"p50": statistics.median(values), "p95": percentile(values, 0.95)}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every object of a JSON Lines file, blank lines skipped."""
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def ablation_configs() -> dict[str, list[str] | None]:
    """Search configurations the retrieval benchmarks compare: bm25, semantic, hybrid, full (None:
    every channel and post-fusion step), and full minus each other channel or step."""
    from mem.stages.search import CHANNELS, POST_STEPS

    configs: dict[str, list[str] | None] = {"bm25": ["bm25"], "semantic": ["semantic"],
                                            "hybrid": ["semantic", "bm25"], "full": None}
    every = [*CHANNELS, *POST_STEPS]
    for name in every:
        if name not in ("semantic", "bm25"):
            configs[f"full-{name}"] = [c for c in every if c != name]
    return configs
