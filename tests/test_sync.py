"""``mem sync OTHER``: a SQLite file syncing with another store, which is a SQLite file or a
PostgreSQL database (``backend``): new memories both ways, idempotent reruns, edits on one side,
conflicting edits on both, a correction arriving through sync, an interrupted sync resumed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_backends import cli


@pytest.fixture
def pair(backend: str, tmp_path: Path) -> tuple[str, str]:
    """(a SQLite file, the other store: ``backend``'s SQLite file or PostgreSQL database)."""
    here = str(tmp_path / "laptop.db")
    other = backend if backend.startswith("postgresql") else str(tmp_path / "team.db")
    return here, other


def add(db: str, text: str) -> str:
    out = cli("add", text, "--db", db)
    assert out.code == 0, out
    return out.records[0]["id"]


def texts(db: str) -> dict[str, str]:
    out = cli("list", "--json", "--db", db, "--scope", "*", "--status", "all", "--limit", "1000")
    assert out.code == 0, out
    return {r["id"]: r["text"] for r in out.records}


def sync(here: str, other: str) -> dict:
    out = cli("sync", other, "--db", here)
    assert out.code == 0, out
    return out.records[0]


def test_new_memories_cross_both_ways_and_a_rerun_changes_nothing(pair: tuple[str, str]) -> None:
    here, other = pair
    mine = [add(here, f"Laptop note {i}: the worker pool uses {i + 2} threads") for i in range(3)]
    theirs = [add(other, f"Team note {i}: the staging cluster has {i + 5} nodes") for i in range(2)]
    first = sync(here, other)
    assert first["pulled"]["added"] == 2 and first["pushed"]["added"] == 3
    assert texts(here) == texts(other) and set(texts(here)) == set(mine + theirs)
    again = sync(here, other)
    assert again["pulled"]["added"] == again["pushed"]["added"] == 0
    assert again["pulled"]["updated"] == again["pushed"]["updated"] == 0
    assert texts(here) == texts(other)
    hits = cli("search", "staging cluster nodes", "--json", "--db", here, "--scope", "*").records
    assert hits and hits[0]["id"] in theirs  # synced memories are indexed (FTS and vectors) here


def test_an_edit_on_one_side_travels(pair: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    here, other = pair
    memory = add(here, "The release train leaves every Tuesday")
    sync(here, other)
    monkeypatch.setenv("MEM_NOW", "2030-01-01T00:00:00Z")
    assert cli("update", memory, "--text", "The release train leaves every Thursday", "--db", other).code == 0
    result = sync(here, other)
    assert result["pulled"]["updated"] == 1 and result["pulled"]["conflicts"] == 0
    assert texts(here)[memory] == "The release train leaves every Thursday"
    hits = cli("search", "release train Thursday", "--json", "--db", here, "--scope", "*").records
    assert hits[0]["id"] == memory
    assert cli("verify", "--db", here, "--scope", "*").code == 0


def test_conflicting_edits_keep_the_newer_and_verify_reports_the_other(pair: tuple[str, str],
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    here, other = pair
    memory = add(here, "The on-call rotation changes every Monday")
    sync(here, other)
    monkeypatch.setenv("MEM_NOW", "2030-01-01T00:00:00Z")
    assert cli("update", memory, "--text", "The on-call rotation changes every Sunday", "--db", here).code == 0
    monkeypatch.setenv("MEM_NOW", "2030-01-02T00:00:00Z")
    assert cli("update", memory, "--text", "The on-call rotation changes every Wednesday", "--db", other).code == 0
    result = sync(here, other)
    assert result["pulled"]["conflicts"] == 1
    assert texts(here)[memory] == texts(other)[memory] == "The on-call rotation changes every Wednesday"
    for db in (here, other):
        verify = cli("verify", "--db", db, "--scope", "*")
        assert verify.code == 7, verify
        conflicts = [r for r in verify.records if r.get("finding") == "sync_conflict"]
        assert [c["id"] for c in conflicts] == [memory]
        assert conflicts[0]["other_text"] == "The on-call rotation changes every Sunday"
    # Settling it here (a new edit) closes the conflict here; the next sync carries the edit over.
    monkeypatch.setenv("MEM_NOW", "2030-01-03T00:00:00Z")
    assert cli("update", memory, "--text", "The on-call rotation changes every Friday", "--db", here).code == 0
    sync(here, other)
    assert texts(other)[memory] == "The on-call rotation changes every Friday"
    assert not [r for r in cli("verify", "--db", here, "--scope", "*").records if r.get("finding") == "sync_conflict"]


def test_a_correction_arriving_through_sync_supersedes_what_it_corrects(pair: tuple[str, str]) -> None:
    here, other = pair
    old = add(here, "The billing service owner is Alice")
    sync(here, other)
    new = cli("add", "Actually the billing service owner is Bob now", "--db", other).records[0]
    assert new.get("supersedes") == [old]
    sync(here, other)
    stored = cli("get", old, "--json", "--db", here).records[0]
    assert stored["superseded_by"] == new["id"]
    hits = [h["text"] for h in cli("search", "billing service owner", "--json", "--db", here, "--scope", "*").records]
    assert hits[0] == "Actually the billing service owner is Bob now" and "The billing service owner is Alice" not in hits


def test_a_supersession_travels_with_its_reason(pair: tuple[str, str]) -> None:
    here, other = pair
    old, new = add(here, "Design reviews happen on Tuesdays"), add(here, "Lunch talks are on Fridays")
    sync(here, other)
    assert cli("graph", "link", new, old, "-t", "supersedes", "--db", other).code == 0
    assert sync(here, other)["pulled"]["updated"] >= 1
    explained = cli("get", "--explain", old, "--json", "--db", here).records[0]["explain"]["superseded"]
    assert explained["by"] == new and explained["reason"] == "linked by hand"


def test_an_interrupted_sync_resumes_without_duplicates(pair: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    from mem.stages import sync as stage

    here, other = pair
    ids = [add(here, f"Runbook step {i}: restart the {name} service" ) for i, name in
           enumerate(["api", "worker", "scheduler", "cache", "gateway", "search", "mailer"])]
    monkeypatch.setattr(stage, "BATCH", 2)
    real_apply, calls = stage._apply, {"n": 0}

    def dies_on_the_third_batch(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt  # the process killed mid-sync
        return real_apply(*args, **kwargs)

    monkeypatch.setattr(stage, "_apply", dies_on_the_third_batch)
    out = cli("sync", other, "--db", here)
    assert out.code == 130
    partial = texts(other)
    assert 0 < len(partial) < len(ids)
    monkeypatch.setattr(stage, "_apply", real_apply)
    sync(here, other)
    assert set(texts(other)) == set(ids)
    export = [json.loads(line) for line in cli("export", "--db", other, "--scope", "*").stdout.splitlines()]
    assert sorted(r["id"] for r in export) == sorted(ids)  # each exactly once
    assert sync(here, other)["pushed"]["added"] == 0


def test_removed_links_and_scope_moves_travel_both_ways(pair: tuple[str, str]) -> None:
    here, other = pair

    def edges(db: str, memory: str) -> set[tuple[str, str]]:
        out = cli("graph", "neighbors", memory, "--json", "--db", db)
        assert out.code == 0, out
        return {(r["id"], r["via"]["type"]) for r in out.records if r["via"]["type"] in ("caused", "related")}

    def scope_of(db: str, memory: str) -> str:
        return cli("get", memory, "--json", "--db", db).records[0]["scope"]

    a = add(here, "The nightly export job writes to the reports bucket")
    b = add(here, "The reports bucket is lifecycle-managed after 30 days")
    c = add(here, "The export job was moved to the batch cluster")
    for x, y, kind in ((a, b, "related"), (a, c, "caused")):
        assert cli("graph", "link", x, y, "--type", kind, "--db", here).code == 0
    sync(here, other)
    assert edges(other, a) == {(b, "related"), (c, "caused")}
    # On the team side: one link removed, one memory moved to another scope.
    assert cli("graph", "unlink", a, b, "--db", other).code == 0
    assert cli("scope", "move", "reports", c, "--db", other).code == 0
    first = sync(here, other)
    assert first["pulled"]["unlinked"] == 1 and first["pulled"]["updated"] == 1
    assert edges(here, a) == {(c, "caused")} and scope_of(here, c) == "reports"
    hits = cli("search", "export job batch cluster", "--json", "--db", here, "--scope", "reports").records
    assert [h["id"] for h in hits] == [c]  # found in its new scope (vector and full-text alike)
    again = sync(here, other)  # nothing echoes back, nothing is done twice
    assert again["pulled"]["unlinked"] == again["pushed"]["unlinked"] == 0
    assert again["pulled"]["updated"] == again["pushed"]["updated"] == 0
    assert edges(other, a) == {(c, "caused")} and scope_of(other, c) == "reports"
    # And the other way: removed and moved on the laptop, carried to the team store.
    assert cli("graph", "unlink", a, c, "--db", here).code == 0
    assert cli("scope", "move", "archive", b, "--db", here).code == 0
    back = sync(here, other)
    assert back["pushed"]["unlinked"] == 1 and back["pushed"]["updated"] == 1
    assert edges(other, a) == set() and scope_of(other, b) == "archive"
    # A link removed, then made again at the source, stays.
    assert cli("graph", "link", a, b, "--type", "related", "--db", other).code == 0
    assert cli("graph", "unlink", a, b, "--db", other).code == 0
    assert cli("graph", "link", a, b, "--type", "related", "--db", other).code == 0
    sync(here, other)
    assert edges(here, a) == {(b, "related")}
