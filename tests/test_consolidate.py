"""`mem consolidate` end to end: each phase, dry runs, idempotency, the run log, and concurrent writers."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest

from tests.conftest import jsonl, run_mem

T0 = "2026-01-01T00:00:00Z"
T1 = "2026-01-03T00:00:00Z"

BASE = ("The nightly backup job runs at 02:00 on host db-backup-1 and writes compressed snapshots of the "
        "orders database to the backup bucket in us-east-1.")
NEAR_DUPES = [BASE + " It keeps 14 daily snapshots.", BASE + " Owner: Dana.", BASE + " It keeps 14 daily snapshots!"]
OTHERS = [
    "Feature flags are read from LaunchDarkly at process start.",
    "Frontend builds are cached by the CI runner between jobs.",
    "The on-call rotation changes every Monday at 10:00.",
]


def seed() -> None:
    records = [{"text": t, "created_at": T0} for t in NEAR_DUPES + OTHERS]
    result = run_mem("add", "--keep-near", "-", "--now", T0, input=jsonl(*records))
    assert result.code == 0, result.stderr
    assert [r["status"] for r in result.records] == ["added"] * 6


def consolidate(*args: str, now: str = T1) -> list[dict]:
    result = run_mem("consolidate", "--now", now, *args)
    assert result.code == 0, result.stderr
    return result.records


def db() -> sqlite3.Connection:
    return sqlite3.connect(os.environ["MEM_DB"])


def test_compress_merges_near_duplicates_keeping_every_fact() -> None:
    seed()
    records = consolidate("--phase", "compress")
    merges = [r for r in records if r.get("action") == "merge"]
    assert len(merges) == 1
    merge = merges[0]
    assert merge["status"] == "added" and merge["method"] == "extractive"
    merged = run_mem("get", merge["id"]).records[0]
    for sentence in ("02:00 on host db-backup-1", "It keeps 14 daily snapshots", "Owner: Dana"):
        assert sentence in merged["text"]
    assert merged["text"].count("nightly backup job") == 1  # the shared sentence is kept once
    assert merged["text"].count("14 daily snapshots") == 1  # "." and "!" variants are the same sentence
    originals = set(merge["derived_from"])
    assert len(originals) == 3
    edges = db().execute("SELECT src, dst, layer FROM edges WHERE type = 'derived_from'").fetchall()
    assert {(s, d, layer) for s, d, layer in edges} == {(merge["id"], o, "lifecycle") for o in originals}
    for original in originals:  # archived, not deleted, still readable
        assert run_mem("get", original).records[0]["status"] == "archived"
    hits = run_mem("search", "nightly backup db-backup-1", "--now", T1).records
    assert [h["id"] for h in hits if "backup" in h["text"]] == [merge["id"]]
    summary = records[-1]
    assert summary["record"] == "summary" and summary["phases"]["compress"]["merged"] == 3
    # idempotent: nothing left to merge
    again = consolidate("--phase", "compress")
    assert [r for r in again if r["record"] == "action"] == []


def test_dry_run_reports_but_writes_nothing() -> None:
    seed()
    before = run_mem("export").stdout
    records = consolidate("--dry-run", now="2026-04-01T00:00:00Z")
    actions = [r for r in records if r["record"] == "action"]
    assert any(a["action"] == "merge" for a in actions)
    assert any(a["phase"] == "prune" and a["action"] == "archived" for a in actions)
    assert all(a["dry_run"] for a in actions)
    assert run_mem("export").stdout == before
    assert db().execute("SELECT COUNT(*) FROM consolidation_runs").fetchone()[0] == 0


def test_full_run_is_logged_and_a_second_run_does_nothing() -> None:
    seed()
    first = run_mem("consolidate", "--now", T1)
    assert first.code == 0, first.stderr
    assert first.stderr.startswith("consolidate: ")
    assert first.records[-1]["record"] == "summary"
    assert set(first.records[-1]["phases"]) == {"replay", "reorganize", "compress", "prune"}
    second = consolidate()
    assert [r for r in second if r["record"] == "action"] == []
    assert second[-1]["actions"] == 0
    rows = db().execute("SELECT status, dry_run, phases FROM consolidation_runs ORDER BY id").fetchall()
    assert [(s, d) for s, d, _ in rows] == [("ok", 0), ("ok", 0)]
    quiet = run_mem("consolidate", "--now", T1, "--quiet")
    assert quiet.code == 0 and quiet.stderr == ""


def test_reorganize_stores_communities_and_refreshes_surprise() -> None:
    seed()
    records = consolidate("--phase", "reorganize")
    actions = [r for r in records if r["record"] == "action"]
    assert len(actions) == 1 and actions[0]["scope"] == "test" and actions[0]["communities"] >= 1
    conn = db()
    assert conn.execute("SELECT COUNT(*) FROM communities WHERE scope = 'test'").fetchone()[0] >= 1
    surprises = [r[0] for r in conn.execute("SELECT surprise FROM memories")]
    assert all(0.0 <= s <= 1.0 for s in surprises) and len(set(surprises)) > 1
    # the near duplicates sit close to a centroid: less surprising than the loners on average
    by_text = dict(conn.execute("SELECT text, surprise FROM memories"))
    assert max(by_text[t] for t in NEAR_DUPES) < 1.0
    assert [r for r in consolidate("--phase", "reorganize") if r["record"] == "action"] == []


def test_replay_resolves_contradictions_missed_before_the_index() -> None:
    old = run_mem("add", "--now", T0, "The API server listens on port 8080.").records[0]["id"]
    new = run_mem("add", "--now", T1, "The API server now listens on port 9090.").records[0]["id"]
    conn = db()  # simulate a database from before the assertion index: nothing indexed, nothing superseded
    conn.execute("UPDATE memories SET superseded_by = NULL, asserted = 0")
    conn.execute("DELETE FROM assertions")
    conn.execute("DELETE FROM edges WHERE type = 'supersedes'")
    conn.commit()
    records = consolidate("--phase", "replay")
    assert [r for r in records if r.get("action") == "supersede"] == [
        {"record": "action", "phase": "replay", "action": "supersede", "id": new, "supersedes": old, "dry_run": False}]
    assert run_mem("get", old).records[0]["superseded_by"] == new
    assert [r for r in consolidate("--phase", "replay") if r["record"] == "action"] == []


def test_limit_and_bad_phase() -> None:
    seed()
    records = consolidate("--phase", "prune", "--limit", "2", now="2026-06-01T00:00:00Z")
    assert len([r for r in records if r["record"] == "action"]) == 2
    bad = run_mem("consolidate", "--phase", "dream")
    assert bad.code == 4 and "dream" in bad.error["message"]


def test_llm_merge_falls_back_to_extractive_when_ollama_is_away() -> None:
    seed()
    result = run_mem("consolidate", "--phase", "compress", "--llm", "ollama", "--now", T1,
                     env={"OLLAMA_HOST": "http://127.0.0.1:9"})
    assert result.code == 0, result.stderr
    merge = [r for r in result.records if r.get("action") == "merge"][0]
    assert merge["method"] == "extractive" and "extractive merge used" in merge["note"]


@pytest.mark.slow  # three processes at once
def test_consolidate_while_two_processes_add() -> None:
    seed()
    run_mem("add", "--keep-near", "-", input=jsonl(*({"text": f"Background fact {i} about subsystem {i * 7}",
                                                      "created_at": T0} for i in range(300))))
    writers = []
    for w in range(2):
        lines = jsonl(*({"text": f"writer {w} adds distinct note {i} about widget {w * 1000 + i}"} for i in range(80)))
        proc = subprocess.Popen([sys.executable, "-m", "mem", "add", "--keep-near", "-"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ.copy())
        writers.append((proc, lines))
    cons = subprocess.Popen([sys.executable, "-m", "mem", "consolidate", "--now", "2026-03-01T00:00:00Z"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ.copy())
    for proc, lines in writers:
        out, err = proc.communicate(lines.encode(), timeout=180)
        assert proc.returncode == 0, err
        assert b"locked" not in err
    out, err = cons.communicate(timeout=180)
    assert cons.returncode == 0, err
    assert b"locked" not in err
    stats = run_mem("stats").records[0]
    assert stats["memories"] == 6 + 300 + 160 + 1  # + the merged memory; nothing lost
    assert stats["memories"] == stats["vectors"] == stats["fts"]


def test_near_clusters_need_every_pair_close() -> None:
    import numpy as np

    from mem.stages.consolidate import near_clusters

    # B is close to A and to C, but A and C are far apart: no chain merge of all three.
    angles = np.radians([0.0, 20.0, 40.0, 200.0])
    chain = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    assert near_clusters(chain, near=0.9) == []
    tight = np.stack([np.cos(np.radians([0, 5, 9])), np.sin(np.radians([0, 5, 9]))], axis=1).astype(np.float32)
    assert near_clusters(tight, near=0.9) == [[0, 1, 2]]


def test_compress_never_folds_two_values_of_one_setting_into_one_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """Near duplicates stating different values are an update intake missed (or rows of one table), not one
    fact: merged, one memory would state both as current. Those that only add a fact to another still merge."""
    from mem.stages import supersede

    pool = "The kestrel-big runner pool for the heavy CI jobs on the self-hosted Hetzner machines is {} machines."
    texts = [pool.format(20), pool.format(16), pool.format(20) + " Checked today.", pool.format(20) + " Per the wiki."]
    with monkeypatch.context() as missed:  # as if intake had read no update among them
        missed.setattr(supersede, "check", lambda ctx, rowid, memory, found=None, **kw: [])
        added = run_mem("add", "--keep-near", "-", "--now", T0, input=jsonl(*({"text": t, "created_at": T0} for t in texts)))
    assert [r["status"] for r in added.records] == ["added"] * 4 and not any("supersedes" in r for r in added.records)
    merges = [r for r in consolidate("--phase", "compress") if r.get("action") == "merge"]
    assert len(merges) == 1 and len(merges[0]["derived_from"]) == 3
    merged = run_mem("get", merges[0]["id"]).records[0]["text"]
    assert "20 machines" in merged and "16" not in merged
    live = [m["text"] for m in run_mem("list", "--json", "--limit", "50").records if m["status"] == "active"]
    assert sorted(live) == sorted([merged, pool.format(16)])


@pytest.mark.parametrize("row", ["In staging ", "On weekends "])  # another environment; another case
def test_compress_never_folds_two_rows_of_one_table_into_one_memory(row: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from mem.stages import supersede

    job = "the nightly backup job writes compressed snapshots of the orders database to the backup bucket at 02:00{}."
    texts = [row + job.format(""), job.format("").capitalize(), job.format(" daily").capitalize(),
             job.format(" every day").capitalize()]
    with monkeypatch.context() as missed:  # as if intake had read no update among them
        missed.setattr(supersede, "check", lambda ctx, rowid, memory, found=None, **kw: [])
        added = run_mem("add", "--keep-near", "-", "--now", T0, input=jsonl(*({"text": t, "created_at": T0} for t in texts)))
    assert [r["status"] for r in added.records] == ["added"] * 4
    merges = [r for r in consolidate("--phase", "compress") if r.get("action") == "merge"]
    assert len(merges) == 1 and len(merges[0]["derived_from"]) == 3
    assert row.strip().lower() not in run_mem("get", merges[0]["id"]).records[0]["text"].lower()
    live = [m["text"] for m in run_mem("list", "--json", "--limit", "50").records if m["status"] == "active"]
    assert texts[0] in live
