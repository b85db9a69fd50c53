"""Bulk import defers the graph (mem.stages.finish): the finished graph is the one eager intake builds,
edge by edge, and an import killed at any moment leaves a consistent, searchable database."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import sqlean

from bench.synth import memory_texts

ROOT = Path(__file__).resolve().parent.parent
NOW = "2026-06-01T12:00:00Z"
BASE = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)


def _at(minutes: float) -> str:
    return (BASE + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def intake_records(n: int = 240) -> list[dict[str, Any]]:
    """Synthetic project memories in sessions (some arriving out of session order, so they are spliced into
    the chain), corrections of earlier facts (some stored before what they correct), a dialogue whose turns
    never supersede each other, causal follow-ups, and exact and near duplicates."""
    records: list[dict[str, Any]] = []
    for i, text in enumerate(memory_texts(n, seed=3)):
        late = i % 13 == 5  # told later than it happened: precedes edges are re-spliced around it
        records.append({"text": text, "meta": {"session": f"s{i % 7}"}, "created_at": _at(i * 10 - (200 if late else 0))})
    pairs = [json.loads(line) for line in (ROOT / "bench/contradictions.jsonl").read_text().splitlines()[:40]]
    for j, pair in enumerate(pairs):
        old = {"text": pair["old"], "created_at": _at(j * 30)}
        new = {"text": pair["new"], "kind": pair["new_kind"], "created_at": _at(j * 30 + 900)}
        at = (j * 6) % len(records)
        records[at:at] = [new, old] if j % 4 == 0 else [old, new]  # every fourth: the correction comes first
    turns = ["Caroline: I'm off to the gym tonight", "Melanie: I went to the gym yesterday",
             "Caroline: The auth service outage was caused by an expired TLS cert",
             "Melanie: after the outage, we added cert expiry alerts to Grafana",
             "Caroline: fixed the auth service outage by rotating the certs"]
    records += [{"text": t, "kind": "episode", "meta": {"session": "chat-1"}, "created_at": _at(5 + k)} for k, t in enumerate(turns)]
    records += [
        {"text": "The checkout service crashed with a timeout error under load", "created_at": _at(700)},
        {"text": "Fixed the checkout timeout by adding an index on orders.created_at", "created_at": _at(720)},
        {"text": records[3]["text"]},  # exact duplicate
        {"text": records[10]["text"] + "!"},  # near duplicate
    ]
    return records


def snapshot(path: Path) -> dict[str, Any]:
    """The graph and everything linking derived, with memories named by their text (ids are random)."""
    conn = sqlean.connect(str(path))
    text_of = dict(conn.execute("SELECT id, text FROM memories"))
    row_text = dict(conn.execute("SELECT rowid, text FROM memories"))
    out = {
        "memories": sorted(conn.execute(
            "SELECT text, kind, layer, superseded_by, verification, status, asserted, round(surprise, 6), event_at "
            "FROM memories")),
        "edges": sorted((text_of[s], text_of[d], layer, kind, weight, origin)
                        for s, d, layer, kind, weight, origin in conn.execute(
                            "SELECT src, dst, layer, type, weight, origin FROM edges")),
        "entities": sorted(conn.execute(
            "SELECT key, name, type, aliases, mention_count, first_seen, last_seen FROM entities")),
        "mentions": sorted((row_text[r], key) for r, key in conn.execute(
            "SELECT me.memory_rowid, e.key FROM memory_entities me JOIN entities e ON e.id = me.entity_id")),
        "assertions": sorted((row_text[r], *rest) for r, *rest in conn.execute(
            "SELECT memory_rowid, scope, attribute, subject, slot, value, polarity FROM assertions")),
        "pending": conn.execute("SELECT COUNT(*) FROM pending_links").fetchone()[0],
    }
    out["memories"] = [(*row[:3], text_of.get(row[3]), *row[4:]) for row in out["memories"]]
    conn.close()
    return out


def _outcomes(result: Any, text_of: dict[str, str]) -> list[tuple[Any, ...]]:
    return [(o["status"], o.get("reason"), o.get("kind"), o.get("layer"), text_of.get(o.get("superseded_by")),
             tuple(text_of[s] for s in o.get("supersedes", []))) for o in result.records]


def _texts(path: Path) -> dict[str, str]:
    conn = sqlean.connect(str(path))
    try:
        return dict(conn.execute("SELECT id, text FROM memories"))
    finally:
        conn.close()


def test_bulk_add_builds_the_eager_graph_edge_by_edge(mem, tmp_path: Path) -> None:
    lines = "\n".join(json.dumps(r) for r in intake_records()) + "\n"
    eager, bulk = tmp_path / "eager.db", tmp_path / "bulk.db"
    first = mem("add", "-", "--db", str(eager), "--now", NOW, input=lines)
    second = mem("add", "-", "--bulk", "--db", str(bulk), "--now", NOW, input=lines)
    assert first.code == second.code == 0, second.stderr
    expected, got = snapshot(eager), snapshot(bulk)
    assert got["pending"] == 0
    # the input exercises every part of the graph, so the comparison below means something
    types = {edge[3] for edge in expected["edges"]}
    assert {"see_also", "precedes", "same_session", "supersedes"} <= types
    assert {"resolved", "caused"} & types and expected["assertions"] and expected["entities"]
    assert sum(1 for m in expected["memories"] if m[3]) >= 20  # superseded ones
    for part in ("edges", "memories", "entities", "mentions", "assertions"):
        assert got[part] == expected[part], part
    # each input's outcome is what eager intake reported, superseded ones included
    assert _outcomes(second, _texts(bulk)) == _outcomes(first, _texts(eager))
    assert any(o["status"] == "superseded" for o in first.records)
    assert {o["status"] for o in first.records} >= {"added", "duplicate"}


def test_single_add_stays_eager(mem) -> None:
    mem("add", "The auth service outage was caused by an expired TLS cert")
    out = mem("add", "Fixed the auth service outage by rotating the TLS certs")
    assert out.code == 0
    db = Path(os.environ["MEM_DB"])
    conn = sqlean.connect(str(db))
    assert conn.execute("SELECT COUNT(*) FROM pending_links").fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM edges WHERE type = 'resolved'").fetchone()[0] == 1
    conn.close()


def test_bulk_refuses_extract(mem) -> None:
    out = mem("add", "-", "--bulk", "--extract", "ollama", input='{"text": "We use Postgres 16 for billing"}\n')
    assert out.code == 4 and "--bulk" in out.error["message"]


def test_consolidate_finishes_what_an_interrupted_bulk_intake_left(mem, tmp_path: Path) -> None:
    """The state a kill between the writes and the finishing pass leaves (bulk-stored chunks, pending rows),
    made by the real write path; ``mem consolidate`` then finishes it as eager intake would have."""
    from mem.config import resolve_settings
    from mem.stages import add
    from mem.stages.context import Context
    from mem.store import Store

    records = intake_records(120)
    eager = tmp_path / "eager.db"
    assert mem("add", "-", "--db", str(eager), "--now", NOW, input="\n".join(json.dumps(r) for r in records)).code == 0
    cut = tmp_path / "cut.db"
    settings = resolve_settings(db=str(cut), now=NOW)
    with Store.open(settings.db_path) as store:
        ctx = Context(store, settings)
        options = add.AddOptions(bulk=True)
        drafts = [add.validate(raw, line, ctx, options) for line, raw in enumerate(records, start=1)]
        list(add.store_drafts(ctx, drafts, options))  # the writes, without the finishing pass
    left = snapshot(cut)
    assert left["pending"] > 100 and not left["edges"] and not left["assertions"]
    hit = mem("search", records[0]["text"], "--db", str(cut), "--json")  # searchable before the graph exists
    assert hit.code == 0 and hit.records[0]["text"] == records[0]["text"]
    done = mem("consolidate", "--phase", "replay", "--db", str(cut), "--now", NOW, "--json")
    assert done.code == 0, done.stderr
    assert done.records[-1]["phases"]["replay"]["finished"] == left["pending"]
    expected, got = snapshot(eager), snapshot(cut)
    assert got["pending"] == 0
    for part in ("memories", "entities", "mentions", "assertions"):
        assert got[part] == expected[part], part
    # replay then also refreshes see_also links of recent memories: the eager graph is all there
    assert set(expected["edges"]) <= set(got["edges"])


def _count(path: Path, sql: str) -> int:
    try:
        conn = sqlean.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            return int(conn.execute(sql).fetchone()[0])
        finally:
            conn.close()
    except sqlean.OperationalError:  # not created yet
        return -1


def _import_until(path: Path, source: Path, env: dict[str, str], stop: Any) -> bool:
    """Run ``mem import`` in a real process and kill -9 it the moment ``stop()`` holds; whether it was killed."""
    from bench.crash import mem_command

    # chunks of 100: a 650-record import commits several times before its finishing pass
    proc = subprocess.Popen(mem_command("import", str(source), "--db", str(path), "--quiet", chunk=100),
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        while proc.poll() is None:
            if stop():
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                return True
            time.sleep(0.005)
        assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
        return False
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _consistent(mem: Any, path: Path, records: list[dict[str, Any]]) -> None:
    conn = sqlean.connect(str(path))
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
        assert stored == conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]  # every memory has its vector
        last = conn.execute("SELECT text FROM memories ORDER BY rowid DESC LIMIT 1").fetchone()[0]
        # memories without a finished graph are exactly the pending ones, and none is half-linked
        unlinked = conn.execute("SELECT COUNT(*) FROM memories WHERE asserted = 0").fetchone()[0]
        assert unlinked == conn.execute("SELECT COUNT(*) FROM pending_links").fetchone()[0]
    finally:
        conn.close()
    hit = mem("search", last, "--db", str(path), "--json", "-k", "1")
    assert hit.code == 0 and hit.records[0]["text"] == last


@pytest.mark.slow
def test_bulk_import_killed_anywhere_is_consistent_and_the_rerun_finishes_it(mem, tmp_path: Path) -> None:
    records = [{"id": str(uuid.UUID(int=(7 << 76) | i)), **r} for i, r in enumerate(intake_records(700))]
    records = [r for r in records if not r["text"].endswith("!")]  # import keeps near duplicates anyway
    source = tmp_path / "export.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    eager = tmp_path / "eager.db"
    from mem.config import resolve_settings
    from mem.jsonl import read_records
    from mem.stages import io
    from mem.stages.context import Context
    from mem.store import Store

    settings = resolve_settings(db=str(eager), now=NOW)
    with Store.open(settings.db_path) as store, source.open("rb") as fh:
        list(io.import_records(Context(store, settings), list(read_records(fh)), bulk=False))
    db = tmp_path / "bulk.db"
    env = {**os.environ, "MEM_NOW": NOW, "PYTHONPATH": str(ROOT)}
    total = _count(eager, "SELECT COUNT(*) FROM memories")  # exact duplicates (another id, the same text) are not stored
    # 1. killed while the chunks are being written
    assert _import_until(db, source, env, lambda: 0 < _count(db, "SELECT COUNT(*) FROM memories") < total // 2)
    _consistent(mem, db, records)
    # 2. the rerun stores the rest, then is killed inside the finishing pass (one batch done, more to go)
    from mem.stages.finish import BATCH

    assert total > BATCH
    assert _import_until(db, source, env, lambda: _count(db, "SELECT COUNT(*) FROM memories") == total
                         and 0 < _count(db, "SELECT COUNT(*) FROM pending_links") <= total - BATCH)
    _consistent(mem, db, records)
    assert _count(db, "SELECT COUNT(*) FROM memories") == total
    # 3. the next rerun finishes the graph: the one an uninterrupted eager import builds
    assert not _import_until(db, source, env, lambda: False)
    expected, got = snapshot(eager), snapshot(db)
    assert got["pending"] == 0
    for part in ("edges", "memories", "entities", "mentions", "assertions"):
        assert got[part] == expected[part], part


def test_bulk_import_bench_harness_runs_and_both_builds_agree(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_bulk_import", ROOT / "bench/bulk_import.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    texts = list(memory_texts(150))
    eager = bench.build(tmp_path / "e.db", texts, "hash", bulk=False)
    bulk = bench.build(tmp_path / "b.db", texts, "hash", bulk=True)
    assert eager["finishing"] == 0 < bulk["finishing"] < bulk["seconds"]
    assert eager["counts"] == bulk["counts"] and eager["counts"][0] > 0


def test_finish_window_times_the_pass_and_leaves_the_database_as_it_was(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_bulk_import", ROOT / "bench/bulk_import.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    db = tmp_path / "b.db"
    bench.build(db, list(memory_texts(150)), "hash", bulk=True, finishing=False)

    def state() -> tuple[int, int, int]:
        conn = sqlean.connect(str(db))
        try:
            return conn.execute("SELECT (SELECT COUNT(*) FROM pending_links), (SELECT COUNT(*) FROM edges), "
                                "(SELECT COUNT(*) FROM assertions)").fetchone()
        finally:
            conn.close()

    before = state()
    spec = importlib.util.spec_from_file_location("bench_finish_window", ROOT / "bench/finish_window.py")
    assert spec is not None and spec.loader is not None
    window = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(window)
    got = window.window(str(db), 101, 1)
    assert before[0] == 150 and got["memories"] == 50 and len(got["batches"]) == 1
    assert state() == before  # rolled back


def test_intake_ratio_harness_runs(capsys) -> None:
    """bench/scale.py --intake-ratio: intake and bulk against the embedder alone, printed per round."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_scale", ROOT / "bench/scale.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rounds = bench.intake_ratio(80, "hash", 2)
    # the ratios' values are the bench's to report (timing depends on the machine's load); here they are finite, positive
    assert len(rounds) == 2 and all(0 < ratio < float("inf") for pair in rounds for ratio in pair)
    printed = capsys.readouterr().out
    assert "round 1:" in printed and "round 2:" in printed and "median over 2 rounds: mem add - x" in printed
    assert "whole processes (load included): embedder alone" in printed  # a real mem add - --bulk process
    bulk = bench.intake_ratio(80, "hash", 1, bulk_only=True)  # --bulk-only: no eager rounds, NaN in their place
    assert bulk[0][0] != bulk[0][0] and bulk[0][2] != bulk[0][2] and 0 < bulk[0][1] < float("inf")


def test_bulk_add_matches_eager_on_both_backends(backend: str, mem) -> None:
    """The finishing pass on SQLite and PostgreSQL: a bulk batch in one scope, the same batch eagerly in
    another, the same outcomes and the same links (by text) in their exports."""
    records = [
        {"text": "The API server listens on port 8080.", "created_at": _at(0), "meta": {"session": "a"}},
        {"text": "The checkout service crashed with a timeout error under load", "created_at": _at(1), "meta": {"session": "a"}},
        {"text": "Fixed the checkout timeout by adding an index on orders", "created_at": _at(2), "meta": {"session": "a"}},
        {"text": "The API server now listens on port 9090.", "created_at": _at(3), "meta": {"session": "a"}},
        {"text": "We decided to use Redis for the billing service because latency was too high.", "created_at": _at(4)},
    ]
    lines = "\n".join(json.dumps(r) for r in records) + "\n"
    runs = {}
    for scope, flags in (("eager", []), ("bulk", ["--bulk"])):
        out = mem("add", "-", *flags, "--scope", scope, "--now", NOW, input=lines)
        assert out.code == 0, out.stderr
        exported = mem("export", "--scope", scope).records
        text_of = {r["id"]: r["text"] for r in exported}
        links = sorted((r["text"], text_of[link["to"]], link["type"], link["weight"])
                       for r in exported for link in r.get("links", []))
        runs[scope] = (_outcomes(out, text_of), links)
    assert runs["bulk"] == runs["eager"]
    assert {"supersedes", "resolved", "precedes"} <= {link[2] for link in runs["eager"][1]}
