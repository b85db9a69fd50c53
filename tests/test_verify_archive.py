"""`mem verify` and `mem archive` end to end."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import jsonl, run_mem

T0 = "2026-01-01T00:00:00Z"


def add(text: str, *args: str, now: str = T0) -> str:
    result = run_mem("add", "--keep-near", "--now", now, *args, "--", text)
    assert result.code == 0, result.stderr
    return result.records[0]["id"]


def project(folder: Path, scope: str, *tracked: str) -> Path:
    """A git working tree whose scope is ``scope``, with ``tracked`` files (written empty if new) in its index."""
    import subprocess

    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    subprocess.run(["git", "-C", str(folder), "config", "mem.scope", scope], check=True)
    for name in tracked:
        (folder / name).touch()
        subprocess.run(["git", "-C", str(folder), "add", name], check=True)
    return folder


def test_verify_sources_verified_stale_missing(tmp_path: Path) -> None:
    repo = project(tmp_path / "proj", "test", "changed.py")  # the memories' scope (MEM_SCOPE=test)
    same = tmp_path / "same.md"
    same.write_text("one\ntwo\n")
    changed = repo / "changed.py"
    changed.write_text("TIMEOUT = 30\nRETRIES = 3\n")
    gone = tmp_path / "gone.txt"
    gone.write_text("x\n")
    a = add("The notes file lists two items", "--source", str(same))
    b = add("RETRIES is set to 3 in the settings module", "--source", str(changed), "--source-line", "2")
    c = add("The scratch file holds one line", "--source", str(gone))
    changed.write_text("TIMEOUT = 30\nRETRIES = 5\n")
    gone.unlink()
    result = run_mem("verify", "--now", "2026-01-02T00:00:00Z")
    assert result.code == 7
    assert result.error["code"] == "check_failed"
    findings = {r["id"]: r for r in result.records if r["record"] == "finding"}
    assert set(findings) == {b, c}
    assert findings[b]["finding"] == "stale" and findings[b]["source_line"] == 2
    assert findings[b]["line_text"] == "RETRIES = 5"
    assert findings[c]["finding"] == "missing"
    summary = result.records[-1]
    assert summary["record"] == "summary" and summary["verified"] == 1 and summary["problems"] == 2
    assert run_mem("get", a).records[0]["verification"] == "verified"
    assert run_mem("get", b).records[0]["verification"] == "stale"
    # only the ids piped in
    piped = run_mem("verify", "-", "--now", "2026-01-02T00:00:00Z", input=jsonl({"id": a}))
    assert piped.code == 0, piped.stderr
    assert piped.records == [{**piped.records[-1], "record": "summary", "checked": 1, "verified": 1, "problems": 0}]


def test_verify_decays_confidence_of_old_unverified_memories_only() -> None:
    factual = add("The reporting job exports CSV files to the shared drive")
    identity = add("I am the maintainer of the reporting service", "--layer", "1")
    pinned = add("The shared drive is mounted at /mnt/share", "--pin")
    young = add("Reports are emailed on Mondays", now="2026-03-20T00:00:00Z")
    when = "2026-04-01T00:00:00Z"  # 90 days after T0
    first = run_mem("verify", "--older-than", "30", "--now", when, "--scope", "*")
    assert first.code == 0, first.stderr
    assert first.records[-1]["decayed"] == 1
    confidence = {i: run_mem("get", i).records[0]["confidence"] for i in (factual, identity, pinned, young)}
    assert 0.3 < confidence[factual] < 0.4  # exp(-60/60)
    assert confidence[identity] == confidence[pinned] == confidence[young] == 1.0
    again = run_mem("verify", "--older-than", "30", "--now", when, "--scope", "*")
    assert again.records[-1]["decayed"] == 0
    assert run_mem("get", factual).records[0]["confidence"] == confidence[factual]


def test_archive_by_id_pipe_restore_and_list() -> None:
    keep = add("Grafana dashboards live in the observability folder")
    old = add("The legacy cron host is called tortoise-7")
    other = add("The legacy queue host is called hare-3")
    vector_before = sqlite3.connect(os.environ["MEM_DB"]).execute(
        "SELECT v.f32 FROM vectors v JOIN memories m ON m.rowid = v.rowid WHERE m.id = ?", (old,)).fetchone()[0]
    edges_before = sqlite3.connect(os.environ["MEM_DB"]).execute(
        "SELECT COUNT(*) FROM edges WHERE src = ? OR dst = ?", (old, old)).fetchone()[0]
    result = run_mem("archive", old)
    assert result.records == [{"record": "outcome", "id": old, "status": "archived"}]
    assert old not in [h["id"] for h in run_mem("search", "tortoise-7 cron host").records]
    assert old in [h["id"] for h in run_mem("search", "tortoise-7 cron host", "--include-archived").records]
    # a pipe: search -> archive -
    hits = run_mem("search", "hare-3 legacy queue host", "-k", "1")
    assert hits.records[0]["id"] == other
    piped = run_mem("archive", "-", input=hits.stdout)
    assert piped.records == [{"record": "outcome", "id": other, "status": "archived"}]
    listed = run_mem("archive", "--list")
    assert {r["id"] for r in listed.records} == {old, other}
    assert run_mem("archive", old).records[0]["status"] == "unchanged"
    restored = run_mem("archive", "--restore", old, other)
    assert [r["status"] for r in restored.records] == ["restored", "restored"]
    assert old in [h["id"] for h in run_mem("search", "tortoise-7 cron host").records]
    conn = sqlite3.connect(os.environ["MEM_DB"])
    assert conn.execute("SELECT v.f32 FROM vectors v JOIN memories m ON m.rowid = v.rowid WHERE m.id = ?",
                        (old,)).fetchone()[0] == vector_before
    assert conn.execute("SELECT COUNT(*) FROM edges WHERE src = ? OR dst = ?", (old, old)).fetchone()[0] == edges_before
    ops = [r[0] for r in conn.execute("SELECT op FROM changelog WHERE memory_id = ? ORDER BY seq", (old,))]
    assert ops == ["add", "archive", "restore"]
    assert run_mem("get", keep).records[0]["status"] == "active"


def test_archive_refuses_pinned_and_needs_ids_to_restore() -> None:
    pinned = add("The production database is never dropped", "--pin")
    assert run_mem("archive", pinned).records[0]["status"] == "skipped"
    bad = run_mem("archive", "--restore")
    assert bad.code == 4


def test_archive_by_policy_applies_the_rules_now() -> None:
    factual = add("The billing service retries failed webhooks five times")
    decision = add("We decided to keep all timestamps in UTC", "--layer", "2")
    result = run_mem("archive", "--now", "2026-04-01T00:00:00Z")
    assert result.code == 0, result.stderr
    actions = {r["id"]: r["action"] for r in result.records}
    assert actions.get(factual) == "archived"
    assert actions.get(decision) != "archived"
    assert run_mem("get", factual).records[0]["status"] == "archived"
    assert "archived" in result.stderr
    dry = run_mem("archive", "--now", "2026-04-01T00:00:00Z")
    assert [r for r in dry.records if r["id"] == factual] == []


def _contradicted_pair() -> tuple[str, str]:
    """A pinned fact and a correction of it: intake cannot supersede the pinned one, so the correction is
    marked contradicted (an open conflict)."""
    old = add("The audit log holds 90 days of events.", "--pin")
    new = run_mem("add", "--now", "2026-01-02T00:00:00Z", "Correction: the audit log holds 180 days of events, not 90.")
    assert new.code == 0 and "supersedes" not in new.records[0]
    new_id = new.records[0]["id"]
    assert run_mem("get", new_id).records[0]["verification"] == "contradicted"
    return old, new_id


def _closed_by(how: str, old: str, new: str) -> None:
    if how == "unlink":
        assert run_mem("graph", "unlink", new, old, "--type", "contradicts").code == 0
    elif how == "forget":
        assert run_mem("update", old, "--unpin").code == 0 and run_mem("forget", old).code == 0
    else:
        assert run_mem("forget", "--purge", old).code == 0


@pytest.mark.parametrize("how", ["unlink", "forget", "purge"])
def test_a_correction_is_not_held_down_once_its_contradiction_closes(how: str) -> None:
    old, new = _contradicted_pair()
    first = run_mem("verify", "--now", "2026-01-03T00:00:00Z", "--scope", "*")
    assert first.code == 7 and [r["id"] for r in first.records if r.get("finding") == "contradiction"] == [new]
    assert run_mem("get", new).records[0]["confidence"] == pytest.approx(0.3)  # HaluMem's factor for a conflict

    _closed_by(how, old, new)
    closed = run_mem("verify", "--now", "2026-01-04T00:00:00Z", "--scope", "*")
    assert closed.code == 0 and closed.records[-1]["resolved"] == 1 and closed.records[-1]["contradictions"] == 0
    memory = run_mem("get", new).records[0]
    assert memory["verification"] == "unverified" and memory["confidence"] == 1.0
    assert run_mem("verify", "--now", "2026-01-04T00:00:00Z", "--scope", "*").records[-1]["resolved"] == 0
