"""MCP server figures: start-to-ready time, warm ``search`` round trip over stdio (p50/p95), tools/list bytes.

Builds a database of N synthetic memories with ``mem import`` (fast with MEM_EMBEDDER=hash), starts
``mem serve-mcp`` as a subprocess and speaks raw JSON-RPC over its pipes, so the figures are the
server's plus one pipe hop (no client library in the measurement).

    python bench/mcp_latency.py                       # 10k, hash embedder
    python bench/mcp_latency.py --n 10000 --n 100000  # the lead's 100k run
    python bench/mcp_latency.py --embedder minilm --n 10000
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import percentile  # noqa: E402  (also puts the repo on sys.path)
from synth import memory_texts, queries  # noqa: E402

SCOPE = "bench"


def build(db: Path, n: int, embedder: str) -> float:
    """Import n synthetic memories into db; returns seconds taken."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as fh:
        for text in memory_texts(n):
            fh.write(json.dumps({"text": text}) + "\n")
        path = fh.name
    started = time.perf_counter()
    env = {**os.environ, "MEM_DB": str(db), "MEM_EMBEDDER": embedder, "MEM_SCOPE": SCOPE}
    subprocess.run([sys.executable, "-m", "mem", "import", path, "--quiet"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    os.unlink(path)
    return time.perf_counter() - started


class Server:
    """``mem serve-mcp`` over pipes; ``request`` returns (raw response line, seconds)."""

    def __init__(self, db: Path, embedder: str, profile: str = "default") -> None:
        env = {**os.environ, "MEM_DB": str(db), "MEM_EMBEDDER": embedder, "MEM_SCOPE": SCOPE}
        self.started = time.perf_counter()
        self.proc = subprocess.Popen([sys.executable, "-m", "mem", "serve-mcp", "--profile", profile],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.next_id = 0

    def request(self, method: str, params: dict[str, Any] | None = None) -> tuple[bytes, float]:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        started = time.perf_counter()
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("server exited")
            answer = json.loads(line)
            if answer.get("id") == self.next_id:
                return line, time.perf_counter() - started

    def initialize(self) -> float:
        """Seconds from spawn to the initialize answer (the server is ready for calls)."""
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "1"}})
        ready = time.perf_counter() - self.started
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.proc.stdin.flush()
        return ready

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def measure(db: Path, embedder: str, n_queries: int, warmup: int) -> dict[str, Any]:
    server = Server(db, embedder)
    try:
        ready = server.initialize()
        qs = queries(n_queries + warmup)
        times = []
        for i, q in enumerate(qs):
            line, seconds = server.request("tools/call", {"name": "search", "arguments": {"query": q, "k": 10}})
            if b'"isError":true' in line:
                raise RuntimeError(line[:300])
            if i >= warmup:
                times.append(seconds * 1000)
    finally:
        server.close()
    return {"ready_s": ready, "p50_ms": statistics.median(times), "p95_ms": percentile(times, 0.95),
            "mean_ms": statistics.fmean(times), "queries": len(times)}


def in_process(db: Path, embedder: str, n_queries: int, warmup: int) -> float:
    """p50 of the same searches calling the stage directly: the difference is the MCP layer's cost."""
    from mem.config import resolve_settings
    from mem.stages import search
    from mem.stages.context import Context
    from mem.store import Store

    settings = resolve_settings(db=db, embedder=embedder, scope=SCOPE)
    with Store.open(settings.db_path) as store:
        ctx = Context(store=store, settings=settings)
        times = []
        for i, q in enumerate(queries(n_queries + warmup)):
            started = time.perf_counter()
            search.run(ctx, search.Query(text=q, k=10, scope=SCOPE))
            if i >= warmup:
                times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def tools_list_bytes(db: Path, embedder: str) -> dict[str, tuple[int, int]]:
    out = {}
    for profile in ("default", "memory-v3"):
        server = Server(db, embedder, profile)
        try:
            server.initialize()
            line, _ = server.request("tools/list", {})
        finally:
            server.close()
        out[profile] = (len(json.loads(line)["result"]["tools"]), len(line))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, action="append", help="memories (repeatable) [default: 10000]")
    parser.add_argument("--embedder", default="hash")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--dir", type=Path, help="keep the databases here (reused when present)")
    args = parser.parse_args()
    folder = args.dir or Path(tempfile.mkdtemp(prefix="mem-mcp-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"mcp latency  embedder={args.embedder}  queries={args.queries} (+{args.warmup} warm-up)  "
          f"python={sys.version.split()[0]}  cpus={os.cpu_count()}")
    sizes = None
    for n in args.n or [10000]:
        db = folder / f"mcp-{n}-{args.embedder.replace(':', '_')}.db"
        if not db.exists():
            seconds = build(db, n, args.embedder)
            print(f"  built {n} memories in {seconds:.1f}s ({db})")
        r = measure(db, args.embedder, args.queries, args.warmup)
        direct = in_process(db, args.embedder, args.queries, args.warmup)
        print(f"  n={n:>7}  start-to-ready {r['ready_s']*1000:.0f} ms  search p50 {r['p50_ms']:.1f} ms  "
              f"p95 {r['p95_ms']:.1f} ms  mean {r['mean_ms']:.1f} ms  (in-process stage p50 {direct:.1f} ms)")
        if sizes is None:
            sizes = tools_list_bytes(db, args.embedder)
    for profile, (count, size) in (sizes or {}).items():
        print(f"  tools/list {profile:<9}  {count:>2} tools  {size} bytes (JSON-RPC line)")


if __name__ == "__main__":
    main()
