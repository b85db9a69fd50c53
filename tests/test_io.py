"""Export/import round trips, idempotent import, atomic export, reindex."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.conftest import jsonl, run_mem


def test_export_import_round_trip_is_exact_and_idempotent(tmp_path: Path):
    lines = jsonl(
        {"text": "Alice owns the billing service", "tags": ["team"], "source": "OWNERS.md", "source_line": 4,
         "author": "bob", "created_at": "2024-03-01T09:00:00Z", "meta": {"session": "s1", "n": [1, {"x": None}]}},
        {"text": "We decided to ship on Fridays no more", "kind": "decision", "pinned": True},
        {"text": "Deploy with make deploy ENV=prod", "kind": "procedure", "event_at": "2024-04-01T00:00:00Z"},
    )
    assert run_mem("add", "-", input=lines).code == 0
    archived = run_mem("list").records[-1]["id"]
    assert run_mem("forget", archived).code == 0
    exported = run_mem("export")
    assert exported.code == 0
    original = sorted(exported.records, key=lambda r: r["id"])
    assert len(original) == 3 and any(r["status"] == "archived" for r in original)

    other = {"MEM_DB": str(tmp_path / "other.db")}
    first = run_mem("import", "-", input=exported.stdout, env=other)
    assert first.code == 0 and [r["status"] for r in first.records] == ["added"] * 3
    again = run_mem("import", "-", input=exported.stdout, env=other)
    assert [r["status"] for r in again.records] == ["duplicate"] * 3
    copy = sorted(run_mem("export", env=other).records, key=lambda r: r["id"])
    assert copy == original


def test_export_to_file_is_atomic(tmp_path: Path):
    run_mem("add", "something to export")
    target = tmp_path / "out.jsonl"
    assert run_mem("export", "-o", str(target)).code == 0
    assert json.loads(target.read_text().splitlines()[0])["text"] == "something to export"
    locked = tmp_path / "locked"
    locked.mkdir()
    os.chmod(locked, 0o500)
    try:
        result = run_mem("export", "-o", str(locked / "out.jsonl"))
        if os.geteuid() != 0:  # root may write anywhere
            assert result.code == 4 and list(locked.iterdir()) == []
    finally:
        os.chmod(locked, 0o700)


def test_import_bad_line_changes_nothing(tmp_path: Path):
    bad = jsonl({"id": "01a22da0-9032-70e7-b0b8-38726bf1bed0", "text": "good record"}) + "not json\n"
    result = run_mem("import", "-", input=bad)
    assert result.code == 4 and result.error["line"] == 2
    assert run_mem("list").records == []


def test_reindex_switches_embedder():
    run_mem("add", "We chose Redis for the cache layer")
    assert run_mem("search", "cache", "--embedder", "ollama:x").code == 5
    result = run_mem("reindex", "--embedder", "hash")
    assert result.code == 0 and result.records[0]["memories"] == 1
    stats = run_mem("stats").records[0]
    assert stats["vectors"] == stats["vec_index"] == 1


def test_export_carries_links_and_import_restores_the_graph(tmp_path: Path):
    first = run_mem("add", "We chose Postgres for the billing database").records[0]["id"]
    second = run_mem("add", "Postgres replaced MySQL because MySQL lacked JSON support").records[0]["id"]
    assert run_mem("graph", "link", second, first, "--type", "related").code == 0
    exported = run_mem("export")
    links = {r["id"]: r.get("links", []) for r in exported.records}
    assert any(link["to"] == first and link["type"] == "related" and link["origin"] == "manual"
               for link in links[second])

    other = {"MEM_DB": str(tmp_path / "other.db")}
    assert run_mem("import", "-", input=exported.stdout, env=other).code == 0
    restored = run_mem("graph", "neighbors", second, env=other).records
    assert any(n["id"] == first and n["via"]["type"] == "related" and n["via"]["origin"] == "manual" for n in restored)
    assert sorted(run_mem("export", env=other).records, key=lambda r: r["id"]) == \
        sorted(exported.records, key=lambda r: r["id"])


def test_import_rejects_malformed_links_naming_the_line(tmp_path: Path):
    good = {"id": "01900000-0000-7000-8000-000000000001", "text": "Alice owns billing", "created_at": "2024-01-01T00:00:00Z"}
    bad = {"id": "01900000-0000-7000-8000-000000000002", "text": "Bob owns search", "links": [{"type": "x"}]}
    result = run_mem("import", "-", input=jsonl(good, bad))
    assert result.code == 4 and "line 2" in result.error["message"] and "'to'" in result.error["message"]
    assert run_mem("list").records == []


def test_a_supersession_keeps_its_reason_through_export_and_import(tmp_path: Path):
    older = run_mem("add", "Uploads are kept for 30 days before the sweeper deletes them.",
                    "--now", "2026-05-01T09:00:00Z").records[0]["id"]
    newer = run_mem("add", "Correction: the upload sweeper keeps files 14 days, not 30.",
                    "--now", "2026-05-02T09:00:00Z").records[0]
    assert newer.get("supersedes") == [older]
    exported = run_mem("export")
    told = next(r for r in exported.records if r["id"] == older)["supersession"]
    assert told["at"].startswith("2026-05-02T09:00") and "a correction" in told["reason"]

    other = {"MEM_DB": str(tmp_path / "other.db")}
    for _ in range(2):  # importing twice records the reason once
        assert run_mem("import", "-", input=exported.stdout, env=other).code == 0
    explained = run_mem("get", "--explain", older, "--json", env=other).records[0]["explain"]["superseded"]
    assert explained == {"by": newer["id"], **told}
    assert sorted(run_mem("export", env=other).records, key=lambda r: r["id"]) == \
        sorted(exported.records, key=lambda r: r["id"])
    assert "supersession" not in run_mem("get", older, "--json", env=other).records[0]["meta"]

    # a record written by hand: its time is read as any other and stored normalized
    third = {"MEM_DB": str(tmp_path / "third.db")}
    by_hand = [{**r, "supersession": {"at": "2026-05-02", "reason": "merged by the team"}} if r["id"] == older else r
               for r in exported.records]
    assert run_mem("import", "-", input=jsonl(*by_hand), env=third).code == 0
    assert run_mem("get", "--explain", older, "--json", env=third).records[0]["explain"]["superseded"] == {
        "by": newer["id"], "at": "2026-05-02T00:00:00.000Z", "reason": "merged by the team"}


def test_import_rejects_a_malformed_supersession_naming_the_line(tmp_path: Path):
    good = {"id": "01900000-0000-7000-8000-000000000001", "text": "Alice owns billing", "created_at": "2024-01-01T00:00:00Z"}
    for supersession in ({"reason": 3}, {"at": "last Tuesday", "reason": "a correction"}, "a correction"):
        bad = {"id": "01900000-0000-7000-8000-000000000002", "text": "Bob owns search", "supersession": supersession}
        result = run_mem("import", "-", input=jsonl(good, bad))
        assert result.code == 4 and "line 2" in result.error["message"] and "supersession" in result.error["message"]
        assert run_mem("list").records == []
