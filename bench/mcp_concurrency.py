"""Concurrent MCP writers: N clients each adding M memories one call at a time, against one server,
with group commit (mem.mcp.group) and without it (each call its own group, as before), interleaved.

    python bench/mcp_concurrency.py                      # 8 clients x 25 adds, hash embedder
    python bench/mcp_concurrency.py --embedder minilm --rounds 3

The server is the one ``serve-mcp`` builds, in this process, each client connected in memory (the
transport hop is not measured; the engine, the intake and SQLite are). Prints adds/s and per-call
latency p50/p95/max for each mode and round, and the median ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import percentile  # noqa: E402  (also puts the repo on sys.path)
from synth import memory_texts  # noqa: E402


def run_round(db: Path, embedder: str, clients: int, adds: int, grouped: bool, texts: list[str]) -> dict[str, float]:
    import anyio
    from mcp import Client

    from mem.config import resolve_settings
    from mem.mcp import server as mcp_server

    engine = mcp_server.open_engine(resolve_settings(db=db, embedder=embedder, scope="bench"), fixed_scope="bench")
    server = mcp_server.build(engine, "default")
    latencies: list[float] = []

    async def writer(n: int) -> None:
        async with Client(server) as client:
            for i in range(adds):
                start = time.perf_counter()
                result = await client.call_tool("add", {"text": texts[n * adds + i], "keep_near": True})
                latencies.append(time.perf_counter() - start)
                assert not result.is_error, result

    async def main() -> float:
        async with Client(server) as client:
            await client.call_tool("add", {"text": f"warm up {time.time()}"})
        if not grouped:
            engine._writes.limit = 1
        start = time.perf_counter()
        async with anyio.create_task_group() as group:
            for n in range(clients):
                group.start_soon(writer, n)
        return time.perf_counter() - start

    try:
        elapsed = anyio.run(main)
        groups = engine._writes.groups - 1
    finally:
        engine.ctx.store.close()
    return {"adds_per_s": clients * adds / elapsed, "p50_ms": 1000 * percentile(latencies, 0.50),
            "p95_ms": 1000 * percentile(latencies, 0.95), "max_ms": 1000 * max(latencies), "groups": groups}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--adds", type=int, default=25)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--embedder", default="hash")
    args = parser.parse_args()
    os.environ.setdefault("MEM_WARM", "0")
    folder = Path(tempfile.mkdtemp(prefix="mem-mcpc-"))
    total = args.clients * args.adds
    figures: dict[str, list[dict[str, float]]] = {"grouped": [], "one per call": []}
    for round_ in range(args.rounds):
        for mode in ("one per call", "grouped"):
            texts = list(memory_texts(total, seed=100 + round_ * 2 + (mode == "grouped")))
            db = folder / f"r{round_}-{mode.replace(' ', '-')}.db"
            row = run_round(db, args.embedder, args.clients, args.adds, mode == "grouped", texts)
            figures[mode].append(row)
            print(f"round {round_} {mode:12s}: {row['adds_per_s']:7.1f} adds/s  p50 {row['p50_ms']:6.1f} ms  "
                  f"p95 {row['p95_ms']:6.1f} ms  max {row['max_ms']:7.1f} ms  write groups {row['groups']:.0f}/{total}")
    for key in ("adds_per_s", "p95_ms"):
        ratio = statistics.median(g[key] / o[key] for g, o in zip(figures["grouped"], figures["one per call"]))
        print(f"grouped / one per call, {key}: {ratio:.2f}")


if __name__ == "__main__":
    main()
