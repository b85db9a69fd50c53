"""The same CLI behaviour on SQLite and PostgreSQL: each test takes ``backend`` and runs on both.

The commands run in process (Typer's runner) against a real SQLite file and a real PostgreSQL
server (tests/pg_server.py); only what needs a process (the exit codes of a failed connection)
spawns one.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.conftest import jsonl


class Result:
    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.code, self.stdout, self.stderr = code, stdout, stderr

    def __repr__(self) -> str:
        return f"<exit {self.code}: {self.stderr.strip()[-400:]}>"

    @property
    def records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]


def cli(*args: str, input: str | None = None) -> Result:
    from mem.cli import app

    result = CliRunner().invoke(app, list(args), input=input)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Result(result.exit_code, result.stdout, result.stderr)


def add(text: str, *extra: str) -> dict[str, Any]:
    out = cli("add", text, *extra)
    assert out.code == 0, out.stderr
    return out.records[0]


def hit_texts(query: str, *extra: str) -> list[str]:
    out = cli("search", query, "--json", *extra)
    assert out.code == 0, out.stderr
    return [r["text"] for r in out.records]


def test_add_search_get_update_forget_restore(backend: str) -> None:
    redis = add("We chose Redis for the session cache because of its TTL support")
    add("The billing service owner is Alice, ask her about invoices", "--tag", "billing")
    add("Deploys run every Friday from the release branch")
    assert hit_texts("which cache did we choose for sessions")[0].startswith("We chose Redis")
    assert hit_texts("invoices owner")[0].startswith("The billing service owner")
    got = cli("get", redis["id"], "--json").records
    assert [r["id"] for r in got] == [redis["id"]]

    assert cli("update", redis["id"], "--text", "We chose Memcached for the session cache").code == 0
    assert hit_texts("session cache")[0] == "We chose Memcached for the session cache"
    assert cli("forget", redis["id"]).code == 0
    assert "We chose Memcached for the session cache" not in hit_texts("session cache")
    assert cli("archive", "--restore", redis["id"]).code == 0
    assert hit_texts("session cache")[0] == "We chose Memcached for the session cache"


def test_tags_kinds_scopes_filter_alike(backend: str) -> None:
    add("Use ruff for linting in every repository", "--tag", "tooling", "--scope", "alpha")
    add("Use black for formatting in the legacy repository", "--tag", "legacy", "--scope", "beta")
    assert hit_texts("repository", "--scope", "alpha") == ["Use ruff for linting in every repository"]
    assert hit_texts("repository", "--scope", "*", "--tag", "legacy") == ["Use black for formatting in the legacy repository"]
    listed = cli("list", "--json", "--scope", "*").records
    assert {r["scope"] for r in listed} == {"alpha", "beta"}


def test_correction_supersedes_and_search_hides_the_old_one(backend: str) -> None:
    old = add("The billing service owner is Alice")
    new = add("Actually the billing service owner is Bob now")
    assert new.get("supersedes") == [old["id"]]
    assert hit_texts("billing service owner")[0] == "Actually the billing service owner is Bob now"
    assert "The billing service owner is Alice" not in hit_texts("billing service owner")
    stored = cli("get", old["id"], "--json").records[0]
    assert stored["superseded_by"] == new["id"]


def test_an_older_fact_imported_after_its_correction_ends_superseded(backend: str) -> None:
    # no neighbour (cosine .28) and no shared entity: found by the older fact's own words
    newer = {"text": "Release notes moved from the wiki to changelogs generated on tag.",
             "created_at": "2026-05-02T09:00:00Z"}
    older = {"text": "Every sprint somebody writes the release notes by hand in the team wiki, copying merged PR titles "
                     "one at a time.", "created_at": "2026-05-01T09:00:00Z"}
    first = cli("import", "-", "--now", "2026-05-03T00:00:00Z", input=jsonl(newer))
    second = cli("import", "-", "--now", "2026-05-03T00:00:00Z", input=jsonl(older))
    assert first.code == 0 and second.code == 0, (first, second)
    outcome = second.records[0]
    assert outcome["status"] == "superseded" and outcome["superseded_by"] == first.records[0]["id"], outcome


def test_a_named_window_holds_what_happened_or_was_said_in_it(backend: str) -> None:
    told = cli("add", "-", input=jsonl(
        {"text": "Last week we migrated the billing worker to the new queue", "created_at": "2023-06-02T10:00:00Z"},
        {"text": "Which worker did we migrate to the new queue? The search worker", "created_at": "2023-08-04T10:00:00Z"},
        {"text": "We migrated the mail worker to the new queue on June 20", "created_at": "2023-07-01T10:00:00Z"}))
    assert told.code == 0, told.stderr
    hits = cli("search", "which worker did we migrate in June 2023?", "--now", "2024-01-10T00:00:00Z", "--json").records
    inside = {h["text"] for h in hits if "temporal" in h["why"]}  # said in June (event in May), happened in June
    assert inside == {"Last week we migrated the billing worker to the new queue",
                      "We migrated the mail worker to the new queue on June 20"}
    assert {h["text"] for h in hits[:2]} == inside


def test_graph_links_entities_and_neighbours(backend: str) -> None:
    a = add("Alice moved the payments service to Kubernetes in March")
    b = add("Alice said the payments service needs a new database")
    assert cli("graph", "link", a["id"], b["id"]).code == 0
    neighbours = cli("graph", "neighbors", a["id"], "--json").records
    assert b["id"] in {r.get("id") for r in neighbours}
    entities = cli("graph", "entities", "--json").records
    assert any("alice" in str(r.get("key", "")).lower() for r in entities)
    assert cli("graph", "stats", "--json").records[0]["edges"] >= 1


def test_export_import_round_trip_and_changelog_since(backend: str, tmp_path) -> None:
    first = add("The API gateway times out after 30 seconds")
    add("Staging uses a copy of last week's production data", "--tag", "staging")
    exported = cli("export").stdout
    records = [json.loads(line) for line in exported.splitlines()]
    assert {r["id"] for r in records if r.get("text")} >= {first["id"]}

    other = tmp_path / "other.db"
    imported = cli("import", "-", "--db", str(other), input=exported)
    assert imported.code == 0, imported.stderr
    again = cli("export", "--db", str(other)).stdout
    texts = lambda dump: sorted(json.loads(l)["text"] for l in dump.splitlines() if json.loads(l).get("text"))  # noqa: E731
    assert texts(again) == texts(exported)
    # Importing the same file twice adds nothing (ids are kept).
    cli("import", "-", "--db", str(other), input=exported)
    assert cli("stats", "--db", str(other), "--json").records[0]["memories"] == 2

    stats = cli("stats", "--json").records[0]
    assert stats["changelog"] >= 2 and stats["memories"] == 2 and stats["fts"] == 2


def test_jsonl_batch_and_duplicates(backend: str) -> None:
    batch = jsonl(*({"text": f"Service number {i} listens on port {8000 + i}"} for i in range(20)),
                  {"text": "Service number 3 listens on port 8003"})
    out = cli("add", "-", input=batch)
    assert out.code == 0, out.stderr
    statuses = [r["status"] for r in out.records]
    assert statuses.count("added") == 20 and statuses[-1] == "duplicate"
    assert hit_texts("port 8017")[0] == "Service number 17 listens on port 8017"


def test_forget_purge_deletes_for_good(backend: str) -> None:
    kept = add("The staging database password rotates every month")
    gone = add("The old office wifi was called harbour-guest")
    assert cli("forget", "--purge", gone["id"]).code == 0
    assert cli("get", gone["id"], "--json").code == 3
    assert "harbour" not in cli("export").stdout
    assert cli("get", kept["id"], "--json").records[0]["id"] == kept["id"]


def test_purging_a_correction_frees_what_it_replaced(backend: str) -> None:
    old = add("The audit log holds 90 days of events.")
    fix = add("Correction: the audit log holds 187 days of events, not 90.")
    assert fix.get("supersedes") == [old["id"]]
    assert cli("forget", "--purge", fix["id"]).records[0]["restored"] == [old["id"]]
    assert cli("get", old["id"], "--json").records[0]["superseded_by"] is None
    assert "187" not in cli("export").stdout


def test_verify_gives_a_correction_back_its_confidence_once_its_contradiction_closes(backend: str) -> None:
    old = add("The audit log holds 90 days of events.", "--pin", "--now", "2026-01-01T00:00:00Z")
    new = add("Correction: the audit log holds 180 days of events, not 90.", "--now", "2026-01-02T00:00:00Z")
    assert cli("verify", "--now", "2026-01-03T00:00:00Z").code == 7
    assert cli("get", new["id"], "--json").records[0]["confidence"] == pytest.approx(0.3)
    assert cli("forget", "--purge", old["id"]).code == 0
    assert cli("verify", "--now", "2026-01-04T00:00:00Z").records[-1]["resolved"] == 1
    assert cli("get", new["id"], "--json").records[0]["confidence"] == 1.0


def test_mcp_tools_add_search_update_stats(backend: str) -> None:
    """The MCP server (built as serve-mcp builds it, connected in memory) on each backend."""
    import anyio

    from tests.test_mcp import mcp_client

    async def main() -> None:
        async with mcp_client() as client:
            added = await client.call_tool("add", {"text": "We chose Redis for the cache layer", "tags": ["infra"]})
            memory_id = added.structured_content["outcomes"][0]["id"]
            await client.call_tool("add", {"memories": ["The API gateway runs on port 8443"]})
            found = await client.call_tool("search", {"query": "which cache did we choose"})
            assert found.structured_content["hits"][0]["id"] == memory_id
            updated = await client.call_tool("update", {"id": memory_id, "text": "We chose Valkey for the cache layer"})
            assert updated.structured_content["memories"][0]["text"].startswith("We chose Valkey")
            again = await client.call_tool("search", {"query": "Valkey"})
            assert again.structured_content["hits"][0]["id"] == memory_id
            stats = await client.call_tool("stats", {})
            assert stats.structured_content["memories"] == 2

    anyio.run(main)


def test_consolidate_verify_and_scopes_run_alike(backend: str) -> None:
    batch = jsonl(*({"text": f"Team retro {i}: we agreed the deploy checklist needs step {i % 3}", "tags": ["retro"]}
                    for i in range(12)),
                  {"text": "Use the staging VPN profile for database access", "tags": ["decision"]})
    assert cli("add", "-", input=batch).code == 0
    consolidated = cli("consolidate", "--json")
    assert consolidated.code == 0, consolidated
    assert cli("verify", "--json").code in (0, 7)
    scopes = cli("scope", "list", "--json")
    assert scopes.code == 0, scopes
    assert any(r.get("scope") == "test" for r in scopes.records)


def test_handles_resolve_alike(backend: str) -> None:
    """Short handles (prefixes of the id's random tail) and whole-id prefixes, ambiguity included:
    PostgreSQL orders ids bytewise (COLLATE "C") as SQLite does."""
    from mem.store import Store

    ids = ["01a20000-0000-7000-8000-abcd00000001", "01a20000-0000-7000-8000-abcd10000002",
           "01a20000-0000-7000-8000-ffff00000003"]
    records = "".join(json.dumps({"id": i, "text": f"crafted memory {n} about deploys on fridays", "scope": "test"})
                      + "\n" for n, i in enumerate(ids))
    assert cli("import", "-", input=records).code == 0
    with Store.open(backend) as store:
        assert store.handles(ids) == {ids[0]: "abcd0", ids[1]: "abcd1", ids[2]: "ffff"}
    ambiguous = cli("get", "abcd")
    assert ambiguous.code == 3 and "abcd0" in ambiguous.stderr and "abcd1" in ambiguous.stderr
    assert cli("get", "abcd1", "--json").records[0]["id"] == ids[1]
    assert cli("get", "FFFF", "--json").records[0]["id"] == ids[2]
    assert cli("get", ids[2][:30], "--json").records[0]["id"] == ids[2]  # a whole-id prefix, like git's
    assert cli("update", "ffff", "--tag", "handled", "--json").records[0]["tags"] == ["handled"]
    assert cli("forget", "abcd0", "--json").records[0]["status"] == "archived"
    assert cli("get", "abc").code == 4


def test_consolidate_lease_alike(backend: str) -> None:
    """A live holder's lease makes a run skip; a dead holder's is taken over and its run logged as
    interrupted; a finished run gives the lease back."""
    import os
    import socket
    import subprocess
    import sys
    import time

    from mem.store import Store
    from mem.store import lifecycle as sql

    add("The cache layer evicts after ten minutes")
    with Store.open(backend) as store:
        with store.write():
            sql.write_lease(store, {"token": "other", "pid": os.getpid(), "host": socket.gethostname(), "run": None,
                                    "since": "x", "beat": time.time()})
    skipped = cli("consolidate", "--json")
    assert skipped.code == 0 and skipped.records[-1].get("skipped"), skipped.records
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    with Store.open(backend) as store:
        with store.write():
            run = sql.start_run(store, "2026-01-01T00:00:00Z", ["replay"], False)
            sql.write_lease(store, {"token": "dead", "pid": int(dead.stdout), "host": socket.gethostname(), "run": run,
                                    "since": "x", "beat": time.time()})
    taken = cli("consolidate", "--json")
    assert taken.code == 0 and not taken.records[-1].get("skipped"), taken.records
    with Store.open(backend) as store:
        assert sql.read_lease(store) is None
        statuses = [r["status"] for r in sql.runs(store)]
    assert statuses[-1] == "interrupted" and statuses[0] == "ok", statuses


def test_a_change_for_a_while_suspends_and_then_gives_way_alike(backend: str) -> None:
    old = add("The audit log holds 90 days of events.", "--now", "2026-01-01T00:00:00Z")
    fix = add("Correction: the audit log holds 187 days of events, not 90, until 2026-03-01.", "--now", "2026-01-02T00:00:00Z")
    assert fix.get("suspends") == [old["id"]] and "supersedes" not in fix
    asked = "how long does the audit log hold events"
    assert [r["id"] for r in cli("search", asked, "--json", "--now", "2026-02-01T00:00:00Z").records[:2]] == [fix["id"], old["id"]]
    after = cli("search", asked, "--json", "--now", "2026-04-01T00:00:00Z").records
    assert after[0]["id"] == old["id"] and "expired" in after[1]["why"]
    assert cli("update", fix["id"], "--valid-until", "none").code == 0  # for good after all
    assert cli("get", old["id"], "--json").records[0]["superseded_by"] == fix["id"]
