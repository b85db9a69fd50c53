"""Concurrency soak: 4 writers, a reader and a consolidation loop on one database file.

    python bench/soak.py --seconds 60            # the figures in the report
    python bench/soak.py --seconds 10 --json     # what tests/test_soak.py runs

Writers are real ``mem add -`` (batches of 20) and ``mem add TEXT`` (singles) processes, four
at a time. The reader is the MCP server (``mem serve-mcp``, one long-lived process answering
``search`` tool calls) when that command exists, else a ``mem search`` loop. ``mem consolidate``
runs in a loop when it exists. At the end: every id reported ``added`` is in the database (zero
lost writes), no process surfaced a lock error, ``PRAGMA integrity_check`` is ok, and the
memory, FTS, vector and vec0 counts agree. Prints writes/s and the longest wait (the slowest
single write command, start to exit, while everything else was running).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WORDS = ("redis postgres cache queue billing invoice deploy rollback schema migration kafka worker token "
         "session latency budget alice bob carol dave parser lexer compiler router gateway replica shard "
         "backup restore quota tenant metric alert pager incident review release branch feature flag").split()


def mem_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "mem", *args]


def commands() -> set[str]:
    """The commands the app has right now (the soak adapts to what other work has landed)."""
    sys.path.insert(0, str(ROOT))
    import typer

    from mem.cli import build_app

    return set(typer.main.get_command(build_app()).commands)


def sentence(rng: random.Random, tag: str) -> str:
    return f"{tag}: " + " ".join(rng.choice(WORDS) for _ in range(10)) + f" {rng.getrandbits(48):x}"


class Tally:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.added: set[str] = set()
        self.write_calls: list[float] = []
        self.read_calls: list[float] = []
        self.consolidate_calls: list[float] = []
        self.errors: list[str] = []
        self.lock_errors = 0

    def failed(self, what: str, code: int, stderr: str) -> None:
        with self.lock:
            self.errors.append(f"{what}: exit {code}: {stderr.strip()[-300:]}")
            if "locked" in stderr.lower() or "busy" in stderr.lower():
                self.lock_errors += 1


def writer(n: int, deadline: float, env: dict[str, str], tally: Tally) -> None:
    rng = random.Random(n)
    i = 0
    while time.monotonic() < deadline:
        i += 1
        if i % 3:
            lines = "".join(json.dumps({"text": sentence(rng, f"w{n} b{i} r{j}")}) + "\n" for j in range(20))
            args, stdin = mem_cmd("add", "--keep-near", "-"), lines.encode()
        else:
            args, stdin = mem_cmd("add", "--keep-near", sentence(rng, f"w{n} s{i}")), None
        start = time.monotonic()
        proc = subprocess.run(args, input=stdin, capture_output=True, env=env)
        took = time.monotonic() - start
        stderr = proc.stderr.decode("utf-8", "replace")
        if proc.returncode != 0 or "locked" in stderr.lower():
            tally.failed(f"writer {n}", proc.returncode, stderr)
            continue
        ids = [r["id"] for r in map(json.loads, proc.stdout.decode().splitlines()) if r.get("status") == "added"]
        with tally.lock:
            tally.added.update(ids)
            tally.write_calls.append(took)


def search_loop(deadline: float, env: dict[str, str], tally: Tally) -> str:
    rng = random.Random(99)
    while time.monotonic() < deadline or (not tally.read_calls and len(tally.errors) < 20):
        start = time.monotonic()
        proc = subprocess.run(mem_cmd("search", " ".join(rng.sample(WORDS, 3)), "-n", "5"), capture_output=True, env=env)
        if proc.returncode != 0:
            tally.failed("search", proc.returncode, proc.stderr.decode("utf-8", "replace"))
        else:
            tally.read_calls.append(time.monotonic() - start)
    return "mem search loop"


def mcp_loop(deadline: float, env: dict[str, str], tally: Tally) -> str:
    """One ``mem serve-mcp`` process; newline-delimited JSON-RPC over stdio, ``search``-like tool calls."""
    proc = subprocess.Popen(mem_cmd("serve-mcp"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    assert proc.stdin and proc.stdout
    counter = 0

    def call(method: str, params: dict[str, Any] | None = None, notify: bool = False) -> Any:
        nonlocal counter
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params or {}}
        if not notify:
            counter += 1
            message["id"] = counter
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()
        if notify:
            return None
        while True:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError("mcp server closed stdout")
            reply = json.loads(line)
            if reply.get("id") == counter:
                if "error" in reply:
                    raise RuntimeError(str(reply["error"]))
                return reply["result"]

    try:
        call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "soak", "version": "1"}})
        call("notifications/initialized", notify=True)
        tools = call("tools/list")["tools"]
        candidates = [t for t in tools if t["name"].split("_")[-1] == "search"
                      and "query" in t.get("inputSchema", {}).get("properties", {})]
        if not candidates:
            raise RuntimeError("no search tool")
        name = candidates[0]["name"]
        rng = random.Random(7)
        while time.monotonic() < deadline or (not tally.read_calls and len(tally.errors) < 20):  # at least one answer, however slow the start
            start = time.monotonic()
            result = call("tools/call", {"name": name, "arguments": {"query": " ".join(rng.sample(WORDS, 3))}})
            if result.get("isError"):
                text = json.dumps(result.get("content"))[:300]
                tally.failed("mcp search", 1, text)
            else:
                tally.read_calls.append(time.monotonic() - start)
        return f"mem serve-mcp ({name} tool)"
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        stderr = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
        if "locked" in stderr.lower():
            tally.failed("mcp server", proc.returncode or 0, stderr)


def consolidate_loop(deadline: float, env: dict[str, str], tally: Tally) -> None:
    while time.monotonic() < deadline:
        start = time.monotonic()
        proc = subprocess.run(mem_cmd("consolidate", "--scope", "*", "--quiet"), capture_output=True, env=env)
        if proc.returncode != 0:
            tally.failed("consolidate", proc.returncode, proc.stderr.decode("utf-8", "replace"))
        else:
            tally.consolidate_calls.append(time.monotonic() - start)
        time.sleep(0.5)


def check_database(db: Path, added: set[str]) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    from mem.store import Store

    with Store.open(db, create=False) as store:
        counts = store.counts()
        present = {row[0] for row in store.conn.execute("SELECT id FROM memories")}
        return {"integrity": store.integrity(), "memories": counts["memories"], "fts": counts["fts"],
                "vectors": counts["vectors"], "vec_index": counts["vec_index"], "lost": len(added - present)}


def soak(seconds: float, *, writers: int = 4, db: Path | None = None) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="mem-soak-"))
    db = db or folder / "soak.db"
    env = {**os.environ, "MEM_DB": str(db), "MEM_EMBEDDER": "hash", "MEM_SCOPE": "soak", "MEM_WARM": "0",
           "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("MEM_NOW", None)
    # Create and bind the database first, so every process starts from the same schema.
    subprocess.run(mem_cmd("add", "soak start marker memory"), env=env, check=True, capture_output=True)
    available = commands()
    tally = Tally()
    start = time.monotonic()
    deadline = start + seconds
    threads = [threading.Thread(target=writer, args=(n, deadline, env, tally)) for n in range(writers)]
    reader_kind: list[str] = []

    def reader() -> None:
        if "serve-mcp" in available:
            try:
                reader_kind.append(mcp_loop(deadline, env, tally))
                return
            except Exception as exc:  # fall back so the soak still reads
                reader_kind.append(f"mcp failed ({exc}); ")
        reader_kind.append(search_loop(deadline, env, tally))

    threads.append(threading.Thread(target=reader))
    if "consolidate" in available:
        threads.append(threading.Thread(target=consolidate_loop, args=(deadline, env, tally)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - start
    final = check_database(db, tally.added)
    writes = sorted(tally.write_calls)
    reads = sorted(tally.read_calls)
    return {
        "seconds": round(elapsed, 1), "writers": writers, "reader": "".join(reader_kind),
        "consolidate_runs": len(tally.consolidate_calls) if "consolidate" in available else None,
        "added": len(tally.added), "writes_per_s": round(len(tally.added) / elapsed, 1),
        "write_calls": len(writes), "longest_wait_s": round(writes[-1], 3) if writes else None,
        "median_write_call_s": round(writes[len(writes) // 2], 3) if writes else None,
        "reads": len(reads), "longest_read_s": round(reads[-1], 3) if reads else None,
        "longest_consolidate_s": round(max(tally.consolidate_calls), 3) if tally.consolidate_calls else None,
        "lost_writes": final["lost"], "lock_errors": tally.lock_errors, "errors": tally.errors[:5],
        "error_count": len(tally.errors), "integrity": final["integrity"],
        "counts": {k: final[k] for k in ("memories", "fts", "vectors", "vec_index")},
        "counts_agree": len({final[k] for k in ("memories", "fts", "vectors", "vec_index")}) == 1,
        "db": str(db),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a report")
    args = parser.parse_args()
    result = soak(args.seconds, writers=args.writers)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>22}: {value}")
    ok = (result["lost_writes"] == 0 and result["lock_errors"] == 0 and result["integrity"] == "ok"
          and result["counts_agree"] and result["error_count"] == 0)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
